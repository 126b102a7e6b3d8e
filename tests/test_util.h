// Helpers shared by the unit tests.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "lostflops/error.h"
#include "lostflops/job.h"

namespace lostflops::test {

inline std::string source_path(const std::string& rel) { return std::string(LOSTFLOPS_SOURCE_DIR) + "/" + rel; }

// A uniform stack of `layers` attention layers (head_dim hidden / heads) with
// a dense (two-matrix) or gated MLP of width `ffn`, RMS-style norms.
inline Model uniform_model(int layers, int64_t hidden, int heads, int kv_heads, int64_t ffn, int64_t vocab,
                           MlpKind mlp, bool tied) {
    Model m;
    m.name = "test";
    m.layers = layers;
    m.hidden = hidden;
    m.vocab = vocab;
    m.tied_embeddings = tied;
    LayerKind k;
    k.attention.heads = heads;
    k.attention.kv_heads = kv_heads;
    k.attention.head_dim = hidden / heads;
    k.attention.v_head_dim = hidden / heads;
    k.mlp.kind = mlp;
    k.mlp.act = mlp == MlpKind::gated ? Activation::silu : Activation::gelu;
    k.mlp.ffn = ffn;
    m.stack = make_uniform_stack(k, layers);
    return m;
}
// The first layer's attention and MLP (a uniform model's).
inline const Attention& attention_of(const Model& m) { return m.kind(0).attention; }
inline const Mlp& mlp_of(const Model& m) { return m.kind(0).is_moe() ? m.kind(0).moe.expert : m.kind(0).mlp; }

// A small valid job as YAML text: GPT-style model on one DGX A100 node.
inline std::string small_job_text() {
    return R"(name: small
model:
  num_hidden_layers: 24
  hidden_size: 2048
  num_attention_heads: 16
  vocab_size: 51200
  hidden_act: gelu
cluster:
  gpu: a100-sxm-80gb
  num_gpus: 16
  gpus_per_node: 8
  intra_node: {bandwidth_GBps: 300, latency_us: 2}
  inter_node: {bandwidth_GBps: 25, latency_us: 5}
training:
  seq_length: 2048
  global_batch_size: 64
  micro_batch_size: 2
  precision: bf16
parallel:
  tp: 2
  pp: 2
)";
}

// What the InputError f() throws says (file: key: message), or "" when it throws none.
inline std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}

// The InputError message of parsing `text` with overrides, or "" if it parsed.
inline std::string parse_error(const std::string& text, const std::vector<std::string>& overrides = {}) {
    try {
        parse_job(text, "job.yaml", overrides);
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}

// The <svg id="ID" ...>...</svg> element of an HTML page, or "" (report tests).
inline std::string svg_element(const std::string& html, const std::string& id) {
    const auto start = html.find("<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"" + id + "\"");
    if (start == std::string::npos) return "";
    const auto end = html.find("</svg>", start);
    return end == std::string::npos ? "" : html.substr(start, end + 6 - start);
}

// Occurrences of `what` in `s`.
inline size_t count_of(const std::string& s, const std::string& what) {
    size_t n = 0;
    for (auto pos = s.find(what); pos != std::string::npos; pos = s.find(what, pos + 1)) ++n;
    return n;
}

// Llama-3.2-1B's shape (the H200 table's rows, shared/reference/h200) on one
// H200: 2 x `seq` tokens in one micro-batch, framework hf (fp32 weights under
// bf16 autocast), fused AdamW, no parallelism; then `sets`.
inline Job h200_llama1b(int seq, std::vector<std::string> sets = {}) {
    std::vector<std::string> all = {
        "model.num_hidden_layers=16", "model.hidden_size=2048", "model.intermediate_size=8192",
        "model.num_attention_heads=32", "model.num_key_value_heads=8", "model.vocab_size=128256",
        "model.hidden_act=silu", "model.tie_word_embeddings=true", "cluster.gpu=h200-sxm", "cluster.num_gpus=1",
        "cluster.gpus_per_node=1", "training.seq_length=" + std::to_string(seq), "training.global_batch_size=2",
        "training.micro_batch_size=2", "training.framework=hf", "training.optimizer_kernel=fused", "parallel.tp=1",
        "parallel.pp=1", "parallel.zero=0", "parallel.recompute=none"};
    all.insert(all.end(), sets.begin(), sets.end());
    return parse_job(small_job_text(), "llama1b.yaml", all);
}

}  // namespace lostflops::test
