// Parameters and model FLOPs per token of small stacks of every layer kind,
// against values computed by hand here term by term (each line names the
// weight it counts), and the layer stack's bookkeeping.
#include <gtest/gtest.h>

#include "lostflops/calibration.h"
#include "lostflops/estimate.h"
#include "lostflops/job.h"
#include "test_util.h"
#include "workload/flops.h"

namespace lostflops {
namespace {

// A job around `model_yaml` (the model: section's keys) on one GPU.
Job job_with(const std::string& model_yaml, int64_t seq, bool causal = false) {
    const std::string text = "model:\n" + model_yaml + R"(
cluster: {gpu: h100-sxm, num_gpus: 1}
training: {seq_length: )" + std::to_string(seq) + ", global_batch_size: 1, causal_flops: " +
                             (causal ? "true" : "false") + "}\nparallel: {}\n";
    return parse_job(text, "job.yaml");
}

TEST(ModelCounts, MultiLatentAttention) {
    // h 64, 4 heads, q rank 32, kv rank 16, qk 8 + rope 4, v 8; a gated MLP of 128.
    const Job j = job_with(R"(  num_hidden_layers: 1
  hidden_size: 64
  num_attention_heads: 4
  q_lora_rank: 32
  kv_lora_rank: 16
  qk_nope_head_dim: 8
  qk_rope_head_dim: 4
  v_head_dim: 8
  intermediate_size: 128
  hidden_act: silu
  vocab_size: 100
  tie_word_embeddings: false)",
                           16);
    ASSERT_EQ(j.model.kind(0).mixer, MixerKind::mla);
    const double q_down = 64 * 32, q_norm = 32, q_up = 32 * 4 * (8 + 4);
    const double kv_down = 64 * (16 + 4), kv_norm = 16, kv_up = 16 * 4 * (8 + 8);
    const double out = 4 * 8 * 64, mlp = 3 * 64 * 128, norms = 2 * 64;
    const double gemms = q_down + q_up + kv_down + kv_up + out + mlp;
    const ParamCount p = count_params(j.model);
    EXPECT_DOUBLE_EQ(p.total, gemms + q_norm + kv_norm + norms + 100 * 64 * 2 + 64);
    EXPECT_DOUBLE_EQ(p.active, p.total);
    // Scores over the qk head dim (12), values over v (8); every one of 16 keys.
    const double core = 2 * 4 * (12 + 8) * 16.0;
    const double fwd = 2 * gemms + core + 2 * 64 * 100;
    EXPECT_DOUBLE_EQ(flops_per_token(j.model, j.training, Recompute::none).model, 3 * fwd);
    // Without the q compression (DeepSeek-V2-Lite): one h x a*qk projection.
    const Job lite = job_with(R"(  num_hidden_layers: 1
  hidden_size: 64
  num_attention_heads: 4
  kv_lora_rank: 16
  qk_nope_head_dim: 8
  qk_rope_head_dim: 4
  v_head_dim: 8
  intermediate_size: 128
  hidden_act: silu
  vocab_size: 100)",
                              16);
    EXPECT_DOUBLE_EQ(count_params(lite.model).total,
                     64 * 4 * 12 + kv_down + kv_norm + kv_up + out + mlp + norms + 100 * 64 + 64);
}

TEST(ModelCounts, SlidingWindowCountsTheKeysItSees) {
    // 4 heads of 32 (head_dim given, not hidden / heads), 2 KV heads, window 4
    // on every layer (Mistral's rule), 16 tokens.
    const std::string shape = R"(  model_type: mistral
  num_hidden_layers: 2
  hidden_size: 64
  num_attention_heads: 4
  num_key_value_heads: 2
  head_dim: 32
  intermediate_size: 96
  sliding_window: 4
  vocab_size: 100)";
    const Job j = job_with(shape, 16, /*causal=*/true);
    ASSERT_EQ(j.model.kind(0).attention.window, 4);
    // Causal band of the last 4 keys over 16 queries: area 16*4 - 4*4/2 = 56,
    // 3.5 keys per query on average.
    EXPECT_DOUBLE_EQ(attention_keys(16, 4, 0, true), 3.5);
    EXPECT_DOUBLE_EQ(attention_keys(16, 4, 0, false), 7.0);   // the doubled (Megatron) convention
    EXPECT_DOUBLE_EQ(attention_keys(16, 0, 0, true), 8.0);    // full causal: s/2
    EXPECT_DOUBLE_EQ(attention_keys(16, 64, 0, true), 8.0);   // a window beyond the sequence changes nothing
    const double attn = 64 * 32 * (2 * 4 + 2 * 2), mlp = 3 * 64 * 96;
    const double core = 2 * 4 * (32 + 32) * 3.5;
    const double fwd = 2 * (2 * (attn + mlp) + core) + 2 * 64 * 100;
    EXPECT_DOUBLE_EQ(flops_per_token(j.model, j.training, Recompute::none).model, 3 * fwd);
    // Selective recompute adds the cores again.
    EXPECT_DOUBLE_EQ(flops_per_token(j.model, j.training, Recompute::selective).hardware, 3 * fwd + 2 * core);
}

TEST(ModelCounts, ChunkedAttentionSeesItsChunk) {
    // Chunks of 4 over 16 tokens: 4 triangles of 4*4/2, 2 keys per query; 18
    // tokens leave a chunk of 2: (4*8 + 2) / 18.
    EXPECT_DOUBLE_EQ(attention_keys(16, 0, 4, true), 2.0);
    EXPECT_DOUBLE_EQ(attention_keys(18, 0, 4, true), 34.0 / 18);
    // Llama 4's rule: chunked on the layers with rotary embeddings, every
    // fourth layer global (transformers configuration_llama4.py).
    const Job j = job_with(R"(  model_type: llama4_text
  num_hidden_layers: 8
  hidden_size: 64
  num_attention_heads: 4
  num_key_value_heads: 1
  head_dim: 16
  intermediate_size: 32
  intermediate_size_mlp: 128
  num_local_experts: 4
  num_experts_per_tok: 1
  interleave_moe_layer_step: 2
  attention_chunk_size: 4
  vocab_size: 100)",
                           16);
    int chunked = 0, moe = 0;
    for (int i = 0; i < 8; ++i) {
        chunked += j.model.layer(i).attention.chunk == 4;
        moe += j.model.layer(i).is_moe();
        EXPECT_EQ(j.model.layer(i).attention.chunk == 4, (i + 1) % 4 != 0) << i;
        EXPECT_EQ(j.model.layer(i).is_moe(), (i + 1) % 2 == 0) << i;
    }
    EXPECT_EQ(chunked, 6);
    EXPECT_EQ(moe, 4);
    // Dense layers 128 wide; MoE layers 4 experts of 32 and one shared expert of 32.
    EXPECT_EQ(j.model.layer(0).mlp.ffn, 128);
    EXPECT_EQ(j.model.layer(1).moe.expert.ffn, 32);
    EXPECT_EQ(j.model.layer(1).moe.shared_ffn, 32);
}

TEST(ModelCounts, SharedExpertsAndDenseFirstLayers) {
    // DeepSeek's layout: the first layer dense (96 wide), then MoE of 8
    // experts of 16, top 2, and 2 shared experts of 16 (one 32-wide MLP).
    const Job j = job_with(R"(  model_type: deepseek_v3
  num_hidden_layers: 3
  hidden_size: 64
  num_attention_heads: 4
  intermediate_size: 96
  n_routed_experts: 8
  num_experts_per_tok: 2
  moe_intermediate_size: 16
  n_shared_experts: 2
  first_k_dense_replace: 1
  vocab_size: 100)",
                           16);
    ASSERT_EQ(j.model.kinds().size(), 2u);
    EXPECT_FALSE(j.model.layer(0).is_moe());
    EXPECT_TRUE(j.model.layer(1).is_moe());
    const double attn = 4 * 64 * 64, norms = 2 * 64;
    const double dense = 3 * 64 * 96, expert = 3 * 64 * 16, shared = 3 * 64 * 32, router = 64 * 8;
    const ParamCount p = count_params(j.model);
    const double embed = 100 * 64 * 2 + 64;  // untied (DeepSeek's default) + final norm
    EXPECT_DOUBLE_EQ(p.total, (attn + dense + norms) + 2 * (attn + router + 8 * expert + shared + norms) + embed);
    EXPECT_DOUBLE_EQ(p.active, (attn + dense + norms) + 2 * (attn + router + 2 * expert + shared + norms) + embed);
    // FLOPs: the dense layer, and per MoE layer the router, 2 experts and the shared MLP.
    const double core = 4 * 64 * 16.0;
    const double fwd = (2 * (attn + dense) + core) + 2 * (2 * (attn + router + 2 * expert + shared) + core) + 2 * 64 * 100;
    EXPECT_DOUBLE_EQ(flops_per_token(j.model, j.training, Recompute::none).model, 3 * fwd);
    // A capacity of 0.25 keeps a quarter of the routed tokens: each MoE layer
    // loses 3/4 of its 2 experts' forward, the router and shared MLP stay
    // (with c 0.01, MFU passed 100 %: the time shrank and the FLOPs did not).
    const double kept = fwd - 2 * 0.75 * 2 * (2 * expert);
    EXPECT_DOUBLE_EQ(flops_per_token(j.model, j.training, Recompute::none, 1.0, 0.25).model, 3 * kept);
    ParallelPlan plan;
    EXPECT_DOUBLE_EQ(moe_kept_share(plan), 1.0);  // dropless
    plan.moe_capacity_factor = 1.5;
    EXPECT_DOUBLE_EQ(moe_kept_share(plan), 1.0);
    plan.moe_capacity_factor = 0.25;
    plan.moe_pad_to_capacity = true;
    EXPECT_DOUBLE_EQ(moe_kept_share(plan), 0.25);
}

// The estimate's MFU follows the kept tokens: never above 100 % however
// small the capacity (Mixtral 8x7B on 64 H100 at c 0.01 printed 105.2 %).
TEST(ModelCounts, MfuCountsTheTokensACapacityKeeps) {
    const std::string base = "model: {preset: mixtral-8x7b}\ncluster: {preset: dgx-h100, num_gpus: 64}\n"
                             "training: {seq_length: 4096, global_batch_size: 256}\nparallel: {tp: 2, pp: 4, ep: 8";
    const Estimate full = estimate(parse_job(base + "}\n", "job.yaml"), default_calibration());
    const Estimate tiny =
        estimate(parse_job(base + ", moe_capacity_factor: 0.01}\n", "job.yaml"), default_calibration());
    EXPECT_LT(tiny.step_time_s, full.step_time_s);
    EXPECT_LT(tiny.model_flops_per_step, full.model_flops_per_step);
    EXPECT_LT(tiny.mfu, full.mfu);
    EXPECT_LE(tiny.hfu, 1.0);
}

TEST(ModelCounts, HybridMambaAttentionMlpStack) {
    // Nemotron-H's pattern: M (Mamba-2), * (attention), - (squared-ReLU MLP),
    // one RMSNorm per block. Mamba-2: 4 heads of 32 (d_inner 128), 2 groups,
    // state 8, convolution 4 with bias.
    const Job j = job_with(R"(  model_type: nemotron_h
  num_hidden_layers: 4
  hybrid_override_pattern: "M*-M"
  hidden_size: 64
  num_attention_heads: 4
  num_key_value_heads: 2
  head_dim: 16
  intermediate_size: 256
  mlp_hidden_act: relu2
  mamba_num_heads: 4
  mamba_head_dim: 32
  n_groups: 2
  ssm_state_size: 8
  conv_kernel: 4
  vocab_size: 100)",
                           16);
    ASSERT_EQ(j.model.kinds().size(), 3u);
    EXPECT_EQ(j.model.layer(0).mixer, MixerKind::mamba2);
    EXPECT_EQ(j.model.layer(1).mixer, MixerKind::attention);
    EXPECT_EQ(j.model.layer(2).mixer, MixerKind::none);
    EXPECT_EQ(j.model.layer(2).mlp.kind, MlpKind::dense);
    const double di = 128, gn = 2 * 8, heads = 4, conv = di + 2 * gn;
    const double in_proj = 64 * (2 * di + 2 * gn + heads), out_proj = di * 64;
    const double mamba = in_proj + out_proj + conv * 4 + conv + 3 * heads + di + 64;
    const double attn = 64 * 16 * (2 * 4 + 2 * 2) + 64;
    const double mlp = 2 * 64 * 256 + 64;
    const ParamCount p = count_params(j.model);
    EXPECT_DOUBLE_EQ(p.total, 2 * mamba + attn + mlp + 100 * 64 * 2 + 64);
    // FLOPs: projections, the scan 7 * d_inner * d_state (Megatron-LM
    // mamba_layer_flops), attention over 16 keys, the MLP.
    const double mamba_fwd = 2 * (in_proj + out_proj) + 7 * di * 8;
    const double attn_fwd = 2 * (64 * 16 * (2 * 4 + 2 * 2)) + 2 * 4 * (16 + 16) * 16.0;
    const double fwd = 2 * mamba_fwd + attn_fwd + 2 * (2 * 64 * 256) + 2 * 64 * 100;
    EXPECT_DOUBLE_EQ(flops_per_token(j.model, j.training, Recompute::none).model, 3 * fwd);
}

TEST(ModelCounts, GatedDeltaNetAndGatedAttention) {
    // Qwen3-Next's pattern: Gated DeltaNet on 3 of 4 layers, gated attention
    // (a second query-sized projection) with q/k norms on the 4th.
    const Job j = job_with(R"(  model_type: qwen3_next
  num_hidden_layers: 4
  hidden_size: 64
  num_attention_heads: 4
  num_key_value_heads: 2
  head_dim: 16
  full_attention_interval: 4
  linear_num_key_heads: 2
  linear_num_value_heads: 4
  linear_key_head_dim: 8
  linear_value_head_dim: 16
  linear_conv_kernel_dim: 4
  intermediate_size: 32
  vocab_size: 100)",
                           16);
    EXPECT_EQ(j.model.layer(0).mixer, MixerKind::gated_deltanet);
    EXPECT_EQ(j.model.layer(3).mixer, MixerKind::attention);
    const double kd = 2 * 8, vd = 4 * 16;
    const double gdn_gemm = 64 * (2 * kd + 2 * vd) + 64 * 2 * 4 + vd * 64;
    const double gdn = gdn_gemm + (2 * kd + vd) * 4 + 2 * 4 + 16;
    const double attn_gemm = 64 * 16 * (2 * 4 + 2 * 2) + 64 * 4 * 16;
    const double attn = attn_gemm + 2 * 16;
    const double mlp = 3 * 64 * 32, norms = 2 * 64;
    EXPECT_DOUBLE_EQ(count_params(j.model).total, 3 * (gdn + mlp + norms) + (attn + mlp + norms) + 100 * 64 * 2 + 64);
    // Scan 4 * heads * dk * dv, convolution 2 * kernel * (2 kd + vd) (Megatron-Bridge gdn_layer_flops).
    const double gdn_fwd = 2 * (gdn_gemm + mlp) + 4 * 4 * 8 * 16 + 2 * 4 * (2 * kd + vd);
    const double attn_fwd = 2 * (attn_gemm + mlp) + 2 * 4 * (16 + 16) * 16.0;
    const double fwd = 3 * gdn_fwd + attn_fwd + 2 * 64 * 100;
    EXPECT_DOUBLE_EQ(flops_per_token(j.model, j.training, Recompute::none).model, 3 * fwd);
}

TEST(ModelCounts, MultiTokenPredictionIsCountedApart) {
    const Job j = job_with(R"(  model_type: deepseek_v3
  num_hidden_layers: 2
  hidden_size: 64
  num_attention_heads: 4
  intermediate_size: 96
  num_nextn_predict_layers: 1
  vocab_size: 100)",
                           16);
    const ParamCount p = count_params(j.model);
    const double layer = 4 * 64 * 64 + 3 * 64 * 96 + 2 * 64;
    EXPECT_DOUBLE_EQ(p.total, 2 * layer + 100 * 64 * 2 + 64);
    // A layer of the last kind, the 2h x h projection and three norms.
    EXPECT_DOUBLE_EQ(p.mtp, layer + 2 * 64 * 64 + 3 * 64);
    // FLOPs: the module's layer, projection and logits on top of the model's.
    const double layer_fwd = 2 * (4 * 64 * 64 + 3 * 64 * 96) + 4 * 64 * 16.0;
    const double logits = 2 * 64 * 100;
    EXPECT_DOUBLE_EQ(flops_per_token(j.model, j.training, Recompute::none).model,
                     3 * (2 * layer_fwd + logits + (layer_fwd + 2 * 2 * 64 * 64 + logits)));
}

TEST(LayerStack, KindsAreMergedAndCountedPerRange) {
    LayerKind a, b;
    a.attention.heads = b.attention.heads = 4;
    a.attention.kv_heads = b.attention.kv_heads = 4;
    a.attention.head_dim = b.attention.head_dim = 16;
    b.attention.window = 8;
    const auto s = make_layer_stack({a, a, b, a, b, b, a});
    ASSERT_EQ(s->kinds.size(), 2u);
    EXPECT_EQ(s->count[0], 4);
    EXPECT_EQ(s->count[1], 3);
    EXPECT_EQ(s->count_in(0, 0, 7), 4);
    EXPECT_EQ(s->count_in(1, 2, 6), 3);
    EXPECT_EQ(s->count_in(0, 2, 6), 1);
    EXPECT_EQ(s->count_in(1, 3, 3), 0);
    // A uniform model is one kind.
    const Model m = test::uniform_model(100'000, 64, 4, 4, 256, 100, MlpKind::gated, true);
    EXPECT_TRUE(m.uniform());
    EXPECT_EQ(m.kind_count(0), 100'000);
    // Copies share the stack.
    const Model copy = m;
    EXPECT_EQ(copy.stack.get(), m.stack.get());
}

}  // namespace
}  // namespace lostflops
