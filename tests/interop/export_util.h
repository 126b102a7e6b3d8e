// Helpers of the export tests (export_escape_test.cpp, export_launch_test.cpp,
// export_configs_test.cpp): a file run through an outside program (bash,
// python3), the search's best plan as `export KIND --best` takes it, the
// placeholders of an export, and the plan's equality after a round trip.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "../cli/cli_util.h"
#include "interop/export_launch.h"
#include "interop/interop_util.h"
#include "lostflops/job.h"
#include "lostflops/search_listing.h"
#include "job/stage_layout.h"

namespace lostflops::test {

// Runs `command` on `text` written to a file ({} in the command): exit code
// and standard output with standard error.
inline std::pair<int, std::string> run_on(const std::string& command, const std::string& text) {
    const std::string path =
        (std::filesystem::temp_directory_path() / ("lostflops-export-" + std::to_string(::getpid()))).string();
    std::ofstream(path, std::ios::binary) << text;
    std::string cmd = command;
    cmd.replace(cmd.find("{}"), 2, path);
    int code = -1;
    const std::string out = shell_output(cmd + " 2>&1", &code);
    std::filesystem::remove(path);
    return {code, out};
}

inline bool python_has(const char* module) {
    return std::system(("python3 -c 'import " + std::string(module) + "' >/dev/null 2>&1").c_str()) == 0;
}
inline bool have_bash() { return std::system("bash -c true >/dev/null 2>&1") == 0; }

// The job of `text` with the search's best plan among those `kind`'s stack
// launches, searched and priced under that stack (what `lostflops export
// KIND --best` exports; cmd_export.cpp).
inline Job best_for_export(const std::string& text, const std::string& kind, std::vector<std::string> set = {}) {
    const auto target = kind == "torchtitan" ? std::optional(LaunchStack::torchtitan) : std::nullopt;
    SearchJob sj = parse_search_job(text, "job.yaml", set, SearchJobPlan::ignore);
    if (const auto fw = export_framework(kind, sj.job.training.framework)) {
        set.push_back(std::string("training.framework=") + to_string(*fw));
        sj = parse_search_job(text, "job.yaml", set, SearchJobPlan::ignore);
    }
    return best_launchable_plan(sj, default_calibration(), target, "job.yaml");
}

// The issue's two jobs (issue 37): Llama 3.1 70B on 256 H100 at 8 k, Qwen3-30B-A3B on 64 H100.
inline const char* kLlama70 =
    "name: llama70-256\nmodel: {preset: llama3.1-70b}\ncluster: {preset: dgx-h100, num_gpus: 256}\n"
    "training: {seq_length: 8192, global_batch_size: 256, micro_batch_size: 1}\n";
inline const char* kQwen3 =
    "name: qwen3-30b-64\nmodel: {preset: qwen3-30b-a3b}\ncluster: {preset: dgx-h100, num_gpus: 64}\n"
    "training: {seq_length: 4096, global_batch_size: 512, micro_batch_size: 1}\n";

// A placeholder: a whole word of capitals and underscores ("DATA",
// "TOKENIZER_TYPE"), quoted or with a port ("HOST:29400").
inline bool placeholder_word(std::string w) {
    if (w.size() >= 2 && w.front() == '"' && w.back() == '"') w = w.substr(1, w.size() - 2);
    static const std::regex word("[A-Z][A-Z_]*[A-Z](:[0-9]+)?");
    return std::regex_match(w, word);
}

// Checks that every placeholder of an export is marked and every mark is on a
// placeholder: the words of each line before its comment; a commented-out
// placeholder line ("# --train-samples SAMPLES  # yours: ...") counts as one.
// Returns the placeholders seen.
inline std::vector<std::string> check_marks(const std::string& text) {
    std::vector<std::string> seen;
    std::istringstream lines(text);
    for (std::string l; std::getline(lines, l);) {
        const size_t start = l.find_first_not_of(' ');
        if (start == std::string::npos) continue;
        std::string body = l.substr(start);
        const size_t mark = body.find(std::string("  ") + interop::kYours);
        if (body[0] == '#') {
            if (mark == std::string::npos) continue;  // a comment
            body = body.substr(body.find_first_not_of("# "));
        }
        const std::string code = body.substr(0, std::min(body.find("  #"), body.size()));
        std::istringstream words(code);
        bool any = false;
        for (std::string w; words >> w;)
            if (placeholder_word(w)) any = true, seen.push_back(w);
        EXPECT_EQ(any, mark != std::string::npos) << "line: " << l;
    }
    return seen;
}

inline std::vector<int> stage_layers(const Job& job) {
    std::vector<int> out;
    for (int v = 0; v < job.plan.pp * job.plan.vpp; ++v) out.push_back(layers_on(job, v % job.plan.pp, v / job.plan.pp));
    return out;
}

// The same plan after a round trip: expect_same_job, each virtual stage's
// layers and the expert settings (the dispatcher unless `dispatcher` is false:
// a framework with one dispatcher only).
inline void expect_same_plan(const Job& back, const Job& job, const std::string& what, bool dispatcher = true) {
    expect_same_job(back, job, what);
    EXPECT_EQ(stage_layers(back), stage_layers(job)) << what;
    if (!job.model.is_moe()) return;
    EXPECT_EQ(back.plan.expert_tp(), job.plan.expert_tp()) << what;
    if (dispatcher) { EXPECT_EQ(back.plan.moe_dispatcher, job.plan.moe_dispatcher) << what; }
    EXPECT_EQ(back.plan.moe_a2a_overlap, job.plan.moe_a2a_overlap) << what;
    EXPECT_EQ(back.plan.moe_capacity_factor, job.plan.moe_capacity_factor) << what;
}

}  // namespace lostflops::test
