// The model: an ordered stack of decoder layers, each of a kind (docs/job-file.md,
// `model:`). A kind says what mixes the tokens (softmax attention, multi-head
// latent attention, a state-space or linear-attention mixer, or nothing) and
// what transforms each token (a dense MLP, routed experts with shared ones, or
// nothing). The stack keeps the distinct kinds once and a kind index per
// layer; it is immutable and shared, so copying a Model (the search copies a
// Job per layout) copies a pointer.
//
// Building one: readers fill LayerKinds and call make_layer_stack (a kind per
// layer; equal kinds are merged). job/job_model.cpp does it from Hugging Face
// config.json keys (src/job/model_keys.h lists every key), tests and other
// front ends may do it by hand. How each kind is counted (parameters, FLOPs):
// workload/flops.h; the table of kinds, with each kind's file: job/layer_kinds.h.
//
// Units: sizes are element counts (hidden_size, head dims, ranks); no bytes.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace lostflops {

// What mixes tokens; each its row of job/layer_kinds.h, in this order, and its file
// src/job/mixers/<value>.cpp, built as src/job/CMakeLists.txt reads this enum. none last.
enum class MixerKind : uint8_t {
    attention,       // softmax attention: MHA, GQA (kv_heads < heads), MQA (kv_heads 1); optionally windowed / chunked
    mla,             // multi-head latent attention (DeepSeek-V2, arXiv 2405.04434 sec. 2.1)
    mamba2,          // Mamba-2 SSD mixer (Dao & Gu 2024, arXiv 2405.21060) as in Nemotron-H
    mamba1,          // Mamba-1 selective-scan mixer (Gu & Dao 2023, arXiv 2312.00752) as in Falcon-Mamba, Jamba
    gated_deltanet,  // Gated DeltaNet (Yang et al. 2024, arXiv 2412.06464) as in Qwen3-Next
    lightning,       // lightning attention, a linear attention (MiniMax-01, arXiv 2501.08313)
    none,            // no token mixer (an MLP-only layer, Nemotron-H's "-")
};

// The MLP's element-wise function. Costs the same per element in this model;
// kept so the model is printed and exported as it was given.
enum class Activation : uint8_t { gelu, gelu_tanh, quick_gelu, relu, relu2, silu };

// dense: up (h x f), activation, down (f x h): two matrices (GPT, Falcon,
// Nemotron-H's squared ReLU). gated: gate and up (h x f each), act(gate) * up,
// down: three matrices (SwiGLU, GeGLU; Shazeer 2020, arXiv 2002.05202).
enum class MlpKind : uint8_t { none, dense, gated };

// Parameters of one normalisation over the hidden size: RMSNorm and LayerNorm
// without bias have a weight (h), LayerNorm with bias two vectors (2h), OLMo's
// non-parametric LayerNorm none.
enum class NormKind : uint8_t { rms, layer_bias, none };

// Softmax attention and MLA.
struct Attention {
    int heads = 0;
    int kv_heads = 0;           // key/value heads (MLA: heads)
    int64_t head_dim = 0;       // query/key head dim (MLA: qk_nope_head_dim + qk_rope_head_dim)
    int64_t v_head_dim = 0;     // value head dim (head_dim except MLA)
    // MLA only: low-rank query and key/value compression. q_lora_rank 0: queries
    // projected straight from the hidden state (DeepSeek-V2-Lite).
    int64_t q_lora_rank = 0;
    int64_t kv_lora_rank = 0;
    int64_t qk_rope_head_dim = 0;  // the decoupled rotary part of head_dim, one key shared by all heads
    // Which keys a query sees: 0 = every earlier token. window: the last
    // `window` tokens (sliding-window attention, Mistral / Gemma 2 / gpt-oss);
    // chunk: the tokens of its own chunk of `chunk` (Llama 4's chunked attention).
    int64_t window = 0;
    int64_t chunk = 0;
    bool sinks = false;         // a learned sink logit per head (gpt-oss): `heads` parameters
    bool qkv_bias = false;      // biases on the query/key/value projections
    bool out_bias = false;      // bias on the output projection
    bool qk_norm = false;       // RMSNorm of head_dim on queries and keys (Qwen3): 2 * head_dim parameters
    bool output_gate = false;   // sigmoid gate on the attention output, from a second query-sized projection (Qwen3-Next)
    // One linear layer makes queries, keys and values (GPT-2 c_attn, Phi-3
    // qkv_proj, GPT-NeoX query_key_value) instead of three: the same GEMM
    // FLOPs, but an eager autocast stack casts its input once, not three
    // times (workload/eager_ledger.cpp).
    bool fused_qkv = false;
    bool operator==(const Attention&) const = default;
};

// State-space and linear-attention mixers (MixerKind mamba2, mamba1,
// gated_deltanet, lightning). Field meaning per mixer:
//                Mamba-2            Mamba-1                   Gated DeltaNet            lightning
//   heads        nheads             d_inner (a channel each)  linear_num_value_heads    attention heads
//   head_dim     headdim            1                         linear_value_head_dim     head_dim
//   groups       ngroups (B, C)     1                         linear_num_key_heads      heads
//   state_dim    d_state            d_state                   linear_key_head_dim       head_dim
//   conv_kernel  d_conv             d_conv                    linear_conv_kernel_dim    0
//   chunk        chunk_size         the scan kernel's chunk   (kernel's chunk)          block_size
//   dt_rank      0                  time_step_rank (dt_proj)  0                         0
//   inner_norms  -                  Jamba's dt, B, C RMSNorms -                         -
struct LinearMixer {
    int heads = 0;
    int64_t head_dim = 0;
    int groups = 0;
    int64_t state_dim = 0;
    int conv_kernel = 0;
    int64_t chunk = 0;
    bool conv_bias = false;
    bool proj_bias = false;
    int64_t dt_rank = 0;
    bool inner_norms = false;
    int64_t inner() const { return heads * head_dim; }  // Mamba-1/2 d_inner, GDN value_dim
    bool operator==(const LinearMixer&) const = default;
};

struct Mlp {
    MlpKind kind = MlpKind::none;
    Activation act = Activation::silu;
    int64_t ffn = 0;            // intermediate size
    bool bias = false;
    bool fused_gate_up = false; // gate and up in one linear layer (Phi-3 gate_up_proj); see Attention::fused_qkv
    // The activation is a chain of PyTorch operators, not one kernel
    // (transformers' NewGELUActivation for gelu_new, FastGELUActivation,
    // AccurateGELUActivation): an eager stack saves its intermediates.
    bool act_composite = false;
    bool operator==(const Mlp&) const = default;
};

// Routed experts (experts > 0) and the experts every token passes through.
struct Moe {
    int experts = 0;            // routed experts; 0: the layer has none
    int top_k = 0;              // routed experts per token
    Mlp expert;                 // one routed expert's MLP (kind, activation, width, biases)
    int64_t shared_ffn = 0;     // total width of the shared experts (n_shared_experts x width); 0: none
    bool shared_gate = false;   // sigmoid gate (h -> 1) on the shared expert (Qwen2-MoE, Qwen3-Next)
    bool router_bias = false;   // router linear layer has a bias (gpt-oss)
    bool score_bias = false;    // per-expert score-correction bias (DeepSeek-V3 noaux_tc routing, GLM-4.5)
    bool operator==(const Moe&) const = default;
};

struct LayerKind {
    MixerKind mixer = MixerKind::attention;
    Attention attention;        // mixer attention or mla
    LinearMixer linear;         // mixer mamba2, mamba1, gated_deltanet or lightning
    Mlp mlp;                    // the dense MLP (kind none in MoE and mixer-only layers)
    Moe moe;                    // experts > 0: a mixture-of-experts layer
    int norms = 2;              // hidden-size normalisations in the layer (Gemma 2: 4; Nemotron-H blocks: 1)
    bool is_moe() const { return moe.experts > 0; }
    bool has_attention() const;  // softmax attention (attention, mla): its row's softmax trait
    bool operator==(const LayerKind&) const = default;
};

// The layers in order: distinct kinds and the kind of each layer.
struct LayerStack {
    std::vector<LayerKind> kinds;       // in order of first appearance
    std::vector<uint16_t> kind_of;      // per layer, index into kinds
    std::vector<int> count;             // layers of each kind
    // layers of kind k among layers [0, i): prefix[k * (layers + 1) + i], so a
    // range's count of each kind costs O(kinds).
    std::vector<int32_t> prefix;
    int layers() const { return static_cast<int>(kind_of.size()); }
    // Layers of kind k among layers [first, last).
    int count_in(int k, int first, int last) const;
};

// Layers added in order; equal kinds merged. At most 65,535 distinct kinds.
class LayerStackBuilder {
public:
    void add(const LayerKind& k);
    std::shared_ptr<const LayerStack> build();

private:
    std::shared_ptr<LayerStack> s_ = std::make_shared<LayerStack>();
};
std::shared_ptr<const LayerStack> make_layer_stack(const std::vector<LayerKind>& per_layer);
// `layers` layers of one kind.
std::shared_ptr<const LayerStack> make_uniform_stack(const LayerKind& kind, int layers);

struct Model {
    std::string name;
    int layers = 0;              // decoder layers (num_hidden_layers), MTP layers not included
    int64_t hidden = 0;          // hidden_size
    int64_t vocab = 0;           // vocab_size
    bool tied_embeddings = false;  // output layer shares the input embedding
    NormKind norm = NormKind::rms;  // parameters of each normalisation (and of the final one)
    // DeepSeek-V3 multi-token prediction modules (num_nextn_predict_layers),
    // each a decoder layer of the last layer's kind plus its projection
    // (2h x h) and three norms; embedding and output layer shared with the
    // model (DeepSeek-V3 technical report, arXiv 2412.19437, sec. 2.2).
    // Counted apart from the model's published size.
    int mtp_layers = 0;
    // Width of the input embedding and the output layer when it is not
    // `hidden` (OPT's word_embed_proj_dim): a project_in (e x h) after the
    // lookup and a project_out (h x e) before the logits, both without bias
    // (transformers modeling_opt.py OPTDecoder). 0: hidden.
    int64_t embed_dim = 0;
    // Learned absolute position embeddings, positions x hidden parameters
    // looked up and added to the input (GPT-2's wpe, OPT's embed_positions). 0: none.
    int64_t positions = 0;
    // Share of each attention head's query and key dimensions the rotary
    // embedding rotates: 1 (Llama), 0.25 (GPT-NeoX's rotary_pct default), 0
    // for none (learned positions, ALiBi); -1 not said (a hand-written
    // model): all of them in a layer with a gated MLP (Llama-like), none in
    // a two-matrix one (GPT-3-like): rotary_in says which.
    double rotary_share = -1;
    // transformers computes this model's attention with its scores in memory:
    // its family's own attention (BLOOM's baddbmm with the ALiBi bias, fp32
    // softmax, bmm; GPT-J's and InternLM2's eager default), or its config's
    // attn_implementation "eager" (job/model_positions.cpp); framework hf
    // prices it unfused, its scores in the ledger (hf_attention.h
    // hf_attention_keeps_scores, where training.attention may override it).
    bool hf_eager_scores = false;
    // The fused attention transformers has for this model besides its eager
    // one, which training.attention: flash asks for (hf_attention.h
    // hf_attention_keeps_scores): SDPA (the attention-interface families:
    // any precision), flash_attention_2 alone (GPT-J, InternLM2's remote
    // code: 16-bit inputs only), none (BLOOM), or a flash kernel that takes
    // attention sinks but no SDPA (gpt-oss: _supports_sdpa False, a
    // flash_attention_* name corrected to its _compatible_flash_implementations
    // kernels-community/vllm-flash-attn3, or flex_attention; 16-bit inputs
    // only).
    enum class HfFused : uint8_t { sdpa, flash_attention_2, none, sink_kernels };
    HfFused hf_fused = HfFused::sdpa;
    // The fused kernel a config's attn_implementation names takes a sliding
    // window or a chunk itself and skips the blocks outside it
    // (flash_attention_2/3/4, flex_attention, a kernel repository "org/name";
    // job/model_positions.cpp). SDPA, the attention-interface families'
    // default, is handed an explicit mask instead (hf_attention.h hf_sdpa_attention).
    bool hf_kernel_windows = false;
    // That eager attention between its two matmuls, where it keeps its
    // scores (job/model_families.h eager_score_bytes): bytes per score element
    // forward under 16-bit autocast, and kernels beyond a fused softmax's two;
    // the same in a bf16 model (FSDP2's bf16 parameters: the mask and the
    // sinks bf16 too, workload/eager_ledger.h eager_fsdp2_bf16).
    struct EagerChain {
        uint8_t bytes = 32;
        uint8_t kernels = 2;
        uint8_t bf16_bytes = 26;
        uint8_t bf16_kernels = 2;
        bool operator==(const EagerChain&) const = default;
    };
    EagerChain hf_eager_chain;
    // Dropout after each block in training, in models whose blocks have it
    // (a two-matrix MLP: GPT-2-era code; workload/layer_work.cpp): 1 on, 0 off
    // (a config.json's resid_pdrop, hidden_dropout, residual_dropout or
    // dropout of 0, or its family's default), -1 not said (a hand-written
    // model: on, as Megatron's hidden_dropout 0.1).
    int8_t block_dropout = -1;
    bool dropout_on() const { return block_dropout != 0; }
    std::shared_ptr<const LayerStack> stack;  // `layers` layers; set by every reader
    // What the reader says about the keys it was given. not_modelled: the key
    // changes the cost and is not modelled ("not modelled: KEY (why)";
    // --strict: an error). assumed: the reader had to guess (a model_type it
    // does not know, read as a named family; --strict: an error). ignored: the
    // key disagrees with another that the family's reference code reads
    // instead, and is left out as that code leaves it out, or it changes the
    // price under framework hf alone (attn_implementation) and is said as
    // read (a warning, never an error: the model is what the reference builds).
    struct NotModelled {
        enum class Kind : uint8_t { not_modelled, assumed, ignored };
        std::string key;  // as given: "vision_config", "attn_logit_softcapping"
        std::string why;
        Kind kind = Kind::not_modelled;
    };
    std::shared_ptr<const std::vector<NotModelled>> not_modelled;

    const std::vector<LayerKind>& kinds() const { return stack->kinds; }
    int64_t embed_width() const { return embed_dim > 0 ? embed_dim : hidden; }
    const LayerKind& kind(int k) const { return stack->kinds[static_cast<size_t>(k)]; }
    const LayerKind& layer(int i) const { return kind(stack->kind_of[static_cast<size_t>(i)]); }
    int kind_count(int k) const { return stack->count[static_cast<size_t>(k)]; }
    bool uniform() const { return stack->kinds.size() == 1; }
    bool is_moe() const;           // some layer has routed experts
    int max_experts() const;       // the most routed experts of any layer (0: dense)
    int experts_gcd() const;       // gcd of the routed experts of every MoE kind (0: dense): what ep must divide
    // Equal shapes (every field but name).
    bool same_shape(const Model& o) const;  // rotary compared as rotary_in: a share not said equals the one it stands for
    // The share of q and k that layer kind k rotates: rotary_share, or where
    // that is not said all of them in a layer whose MLP (an MoE layer's
    // experts') is gated and none otherwise; none with learned positions.
    double rotary_in(const LayerKind& k) const;
};

// Short names, as printed and as written in tables ("attention", "mla",
// "mamba2", "mamba1", "gated_deltanet", "lightning", "none"; "gelu", "gelu_tanh",
// "quick_gelu", "relu", "relu2", "silu"; "none", "dense", "gated").
const char* to_string(MixerKind k);
const char* to_string(Activation a);
const char* to_string(MlpKind k);
const char* to_string(NormKind k);
// "mla+moe(256x2048, top 8, shared 2048)", "attention(window 4096)+gated(14336)": one line per kind.
std::string describe(const LayerKind& k);

}  // namespace lostflops
