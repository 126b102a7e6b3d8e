// libFuzzer entry point for the CSV reader of run tables (validate,
// calibrate runs): any bytes give rows or an InputError, within the reader's
// row and field bounds. Seeds: data/published.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_check.h"
#include "lostflops/error.h"
#include "lostflops/validate.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        const auto rows = lostflops::parse_csv(text, "<fuzz>");
        lostflops::fuzz::require(rows.size() <= lostflops::kMaxCsvRows, "parse_csv: more rows than its bound");
        for (const auto& row : rows) {
            lostflops::fuzz::require(!row.empty(), "parse_csv: an empty row");
            lostflops::fuzz::require(row.size() <= lostflops::kMaxCsvFields, "parse_csv: more fields than its bound");
        }
    } catch (const lostflops::InputError&) {
    }
    return 0;
}
