// Triage (contract in include/lostflops/trace_triage.h): one item per cause
// with its cost, evidence and usual remedies, largest cost first. Remedies
// name the switches of the frameworks where they exist: PyTorch DDP
// (bucket_cap_mb), FSDP (forward/backward prefetch), Megatron-LM
// (--overlap-grad-reduce, --overlap-param-gather, --tp-comm-overlap),
// torch.compile (fusion; mode="reduce-overhead" for CUDA graphs).
#include "lostflops/trace_triage.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace lostflops::trace {
namespace {

double pct(double part, double whole) { return whole > 0 ? 100 * part / whole : 0; }

// Tensors made from Python data a step that read as a KV cache's (two a
// layer): four layers' worth, more than a training loop's own few.
constexpr uint64_t kMinCacheLiftsPerStep = 8;

void idle_item(const ClusterReport& c, std::vector<TriageItem>& out) {
    const double waits = c.host_wait_us + c.kernel_wait_us + c.other_wait_us;
    TriageItem t{"idle", "GPU idle (no kernel running)", pct(c.idle_us, c.span_us), "", ""};
    if (waits <= 0) {
        t.evidence = "no idle time by stream to tell the cause";
        t.to_try = "look at the trace around the gaps (Perfetto, chrome://tracing)";
        out.push_back(t);
        return;
    }
    const double host = pct(c.host_wait_us, waits), kernel = pct(c.kernel_wait_us, waits),
                 other = pct(c.other_wait_us, waits);
    t.evidence = fmt::format("of the streams' idle time: host wait {:.0f} %, kernel wait {:.0f} %, other {:.0f} %",
                             host, kernel, other);
    if (host >= kernel && host >= other) {
        t.what = "GPU idle, waiting for the host to launch work";
        t.to_try = "CUDA graphs (torch.compile mode=\"reduce-overhead\"); fewer host syncs (.item(), .cpu(), "
                   "printing tensors) in the step; faster input (more DataLoader workers, pin_memory, prefetch)";
        // transformers' KV cache in the training forward (lostflops/trace_stack.h):
        // its empty keys and values are tensors made from Python data, two a
        // decoder layer and step, in a model whose norms run as eager chains.
        const auto lift = c.stack_markers[kMarkLiftFresh];
        if (c.marked_steps > 0 && c.stack_markers[kMarkEagerNorm] > 0 &&
            lift >= kMinCacheLiftsPerStep * static_cast<uint64_t>(c.marked_steps))
            t.to_try += fmt::format("; use_cache=False in the model's forward (transformers builds a KV cache in "
                                    "training: {} aten::lift_fresh events in {} steps, two a decoder layer, each "
                                    "with a torch.cat)",
                                    lift, c.marked_steps);
    } else if (kernel >= other) {
        t.what = "GPU idle between back-to-back kernels";
        t.to_try = "fewer, larger kernels: fuse (torch.compile), larger micro-batch";
    } else {
        t.what = "GPU idle, kernels queued behind other streams";
        t.to_try = "look for stream waits and events that serialise streams; overlap settings of the framework";
    }
    out.push_back(t);
}

void comm_item(const ClusterReport& c, std::vector<TriageItem>& out) {
    TriageItem t{"exposed_comm", "communication not hidden under compute", pct(c.exposed_comm_us, c.span_us), "", ""};
    const CategoryTotal* top = nullptr;
    for (const auto& cat : c.categories)
        if (cat.category == KernelCategory::communication && (top == nullptr || cat.time_us > top->time_us)) top = &cat;
    if (top != nullptr) t.evidence = fmt::format("{} is {:.0f} % of communication time", top->name, pct(top->time_us, c.comm_us));
    if (!c.collectives.empty()) {
        const CollectiveStats& k = c.collectives.front();
        t.evidence += fmt::format("{}{} reaches {:.1f} GB/s bus bandwidth (nccl-tests' definition; kernel time "
                                  "includes waiting for the others)",
                                  t.evidence.empty() ? "" : "; ", k.collective, k.busbw_gbps);
    }
    t.to_try = "overlap it: DDP bucket_cap_mb, FSDP forward/backward prefetch, Megatron --overlap-grad-reduce "
               "--overlap-param-gather --tp-comm-overlap; compare the bus bandwidth with nccl-tests on the same "
               "nodes; a slow rank (below) makes every collective wait";
    out.push_back(t);
}

void launch_item(const ClusterReport& c, std::vector<TriageItem>& out) {
    if (c.launch_bound == 0) return;
    const double host_idle = c.idle_us * (c.host_wait_us + c.kernel_wait_us + c.other_wait_us > 0
                                              ? c.host_wait_us / (c.host_wait_us + c.kernel_wait_us + c.other_wait_us)
                                              : 0);
    const double mean_launch = c.launched > 0 ? c.launch_us / static_cast<double>(c.launched) : 0;
    const double cost = std::min(host_idle, static_cast<double>(c.launch_bound) * mean_launch);
    out.push_back({"launch_bound", "launch-bound kernels (shorter on the GPU than their launch on the CPU)",
                   pct(cost, c.span_us),
                   fmt::format("{} of {} launched kernels ({:.0f} %), {:.1f} us per launch on average; cost: at most "
                               "the host wait and their launches' CPU time",
                               c.launch_bound, c.launched, pct(static_cast<double>(c.launch_bound),
                                                               static_cast<double>(c.launched)),
                               mean_launch),
                   "CUDA graphs (torch.compile mode=\"reduce-overhead\"); fuse small kernels (torch.compile, fused "
                   "optimizers: fused=True); larger micro-batch"});
}

void memory_bound_item(const ClusterReport& c, std::vector<TriageItem>& out) {
    double other = 0, unnamed = 0;
    for (const auto& cat : c.categories)
        if (cat.category == KernelCategory::norm_elementwise || cat.category == KernelCategory::other_compute) other += cat.time_us;
    // Kernels with no name are other compute only for want of a name
    // (trace_analyze.cpp "unnamed-kernels"): left out of this advice.
    for (const auto& k : c.top_kernels)
        if (k.name.empty() && k.category == to_string(KernelCategory::other_compute)) unnamed += k.time_us;
    other -= unnamed;
    if (other <= 0) return;
    out.push_back({"memory_bound", "elementwise, norm and other non-matmul kernels (mostly memory-bound)",
                   pct(std::max(0.0, c.compute_us - c.matmul_us - unnamed), c.span_us),  // compute with no matmul running
                   fmt::format("{:.0f} % of compute kernel time is not GEMM or attention{}", pct(other, other + c.matmul_us),
                               unnamed > 0 ? fmt::format(" ({:.3f} ms in kernels with no name left out)", unnamed / 1e3)
                                           : ""),
                   "fuse them (torch.compile; fused RMSNorm/LayerNorm, fused cross-entropy, fused Adam); FlashAttention "
                   "instead of unfused softmax; larger micro-batch for small GEMMs"});
}

void copies_item(const ClusterReport& c, std::vector<TriageItem>& out) {
    if (c.exposed_memory_us <= 0) return;
    out.push_back({"copies", "memory copies not hidden under compute or communication", pct(c.exposed_memory_us, c.span_us),
                   "memcpy/memset kernels with neither compute nor communication running",
                   "pinned host memory and non_blocking copies on a side stream; avoid .to(device) and "
                   "torch.zeros in the step"});
}

void slow_items(const ClusterReport& c, std::vector<TriageItem>& out) {
    const double step = median_of([&] {
        std::vector<double> v;
        for (const auto& r : c.rows) v.push_back(r.step_us);
        return v;
    }());
    for (const auto& n : c.slow_nodes) {
        out.push_back({"slow_node", fmt::format("{} (ranks {}) holds the others back", n.node, n.ranks),
                       pct(n.held_back_us, step),
                       fmt::format("busy {:.2f} ms per step, median node {:.2f} ms; most in {} (+{:.2f} ms)",
                                   n.busy_us / 1e3, n.median_busy_us / 1e3, n.phase, n.phase_excess_us / 1e3),
                       "check the node: GPU clocks and throttling (nvidia-smi -q -d PERFORMANCE,CLOCK), power, "
                       "ECC errors, its CPUs and data loading; leave it out (Slurm --exclude) to confirm"});
    }
    for (const auto& r : c.slow_ranks) {
        if (r.on_slow_node) continue;  // its node's item says it
        out.push_back({"slow_rank", fmt::format("rank {}{} holds the others back", r.rank,
                                                r.node.empty() ? "" : " (" + r.node + ")"),
                       pct(r.held_back_us, step),
                       fmt::format("busy {:.2f} ms per step, reference {:.2f} ms, late to collectives {:.2f} ms; "
                                   "most in {} (+{:.2f} ms)",
                                   r.busy_us / 1e3, r.median_busy_us / 1e3, r.late_us / 1e3, r.phase,
                                   r.phase_excess_us / 1e3),
                       "check that GPU (nvidia-smi -q -d PERFORMANCE,CLOCK: throttling, clocks; ECC errors) and its "
                       "rank's input (data loading, uneven batches or sequence lengths)"});
        if (out.size() > 20) break;
    }
    if (c.steps.size() >= 2 && c.step_spread_pct > 10) {
        const auto slowest = std::max_element(c.steps.begin(), c.steps.end(),
                                              [](const StepStat& a, const StepStat& b) { return a.mean_us < b.mean_us; });
        out.push_back({"step_spread", "steps vary", c.step_spread_pct,
                       fmt::format("the slowest step ({}) takes {:.2f} ms on average over ranks, the step means "
                                   "spread {:.0f} % around their median; busiest rank in it: {}",
                                   slowest->step, slowest->mean_us / 1e3, c.step_spread_pct, slowest->busiest_rank),
                       "leave warm-up, evaluation and checkpoint steps out of the profiled window; Python garbage "
                       "collection (gc.freeze, gc.disable in the loop); input stalls"});
    }
}

}  // namespace

std::vector<TriageItem> triage(const ClusterReport& c, const JobComparison* cmp, const std::vector<LeverHint>& levers) {
    std::vector<TriageItem> out;
    idle_item(c, out);
    comm_item(c, out);
    launch_item(c, out);
    memory_bound_item(c, out);
    copies_item(c, out);
    slow_items(c, out);
    out.erase(std::remove_if(out.begin(), out.end(), [](const TriageItem& t) { return !(t.cost_pct >= kTriageMinPct); }),
              out.end());
    std::stable_sort(out.begin(), out.end(), [](const TriageItem& a, const TriageItem& b) { return a.cost_pct > b.cost_pct; });
    for (const auto& l : levers) {
        out.push_back({"lever", "estimate's lever: " + l.change,
                       cmp != nullptr && cmp->predicted_mfu > 0 ? 100 * (l.mfu_after - cmp->predicted_mfu) / cmp->predicted_mfu : 0,
                       fmt::format("predicted MFU {:.1f} % -> {:.1f} %", cmp != nullptr ? 100 * cmp->predicted_mfu : 0.0,
                                   100 * l.mfu_after),
                       "the change to the job file (lostflops explain --set ... shows it)"});
    }
    return out;
}

}  // namespace lostflops::trace
