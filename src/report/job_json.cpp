// The resolved job as JSON (the `job` object of `estimate --format json`):
// what the estimate actually used, every default and `auto` decided. Key names
// follow the job file's (docs/job-file.md) so a script can read them back;
// units in the names as in the catalogs: *_GBps = 1e9 bytes/s per GPU per
// direction, *_us, *_bytes, peak_tflops = dense 1e12 FLOP/s.
#include <cstdint>

#include <nlohmann/json.hpp>

#include "estimate/zero3_time.h"
#include "lostflops/hf_attention.h"
#include "lostflops/pipeline_schedules.h"
#include "lostflops/plan_keys.h"
#include "lostflops/report.h"
#include "lostflops/run_report.h"
#include "job/recompute_modules.h"

namespace lostflops {

namespace {

// The first kind with attention, with a dense MLP and with experts: the
// summary keys of a uniform model (and of a stack, its attention, dense and
// MoE layers); `layer_kinds` lists every kind.
nlohmann::json model_json(const Model& m) {
    const LayerKind* attn = nullptr;
    const LayerKind* dense = nullptr;
    const LayerKind* moe = nullptr;
    for (const LayerKind& k : m.kinds()) {
        if (attn == nullptr && k.has_attention()) attn = &k;
        if (dense == nullptr && !k.is_moe() && k.mlp.kind != MlpKind::none) dense = &k;
        if (moe == nullptr && k.is_moe()) moe = &k;
    }
    const Mlp* mlp = dense != nullptr ? &dense->mlp : moe != nullptr ? &moe->moe.expert : nullptr;
    nlohmann::json j = {{"name", m.name},
                        {"num_hidden_layers", m.layers},
                        {"hidden_size", m.hidden},
                        {"intermediate_size", dense != nullptr ? dense->mlp.ffn : moe != nullptr ? moe->moe.expert.ffn : 0},
                        {"num_attention_heads", attn != nullptr ? attn->attention.heads : 0},
                        {"num_key_value_heads", attn != nullptr ? attn->attention.kv_heads : 0},
                        {"head_dim", attn != nullptr ? attn->attention.head_dim : 0},
                        {"vocab_size", m.vocab},
                        {"mlp", mlp != nullptr && mlp->kind == MlpKind::gated ? "gated" : "gelu"},
                        {"tie_word_embeddings", m.tied_embeddings},
                        {"num_local_experts", m.max_experts()}};
    if (moe != nullptr) {
        j["num_experts_per_tok"] = moe->moe.top_k;
        j["moe_intermediate_size"] = moe->moe.expert.ffn;
    }
    if (mlp != nullptr) j["hidden_act"] = to_string(mlp->act);
    if (m.mtp_layers > 0) j["num_nextn_predict_layers"] = m.mtp_layers;
    if (m.embed_dim > 0) j["word_embed_proj_dim"] = m.embed_dim;
    if (m.positions > 0) j["position_embeddings"] = m.positions;
    nlohmann::json kinds = nlohmann::json::array();
    for (size_t k = 0; k < m.kinds().size(); ++k) {
        const LayerKind& kind = m.kinds()[k];
        kinds.push_back({{"layers", m.kind_count(static_cast<int>(k))},
                         {"mixer", to_string(kind.mixer)},
                         {"mlp", kind.is_moe() ? "moe" : to_string(kind.mlp.kind)},
                         {"description", describe(kind)}});
    }
    j["layer_kinds"] = kinds;
    nlohmann::json notes = nlohmann::json::array();
    if (m.not_modelled)
        for (const auto& n : *m.not_modelled)  // the reader's other warnings are the estimate's `warnings`
            if (n.kind == Model::NotModelled::Kind::not_modelled) notes.push_back({{"key", n.key}, {"why", n.why}});
    j["not_modelled"] = notes;
    return j;
}

nlohmann::json link_json(const Link& l) {
    return {{"bandwidth_GBps", l.bandwidth_GBps}, {"latency_us", l.latency_us}};
}

nlohmann::json cluster_json(const Cluster& c, Precision precision) {
    const Gpu& g = c.gpu;
    nlohmann::json peak = {{"fp16", g.peak_fp16_tflops}, {"bf16", g.peak_bf16_tflops}};
    if (g.peak_fp8_tflops > 0) peak["fp8"] = g.peak_fp8_tflops;
    if (g.peak_tf32_tflops > 0) peak["tf32"] = g.peak_tf32_tflops;
    if (g.peak_fp32_tflops > 0) peak["fp32"] = g.peak_fp32_tflops;
    const nlohmann::json gpu = {{"name", g.name},
                                {"arch", g.arch},
                                {"peak_tflops", peak},
                                {"peak_tflops_used", g.peak_tflops(precision)},
                                {"memory_bytes", g.memory_bytes},
                                {"hbm_GBps", g.hbm_GBps},
                                {"nvlink_GBps", g.nvlink_GBps},
                                {"sm_count", g.sm_count},
                                {"tdp_w", g.tdp_w}};
    nlohmann::json out = {{"name", c.name},
                          {"gpu", gpu},
                          {"num_gpus", c.num_gpus},
                          {"gpus_per_node", c.gpus_per_node},
                          {"nodes", (c.num_gpus + c.gpus_per_node - 1) / c.gpus_per_node},
                          {"intra_node", link_json(c.intra_node)},
                          {"inter_node", link_json(c.inter_node)}};
    if (c.nvlink_domain > 0) out["nvlink_domain"] = c.nvlink_domain;  // only when the job gives one
    if (c.torus[0] > 0) out["torus"] = c.torus;
    if (c.memory_headroom_bytes > 0 || c.memory_headroom_fraction > 0)  // only when the job asks for one
        out["memory_headroom"] = {{"bytes", c.memory_headroom_bytes}, {"fraction", c.memory_headroom_fraction}};
    return out;
}

nlohmann::json training_json(const Job& job) {
    const Training& t = job.training;
    return {{"seq_length", t.seq_length},
            {"global_batch_size", t.global_batch},
            {"micro_batch_size", t.micro_batch},
            {"precision", to_string(t.precision)},
            // The fp8 scaling recipe (lostflops/fp8_recipe.h); null unless precision fp8.
            {"fp8_recipe", t.precision == Precision::fp8 ? nlohmann::json(to_string(t.fp8_recipe)) : nlohmann::json()},
            {"fp8_recipe_from_auto",
             t.precision == Precision::fp8 ? nlohmann::json(t.fp8_recipe_auto) : nlohmann::json()},
            {"train_tokens", t.train_tokens},
            {"attention", to_string(t.attention)},
            {"attention_from_auto", t.attention_auto},
            // transformers' own attention, its scores in memory (framework hf; hf_attention.h hf_attention_keeps_scores).
            {"attention_scores_in_memory", hf_attention_keeps_scores(job.model, t)},
            // transformers' SDPA given a sliding window or chunk as an explicit mask (hf_attention.h hf_sdpa_masks_window).
            {"attention_windows_masked", hf_sdpa_masks_windows(job.model, t)},
            {"causal_flops", t.causal_flops},
            {"framework", to_string(t.framework)},
            {"framework_from_auto", t.framework_auto},
            {"optimizer", to_string(t.optimizer)},
            {"optimizer_from_auto", t.optimizer_auto},
            {"optimizer_kernel", to_string(t.optimizer_kernel)},
            {"compile", t.compile},
            {"cuda_graphs", t.cuda_graphs},
            {"use_cache", t.use_cache},
            {"holds_outputs", t.holds_outputs},
            {"data_loader_s_per_sequence", t.data_loader_s_per_sequence},
            {"data_loader_workers", t.data_loader_workers},
            {"data_loader_workers_from_auto", t.data_loader_workers_auto}};
}

}  // namespace

// The plan's keys as the table shows them (lostflops/plan_keys.h
// PlanKeyEcho), then the values resolved for the estimate where a key's own
// value is not what it used. Objects sort their keys: the order is not the
// table's.
nlohmann::json parallel_json(const Job& job) {
    const ParallelPlan& p = job.plan;
    const bool moe = job.model.is_moe();
    const auto shown = [&](const PlanKey& k) {
        if (k.experts_only && !moe) return false;
        switch (k.echo) {
            case PlanKeyEcho::always: return true;
            case PlanKeyEcho::deepep: return p.moe_dispatcher == MoeDispatcher::deepep;
            case PlanKeyEcho::context_parallel: return p.cp > 1;
            case PlanKeyEcho::selective: return p.recompute == Recompute::selective;
            case PlanKeyEcho::zero3: return p.zero >= 3;
            case PlanKeyEcho::resolved:  // below
            case PlanKeyEcho::never: return false;
        }
        return false;
    };
    nlohmann::json j = nlohmann::json::object();
    for (const PlanKey& k : plan_keys()) {
        if (!shown(k)) continue;
        if (k.type == PlanKeyType::special && k.field.get == nullptr) continue;  // below
        const double v = k.field.get(p);
        switch (k.type) {
            case PlanKeyType::integer:
            case PlanKeyType::special: j[k.name] = static_cast<int64_t>(v); break;
            case PlanKeyType::boolean: j[k.name] = v != 0; break;
            case PlanKeyType::number: j[k.name] = v; break;
            case PlanKeyType::choice: j[k.name] = k.choice(static_cast<int>(v)); break;
        }
    }
    j["pipeline_schedule"] = schedule_info(effective_schedule(p)).name;
    // null: every layer (with recompute: full), or no full recompute.
    j["recompute_layers"] = p.recompute == Recompute::full && p.recompute_layers >= 0 ? nlohmann::json(p.recompute_layers)
                                                                                      : nlohmann::json();
    if (p.recompute == Recompute::selective) j["recompute_modules"] = recompute_module_names(p.recompute_modules);
    if (moe) {
        // Expert layers (docs/job-file-parallel.md "Expert parallelism"): etp resolved (tp when not given).
        j["etp"] = p.expert_tp();
        j["expert_dp"] = p.expert_dp();
        j["moe_capacity_factor"] = p.moe_capacity_factor > 0 ? nlohmann::json(p.moe_capacity_factor) : nlohmann::json();
    }
    if (p.zero >= 3) {  // the framework's engine where the job leaves a key out
        const Zero3Engine e = zero3_engine(job);
        j["zero_bucket_params"] = e.bucket_params;
        j["zero_reduce_bucket_params"] = e.reduce_bucket_params;
        j["zero_prefetch"] = e.prefetch;
        j["zero_regather_recompute"] = e.regather_recompute;
        j["zero_max_live_params"] = e.max_live_params;
    }
    return j;
}

nlohmann::json job_json(const Job& job) {
    return {{"name", job.name},
            {"file", job.source},
            {"model", model_json(job.model)},
            {"cluster", cluster_json(job.cluster, job.training.precision)},
            {"training", training_json(job)},
            {"parallel", parallel_json(job)},
            {"run", run_spec_json(job)}};
}

}  // namespace lostflops
