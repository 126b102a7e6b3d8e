// A model's layers as Megatron-LM flags (megatron_export.cpp), the inverse of
// megatron_model.cpp and megatron_layers.cpp: the attention of the first
// attention layer (--kv-channels when its head dim is not hidden / heads;
// multi-latent attention's ranks and head dims), the dense MLP and the
// experts of the first layers that have them, --hidden-dropout 0 where the
// price has no block dropout, rotary (--position-embedding-type rope,
// --rotary-percent) where the model rotates, and per layer what differs:
// the MoE layers (--moe-layer-freq as a 0/1 list), sliding windows
// (--window-size W-1,0 and --window-attn-skip-freq, 1 where windowed),
// Gated DeltaNet layers (--linear-attention-freq, 1 where linear), or a
// hybrid stack of one-part layers (--hybrid-layer-pattern M * - E with the
// Mamba-2 sizes). Lists are quoted for the shell. What a Megatron flag cannot
// say (a window size that differs between layers, a layer of attention and
// an MLP inside a hybrid stack, lightning attention) is noted.
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "interop/megatron_export_model.h"
#include "job/layer_kinds.h"

namespace lostflops::interop {

namespace {

struct Flags {
    std::vector<std::string>& out;
    void add(const std::string& flag, const std::string& value = "") { out.push_back(value.empty() ? flag : flag + " " + value); }
    void add(const std::string& flag, int64_t value) { add(flag, std::to_string(value)); }
};

template <typename Pred>
std::optional<int> first_layer(const Model& m, Pred pred) {
    for (int i = 0; i < m.layers; ++i)
        if (pred(m.layer(i))) return i;
    return std::nullopt;
}

// What Megatron-LM's flags make of a layer's mixer (job/layer_kinds.h MixerRow::megatron).
MegatronMixer megatron(const LayerKind& k) { return mixer_row(k.mixer).megatron; }
// Launched as itself (no note).
bool as_itself(const LayerKind& k) { return mixer_row(k.mixer).megatron_note == nullptr; }

template <typename Pred>
std::string per_layer(const Model& m, Pred pred) {
    std::string s = "'[";
    for (int i = 0; i < m.layers; ++i) s += std::string(i ? "," : "") + (pred(m.layer(i)) ? "1" : "0");
    return s + "]'";
}

}  // namespace

void megatron_model_flags(const Model& m, std::vector<std::string>& out, std::vector<ImportNote>& notes) {
    Flags l{out};
    const auto note = [&](const std::string& what) { notes.push_back({NoteKind::not_modelled, "model", what}); };
    const bool hybrid = first_layer(m, [](const LayerKind& k) {
                            return megatron(k) == MegatronMixer::mamba || megatron(k) == MegatronMixer::none;
                        }).has_value();
    for (const MixerRow& row : kMixerRows)  // the kinds Megatron writes as another, in the table's order
        if (row.megatron_note && first_layer(m, [&row](const LayerKind& k) { return k.mixer == row.kind; }))
            note(row.megatron_note);
    if (hybrid) {
        std::string pattern;
        for (int i = 0; i < m.layers; ++i) {
            const LayerKind& k = m.layer(i);
            const bool ffn = k.is_moe() || k.mlp.kind != MlpKind::none;
            const bool ssm = megatron(k) == MegatronMixer::mamba;
            char c = k.is_moe() ? 'E' : k.mlp.kind != MlpKind::none ? '-' : ssm ? 'M' : '*';
            if (k.mixer != MixerKind::none && ffn) {
                note("layer " + std::to_string(i) + " has a token mixer and an MLP: a hybrid pattern gives each layer one");
                c = ssm ? 'M' : '*';
            }
            pattern += c;
        }
        l.add("--hybrid-layer-pattern", "'" + pattern + "'");
    } else {
        l.add("--num-layers", m.layers);
    }
    l.add("--hidden-size", m.hidden);
    const auto dense = first_layer(m, [](const LayerKind& k) { return !k.is_moe() && k.mlp.kind != MlpKind::none; });
    const auto moe = first_layer(m, [](const LayerKind& k) { return k.is_moe(); });
    const Mlp& mlp = dense ? m.layer(*dense).mlp : moe ? m.layer(*moe).moe.expert : m.layer(0).mlp;
    if (mlp.ffn > 0) l.add("--ffn-hidden-size", mlp.ffn);
    const auto attn = first_layer(m, [](const LayerKind& k) { return k.has_attention(); });
    if (attn) {
        const Attention& a = m.layer(*attn).attention;
        l.add("--num-attention-heads", a.heads);
        if (megatron(m.layer(*attn)) == MegatronMixer::mla) {
            l.add("--multi-latent-attention");
            if (a.q_lora_rank > 0) l.add("--q-lora-rank", a.q_lora_rank);
            l.add("--kv-lora-rank", a.kv_lora_rank);
            l.add("--qk-head-dim", a.head_dim - a.qk_rope_head_dim);
            l.add("--qk-pos-emb-head-dim", a.qk_rope_head_dim);
            l.add("--v-head-dim", a.v_head_dim);
        } else {
            if (a.kv_heads != a.heads) {
                l.add("--group-query-attention");
                l.add("--num-query-groups", a.kv_heads);
            }
            if (a.head_dim * a.heads != m.hidden) l.add("--kv-channels", a.head_dim);
        }
        // Rotary where the model rotates (Megatron's default is learned
        // absolute positions): its share of each head as --rotary-percent;
        // none where the model says it rotates nothing (a gated layer read
        // back without it would rotate all).
        if (const double rotary = m.rotary_in(m.layer(*attn)); rotary > 0 && !hybrid) {
            l.add("--position-embedding-type", "rope");
            if (rotary < 1) l.add("--rotary-percent", fmt::format("{}", rotary));
        } else if (m.rotary_share == 0 && m.positions == 0 && !hybrid) {
            l.add("--position-embedding-type", "none");
        }
        if (a.qk_norm) l.add("--qk-layernorm");
        if (a.output_gate) l.add("--attention-output-gate");
        if (a.qkv_bias) l.add("--add-qkv-bias");
    } else {
        // Megatron needs heads even for a stack without attention.
        l.add("--num-attention-heads", 1);
    }
    if (mlp.kind == MlpKind::gated) l.add(mlp.act == Activation::quick_gelu ? "--quick-geglu" : "--swiglu");
    if (mlp.kind == MlpKind::dense && mlp.act == Activation::relu2) l.add("--squared-relu");
    // arguments.py: --swiglu, --quick-geglu, --squared-relu, else GELU; no plain ReLU.
    if (mlp.kind == MlpKind::dense && mlp.act == Activation::relu)
        note("plain ReLU has no Megatron flag (only --squared-relu, --swiglu, --quick-geglu or GELU): written as GELU");
    // Megatron's --hidden-dropout defaults to 0.1. The price has no block
    // dropout where the model's is off or no layer has a two-matrix MLP
    // (workload/layer_work.cpp: gated and squared-ReLU MLPs come from code
    // without it): the launch is told 0, or it would save masks and run
    // dropout kernels the price does not have.
    const bool dropout_priced = m.dropout_on() && first_layer(m, [](const LayerKind& k) {
                                                      const Mlp& x = k.is_moe() ? k.moe.expert : k.mlp;
                                                      return x.kind == MlpKind::dense && x.act != Activation::relu2;
                                                  }).has_value();
    if (!dropout_priced) l.add("--hidden-dropout", "0");
    if (!m.tied_embeddings) l.add("--untie-embeddings-and-output-weights");
    if (moe) {
        const Moe& e = m.layer(*moe).moe;
        l.add("--num-experts", e.experts);
        l.add("--moe-router-topk", e.top_k);
        l.add("--moe-ffn-hidden-size", e.expert.ffn);
        if (e.shared_ffn > 0) l.add("--moe-shared-expert-intermediate-size", e.shared_ffn);
        if (e.shared_gate) l.add("--moe-shared-expert-gate");
        if (e.score_bias) l.add("--moe-router-enable-expert-bias");
        if (!hybrid && dense) l.add("--moe-layer-freq", per_layer(m, [](const LayerKind& k) { return k.is_moe(); }));
    }
    if (m.mtp_layers > 0) l.add("--mtp-num-layers", m.mtp_layers);
    if (hybrid) {
        const auto mamba2 = [](const LayerKind& k) { return megatron(k) == MegatronMixer::mamba && as_itself(k); };
        if (const auto mamba = first_layer(m, mamba2)) {
            const LinearMixer& s = m.layer(*mamba).linear;
            l.add("--mamba-num-heads", s.heads);
            l.add("--mamba-head-dim", s.head_dim);
            l.add("--mamba-num-groups", s.groups);
            l.add("--mamba-state-dim", s.state_dim);
        }
        return;
    }
    const auto linear_attention = [](const LayerKind& k) { return megatron(k) == MegatronMixer::linear_attention; };
    if (const auto gdn = first_layer(m, linear_attention)) {
        const LinearMixer& s = m.layer(*gdn).linear;
        l.add("--experimental-attention-variant", "gated_delta_net");
        l.add("--linear-attention-freq", per_layer(m, linear_attention));
        l.add("--linear-num-key-heads", s.groups);
        l.add("--linear-num-value-heads", s.heads);
        l.add("--linear-key-head-dim", s.state_dim);
        l.add("--linear-value-head-dim", s.head_dim);
        l.add("--linear-conv-kernel-dim", s.conv_kernel);
    }
    if (const auto win = first_layer(m, [](const LayerKind& k) { return k.attention.window > 0; })) {
        const int64_t w = m.layer(*win).attention.window;
        if (first_layer(m, [w](const LayerKind& k) { return k.attention.window > 0 && k.attention.window != w; }))
            note("sliding windows of several sizes: all written as " + std::to_string(w));
        l.add("--window-size", std::to_string(w - 1) + ",0");
        l.add("--window-attn-skip-freq", per_layer(m, [](const LayerKind& k) { return k.attention.window > 0; }));
    }
}

}  // namespace lostflops::interop
