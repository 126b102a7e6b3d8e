// The trace reader's buffer (trace_reader.h): chunks of the (possibly
// gzipped) file read on demand, the bytes of the value being read kept and
// moved to the front, the buffer doubled when a value needs it; one
// complete JSON value cut out or skipped by a small state machine that
// tracks strings, escapes and bracket depth, keeping nothing of a skipped
// one. Every value, and every run of white space, is bounded (limits in
// trace.h), so no input makes the buffer grow past twice
// kMaxTraceValueBytes. A leading UTF-8 byte-order mark (EF BB BF, Unicode 15
// section 23.8) is skipped.
#include <cstring>

#include "lostflops/error.h"
#include "trace/trace_reader.h"

namespace lostflops::trace::detail {

bool Reader::refill(std::size_t& keep) {
    if (eof_) return false;
    if (keep > 0) {
        std::memmove(buf_.get(), buf_.get() + keep, end_ - keep);
        base_ += keep;
        end_ -= keep;
        pos_ -= keep;
        keep = 0;
    }
    if (end_ > value_limit_) too_big(base_);
    if (cap_ - end_ < kChunk / 2) {
        std::unique_ptr<char[]> bigger(new char[cap_ * 2]);  // not zero-filled
        std::memcpy(bigger.get(), buf_.get(), end_);
        buf_ = std::move(bigger);
        cap_ *= 2;
    }
    const std::size_t got = src_.read(buf_.get() + end_, cap_ - end_);
    if (got == 0) {
        eof_ = true;
        return false;
    }
    end_ += got;
    out_.bytes += got;
    if (opts_.on_bytes) opts_.on_bytes(got);
    return true;
}

void Reader::too_big(uint64_t at) {
    throw InputError(out_.source, "byte " + std::to_string(at),
                     "a single JSON value is larger than " + mib(value_limit_) +
                         " (the trace reader's limit; a trace event is well under 100 KB)");
}

void Reader::bad(const std::string& what) {
    throw InputError(out_.source, "byte " + std::to_string(offset()), what);
}

std::pair<std::size_t, std::size_t> Reader::cut(std::size_t limit) {
    value_limit_ = limit;
    const auto r = cut_value();
    value_limit_ = kMaxTraceValueBytes;
    if (r.second - r.first > limit) {
        value_limit_ = limit;
        too_big(base_ + r.first);
    }
    return r;
}

void Reader::skip_value() {
    std::size_t i = pos_;
    uint64_t scanned = 0;
    const uint64_t at = offset();
    const char first = buf_[i];
    const bool scalar = first != '{' && first != '[' && first != '"';
    int depth = 0;
    bool in_string = false, escape = false;
    for (;;) {
        const char* d = buf_.get();
        while (i < end_) {
            const char c = d[i];
            if (scalar) {
                if (c == ',' || c == '}' || c == ']' || c == ' ' || c == '\n' || c == '\r' || c == '\t') {
                    pos_ = i;
                    return;
                }
                ++i;
                continue;
            }
            ++i;
            if (in_string) {
                if (escape) escape = false;
                else if (c == '\\') escape = true;
                else if (c == '"') {
                    in_string = false;
                    if (depth == 0) { pos_ = i; return; }
                }
            } else if (c == '"') {
                in_string = true;
            } else if (c == '{' || c == '[') {
                ++depth;
            } else if (c == '}' || c == ']') {
                if (--depth == 0) { pos_ = i; return; }
            }
        }
        scanned += i - pos_;
        if (scanned > kMaxTraceValueBytes) too_big(at);
        pos_ = i;
        std::size_t keep = i;
        if (!refill(keep)) throw Truncated{};
        i = pos_;
    }
}

std::pair<std::size_t, std::size_t> Reader::cut_value() {
    std::size_t start = pos_;
    std::size_t i = pos_;
    const char first = buf_[i];
    if (first != '{' && first != '[' && first != '"') {  // scalar
        for (;;) {
            while (i < end_) {
                const char c = buf_[i];
                if (c == ',' || c == '}' || c == ']' || c == ' ' || c == '\n' || c == '\r' ||
                    c == '\t') {
                    pos_ = i;
                    return {start, i};
                }
                ++i;
            }
            const std::size_t rel = i - start;
            if (!refill(start)) throw Truncated{};
            i = start + rel;
        }
    }
    int depth = 0;
    bool in_string = false;
    bool escape = false;
    for (;;) {
        const char* d = buf_.get();
        while (i < end_) {
            const char c = d[i++];
            if (in_string) {
                if (escape) escape = false;
                else if (c == '\\') escape = true;
                else if (c == '"') {
                    in_string = false;
                    if (depth == 0) { pos_ = i; return {start, i}; }
                }
            } else if (c == '"') {
                in_string = true;
            } else if (c == '{' || c == '[') {
                ++depth;
            } else if (c == '}' || c == ']') {
                if (--depth == 0) { pos_ = i; return {start, i}; }
            }
        }
        const std::size_t rel = i - start;
        if (!refill(start)) throw Truncated{};
        i = start + rel;
    }
}

void Reader::skip_bom() {
    std::size_t keep = pos_;
    while (end_ - pos_ < 3 && refill(keep)) keep = pos_;
    if (end_ - pos_ >= 3 && std::memcmp(buf_.get() + pos_, "\xEF\xBB\xBF", 3) == 0) pos_ += 3;
}

}  // namespace lostflops::trace::detail
