// Byte sources for the streaming trace reader: a file (plain, or gzip
// inflated with ISA-L as it streams; trace_inflate.cpp) or bytes in memory
// (inflated with zlib when they start with the gzip magic; trace_source.cpp).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace lostflops::trace::detail {

class ByteSource {
public:
    virtual ~ByteSource() = default;
    // Up to n bytes into dst; 0 at the end. Throws InputError on a read error.
    virtual std::size_t read(char* dst, std::size_t n) = 0;
    // True when the compressed stream ended before its end marker.
    virtual bool cut_short() const { return false; }
    // True when bytes that do not start another gzip member follow the last
    // one: ignored, as gzip -d does, but said (gzip: "trailing garbage ignored").
    virtual bool trailing_garbage() const { return false; }
};

std::unique_ptr<ByteSource> open_file_source(const std::string& path);
std::unique_ptr<ByteSource> memory_source(std::string_view bytes, const std::string& source);

}  // namespace lostflops::trace::detail
