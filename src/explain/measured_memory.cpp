// A trace's measured allocator timeline for the report's memory-over-the-step
// chart (explain/report_data.h MeasuredMemory): the [memory] events'
// timeline (trace_memory.h) cut to the CPU ProfilerStep holding the allocated
// peak, so that it starts where the predicted step starts.
#include "explain/report_data.h"

namespace lostflops {

MeasuredMemory measured_memory(const std::vector<trace::RankReport>& ranks) {
    const trace::RankReport* best = nullptr;
    for (const trace::RankReport& r : ranks) {
        if (!r.memory || r.memory->timeline.empty()) continue;
        if (best == nullptr || r.memory->peak_allocated_bytes > best->memory->peak_allocated_bytes) best = &r;
    }
    MeasuredMemory out;
    if (best == nullptr) return out;
    const trace::DeviceMemory& m = *best->memory;
    out.peak_allocated_bytes = m.peak_allocated_bytes;
    out.peak_reserved_bytes = m.peak_reserved_bytes;
    out.source = best->source;
    out.rank = best->rank;
    // The step's start is the peak's time less its offset into the step
    // (analyze() sets both); its end, its CPU annotation's duration later.
    double start_us = m.timeline.front().ts_us, end_us = m.timeline.back().ts_us;
    if (m.peak_allocated_step && m.peak_allocated_step_offset_us) {
        for (const trace::Iteration& it : best->iterations) {
            if (it.number != *m.peak_allocated_step || !(it.cpu_us > 0)) continue;
            start_us = m.peak_allocated_ts_us - *m.peak_allocated_step_offset_us;
            end_us = start_us + it.cpu_us;
            out.step = it.number;
            out.step_s = it.cpu_us * 1e-6;
            break;
        }
    }
    for (const trace::MemoryPoint& p : m.timeline) {
        if (p.ts_us < start_us || p.ts_us > end_us) continue;
        out.allocated.push_back({(p.ts_us - start_us) * 1e-6, p.allocated_bytes});
        out.reserved.push_back({(p.ts_us - start_us) * 1e-6, p.reserved_bytes});
    }
    return out;
}

}  // namespace lostflops
