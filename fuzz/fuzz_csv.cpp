// libFuzzer entry point for the CSV reader of run tables (validate,
// calibrate runs): any bytes give rows or an InputError, within the reader's
// row and field bounds; each row's line rises with the rows and stays within
// the text; a number cell is finite or refused. Seeds: data/published.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_check.h"
#include "lostflops/error.h"
#include "lostflops/validate.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        std::vector<std::size_t> lines;
        const auto rows = lostflops::parse_csv(text, "<fuzz>", &lines);
        lostflops::fuzz::require(lines.size() == rows.size(), "parse_csv: a line for each row");
        const std::size_t last_line = 1 + static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) +
                                      static_cast<std::size_t>(std::count(text.begin(), text.end(), '\r'));
        for (std::size_t i = 0; i < lines.size(); ++i)
            lostflops::fuzz::require(lines[i] >= 1 && lines[i] <= last_line && (i == 0 || lines[i] > lines[i - 1]),
                                     "parse_csv: row lines rise within the text");
        lostflops::fuzz::require(rows.size() <= lostflops::kMaxCsvRows, "parse_csv: more rows than its bound");
        for (const auto& row : rows) {
            lostflops::fuzz::require(!row.empty(), "parse_csv: an empty row");
            lostflops::fuzz::require(row.size() <= lostflops::kMaxCsvFields, "parse_csv: more fields than its bound");
            for (const auto& cell : row)
                if (const auto v = lostflops::parse_table_number(cell))
                    lostflops::fuzz::require(std::isfinite(*v), "parse_table_number: a number that is not finite");
        }
    } catch (const lostflops::InputError&) {
    }
    return 0;
}
