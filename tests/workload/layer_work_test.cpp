// Activation memory and weights per GPU of one layer of each kind, against
// the stored tensors counted by hand (workload/layer_work.cpp's header lists
// them): MoE with shared experts, MLA, Mamba-2; and the TP layout of the
// weights (MLA's down projections duplicated, Mamba-2's projections split).
#include <gtest/gtest.h>

#include "lostflops/job.h"
#include "workload/flops.h"
#include "workload/layer_work.h"

namespace lostflops {
namespace {

Job job_with(const std::string& model_yaml, const std::string& parallel = "{}") {
    return parse_job("model:\n" + model_yaml +
                         "\ncluster: {gpu: h100-sxm, num_gpus: 2}\n"
                         "training: {seq_length: 1024, global_batch_size: 2, micro_batch_size: 1}\n"
                         "parallel: " + parallel + "\n",
                     "job.yaml");
}

TEST(LayerWorkMemory, MoeWithSharedExperts) {
    // h 256, 4 heads of 64, 8 experts of 128, top 2, one shared expert of 128.
    const std::string model = R"(  model_type: deepseek_v3
  num_hidden_layers: 1
  hidden_size: 256
  num_attention_heads: 4
  n_routed_experts: 8
  num_experts_per_tok: 2
  moe_intermediate_size: 128
  n_shared_experts: 1
  vocab_size: 1000)";
    const Job j = job_with(model);
    const LayerWork w = layer_work(j.model, j.model.kind(0), j.training, j.plan);
    const double t = 1024, h = 256;                      // tokens of a micro-batch, hidden
    const double inputs = 2 * (2 * t * h);               // two blocks: norm inputs
    const double blocks_in = 2 * (2 * t * h);            // and block inputs
    const double q_out = 2 * t * 256 + 2 * t * 256;      // Q and the output projection's input
    const double kv = 4 * t * 4 * 64;                    // K and V
    const double ffn = 6 * t * (2 * 128 + 128);          // gate, up, product: top-2 experts and the shared one
    // The experts' fc1 inputs, one per routed copy: Megatron-Core applies the
    // routing probabilities in the experts' activation, so their outputs are
    // not kept for the probabilities' gradient (moe/experts.py).
    const double permuted = 2 * t * 2 * h;
    EXPECT_DOUBLE_EQ(w.activation_bytes, inputs + blocks_in + q_out + kv + ffn + permuted);
    // Where unpermute scales by the probabilities (DeepSpeed, torchtitan,
    // legacy Megatron-LM) the experts' outputs are kept too.
    const Job ds = parse_job("model:\n" + model + "\ncluster: {gpu: h100-sxm, num_gpus: 2}\n"
                             "training: {seq_length: 1024, global_batch_size: 2, micro_batch_size: 1, framework: deepspeed}\n"
                             "parallel: {}\n",
                             "job.yaml");
    EXPECT_DOUBLE_EQ(layer_work(ds.model, ds.model.kind(0), ds.training, ds.plan).activation_bytes - w.activation_bytes,
                     2 * t * 2 * h);
    // Weights: attention, router and shared expert dense; 8 experts apart.
    EXPECT_DOUBLE_EQ(w.params, 4 * h * h + h * 8 + 3 * h * 128 + 2 * h);
    EXPECT_DOUBLE_EQ(w.expert_params, 8 * 3 * h * 128);
}

TEST(LayerWorkMemory, MultiLatentAttentionDuplicatesItsDownProjectionsOverTp) {
    const std::string mla = R"(  num_hidden_layers: 1
  hidden_size: 256
  num_attention_heads: 4
  q_lora_rank: 64
  kv_lora_rank: 32
  qk_nope_head_dim: 32
  qk_rope_head_dim: 16
  v_head_dim: 32
  intermediate_size: 512
  hidden_act: silu
  vocab_size: 1000)";
    const Job one = job_with(mla), two = job_with(mla, "{tp: 2}");
    const LayerWork w1 = layer_work(one.model, one.model.kind(0), one.training, one.plan);
    const LayerWork w2 = layer_work(two.model, two.model.kind(0), two.training, two.plan);
    const double t = 1024, h = 256;
    // Activations (tp 1): block inputs, the latents and their norm inputs,
    // Q and K (qk 48), V and the output projection's input (v 32), the MLP.
    const double act = 2 * (2 * 2 * t * h) + 2 * t * (2 * 64 + 2 * 32 + 16) + 2 * t * 4 * (2 * 48 + 2 * 32) +
                       6 * t * 512;
    EXPECT_DOUBLE_EQ(w1.activation_bytes, act);
    // Weights: down projections and latent norms on every TP rank, the rest halved.
    const double down = h * 64 + 64 + h * (32 + 16) + 32;
    const double rest = 64 * 4 * 48 + 32 * 4 * (32 + 32) + 4 * 32 * h;
    EXPECT_DOUBLE_EQ(w1.params, down + rest + 3 * h * 512 + 2 * h);
    EXPECT_DOUBLE_EQ(w2.params, down + rest / 2 + 3 * h * 512 / 2 + 2 * h);
    // The model's count is the same layer's (tp 1).
    EXPECT_DOUBLE_EQ(kind_counts(one.model.kind(0), 256, NormKind::rms).params, w1.params);
}

TEST(LayerWorkMemory, Mamba2KeepsItsProjectionsAndChunkStates) {
    // One Mamba-2 block: 8 heads of 64 (d_inner 512), 2 groups, state 32, chunk 128.
    const Job j = job_with(R"(  model_type: nemotron_h
  num_hidden_layers: 1
  hybrid_override_pattern: "M"
  hidden_size: 256
  num_attention_heads: 4
  intermediate_size: 512
  mamba_num_heads: 8
  mamba_head_dim: 64
  n_groups: 2
  ssm_state_size: 32
  chunk_size: 128
  vocab_size: 1000)",
                           "{tp: 2}");
    const LayerWork w = layer_work(j.model, j.model.kind(0), j.training, j.plan);
    const double t = 1024, h = 256, di = 512, gn = 64, tp = 2;
    // One block (its norm and input replicated without SP); per TP rank the
    // in_proj outputs, the convolution's, the scan output and the norm's, and
    // the fp32 state at each of 1024 / 128 chunk boundaries.
    const double replicated = 2 * t * h + 2 * t * h;
    const double split = 2 * t * ((2 * di + 2 * gn + 8) + (di + 2 * gn) + 2 * di);
    const double states = (t / 128) * (8 / tp) * 64 * 32 * 4;
    EXPECT_DOUBLE_EQ(w.activation_bytes, replicated + split / tp + states);
    EXPECT_EQ(w.gemm_count, 2);
    EXPECT_DOUBLE_EQ(w.gemms[0].n, (2 * di + 2 * gn + 8) / tp);
    // Scan FLOPs on this rank: 7 * d_inner * state per token (Megatron-LM), split over TP.
    EXPECT_DOUBLE_EQ(w.attention_flops_fwd, t * 7 * di * 32 / tp);
    EXPECT_FALSE(w.selective_core);
    EXPECT_EQ(w.tp_collectives_fwd, 1);  // one block: one all-reduce
}

}  // namespace
}  // namespace lostflops
