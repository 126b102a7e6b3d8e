// Two parts of a layer's work (workload/layer_work.h), apart from
// layer_work for readability:
// - parameters per GPU (layer_params): the layer's parameters
//   (workload/flops.cpp) laid out over TP as Megatron-LM splits them
//   (Shoeybi et al. 2019: projections over heads or width; MLA's down
//   projections, norms, output biases and the router duplicated), experts
//   over EP and ETP (Megatron-Core MoE parallel folding, Liu et al. 2025);
// - Megatron-Core's selective recompute modules (apply_recompute_modules;
//   transformer_config.py recompute_modules, transformer_layer.py,
//   multi_latent_attention.py, moe/experts.py, moe/moe_layer.py);
// - the stacks whose saved tensors are their own (apply_stack_memory): a
//   Hugging Face model in eager PyTorch, MaxText's named remat policies,
//   offloaded activations.
#include "workload/layer_work_parts.h"
#include "workload/eager_ledger.h"

#include <algorithm>
#include <bit>

#include "lostflops/fp8_recipe.h"
#include "workload/flops.h"

namespace lostflops {

namespace {

double matrices(MlpKind k) { return k == MlpKind::gated ? 3.0 : 2.0; }

}  // namespace

LayerTraits layer_traits(const LayerKind& k, const ParallelPlan& p) {
    const Attention& at = k.attention;
    const bool moe = k.is_moe();
    const Mlp& mlp = moe ? k.moe.expert : k.mlp;
    return {.mixer = &mixer_row(k.mixer),
            .attention = k.mixer == MixerKind::attention,
            .moe = moe,
            .has_mlp = moe || k.mlp.kind != MlpKind::none,
            .gated = mlp.kind == MlpKind::gated,
            .mlp = &mlp,
            .a = static_cast<double>(at.heads),
            .d = static_cast<double>(at.head_dim),
            .kv_local = std::max(1.0, at.kv_heads / static_cast<double>(p.tp))};
}

void layer_params(const Model& m, const LayerKind& k, const ParallelPlan& p, const LayerTraits& l,
                  double mixer_weights, LayerWork& w) {
    const double t = p.tp;
    const double h = static_cast<double>(m.hidden);
    const bool moe = l.moe, has_mlp = l.has_mlp, gated = l.gated;
    const Mlp& mlp = *l.mlp;
    // Weights per GPU: the mixer's (its kind's file, split over TP as
    // Megatron-LM splits it), the MLP's laid out over TP (projections split
    // over width, output biases and the router duplicated) and EP (routed experts).
    const double norms = k.norms * norm_params(m.norm, m.hidden);
    const double mlp_mats = matrices(mlp.kind);
    double dense_mlp = 0;
    w.expert_params = 0;
    if (moe) {
        const Moe& e = k.moe;
        const double etp = p.expert_tp();  // experts split over etp, not tp
        const double expert = mlp_mats * h * e.expert.ffn / etp +
                              (e.expert.bias ? ((gated ? 2.0 : 1.0) * e.expert.ffn / etp + h) : 0.0);
        w.expert_params = (static_cast<double>(e.experts) / p.ep) * expert;
        dense_mlp = h * e.experts + (e.router_bias ? e.experts : 0.0) + (e.score_bias ? e.experts : 0.0);
        if (e.shared_ffn > 0) dense_mlp += mlp_mats * h * e.shared_ffn / t + (e.shared_gate ? h : 0.0);
        // MoE without expert bias: (E/ep) * mats * h * f / etp.
        if (!e.expert.bias) w.expert_params = (static_cast<double>(e.experts) / p.ep) * mlp_mats * h * e.expert.ffn / etp;
    } else if (has_mlp) {
        dense_mlp = mlp_mats * h * k.mlp.ffn / t;
        if (k.mlp.bias) dense_mlp += (gated ? 2.0 : 1.0) * k.mlp.ffn / t + h;
    }
    w.params = mixer_weights + dense_mlp + norms;
    w.dense_tensors = w.gemm_count - (moe ? 2 : 0);
    w.expert_tensors = moe ? 2.0 * k.moe.experts / p.ep : 0;
}

void apply_recompute_modules(const LayerKind& k, const Training& tr, const ParallelPlan& p,
                             const RecomputeShapes& r, LayerWork& w) {
    const double el = r.el, wide = r.wide, act = r.act, tokens = r.tokens, sbh = r.sbh, sp_div = r.sp_div;
    const double blocks = r.blocks, t = r.t, rope_elems = r.rope_elems;
    const double ffn_elems = r.ffn_elems, permuted = r.permuted, held_moe_bytes = r.held_moe_bytes;
    const double scores = r.scores;
    const bool moe = r.moe, sp = r.sp, gated = r.gated;
    const int fc1_gemm = r.fc1_gemm, router_gemm = r.router_gemm;
    if (!p.recomputes(RecomputeModule::core_attn) && w.unfused) w.activation_bytes += scores / t;
    // Megatron-Core selective modules beyond the attention core
    // (transformer_config.py recompute_modules; transformer_layer.py,
    // multi_latent_attention.py, moe/experts.py, moe/moe_layer.py). Each
    // drops the tensors it would have saved and redoes its forward in
    // backward. "Output-discarding" modules (layernorm, mla_up_proj,
    // moe_act) keep their inputs, which the layer saves anyway; the
    // checkpointed ones (mlp, moe, shared_experts) keep their input, the
    // block's norm output, and drop what they saved inside.
    const double in_el = fp8_saves_fp8_inputs(tr) ? 1.0 : el;  // a saved GEMM input (fp8: its fp8 copy)
    const double redo_norm = 2 * act;                                 // one norm, read + write
    auto redo_gemm = [&w](int i) { if (i >= 0) w.recompute_gemms |= 1u << i; };
    const double moe_blocks_tp = blocks - (moe && sp && k.moe.shared_ffn == 0 ? 1.0 : 0.0);
    // layernorm: only where the norm is its own module. Megatron-Core's TE
    // layer spec (gpt_layer_specs.py) fuses the norm into the following
    // linear for softmax attention and the dense MLP (input_layernorm /
    // pre_mlp_layernorm = IdentityOp, TELayerNormColumnParallelLinear),
    // keeps it separate for MLA and before an MoE block; the norm output
    // (the next GEMM's saved input) is dropped and the norm redone.
    if (p.recomputes(RecomputeModule::layernorm)) {
        const double norms_redone = (r.norm_module ? 1.0 : 0.0) + (moe ? 1.0 : 0.0);
        w.activation_bytes -= norms_redone * in_el * sbh / sp_div;
        w.recompute_mem_bytes += norms_redone * redo_norm;
        w.recompute_kernels += norms_redone;
    }
    // mla_up_proj: the up projections its kind names (MixerOnRank::up_proj_*)
    // and the rotary embedding; what they saved dropped.
    if (r.up_proj_module && p.recomputes(RecomputeModule::mla_up_proj)) {
        w.recompute_gemms |= r.up_proj_gemms;
        w.activation_bytes -= r.up_proj_bytes;
        if (rope_elems > 0) w.recompute_mem_bytes += 2 * tokens * rope_elems * el, w.recompute_kernels += 1;
    }
    const double routed = moe ? tokens * static_cast<double>(k.moe.expert.ffn) * k.moe.top_k : 0;
    const double shared = moe ? tokens * static_cast<double>(k.moe.shared_ffn) : 0;
    const double ffn_saved = (gated ? 6.0 : 4.0) * wide - (fp8_saves_fp8_inputs(tr) ? 1.0 : 0.0);  // per element, /t
    const double act_fn = (gated ? 3.0 : 2.0) * el;  // the activation's bytes per element
    if (moe && p.recomputes(RecomputeModule::moe)) {
        // The whole MoE block: router, permutation, dispatch and combine,
        // experts and shared experts.
        for (int i = router_gemm; i < w.gemm_count; ++i) redo_gemm(i);
        w.activation_bytes -= ffn_saved * (routed + shared) / t + permuted / sp_div;
        w.recompute_mem_bytes += act_fn * (routed + shared) / t + held_moe_bytes;
        w.recompute_kernels += 1 + 3 + 4;
        w.recompute_dispatch = true;
        if (k.moe.shared_ffn > 0 && moe_blocks_tp > 0) w.recompute_tp_share = 1 / moe_blocks_tp;
    } else if (moe) {
        // moe_act: the experts' activation function (its output, fc2's input, dropped).
        if (p.recomputes(RecomputeModule::moe_act)) {
            w.activation_bytes -= in_el * routed / t;
            w.recompute_mem_bytes += act_fn * routed / t;
            w.recompute_kernels += 1;
        }
        // shared_experts: the shared experts' fused MLP.
        if (k.moe.shared_ffn > 0 && p.recomputes(RecomputeModule::shared_experts)) {
            redo_gemm(router_gemm + 3);
            redo_gemm(router_gemm + 4);
            w.activation_bytes -= ffn_saved * shared / t;
            w.recompute_mem_bytes += act_fn * shared / t;
            w.recompute_kernels += 1;
            if (moe_blocks_tp > 0) w.recompute_tp_share = 1 / moe_blocks_tp;
        }
    }
    // mlp: the dense MLP, Megatron-Core's TELayerNormMLP with its fused
    // norm (dense layers only, transformer_layer.py "if not
    // self.is_moe_layer"): fc1, activation, fc2 and their collectives;
    // the norm output and the FFN tensors dropped.
    if (!moe && fc1_gemm >= 0 && p.recomputes(RecomputeModule::mlp)) {
        redo_gemm(fc1_gemm);
        redo_gemm(fc1_gemm + 1);
        w.activation_bytes -= ffn_saved * ffn_elems / t + in_el * sbh / sp_div;
        w.recompute_mem_bytes += redo_norm + act_fn * ffn_elems / t;
        w.recompute_kernels += 2;
        if (blocks > 0) w.recompute_tp_share = 1 / blocks;
    }
    w.recompute_kernels += std::popcount(w.recompute_gemms);  // one launch per GEMM redone
}

void apply_stack_memory(const Model& m, const LayerKind& k, const Training& tr, const ParallelPlan& p,
                        const StackShapes& s, LayerWork& w) {
    // A Hugging Face model in eager PyTorch: its own ledger of saved tensors
    // (workload/eager_ledger.h); gradient checkpointing keeps each layer's input.
    if (tr.framework == Framework::hf) {
        const EagerLayerLedger led = eager_layer_ledger(m, k, tr, p);
        w.activation_bytes_full = led.total() * s.tokens;
        w.checkpoint_bytes = led.input_bytes_per_token * s.tokens;
        w.activation_bytes = p.recompute == Recompute::full ? w.checkpoint_bytes : w.activation_bytes_full;
        // Autocast caches a bf16 copy of each fp32 weight its GEMMs take (the
        // experts of transformers' MoE run in fp32: no copy; torch.compile
        // recomputes the casts).
        if (eager_autocast(tr, p) && !tr.compile) w.weight_copy_bytes = 2.0 * w.params;
    }
    // MaxText's named remat policy (a TPU job, ParallelPlan::remat_policy):
    // the layer's input (the scan's carry) and the named matmul outputs the
    // policy saves (decoders.py get_remat_policy), each sharded as the
    // activations are; everything else is recomputed in backward.
    if (tr.xla && p.remat_policy != RematPolicy::unset && p.recompute == Recompute::selective && s.attention &&
        s.has_mlp) {
        const double hs = s.tokens * s.h * s.el / s.sp_div;                  // an h-wide output (input, out, mlpwo)
        const double qkv = s.tokens * (s.a / s.t + 2 * s.kv_local) * s.d * s.el;  // kv_local: per rank already
        const double context = s.tokens * s.a * s.dv * s.el / s.t;
        const double wi = s.tokens * s.ffn_width * s.el / s.t;  // mlpwi_0 or mlpwi_1
        double saved = hs;
        switch (p.remat_policy) {
            case RematPolicy::minimal: saved += qkv + hs + (s.gated ? 2 : 1) * wi + hs; break;
            case RematPolicy::save_dot_with_context_except_mlp: saved += qkv + context + hs; break;
            case RematPolicy::save_dot_except_mlpwi: saved += qkv + hs + hs; break;
            case RematPolicy::save_dot_except_mlp: saved += qkv + hs; break;
            case RematPolicy::save_qkv_proj: saved += qkv; break;
            case RematPolicy::save_out_proj: saved += hs; break;
            case RematPolicy::unset: break;
        }
        w.activation_bytes = saved;
    }
    // Offloaded activations (ParallelPlan::offload_activations): the device
    // keeps the layer's input; what it saved goes to host memory
    // (estimate/memory.cpp adds the layer in transit).
    if (p.offload_activations && p.recompute != Recompute::full)
        w.activation_bytes = std::min(w.activation_bytes, w.checkpoint_bytes);
}

// A model's layer kinds (layer_work.h stack_work) and their mean weighted by
// layer count (mean_layer_work).
void stack_work(const Model& m, const Training& t, const ParallelPlan& p, std::vector<LayerWork>& out) {
    out.resize(m.kinds().size());
    for (size_t k = 0; k < out.size(); ++k) out[k] = layer_work(m, m.kinds()[k], t, p);
}

LayerWork mean_layer_work(const Model& m, std::span<const LayerWork> works) {
    if (works.size() == 1) return works[0];
    // The fields the ZeRO-3 engine, memory and the roofline read, which add over layers.
    static constexpr double LayerWork::*kAdditive[] = {
        &LayerWork::attention_flops_fwd, &LayerWork::attention_masked_flops_fwd,
        &LayerWork::mem_bytes_fwd,    &LayerWork::mem_bytes_bwd,
        &LayerWork::mem_bytes_attention_fwd, &LayerWork::kernels_fwd, &LayerWork::kernels_bwd,
        &LayerWork::activation_bytes, &LayerWork::activation_bytes_full, &LayerWork::checkpoint_bytes,
        &LayerWork::params,           &LayerWork::expert_params,     &LayerWork::dense_tensors,
        &LayerWork::expert_tensors,   &LayerWork::weight_copy_bytes};
    LayerWork mean;
    mean.unfused = works[0].unfused;
    mean.scores = works[0].scores;
    mean.values = works[0].values;
    mean.tp_sequence_parallel = works[0].tp_sequence_parallel;
    for (size_t k = 0; k < works.size(); ++k) {
        const double share = static_cast<double>(m.kind_count(static_cast<int>(k))) / m.layers;
        for (double LayerWork::*f : kAdditive) mean.*f += share * works[k].*f;
        mean.eager_fwd.add_scaled(works[k].eager_fwd, share);
        mean.eager_bwd.add_scaled(works[k].eager_bwd, share);
    }
    return mean;
}

}  // namespace lostflops
