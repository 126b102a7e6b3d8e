// Data-parallel traffic behind the schedule's passes (estimate/dp_overlap.h):
// the whole stage behind one pass, and Megatron-Core's interleaved schedule
// syncing chunk by chunk — against hand-computed values.
#include <gtest/gtest.h>

#include "estimate/dp_overlap.h"
#include "lostflops/job.h"
#include "test_util.h"

namespace lostflops {
namespace {

constexpr double kTol = 1e-12;

TEST(DpOverlap, OneChunkHidesBehindOnePass) {
    // C = 1 s behind a 0.5 s pass at a = 0.9: 0.45 s hidden, 0.55 s exposed.
    const DpExposure e = dp_exposure(1.0, DpWindow{1, 1, 0.5}, 0.9);
    EXPECT_NEAR(e.hidden_s, 0.45, kTol);
    EXPECT_NEAR(e.exposed_s, 0.55, kTol);
    // The group size means nothing with one chunk.
    EXPECT_NEAR(dp_exposure(1.0, DpWindow{1, 8, 0.5}, 0.9).exposed_s, 0.55, kTol);
    // No overlap: all of it exposed; nothing to move: nothing exposed.
    EXPECT_NEAR(dp_exposure(1.0, DpWindow{1, 1, 0.5}, 0.0).exposed_s, 1.0, kTol);
    EXPECT_EQ(dp_exposure(0.0, DpWindow{4, 2, 0.5}, 0.9).exposed_s, 0.0);
}

TEST(DpOverlap, ChunksHideBehindTheLaterChunksPasses) {
    // v = 4, g = 2, p = 0.1 s, a = 0.9, C = 1 s: the whole traffic against
    // ((4 - 1) 2 + 1) 0.1 = 0.7 s of passes, 0.63 s of them hiding: 0.37 s;
    // the last piece 0.25 - 0.09 = 0.16 s. The larger: 0.37 s.
    EXPECT_NEAR(dp_exposure(1.0, DpWindow{4, 2, 0.1}, 0.9).exposed_s, 0.37, kTol);
    // g = 4: 13 passes, 1.17 s of hiding, more than the traffic: only the
    // last piece's 0.16 s is left.
    const DpExposure e = dp_exposure(1.0, DpWindow{4, 4, 0.1}, 0.9);
    EXPECT_NEAR(e.exposed_s, 0.16, kTol);
    EXPECT_NEAR(e.hidden_s, 0.84, kTol);
}

TEST(DpOverlap, ChunkingNeverExposesMore) {
    // The same rank pass (0.4 s) cut into v chunks exposes at most what the
    // whole stage behind it does, for any traffic.
    for (double comm : {0.05, 0.3, 1.0, 5.0})
        for (int v : {2, 3, 8, 14})
            for (int g : {1, 2, 4})
                EXPECT_LE(dp_exposure(comm, DpWindow{v, g, 0.4 / v}, 0.9).exposed_s,
                          dp_exposure(comm, DpWindow{1, 1, 0.4}, 0.9).exposed_s + kTol)
                    << comm << " s, v " << v << ", g " << g;
}

TEST(DpOverlap, WindowFollowsTheSchedule) {
    // The small job on 32 GPUs: tp 2, pp 4, dp 4.
    const auto window = [](const std::vector<std::string>& sets, double m) {
        std::vector<std::string> all = {"cluster.num_gpus=32", "parallel.pp=4", "training.framework=megatron-core"};
        all.insert(all.end(), sets.begin(), sets.end());
        return dp_window(parse_job(test::small_job_text(), "small.yaml", all), 1.2, m);
    };
    // Interleaved, 3 chunks: a chunk's pass is a third of the rank's; groups of pp micro-batches.
    DpWindow w = window({"parallel.vpp=3"}, 8);
    EXPECT_EQ(w.chunks, 3);
    EXPECT_EQ(w.group, 4);
    EXPECT_NEAR(w.pass_s, 0.4, kTol);
    // Fewer micro-batches than stages: the group is what there is.
    EXPECT_EQ(window({"parallel.vpp=3"}, 2).group, 2);
    // 1F1B, or Megatron-LM before Megatron-Core: the whole rank at once.
    w = window({}, 8);
    EXPECT_EQ(w.chunks, 1);
    EXPECT_NEAR(w.pass_s, 1.2, kTol);
    w = window({"parallel.vpp=3", "training.framework=megatron-lm"}, 8);
    EXPECT_EQ(w.chunks, 1);
    EXPECT_NEAR(w.pass_s, 1.2, kTol);
}

}  // namespace
}  // namespace lostflops
