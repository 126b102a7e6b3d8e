// The first layer after a synchronisation (framework hf): the host starts it
// with no lead, and the GPU waits through the stretch before the mixer's core
// (LayerTime::lead_wait_s, host_time.cpp set_layer_host_time,
// PassTime::bind_host_in_order), against counts and times computed by hand;
// and a later micro-batch's embedding operators before the check, hidden
// behind the backward before it (stage_pass.cpp hide_next_embedding); the
// output layer and loss, the forward's last piece, bound after the layers.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "cost/device_time.h"
#include "estimate/stage_time.h"
#include "lostflops/calibration.h"
#include "lostflops/estimate.h"
#include "lostflops/job.h"
#include "workload/host_ops.h"
#include "workload/layer_work.h"

namespace lostflops {
namespace {

// The Llama-3.2-1B shape of shared/reference/h200 under its autocast recipe,
// two micro-batches of one 4,096-token sequence a step: GPU-bound.
const std::string kJob = std::string(LOSTFLOPS_SOURCE_DIR) + "/tests/data/trace/job-h200-llama3.2-1b-s4096-b2-autocast.yaml";

Job llama1b(std::vector<std::string> sets = {}) {
    sets.insert(sets.begin(), "training.micro_batch_size=1");
    return load_job(kJob, sets);
}

// d(step) / d(hf_host_op_us), seconds per microsecond of every forward operator.
double forward_op_slope_s(const Job& job) {
    const Calibration base = default_calibration();
    Calibration slower = base;
    slower.hf_host_op_us += 1;
    return estimate(job, slower).step_time_s - estimate(job, base).step_time_s;
}

TEST(HfLead, TheStretchBeforeTheCoreIsTheInputNormProjectionsAndRotary) {
    // RMSNorm 8, q/k/v (linear, view, transpose) 9, rotary 16: 33 of the
    // layer's 52. FSDP2's pre-forward hook (2 x 9 tensors + 1) runs first:
    // 52 of 71. A KV cache's 10 operators come before SDPA: 43.
    Job job = llama1b();
    EXPECT_DOUBLE_EQ(host_ops(job.model, job.training, job.plan).lead_fwd, 33);
    job.plan.zero = 3;
    const HostOps f = host_ops(job.model, job.training, job.plan);
    EXPECT_DOUBLE_EQ(f.lead_fwd, 52);
    EXPECT_DOUBLE_EQ(f.fsdp_fwd_ops, 19);
    job.plan.zero = 0;
    job.training.use_cache = true;
    EXPECT_DOUBLE_EQ(host_ops(job.model, job.training, job.plan).lead_fwd, 43);
    // Compiled: Inductor's launches, not counted (0: no wait).
    job.training.use_cache = false;
    job.training.compile = true;
    EXPECT_DOUBLE_EQ(host_ops(job.model, job.training, job.plan).lead_fwd, 0);
}

TEST(HfLead, TheWaitIsTheFlowShopsLargestDeficit) {
    // 33 of 52 operators before the core at 50 us each: host 1,650 us; GPU
    // 300 us of its GEMMs and 33/52 of the forward's 1,900 + 100 us of
    // memory-bound kernels and launches, 1,269.2: a wait of 80.8 us.
    PlanContext ctx;
    ctx.host_op_s = 50e-6;
    HostOps h;
    h.layer_fwd = 52;
    h.lead_fwd = 33;
    LayerTime t;
    t.fwd.memory_bound_s = 1900e-6;
    t.fwd.overhead_s = 100e-6;
    t.lead_gemm_s = 300e-6;
    set_layer_host_time(t, ctx, h, ParallelPlan{});
    EXPECT_NEAR(t.lead_wait_s(), 1650e-6 - 300e-6 - 2000e-6 * 33.0 / 52.0, 1e-12);
    // FSDP2 at 10 us: the hook's 19 operators (190 us) against its unshard
    // (100 us) wait 90 us; the layer's 33 then (330 us against 300 + 33/52
    // x 1,900) leave the GPU ahead, so the hook's deficit is the wait.
    ctx.host_op_s = 10e-6;
    h.layer_fwd = 71;
    h.lead_fwd = 52;
    h.fsdp_fwd_ops = 19;
    t.unshard_s = 100e-6;
    set_layer_host_time(t, ctx, h, ParallelPlan{});
    EXPECT_NEAR(t.lead_wait_s(), 90e-6, 1e-12);
    // A fast host: no wait.
    ctx.host_op_s = 1e-6;
    set_layer_host_time(t, ctx, h, ParallelPlan{});
    EXPECT_EQ(t.lead_wait_s(), 0);
    // A layer whose expert calls synchronise (bind_expert_loops): its
    // stretches bind it, not a lead, however slow the host.
    ctx.host_op_s = 50e-6;
    set_layer_host_time(t, ctx, h, ParallelPlan{});
    ASSERT_GT(t.lead_wait_s(), 0);
    h.expert_loop_calls_fwd = 2;
    h.expert_loop_calls_bwd = 4;
    set_layer_host_time(t, ctx, h, ParallelPlan{});
    EXPECT_EQ(t.lead_wait_s(), 0);
}

TEST(HfLead, AGpuBoundForwardEndsNoSoonerThanItsGpuAndTheWait) {
    // GPU 9 ms of kernels and 1 ms of gaps, a 1 ms wait: 11 ms whether the
    // host takes 6 or 10.5 ms; a host of 12 ms sets it at 12.
    for (const auto& [cpu_ms, end_ms] : {std::pair{6.0, 11.0}, {10.5, 11.0}, {12.0, 12.0}}) {
        PassTime f, b;
        f.compute_s = 9e-3;
        f.overhead_s = 1e-3;
        f.cpu_s = cpu_ms * 1e-3;
        b.compute_s = 20e-3;
        b.cpu_s = 5e-3;
        PassTime::bind_host_in_order(f, b, 1e-3);
        EXPECT_NEAR(f.total_s(), end_ms * 1e-3, 1e-15) << cpu_ms;
        EXPECT_NEAR(f.total_s() + b.total_s(), end_ms * 1e-3 + 20e-3, 1e-15) << cpu_ms;
    }
}

TEST(HfLead, EachForwardAfterTheCheckWaitsOnItsFirstLayer) {
    // GPU-bound (4,096 tokens a micro-batch; the forward's first layer's
    // stretch host-bound at the calibration's host): a microsecond more per
    // forward operator is the first layer's 33 in each micro-batch (two),
    // and the embedding's: all 30 in the step's first, the 15 after the
    // check in the second, whose 15 before it hide behind the first's
    // backward. The other layers' operators stay behind the GPU.
    const Job job = llama1b();
    const Calibration base = default_calibration();
    Calibration slower = base;
    slower.hf_host_op_us += 1;
    const HostOps h = host_ops(job.model, job.training, job.plan);
    const Estimate a = estimate(job, base);
    ASSERT_LT(16 * h.layer_fwd * base.hf_host_op_us * 1e-6, 0.5 * a.breakdown.compute_s);
    ASSERT_DOUBLE_EQ(h.embed_fwd, 30);
    ASSERT_DOUBLE_EQ(h.embed_fwd_after_check, 15);
    EXPECT_NEAR(estimate(job, slower).step_time_s - a.step_time_s, (30 + 33 + 15 + 33) * 1e-6, 1e-9);
    // One micro-batch a step: the first's alone.
    Job one = job;
    one.training.global_batch = 1;
    const double one_s = estimate(one, base).step_time_s;
    EXPECT_NEAR(estimate(one, slower).step_time_s - one_s, (30 + 33) * 1e-6, 1e-9);
}

TEST(HfLead, WithACacheTheStepsFirstForwardWaitsThroughItsEmbedding) {
    // No check: the loop's own synchronisation leaves the GPU idle at the
    // step's start, and the host issues the embedding's 21 operators (30
    // less the check's 9), then the layers'. With the cache's 10 a layer
    // issues 62 operators, 1.74 ms at 28 us, more than its GPU time: the
    // layers are the host's, and the output layer's GPU time after them
    // gives none of it back (the forward's last piece, bound after the
    // layers). A microsecond more per forward operator costs the
    // embedding's and the layers' operators, 21 + 16 x 62 = 1,013 us a
    // step, at one micro-batch a step or two (the second issued during the
    // first's backward, bound with it). Bound as one forward, the head's
    // GPU time hid all but the embedding and the first layer's 43 (64 us).
    const Job two = llama1b({"training.use_cache=true"});
    const HostOps h = host_ops(two.model, two.training, two.plan);
    ASSERT_DOUBLE_EQ(h.embed_fwd, 21);
    ASSERT_DOUBLE_EQ(h.lead_fwd, 43);
    ASSERT_DOUBLE_EQ(h.layer_fwd, 62);
    ASSERT_EQ(two.plan.micro_batches(two.training), 2);
    EXPECT_NEAR(forward_op_slope_s(two), (21 + 16 * 62) * 1e-6, 1e-9);
    const Job one = llama1b({"training.use_cache=true", "training.global_batch_size=1"});
    EXPECT_NEAR(forward_op_slope_s(one), (21 + 16 * 62) * 1e-6, 1e-9);
}

TEST(HfLead, LayerTimeHoldsTheGemmsBeforeTheCoreAndTheUnshard) {
    // A Llama layer's mixer GEMMs are q, k, v (one shape) and o: one before
    // the core. FSDP2 on one rank unshards 10 bytes a parameter in its
    // pre-forward hook's 2 kernels a tensor (eager_traffic.cpp add_fsdp2_traffic).
    for (const char* zero : {"parallel.zero=0", "parallel.zero=3"}) {
        const Job job = llama1b({zero, "training.optimizer_kernel=foreach"});
        const LayerWork w = layer_work(job.model, job.training, job.plan);
        const HostOps h = host_ops(job.model, job.training, job.plan);
        const PlanContext ctx = make_plan_context(job, default_calibration());
        const LayerTime t = layer_time(ctx, w, h, job.plan);
        ASSERT_EQ(w.lead_gemms, 1) << zero;
        EXPECT_DOUBLE_EQ(t.lead_gemm_s, layer_gemm_s(ctx.dev, w.gemms[0], job.plan)) << zero;
        const double unshard = memory_time_s(ctx.dev, w.fsdp_unshard_bytes_fwd) +
                               w.fsdp_unshard_kernels_fwd * ctx.dev.kernel_overhead_s;
        EXPECT_DOUBLE_EQ(t.unshard_s, unshard) << zero;
        EXPECT_EQ(t.hook_gpu_s, job.plan.zero == 3 ? unshard : 0.0) << zero;
        if (job.plan.zero == 3) {
            EXPECT_GT(unshard, 0);
        }
    }
}

// The forward's last piece (the output layer and loss: GPU 4 ms, host
// 1 ms) after host-bound layers (host 10 ms, GPU 7.5 + 0.5 ms of kernel
// gaps), then a backward (GPU 10 ms, host 5 ms):
//   layers end at max(8, 10) = 10, the head at max(10 + 4, 10 + 1) = 14,
//   the backward at max(14 + 10, 16) = 24;
// bound as one forward (host 11, GPU 12) the head's GPU would take back the
// layers' wait, 12 + 10 = 22.
TEST(HfLead, AGpuBoundHeadCannotGiveBackTheWaitOfTheLayersBeforeIt) {
    const PassTime f{.compute_s = 7.5e-3, .overhead_s = 0.5e-3, .cpu_s = 10e-3};
    const PassTime head{.compute_s = 4e-3, .cpu_s = 1e-3}, b{.compute_s = 10e-3, .cpu_s = 5e-3};
    PassTime f1 = f, b1 = b;
    PassTime::bind_host_in_order(f1, b1, 0, &head);
    EXPECT_NEAR(f1.total_s(), 14e-3, 1e-15);
    EXPECT_NEAR(f1.cpu_s, 11e-3, 1e-15);  // the head joins the forward
    EXPECT_NEAR(f1.total_s() + b1.total_s(), 24e-3, 1e-15);
    PassTime f2 = f, b2 = b;
    f2 += head;
    PassTime::bind_host_in_order(f2, b2);
    EXPECT_NEAR(f2.total_s() + b2.total_s(), 22e-3, 1e-15);
    // A head the host holds up too (host 6 ms): the host's end, 16 ms, then the backward's 10.
    PassTime slow = head, f3 = f, b3 = b;
    slow.cpu_s = 6e-3;
    PassTime::bind_host_in_order(f3, b3, 0, &slow);
    EXPECT_NEAR(f3.total_s(), 16e-3, 1e-15);
    EXPECT_NEAR(f3.total_s() + b3.total_s(), 26e-3, 1e-15);
}

}  // namespace
}  // namespace lostflops
