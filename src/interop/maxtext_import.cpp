// MaxText config (base.yml style, flat `key: value`) -> job file (interop.h).
// Keys and meanings from AI-Hypercomputer/maxtext src/maxtext/configs/base.yml
// and pyconfig.py (@e591f30, 2026):
//  - model: base_emb_dim, base_num_query_heads, base_num_kv_heads,
//    base_mlp_dim, base_num_decoder_layers, head_dim, vocab_size,
//    mlp_activations (["silu","linear"] = SwiGLU), logits_via_embedding (tied
//    output), num_experts, num_experts_per_tok, base_moe_mlp_dim; model_name
//    loads configs/models/NAME.yml first (maxtext_keys.cpp); the config's own
//    keys win, as pyconfig's do; global_parameter_scale S (a power of two)
//    doubles heads and MLP width, the embedding and the layers in turn
//    (maxtext_config.cpp);
//  - run: per_device_batch_size (sequences per chip; global batch =
//    per_device_batch_size x chips x gradient_accumulation_steps),
//    max_target_length, remat_policy (full: every layer recomputed; none: no
//    remat; minimal and the save_* / *_offloaded policies keep matmul
//    outputs: selective), num_pipeline_microbatches (micro-batches of a
//    pipeline, -1 = the stages), num_pipeline_repeats (-1 = layers /
//    (stages x num_layers_per_pipeline_stage), types.py) -> vpp,
//    dtype / quantization (bf16; "fp8" is fp8; int8 and others priced as bf16
//    with a warning);
//  - mesh: ici_<axis>_parallelism inside a slice, dcn_<axis>_parallelism
//    across slices, the product over axes = chips per slice and slices; one
//    axis of each may be -1, "the rest" (base.yml: ici_fsdp_parallelism: -1,
//    dcn_data_parallelism: -1). data -> plain data parallelism, fsdp ->
//    data parallelism with parameters, gradients and optimizer state sharded
//    (zero 3), tensor -> tp, sequence / context -> cp, expert -> ep,
//    pipeline -> pp (the degrees resolved in maxtext_config.cpp).
// The hardware is not in the config: `tpu` ("v5p-128") and `slices` of
// ImportOptions give the slice type and count (MaxText gets them from the
// runtime; num_slices -1 = what it finds).
#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "interop/job_draft.h"
#include "interop/maxtext_config.h"
#include "interop/maxtext_keys.h"
#include "lostflops/accelerator.h"
#include "lostflops/catalog.h"
#include "lostflops/error.h"
#include "lostflops/interop.h"
#include "job/did_you_mean.h"
#include "job/yaml_document.h"

namespace lostflops {

using interop::add;
using interop::maxtext::Config;
using interop::maxtext::mesh;
using interop::maxtext::scale_model;

namespace {

// A scalar or a flow list as one text value (mlp_activations, logical_axis_rules).
std::string value_text(const YAML::Node& n) {
    if (n.IsScalar()) return n.Scalar();
    if (n.IsNull()) return "";
    YAML::Emitter e;
    e << YAML::Flow << n;
    return e.c_str();
}

// num_pipeline_repeats of a pipeline of `pp` stages over `layers` decoder
// layers, as types.py resolves and asserts it; pipeline_parallel_layers
// other than the layers and delayed forwarding are noted.
int64_t pipeline_repeats(Config& c, int64_t layers, int64_t pp, std::vector<ImportNote>& notes) {
    if (const auto piped = c.integer("pipeline_parallel_layers", -1, 1 << 24); piped && *piped != -1 && *piped != layers)
        notes.push_back({NoteKind::not_modelled, "pipeline_parallel_layers",
                         fmt::format("{} of {} layers pipelined (the rest data-parallel over the stage axis): priced "
                                     "as all of them pipelined",
                                     *piped, layers)});
    // pipeline.py: forwarding_delay 2 with pipeline_delay_activation_forwarding,
    // bubble_iterations = forwarding_delay * (num_stages - 1).
    if (c.flag("pipeline_delay_activation_forwarding", false))
        notes.push_back({NoteKind::not_modelled, "pipeline_delay_activation_forwarding",
                         "delayed forwarding doubles MaxText's bubble (forwarding_delay 2, pipeline.py): priced "
                         "with one iteration's delay"});
    const int64_t per_stage = c.integer("num_layers_per_pipeline_stage", 1, 1 << 24).value_or(1);
    const int64_t given = c.integer("num_pipeline_repeats", -1, 1 << 24).value_or(-1);
    if (given == 0)
        throw InputError(c.where("num_pipeline_repeats"), "num_pipeline_repeats", "0; expected a positive count or -1");
    const int64_t repeats = given > 0 ? given : layers / (pp * per_stage);
    if (pp * per_stage * repeats != layers)
        throw InputError(c.where(given > 0 ? "num_pipeline_repeats" : "num_layers_per_pipeline_stage"),
                         given > 0 ? "num_pipeline_repeats" : "num_layers_per_pipeline_stage",
                         fmt::format("{} stages x {} repeats x {} layers a stage is not the {} layers (MaxText's "
                                     "types.py asserts it)",
                                     pp, repeats, per_stage, layers));
    return repeats;
}

}  // namespace

ImportResult import_maxtext(const std::string& text, const std::string& source, const ImportOptions& options) {
    Config c(source);
    const YAML::Node root = load_yaml_document(text, source);
    if (!root.IsMap() && !root.IsNull()) throw InputError(source, "", "expected MaxText's flat mapping of keys to values");
    if (root.IsMap())
        for (const auto& kv : root) {
            if (!kv.first.IsScalar()) throw InputError(source, "", "keys must be plain strings");
            if (kv.second.IsMap()) throw InputError(source, kv.first.Scalar(), "expected a value (MaxText's keys are flat)");
            c.set(kv.first.Scalar(), value_text(kv.second), source);
        }
    for (const auto& o : options.overrides) {
        const auto eq = o.find('=');
        if (eq == std::string::npos || eq == 0) throw InputError("--set " + o, "", "expected KEY=VALUE");
        c.set(o.substr(0, eq), o.substr(eq + 1), "--set " + o);
    }
    std::vector<ImportNote> notes;

    // Model: the preset of model_name first, the config's keys over it.
    std::map<std::string, int64_t> dims = {{"base_emb_dim", 2048}, {"base_num_query_heads", 16},
                                           {"base_num_kv_heads", 16}, {"base_mlp_dim", 7168},
                                           {"base_num_decoder_layers", 16}, {"head_dim", 128},
                                           {"vocab_size", 32000}, {"num_experts", 1}, {"num_experts_per_tok", 1}};
    bool tied = false;
    const std::string model_name = c.text("model_name").value_or("default");
    if (model_name != "default") {
        const auto* m = interop::find_maxtext_model(model_name);
        if (!m)
            throw InputError(c.where("model_name"), "model_name",
                             "unknown MaxText model '" + model_name + "'" + did_you_mean(model_name, interop::maxtext_model_names()) +
                                 "; give its base_* keys instead");
        for (const auto& [k, v] : m->keys) {
            if (std::string_view(k) == "logits_via_embedding") tied = std::string_view(v) == "true";
            else dims[k] = std::stoll(v);
        }
    }
    for (auto& [k, v] : dims) {
        const auto given = c.integer(k, 1, 1 << 24);
        if (given) v = *given;
    }
    tied = c.flag("logits_via_embedding", tied);
    scale_model(c, dims);
    const std::string act = c.text("mlp_activations").value_or("[silu, linear]");
    std::string hidden_act;
    std::string a = act;
    a.erase(std::remove_if(a.begin(), a.end(), [](char ch) { return ch == '"' || ch == '\'' || ch == ' '; }), a.end());
    if (a == "[silu,linear]") hidden_act = "silu";
    else if (a == "[gelu,linear]") hidden_act = "geglu";
    else if (a == "[gelu]") hidden_act = "gelu";
    else if (a == "[relu]") hidden_act = "relu";
    else throw InputError(c.where("mlp_activations"), "mlp_activations",
                          "'" + act + "'; expected [\"silu\",\"linear\"], [\"gelu\",\"linear\"], [\"gelu\"] or [\"relu\"]");
    if (const auto block = c.text("decoder_block"); block && *block != "llama2" && *block != "mistral" && *block != "mixtral")
        notes.push_back({NoteKind::not_modelled, "decoder_block", "'" + *block + "' priced as a llama-style block"});
    const auto moe_mlp = c.integer("base_moe_mlp_dim", 1, 1 << 24);

    // Hardware: the slice type and count.
    if (options.tpu.empty())
        throw InputError(source, "--tpu", "the config does not name its TPUs: give the slice type (--tpu v5p-128)");
    std::string why;
    const auto slice = interop::parse_tpu_slice(options.tpu, why);
    if (!slice) throw InputError("--tpu " + options.tpu, "", why);
    const auto num_slices_key = c.integer("num_slices", -1, 1 << 16);
    int64_t slices = options.slices > 0 ? options.slices : 1;
    if (num_slices_key && *num_slices_key > 0) {
        if (options.slices > 0 && options.slices != *num_slices_key)
            throw InputError(c.where("num_slices"), "num_slices", fmt::format("{} slices; --slices says {}", *num_slices_key, options.slices));
        slices = *num_slices_key;
    }
    const bool slices_in_config = num_slices_key && *num_slices_key > 0;
    const int64_t chips = interop::gpu_count(
        {slice->chips, slices},
        options.slices > 0 ? "--slices" : slices_in_config ? c.where("num_slices") : "--tpu " + options.tpu,
        options.slices == 0 && slices_in_config ? "num_slices" : "",
        fmt::format("{} chips a slice x {} slices", slice->chips, slices));

    // Mesh.
    auto ici = mesh(c, "ici", slice->chips, notes);
    auto dcn = mesh(c, "dcn", slices, notes);
    auto degree = [&](const char* k) { return (ici.count(k) ? ici[k] : 1) * (dcn.count(k) ? dcn[k] : 1); };
    const int64_t tp = degree("tp"), cp = degree("cp"), pp = degree("pp"), ep = degree("ep");
    const int64_t fsdp = degree("fsdp");

    // Run.
    const auto seq = c.integer("max_target_length", 1, 1 << 24).value_or(2048);
    const double per_device = c.number("per_device_batch_size", 1e-6, 1e6).value_or(12.0);
    const int64_t accum = c.integer("gradient_accumulation_steps", 1, 1 << 20).value_or(1);
    const double global = per_device * static_cast<double>(chips) * static_cast<double>(accum);
    if (global > 1e12)
        throw InputError(c.where("per_device_batch_size"), "per_device_batch_size",
                         fmt::format("{} sequences a step; expected at most 1e12", global));
    if (global != std::floor(global) || global < 1)
        throw InputError(c.where("per_device_batch_size"), "per_device_batch_size",
                         fmt::format("{} x {} chips is not a whole number of sequences", per_device, chips));
    const std::string remat = c.text("remat_policy").value_or("full");
    std::string recompute = "selective";
    if (remat == "full") recompute = "full";
    else if (remat == "none") recompute = "none";  // no jax.checkpoint (decoders.py get_remat_policy)
    else if (remat == "minimal" || remat.rfind("save_", 0) == 0 || remat == "qkv_proj_offloaded" || remat == "minimal_offloaded")
        notes.push_back({NoteKind::assumed, "remat_policy",
                         "'" + remat + "' keeps matmul outputs: priced as selective recompute's time" +
                             (remat.find("offloaded") != std::string::npos
                                  ? ", the saved outputs in host memory (offload_activations; the transfers' time not priced)"
                                  : "")});
    else if (remat == "minimal_flash" || remat == "custom")
        notes.push_back({NoteKind::assumed, "remat_policy", "'" + remat + "' priced as selective recompute"});
    else
        throw InputError(c.where("remat_policy"), "remat_policy",
                         "'" + remat + "'; expected full, none, minimal, save_*, *_offloaded, minimal_flash or custom" +
                             did_you_mean(remat, {"full", "none", "minimal", "minimal_offloaded", "qkv_proj_offloaded",
                                                  "minimal_flash", "custom", "save_dot_except_mlpwi"}));
    const std::string dtype = c.text("dtype").value_or("bfloat16");
    if (dtype != "bfloat16") notes.push_back({NoteKind::not_modelled, "dtype", "'" + dtype + "' priced as bf16"});
    const std::string quant = c.text("quantization").value_or("");
    std::string precision = "bf16";
    if (quant == "fp8") precision = "fp8";
    else if (!quant.empty()) notes.push_back({NoteKind::not_modelled, "quantization", "'" + quant + "' priced as bf16"});
    if (const auto opt = c.text("opt_type"); opt && *opt != "adamw" && *opt != "adam_pax")
        notes.push_back({NoteKind::not_modelled, "opt_type", "'" + *opt + "': Adam's optimizer state is priced"});
    const std::string attention = c.text("attention").value_or("autoselected");
    // MaxText's attention kernels (base.yml `attention`; dot_product is the
    // unfused one): any other value was priced as flash without a word.
    if (attention != "autoselected" && attention != "dot_product" && attention != "flash" &&
        attention != "cudnn_flash_te" && attention != "cudnn_flash_jax")
        notes.push_back({NoteKind::not_modelled, "attention",
                         "'" + attention + "': not one of MaxText's kernels lostflops knows (autoselected, dot_product, "
                         "flash, cudnn_flash_te, cudnn_flash_jax); priced as flash"});

    const int64_t dp = chips / (tp * cp * pp);
    // A pipeline splits each accumulation step's batch into
    // num_pipeline_microbatches (pyconfig: -1 = the stages, twice them with
    // pipeline_delay_activation_forwarding; a multiple of the stages).
    int64_t pipeline_micro = 1;
    if (pp > 1) {
        const int64_t given = c.integer("num_pipeline_microbatches", -1, 1 << 20).value_or(-1);
        pipeline_micro = given > 0 ? given : (c.flag("pipeline_delay_activation_forwarding", false) ? 2 * pp : pp);
        if (given == 0 || pipeline_micro % pp != 0)
            throw InputError(c.where("num_pipeline_microbatches"), "num_pipeline_microbatches",
                             fmt::format("{}; expected a multiple of the {} pipeline stages (MaxText's pyconfig asserts it)",
                                         given, pp));
        if (static_cast<int64_t>(global) % (dp * accum * pipeline_micro) != 0)
            throw InputError(c.where("num_pipeline_microbatches"), "num_pipeline_microbatches",
                             fmt::format("{} micro-batches do not divide the {} sequences of each of the {} data-parallel "
                                         "ranks' steps",
                                         pipeline_micro, static_cast<int64_t>(global) / (dp * accum), dp));
    }
    // A fractional per_device_batch_size (MaxText takes one: the batch is
    // sharded over the data axes only) must still give each data-parallel
    // rank whole sequences, or the job written would be refused downstream.
    if (static_cast<int64_t>(global) % (dp * accum * pipeline_micro) != 0)
        throw InputError(c.where("per_device_batch_size"), "per_device_batch_size",
                         fmt::format("{} sequences a step do not split evenly over the {} data-parallel ranks x {} "
                                     "accumulation steps (chips / (tensor x context x pipeline))",
                                     static_cast<int64_t>(global), dp, accum));
    const int64_t micro = static_cast<int64_t>(global) / (dp * accum * pipeline_micro);
    // MaxText's circular pipeline (types.py, the using_pipeline_parallelism
    // checks; pipeline.py): each stage runs num_pipeline_repeats chunks of
    // num_layers_per_pipeline_stage layers, stages x repeats x layers per
    // stage = the layers (repeats -1 = layers / (stages x layers per stage),
    // base.yml defaults 1 layer a stage). The scan's bubble is
    // forwarding_delay (p - 1) of m r + that iterations, interleaved 1F1B's
    // with vpp = repeats: the repeats are parallel.vpp.
    int64_t repeats = 1;
    if (pp > 1) repeats = pipeline_repeats(c, dims["base_num_decoder_layers"], pp, notes);
    interop::JobDraft d;
    d.name = "maxtext " + (model_name == "default" ? std::string("model") : model_name) + " on " + options.tpu +
             (slices > 1 ? fmt::format(" x {}", slices) : "");
    d.source = "MaxText config " + source;
    d.header = {"Imported from a MaxText config by `lostflops import maxtext` (docs/tpu.md)."};
    add(d.model, "num_hidden_layers", std::to_string(dims["base_num_decoder_layers"]), "base_num_decoder_layers");
    add(d.model, "hidden_size", std::to_string(dims["base_emb_dim"]), "base_emb_dim");
    add(d.model, "intermediate_size", std::to_string(dims["base_mlp_dim"]), "base_mlp_dim");
    add(d.model, "num_attention_heads", std::to_string(dims["base_num_query_heads"]), "base_num_query_heads");
    add(d.model, "num_key_value_heads", std::to_string(dims["base_num_kv_heads"]), "base_num_kv_heads");
    add(d.model, "head_dim", std::to_string(dims["head_dim"]));
    add(d.model, "vocab_size", std::to_string(dims["vocab_size"]));
    add(d.model, "hidden_act", hidden_act, "mlp_activations " + act);
    add(d.model, "tie_word_embeddings", tied ? "true" : "false", "logits_via_embedding");
    if (dims["num_experts"] > 1) {
        add(d.model, "num_local_experts", std::to_string(dims["num_experts"]), "num_experts");
        add(d.model, "num_experts_per_tok", std::to_string(dims["num_experts_per_tok"]));
        if (moe_mlp) add(d.model, "moe_intermediate_size", std::to_string(*moe_mlp), "base_moe_mlp_dim");
    }
    const AcceleratorTraits* tr = find_accelerator(find_gpu(slice->gpu)->arch);
    add(d.cluster, "gpu", slice->gpu, options.tpu);
    add(d.cluster, "num_gpus", std::to_string(chips), fmt::format("{} slice(s) of {} chips", slices, slice->chips));
    add(d.cluster, "gpus_per_node", std::to_string(std::min(slice->chips, 4)), "4 chips per TPU VM host");
    if (!slice->torus.empty()) {
        std::string t = "[";
        for (size_t i = 0; i < slice->torus.size(); ++i) t += (i ? ", " : "") + std::to_string(slice->torus[i]);
        add(d.cluster, "torus", t + "]", "the slice's default topology (Google Cloud TPU pages)");
    }
    add(d.cluster, "intra_node", fmt::format("{{bandwidth_GBps: {}, latency_us: 1}}", tr ? tr->ici_link_GBps : 45),
        "one ICI link, one way (scaling book part 2); latency ASSUMPTION");
    add(d.cluster, "inter_node", "{bandwidth_GBps: 6.25, latency_us: 10}",
        "DCN per chip: ASSUMPTION (a 200 Gb/s NIC per host of 4 chips)");
    add(d.training, "seq_length", std::to_string(seq), "max_target_length");
    add(d.training, "global_batch_size", std::to_string(static_cast<int64_t>(global)),
        fmt::format("per_device_batch_size {} x {} chips x {} accumulation", per_device, chips, accum));
    add(d.training, "micro_batch_size", std::to_string(std::max<int64_t>(1, micro)));
    add(d.training, "precision", precision, quant.empty() ? "dtype " + dtype : "quantization " + quant);
    add(d.training, "framework", "fsdp", "JAX/XLA: sharded fp32 parameters, no per-op host cost on a TPU (assumed)");
    add(d.training, "attention", attention == "dot_product" ? "unfused" : "flash", "attention " + attention);
    add(d.parallel, "tp", std::to_string(tp), "ici/dcn tensor");
    add(d.parallel, "cp", std::to_string(cp), "ici/dcn sequence + context");
    add(d.parallel, "pp", std::to_string(pp), "ici/dcn pipeline");
    if (repeats > 1)
        add(d.parallel, "vpp", std::to_string(repeats), "num_pipeline_repeats: MaxText's circular pipeline");
    // MaxText shards the residual stream's embedding dimension over the tensor
    // axis (base.yml logical_axis_rules: activation_embed -> tensor): every
    // activation is split over tp, with an all-gather before and a
    // reduce-scatter after each block, as Megatron's sequence parallelism.
    if (tp > 1) add(d.parallel, "sequence_parallel", "true", "logical_axis_rules activation_embed -> tensor");
    if (ep > 1) add(d.parallel, "ep", std::to_string(ep), "ici/dcn expert");
    add(d.parallel, "zero", fsdp > 1 ? "3" : "0", fsdp > 1 ? "fsdp axes shard parameters and optimizer state" : "data axes replicate");
    if (fsdp > 1 && degree("dp") > 1)
        notes.push_back({NoteKind::assumed, "dcn_data_parallelism",
                         fmt::format("FSDP over {} and plain data parallelism over {}: priced as FSDP over all {} data-parallel ranks",
                                     fsdp, degree("dp"), dp)});
    add(d.parallel, "recompute", recompute, "remat_policy " + remat);
    // decoders.py get_remat_policy: the *_offloaded policies
    // (jax.checkpoint_policies.save_and_offload_only_these_names) move the
    // saved outputs to pinned host memory.
    if (remat.find("offloaded") != std::string::npos)
        add(d.parallel, "offload_activations", "true", "remat_policy " + remat + ": saved outputs offloaded to host");
    // The named tensors each policy saves (lostflops/spec.h RematPolicy).
    const std::string named = remat == "minimal_offloaded" ? "minimal" : remat == "qkv_proj_offloaded" ? "save_qkv_proj" : remat;
    for (const char* known : {"minimal", "save_dot_with_context_except_mlp", "save_dot_except_mlpwi", "save_dot_except_mlp",
                              "save_qkv_proj", "save_out_proj"})
        if (named == known) add(d.parallel, "remat_policy", named, "the named outputs each layer saves");
    ImportResult r;
    r.job_yaml = interop::render_yaml(d);
    for (auto& n : c.leftovers()) notes.push_back(std::move(n));
    r.notes = std::move(notes);
    if (options.strict) interop::refuse_unmodelled(r.notes, source);
    return r;
}

}  // namespace lostflops
