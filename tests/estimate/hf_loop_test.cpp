// What a Hugging Face training loop does beyond the model (framework hf):
// transformers' KV cache in the training forward (training.use_cache) -- its
// host operators, its copies, its fp32 memory under autocast, the
// packed-sequence check it skips, what it costs a host-bound step -- and the
// model's output held through the backward (training.holds_outputs), against
// values computed by hand.
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
// torch.cat), 3 nodes backward (2 without autocast: no cast of fp32 values
// for SDPA to take back); no packed-sequence check: its 9 operators
// and, at micro-batch 2, position_ids.expand, and its synchronisation gone.
// Under gradient checkpointing the layers get no cache: only the check goes.
TEST(KvCache, HostOperatorsOfTheCache) {
    const Job off = job_with({}), on = job_with({"training.use_cache=true"});
    const HostOps a = host_ops(off.model, off.training, off.plan), b = host_ops(on.model, on.training, on.plan);
    EXPECT_DOUBLE_EQ(b.layer_fwd - a.layer_fwd, 10);
    EXPECT_DOUBLE_EQ(b.layer_bwd - a.layer_bwd, 3);
    EXPECT_DOUBLE_EQ(a.embed_fwd - b.embed_fwd, 10);
    EXPECT_EQ(a.forward_syncs, 1);
    EXPECT_EQ(b.forward_syncs, 0);
    const Job full_off = job_with({"parallel.recompute=full"}),
              full_on = job_with({"parallel.recompute=full", "training.use_cache=true"});
    const HostOps c = host_ops(full_off.model, full_off.training, full_off.plan),
                  d = host_ops(full_on.model, full_on.training, full_on.plan);
    EXPECT_DOUBLE_EQ(d.layer_fwd, c.layer_fwd);
    EXPECT_DOUBLE_EQ(d.layer_bwd, c.layer_bwd);
    EXPECT_DOUBLE_EQ(c.embed_fwd - d.embed_fwd, 10);
    EXPECT_EQ(d.forward_syncs, 0);
    const Job bf16_off = job_with({"parallel.zero=3", "training.optimizer_kernel=foreach"}),
              bf16_on = job_with({"parallel.zero=3", "training.optimizer_kernel=foreach", "training.use_cache=true"});
    EXPECT_DOUBLE_EQ(host_ops(bf16_on.model, bf16_on.training, bf16_on.plan).layer_bwd -
                         host_ops(bf16_off.model, bf16_off.training, bf16_off.plan).layer_bwd,
                     2);
}

// Under autocast the cache is fp32 (the rotated keys' dtype): K's cat copies
// 4 + 4 bytes an element, V's 2 + 4 (upcast) and SDPA's cast back 4 + 2;
// backward V's gradient is upcast (2 + 4) and cast back (4 + 2): 3 kernels
// forward, 2 backward. 4,096 x 2 tokens, 8 KV heads of 64. Only the model's
// output refers to the fp32 cache: a loop that holds it keeps 4 (512 + 512)
// bytes a token a layer to the backward, one that does not keeps nothing.
TEST(KvCache, AutocastCopiesAndHoldsAnFp32Cache) {
    const Job off = job_with({"training.holds_outputs=true"}),
              on = job_with({"training.use_cache=true", "training.holds_outputs=true"});
    const LayerWork a = layer_work(off.model, off.training, off.plan), b = layer_work(on.model, on.training, on.plan);
    const double tokens = 8192, kv = 8 * 64;
    EXPECT_DOUBLE_EQ(b.kernels_fwd - a.kernels_fwd, 3);
    EXPECT_DOUBLE_EQ(b.kernels_bwd - a.kernels_bwd, 2);
    EXPECT_DOUBLE_EQ(b.mem_bytes_fwd - a.mem_bytes_fwd, tokens * (8 * kv + 12 * kv));
    EXPECT_DOUBLE_EQ(b.mem_bytes_bwd - a.mem_bytes_bwd, tokens * 12 * kv);
    EXPECT_DOUBLE_EQ(b.eager_fwd.upcast - a.eager_fwd.upcast, tokens * 6 * kv);
    EXPECT_DOUBLE_EQ(b.activation_bytes - a.activation_bytes, tokens * 4 * (kv + kv));
    const Job let_go = job_with({"training.use_cache=true"}), none = job_with({});
    EXPECT_DOUBLE_EQ(layer_work(let_go.model, let_go.training, let_go.plan).activation_bytes,
                     layer_work(none.model, none.training, none.plan).activation_bytes);
}

// FSDP2's bf16 model: the cache is bf16, a plain copy of K and of V (2 + 2
// bytes each), which SDPA then saves: no memory more, nothing backward.
TEST(KvCache, Bf16CopiesOnly) {
    const std::vector<std::string> fsdp2 = {"parallel.zero=3", "training.optimizer_kernel=foreach"};
    auto with = fsdp2;
    with.push_back("training.use_cache=true");
    const Job off = job_with(fsdp2), on = job_with(with);
    const LayerWork a = layer_work(off.model, off.training, off.plan), b = layer_work(on.model, on.training, on.plan);
    const double tokens = 8192, kv = 8 * 64;
    EXPECT_DOUBLE_EQ(b.kernels_fwd - a.kernels_fwd, 2);
    EXPECT_DOUBLE_EQ(b.kernels_bwd, a.kernels_bwd);
    EXPECT_DOUBLE_EQ(b.mem_bytes_fwd - a.mem_bytes_fwd, tokens * 4 * (kv + kv));
    EXPECT_DOUBLE_EQ(b.activation_bytes, a.activation_bytes);
}

// The host-bound 512 x 2 step: 16 layers x (10 x hf_host_op_us + 3 x
// hf_host_bwd_op_us) more, the check's 10 operators and its hf_sync_us idle
// less (28, 25, 120 us: 5,680 - 280 - 120 = 5,280 us; the GPU's copies hide
// under the host).
TEST(KvCache, AHostBoundStepPaysItsOperators) {
    const Calibration& cal = default_calibration();
    const Job off = job_with({"training.seq_length=512"}), on = job_with({"training.seq_length=512", "training.use_cache=true"});
    const Estimate a = estimate(off, cal), b = estimate(on, cal);
    const double by_hand_s = (16 * (10 * cal.hf_host_op_us + 3 * cal.hf_host_bwd_op_us) - 10 * cal.hf_host_op_us -
                              cal.hf_sync_us) * 1e-6;
    EXPECT_NEAR(b.step_time_s - a.step_time_s, by_hand_s, 0.02 * by_hand_s);
}

// Off framework hf the key is refused with the reason; under torch.compile
// it is kept and said not to be priced.
TEST(KvCache, RefusedOffTransformersAndSaidUnderCompile) {
    try {
        job_with({"training.use_cache=true", "training.framework=fsdp"});
        FAIL() << "framework fsdp took a cache";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("framework hf only"), std::string::npos) << e.what();
    }
    const Job compiled = job_with({"training.use_cache=true", "training.compile=true"});
    bool said = false;
    for (const auto& w : job_warnings(compiled)) said |= w.key == "training.use_cache";
    EXPECT_TRUE(said);
}

// explain offers use_cache=False where the job has a cache, and not where it has none.
TEST(KvCache, ExplainOffersTheLever) {
    bool offered = false;
    for (const auto& c : lever_candidates(job_with({"training.use_cache=true"})))
        offered |= c.change.rfind("no KV cache", 0) == 0;
    EXPECT_TRUE(offered);
    for (const auto& c : lever_candidates(job_with({}))) EXPECT_NE(c.change.rfind("no KV cache", 0), 0u) << c.change;
}

// The output held through the backward keeps the bf16 logits alive at the
// loss's backward, the step's peak here: 4,096 x 2 tokens x 128,256 x 2 bytes
// (1.96 GiB) more allocated; nothing of the step's time.
TEST(HoldsOutputs, TheLogitsStayToTheLossBackward) {
    const Calibration& cal = default_calibration();
    const Estimate a = estimate(job_with({}), cal), b = estimate(job_with({"training.holds_outputs=true"}), cal);
    EXPECT_DOUBLE_EQ(b.memory.allocated_bytes - a.memory.allocated_bytes, 8192.0 * 128256 * 2);
    EXPECT_DOUBLE_EQ(b.step_time_s, a.step_time_s);
    EXPECT_THROW(job_with({"training.holds_outputs=true", "training.framework=fsdp"}), InputError);
}

// A step whose peak is at the end of the backward (compiled, 512 x 2: the
// loss's buffers are small) still holds them there: 1,024 x 128,256 x 2 bytes.
TEST(HoldsOutputs, HeldToTheEndOfTheBackward) {
    const Calibration& cal = default_calibration();
    const std::vector<std::string> compiled = {"training.seq_length=512", "training.compile=true"};
    auto held = compiled;
    held.push_back("training.holds_outputs=true");
    const Estimate a = estimate(job_with(compiled), cal), b = estimate(job_with(held), cal);
    ASSERT_EQ(a.memory.moment, MemoryMoment::end_of_backward);
    EXPECT_DOUBLE_EQ(b.memory.allocated_bytes - a.memory.allocated_bytes, 1024.0 * 128256 * 2);
    EXPECT_DOUBLE_EQ(b.memory.logits_bytes - a.memory.logits_bytes, 1024.0 * 128256 * 2);
}

}  // namespace
}  // namespace lostflops
