// libFuzzer entry point for the streaming trace reader and the analysis on
// in-memory bytes (plain JSON or gzip). Contract: return or throw InputError;
// anything else (crash, sanitizer report, other exception) is a finding. And
// whatever the analysis gives, its summary reads back (what `--summary-out`
// writes, `trace merge` reads): an InputError there is a finding too.
// Seed corpus: traces of `lostflops trace synth`, and the real ones of
// ../shared/traces (decompressed or not).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "lostflops/error.h"
#include "lostflops/trace.h"
#include "lostflops/trace_summary.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    using namespace lostflops::trace;
    std::vector<RankReport> ranks;
    try {
        const auto d = read_trace_bytes(bytes, "<fuzz>");
        (void)analyze(d, {true});
        ranks.push_back(analyze(d, {false}));
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
