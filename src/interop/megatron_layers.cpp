// Megatron's flags for layers of several kinds, in the job file's model keys
// (megatron_model.h; src/job/model_keys.h). Meanings and defaults from
// NVIDIA/Megatron-LM d98e8a64:
//   MLA (arguments.py): --multi-latent-attention with --q-lora-rank (default
//     None: queries not compressed), --kv-lora-rank (32), --qk-head-dim (128,
//     without rotary), --qk-pos-emb-head-dim (64, rotary), --v-head-dim (128);
//   MoE: --moe-layer-freq N puts experts on layer i when i % N == 0, or a
//     Python list expression gives 0/1 per layer (moe_freq_type,
//     _eval_pattern); --moe-shared-expert-intermediate-size is the shared
//     experts' total width; --mtp-num-layers the multi-token-prediction depth;
//   windows (transformer/utils.py is_layer_window_attention): --window-size
//     "L,R" attends to L tokens before and R after, so L + R + 1; layer n
//     (1-based) keeps its window unless n % --window-attn-skip-freq == 0, or
//     where the list says 0;
//   hybrid stacks (models/hybrid/hybrid_layer_allocation.py Symbols): one
//     character per layer, M Mamba-2, * attention, - MLP, E MoE ('|' between
//     pipeline segments, '/' before the multi-token-prediction layers); Mamba
//     defaults (transformer_config.py, ssm/mamba_mixer.py): head dim 64, 8
//     groups, state 128, heads hidden x 2 / head dim, convolution 4, chunk 128;
//   Gated DeltaNet (--experimental-attention-variant gated_delta_net):
//     --linear-attention-freq N gives (N-1) linear layers per softmax one
//     (layer n is softmax when n % N == 0), or a list with 1 for linear;
//     heads 16 key / 32 value, head dims 128, convolution 4 by default.
#include <algorithm>
#include <cctype>

#include "interop/megatron_model.h"
#include "lostflops/error.h"

namespace lostflops::interop {

namespace {

// A value of Megatron's pattern language: an integer or a list of integers.
struct PatternValue {
    bool list = false;
    int64_t n = 0;
    std::vector<int> items;
};

class PatternParser {
public:
    PatternParser(const std::string& t, const std::string& source, const std::string& flag)
        : t_(t), source_(source), flag_(flag) {}
    PatternValue run() {
        PatternValue v = expr();
        if (i_ != t_.size()) fail("unexpected '" + t_.substr(i_, 1) + "'");
        return v;
    }

private:
    [[noreturn]] void fail(const std::string& what) const {
        throw InputError(source_, flag_, "'" + t_ + "': " + what + " (expected an integer or a list expression such as [0]*3+[1]*58)");
    }
    bool eat(char c) {
        while (i_ < t_.size() && t_[i_] == ' ') ++i_;
        if (i_ < t_.size() && t_[i_] == c) {
            ++i_;
            return true;
        }
        return false;
    }
    int64_t integer() {
        while (i_ < t_.size() && t_[i_] == ' ') ++i_;
        if (i_ >= t_.size() || !std::isdigit(static_cast<unsigned char>(t_[i_]))) fail("a number is missing");
        int64_t v = 0;
        while (i_ < t_.size() && std::isdigit(static_cast<unsigned char>(t_[i_])) && v < 1'000'000) v = v * 10 + (t_[i_++] - '0');
        return v;
    }
    PatternValue expr() {
        if (++depth_ > 64) fail("nested too deep");
        PatternValue v = term();
        while (eat('+')) {
            const PatternValue r = term();
            if (v.list != r.list) fail("a list added to a number");
            if (v.list) v.items.insert(v.items.end(), r.items.begin(), r.items.end());
            else v.n += r.n;
            check(v);
        }
        --depth_;
        return v;
    }
    PatternValue term() {
        PatternValue v = atom();
        while (eat('*')) {
            const PatternValue r = atom();
            if (v.list && r.list) fail("a list times a list");
            if (!v.list && !r.list) {
                v.n *= r.n;
                continue;
            }
            const PatternValue& l = v.list ? v : r;
            const int64_t times = v.list ? r.n : v.n;
            if (times * static_cast<int64_t>(l.items.size()) > 1'000'000) fail("longer than 1,000,000 layers");
            PatternValue out{true, 0, {}};
            for (int64_t k = 0; k < times; ++k) out.items.insert(out.items.end(), l.items.begin(), l.items.end());
            v = std::move(out);
        }
        return v;
    }
    PatternValue atom() {
        if (eat('(')) {
            PatternValue v = expr();
            if (!eat(')')) fail("')' is missing");
            return v;
        }
        if (eat('[')) {
            PatternValue v{true, 0, {}};
            if (eat(']')) return v;
            do {
                v.items.push_back(static_cast<int>(integer()));
            } while (eat(','));
            if (!eat(']')) fail("']' is missing");
            return v;
        }
        return {false, integer(), {}};
    }
    void check(const PatternValue& v) const {
        if (v.items.size() > 1'000'000) fail("longer than 1,000,000 layers");
    }

    const std::string& t_;
    const std::string& source_;
    const std::string& flag_;
    size_t i_ = 0;
    int depth_ = 0;
};

std::string yaml_list(const std::vector<std::string>& items) {
    std::string s = "[";
    for (size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + items[i];
    return s + "]";
}

std::optional<std::string> pattern_text(const MegatronArgs& f) {
    if (f.has("hybrid-layer-pattern") && f.has("hybrid-override-pattern"))
        throw InputError(f.source(), "--hybrid-override-pattern", "the older name of --hybrid-layer-pattern; give one");
    if (const auto p = f.str("hybrid-layer-pattern")) return p;
    return f.str("hybrid-override-pattern");
}

void hybrid_keys(const MegatronArgs& f, const std::string& given, JobDraft& d, std::vector<ImportNote>& notes) {
    const std::string main = given.substr(0, given.find('/'));
    std::string layers;
    for (char c : main) {
        if (c == '|') continue;
        if (c != 'M' && c != '*' && c != '-' && c != 'E')
            throw InputError(f.source(), "--hybrid-layer-pattern",
                             std::string("'") + c + "': lostflops reads M (Mamba-2), * (attention), - (MLP) and E (MoE) "
                             "layers; G, D and + layers in a hybrid pattern are not modelled yet");
        layers += c;
    }
    if (given.find('/') != std::string::npos)
        notes.push_back({NoteKind::not_modelled, "--hybrid-layer-pattern",
                         "the multi-token-prediction layers after '/': not modelled for hybrid stacks yet"});
    add(d.model, "hybrid_override_pattern", quoted(layers), "one character per layer");
    if (layers.find('M') == std::string::npos) return;
    const int hidden = f.required("hidden-size");
    const int head_dim = f.num("mamba-head-dim").value_or(64);
    add(d.model, "mamba_head_dim", std::to_string(head_dim), f.has("mamba-head-dim") ? "" : "Megatron's default");
    add(d.model, "mamba_num_heads", std::to_string(f.num("mamba-num-heads").value_or(hidden * 2 / head_dim)),
        f.has("mamba-num-heads") ? "" : "Megatron's default: hidden x 2 / head dim");
    add(d.model, "n_groups", std::to_string(f.num("mamba-num-groups").value_or(8)), "--mamba-num-groups");
    add(d.model, "ssm_state_size", std::to_string(f.num("mamba-state-dim").value_or(128)), "--mamba-state-dim");
    add(d.model, "conv_kernel", "4", "Megatron's MambaMixer d_conv");
    add(d.model, "chunk_size", "128", "Megatron's MambaMixer chunk_size");
}

void window_keys(const MegatronArgs& f, int layers, JobDraft& d, std::vector<ImportNote>& notes) {
    const std::string text = *f.str("window-size");
    std::vector<int64_t> sides;
    size_t i = 0;
    while (i < text.size()) {
        while (i < text.size() && (text[i] == '(' || text[i] == ')' || text[i] == ' ' || text[i] == ',')) ++i;
        if (i >= text.size()) break;
        size_t used = 0;
        try {
            sides.push_back(std::stoll(text.substr(i), &used));
        } catch (const std::exception&) {
            used = 0;
        }
        if (used == 0) throw InputError(f.source(), "--window-size", "expected \"LEFT,RIGHT\", got '" + text + "'");
        i += used;
    }
    if (sides.size() != 2 || sides[0] < 0)
        throw InputError(f.source(), "--window-size", "expected \"LEFT,RIGHT\", got '" + text + "'");
    if (sides[1] > 0)
        notes.push_back({NoteKind::not_modelled, "--window-size",
                         "a window that looks " + std::to_string(sides[1]) + " tokens ahead: costed as that many more behind"});
    add(d.model, "sliding_window", std::to_string(sides[0] + sides[1] + 1), "--window-size " + text + ": left + right + 1");
    std::vector<std::string> types(static_cast<size_t>(layers), "sliding_attention");
    if (const auto skip = f.str("window-attn-skip-freq")) {
        int every = 0;
        const auto list = megatron_pattern(*skip, layers, f.source(), "--window-attn-skip-freq", every);
        for (int n = 1; n <= layers; ++n)
            if (every > 0 ? n % every == 0 : list[static_cast<size_t>(n - 1)] == 0) types[static_cast<size_t>(n - 1)] = "full_attention";
    }
    add(d.model, "layer_types", yaml_list(types), "sliding windows, and the layers --window-attn-skip-freq keeps global");
}

void linear_attention_keys(const MegatronArgs& f, int layers, JobDraft& d) {
    const std::string variant = *f.str("experimental-attention-variant");
    if (variant != "gated_delta_net" && variant != "gdn")
        throw InputError(f.source(), "--experimental-attention-variant",
                         variant + ": lostflops models gated_delta_net (Gated DeltaNet) only");
    const auto freq = f.str("linear-attention-freq");
    if (!freq) throw InputError(f.source(), "--linear-attention-freq", "missing: Megatron needs it with gated_delta_net");
    int every = 0;
    const auto list = megatron_pattern(*freq, layers, f.source(), "--linear-attention-freq", every);
    std::vector<std::string> types;
    for (int n = 1; n <= layers; ++n) {
        const bool linear = every > 0 ? n % every != 0 : list[static_cast<size_t>(n - 1)] == 1;
        types.push_back(linear ? "linear_attention" : "full_attention");
    }
    add(d.model, "layer_types", yaml_list(types), "--linear-attention-freq " + *freq);
    add(d.model, "linear_num_key_heads", std::to_string(f.num("linear-num-key-heads").value_or(16)));
    add(d.model, "linear_num_value_heads", std::to_string(f.num("linear-num-value-heads").value_or(32)));
    add(d.model, "linear_key_head_dim", std::to_string(f.num("linear-key-head-dim").value_or(128)));
    add(d.model, "linear_value_head_dim", std::to_string(f.num("linear-value-head-dim").value_or(128)));
    add(d.model, "linear_conv_kernel_dim", std::to_string(f.num("linear-conv-kernel-dim").value_or(4)));
}

}  // namespace

std::vector<int> megatron_pattern(const std::string& text, int layers, const std::string& source, const std::string& flag,
                                  int& every) {
    const PatternValue v = PatternParser(text, source, flag).run();
    every = 0;
    if (!v.list) {
        if (v.n < 1 || v.n > 1'000'000) throw InputError(source, flag, "expected a frequency from 1, got " + text);
        every = static_cast<int>(v.n);
        return {};
    }
    if (static_cast<int>(v.items.size()) != layers)
        throw InputError(source, flag, std::to_string(v.items.size()) + " entries for " + std::to_string(layers) + " layers");
    for (int x : v.items)
        if (x != 0 && x != 1) throw InputError(source, flag, "expected 0 or 1 per layer, got " + std::to_string(x));
    return v.items;
}

std::optional<std::string> hybrid_pattern(const MegatronArgs& f) { return pattern_text(f); }

int hybrid_layers(const MegatronArgs& f) {
    const auto p = pattern_text(f);
    if (!p) return 0;
    const std::string main = p->substr(0, p->find('/'));
    return static_cast<int>(std::count_if(main.begin(), main.end(), [](char c) { return c != '|'; }));
}

void megatron_layer_keys(const MegatronArgs& f, int layers, JobDraft& d, std::vector<ImportNote>& notes) {
    const char* mla_flags[] = {"q-lora-rank", "kv-lora-rank", "qk-head-dim", "qk-pos-emb-head-dim", "v-head-dim"};
    if (f.has("multi-latent-attention")) {
        add(d.model, "kv_lora_rank", std::to_string(f.num("kv-lora-rank").value_or(32)), "--multi-latent-attention");
        if (const auto q = f.num("q-lora-rank")) add(d.model, "q_lora_rank", std::to_string(*q));
        add(d.model, "qk_nope_head_dim", std::to_string(f.num("qk-head-dim").value_or(128)), "--qk-head-dim");
        add(d.model, "qk_rope_head_dim", std::to_string(f.num("qk-pos-emb-head-dim").value_or(64)), "--qk-pos-emb-head-dim");
        add(d.model, "v_head_dim", std::to_string(f.num("v-head-dim").value_or(128)), "--v-head-dim");
    } else {
        for (const char* m : mla_flags)
            if (f.has(m)) notes.push_back({NoteKind::ignored, std::string("--") + m, "only with --multi-latent-attention"});
    }
    const bool moe = f.has("num-experts");
    if (const auto shared = f.num("moe-shared-expert-intermediate-size"); shared && moe)
        add(d.model, "moe_shared_expert_intermediate_size", std::to_string(*shared), "shared experts' total width");
    if (const auto freq = f.str("moe-layer-freq"); freq && moe) {
        int every = 0;
        const auto list = megatron_pattern(*freq, layers, f.source(), "--moe-layer-freq", every);
        std::vector<std::string> items;
        for (int x : list) items.push_back(std::to_string(x));
        add(d.model, "moe_layer_freq", every > 0 ? std::to_string(every) : yaml_list(items), "--moe-layer-freq " + *freq);
    }
    if (const auto mtp = f.num("mtp-num-layers")) add(d.model, "mtp_num_layers", std::to_string(*mtp));
    const auto pattern = pattern_text(f);
    if (pattern) hybrid_keys(f, *pattern, d, notes);
    if (f.has("window-size")) {
        if (pattern || f.has("experimental-attention-variant"))
            throw InputError(f.source(), "--window-size", "sliding windows with a hybrid or linear-attention stack are not modelled yet");
        window_keys(f, layers, d, notes);
    }
    if (f.has("experimental-attention-variant")) {
        if (pattern) throw InputError(f.source(), "--experimental-attention-variant", "with a hybrid layer pattern: give the layers in the pattern");
        linear_attention_keys(f, layers, d);
    }
    if (const auto softmax = f.str("softmax-type"); softmax && *softmax != "vanilla")
        notes.push_back({NoteKind::not_modelled, "--softmax-type " + *softmax,
                         "attention sinks: a logit per head and layer (negligible work), not in the job file"});
}

}  // namespace lostflops::interop
