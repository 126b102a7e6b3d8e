// `export --best` yields what its framework launches: for every job of
// data/published/ (runs/ and modern/runs/) and ../shared/reference/modern/
// (skipped, saying so, when absent), the search's best plan under the job's
// own framework breaks none of that framework's rules
// (lostflops/framework_rules.h), exports (Megatron stacks through `export
// megatron`, FSDP through `export torchtitan`), and imports back to an equal
// job: every setting of the plan, training and cluster the estimate reads,
// each virtual stage's layers, the context-parallel variant, and the layer
// kinds themselves (Nemotron-4's MLP, Qwen3's QK norm, DeepSeek-V3's MLA
// ranks, shared experts, first dense layers and MTP modules). One kind
// cannot come back, and the exporter says so: a plain ReLU MLP (Megatron's
// flags have GELU, squared ReLU and the gated ones only), written as GELU.
// The MaxText runs of data/published/maxtext/runs/ (TPU slices, JAX's
// sharding taken as FSDP's rules) go out through `export maxtext` and come
// back as MaxText takes them: the run's own config with the exported keys as
// command-line overrides (train.py CONFIG KEY=VALUE...).
#include <algorithm>
#include <filesystem>
#include <regex>
#include <sstream>

#include "interop/interop_util.h"
#include "interop/maxtext_export.h"
#include "lostflops/framework_rules.h"
#include "lostflops/interop.h"
#include "lostflops/job.h"
#include "lostflops/pipeline_schedules.h"
#include "lostflops/search.h"
#include "job/stage_layout.h"

namespace lostflops::test {
namespace {

std::vector<std::string> run_files(const std::string& dir, const std::string& ext = ".json") {
    std::vector<std::string> out;
    if (!std::filesystem::is_directory(dir)) return out;
    for (const auto& e : std::filesystem::directory_iterator(dir))
        if (e.path().extension() == ext) out.push_back(e.path().string());
    std::sort(out.begin(), out.end());
    return out;
}

// The best plan of the search under the job's framework's rules.
std::optional<Job> best_plan(const std::string& path) {
    const SearchJob sj = load_search_job(path, {}, SearchJobPlan::ignore);
    SearchOptions o;
    o.fix = plan_fix_from(sj);
    o.sort_top = 1;
    o.keep_best = 1;
    o.shape_ranks = 0;
    const SearchResult r = search_plans(sj.job, default_calibration(), o);
    if (r.ranked.empty()) return std::nullopt;
    return job_with_plan(sj.job, plan_score(sj.job, r, r.ranked.front()));
}

void check_one(const std::string& path) {
    SCOPED_TRACE(path);
#ifdef LOSTFLOPS_SANITIZED
    // A whole search of a thousand-GPU MoE job takes a minute in the plain
    // build; under the sanitizers only the jobs of at most 256 GPUs.
    if (nlohmann::json::parse(slurp(path)).at("cluster").value("num_gpus", 0) > 256) return;
#endif
    const std::optional<Job> best = best_plan(path);
    ASSERT_TRUE(best) << "no plan fits";
    const LaunchStack stack = launch_stack(best->training.framework);
    for (const RuleBreak& b : rule_breaks(*best)) ADD_FAILURE() << rule_break_text(b);
    if (stack == LaunchStack::deepspeed) return;  // no DeepSpeed exporter (none of these runs is one)
    const bool titan = stack == LaunchStack::torchtitan;
    const ExportResult e = titan ? export_torchtitan(*best) : export_megatron(*best);
    const ImportResult r = titan ? import_torchtitan(e.text, path + " (exported)") : import_megatron(e.text, path + " (exported)");
    const auto cluster = nlohmann::json::parse(slurp(path)).at("cluster");
    const Job back = parse_job(r.job_yaml, path + " (round trip)", {"cluster=" + cluster.dump()});
    const bool plain_relu = std::any_of(e.notes.begin(), e.notes.end(), [](const ImportNote& n) {
        return n.message.find("plain ReLU") != std::string::npos;
    });
    expect_same_job(back, *best, path, !plain_relu);
    EXPECT_EQ(back.model.kinds().size(), best->model.kinds().size());
    EXPECT_EQ(back.model.mtp_layers, best->model.mtp_layers);
    if (best->plan.cp > 1) { EXPECT_EQ(back.plan.cp_comm_type, best->plan.cp_comm_type); }
    const ParallelPlan &p = back.plan, &q = best->plan;
    EXPECT_EQ(effective_schedule(p), effective_schedule(q));
    if (best->model.is_moe()) {
        EXPECT_EQ(p.expert_tp(), q.expert_tp());
        EXPECT_EQ(p.moe_dispatcher, q.moe_dispatcher);
    }
    for (int rank = 0; rank < q.pp; ++rank)
        for (int chunk = 0; chunk < q.vpp; ++chunk)
            EXPECT_EQ(layers_on(back, rank, chunk), layers_on(*best, rank, chunk)) << rank << "/" << chunk;
}

TEST(LaunchBest, PublishedRunsBestPlansExportAndComeBack) {
    int n = 0;
    for (const char* dir : {"data/published/runs", "data/published/modern/runs"})
        for (const std::string& path : run_files(source_path(dir))) {
            check_one(path);
            ++n;
        }
    EXPECT_GE(n, 29);
}

// A MaxText run: its best plan as MaxText keys over the config it came from.
void check_maxtext(const std::string& path) {
    SCOPED_TRACE(path);
    const std::string text = slurp(path);
    std::smatch config, slice, gpus;
    // Written by `lostflops import maxtext` (scripts/make_maxtext_table.py):
    // source: "MaxText config FILE", gpu: tpu-X  # SLICE, num_gpus: N  # S slice(s)
    ASSERT_TRUE(std::regex_search(text, config, std::regex("source: \"MaxText config ([^\"]+)\"")));
    ASSERT_TRUE(std::regex_search(text, slice, std::regex("gpu: tpu-\\S+ +# (\\S+)")));
    ASSERT_TRUE(std::regex_search(text, gpus, std::regex("num_gpus: \\d+ +# (\\d+) slice")));
    const std::optional<Job> best = best_plan(path);
    ASSERT_TRUE(best) << "no plan fits";
    for (const RuleBreak& b : rule_breaks(*best)) ADD_FAILURE() << rule_break_text(b);
    const ExportResult e = export_maxtext(*best);
    SCOPED_TRACE(e.text);
    ImportOptions o;
    o.tpu = slice[1];
    o.slices = std::stoi(gpus[1]);
    std::istringstream lines(e.text);
    for (std::string l; std::getline(lines, l);) {
        if (l.empty() || l[0] == '#') continue;
        const auto colon = l.find(": ");
        ASSERT_NE(colon, std::string::npos) << l;
        const std::string value = l.substr(colon + 2);  // up to a comment, as YAML reads it
        o.overrides.push_back(l.substr(0, colon) + "=" + value.substr(0, value.find("  #")));
    }
    const ImportResult r = import_maxtext(slurp(source_path(config[1])), config[1], o);
    const Job back = parse_job(r.job_yaml, path + " (round trip)");
    expect_same_job(back, *best, path);
    EXPECT_EQ(back.cluster.num_gpus, best->cluster.num_gpus);
    EXPECT_EQ(effective_schedule(back.plan), effective_schedule(best->plan));
}

TEST(LaunchBest, MaxTextRunsBestPlansExportAndComeBack) {
    const auto files = run_files(source_path("data/published/maxtext/runs"), ".yaml");
    for (const std::string& path : files) check_maxtext(path);
    EXPECT_GE(files.size(), 11u);
}

TEST(LaunchBest, SharedModernRunsBestPlansExportAndComeBack) {
    const std::string dir = source_path("../shared/reference/modern/runs");
    const auto files = run_files(dir);
    if (files.empty()) GTEST_SKIP() << dir << " is not here (../shared)";
    for (const std::string& path : files) check_one(path);
}

}  // namespace
}  // namespace lostflops::test
