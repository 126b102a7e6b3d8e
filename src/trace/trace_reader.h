// The streaming reader of Kineto Chrome-trace JSON (internal to src/trace),
// one class shared by its two parts: the buffer over the byte source that
// cuts out or skips one JSON value at a time, every value bounded
// (trace_reader_buffer.cpp), and the document's grammar: top-level keys,
// the traceEvents array, each event parsed in place, metadata and the
// warnings (trace_reader.cpp, which gives read_trace of lostflops/trace.h).
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "lostflops/trace.h"
#include "trace/trace_event.h"
#include "trace/trace_internal.h"
#include "trace/trace_source.h"

namespace lostflops::trace::detail {

inline constexpr std::size_t kChunk = 4u << 20;  // bytes per read

inline std::string mib(std::size_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

struct Truncated {};  // internal signal: the input ended inside a value

class Reader {
public:
    // With a finder, every event goes to it instead (the second reading of
    // a file with [memory] events; `out` only takes what the reader says).
    Reader(detail::ByteSource& src, TraceData& out, const ReadOptions& opts, detail::PeakOpFinder* finder = nullptr)
        : src_(src), out_(out), opts_(opts), finder_(finder), buf_(new char[kChunk]), cap_(kChunk) {}

    void run();

private:
    // ---- buffer (trace_reader_buffer.cpp) ----
    uint64_t offset() const { return base_ + pos_; }
    // Reads more; keeps bytes from `keep` on (the value being read, which
    // must not grow past value_limit_). Returns false at the end.
    bool refill(std::size_t& keep);
    [[noreturn]] void too_big(uint64_t at);
    // Next non-whitespace byte (not consumed); -1 at the end.
    int peek() {
        uint64_t blank = 0;
        for (;;) {
            while (pos_ < end_) {
                const char c = buf_[pos_];
                if (c != ' ' && c != '\n' && c != '\r' && c != '\t') return static_cast<unsigned char>(c);
                ++pos_;
                if (++blank > kMaxTraceValueBytes) {
                    bad("more than " + mib(kMaxTraceValueBytes) + " of white space in a row: not a trace");
                }
            }
            std::size_t keep = pos_;
            if (!refill(keep)) return -1;
        }
    }
    int need() {
        const int c = peek();
        if (c < 0) throw Truncated{};
        return c;
    }
    [[noreturn]] void bad(const std::string& what);

    // Cuts one complete JSON value starting at pos_, at most `limit` bytes;
    // returns [start, end) in buf_.
    std::pair<std::size_t, std::size_t> cut(std::size_t limit = kMaxTraceValueBytes);

    // Skips one complete JSON value starting at pos_ (bracket counting, as
    // cut_value), keeping nothing; at most kMaxTraceValueBytes.
    void skip_value();

    std::pair<std::size_t, std::size_t> cut_value();

    void skip_bom();

    // ---- grammar (trace_reader.cpp) ----
    void document();
    void object();
    void events();

    // Parses the event at pos_ in place; reads more when it runs past the
    // buffer. A malformed event is skipped by bracket counting.
    void event();

    // Many bad items and more bad than good: not a trace (bounds the time
    // spent on a huge file of junk).
    void check_junk();

    void metadata(const std::string& key, std::string_view text);

    // An integer of distributedInfo within [lo, hi]; a warning otherwise.
    std::optional<int> small_int(const nlohmann::json& j, const char* key, int64_t lo, int64_t hi);

    void warn(std::string w) { out_.warnings.push_back(std::move(w)); }

    void truncated();
    void finish();
    bool truncated_reported() const;

    detail::ByteSource& src_;
    TraceData& out_;
    const ReadOptions& opts_;
    detail::PeakOpFinder* finder_;
    std::size_t value_limit_ = kMaxTraceValueBytes;
    detail::KeepState state_;
    detail::EventFields f_;
    std::string err_;
    std::unique_ptr<char[]> buf_;
    std::size_t cap_ = 0;
    std::size_t pos_ = 0, end_ = 0;
    uint64_t base_ = 0;  // file offset of buf_[0]
    bool eof_ = false;
    bool saw_events_ = false;
    int event_arrays_ = 0;  // "traceEvents" keys read: more than one is warned of
    uint64_t malformed_ = 0, skipped_nonobject_ = 0, control_chars_ = 0;
    std::string first_malformed_;
};

}  // namespace lostflops::trace::detail
