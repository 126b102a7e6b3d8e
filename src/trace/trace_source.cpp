// Byte sources of the trace reader for bytes in memory (read_trace_bytes:
// tests and fuzzing): plain, or gzip (RFC 1952) through zlib's inflate with a
// gzip header (windowBits 16 + MAX_WBITS, zlib manual), members one after the
// other (inflateReset). Files: trace_inflate.cpp.
#include "trace/trace_source.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

#include "lostflops/error.h"

namespace lostflops::trace::detail {
namespace {

class PlainMemorySource : public ByteSource {
public:
    explicit PlainMemorySource(std::string_view bytes) : bytes_(bytes) {}
    std::size_t read(char* dst, std::size_t n) override {
        const std::size_t k = std::min(n, bytes_.size() - pos_);
        if (k > 0) std::memcpy(dst, bytes_.data() + pos_, k);
        pos_ += k;
        return k;
    }

private:
    std::string_view bytes_;
    std::size_t pos_ = 0;
};

class GzMemorySource : public ByteSource {
public:
    GzMemorySource(std::string_view bytes, const std::string& source) : source_(source) {
        std::memset(&zs_, 0, sizeof zs_);
        if (inflateInit2(&zs_, 16 + MAX_WBITS) != Z_OK) {
            throw InputError(source, "", "cannot start gzip decompression");
        }
        zs_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
        zs_.avail_in = static_cast<uInt>(std::min<std::size_t>(bytes.size(), UINT_MAX));
    }
    ~GzMemorySource() override { inflateEnd(&zs_); }
    GzMemorySource(const GzMemorySource&) = delete;
    GzMemorySource& operator=(const GzMemorySource&) = delete;

    std::size_t read(char* dst, std::size_t n) override {
        while (!done_) {  // once more after each member that gave no output
            zs_.next_out = reinterpret_cast<Bytef*>(dst);
            zs_.avail_out = static_cast<uInt>(std::min<std::size_t>(n, UINT_MAX));
            const int rc = inflate(&zs_, Z_NO_FLUSH);
            const std::size_t got = n - zs_.avail_out;
            if (rc == Z_STREAM_END) {
                // As the file source: another member is read on, other bytes
                // are trailing garbage (ignored, said).
                const bool another = zs_.avail_in >= 2 && zs_.next_in[0] == 0x1f && zs_.next_in[1] == 0x8b;
                if (!another || inflateReset(&zs_) != Z_OK) {
                    done_ = true;
                    trailing_ = zs_.avail_in > 0;
                }
            } else if (rc == Z_BUF_ERROR || (rc == Z_OK && got == 0 && zs_.avail_in == 0)) {
                done_ = true;
                cut_short_ = true;
            } else if (rc != Z_OK) {
                done_ = true;
                throw InputError(source_, "", std::string("cannot decompress: ") +
                                                  (zs_.msg ? zs_.msg : "corrupt gzip data"));
            }
            if (got > 0 || done_) return got;
        }
        return 0;
    }
    bool cut_short() const override { return cut_short_; }
    bool trailing_garbage() const override { return trailing_; }

private:
    std::string source_;
    z_stream zs_;
    bool done_ = false;
    bool cut_short_ = false;
    bool trailing_ = false;
};

}  // namespace

std::unique_ptr<ByteSource> memory_source(std::string_view bytes, const std::string& source) {
    const bool gz = bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
                    static_cast<unsigned char>(bytes[1]) == 0x8b;
    if (gz) return std::make_unique<GzMemorySource>(bytes, source);
    return std::make_unique<PlainMemorySource>(bytes);
}

}  // namespace lostflops::trace::detail
