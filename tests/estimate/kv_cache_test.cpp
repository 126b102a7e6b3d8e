// transformers' KV cache in the training forward (training.use_cache; spec.h
// Training::use_cache): its host operators, its two copies a layer, the
// packed-sequence check it skips, and what it costs a host-bound step,
// against values computed by hand from the calibration's costs.
#include <gtest/gtest.h>

#include <string>

#include "lostflops/calibration.h"
#include "lostflops/error.h"
#include "lostflops/estimate.h"
#include "explain/lever_candidates.h"
#include "lostflops/job.h"
#include "workload/host_ops.h"
#include "workload/layer_work.h"

namespace lostflops {
namespace {

// The Llama-3.2-1B shape under fp32 weights and bf16 autocast (framework hf).
const std::string kJob = std::string(LOSTFLOPS_SOURCE_DIR) + "/tests/data/trace/job-h200-llama3.2-1b-s4096-b2-autocast.yaml";

Job job_with(std::vector<std::string> sets) { return load_job(kJob, sets); }

// 10 operators a layer forward (two empty tensors of four operators, two
// torch.cat), 3 nodes backward; no packed-sequence check: its 9 operators
// and its synchronisation gone.
TEST(KvCache, HostOperatorsOfTheCache) {
    const Job off = job_with({}), on = job_with({"training.use_cache=true"});
    const HostOps a = host_ops(off.model, off.training, off.plan), b = host_ops(on.model, on.training, on.plan);
    EXPECT_DOUBLE_EQ(b.layer_fwd - a.layer_fwd, 10);
    EXPECT_DOUBLE_EQ(b.layer_bwd - a.layer_bwd, 3);
    EXPECT_DOUBLE_EQ(a.embed_fwd - b.embed_fwd, 9);
    EXPECT_EQ(a.forward_syncs, 1);
    EXPECT_EQ(b.forward_syncs, 0);
}

// Two copies a layer: the keys leave rotary in fp32 under autocast (4 bytes
// read and written), the values their linear in bf16 (2): 4,096 x 2 tokens
// x 8 KV heads x 64 x 2 x (4 + 2) bytes; nothing backward, no memory.
TEST(KvCache, TwoCopiesALayer) {
    const Job off = job_with({}), on = job_with({"training.use_cache=true"});
    const LayerWork a = layer_work(off.model, off.training, off.plan), b = layer_work(on.model, on.training, on.plan);
    EXPECT_DOUBLE_EQ(b.kernels_fwd - a.kernels_fwd, 2);
    EXPECT_DOUBLE_EQ(b.kernels_bwd, a.kernels_bwd);
    EXPECT_DOUBLE_EQ(b.mem_bytes_fwd - a.mem_bytes_fwd, 8192.0 * 8 * 64 * 2 * (4 + 2));
    EXPECT_DOUBLE_EQ(b.mem_bytes_bwd, a.mem_bytes_bwd);
    EXPECT_DOUBLE_EQ(b.activation_bytes, a.activation_bytes);
}

// The host-bound 512 x 2 step: 16 layers x (10 x hf_host_op_us + 3 x
// hf_host_bwd_op_us) more, the check's 9 operators and its hf_sync_us idle
// less (28, 25, 120 us: 5,680 - 252 - 120 = 5,308 us).
TEST(KvCache, AHostBoundStepPaysItsOperators) {
    const Calibration& cal = default_calibration();
    const Job off = job_with({"training.seq_length=512"}), on = job_with({"training.seq_length=512", "training.use_cache=true"});
    const Estimate a = estimate(off, cal), b = estimate(on, cal);
    const double by_hand_s = (16 * (10 * cal.hf_host_op_us + 3 * cal.hf_host_bwd_op_us) - 9 * cal.hf_host_op_us -
                              cal.hf_sync_us) * 1e-6;
    EXPECT_NEAR(b.step_time_s - a.step_time_s, by_hand_s, 0.02 * by_hand_s);
}

// Where transformers builds no cache, the key is refused with the reason.
TEST(KvCache, RefusedWhereTransformersBuildsNone) {
    EXPECT_THROW(job_with({"training.use_cache=true", "training.framework=fsdp"}), InputError);
    try {
        job_with({"training.use_cache=true", "parallel.recompute=full"});
        FAIL() << "recompute full took a cache";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("gradient checkpointing"), std::string::npos) << e.what();
    }
}

// explain offers use_cache=False where the job has a cache, and not where it has none.
TEST(KvCache, ExplainOffersTheLever) {
    bool offered = false;
    for (const auto& c : lever_candidates(job_with({"training.use_cache=true"})))
        offered |= c.change.rfind("no KV cache", 0) == 0;
    EXPECT_TRUE(offered);
    for (const auto& c : lever_candidates(job_with({}))) EXPECT_NE(c.change.rfind("no KV cache", 0), 0u) << c.change;
}

}  // namespace
}  // namespace lostflops
