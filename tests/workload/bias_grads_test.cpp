// The biases of an eager PyTorch layer (workload/bias_grads.cpp): each
// biased linear's gradient is reduced over the tokens by a kernel of its
// own, and under autocast each fp32 bias is cast both ways; Megatron-Core's
// Transformer Engine linears fuse both into their GEMMs. By hand on
// Llama-3.2-1B's layer (h 2,048, 32 heads and 8 key/value heads of 64, gated
// MLP 8,192) with attention_bias and mlp_bias, 2 x 1,024 tokens.
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
    // The host: a ToCopyBackward0 node a bias, and an AccumulateGrad a bias
    // tensor (hf_layer_param_tensors, the ratio's 90 / 52 nodes).
    const HostOps hp = host_ops(plain.model, plain.training, plain.plan);
    const HostOps hb = host_ops(bias.model, bias.training, bias.plan);
    EXPECT_DOUBLE_EQ(hb.layer_bwd - hp.layer_bwd, 7);

    // torchtitan's bf16 model (framework fsdp): the reductions, no casts.
    const std::vector<std::string> fsdp = {"training.framework=fsdp", "parallel.zero=3"};
    std::vector<std::string> fsdp_biased = fsdp;
    fsdp_biased.insert(fsdp_biased.end(), biased.begin(), biased.end());
    const LayerWork fp = work_of(test::h200_llama1b(1024, fsdp)), fb = work_of(test::h200_llama1b(1024, fsdp_biased));
    EXPECT_NEAR(fb.mem_bytes_bwd - fp.mem_bytes_bwd, kTokens * kBiasedOut * 2, 1);
    EXPECT_DOUBLE_EQ(fb.kernels_bwd - fp.kernels_bwd, 7);
    EXPECT_DOUBLE_EQ(fb.kernels_fwd - fp.kernels_fwd, 0);

    // Megatron-Core (Transformer Engine): fused both ways, nothing added.
    const std::vector<std::string> mcore = {"training.framework=megatron-core"};
    std::vector<std::string> mcore_biased = mcore;
    mcore_biased.insert(mcore_biased.end(), biased.begin(), biased.end());
    const LayerWork mp = work_of(test::h200_llama1b(1024, mcore)), mb = work_of(test::h200_llama1b(1024, mcore_biased));
    EXPECT_DOUBLE_EQ(mb.mem_bytes_bwd, mp.mem_bytes_bwd);
    EXPECT_DOUBLE_EQ(mb.kernels_bwd, mp.kernels_bwd);
}

TEST(BiasGrads, CompiledAddsNone) {
    // torch.compile keeps its own counts (host_ops_hf.cpp hf_compiled_host_ops).
    const Job plain = test::h200_llama1b(1024, {"training.compile=true"});
    const Job bias = test::h200_llama1b(1024, {"training.compile=true", "model.attention_bias=true"});
    EXPECT_DOUBLE_EQ(work_of(bias).kernels_bwd, work_of(plain).kernels_bwd);
}

}  // namespace
}  // namespace lostflops
