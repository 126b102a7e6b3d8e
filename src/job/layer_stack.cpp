// The layer stack of a model (lostflops/model.h): distinct kinds, a kind per
// layer and per-kind prefix counts, so that the layers of each kind in any
// range of layers (a pipeline stage) cost O(kinds); names of the model enums;
// the completeness check of a kind against the table of job/layer_kinds.h.
#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "lostflops/error.h"
#include "job/layer_kinds.h"

namespace lostflops {

int LayerStack::count_in(int k, int first, int last) const {
    const size_t row = static_cast<size_t>(k) * (kind_of.size() + 1);
    return prefix[row + static_cast<size_t>(last)] - prefix[row + static_cast<size_t>(first)];
}

void LayerStackBuilder::add(const LayerKind& k) {
    LayerStack& s = *s_;
    // Consecutive layers mostly repeat a kind; hybrid stacks have a handful of
    // kinds: the last one first, then a linear scan.
    size_t i = s.kind_of.empty() ? 0 : s.kind_of.back();
    if (i >= s.kinds.size() || !(s.kinds[i] == k)) {
        i = 0;
        while (i < s.kinds.size() && !(s.kinds[i] == k)) ++i;
    }
    if (i == s.kinds.size()) {
        if (i > 0xffff) throw InputError("", "model", "more than 65,535 distinct layer kinds");
        s.kinds.push_back(k);
        s.count.push_back(0);
    }
    ++s.count[i];
    s.kind_of.push_back(static_cast<uint16_t>(i));
}

std::shared_ptr<const LayerStack> LayerStackBuilder::build() {
    LayerStack& s = *s_;
    const size_t n = s.kind_of.size();
    s.prefix.assign(s.kinds.size() * (n + 1), 0);
    for (size_t k = 0; k < s.kinds.size(); ++k) {
        int32_t* row = &s.prefix[k * (n + 1)];
        for (size_t i = 0; i < n; ++i) row[i + 1] = row[i] + (s.kind_of[i] == k ? 1 : 0);
    }
    std::shared_ptr<const LayerStack> out = std::move(s_);
    s_ = std::make_shared<LayerStack>();
    return out;
}

std::shared_ptr<const LayerStack> make_layer_stack(const std::vector<LayerKind>& per_layer) {
    LayerStackBuilder b;
    for (const LayerKind& k : per_layer) b.add(k);
    return b.build();
}

std::shared_ptr<const LayerStack> make_uniform_stack(const LayerKind& kind, int layers) {
    LayerStackBuilder b;
    for (int i = 0; i < layers; ++i) b.add(kind);
    return b.build();
}

bool Model::is_moe() const {
    for (const LayerKind& k : kinds())
        if (k.is_moe()) return true;
    return false;
}

int Model::max_experts() const {
    int e = 0;
    for (const LayerKind& k : kinds()) e = std::max(e, k.moe.experts);
    return e;
}

int Model::experts_gcd() const {
    int g = 0;
    for (const LayerKind& k : kinds())
        if (k.is_moe()) g = std::gcd(g, k.moe.experts);
    return g;
}

bool Model::same_shape(const Model& o) const {
    return layers == o.layers && hidden == o.hidden && vocab == o.vocab && tied_embeddings == o.tied_embeddings &&
           norm == o.norm && mtp_layers == o.mtp_layers && embed_dim == o.embed_dim &&
           positions == o.positions && hf_eager_scores == o.hf_eager_scores &&
           hf_fused == o.hf_fused && hf_kernel_windows == o.hf_kernel_windows && hf_eager_chain == o.hf_eager_chain && stack->kinds == o.stack->kinds &&
           stack->kind_of == o.stack->kind_of &&
           std::all_of(kinds().begin(), kinds().end(), [&](const LayerKind& k) { return rotary_in(k) == o.rotary_in(k); });
}

double Model::rotary_in(const LayerKind& k) const {
    if (positions > 0) return 0;
    if (rotary_share >= 0) return rotary_share;
    return (k.is_moe() ? k.moe.expert : k.mlp).kind == MlpKind::gated ? 1.0 : 0.0;
}

const char* to_string(MixerKind k) { return mixer_row(k).name; }

bool LayerKind::has_attention() const { return mixer_row(mixer).softmax; }

const char* to_string(Activation a) {
    switch (a) {
        case Activation::gelu: return "gelu";
        case Activation::gelu_tanh: return "gelu_tanh";
        case Activation::quick_gelu: return "quick_gelu";
        case Activation::relu: return "relu";
        case Activation::relu2: return "relu2";
        case Activation::silu: return "silu";
    }
    return "?";
}

const char* to_string(MlpKind k) { return kMlpRows[static_cast<size_t>(k)].name; }

const char* to_string(NormKind k) {
    switch (k) {
        case NormKind::rms: return "rms";
        case NormKind::layer_bias: return "layer_bias";
        case NormKind::none: return "none";
    }
    return "?";
}

namespace {

std::string mlp_text(const Mlp& m) {
    return fmt::format("{}({}{}{})", to_string(m.kind), to_string(m.act), m.ffn > 0 ? fmt::format(" {}", m.ffn) : "",
                       m.bias ? " bias" : "");
}

}  // namespace

std::string describe(const LayerKind& k) {
    std::string out = to_string(k.mixer);
    out += mixer_fns(k.mixer).shape_text(k);
    if (k.is_moe()) {
        out += fmt::format("+moe({}x{}, top {}", k.moe.experts, mlp_text(k.moe.expert), k.moe.top_k);
        if (k.moe.shared_ffn > 0) out += fmt::format(", shared {}", k.moe.shared_ffn);
        out += ")";
    } else if (k.mlp.kind != MlpKind::none) {
        out += '+';
        out += mlp_text(k.mlp);  // not "+" + text: gcc 12 -O3 warns falsely (-Wrestrict) on that
    }
    return out;
}

KindProblem kind_problem(const LayerKind& k, int64_t hidden) {
    if (KindProblem p = mixer_fns(k.mixer).problem(k); !p.key.empty()) return p;
    const auto mlp_problem = [](const Mlp& m, const char* key) -> KindProblem {
        if (m.kind != MlpKind::none && m.ffn <= 0) return {fmt::format("model.{}", key), "missing"};
        return {};
    };
    if (k.is_moe()) {
        if (k.moe.top_k <= 0) return {"model.num_experts_per_tok", "missing"};
        if (k.moe.top_k > k.moe.experts) return {"model.num_experts_per_tok", "larger than the number of experts"};
        if (k.moe.expert.kind == MlpKind::none) return {"model", "routed experts without an MLP"};
        if (auto p = mlp_problem(k.moe.expert, "moe_intermediate_size"); !p.key.empty()) return p;
    }
    if (auto p = mlp_problem(k.mlp, "intermediate_size"); !p.key.empty()) return p;
    if (k.mixer == MixerKind::none && k.mlp.kind == MlpKind::none && !k.is_moe())
        return {"model", "a layer with neither a mixer nor an MLP"};
    if (hidden <= 0) return {"model.hidden_size", "missing"};
    return {};
}

}  // namespace lostflops
