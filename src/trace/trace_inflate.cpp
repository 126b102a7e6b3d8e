// Byte source of trace files: plain bytes passed through, gzip (RFC 1952)
// inflated as a stream with Intel ISA-L's igzip (isal_inflate, ISAL_GZIP:
// header, DEFLATE (RFC 1951) and CRC-32/ISIZE trailer checked), chosen over
// zlib by measurement (docs/performance.md "Traces": several times zlib's inflate speed
// on the same core, streaming, so memory stays one input and one output
// buffer). As zlib's gzread did before: concatenated gzip members are read one
// after the other, bytes after the last member that do not start another are
// ignored, a stream that ends before its trailer is "cut short" (the reader
// keeps what came out and warns), and corrupt data is an error naming the
// file. Multi-member restart: after a member the bytes ISA-L had already
// pulled into its bit buffer (read_in_length / 8) are handed back (as
// igzip_cli.c does).
#include <isa-l/igzip_lib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <vector>

#include "lostflops/error.h"
#include "trace/trace_source.h"

namespace lostflops::trace::detail {
namespace {

constexpr std::size_t kInput = 1u << 18;  // compressed bytes per read(2)

const char* isal_error(int rc) {
    switch (rc) {
        case ISAL_INVALID_BLOCK: return "invalid deflate block";
        case ISAL_INVALID_SYMBOL: return "invalid deflate symbol";
        case ISAL_INVALID_LOOKBACK: return "invalid lookback distance";
        case ISAL_INVALID_WRAPPER: return "invalid gzip header";
        case ISAL_UNSUPPORTED_METHOD: return "unsupported compression method";
        case ISAL_INCORRECT_CHECKSUM: return "incorrect CRC-32 or length in the gzip trailer";
        default: return "corrupt gzip data";
    }
}

class InflateFileSource : public ByteSource {
public:
    explicit InflateFileSource(const std::string& path) : path_(path == "-" ? "<stdin>" : path), in_(kInput) {
        if (path == "-") {
            fd_ = STDIN_FILENO;
            own_fd_ = false;
        } else {
            fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
            if (fd_ < 0) throw InputError(path_, "", std::string("cannot open: ") + std::strerror(errno));
        }
    }
    ~InflateFileSource() override {
        if (own_fd_ && fd_ >= 0) ::close(fd_);
    }
    InflateFileSource(const InflateFileSource&) = delete;
    InflateFileSource& operator=(const InflateFileSource&) = delete;

    std::size_t read(char* dst, std::size_t n) override {
        if (done_ || n == 0) return 0;
        if (mode_ == Mode::unknown) sniff();
        if (mode_ == Mode::plain) return read_plain(dst, n);
        return read_gzip(dst, n);
    }
    bool cut_short() const override { return cut_short_; }
    bool trailing_garbage() const override { return trailing_; }

private:
    enum class Mode { unknown, plain, gzip };

    // Appends what read(2) gives to the unread input; false at the end.
    bool fill() {
        if (eof_) return false;
        // Keep the unread bytes, and the last 8 read: ISA-L may hand them back
        // at the end of a member (its bit buffer holds at most 64 bits).
        const std::size_t keep = std::min<std::size_t>(pos_, 8);
        if (pos_ > keep) {
            std::memmove(in_.data(), in_.data() + pos_ - keep, have_ - pos_ + keep);
            have_ -= pos_ - keep;
            pos_ = keep;
        }
        for (;;) {
            const ssize_t got = ::read(fd_, in_.data() + have_, in_.size() - have_);
            if (got > 0) {
                have_ += static_cast<std::size_t>(got);
                return true;
            }
            if (got == 0) {
                eof_ = true;
                return false;
            }
            if (errno == EINTR) continue;
            throw InputError(path_, "", std::string("cannot read: ") + std::strerror(errno));
        }
    }
    // At least `k` unread bytes when the input has them.
    void want(std::size_t k) {
        while (have_ - pos_ < k && fill()) {}
    }
    bool at_gzip_magic() {
        want(2);
        return have_ - pos_ >= 2 && static_cast<unsigned char>(in_[pos_]) == 0x1f &&
               static_cast<unsigned char>(in_[pos_ + 1]) == 0x8b;
    }
    void sniff() {
        if (at_gzip_magic()) {
            mode_ = Mode::gzip;
            start_member();
        } else {
            mode_ = Mode::plain;
        }
    }
    void start_member() {
        isal_inflate_init(&st_);
        st_.crc_flag = ISAL_GZIP;
    }

    std::size_t read_plain(char* dst, std::size_t n) {
        if (pos_ < have_) {  // bytes read while sniffing
            const std::size_t k = std::min(n, have_ - pos_);
            std::memcpy(dst, in_.data() + pos_, k);
            pos_ += k;
            return k;
        }
        for (;;) {
            const ssize_t got = ::read(fd_, dst, n);
            if (got >= 0) {
                if (got == 0) done_ = true;
                return static_cast<std::size_t>(got);
            }
            if (errno == EINTR) continue;
            throw InputError(path_, "", std::string("cannot read: ") + std::strerror(errno));
        }
    }

    std::size_t read_gzip(char* dst, std::size_t n) {
        for (;;) {
            if (pos_ == have_ || have_ - pos_ < 16) fill();
            st_.next_in = reinterpret_cast<uint8_t*>(in_.data() + pos_);
            st_.avail_in = static_cast<uint32_t>(have_ - pos_);
            st_.next_out = reinterpret_cast<uint8_t*>(dst);
            st_.avail_out = static_cast<uint32_t>(std::min<std::size_t>(n, UINT32_MAX));
            const int rc = isal_inflate(&st_);
            pos_ = have_ - st_.avail_in;
            const std::size_t got = std::min<std::size_t>(n, UINT32_MAX) - st_.avail_out;
            if (rc < 0) {
                done_ = true;
                throw InputError(path_, "", std::string("cannot decompress: ") + isal_error(rc));
            }
            if (st_.block_state == ISAL_BLOCK_FINISH) {
                // Hand back the whole bytes of the bit buffer: they follow the trailer.
                const std::size_t back = static_cast<std::size_t>(st_.read_in_length) / 8;
                pos_ -= std::min(back, pos_);
                if (at_gzip_magic()) {
                    start_member();
                } else {
                    done_ = true;  // the end, or trailing bytes that are not gzip: ignored, and said
                    want(1);
                    trailing_ = have_ > pos_;
                }
                if (got > 0 || done_) return got;
                continue;
            }
            if (got > 0) return got;
            if (pos_ == have_ && eof_) {
                done_ = true;
                cut_short_ = true;
                return 0;
            }
        }
    }

    std::string path_;
    int fd_ = -1;
    bool own_fd_ = true;
    std::vector<char> in_;
    std::size_t pos_ = 0, have_ = 0;  // unread input is in_[pos_, have_)
    bool eof_ = false;
    Mode mode_ = Mode::unknown;
    inflate_state st_{};
    bool done_ = false;
    bool cut_short_ = false;
    bool trailing_ = false;
};

}  // namespace

std::unique_ptr<ByteSource> open_file_source(const std::string& path) {
    return std::make_unique<InflateFileSource>(path);
}

}  // namespace lostflops::trace::detail
