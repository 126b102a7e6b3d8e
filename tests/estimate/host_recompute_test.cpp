// The host as its own resource (a pass takes at least the CPU's time to issue
// it), partial recompute (parallel.recompute_layers) in time, FLOPs and
// memory, and the training stack setting — each against hand-computed values.
#include <gtest/gtest.h>

#include "estimate/memory.h"
#include "estimate/stage_time.h"
#include "lostflops/calibration.h"
#include "lostflops/estimate.h"
#include "lostflops/job.h"
#include "test_util.h"
#include "workload/flops.h"
#include "workload/host_ops.h"
#include "workload/layer_work.h"

namespace lostflops {
namespace {

Job small(const std::vector<std::string>& sets = {}) {
    return parse_job(test::small_job_text(), "small.yaml", sets);
}

TEST(HostBound, PassTimeIsTheSlowerOfGpuAndCpu) {
    PassTime t;
    t.compute_s = 1e-3;
    t.overhead_s = 0.5e-3;
    t.cpu_s = 4e-3;
    t.bind_host();
    // Host-bound: the gaps between kernels are the host's wait, not the
    // GPU's launch overhead: 4 - 1 ms of compute.
    EXPECT_DOUBLE_EQ(t.host_wait_s, 3e-3);
    EXPECT_DOUBLE_EQ(t.overhead_s, 0.0);
    EXPECT_DOUBLE_EQ(t.total_s(), 4e-3);
    t.overhead_s = 0.5e-3;
    t.cpu_s = 1e-3;  // GPU-bound: the host runs ahead, nothing added
    t.bind_host();
    EXPECT_DOUBLE_EQ(t.host_wait_s, 0.0);
    EXPECT_DOUBLE_EQ(t.total_s(), 1.5e-3);
}

TEST(HostBound, LayerCpuTimeIsOpsTimesCost) {
    // Megatron-LM legacy, unfused attention, tp 2 without SP, full recompute
    // (src/workload/host_ops.cpp): forward 45 operators + 2 all-reduces = 47;
    // backward 50 C++ nodes, 39 Python operators + 2 all-reduces + 4 (the
    // column linears' async all-reduce and wait) = 45, the checkpoint's 14,
    // and the 47 forward operators again for the recompute.
    Job job = small({"training.framework=megatron-lm", "training.attention=unfused", "parallel.recompute=full"});
    Calibration cal = default_calibration();
    cal.host_op_us = 10;
    cal.host_bwd_op_us = 5;
    const HostOps h = host_ops(job.model, job.training, job.plan);
    EXPECT_DOUBLE_EQ(h.layer_fwd, 47);
    EXPECT_DOUBLE_EQ(h.layer_bwd, 50);
    EXPECT_DOUBLE_EQ(h.layer_bwd_py, 45);
    EXPECT_DOUBLE_EQ(h.checkpoint_py, 14);
    const PlanContext ctx = make_plan_context(job, cal);
    const LayerTime lt = layer_time(ctx, layer_work(job.model, job.training, job.plan), h, job.plan);
    EXPECT_NEAR(lt.fwd.cpu_s, 47 * 10e-6, 1e-15);
    EXPECT_NEAR(lt.bwd.cpu_s, 50 * 5e-6 + (45 + 14 + 47) * 10e-6, 1e-15);
}

TEST(HostBound, SmallJobStepIsSetByTheHost) {
    // A tiny layer: the GPU work per layer is far below the host's issue time,
    // so the step grows in proportion to host_op_us and the breakdown says so.
    const std::vector<std::string> sets = {"model.hidden_size=256", "model.num_attention_heads=4",
                                           "training.micro_batch_size=1", "training.seq_length=256"};
    Calibration fast = default_calibration(), slow = default_calibration();
    fast.host_op_us = 1e-3;
    fast.host_bwd_op_us = 1e-3;
    slow.host_op_us = 100;
    slow.host_bwd_op_us = 50;
    const Estimate ef = estimate(small(sets), fast);
    const Estimate es = estimate(small(sets), slow);
    EXPECT_EQ(ef.breakdown.host_s, 0.0);
    EXPECT_GT(es.breakdown.host_s, 0.5 * es.step_time_s);
    EXPECT_GT(es.step_time_s, 3 * ef.step_time_s);
}

TEST(HostBound, NoPublishedRunIsHostBound) {
    // The published runs are large layers and micro-batches: the host model
    // must leave them alone (their fit does not depend on host_op_us).
    const std::vector<std::string> names = {
        "narayanan21-t1-gpt-1.7b", "korthikanti22-t5-gpt-22b-selective", "megatron24-h100-gpt-1.7b",
        "megatron24-h100-gpt-7.1b", "torchtitan24-a100-llama3-8b-selective", "megatron24-h100-gpt-462b"};
    for (const auto& n : names) {
        const Job job = load_job(test::source_path("data/published/runs/" + n + ".json"));
        EXPECT_EQ(estimate(job, default_calibration()).breakdown.host_s, 0.0) << n;
    }
}

TEST(HostBound, LargeJobIsNotHostBound) {
    // GPT 2048-hidden with micro-batch 2 x 2048 tokens: GEMMs dwarf the host.
    const Estimate e = estimate(small(), default_calibration());
    EXPECT_EQ(e.breakdown.host_s, 0.0);
}

TEST(RecomputeLayers, ZeroIsNoRecomputeAllIsFull) {
    const Calibration cal = default_calibration();
    const Estimate none = estimate(small({"parallel.recompute=none"}), cal);
    const Estimate zero = estimate(small({"parallel.recompute=full", "parallel.recompute_layers=0"}), cal);
    const Estimate all = estimate(small({"parallel.recompute=full", "parallel.recompute_layers=12"}), cal);
    const Estimate full = estimate(small({"parallel.recompute=full"}), cal);
    EXPECT_DOUBLE_EQ(zero.step_time_s, none.step_time_s);
    EXPECT_DOUBLE_EQ(zero.memory.activations_bytes, none.memory.activations_bytes);
    EXPECT_DOUBLE_EQ(all.step_time_s, full.step_time_s);
    EXPECT_DOUBLE_EQ(all.memory.activations_bytes, full.memory.activations_bytes);
}

TEST(RecomputeLayers, HalfTheLayersByHand) {
    // 24 layers on pp 2: 12 per stage; recompute 4 of them. Stage 0 keeps,
    // per in-flight micro-batch (1F1B: pp - 0 = 2 of them, m = 8), 4 layer
    // inputs and 8 full layers, plus one layer's working set.
    const Calibration cal = default_calibration();
    const Job job = small({"parallel.recompute=full", "parallel.recompute_layers=4"});
    const LayerWork lw = layer_work(job.model, job.training, job.plan);
    const HeadWork hw = head_work(job.model, job.training, job.plan);
    const Memory m0 = stage_memory(job, cal, lw, hw, 0);
    const double inflight = 2;
    const double expected = inflight * (4 * lw.checkpoint_bytes + 8 * lw.activation_bytes_full) +
                            lw.activation_bytes_full + inflight * hw.embed_bytes_fwd;
    EXPECT_NEAR(m0.activations_bytes, expected, 1.0);

    // Time: the backward of 4 layers carries the recompute, 8 do not; the
    // recompute wall is a third of full recompute's.
    const Estimate part = estimate(job, cal);
    const Estimate full = estimate(small({"parallel.recompute=full"}), cal);
    EXPECT_NEAR(part.breakdown.recompute_s, full.breakdown.recompute_s * 4.0 / 12.0, 1e-12);
    // Hardware FLOPs: model + a third of the layers' forward again.
    const LayerForwardFlops lf = layer_forward_flops(job.model.kind(0), job.model.hidden, job.training.seq_length, false);
    const double extra = 24.0 * (lf.weight_gemms + lf.attention_core) * 4.0 / 12.0;
    const double tokens = static_cast<double>(job.training.global_batch) * job.training.seq_length;
    EXPECT_NEAR(part.hardware_flops_per_step / tokens - part.model_flops_per_step / tokens, extra, extra * 1e-9);
}

TEST(RecomputeLayers, BadValuesAreNamed) {
    EXPECT_NE(test::parse_error(test::small_job_text(), {"parallel.recompute_layers=2"})
                  .find("parallel.recompute_layers"),
              std::string::npos);
    EXPECT_NE(test::parse_error(test::small_job_text(), {"parallel.recompute=full", "parallel.recompute_layers=-1"})
                  .find("parallel.recompute_layers"),
              std::string::npos);
    EXPECT_NE(test::parse_error(test::small_job_text(), {"parallel.recompute=full", "parallel.recompute_layers=x"})
                  .find("parallel.recompute_layers"),
              std::string::npos);
    // 24 layers on pp 2: 12 per stage, so 13 cannot be meant.
    const std::string too_many =
        test::parse_error(test::small_job_text(), {"parallel.recompute=full", "parallel.recompute_layers=13"});
    EXPECT_NE(too_many.find("parallel.recompute_layers: 13 is more than the 12 layers"), std::string::npos)
        << too_many;
    EXPECT_EQ(test::parse_error(test::small_job_text(), {"parallel.recompute=full", "parallel.recompute_layers=12"}),
              "");
}

TEST(Framework, AutoFollowsTheCitedSource) {
    EXPECT_EQ(default_framework("torchtitan docs/performance.md (Oct 2024)", AttentionKernel::flash), Framework::fsdp);
    EXPECT_EQ(default_framework("MosaicML llm-foundry benchmarks", AttentionKernel::flash), Framework::fsdp);
    EXPECT_EQ(default_framework("Megatron-DeepSpeed 2022", AttentionKernel::unfused), Framework::megatron_lm);
    EXPECT_EQ(default_framework("DeepSpeed ZeRO-3 blog", AttentionKernel::flash), Framework::deepspeed);
    EXPECT_EQ(default_framework("Megatron-Core r0.8.0", AttentionKernel::flash), Framework::megatron_core);
    EXPECT_EQ(default_framework("Narayanan et al. 2021", AttentionKernel::unfused), Framework::megatron_lm);
    EXPECT_EQ(default_framework("", AttentionKernel::flash), Framework::megatron_core);
    EXPECT_NE(test::parse_error(test::small_job_text(), {"training.framework=jax"}).find("training.framework"),
              std::string::npos);
}

TEST(Framework, EagerStackMovesMoreBytesThanFusedOne) {
    // Llama-style layer: unfused RMSNorm, rotary and SwiGLU under an eager
    // stack add (36-4)*2 bytes per hidden element for the two norms, 16 per
    // Q/K element and 4 per FFN element (layer_work.cpp) to the forward.
    const std::vector<std::string> llama = {"model.hidden_act=silu", "parallel.tp=1", "parallel.pp=1"};
    auto with = [&](const char* fw) {
        auto s = llama;
        s.push_back(std::string("training.framework=") + fw);
        const Job j = small(s);
        return layer_work(j.model, j.training, j.plan);
    };
    const LayerWork fused = with("megatron-core"), eager = with("fsdp");
    const double tokens = 2.0 * 2048, h = 2048, ffn = 4 * 2048;
    const double extra = tokens * (2 * 32 * h + 16 * (h + h) + 4 * ffn);
    EXPECT_NEAR(eager.mem_bytes_fwd - fused.mem_bytes_fwd, extra, 1.0);
    EXPECT_GT(eager.kernels_fwd, fused.kernels_fwd);
}

}  // namespace
}  // namespace lostflops
