// The host's operators of a Hugging Face model in eager PyTorch (framework
// hf) and the step of a host-bound one-GPU job, against counts and times
// computed by hand from src/workload/host_ops_hf.cpp and the calibration.
#include <gtest/gtest.h>

#include "estimate/stage_time.h"

#include "lostflops/calibration.h"
#include "lostflops/estimate.h"
#include "lostflops/job.h"
#include "test_util.h"
#include "workload/host_ops.h"
#include "workload/layer_work.h"

namespace lostflops {
namespace {

// The Qwen2.5-0.5B shape of shared/reference/h200 (as a Llama): 24 layers,
// SwiGLU, RMSNorm, rotary, tied embeddings, one GPU, one sequence of 2048.
Job qwen05_like(std::vector<std::string> sets = {}) {
    std::vector<std::string> all = {
        "model.num_hidden_layers=24", "model.hidden_size=896", "model.intermediate_size=4864",
        "model.num_attention_heads=14", "model.num_key_value_heads=2", "model.vocab_size=151936",
        "model.hidden_act=silu", "model.tie_word_embeddings=true", "cluster.gpu=h200-sxm", "cluster.num_gpus=1",
        "cluster.gpus_per_node=1", "training.seq_length=2048", "training.global_batch_size=1",
        "training.micro_batch_size=1", "training.framework=hf", "training.optimizer_kernel=fused", "parallel.tp=1",
        "parallel.pp=1", "parallel.zero=0", "parallel.recompute=none"};
    all.insert(all.end(), sets.begin(), sets.end());
    return parse_job(test::small_job_text(), "qwen05.yaml", all);
}

TEST(HfHostOps, LlamaLayerIsTheTracesFiftyTwoOperatorsAndNinetyNodes) {
    // RMSNorm 8 x 2, residual adds 2, q/k/v 9, rotary 16, SDPA + transpose +
    // reshape + o_proj 4, SwiGLU 5 = 52; backward 52 x 90 / 52 = 90.
    const Job job = qwen05_like();
    const HostOps h = host_ops(job.model, job.training, job.plan);
    EXPECT_DOUBLE_EQ(h.layer_fwd, 52);
    EXPECT_NEAR(h.layer_bwd, 90, 1e-12);
    EXPECT_DOUBLE_EQ(h.head_fwd + h.embed_fwd, 49);
    EXPECT_DOUBLE_EQ(h.head_bwd + h.embed_bwd, 21);
    // FSDP2 on one rank: its hooks, no autocast casts (the fsdp2 trace: 71, 81).
    const Job fsdp2 = qwen05_like({"parallel.zero=3", "training.optimizer_kernel=foreach"});
    const HostOps f = host_ops(fsdp2.model, fsdp2.training, fsdp2.plan);
    EXPECT_DOUBLE_EQ(f.layer_fwd, 71);
    EXPECT_NEAR(f.layer_bwd, 81, 1e-12);
}

TEST(HfHostOps, ParameterTensorsAreTheOptimizersTwoHundredEighteen) {
    // 24 x (q, k, v, o, gate, up, down, two norms) + embedding + final norm,
    // lm_head tied: 218, as torch.optim walked them on the trace.
    EXPECT_DOUBLE_EQ(hf_param_tensors(qwen05_like().model), 218);
    EXPECT_DOUBLE_EQ(hf_param_tensors(qwen05_like({"model.tie_word_embeddings=false"}).model), 219);
}

TEST(HfHostBound, StepIsTheHostsTimeWhenTheGpuWaits) {
    // Every per-operator cost doubled: a host-bound step grows by exactly one
    // more host time. By hand, at hf_host_op_us 28, hf_host_bwd_op_us 25,
    // hf_optimizer_tensor_us 10: 24 x 52 + 49 = 1,297 operators, 24 x 90 + 21
    // = 2,181 nodes, 218 tensors: 36,316 + 54,525 + 2,180 = 93,021 us (the
    // embedding's 30 operators among them, though the GPU waits for them at
    // the packed-sequence check rather than beside the rest).
    const Job job = qwen05_like();
    const Calibration one = default_calibration();
    ASSERT_DOUBLE_EQ(one.hf_host_op_us, 28);
    ASSERT_DOUBLE_EQ(one.hf_host_bwd_op_us, 25);
    ASSERT_DOUBLE_EQ(one.hf_optimizer_tensor_us, 10);
    Calibration two = one;
    two.hf_host_op_us *= 2;
    two.hf_host_bwd_op_us *= 2;
    two.hf_optimizer_tensor_us *= 2;
    const Estimate e1 = estimate(job, one), e2 = estimate(job, two);
    ASSERT_GT(e1.breakdown.host_s, 0.0);
    EXPECT_NEAR(e2.step_time_s - e1.step_time_s, 93021e-6, 1e-7);
    // The Megatron costs play no part in an hf job.
    Calibration megatron = one;
    megatron.host_op_us = 1000;
    megatron.host_bwd_op_us = 1000;
    EXPECT_DOUBLE_EQ(estimate(job, megatron).step_time_s, e1.step_time_s);
}

TEST(HfHostBound, OtherFrameworksIgnoreTheHfCosts) {
    const Job job = qwen05_like({"training.framework=fsdp"});
    Calibration c = default_calibration();
    const double base = estimate(job, c).step_time_s;
    c.hf_host_op_us = c.hf_host_bwd_op_us = c.hf_optimizer_tensor_us = 1000;
    EXPECT_DOUBLE_EQ(estimate(job, c).step_time_s, base);
}


TEST(HfHostOps, CompiledLayerIsInductorsLaunches) {
    // The compiled traces' layer (host_ops_hf.cpp): GEMMs 7, attention 1, two
    // kernels for each of 4 chains (two norms, rotary, SwiGLU), autocast's 7
    // weight casts = 23; backward 14 + 3 + 3 x 4 + 7 = 36 (the Qwen2.5-0.5B
    // trace: 23.4 and 37.4), each at compiled_launch_us.
    const Job job = qwen05_like({"training.compile=true"});
    const HostOps h = host_ops(job.model, job.training, job.plan);
    EXPECT_DOUBLE_EQ(h.layer_fwd, 23);
    EXPECT_DOUBLE_EQ(h.layer_bwd, 36);
    // FSDP2's bf16 parameters have no casts: 16 and 29.
    const Job fsdp2 = qwen05_like({"training.compile=true", "parallel.zero=3", "training.optimizer_kernel=foreach"});
    const HostOps f = host_ops(fsdp2.model, fsdp2.training, fsdp2.plan);
    EXPECT_DOUBLE_EQ(f.layer_fwd, 16);
    EXPECT_DOUBLE_EQ(f.layer_bwd, 29);
    // Each launch is a kernel on the GPU: the layer's kernel counts are the
    // same 23 and 36 (before, 15 and 26: one GEMM and one cast a fused GEMM
    // shape, one kernel a chain, cuDNN's backward two); FSDP2 on one rank
    // adds its unshard's cast and copy per tensor (9 tensors: 18) and, backward,
    // again and the reduce's two.
    const LayerWork w = layer_work(job.model, job.training, job.plan);
    EXPECT_DOUBLE_EQ(w.kernels_fwd, 23);
    EXPECT_DOUBLE_EQ(w.kernels_bwd, 36);
    const LayerWork fw = layer_work(fsdp2.model, fsdp2.training, fsdp2.plan);
    EXPECT_DOUBLE_EQ(fw.kernels_fwd, 16 + 18);
    EXPECT_DOUBLE_EQ(fw.kernels_bwd, 29 + 18 + 2);
    // Those launches at compiled_launch_us (19.1 us) are the layer's host
    // time; the eager per-operator costs play no part.
    Calibration cal = default_calibration();
    ASSERT_DOUBLE_EQ(cal.compiled_launch_us, 19.1);
    cal.hf_host_op_us = cal.hf_host_bwd_op_us = 1000;
    const PlanContext ctx = make_plan_context(job, cal);
    const LayerTime lt = layer_time(ctx, layer_work(job.model, job.training, job.plan), h, job.plan);
    EXPECT_NEAR(lt.fwd.cpu_s, 23 * 19.1e-6, 1e-15);
    EXPECT_NEAR(lt.bwd.cpu_s, 36 * 19.1e-6, 1e-15);
}

TEST(HfTraffic, AutocastAddsItsCastsFp32StreamAndRotaryOverTheEagerStack) {
    // Against the same layer under the eager fsdp stack, per 2,048 tokens of
    // the Qwen2.5-0.5B shape (h 896, rotary on (14 + 2) x 64 = 1,024 q and k
    // elements): norms 2 x (28 - 36) + casts 5 x 6 + residual adds 2 x
    // (10 - 6) = 22 bytes per hidden element, rotary 36 - 20 = 16 per q/k
    // element: 2,048 x (896 x 22 + 1,024 x 16) = 73,924,608 bytes; weight
    // casts 6 x 14,911,232 parameters = 89,467,392 bytes forward and again
    // backward (the gradients' casts); backward activations twice, but
    // rotary's 60 bytes per element, not 72: 2,048 x 1,024 x 12 = 25,165,824 less.
    const Job hf = qwen05_like();
    const Job eager = qwen05_like({"training.framework=fsdp"});
    const LayerWork a = layer_work(hf.model, hf.model.kind(0), hf.training, hf.plan);
    const LayerWork b = layer_work(eager.model, eager.model.kind(0), eager.training, eager.plan);
    ASSERT_DOUBLE_EQ(a.params, 14911232);
    EXPECT_NEAR(a.mem_bytes_fwd - b.mem_bytes_fwd, 73924608.0 + 89467392.0, 1);
    EXPECT_NEAR(a.mem_bytes_bwd - b.mem_bytes_bwd, 2 * 73924608.0 + 89467392.0 - 25165824.0, 1);
    // FSDP2 computes in bf16: no autocast traffic, but its unshard's cast and
    // copy (10 bytes per parameter forward) and unshard + reduce (24
    // backward) on one rank, and the bf16 model's backward over the stack's
    // (eager_traffic.cpp add_fsdp2_bf16_traffic): 2,048 x (896 x 46 - 1,024 x
    // 6 - 4,864 x 2) = 51,904,512 bytes.
    const Job fsdp2 = qwen05_like({"parallel.zero=3", "training.optimizer_kernel=foreach"});
    const LayerWork c = layer_work(fsdp2.model, fsdp2.model.kind(0), fsdp2.training, fsdp2.plan);
    EXPECT_NEAR(c.mem_bytes_fwd - b.mem_bytes_fwd, 10.0 * 14911232, 1);
    EXPECT_NEAR(c.mem_bytes_bwd - b.mem_bytes_bwd, 24.0 * 14911232 + 51904512.0, 1);
}

TEST(HfTraffic, NewGeluRunsItsChainInFp32) {
    // GPT-2-like layers (dense MLP of 4 x 896): gelu_new's chain is 68 bytes
    // per FFN element forward where one GELU kernel is 4: 2,048 tokens x
    // 3,584 x 64 = 469,762,048 bytes more forward, twice that backward.
    const Job plain = qwen05_like({"model.hidden_act=gelu", "model.intermediate_size=3584"});
    const Job chain = qwen05_like({"model.hidden_act=gelu_new", "model.intermediate_size=3584"});
    const LayerWork a = layer_work(plain.model, plain.model.kind(0), plain.training, plain.plan);
    const LayerWork b = layer_work(chain.model, chain.model.kind(0), chain.training, chain.plan);
    ASSERT_FALSE(plain.model.kind(0).mlp.act_composite);
    ASSERT_TRUE(chain.model.kind(0).mlp.act_composite);
    EXPECT_NEAR(b.mem_bytes_fwd - a.mem_bytes_fwd, 2048.0 * 3584 * 64, 1);
    EXPECT_NEAR(b.mem_bytes_bwd - a.mem_bytes_bwd, 2 * 2048.0 * 3584 * 64, 1);
}

TEST(HfTraffic, CompiledAutocastKeepsItsFp32StreamAndWeightCasts) {
    // Under torch.compile, over the fused counts of the fsdp stack: norms 2 x
    // 2 and residual adds 2 x 4 bytes per hidden element, 2,048 x 896 x 12 =
    // 22,020,096 bytes, and the weight casts 6 x 14,911,232 forward, again
    // backward; backward activations twice.
    const Job hf = qwen05_like({"training.compile=true"});
    const Job fused = qwen05_like({"training.compile=true", "training.framework=fsdp"});
    const LayerWork a = layer_work(hf.model, hf.model.kind(0), hf.training, hf.plan);
    const LayerWork b = layer_work(fused.model, fused.model.kind(0), fused.training, fused.plan);
    EXPECT_NEAR(a.mem_bytes_fwd - b.mem_bytes_fwd, 22020096.0 + 89467392.0, 1);
    EXPECT_NEAR(a.mem_bytes_bwd - b.mem_bytes_bwd, 2 * 22020096.0 + 89467392.0, 1);
}

TEST(HfTraffic, LossIsTransformersFp32CrossEntropy) {
    // logits.float() 6, log_softmax 12 bytes per logit forward; nll_loss's
    // dense gradient 4, log_softmax_backward 12, the cast back 6: 22. Per
    // 2,048 x 151,936 logits. Compiled: the fused default, 14 and 6.
    // Besides (workload/head_work.cpp add_autocast_head_traffic): the
    // output weight's cast, 6 bytes per 151,936 x 896 parameters each way,
    // the final RMSNorm in fp32 (28 per 2,048 x 896 element forward, 56
    // backward) and lm_head's cast of its input (6 each way).
    const double logits = 2048.0 * 151936, weights = 151936.0 * 896, th = 2048.0 * 896;
    const Job hf = qwen05_like();
    const HeadWork a = head_work(hf.model, hf.training, hf.plan);
    EXPECT_NEAR(a.loss_bytes_fwd, 18 * logits + 6 * weights + 34 * th, 1);  // 6,480,166,912
    EXPECT_NEAR(a.loss_bytes_bwd, 22 * logits + 6 * weights + 62 * th, 1);  // 7,776,206,848
    const Job compiled = qwen05_like({"training.compile=true"});
    const HeadWork b = head_work(compiled.model, compiled.training, compiled.plan);
    EXPECT_NEAR(b.loss_bytes_fwd, 14 * logits, 1);
    EXPECT_NEAR(b.loss_bytes_bwd, 6 * logits, 1);
}

}  // namespace
}  // namespace lostflops
