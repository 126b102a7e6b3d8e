// Text and JSON views of an Estimate. The breakdown is listed in a fixed
// order, one row per wall, with its share of the step. JSON keys carry their
// unit (docs/commands.md "JSON output"; schema version kJsonSchemaVersion). Step time
// and throughput carry their 80 % interval (lostflops/prediction_interval.h)
// and the measured nccl-tests curves that priced the collectives are named.
#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "estimate/inflight.h"
#include "job/human_format.h"

#include "lostflops/accelerator.h"
#include "lostflops/framework_rules.h"
#include "lostflops/hf_attention.h"
#include "lostflops/report.h"
#include "lostflops/run_cost.h"
#include "lostflops/run_report.h"
#include "lostflops/terminal_text.h"
#include "lostflops/walls.h"

namespace lostflops {

namespace {

std::vector<std::pair<const char*, double>> memory_rows(const Memory& m) {
    return {{"weights", m.weights_bytes},         {"gradients", m.gradients_bytes},
            {"optimizer", m.optimizer_bytes},     {"activations", m.activations_bytes},
            {"logits", m.logits_bytes},           {"buffers", m.buffers_bytes},
            {"weight_copies", m.weight_copies_bytes}, {"temporary", m.temporary_bytes}};
}

std::string gib(double bytes) { return fmt::format("{:.1f} GiB", bytes / (1024.0 * 1024 * 1024)); }

// A memory row's name in words (the JSON key with its underscore spaced).
std::string row_name(const char* key) {
    std::string s = key;
    std::replace(s.begin(), s.end(), '_', ' ');
    return s;
}

// When the rank's memory peaks, in words (lostflops/estimate.h MemoryMoment).
std::string moment_text(const Job& job, const Memory& m) {
    switch (m.moment) {
        case MemoryMoment::first_backward:
            if (job.plan.pp == 1 && (job.training.framework == Framework::hf || job.training.framework == Framework::fsdp))
                return fmt::format("the loss's backward of micro-batch {}", m.moment_micro_batch);
            if (job.plan.pp == 1) return fmt::format("the first backward of micro-batch {}", m.moment_micro_batch);
            if (maxtext_scan(job))  // the whole forward first (estimate/inflight.cpp)
                return fmt::format("its first backward: micro-batch {} of chunk {}, after all {} forward chunk passes "
                                   "(MaxText's pipeline scan runs every micro-batch's forward first)",
                                   m.moment_micro_batch, m.moment_chunk, m.warmup_passes);
            return fmt::format("its first backward: micro-batch {} of chunk {}, after {} forward chunk passes",
                               m.moment_micro_batch, m.moment_chunk, m.warmup_passes);
        case MemoryMoment::end_of_backward:
            return fmt::format("the end of the backward of micro-batch {}", m.moment_micro_batch);
        case MemoryMoment::optimizer_step: return "the optimizer step";
    }
    return "?";
}

// Three significant digits for seconds: 0.695 s, 34.4 s.
std::string seconds(double s) { return fmt::format("{:.3g}", s); }

}  // namespace

std::string memory_verdict(const Job& job, const Memory& m) {
    if (m.fits) return "";
    auto rows = memory_rows(m);
    std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    const ParallelPlan& p = job.plan;
    std::string out = fmt::format("does not fit: {} needed on pipeline rank {} but {} usable; largest: ",
                                  gib(m.peak_bytes), m.worst_stage, gib(m.capacity_bytes));
    for (size_t i = 0; i < 3 && i < rows.size(); ++i)
        out += fmt::format("{}{} {}", i ? ", " : "", row_name(rows[i].first), gib(rows[i].second));
    const double states = m.weights_bytes + m.gradients_bytes + m.optimizer_bytes;
    if (states > m.capacity_bytes) {
        out += fmt::format(". Weights, gradients and optimizer state alone take {} (tp*pp = {}, dp*cp = {}, "
                           "zero = {}): they must be split or sharded over more GPUs.",
                           gib(states), p.tp * p.pp, p.dp * p.cp, p.zero);
    } else if (m.activations_bytes > 0.3 * m.peak_bytes) {
        out += fmt::format(". Activations dominate: they would have to shrink by {} (recompute, sequence or "
                           "context parallelism, a smaller micro-batch or fewer micro-batches in flight).",
                           gib(-m.margin_bytes));
    } else {
        out += fmt::format(". The largest, {}, would have to shrink by {}.", row_name(rows[0].first), gib(-m.margin_bytes));
    }
    return out;
}

ReportExtras estimate_extras(const Job& job, const Estimate& e, const Calibration& cal,
                             std::optional<AdviceSearch> advice, ScheduleModel schedule) {
    ReportExtras extras;
    extras.curves = collective_curves(job, cal);
    // The model reader's warnings first (cmd_estimate prints them once, with the job's).
    extras.warnings = estimate_warnings(job, extras.curves);
    if (!e.memory.fits && advice) extras.advice = fit_advice(job, cal, *advice);
    if (tight_fit(e.memory) && advice) extras.savers = memory_savers(job, cal);
    if (job.training.train_tokens > 0) extras.run = run_cost(job, e);
    extras.interval = prediction_interval(job, e, cal);
    extras.host_speed = host_speed_range(job, e, cal, schedule);
    return extras;
}

std::vector<JobWarning> estimate_warnings(const Job& job, const std::vector<CollectiveCurveUse>& curves) {
    std::vector<JobWarning> out = model_warnings(job.model);
    for (auto& w : job_warnings(job)) out.push_back(std::move(w));
    // The framework's launch rules (lostflops/framework_rules.h).
    for (const RuleBreak& b : rule_breaks(job)) out.push_back({b.rule->key, rule_break_text(b)});
    for (const auto& w : collective_curve_warnings(curves)) out.push_back({"calibration.nccl", w});
    return out;
}

std::string estimate_table(const Job& job, const Estimate& e, const ReportExtras& extras) {
    const ParallelPlan& p = job.plan;
    std::string out;
    out += fmt::format("job        {}  ({})\n", terminal_text(job.name), terminal_text(job.source));
    out += fmt::format("model      {}: {} layers, hidden {}, vocab {}; {:.4g} B parameters, {:.4g} B active per token\n",
                       terminal_text(job.model.name), job.model.layers, job.model.hidden, job.model.vocab, e.params_total / 1e9,
                       e.params_active / 1e9);
    for (size_t k = 0; k < job.model.kinds().size(); ++k)
        out += fmt::format("           {} x {}\n", job.model.kind_count(static_cast<int>(k)),
                           describe(job.model.kinds()[k]));
    out += fmt::format("cluster    {} x {} ({} per node)\n", job.cluster.num_gpus, terminal_text(job.cluster.gpu.name),
                       job.cluster.gpus_per_node);
    out += fmt::format("plan       tp {} pp {} dp {} cp {} ep {} vpp {} zero {} sp {} recompute {}; "
                       "{} micro-batches of {} x {} tokens\n",
                       p.tp, p.pp, p.dp, p.cp, p.ep, p.vpp, p.zero, p.sequence_parallel ? "on" : "off",
                       to_string(p.recompute), e.micro_batches, job.training.micro_batch,
                       job.training.seq_length);
    if (p.recompute == Recompute::full && p.recompute_layers >= 0)
        out += fmt::format("           recompute only {} layers of each virtual stage\n", p.recompute_layers);
    // transformers' own attention, its scores in memory, is the unfused path
    // whatever the key says; its SDPA runs a sliding window as a masked square.
    const std::string attention =
        hf_attention_keeps_scores(job.model, job.training) ? "eager (scores in memory) attention"
        : hf_sdpa_masks_windows(job.model, job.training)
            ? std::string(to_string(job.training.attention)) + " attention (SDPA: sliding windows as a masked square)"
            : std::string(to_string(job.training.attention)) + " attention";
    // fp8: the recipe (lostflops/fp8_recipe.h), which sets the GEMM format and the casts.
    const std::string fp8 = job.training.precision == Precision::fp8
                                ? fmt::format("fp8 {} scaling, ", to_string(job.training.fp8_recipe))
                                : std::string();
    out += fmt::format("kernels    {}, {}{}, TP overlap {}, DP overlap {}, {} main gradients\n",
                       to_string(job.training.framework), fp8, attention,
                       p.tp_comm_overlap ? "on" : "off",
                       p.overlap_grad_reduce ? "on" : "off", p.grad_fp32 ? "fp32" : "16-bit");
    out += "\n";
    if (extras.interval && extras.interval->residuals > 0 && !extras.interval->calibrated) {
        const PredictionInterval& iv = *extras.interval;
        out += fmt::format("step time            {:10.4f} s\n", e.step_time_s);
        out += fmt::format("tokens/s per GPU     {:>10}\n", grouped(e.tokens_per_s_per_gpu));
        out += fmt::format("                     interval not calibrated: {}; the published runs' band ({:+.0f} % to "
                           "{:+.0f} %, {}) does not apply\n",
                           iv.outside, iv.error_p10_pct, iv.error_p90_pct, iv.regime);
    } else if (extras.interval && extras.interval->residuals > 0) {
        const PredictionInterval& iv = *extras.interval;
        out += fmt::format("step time            {:10.4f} s   ({}–{} s)\n", e.step_time_s, seconds(iv.step_time_s_lo),
                           seconds(iv.step_time_s_hi));
        out += fmt::format("tokens/s per GPU     {:>10}     ({}–{})\n", grouped(e.tokens_per_s_per_gpu),
                           grouped(iv.tokens_per_s_per_gpu_lo), grouped(iv.tokens_per_s_per_gpu_hi));
        out += fmt::format("                     80 % interval from {} held-out runs of {} sources ({}): errors "
                           "{:+.0f} % to {:+.0f} %\n",
                           iv.residuals, iv.sources, iv.regime, iv.error_p10_pct, iv.error_p90_pct);
    } else {
        out += fmt::format("step time            {:10.4f} s\n", e.step_time_s);
        out += fmt::format("tokens/s per GPU     {:>10}\n", grouped(e.tokens_per_s_per_gpu));
    }
    if (extras.host_speed) {
        const HostSpeedRange& h = *extras.host_speed;
        out += fmt::format("                     host speed: with {:.2f}–{:.2f} x the calibrated CPU time per operator (the "
                           "spread of one machine's runs) the step is {}–{} s ({}–{} tokens/s per GPU)\n",
                           h.factor_lo, h.factor_hi, seconds(h.step_time_s_lo), seconds(h.step_time_s_hi),
                           grouped(h.tokens_per_s_per_gpu_lo), grouped(h.tokens_per_s_per_gpu_hi));
    }
    out += fmt::format("MFU                  {:10.1f} %   ({:.1f} model TFLOP/s per GPU)\n", 100 * e.mfu,
                       e.model_tflops_per_gpu);
    out += fmt::format("HFU                  {:10.1f} %   ({:.1f} hardware TFLOP/s per GPU)\n", 100 * e.hfu,
                       e.hardware_tflops_per_gpu);
    out += "\nwhere the step goes\n";
    for (const WallInfo& w : kWalls) {
        const double s = e.breakdown.*w.seconds;
        if (s <= 0) continue;
        out += fmt::format("  {:<18} {:10.4f} s  {:5.1f} %\n", w.name, s, 100 * s / e.step_time_s);
    }
    if (!extras.curves.empty()) {
        out += "\ncollectives priced by measured nccl-tests curves\n";
        const std::string text = collective_curves_text(extras.curves);
        for (std::size_t at = 0; at < text.size();) {
            const std::size_t end = text.find('\n', at);
            out += "  " + text.substr(at, end - at + 1);
            at = end == std::string::npos ? text.size() : end + 1;
        }
    }
    const Memory& m = e.memory;
    out += fmt::format("\nmemory per GPU (pipeline rank {}, at {})\n", m.worst_stage, moment_text(job, m));
    for (const auto& [name, b] : memory_rows(m)) {
        if (b == 0 && (std::string_view(name) == "weight_copies" || std::string_view(name) == "temporary")) continue;
        out += fmt::format("  {:<18} {:>10}\n", row_name(name), gib(b));
    }
    out += fmt::format("  {:<18} {:>10} (what the allocator hands out)\n", "allocated", gib(m.allocated_bytes));
    out += fmt::format("  {:<18} {:>10} of {} usable{}: {}\n", "reserved", gib(m.peak_bytes), gib(m.usable_bytes),
                       m.headroom_bytes > 0 ? fmt::format(" less {} headroom", gib(m.headroom_bytes)) : "",
                       m.fits ? fmt::format("fits with {} spare", gib(m.margin_bytes))
                              : fmt::format("DOES NOT FIT by {}", gib(-m.margin_bytes)));
    if (!m.fits) out += "  " + memory_verdict(job, m) + "\n";
    if (const std::string why = memory_assumption(job, m); !why.empty()) out += "  " + why + "\n";
    if (tight_fit(m)) {
        out += fmt::format("  tight: the spare is under {:.0f} % of the usable memory, the ledger's error on measured "
                           "peaks (docs/memory.md); --headroom asks for a margin\n",
                           100 * kTightMarginShare);
        if (!extras.savers.empty()) {
            out += "  if it runs out of memory, each change alone (re-estimated; fastest first):\n";
            std::string text = memory_savers_text(extras.savers, 4);
            for (std::size_t at = 0; at < text.size();) {
                const std::size_t end = text.find('\n', at);
                out += "  " + text.substr(at, end - at + 1);
                at = end == std::string::npos ? text.size() : end + 1;
            }
        }
    }
    if (extras.advice) {
        out += "\n";
        std::string text = fit_advice_text(*extras.advice);
        for (std::size_t at = 0; at < text.size();) {
            const std::size_t end = text.find('\n', at);
            out += "  " + text.substr(at, end - at + 1);
            at = end == std::string::npos ? text.size() : end + 1;
        }
    }
    if (extras.run) {
        out += fmt::format("\nwhole run: {:.4g} tokens (run: section)\n", job.training.train_tokens);
        std::string text = run_table(*extras.run, std::nullopt, device_noun(job.cluster.gpu.arch));
        for (std::size_t at = 0; at < text.size();) {
            const std::size_t end = text.find('\n', at);
            out += (end == at ? "" : "  ") + text.substr(at, end - at + 1);
            at = end == std::string::npos ? text.size() : end + 1;
        }
    }
    return out;
}

std::string json_text(const nlohmann::json& j, int indent) {
    return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

nlohmann::json estimate_json(const Job& job, const Estimate& e, const ReportExtras& extras) {
    nlohmann::json j;
    j["schema_version"] = kJsonSchemaVersion;
    j["job"] = job_json(job);
    j["step_time_s"] = e.step_time_s;
    j["tokens_per_step"] = e.tokens_per_step;
    j["tokens_per_s_per_gpu"] = e.tokens_per_s_per_gpu;
    if (extras.interval && extras.interval->residuals > 0) {
        const PredictionInterval& iv = *extras.interval;
        j["step_time_s_range"] = {iv.step_time_s_lo, iv.step_time_s_hi};
        j["tokens_per_s_per_gpu_range"] = {iv.tokens_per_s_per_gpu_lo, iv.tokens_per_s_per_gpu_hi};
        j["prediction_interval"] = {{"level", 0.8},
                                    {"regime", iv.regime},
                                    {"residuals", iv.residuals},
                                    {"error_p10_pct", iv.error_p10_pct},
                                    {"error_p90_pct", iv.error_p90_pct},
                                    {"calibrated", iv.calibrated}};
        if (!iv.calibrated) j["prediction_interval"]["outside"] = iv.outside;
    }
    if (extras.host_speed) {
        const HostSpeedRange& h = *extras.host_speed;
        j["host_speed_range"] = {{"factor", {h.factor_lo, h.factor_hi}},
                                 {"step_time_s", {h.step_time_s_lo, h.step_time_s_hi}},
                                 {"tokens_per_s_per_gpu", {h.tokens_per_s_per_gpu_lo, h.tokens_per_s_per_gpu_hi}}};
    }
    if (!extras.curves.empty()) j["collective_curves"] = collective_curves_json(extras.curves);
    j["mfu"] = e.mfu;
    j["hfu"] = e.hfu;
    j["model_tflops_per_gpu"] = e.model_tflops_per_gpu;
    j["hardware_tflops_per_gpu"] = e.hardware_tflops_per_gpu;
    j["model_flops_per_step"] = e.model_flops_per_step;
    j["hardware_flops_per_step"] = e.hardware_flops_per_step;
    j["micro_batches_per_step"] = e.micro_batches;
    j["bubble_fraction"] = e.bubble_fraction;
    j["params_total"] = e.params_total;
    j["params_active"] = e.params_active;
    j["params_embedding"] = e.params_embedding;
    j["params_output"] = e.params_output;
    j["params_mtp"] = e.params_mtp;
    nlohmann::json b = nlohmann::json::object();
    for (const WallInfo& w : kWalls) b[w.estimate_key] = e.breakdown.*w.seconds;
    j["breakdown"] = b;
    const Memory& m = e.memory;
    nlohmann::json mem;
    for (const auto& [name, v] : memory_rows(m)) mem[std::string(name) + "_bytes"] = v;
    mem["peak_bytes"] = m.peak_bytes;
    mem["capacity_bytes"] = m.capacity_bytes;
    mem["fits"] = m.fits;
    mem["worst_pipeline_rank"] = m.worst_stage;
    mem["allocated_bytes"] = m.allocated_bytes;
    mem["reserved_bytes"] = m.reserved_bytes;
    mem["usable_bytes"] = m.usable_bytes;
    mem["headroom_bytes"] = m.headroom_bytes;
    mem["margin_bytes"] = m.margin_bytes;
    mem["tight"] = tight_fit(m);
    mem["outside_allocator_bytes"] = m.outside_allocator_bytes;
    mem["moment"] = to_string(m.moment);
    mem["moment_micro_batch"] = m.moment_micro_batch;
    mem["moment_chunk"] = m.moment_chunk;
    mem["moment_text"] = moment_text(job, m);
    if (!m.fits) mem["verdict"] = memory_verdict(job, m);
    mem["inflight_micro_batches"] = m.inflight_microbatches;
    mem["warmup_forward_passes"] = m.warmup_passes;
    if (job.plan.zero >= 3) {
        mem["zero_live_params"] = m.zero_live_params;
        mem["zero_live_bytes"] = m.zero_live_bytes;
    }
    if (const std::string why = memory_assumption(job, m); !why.empty()) mem["deciding_assumption"] = why;
    j["memory"] = mem;
    nlohmann::json warnings = nlohmann::json::array();
    for (const auto& w : extras.warnings) warnings.push_back({{"key", w.key}, {"message", w.message}});
    j["warnings"] = warnings;
    if (extras.run) j["run"] = run_json(*extras.run);
    if (extras.advice) j.update(fit_advice_json(*extras.advice));
    if (!extras.savers.empty()) j["memory_savers"] = plan_changes_json(extras.savers);
    return j;
}

}  // namespace lostflops
