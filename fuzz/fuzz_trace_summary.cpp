// libFuzzer entry point for the trace summary reader (`trace merge`,
// lostflops.merge_summaries): return or throw InputError; and a summary that
// reads writes back to one that reads to the same ranks. Seed corpus:
// summaries written by `lostflops trace --summary-out` of the traces of
// `lostflops trace synth`.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "lostflops/error.h"
#include "lostflops/trace_summary.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    using namespace lostflops::trace;
    std::vector<RankReport> ranks;
    try {
        ranks = summary_from_json(bytes, "<fuzz>");
    } catch (const lostflops::InputError&) {
        return 0;
    }
    try {
        const auto again = summary_from_json(summary_to_json(ranks), "<again>");
        if (again.size() != ranks.size()) std::abort();
        (void)merge_summaries({again});
    } catch (const lostflops::InputError& e) {
        // The only refusal allowed: the same rank twice (merge's rule) or a summary too large to write.
        const std::string what = e.what();
        if (what.find("appears twice") == std::string::npos && what.find("MiB") == std::string::npos) std::abort();
    }
    return 0;
}
