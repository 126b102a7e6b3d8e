// Seeded random mutation of nccl-tests outputs and calibration profiles: the
// readers must either return a well-formed result or throw InputError; never
// crash, hang, or throw anything else (run under ASan+UBSan in CI).
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "calibrate/calibrate_test_util.h"
#include "lostflops/calibration.h"
#include "lostflops/error.h"
#include "lostflops/nccl_curve.h"
#include "lostflops/nccl_tests.h"

namespace lostflops {
namespace {

std::string mutate(std::string s, std::mt19937& rng, int max_edits) {
    static const std::vector<std::string> kTokens = {
        "#", "\n", " ", "-1", "0", "N/A", "nan", "inf", "1e308", "-", ":", "[", "]", "{", "}",
        "size", "busbw", "Rank", "on", "# Collective test starting: alltoall_perf\n",
        "# nThread 1 nGpus 2\n", "# Avg bus bandwidth : 3\n", "nccl:", "- [", "\0", "\xff"};
    const int edits = 1 + static_cast<int>(rng() % max_edits);
    for (int e = 0; e < edits; ++e) {
        const std::size_t pos = s.empty() ? 0 : rng() % (s.size() + 1);
        switch (rng() % 5) {
            case 0:  // delete a span
                if (!s.empty()) s.erase(pos, 1 + rng() % 40);
                break;
            case 1:  // insert a token
                s.insert(pos, kTokens[rng() % kTokens.size()]);
                break;
            case 2:  // flip a byte
                if (pos < s.size()) s[pos] = static_cast<char>(rng() % 256);
                break;
            case 3:  // duplicate a span
                if (pos < s.size()) s.insert(pos, s.substr(pos, 1 + rng() % 200));
                break;
            case 4:  // truncate
                s.resize(pos);
                break;
        }
    }
    return s;
}

TEST(CalibrateFuzz, NcclReaderNeverCrashes) {
    std::vector<std::string> seeds;
    for (const char* f : {"all_reduce_h100_8gpu_new.txt", "all_gather_h100_2node_new.txt",
                          "reduce_scatter_a100_8gpu_old.txt", "all_gather_a100_2node_old.txt",
                          "all_reduce_truncated.txt"})
        seeds.push_back(test::read_text(test::calibrate_data(f)));
    std::mt19937 rng(20240611);
    int parsed = 0;
    for (int i = 0; i < 800; ++i) {
        const std::string text = mutate(seeds[i % seeds.size()], rng, 8);
        NcclTestsOptions opt;
        if (i % 3 == 0) opt.op = Collective::all_to_all;
        try {
            NcclTestsResult r = parse_nccl_tests_text(text, "fuzz.txt", opt);
            ++parsed;
            ASSERT_FALSE(r.runs.empty());
            for (const auto& run : r.runs) {
                ASSERT_GE(run.ranks, 2);
                ASSERT_FALSE(run.points.empty());
                for (std::size_t k = 0; k < run.points.size(); ++k) {
                    ASSERT_GT(run.points[k].bytes, 0);
                    ASSERT_GT(run.points[k].busbw_GBps, 0);
                    if (k) { ASSERT_GT(run.points[k].bytes, run.points[k - 1].bytes); }
                }
            }
            std::vector<std::string> w;
            Calibration cal;
            merge_curves(cal, curves_from_runs(r.runs, w));
            // The profile written from it reads back.
            Calibration back = parse_calibration_text(calibration_to_yaml(cal), "fuzz.yaml");
            ASSERT_EQ(back.nccl.size(), cal.nccl.size());
            for (const auto& c : back.nccl) {
                const CurveKey k = curve_layout(c);
                if (k.ranks_per_node == 0) continue;  // an inter-node run without hosts: never used
                auto t = curve_time_s(back, c.op, k, 1e6);
                ASSERT_TRUE(t && *t >= 0);
            }
        } catch (const InputError&) {
        }
    }
    EXPECT_GT(parsed, 60);  // the mutations must not all be rejected
}

TEST(CalibrateFuzz, CalibrationReaderNeverCrashes) {
    Calibration c = default_calibration();
    c.nccl.push_back({Collective::all_reduce, LinkScope::intra_node, 8, {{8, 0.01, 18}, {1e9, 300, 5800}}});
    c.nccl.push_back({Collective::send_recv, LinkScope::inter_node, 2, {{1024, 0.5, 20}}});
    const std::vector<std::string> seeds = {calibration_to_yaml(c),
                                            "devices: {hopper: {gemm_max: {bf16: 0.7}}}\np2p_eff: 0.8\n"};
    std::mt19937 rng(7);
    int parsed = 0;
    for (int i = 0; i < 1500; ++i) {
        const std::string text = mutate(seeds[i % seeds.size()], rng, 2);
        try {
            Calibration got = parse_calibration_text(text, "fuzz.yaml");
            ++parsed;
            for (const auto& f : got.devices)
                for (double g : f.gemm_max) {
                    ASSERT_GE(g, 0);
                    ASSERT_LE(g, 1);
                }
            ASSERT_GE(got.kernel_overhead_us, 0);
        } catch (const InputError&) {
        }
    }
    EXPECT_GT(parsed, 50);
}

}  // namespace
}  // namespace lostflops
