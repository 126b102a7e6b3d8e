// The walls of a step: one row per field of Breakdown (lostflops/estimate.h),
// the one place that names them. estimate's breakdown (text and JSON),
// explain's waterfall, the report, search's tables and comparisons, and
// trace --job's wall-by-wall comparison all read this table.
//
// Adding a wall takes a field in Breakdown (and in total_s()), a row here, and
// the code that prices it; Walls.TableCoversEveryBreakdownField fails while
// a field has no row.
//
// Text shows `name`, one spelling everywhere. The JSON of schema v1 keeps
// the keys it has always had: the `*_key` columns; for most walls they are
// `name` itself.
#pragma once

#include "lostflops/estimate.h"

namespace lostflops {

// Where trace --job puts a wall: what a profiler trace can measure of it.
enum class TraceGroup {
    compute,       // GEMM and attention kernels
    memory_bound,  // element-wise, norms, copies, the optimizer's kernels
    comm,          // exposed collectives and transfers
    idle,          // the GPU waiting: bubble, launch gaps, the host
};

struct WallInfo {
    const char* name;             // in text: "kernel_overhead"
    double Breakdown::*seconds;   // its field
    const char* words;            // in explain's waterfall: "kernel launch overhead"
    const char* estimate_key;     // estimate's JSON `breakdown` (v1): "kernel_overhead_s"
    const char* waterfall_key;    // explain's JSON `waterfall[].key` (v1): "launch_overhead";
                                  // compute's is split there into "gemm" and "attention"
    const char* search_key;       // search's JSON `costliest_wall.name` and `wall_difference_s` (v1): "overhead"
    TraceGroup trace_group;
};

// In the order every listing shows them: the GPU's own work first, then
// the host, then communication and the pipeline, then the optimizer.
inline constexpr WallInfo kWalls[] = {
    {"compute", &Breakdown::compute_s, "GEMMs and attention", "compute_s", "compute", "compute",
     TraceGroup::compute},
    {"memory_bound", &Breakdown::memory_bound_s, "memory-bound operators", "memory_bound_s", "memory_bound",
     "memory_bound", TraceGroup::memory_bound},
    {"recompute", &Breakdown::recompute_s, "activation recompute", "recompute_s", "recompute", "recompute",
     TraceGroup::compute},
    {"kernel_overhead", &Breakdown::overhead_s, "kernel launch overhead", "kernel_overhead_s", "launch_overhead",
     "overhead", TraceGroup::idle},
    {"host_bound", &Breakdown::host_s, "host bound (GPU waits for the CPU)", "host_bound_s", "host", "host",
     TraceGroup::idle},
    {"tp_comm", &Breakdown::tp_comm_s, "exposed TP communication", "tp_comm_s", "tp_comm", "tp_comm",
     TraceGroup::comm},
    {"cp_comm", &Breakdown::cp_comm_s, "exposed CP communication", "cp_comm_s", "cp_comm", "cp_comm",
     TraceGroup::comm},
    {"ep_comm", &Breakdown::ep_comm_s, "expert-parallel all-to-all", "ep_comm_s", "ep_comm", "ep_comm",
     TraceGroup::comm},
    {"pp_bubble", &Breakdown::pp_bubble_s, "pipeline bubble", "pp_bubble_s", "pp_bubble", "pp_bubble",
     TraceGroup::idle},
    {"pp_p2p", &Breakdown::pp_p2p_s, "pipeline transfers", "pp_p2p_s", "pp_p2p", "pp_p2p", TraceGroup::comm},
    {"dp_comm", &Breakdown::dp_comm_s, "exposed DP/ZeRO communication", "dp_comm_s", "dp_comm", "dp_comm",
     TraceGroup::comm},
    {"optimizer", &Breakdown::optimizer_s, "optimizer step", "optimizer_s", "optimizer", "optimizer",
     TraceGroup::memory_bound},
    {"data_loader", &Breakdown::data_loader_s, "data loader (GPU waits for the next batch)", "data_loader_s",
     "data_loader", "data_loader", TraceGroup::idle},
};

// The seconds of the walls of `b` in trace group `g`.
inline double trace_group_s(const Breakdown& b, TraceGroup g) {
    double s = 0;
    for (const WallInfo& w : kWalls)
        if (w.trace_group == g) s += b.*w.seconds;
    return s;
}

// The seconds of `e`'s step in trace group `g`, as a profiler sees them: the
// walls of the group, with the recompute wall's memory-bound kernels and
// launch overhead (Estimate::recompute_memory_bound_s, recompute_overhead_s)
// moved from compute to memory_bound and idle, where the trace counts the
// kernels of a recomputed forward, and the gaps between the optimizer's
// kernels (Estimate::optimizer_overhead_s) from memory_bound to idle.
inline double trace_group_s(const Estimate& e, TraceGroup g) {
    const double moved = e.recompute_memory_bound_s + e.recompute_overhead_s;
    const double s = trace_group_s(e.breakdown, g);
    switch (g) {
        case TraceGroup::compute: return s - moved;
        case TraceGroup::memory_bound: return s + e.recompute_memory_bound_s - e.optimizer_overhead_s;
        case TraceGroup::idle: return s + e.recompute_overhead_s + e.optimizer_overhead_s;
        case TraceGroup::comm: return s;
    }
    return s;
}

}  // namespace lostflops
