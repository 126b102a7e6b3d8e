// Text-file intake with UTF-8 validation (RFC 3629 well-formed sequences), so
// a binary file is reported as such instead of reaching a parser.
#include "spec/text_input.h"

#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "lostflops/error.h"

namespace lostflops {

std::string read_text_file(const std::string& path, size_t max_bytes) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(path, "", "cannot open file");
    in.seekg(0, std::ios::end);
    const auto size = in.tellg();
    if (size < 0) throw InputError(path, "", "cannot read file (is it a directory?)");
    if (static_cast<size_t>(size) > max_bytes)
        throw InputError(path, "", fmt::format("file is {} bytes; at most {} expected", static_cast<long long>(size), max_bytes));
    in.seekg(0);
    std::string text(static_cast<size_t>(size), '\0');
    if (size > 0 && !in.read(text.data(), size)) throw InputError(path, "", "cannot read file");
    check_text(text, path);
    return text;
}

void check_text(const std::string& text, const std::string& source) {
    if (text.find_first_not_of(" \t\r\n") == std::string::npos)
        throw InputError(source, "", "file is empty");
    size_t line = 1;
    for (size_t i = 0; i < text.size();) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c == '\n') ++line;
        if (c < 0x80) {
            if (c < 0x20 && c != '\t' && c != '\n' && c != '\r')
                throw InputError(source, fmt::format("line {}", line),
                                 fmt::format("binary data (control byte 0x{:02x}); expected a text file", c));
            ++i;
            continue;
        }
        const int extra = (c >> 5) == 0x6 ? 1 : (c >> 4) == 0xe ? 2 : (c >> 3) == 0x1e ? 3 : -1;
        if (extra < 0 || i + static_cast<size_t>(extra) >= text.size())
            throw InputError(source, fmt::format("line {}", line),
                             "binary data (invalid UTF-8); expected a text file");
        for (int k = 1; k <= extra; ++k)
            if ((static_cast<unsigned char>(text[i + k]) >> 6) != 0x2)
                throw InputError(source, fmt::format("line {}", line), "binary data (invalid UTF-8); expected a text file");
        i += static_cast<size_t>(extra) + 1;
    }
}

}  // namespace lostflops
