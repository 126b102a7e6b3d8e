// `trace diff`: a generated trace against itself changes nothing; against a
// copy made by scripts/slow_kernels.py with chosen kernels slowed, exactly
// those kernels are "slower" (through the command and its JSON); kernels present on one
// side only are "new" or "vanished".
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sys/wait.h>

#include "lostflops/trace_diff.h"
#include "trace/trace_test_util.h"

namespace lostflops::trace {
namespace {

SynthSpec job_of_two() {
    SynthSpec s;
    s.ranks = 2;
    s.jitter_pct = 4;  // kernels of one name differ call to call
    return s;
}

TEST(TraceDiff, SameTraceChangesNothing) {
    const auto a = read_trace_bytes(synth_trace(job_of_two(), 0), "rank0.json");
    for (const bool hta : {false, true}) {
        const auto d = diff_traces(a, a, DiffOptions{hta, 5.0});
        ASSERT_FALSE(d.kernels.empty());
        for (const auto& k : d.kernels) {
            EXPECT_EQ(k.change, Change::same) << k.name;
            EXPECT_EQ(k.delta_us, 0) << k.name;
        }
        for (const auto& c : d.categories) EXPECT_EQ(c.change, Change::same) << c.name;
    }
}

TEST(TraceDiff, NewAndVanishedKernels) {
    using test::Ev;
    const auto a = read_trace_bytes(test::make_trace({{"gemm_a", "kernel", 0, 100, 7},
                                                      {"old_kernel", "kernel", 200, 50, 7},
                                                      {"elementwise_x", "kernel", 300, 10, 7}}),
                                    "a.json");
    const auto b = read_trace_bytes(test::make_trace({{"gemm_a", "kernel", 0, 100, 7},
                                                      {"new_kernel", "kernel", 200, 30, 7},
                                                      {"elementwise_x", "kernel", 300, 5, 7}}),
                                    "b.json");
    const auto d = diff_traces(a, b);
    std::map<std::string, KernelDiff> by;
    for (const auto& k : d.kernels) by[k.name] = k;
    ASSERT_EQ(by.size(), 4u);
    EXPECT_EQ(by["gemm_a"].change, Change::same);
    EXPECT_EQ(by["old_kernel"].change, Change::vanished);
    EXPECT_EQ(by["new_kernel"].change, Change::added);
    EXPECT_EQ(by["elementwise_x"].change, Change::faster);
    EXPECT_DOUBLE_EQ(by["elementwise_x"].mean_change_pct, -50);
    // No ProfilerStep: one step, A's step is its kernel span (0 to 310 us).
    EXPECT_DOUBLE_EQ(d.step_a_us, 310);
    EXPECT_DOUBLE_EQ(by["old_kernel"].step_share_pct, -100.0 * 50 / 310);
    // Changed first, largest |delta| first.
    EXPECT_EQ(d.kernels.front().name, "old_kernel");
    EXPECT_EQ(d.kernels.back().name, "gemm_a");
}

// A kernel whose calls got longer but fewer lost time: never "slower" (the
// issue's case); more calls of a shorter one: "more calls"; a kernel slower
// per call and in total: "slower".
TEST(TraceDiff, SlowerMeansMoreTimeNotOnlyALongerMean) {
    using test::Ev;
    std::vector<Ev> a, b;
    for (int i = 0; i < 10; ++i) a.push_back({"k_fewer", "kernel", 100.0 * i, 10, 7});      // 100 us
    for (int i = 0; i < 5; ++i) b.push_back({"k_fewer", "kernel", 100.0 * i, 12, 7});       // 60 us: each 20 % longer
    for (int i = 0; i < 4; ++i) a.push_back({"k_more", "kernel", 2000.0 + 100 * i, 10, 7});  // 40 us
    for (int i = 0; i < 8; ++i) b.push_back({"k_more", "kernel", 2000.0 + 100 * i, 9, 7});   // 72 us: each 10 % shorter
    a.push_back({"k_slow", "kernel", 5000, 100, 7});
    b.push_back({"k_slow", "kernel", 5000, 150, 7});
    a.push_back({"k_end", "kernel", 9000, 1, 7});
    b.push_back({"k_end", "kernel", 9000, 1, 7});
    const auto d = diff_traces(read_trace_bytes(test::make_trace(a), "a"), read_trace_bytes(test::make_trace(b), "b"));
    std::map<std::string, KernelDiff> by;
    for (const auto& k : d.kernels) by[k.name] = k;
    EXPECT_EQ(by["k_fewer"].change, Change::fewer_calls);
    EXPECT_LT(by["k_fewer"].delta_us, 0);
    EXPECT_GT(by["k_fewer"].mean_change_pct, 5);
    EXPECT_EQ(by["k_more"].change, Change::more_calls);
    EXPECT_EQ(by["k_slow"].change, Change::slower);
    EXPECT_EQ(by["k_end"].change, Change::same);
    for (const auto& k : d.kernels) {
        if (k.change == Change::slower) { EXPECT_GT(k.delta_us, 0) << k.name; }
        if (k.change == Change::faster) { EXPECT_LT(k.delta_us, 0) << k.name; }
    }
    EXPECT_NE(diff_table(d).find("fewer calls"), std::string::npos);
}

int sh(const std::string& cmd) {
    const int status = std::system(cmd.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string slurp(const std::string& path) {
    std::ifstream f(path);
    return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// Two kernels of a generated trace slowed by 1.5 with the generator: the command's
// JSON lists exactly those as slower (by 50 % per call), the rest the same.
TEST(TraceDiff, FindsExactlyTheSlowedKernels) {
    if (sh("python3 -c 'pass' >/dev/null 2>&1") != 0) GTEST_SKIP() << "python3 not available";
    const std::filesystem::path dir = test::temp_dir("trace_diff_test");
    const std::string a = test::write_synth(job_of_two(), {0}, dir.string())[0];
    const std::string b = (dir / "slowed.json.gz").string();
    const auto base = diff_traces(read_trace(a), read_trace(a));
    ASSERT_GE(base.kernels.size(), 4u);
    // The costliest kernel and a cheaper one (the kernels are listed by name
    // when nothing changed: take them by time).
    auto ks = base.kernels;
    std::stable_sort(ks.begin(), ks.end(), [](const auto& x, const auto& y) { return x.time_a_us > y.time_a_us; });
    const std::set<std::string> chosen{ks[0].name, ks[3].name};
    {
        std::ofstream names(dir / "names.txt");
        for (const auto& n : chosen) names << n << "\n";
    }
    ASSERT_EQ(sh("python3 " + std::string(LOSTFLOPS_SOURCE_DIR) + "/scripts/slow_kernels.py " + a + " " + b +
                 " --names-file " + (dir / "names.txt").string() + " --factor 1.5 2>/dev/null"),
              0);
    for (const std::string flags : {"", " --hta-compatible"}) {
        SCOPED_TRACE(flags);
        const std::string out = (dir / "diff.json").string();
        ASSERT_EQ(sh(std::string(LOSTFLOPS_BINARY) + " trace diff " + a + " " + b + flags + " --format json > " +
                     out + " 2>/dev/null"),
                  0);
        const auto j = nlohmann::json::parse(slurp(out));
        std::set<std::string> slower, other_changes;
        for (const auto& k : j["kernels"]) {
            const std::string change = k["change"].get<std::string>();
            if (change == "slower") {
                slower.insert(k["name"].get<std::string>());
                EXPECT_GT(k["step_share_pct"].get<double>(), 0);
                if (flags.empty()) { EXPECT_NEAR(k["mean_change_pct"].get<double>(), 50.0, 1e-3); }  // end - start of large time stamps
            } else if (change != "same") {
                other_changes.insert(k["name"].get<std::string>());
            }
        }
        EXPECT_EQ(slower, chosen);
        EXPECT_TRUE(other_changes.empty());
    }
    std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace lostflops::trace
