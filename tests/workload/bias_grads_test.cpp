// The biases of an eager PyTorch layer (workload/bias_grads.cpp): each
// biased linear's gradient is reduced over the tokens by a kernel of its
// own, and under autocast each fp32 bias is cast both ways; Megatron-Core's
// layers are left as their tables were fitted. By hand on Llama-3.2-1B's
// layer (h 2,048, 32 heads and 8 key/value heads of 64, gated MLP 8,192)
// with attention_bias and mlp_bias, 2 x 1,024 tokens, on one GPU and over
// tensor parallelism, and on GPT-2 XL's Conv1D layer.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "lostflops/job.h"
#include "test_util.h"
#include "workload/host_ops.h"
#include "workload/layer_work.h"

namespace lostflops {
namespace {

LayerWork work_of(const Job& j) { return layer_work(j.model, j.training, j.plan); }

// Biased outputs a token: q, k, v (32 + 2 x 8) x 64 = 3,072, o 2,048, gate
// and up 2 x 8,192, down 2,048 = 23,552 in 7 linears; as many bias
// parameters.
constexpr double kTokens = 2 * 1024, kBiasedOut = 3072 + 2048 + 2 * 8192 + 2048;

TEST(BiasGrads, EagerLayerReducesEachBiasGradient) {
    const std::vector<std::string> biased = {"model.attention_bias=true", "model.mlp_bias=true"};
    const Job plain = test::h200_llama1b(1024), bias = test::h200_llama1b(1024, biased);
    const LayerWork p = work_of(plain), b = work_of(bias);
    // Autocast: the gradient reductions read 2 bytes an output element
    // (96,468,992 bytes), and autocast's casts of the biases move 6 bytes a
    // parameter each way, as the weights' do; a kernel a bias forward (its
    // cast), two backward (the reduction and the cast back).
    EXPECT_NEAR(b.mem_bytes_fwd - p.mem_bytes_fwd, 6 * kBiasedOut, 1);
    EXPECT_NEAR(b.mem_bytes_bwd - p.mem_bytes_bwd, kTokens * kBiasedOut * 2 + 6 * kBiasedOut, 1);
    EXPECT_DOUBLE_EQ(b.kernels_fwd - p.kernels_fwd, 7);
    EXPECT_DOUBLE_EQ(b.kernels_bwd - p.kernels_bwd, 14);
    // The host: an AccumulateGrad node a bias tensor and a ToCopyBackward0
    // node a bias's cast, beside the ratio's 90 / 52 nodes a forward
    // operator (biases add none).
    const HostOps hp = host_ops(plain.model, plain.training, plain.plan);
    const HostOps hb = host_ops(bias.model, bias.training, bias.plan);
    EXPECT_DOUBLE_EQ(hb.layer_fwd, hp.layer_fwd);
    EXPECT_DOUBLE_EQ(hb.layer_bwd - hp.layer_bwd, 14);
    // FSDP2's bf16 parameters: no casts, the AccumulateGrad nodes.
    const Job plain3 = test::h200_llama1b(1024, {"parallel.zero=3"});
    const Job bias3 = test::h200_llama1b(1024, {"parallel.zero=3", "model.attention_bias=true", "model.mlp_bias=true"});
    EXPECT_DOUBLE_EQ(host_ops(bias3.model, bias3.training, bias3.plan).layer_bwd -
                         host_ops(plain3.model, plain3.training, plain3.plan).layer_bwd,
                     7);

    // torchtitan's bf16 model (framework fsdp): the reductions, no casts.
    const std::vector<std::string> fsdp = {"training.framework=fsdp", "parallel.zero=3"};
    std::vector<std::string> fsdp_biased = fsdp;
    fsdp_biased.insert(fsdp_biased.end(), biased.begin(), biased.end());
    const LayerWork fp = work_of(test::h200_llama1b(1024, fsdp)), fb = work_of(test::h200_llama1b(1024, fsdp_biased));
    EXPECT_NEAR(fb.mem_bytes_bwd - fp.mem_bytes_bwd, kTokens * kBiasedOut * 2, 1);
    EXPECT_DOUBLE_EQ(fb.kernels_bwd - fp.kernels_bwd, 7);
    EXPECT_DOUBLE_EQ(fb.kernels_fwd - fp.kernels_fwd, 0);

    // Megatron-Core: left as its tables were fitted (bias_grads.cpp).
    const std::vector<std::string> mcore = {"training.framework=megatron-core"};
    std::vector<std::string> mcore_biased = mcore;
    mcore_biased.insert(mcore_biased.end(), biased.begin(), biased.end());
    const LayerWork mp = work_of(test::h200_llama1b(1024, mcore)), mb = work_of(test::h200_llama1b(1024, mcore_biased));
    EXPECT_DOUBLE_EQ(mb.mem_bytes_bwd, mp.mem_bytes_bwd);
    EXPECT_DOUBLE_EQ(mb.kernels_bwd, mp.kernels_bwd);
}

TEST(BiasGrads, SplitOverTensorParallel) {
    // torchtitan's TP over 2 GPUs: q, k, v and gate, up are column-parallel
    // (their outputs and biases split: (48 x 64 + 2 x 8,192) / 2 = 9,728), o
    // and down row-parallel (each rank adds its bias to the whole h = 2,048
    // output before the reduction): 2,048 x (9,728 + 2 x 2,048) x 2 bytes.
    const std::vector<std::string> tp2 = {"training.framework=fsdp", "cluster.num_gpus=2", "cluster.gpus_per_node=2",
                                          "parallel.tp=2"};
    std::vector<std::string> tp2_biased = tp2;
    tp2_biased.insert(tp2_biased.end(), {"model.attention_bias=true", "model.mlp_bias=true"});
    const LayerWork p = work_of(test::h200_llama1b(1024, tp2)), b = work_of(test::h200_llama1b(1024, tp2_biased));
    EXPECT_NEAR(b.mem_bytes_bwd - p.mem_bytes_bwd, kTokens * (9728 + 2 * 2048) * 2, 1);
    EXPECT_DOUBLE_EQ(b.kernels_bwd - p.kernels_bwd, 7);
}

TEST(BiasGrads, Gpt2Conv1DLayer) {
    // GPT-2 XL's layer (the H200 table's row): Conv1D c_attn (one fused q, k,
    // v bias of 3 x 1,600), c_proj 1,600, c_fc 6,400, c_proj 1,600 = 14,400
    // biased outputs in 4 linears; 8 x 1,024 tokens under autocast; against
    // the same layer with enable_bias false.
    const auto gpt2 = [](bool bias) {
        return parse_job(test::small_job_text(), "gpt2.yaml",
                         {"model.model_type=gpt2", "model.num_hidden_layers=4", "model.hidden_size=1600", "model.num_attention_heads=25",
                          "model.vocab_size=50257", "model.enable_bias=" + std::string(bias ? "true" : "false"),
                          "cluster.gpu=h200-sxm", "cluster.num_gpus=1", "cluster.gpus_per_node=1",
                          "training.seq_length=1024", "training.global_batch_size=8", "training.micro_batch_size=8",
                          "training.framework=hf", "training.optimizer_kernel=fused", "parallel.tp=1", "parallel.pp=1",
                          "parallel.zero=0", "parallel.recompute=none"});
    };
    const LayerWork p = work_of(gpt2(false)), b = work_of(gpt2(true));
    EXPECT_NEAR(b.mem_bytes_bwd - p.mem_bytes_bwd, 8192.0 * 14400 * 2 + 6 * 14400, 1);
    EXPECT_DOUBLE_EQ(b.kernels_fwd - p.kernels_fwd, 4);
    EXPECT_DOUBLE_EQ(b.kernels_bwd - p.kernels_bwd, 8);
}

TEST(BiasGrads, CompiledAddsNone) {
    // torch.compile keeps its own counts (host_ops_hf.cpp hf_compiled_host_ops).
    const Job plain = test::h200_llama1b(1024, {"training.compile=true"});
    const Job bias = test::h200_llama1b(1024, {"training.compile=true", "model.attention_bias=true"});
    EXPECT_DOUBLE_EQ(work_of(bias).kernels_bwd, work_of(plain).kernels_bwd);
}

}  // namespace
}  // namespace lostflops
