// libFuzzer entry point for the streaming trace reader and the analysis on
// in-memory bytes (plain JSON or gzip). Contract: return or throw InputError;
// anything else (crash, sanitizer report, other exception) is a finding.
// The same bytes also go through the summary reader (`trace merge`).
// Seed corpus: traces of `lostflops trace synth`, and the real ones of
// ../shared/traces (decompressed or not).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "lostflops/error.h"
#include "lostflops/trace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    try {
        const auto d = lostflops::trace::read_trace_bytes(bytes, "<fuzz>");
        (void)lostflops::trace::analyze(d, {true});
        (void)lostflops::trace::analyze(d, {false});
    } catch (const lostflops::InputError&) {
    }
    try {
        (void)lostflops::trace::summary_from_json(std::string(bytes), "<fuzz>");
    } catch (const lostflops::InputError&) {
    }
    return 0;
}
