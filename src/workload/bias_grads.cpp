// The biases of a layer's linear modules in eager PyTorch (frameworks fsdp,
// deepspeed and hf, not compiled), over the stack's counts (layer_work.cpp),
// which give a bias neither bytes nor a kernel of its own. Megatron's are
// left so, as its tables were fitted: Transformer Engine adds linear_qkv's
// bias in the GEMM's epilogue and reduces its gradient in the BGRADB one,
// but linear_proj, linear_fc1 and linear_fc2 (skip_bias_add) hand theirs to
// the bias-GeLU / bias-SwiGLU and bias-dropout-add fusions, whose backward
// reduce the gradient with a kernel too; not priced apart.
//
// Forward, nn.Linear and GPT-2's Conv1D reach aten::addmm with a 1-D bias
// (aten/src/ATen/native/Linear.cpp: a contiguous 3-D input is flattened to
// 2-D), which cuBLASLt's bias epilogue adds in the GEMM
// (aten/src/ATen/native/cuda/Blas.cpp addmm_out_cuda_impl): no bytes of its
// own. Backward, AddmmBackward0 hands the bias the [tokens, out] output
// gradient (tools/autograd/derivatives.yaml addmm: self: grad * beta), and
// the autograd engine reduces it to the bias's shape (torch/csrc/autograd/
// engine.cpp validate_outputs: at::sum_to): one reduction kernel a biased
// linear that reads the output gradient once, `el` bytes an element (its
// [out] result is negligible). Under autocast each fp32 bias is cast to
// bf16 at every forward as the weights are (their bytes are in the 6 per
// parameter of eager_traffic.cpp; not its kernel), and its gradient cast
// back by ToCopyBackward0: a kernel each way and one autograd node.
//
// Routed experts' biases (gpt-oss) are left to the experts' own counts.
#include "workload/layer_work_parts.h"

namespace lostflops {

EagerBiases eager_biases(const LayerKind& k, double t) {
    EagerBiases b;
    if (k.mixer == MixerKind::attention) {
        const Attention& a = k.attention;
        if (a.qkv_bias) {
            b.linears += a.fused_qkv ? 1 : 3;
            b.out_width += static_cast<double>(a.heads + 2 * a.kv_heads) * static_cast<double>(a.head_dim) / t;
        }
        if (a.out_bias) {  // the output projection writes h
            b.linears += 1;
            b.hidden_outputs += 1;
        }
    }
    const Mlp& m = k.mlp;
    if (!k.is_moe() && m.kind != MlpKind::none && m.bias) {
        const double f = static_cast<double>(m.ffn) / t;
        const bool gated = m.kind == MlpKind::gated;
        b.linears += gated ? (m.fused_gate_up ? 2 : 3) : 2;
        b.out_width += gated ? 2 * f : f;
        b.hidden_outputs += 1;  // the down projection writes h
    }
    return b;
}

void add_eager_bias_grads(const LayerKind& k, double tokens, double h, double t, double el, bool autocast,
                          LayerWork& w) {
    const EagerBiases b = eager_biases(k, t);
    if (b.linears == 0) return;
    w.mem_bytes_bwd += tokens * (b.out_width + b.hidden_outputs * h) * el;
    w.kernels_bwd += b.linears;
    if (autocast) {
        w.kernels_fwd += b.linears;
        w.kernels_bwd += b.linears;
    }
}

}  // namespace lostflops
