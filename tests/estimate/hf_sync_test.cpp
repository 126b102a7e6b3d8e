// The host's synchronisations and per-step work of framework hf
// (estimate/host_time.cpp, workload/host_ops_hf.cpp) against values computed
// by hand: the flow shop of an expert layer's stretches between
// torch._grouped_mm's copies, the packed-sequence check after the
// embedding (the first layer after it: hf_lead_test.cpp), and the backward
// call's and zero_grad's host time.
#include <gtest/gtest.h>

#include <string>

#include "estimate/stage_time.h"
#include "lostflops/calibration.h"
#include "lostflops/estimate.h"
#include "lostflops/job.h"
#include "workload/host_ops.h"

namespace lostflops {
namespace {

// A layer with two forward expert calls (gate_up 3,000 us, down 500 us of
// GPU) and 2,000 us of other GPU work; host 10 us per forward operator,
// 5 us per backward node, 20 us per loop group, 100 us idle per copy.
struct Synced {
    PlanContext ctx;
    HostOps h;
    LayerTime t;
    Synced() {
        ctx.host_op_s = 10e-6;
        ctx.host_bwd_op_s = 5e-6;
        ctx.sync_s = 100e-6;
        ctx.expert_loop_group_s = 20e-6;
        h.layer_fwd = 100;  // 1,000 us
        h.layer_bwd = 200;  // 1,000 us
        h.expert_loop_calls_fwd = 2;
        h.expert_loop_calls_bwd = 4;
        h.expert_loop_groups = 50;  // 1,000 us per call
        t.expert_loop_s = {3000e-6, 500e-6};
        t.fwd.compute_s = 5500e-6;
        t.bwd.compute_s = 11000e-6;
    }
};

TEST(HfSync, ExpertCallsBindTheirStretchesAsAFlowShop) {
    // Forward: [copy 100, gate_up loop: host 1,000, GPU 3,000] = 3,100;
    // [copy 100, down loop: host 1,000, GPU 500; rest: host 1,000, GPU
    // 2,000] = 100 + max(1,000 + 1,000, max(1,000, 500) + 2,000) = 3,100;
    // 6,200 against 5,500 of GPU: 700 us of wait.
    // Backward: down's two (1,100 each: host-bound), gate_up's first 3,100,
    // the last with the rest (GPU 11,000 - 7,000 = 4,000, host 1,000):
    // 100 + max(2,000, 3,000 + 4,000) = 7,100; 12,400 against 11,000: 1,400.
    Synced s;
    set_layer_host_time(s.t, s.ctx, s.h, ParallelPlan{});
    EXPECT_NEAR(s.t.fwd.sync_s, 700e-6, 1e-12);
    EXPECT_NEAR(s.t.bwd.sync_s, 1400e-6, 1e-12);
    // The host's time is inside the stretches, none left for the pass's own binding.
    EXPECT_EQ(s.t.fwd.cpu_s, 0);
    EXPECT_EQ(s.t.bwd.cpu_s, 0);
    EXPECT_NEAR(s.t.fwd.total_s(), 6200e-6, 1e-12);
}

TEST(HfSync, FullRecomputeRunsTheForwardsStretchesAgain) {
    // The forward again inside the backward: its stretches without the rest,
    // 3,100 + 1,100 = 4,200; the backward's last stretch now holds the
    // recomputed forward's rest too: host 1,000 + 1,000, GPU 16,500 -
    // 10,500 = 6,000: 100 + max(3,000, 3,000 + 6,000) = 9,100; with
    // 1,100 + 1,100 + 3,100: 14,400 + 4,200 = 18,600 against 16,500.
    Synced s;
    s.t.bwd.recompute_s = 5500e-6;
    ParallelPlan full;
    full.recompute = Recompute::full;
    set_layer_host_time(s.t, s.ctx, s.h, full);
    EXPECT_NEAR(s.t.bwd.sync_s, 2100e-6, 1e-12);
}

TEST(HfSync, HostBoundLoopsWaitForTheHost) {
    // Every loop host-bound (GPU 200 us a call): the forward is its host
    // time and copies, 100 + 1,000 + 100 + max(2,000, 1,000 + 5,100);
    // GPU 200 + 200 + 5,100 = 5,500: 7,300 - 5,500 = 1,800 of wait.
    Synced s;
    s.t.expert_loop_s = {200e-6, 200e-6};
    set_layer_host_time(s.t, s.ctx, s.h, ParallelPlan{});
    EXPECT_NEAR(s.t.fwd.sync_s, 1800e-6, 1e-12);
}

TEST(HfSync, PackedSequenceCheckExposesTheEmbeddingsOperators) {
    // 30 operators at 10 us and one copy of 100 us: 400 us the GPU waits.
    Synced s;
    s.h.embed_fwd = 30;
    s.h.forward_syncs = 1;
    LayerTime e;
    set_embedding_host_time(e, s.ctx, s.h);
    EXPECT_NEAR(e.fwd.sync_s, 400e-6, 1e-12);
    EXPECT_EQ(e.fwd.cpu_s, 0);
    s.h.forward_syncs = 0;  // no check (torch.compile): the operators stay the host's
    set_embedding_host_time(e, s.ctx, s.h);
    EXPECT_EQ(e.fwd.sync_s, 0);
    EXPECT_NEAR(e.fwd.cpu_s, 300e-6, 1e-12);
}

// A micro-batch that starts at a synchronisation: the host-bound forward
// (host 3 ms, GPU 1.8 ms + 0.2 ms of kernel gaps) ends at 3 ms; the
// backward's GPU work (4.5 + 0.5 ms) then runs from 3 ms, its host (3 ms)
// done by 6: 3 + 5 = 8 ms. Bound together the two would take max(3 + 3,
// 2 + 5) = 7: the backward's slack lent to the forward that ran before it.
TEST(HfSync, TheBackwardCannotLendItsSlackToTheForwardBeforeIt) {
    PassTime f, b;
    f.compute_s = 1.8e-3;
    f.overhead_s = 0.2e-3;
    f.cpu_s = 3e-3;
    b.compute_s = 4.5e-3;
    b.overhead_s = 0.5e-3;
    b.cpu_s = 3e-3;
    PassTime::bind_host_in_order(f, b);
    EXPECT_NEAR(f.host_wait_s, 1.2e-3, 1e-15);  // 3 - 1.8: its gaps are the host's
    EXPECT_EQ(f.overhead_s, 0);
    EXPECT_EQ(b.host_wait_s, 0);
    EXPECT_NEAR(f.total_s() + b.total_s(), 8e-3, 1e-15);
    // A backward whose host (6 ms) outlasts its GPU from the forward's end:
    // the step is the host's, 3 + 6 ms.
    PassTime f2 = f, b2 = b;
    f2.overhead_s = 0.2e-3;
    f2.host_wait_s = 0;
    b2.cpu_s = 6e-3;
    PassTime::bind_host_in_order(f2, b2);
    EXPECT_NEAR(b2.host_wait_s, 9e-3 - 3e-3 - 4.5e-3, 1e-15);
    EXPECT_EQ(b2.overhead_s, 0);
    EXPECT_NEAR(f2.total_s() + b2.total_s(), 9e-3, 1e-15);
}

// The Llama-3.2-1B shape of shared/reference/h200 under the autocast recipe:
// 16 layers, GPU-bound at 4,096 x 2 tokens, host-bound at 512 x 2, one
// sequence a micro-batch.
Job llama1b(int seq, bool compiled = false) {
    return parse_job("model: {model_type: llama, num_hidden_layers: 16, hidden_size: 2048,\n"
                     "        intermediate_size: 8192, num_attention_heads: 32, num_key_value_heads: 8,\n"
                     "        vocab_size: 128256, hidden_act: silu, tie_word_embeddings: true}\n"
                     "cluster: {gpu: h200-sxm, num_gpus: 1, gpus_per_node: 1}\n"
                     "training: {seq_length: " + std::to_string(seq) +
                         ", micro_batch_size: 1, global_batch_size: 2, framework: hf,\n"
                         "           optimizer_kernel: fused, compile: " + (compiled ? "true" : "false") + "}\n"
                     "parallel: {tp: 1, pp: 1, zero: 0, recompute: none}\n",
                     "llama1b.yaml");
}

TEST(HfSync, EachForwardCallPaysTheCheckEvenWhenTheGpuIsTheSlower) {
    // GPU-bound (4,096 tokens a micro-batch): a millisecond more per copy
    // is a millisecond more per forward call, two micro-batches two.
    const Job job = llama1b(4096);
    Calibration more = default_calibration();
    more.hf_sync_us += 1000;
    const Estimate a = estimate(job, default_calibration()), b = estimate(job, more);
    ASSERT_GT(a.breakdown.compute_s, 0.09);  // the GPU's step (0.0988 s at the step's clock)
    EXPECT_NEAR(b.step_time_s - a.step_time_s, 2e-3, 1e-9);
    // Compiled: no check (transformers skips it while tracing).
    const Job compiled = llama1b(4096, true);
    EXPECT_DOUBLE_EQ(estimate(compiled, more).step_time_s, estimate(compiled, default_calibration()).step_time_s);
}

// On a host at 50 us an operator (1.8 times hf_host_op_us): the step, its
// change for one microsecond more per forward operator, and the forward's
// operators a micro-batch (the layers', the head's, the embedding's).
struct ForwardSlope {
    Calibration slow;
    Estimate at;
    double step_per_op_us_s = 0;
    double fwd_ops = 0;
};
ForwardSlope forward_slope(const Job& job) {
    ForwardSlope r;
    r.slow = default_calibration();
    r.slow.hf_host_op_us = 50;
    Calibration slower = r.slow;
    slower.hf_host_op_us += 1;
    const HostOps h = host_ops(job.model, job.training, job.plan);
    r.at = estimate(job, r.slow);
    r.step_per_op_us_s = estimate(job, slower).step_time_s - r.at.step_time_s;
    r.fwd_ops = 16 * h.layer_fwd + h.head_fwd + h.embed_fwd + h.microbatch_fwd;
    return r;
}

TEST(HfSync, AHostBoundForwardBeforeAGpuBoundBackwardSetsTheStep) {
    // 4,096 tokens a micro-batch: the forward is the host's (16 x 52 + 19
    // operators, 42.6 ms, against about 30 ms of GPU), the backward the
    // GPU's (about 60 ms against about 38 of host at 25 us a node). Every
    // microsecond more per forward operator then lengthens the step by the
    // forward's operators but the head's 19 (the output layer and loss,
    // whose GPU time outlasts them after the host-bound layers), per
    // micro-batch (two), but the second's 15 before the check, issued while
    // the GPU runs the first's backward; a microsecond more per backward
    // node changes nothing. Bound together the passes left the step the
    // GPU's, and the forward's operators only added the embedding's 30
    // (host before the check).
    const Job job = llama1b(4096);
    const ForwardSlope f = forward_slope(job);
    ASSERT_GT(f.at.breakdown.host_s, 0.01);
    ASSERT_LT(f.at.breakdown.host_s, 0.5 * f.at.breakdown.compute_s);
    const HostOps h = host_ops(job.model, job.training, job.plan);
    ASSERT_DOUBLE_EQ(h.head_fwd, 19);
    EXPECT_NEAR(f.step_per_op_us_s, (2 * (f.fwd_ops - h.head_fwd) - 15) * 1e-6, 1e-9);
    Calibration slow_bwd = f.slow;
    slow_bwd.hf_host_bwd_op_us += 1;
    EXPECT_NEAR(estimate(job, slow_bwd).step_time_s, f.at.step_time_s, 1e-12);
}

TEST(HfSync, WithoutTheCheckOnlyTheStepsFirstMicroBatchStartsWithNoLead) {
    // A KV cache skips the check, but the loop synchronises every step: a
    // step of one micro-batch (global batch 1) is bound in order as well, so
    // a microsecond more per forward operator costs the forward's operators
    // but the head's (its GPU outlasts them, above). At two micro-batches a
    // step the second's forward is issued while the first runs its
    // backward: the forward's operators once a step, not twice as with the
    // check (above).
    Job job = llama1b(4096);
    job.training.use_cache = true;
    ASSERT_EQ(host_ops(job.model, job.training, job.plan).forward_syncs, 0);
    ASSERT_EQ(job.plan.micro_batches(job.training), 2);
    const ForwardSlope two = forward_slope(job);
    ASSERT_GT(two.at.breakdown.host_s, 0.005);
    const double head = host_ops(job.model, job.training, job.plan).head_fwd;
    EXPECT_NEAR(two.step_per_op_us_s, (two.fwd_ops - head) * 1e-6, 1e-9);
    job.training.global_batch = 1;
    const ForwardSlope one = forward_slope(job);
    ASSERT_GT(one.at.breakdown.host_s, 0.005);
    EXPECT_NEAR(one.step_per_op_us_s, (one.fwd_ops - head) * 1e-6, 1e-9);
}

TEST(HfSync, TheCheckOrdersThePassesWhateverItsIdle) {
    // hf_sync_us 0: the check still synchronises, and the passes stay in order.
    const Job job = llama1b(4096);
    Calibration slow = default_calibration();
    slow.hf_host_op_us = 50;
    Calibration no_idle = slow;
    no_idle.hf_sync_us = 0;
    // Two copies' idle (one a micro-batch) less, nothing else.
    EXPECT_NEAR(estimate(job, slow).step_time_s - estimate(job, no_idle).step_time_s, 2 * slow.hf_sync_us * 1e-6,
                1e-9);
}

TEST(HfSync, BackwardCallAndZeroGradAreHostTimeOfAHostBoundStep) {
    // Host-bound (512 tokens): 1 ms more per backward call is 1 ms per
    // micro-batch (2); 1 us more per zero_grad tensor is 146 us (16 x 9
    // tensors + the embedding + the final norm; lm_head tied).
    const Job job = llama1b(512);
    ASSERT_DOUBLE_EQ(hf_param_tensors(job.model), 146);
    const Calibration base = default_calibration();
    const Estimate a = estimate(job, base);
    ASSERT_GT(a.breakdown.host_s, a.breakdown.compute_s);
    Calibration call = base;
    call.hf_backward_call_us += 1000;
    EXPECT_NEAR(estimate(job, call).step_time_s - a.step_time_s, 2e-3, 1e-9);
    Calibration zero = base;
    zero.hf_zero_grad_tensor_us += 1;
    EXPECT_NEAR(estimate(job, zero).step_time_s - a.step_time_s, 146e-6, 1e-9);
}

}  // namespace
}  // namespace lostflops
