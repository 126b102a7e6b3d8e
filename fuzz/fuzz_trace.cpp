// libFuzzer entry point for the streaming trace reader and the analysis on
// in-memory bytes (plain JSON or gzip). Contract: return or throw InputError;
// anything else (crash, sanitizer report, other exception) is a finding. And
// whatever the analysis gives, its summary reads back (what `--summary-out`
// writes, `trace merge` reads): an InputError there is a finding too.
// Measured memory (trace_memory.h) must hold its invariants: a timeline of
// at most kMaxMemoryTimelinePoints points in time order, holding both
// peaks, the allocated one at its time.
// Seed corpus: tests/data/trace (memory-small.json: [memory] events),
// traces of `lostflops trace synth`, and the real ones of ../shared/traces
// (decompressed or not).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "lostflops/error.h"
#include "lostflops/trace.h"
#include "lostflops/trace_summary.h"

namespace {

void check_memory(const lostflops::trace::DeviceMemory& m) {
    if (m.timeline.empty() || m.timeline.size() > lostflops::trace::kMaxMemoryTimelinePoints) std::abort();
    double alloc = -1, resv = -1;
    bool peak_there = false;
    for (std::size_t i = 0; i < m.timeline.size(); ++i) {
        const auto& p = m.timeline[i];
        if (i > 0 && !(m.timeline[i - 1].ts_us < p.ts_us)) std::abort();
        alloc = std::max(alloc, p.allocated_bytes);
        resv = std::max(resv, p.reserved_bytes);
        peak_there = peak_there || (p.ts_us == m.peak_allocated_ts_us && p.allocated_bytes == m.peak_allocated_bytes);
    }
    if (alloc != m.peak_allocated_bytes || resv != m.peak_reserved_bytes || !peak_there) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    using namespace lostflops::trace;
    std::vector<RankReport> ranks;
    try {
        const auto d = read_trace_bytes(bytes, "<fuzz>");
        (void)analyze(d, {true});
        ranks.push_back(analyze(d, {false}));
        if (ranks.back().memory) check_memory(*ranks.back().memory);
    } catch (const lostflops::InputError&) {
        return 0;
    }
    assign_missing_ranks(ranks);
    const std::string summary = summary_to_json(ranks);
    try {
        if (summary_from_json(summary, "<fuzz summary>").size() != 1) std::abort();
    } catch (const lostflops::InputError&) {
        std::abort();  // written, then refused
    }
    return 0;
}
