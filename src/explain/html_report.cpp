// The HTML report: one self-contained document (inline CSS and SVG; no
// script, font or other resource fetched) with the waterfall, the roofline,
// the pipeline timeline and the memory per rank, each chart followed by a
// table of the same figures as its text alternative. Colours come from CSS
// custom properties with a dark variant (prefers-color-scheme, Media Queries
// Level 5) and a print variant; the palette is Okabe & Ito's colour-blind
// safe set (Okabe & Ito 2008, "Color Universal Design").
#include <algorithm>

#include <fmt/format.h>

#include "explain/charts.h"
#include "explain/report_data.h"
#include "explain/svg.h"
#include "lostflops/pipeline_schedules.h"
#include "lostflops/error.h"
#include "lostflops/explain.h"
#include "lostflops/job.h"
#include "lostflops/pipeline_timeline.h"

namespace lostflops {

namespace {

constexpr const char* kStyle = R"css(
:root { color-scheme: light dark;
  --bg: #ffffff; --fg: #1b1f24; --muted: #57606a; --grid: #d0d7de; --panel: #f6f8fa;
  --c1: #0072b2; --c2: #e69f00; --c3: #009e73; --c4: #cc79a7; --c5: #56b4e9; --c6: #d55e00; --c7: #999999; --c8: #f0e442;
  --loss: #d55e00; --gain: #009e73; --total: #8c959f; --mfu: #0072b2; --idle: #eef1f4; }
@media (prefers-color-scheme: dark) { :root {
  --bg: #0d1117; --fg: #e6edf3; --muted: #9da7b3; --grid: #30363d; --panel: #161b22;
  --c1: #56b4e9; --c2: #f0c05a; --c3: #3cc9a0; --c4: #e39ac6; --c5: #8fd0f5; --c6: #ff8a4c; --c7: #8b949e; --c8: #f0e442;
  --loss: #ff8a4c; --gain: #3cc9a0; --total: #6e7681; --mfu: #56b4e9; --idle: #1c2128; } }
@media print { :root { --bg: #fff; --fg: #000; --muted: #333; --grid: #ccc; --panel: #fff; --idle: #f2f2f2; }
  section { break-inside: avoid; } .table-scroll { overflow: visible; } }
body { background: var(--bg); color: var(--fg); font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif;
  margin: 0 auto; padding: 16px 24px; max-width: 1040px; overflow-wrap: break-word; }
.table-scroll { max-width: 100%; overflow-x: auto; margin: 6px 0 8px; }
.table-scroll:focus-visible { outline: 2px solid var(--c1); outline-offset: 2px; }
.table-scroll > table { margin: 0; }
h1 { font-size: 22px; margin: 8px 0 4px; } h2 { font-size: 17px; margin: 28px 0 6px; }
p.sub { color: var(--muted); margin: 0 0 12px; }
.kpis { display: flex; flex-wrap: wrap; gap: 10px; margin: 12px 0; }
.kpi { background: var(--panel); border: 1px solid var(--grid); border-radius: 6px; padding: 8px 12px; min-width: 130px; }
.kpi b { display: block; font-size: 20px; } .kpi span { color: var(--muted); font-size: 12px; }
svg.chart { max-width: 100%; height: auto; display: block; margin: 8px 0; }
svg text { fill: var(--fg); font-size: 12px; font-family: inherit; }
svg text.axis, svg text.note { fill: var(--muted); font-size: 11px; } svg text.legend { font-size: 11px; }
svg text.strong { font-weight: 700; }
svg text.label { paint-order: stroke; stroke: var(--bg); stroke-width: 3px; stroke-linejoin: round; }
svg .grid { stroke: var(--grid); stroke-width: 1; } svg .connector { stroke: var(--muted); stroke-width: 1; }
svg .wf-total { fill: var(--total); } svg .wf-loss { fill: var(--loss); } svg .wf-gain { fill: var(--gain); }
svg .wf-mfu { fill: var(--mfu); }
svg .roof { fill: none; stroke: var(--fg); stroke-width: 2; } svg .ridge { stroke: var(--muted); stroke-dasharray: 4 3; }
svg .pt { stroke: var(--bg); stroke-width: 1.5; } svg .pt0 { fill: var(--c1); } svg .pt1 { fill: var(--c2); }
svg .pt2 { fill: var(--c3); }
svg .tl-idle { fill: var(--idle); } svg .tl-fwd { fill: var(--c1); } svg .tl-bwd { fill: var(--c3); }
svg .tl-rec { fill: var(--c2); } svg .tl-comm { fill: var(--c4); } svg .tl-host { fill: var(--c7); }
svg .tl-dp { fill: var(--c6); } svg .tl-opt { fill: var(--c8); } svg .odd { fill-opacity: 0.7; }
svg .mem0 { fill: var(--c1); } svg .mem1 { fill: var(--c5); } svg .mem2 { fill: var(--c2); } svg .mem3 { fill: var(--c3); }
svg .mem4 { fill: var(--c4); } svg .mem5 { fill: var(--c7); }
svg [class^="memline"] { fill: none; stroke-width: 2; }
svg .memline0 { stroke: var(--c1); } svg .memline1 { stroke: var(--c2); } svg .memline2 { stroke: var(--c3); }
svg .memline3 { stroke: var(--c4); } svg .memline4 { stroke: var(--c5); } svg .memline5 { stroke: var(--c6); }
svg .memline6 { stroke: var(--c7); } svg .memline7 { stroke: var(--c8); }
svg .memkey0 { fill: var(--c1); } svg .memkey1 { fill: var(--c2); } svg .memkey2 { fill: var(--c3); }
svg .memkey3 { fill: var(--c4); } svg .memkey4 { fill: var(--c5); } svg .memkey5 { fill: var(--c6); }
svg .memkey6 { fill: var(--c7); } svg .memkey7 { fill: var(--c8); }
.banner { border-radius: 6px; padding: 10px 14px; margin: 12px 0; font-weight: 600; }
.banner.bad { background: #d1242f; color: #ffffff; }
ul.warnings { padding-left: 20px; } ul.warnings code { font-size: 12px; }
svg .memmeasured { fill: none; stroke: var(--fg); stroke-width: 1.5; } svg .memkeymeasured { fill: var(--fg); }
svg .memmeasuredresv { fill: none; stroke: var(--muted); stroke-width: 1.5; stroke-dasharray: 5 3; }
svg .memkeymeasuredresv { fill: var(--muted); }
svg .curve { fill: none; stroke: var(--c1); stroke-width: 2; }
svg .capacity { stroke: var(--loss); stroke-width: 2; stroke-dasharray: 6 4; }
table { border-collapse: collapse; margin: 6px 0 8px; font-size: 13px; }
th, td { border-bottom: 1px solid var(--grid); padding: 3px 10px; text-align: right; }
th:first-child, td:first-child { text-align: left; } th.args { text-align: left; } caption { text-align: left; color: var(--muted); padding: 2px 0; }
code { font-size: 12px; } td.args { text-align: left; }
footer { color: var(--muted); font-size: 12px; margin-top: 28px; }
@media (max-width: 760px) { body { padding: 12px; } th, td { padding: 3px 6px; } }
)css";

std::string esc(const std::string& s) { return xml_escape(s); }

std::string waterfall_table(const Explanation& x) {
    std::string t = "<table><caption>MFU waterfall (text alternative of the chart)</caption>"
                    "<thead><tr><th scope=\"col\">step</th><th scope=\"col\">points of peak</th>"
                    "<th scope=\"col\">s per step</th><th scope=\"col\">MFU left</th></tr></thead><tbody>";
    double left = 100;
    t += "<tr><td>dense peak</td><td></td><td></td><td>100.0 %</td></tr>";
    for (const auto& w : x.waterfall) {
        left -= w.pp;
        t += fmt::format("<tr><td>{}</td><td>{:+.2f}</td><td>{:.4f}</td><td>{:.1f} %</td></tr>", esc(w.name), -w.pp, w.s,
                         left);
    }
    t += fmt::format("<tr><th scope=\"row\">predicted MFU</th><td></td><td>{:.4f}</td><td>{:.1f} %</td></tr>",
                     x.step_time_s, 100 * x.mfu);
    return scroll_table(t + "</tbody></table>");
}

std::string levers_table(const Explanation& x) {
    if (x.levers.empty()) return "<p>No single candidate change both fits in memory and raises the MFU.</p>";
    std::string t = "<table><caption>The three biggest levers, each re-estimated with the model</caption><thead><tr>"
                    "<th scope=\"col\">change</th><th scope=\"col\">MFU after</th><th scope=\"col\">gain</th>"
                    "<th scope=\"col\">step time</th><th scope=\"col\">arguments</th></tr></thead><tbody>";
    for (const auto& l : x.levers) {
        std::string args;
        for (const auto& s : l.set) {
            if (!args.empty()) args += ' ';
            args += "--set " + s;
        }
        t += fmt::format("<tr><td>{}</td><td>{:.1f} %</td><td>{:+.1f} points</td><td>{:.3f} s</td><td class=\"args\"><code>{}</code></td></tr>",
                         esc(l.change), 100 * l.mfu_after, 100 * (l.mfu_after - x.mfu), l.step_time_s, esc(args));
    }
    return scroll_table(t + "</tbody></table>");
}

std::string roofline_table(const Roofline& r) {
    std::string t = fmt::format("<table><caption>Roofline points; dense peak {:.0f} TFLOP/s, HBM {:.0f} GB/s, ridge "
                                "{:.0f} FLOP/byte</caption><thead><tr><th scope=\"col\">operator class</th>"
                                "<th scope=\"col\">FLOP/byte</th><th scope=\"col\">TFLOP/s</th><th scope=\"col\">"
                                "share of its roof</th><th scope=\"col\">ms per layer and micro-batch</th></tr></thead><tbody>",
                                r.peak_flops / 1e12, r.hbm_Bps / 1e9, r.ridge_flop_per_byte());
    // Left of the ridge a class is bound by HBM: its figure is the share of
    // the bandwidth it streams (FLOP/s over FLOP/byte); right of it, the
    // share of the dense peak.
    for (const auto& p : r.points) {
        const bool memory_bound = p.flop_per_byte < r.ridge_flop_per_byte();
        const std::string share =
            memory_bound ? fmt::format("{:.1f} % of HBM bandwidth", 100 * p.achieved_flop_per_s / p.flop_per_byte / r.hbm_Bps)
                         : fmt::format("{:.1f} % of peak FLOP/s", 100 * p.achieved_flop_per_s / r.peak_flops);
        t += fmt::format("<tr><td>{}</td><td>{:.1f}</td><td>{:.1f}</td><td>{}</td><td>{:.3f}</td></tr>", esc(p.name),
                         p.flop_per_byte, p.achieved_flop_per_s / 1e12, share, 1e3 * p.time_s);
    }
    return scroll_table(t + "</tbody></table>");
}

std::string timeline_table(const StepTimeline& tl) {
    std::string t = "<table><caption>Time per pipeline rank in the simulated step (text alternative of the "
                    "timeline)</caption><thead><tr><th scope=\"col\">rank</th>";
    const SegmentKind kinds[] = {SegmentKind::forward, SegmentKind::backward, SegmentKind::recompute, SegmentKind::comm,
                                 SegmentKind::host_wait, SegmentKind::dp_comm, SegmentKind::optimizer};
    for (const auto k : kinds) t += fmt::format("<th scope=\"col\">{} s</th>", to_string(k));
    t += "<th scope=\"col\">idle s</th></tr></thead><tbody>";
    for (int r = 0; r < tl.stages; ++r) {
        double sum[7] = {}, busy = 0;
        for (const auto& s : tl.segments) {
            if (s.rank != r) continue;
            sum[static_cast<int>(s.kind)] += s.end_s - s.start_s;
            busy += s.end_s - s.start_s;
        }
        t += fmt::format("<tr><td>{}</td>", r);
        for (const auto k : kinds) t += fmt::format("<td>{:.3f}</td>", sum[static_cast<int>(k)]);
        t += fmt::format("<td>{:.3f}</td></tr>", tl.step_s - busy);
    }
    return scroll_table(t + "</tbody></table>");
}

std::string memory_table(const std::vector<Memory>& ranks) {
    constexpr double kGiB = 1024.0 * 1024 * 1024;
    std::string t = "<table><caption>Memory per GPU by pipeline rank, GiB (text alternative of the chart)</caption>"
                    "<thead><tr><th scope=\"col\">rank</th><th scope=\"col\">weights</th><th scope=\"col\">gradients"
                    "</th><th scope=\"col\">optimizer</th><th scope=\"col\">activations</th><th scope=\"col\">logits"
                    "</th><th scope=\"col\">buffers</th><th scope=\"col\">peak</th><th scope=\"col\">usable</th>"
                    "</tr></thead><tbody>";
    for (size_t i = 0; i < ranks.size(); ++i) {
        const Memory& m = ranks[i];
        t += fmt::format("<tr><td>{}</td><td>{:.1f}</td><td>{:.1f}</td><td>{:.1f}</td><td>{:.1f}</td><td>{:.1f}</td>"
                         "<td>{:.1f}</td><td>{:.1f}</td><td>{:.1f}</td></tr>",
                         i, m.weights_bytes / kGiB, m.gradients_bytes / kGiB, m.optimizer_bytes / kGiB,
                         m.activations_bytes / kGiB, m.logits_bytes / kGiB, m.buffers_bytes / kGiB, m.peak_bytes / kGiB,
                         m.capacity_bytes / kGiB);
    }
    return scroll_table(t + "</tbody></table>");
}

// The measured peaks against the predicted (text alternative of the
// measured lines; `trace --job`'s memory rows).
std::string measured_table(const MeasuredMemory& m, const Memory& predicted) {
    constexpr double kGiB = 1024.0 * 1024 * 1024;
    std::string t = fmt::format("<table><caption>Measured (rank {} of {}) against predicted peak memory, GiB</caption>"
                                "<thead><tr><th scope=\"col\">peak</th><th scope=\"col\">measured</th>"
                                "<th scope=\"col\">predicted</th><th scope=\"col\">predicted − measured</th></tr>"
                                "</thead><tbody>",
                                m.rank, esc(m.source));
    const auto row = [&](const char* what, double measured, double pred) {
        t += fmt::format("<tr><td>{}</td><td>{:.2f}</td><td>{:.2f}</td><td>{}</td></tr>", what, measured / kGiB,
                         pred / kGiB, measured > 0 ? fmt::format("{:+.1f} %", 100 * (pred - measured) / measured) : "-");
    };
    row("allocated", m.peak_allocated_bytes, predicted.allocated_bytes);
    row("reserved", m.peak_reserved_bytes, predicted.reserved_bytes);
    return scroll_table(t + "</tbody></table>");
}

std::string scaling_table(const std::vector<ScalingPoint>& pts) {
    std::string t = "<table><caption>Best plan at each GPU count (text alternative of the curve)</caption><thead><tr>"
                    "<th scope=\"col\">GPUs</th><th scope=\"col\">tokens/s per GPU</th><th scope=\"col\">MFU</th>"
                    "<th scope=\"col\">step time</th><th scope=\"col\" class=\"args\">plan</th></tr></thead><tbody>";
    for (const auto& p : pts) {
        if (!p.fits) {
            t += fmt::format("<tr><td>{}</td><td colspan=\"4\" class=\"args\">no plan fits</td></tr>", p.num_gpus);
            continue;
        }
        t += fmt::format("<tr><td>{}</td><td>{:.0f}</td><td>{:.1f} %</td><td>{:.3f} s</td><td class=\"args\">{}</td></tr>",
                         p.num_gpus, p.best.tokens_per_s_per_gpu, 100 * p.best.mfu, p.best.step_time_s,
                         esc(plan_words(p.best.plan, p.best.micro_batch)));
    }
    return scroll_table(t + "</tbody></table>");
}

}  // namespace

const char* report_css() { return kStyle; }

std::string scroll_table(const std::string& table) {
    // The caption (already escaped, no markup) names the region for a screen reader.
    const auto open = table.find("<caption>"), close = table.find("</caption>");
    std::string label = "table";
    if (open != std::string::npos && close != std::string::npos && close > open) {
        const std::string caption = table.substr(open + 9, close - open - 9);
        if (caption.find('<') == std::string::npos) label = caption;
    }
    return fmt::format("<div class=\"table-scroll\" role=\"region\" tabindex=\"0\" aria-label=\"{}\">{}</div>", label,
                       table);
}

std::string html_report(const JobSource& src, const Calibration& cal, const std::vector<int>& scaling_gpus,
                        const std::function<void(double)>& progress, const std::vector<trace::RankReport>& traces) {
    const MeasuredMemory measured = measured_memory(traces);
    if (!traces.empty() && measured.empty())
        throw InputError(traces.front().source, "[memory]",
                         "no [memory] events of a CUDA device: record the trace with "
                         "torch.profiler.profile(profile_memory=True) to draw its memory");
    const Job job = load_job_source(src);
    const Estimate e = estimate(job, cal);
    const Explanation x = explain(src, job, cal, e);
    const Roofline rl = roofline(job, cal);
    // A step of more passes than a timeline records (gpt3-175b on 128 GPUs,
    // pp 16, vpp 6, 12,288 micro-batches: 1.2 million) is described, not drawn.
    const long long passes = 1LL * job.plan.pp * job.plan.vpp * e.micro_batches;
    const bool drawn = passes <= kMaxTimelinePasses;
    const StepTimeline tl = drawn ? step_timeline(job, cal, e) : StepTimeline{};
    const std::vector<Memory> mem = memory_per_rank(job, cal);
    const ParallelPlan& p = job.plan;
    const std::string name = job.name.empty() ? "job" : job.name;

    std::string h = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
                    "<meta name=\"color-scheme\" content=\"light dark\">";
    h += fmt::format("<title>lostflops report: {}</title><style>{}</style></head><body><main>", esc(name), kStyle);
    h += fmt::format("<h1>Where the FLOPs go: {}</h1>", esc(name));
    h += fmt::format("<p class=\"sub\">{} × {} · {} · tp {} · pp {} · vpp {} · dp {} · cp {} · ep {} · ZeRO {} · "
                     "recompute {} · micro-batch {} · {} micro-batches per step</p>",
                     job.cluster.num_gpus, esc(job.cluster.gpu.name), esc(job.model.name), p.tp, p.pp, p.vpp, p.dp, p.cp,
                     p.ep, p.zero, to_string(p.recompute), job.training.micro_batch, e.micro_batches);
    if (!e.memory.fits)
        h += fmt::format("<div class=\"banner bad\" role=\"alert\">The plan does NOT fit: {:.1f} GiB reserved per GPU "
                         "(rank {}) of {:.1f} GiB usable. The figures below are for the plan as given; <code>lostflops "
                         "estimate</code> names the changes that would make it fit.</div>",
                         e.memory.peak_bytes / (1024.0 * 1024 * 1024), e.memory.worst_stage,
                         e.memory.capacity_bytes / (1024.0 * 1024 * 1024));
    h += "<div class=\"kpis\">";
    const auto kpi = [&](const std::string& v, const std::string& l) {
        h += fmt::format("<div class=\"kpi\"><b>{}</b><span>{}</span></div>", esc(v), esc(l));
    };
    kpi(fmt::format("{:.1f} %", 100 * e.mfu), "MFU (model FLOPs / dense peak)");
    kpi(fmt::format("{:.3f} s", e.step_time_s), "step time");
    kpi(fmt::format("{:.0f}", e.tokens_per_s_per_gpu), "tokens/s per GPU");
    kpi(fmt::format("{:.1f} / {:.1f} GiB", e.memory.peak_bytes / (1024.0 * 1024 * 1024),
                    e.memory.capacity_bytes / (1024.0 * 1024 * 1024)),
        e.memory.fits ? "peak memory per GPU (fits)" : "peak memory per GPU (does NOT fit)");
    h += "</div>";
    // Estimate's warnings (keys not modelled, settings that do nothing or cost much, launch rules).
    if (!x.warnings.empty()) {
        h += "<section aria-labelledby=\"h-warnings\"><h2 id=\"h-warnings\">Warnings</h2><ul class=\"warnings\">";
        for (const JobWarning& w : x.warnings)
            h += fmt::format("<li><code>{}</code>: {}</li>", esc(w.key), esc(w.message));
        h += "</ul></section>";
    }
    h += "<section aria-labelledby=\"h-waterfall\"><h2 id=\"h-waterfall\">MFU waterfall</h2>"
         "<p>From 100 % of the GPU's dense peak to the predicted MFU: every second of the step beyond the ideal "
         "(model FLOPs at peak) is charged to exactly one step.</p>";
    h += waterfall_svg(x) + waterfall_table(x) + levers_table(x) + "</section>";
    h += "<section aria-labelledby=\"h-roofline\"><h2 id=\"h-roofline\">Roofline</h2>"
         "<p>Each operator class at its arithmetic intensity and the FLOP/s the model gives it (memory-bound "
         "operators are placed at an assumed 1 FLOP per 16-bit element).</p>";
    h += roofline_svg(rl) + roofline_table(rl) + "</section>";
    h += "<section aria-labelledby=\"h-timeline\"><h2 id=\"h-timeline\">Pipeline schedule of one step</h2>";
    if (!drawn) {
        h += fmt::format("<p>Not drawn: the step has {} passes (pp {} × vpp {} × {} micro-batches), more than the "
                         "timeline simulates ({}). The estimate's pipeline bubble is {:.3f} s of the {:.3f} s step.</p>"
                         "</section>",
                         passes, p.pp, p.vpp, e.micro_batches, kMaxTimelinePasses, e.breakdown.pp_bubble_s,
                         e.step_time_s);
    } else if (p.pp == 1) {
        h += fmt::format("<p>One pipeline stage (pp 1): no pipeline and no bubble; each rank runs the forward and "
                         "backward passes of its {} micro-batches one after another, then the optimizer step.</p>",
                         e.micro_batches);
        h += timeline_svg(tl, 0, "chart-timeline", "The passes of one step") + timeline_table(tl) + "</section>";
    } else {
        // The schedule by its own name; the busiest rank's idle time next to
        // the estimate's two pipeline walls (bubble, transfers) it holds.
        const char* name = schedule_info(effective_schedule(p)).words;
        h += fmt::format("<p>Discrete-event simulation of the {} schedule: the pipeline phase takes {:.3f} s, of which "
                         "the busiest rank idles {:.3f} s = {:.1f} % of its pass time (the estimate's pipeline bubble "
                         "{:.3f} s and pipeline transfers {:.3f} s).{} A pass's communication and host wait are drawn "
                         "after its compute; in the run they interleave layer by layer.{}</p>",
                         name, tl.pipeline_s, tl.bubble_s, 100 * tl.bubble_s / tl.busy_max_s, e.breakdown.pp_bubble_s,
                         e.breakdown.pp_p2p_s,
                         standard_mapping(p)
                             ? fmt::format(" Narayanan et al.'s (p − 1)/(v·m) for uniform stages is {:.1f} %.",
                                           100.0 * (p.pp - 1) / (p.vpp * static_cast<double>(e.micro_batches)))
                             : std::string(),
                         p.vpp > 1 ? " Model chunks alternate in shade." : "");
        h += timeline_svg(tl, 0, "chart-timeline", "Pipeline schedule of one step");
        // With many passes per rank the whole step reads as stripes: the warm-up
        // up to rank 0's first backward (and as long again) shows the fill bubble.
        double first_bwd_end = tl.step_s;
        for (const Segment& s : tl.segments)
            if (s.rank == 0 && s.kind == SegmentKind::backward) first_bwd_end = std::min(first_bwd_end, s.end_s);
        if (2 * first_bwd_end < 0.6 * tl.step_s) {
            h += fmt::format("<p>The start of the step, up to {:.3f} s: the pipeline fills.</p>", 2 * first_bwd_end);
            h += timeline_svg(tl, 2 * first_bwd_end, "chart-timeline-start", "Start of the step: pipeline fill");
        }
        h += timeline_table(tl) + "</section>";
    }
    h += "<section aria-labelledby=\"h-memory\"><h2 id=\"h-memory\">Memory per pipeline rank</h2>";
    h += memory_svg(mem) + memory_table(mem);
    if (drawn) {
        const Memory& peak = e.memory;
        const char* when = peak.moment == MemoryMoment::first_backward   ? "its first backward"
                           : peak.moment == MemoryMoment::end_of_backward ? "the end of its backward"
                                                                          : "the optimizer step";
        h += fmt::format("<p>Over the step: each rank's allocated memory as its passes keep and free their "
                         "activations, layer by layer. The peak is rank {}'s, at {} ({:.1f} GiB allocated, {:.1f} "
                         "GiB reserved with the allocator's cache).</p>",
                         peak.worst_stage, when, peak.allocated_bytes / (1024.0 * 1024 * 1024),
                         peak.reserved_bytes / (1024.0 * 1024 * 1024));
        if (!measured.empty())
            h += fmt::format("<p>Measured: the allocator's totals after each allocation and free in {} (rank {}, {}), "
                             "allocated solid and reserved dashed, over the predicted curves; time from the start of "
                             "that step ({:.3f} s measured with the profiler on, {:.3f} s predicted).</p>",
                             esc(measured.source), measured.rank,
                             measured.step >= 0 ? fmt::format("ProfilerStep#{}", measured.step) : "the whole trace",
                             measured.step_s, tl.step_s);
        h += memory_time_svg(memory_over_step(job, cal, tl), peak.usable_bytes, tl.step_s, measured);
    }
    if (!measured.empty()) h += measured_table(measured, e.memory);
    h += "</section>";
    if (!scaling_gpus.empty()) {
        const auto pts = scaling_curve(src, cal, scaling_gpus, progress);
        h += "<section aria-labelledby=\"h-scaling\"><h2 id=\"h-scaling\">Scaling</h2><p>The best plan of the full "
             "search at each GPU count (model, cluster and training of this job, its parallel section searched; "
             "global batch kept), ranked by tokens/s per GPU; the MFU above each point.</p>";
        h += scaling_svg(pts, job.cluster.num_gpus, e.tokens_per_s_per_gpu) + scaling_table(pts) + "</section>";
    }
    h += measured.empty() ? "<footer>Generated by lostflops from the model alone (no measurement). Regenerate with "
                            "<code>lostflops report JOB -o FILE.html</code>; the figures as text: "
                            "<code>lostflops explain JOB</code>."
                          : "<footer>Generated by lostflops from the model, with the measured memory of a trace "
                            "(<code>lostflops report JOB --trace TRACE -o FILE.html</code>); the figures as text: "
                            "<code>lostflops explain JOB</code>, <code>lostflops trace TRACE --job JOB</code>.";
    h += "</footer></main></body></html>\n";
    return h;
}

}  // namespace lostflops
