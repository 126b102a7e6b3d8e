// Streaming reader of Kineto Chrome-trace JSON (Chrome Trace Event Format,
// "JSON Object Format" with a traceEvents array, or the bare "JSON Array
// Format"). Chunks of the (possibly gzipped) file go through a small state
// machine that tracks strings, escapes and bracket depth to cut out each
// value; every traceEvents object is parsed in place by the hand-written
// strict parser of trace_event.cpp (parse_event) and reduced to what the
// analysis keeps (see trace.h). Top-level keys other than
// traceEvents (distributedInfo, displayTimeUnit, deviceProperties, host_name) are cut out
// whole and read with nlohmann::json, wherever they sit in the file; other
// values are skipped as they stream by, keeping nothing. Every value, and
// every run of white space, is bounded (limits in trace.h), so no input makes
// the buffer grow past twice kMaxTraceValueBytes. A leading UTF-8 byte-order
// mark (EF BB BF, Unicode 15 section 23.8) is skipped.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <unordered_map>

#include "lostflops/error.h"
#include "lostflops/trace.h"
#include "job/text_input.h"
#include "trace/trace_event.h"
#include "trace/trace_internal.h"
#include "trace/trace_source.h"

namespace lostflops::trace {
namespace {

constexpr std::size_t kChunk = 4u << 20;  // bytes per read

std::string mib(std::size_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

struct Truncated {};  // internal signal: the input ended inside a value

class Reader {
public:
    // With a finder, every event goes to it instead (the second reading of
    // a file with [memory] events; `out` only takes what the reader says).
    Reader(detail::ByteSource& src, TraceData& out, const ReadOptions& opts, detail::PeakOpFinder* finder = nullptr)
        : src_(src), out_(out), opts_(opts), finder_(finder), buf_(new char[kChunk]), cap_(kChunk) {}

    void run() {
        try {
            document();
        } catch (const Truncated&) {
            if (out_.events == 0) {
                throw InputError(out_.source, "byte " + std::to_string(base_ + end_),
                                 "truncated: the file ends before any trace event");
            }
            truncated();
        }
        finish();
    }

private:
    // ---- buffer ----
    uint64_t offset() const { return base_ + pos_; }
    // Reads more; keeps bytes from `keep` on (the value being read, which
    // must not grow past value_limit_). Returns false at the end.
    bool refill(std::size_t& keep) {
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
    [[noreturn]] void too_big(uint64_t at) {
        throw InputError(out_.source, "byte " + std::to_string(at),
                         "a single JSON value is larger than " + mib(value_limit_) +
                             " (the trace reader's limit; a trace event is well under 100 KB)");
    }
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
    [[noreturn]] void bad(const std::string& what) {
        throw InputError(out_.source, "byte " + std::to_string(offset()), what);
    }

    // Cuts one complete JSON value starting at pos_, at most `limit` bytes;
    // returns [start, end) in buf_.
    std::pair<std::size_t, std::size_t> cut(std::size_t limit = kMaxTraceValueBytes) {
        value_limit_ = limit;
        const auto r = cut_value();
        value_limit_ = kMaxTraceValueBytes;
        if (r.second - r.first > limit) {
            value_limit_ = limit;
            too_big(base_ + r.first);
        }
        return r;
    }

    // Skips one complete JSON value starting at pos_ (bracket counting, as
    // cut_value), keeping nothing; at most kMaxTraceValueBytes.
    void skip_value() {
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

    std::pair<std::size_t, std::size_t> cut_value() {
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

    // ---- grammar ----
    void document() {
        skip_bom();
        const int c = peek();
        if (c < 0)
            bad(src_.cut_short() ? "the compressed stream ends before any data (a cut .gz): expected a JSON object with "
                                   "\"traceEvents\""
                                 : "empty file: expected a JSON object with \"traceEvents\"");
        if (c == '[') {  // JSON Array Format: the events themselves
            ++pos_;
            events();
        } else if (c == '{') {
            ++pos_;
            object();
        } else {
            bad("not a Chrome trace: expected '{' or '[' at the start");
        }
        if (peek() >= 0) warn("trailing-data: bytes after the end of the JSON document were ignored");
        if (!saw_events_) bad("no \"traceEvents\" array in the file");
    }

    void skip_bom() {
        std::size_t keep = pos_;
        while (end_ - pos_ < 3 && refill(keep)) keep = pos_;
        if (end_ - pos_ >= 3 && std::memcmp(buf_.get() + pos_, "\xEF\xBB\xBF", 3) == 0) pos_ += 3;
    }

    void object() {
        if (need() == '}') { ++pos_; return; }
        for (;;) {
            if (need() != '"') bad("expected a key string");
            auto [ks, ke] = cut();
            std::string key(buf_.get() + ks + 1, ke - ks - 2);
            if (need() != ':') bad("expected ':' after key \"" + key + "\"");
            ++pos_;
            const int v = need();
            if (key == "traceEvents" && v == '[') {
                ++pos_;
                events();
            } else if (key == "distributedInfo" || key == "displayTimeUnit" || key == "deviceProperties" ||
                       key == "host_name" || key == "ranksByPid") {
                auto [vs, ve] = cut(kMaxTraceMetadataBytes);
                metadata(key, std::string_view(buf_.get() + vs, ve - vs));
            } else {
                skip_value();
            }
            const int sep = need();
            ++pos_;
            if (sep == ',') continue;
            if (sep == '}') return;
            --pos_;
            bad("expected ',' or '}' between top-level keys");
        }
    }

    void events() {
        saw_events_ = true;
        if (need() == ']') { ++pos_; return; }
        for (;;) {
            const int c = need();
            if (c == '{') {
                event();
            } else {
                skip_value();  // not an object: skipped, like pandas would
                ++skipped_nonobject_;
                check_junk();
            }
            const int sep = need();
            ++pos_;
            if (sep == ',') continue;
            if (sep == ']') return;
            --pos_;
            bad("expected ',' or ']' between trace events");
        }
    }

    // Parses the event at pos_ in place; reads more when it runs past the
    // buffer. A malformed event is skipped by bracket counting.
    void event() {
        ++out_.events;
        for (;;) {
            std::size_t used = 0;
            const auto r = detail::parse_event(buf_.get() + pos_, buf_.get() + end_, f_, err_, used);
            if (r == detail::ParseResult::ok) {
                if (used > kMaxTraceValueBytes) too_big(offset());
                pos_ += used;
                break;
            }
            if (r == detail::ParseResult::malformed) {
                if (malformed_++ == 0) first_malformed_ = "byte " + std::to_string(offset()) + ", " + err_;
                skip_value();
                check_junk();
                return;
            }
            std::size_t keep = pos_;
            if (!refill(keep)) throw Truncated{};
        }
        if (finder_ != nullptr) return finder_->visit(f_);
        control_chars_ += f_.control_chars;
        if (f_.ts_fractional) out_.fractional_ts = true;
        detail::keep_event(f_, out_, state_);
    }

    // Many bad items and more bad than good: not a trace (bounds the time
    // spent on a huge file of junk).
    void check_junk() {
        const uint64_t junk = malformed_ + skipped_nonobject_;
        if (junk > kMaxTraceJunkItems && 2 * junk > out_.events + skipped_nonobject_) {
            bad("more than " + std::to_string(kMaxTraceJunkItems) +
                " malformed or non-object items in traceEvents, more than good events: not a trace");
        }
    }

    void metadata(const std::string& key, std::string_view text) {
        const auto j = nlohmann::json::parse(text, nullptr, false);
        if (j.is_discarded()) {
            warn("metadata: \"" + key + "\" is not valid JSON; ignored");
            return;
        }
        if (key == "displayTimeUnit" && j.is_string()) {
            out_.display_time_unit = j.get<std::string>();
        } else if (key == "distributedInfo" && j.is_object()) {
            out_.rank = small_int(j, "rank", 0, kMaxRank);
            out_.world_size = small_int(j, "world_size", 1, kMaxRank + 1);
        } else if (key == "deviceProperties" && j.is_array() && !j.empty() && j[0].is_object()) {
            const auto n = j[0].find("name");
            if (n != j[0].end() && n->is_string()) out_.device_name = n->get<std::string>();
            out_.gpus_per_node = static_cast<int>(std::min<std::size_t>(j.size(), 1024));
        } else if (key == "ranksByPid") {
            if (j.is_boolean()) out_.ranks_by_pid = j.get<bool>();
            else warn("metadata: \"ranksByPid\" is not true or false; ignored");
        } else if (key == "host_name" && j.is_string()) {
            out_.host = j.get<std::string>().substr(0, 256);
        }
    }

    // An integer of distributedInfo within [lo, hi]; a warning otherwise.
    std::optional<int> small_int(const nlohmann::json& j, const char* key, int64_t lo, int64_t hi) {
        const auto it = j.find(key);
        if (it == j.end()) return std::nullopt;
        if (it->is_number_integer()) {
            const bool neg = it->is_number_unsigned() ? false : it->get<int64_t>() < 0;
            const bool big = it->is_number_unsigned() ? it->get<uint64_t>() > static_cast<uint64_t>(hi)
                                                      : it->get<int64_t>() > hi;
            if (!neg && !big && it->get<int64_t>() >= lo) return static_cast<int>(it->get<int64_t>());
        }
        warn("metadata: distributedInfo." + std::string(key) + " = " + it->dump().substr(0, 40) +
             " is not an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]; ignored");
        return std::nullopt;
    }

    void warn(std::string w) { out_.warnings.push_back(std::move(w)); }

    void truncated() {
        warn("truncated: the file ends at byte " + std::to_string(base_ + end_) +
             (src_.cut_short() ? " (compressed stream cut short)" : "") + "; " +
             std::to_string(out_.events) + " events read before it are used");
        saw_events_ = true;
    }

    void finish() {
        if (src_.cut_short() && !truncated_reported()) {
            warn("truncated: compressed stream cut short after " + std::to_string(out_.bytes) + " bytes");
        }
        if (malformed_ > 0) {
            warn("malformed-events: " + std::to_string(malformed_) + " events skipped (first at " +
                 first_malformed_ + ")");
        }
        if (skipped_nonobject_ > 0) {
            warn("non-object-events: " + std::to_string(skipped_nonobject_) + " items skipped");
        }
        if (control_chars_ > 0) {
            warn("control-characters: " + std::to_string(control_chars_) +
                 " raw control characters inside strings accepted");
        }
        detail::finish_trace(out_, state_);
    }
    bool truncated_reported() const {
        return std::any_of(out_.warnings.begin(), out_.warnings.end(),
                           [](const std::string& w) { return w.rfind("truncated", 0) == 0; });
    }

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
    uint64_t malformed_ = 0, skipped_nonobject_ = 0, control_chars_ = 0;
    std::string first_malformed_;
};

TraceData read_from(detail::ByteSource& src, const std::string& source, const ReadOptions& opts) {
    TraceData out;
    out.source = source;
    out.names.emplace_back();
    out.groups.emplace_back();
    Reader reader(src, out, opts);
    reader.run();
    return out;
}

// A file with [memory] events is read a second time, for the operator at
// each allocated peak (trace_memory.h): `reopen` gives its bytes again, or
// nullptr when they cannot be (standard input).
void name_peak_ops(TraceData& out, const std::function<std::unique_ptr<detail::ByteSource>()>& reopen) {
    detail::PeakOpFinder finder(out.memory);
    if (finder.empty()) return;
    auto src = reopen();
    if (src == nullptr) {
        out.warnings.push_back("memory-peak-op: standard input is read once: the operator at the memory peak is "
                               "not named (give the file's path to name it)");
        return;
    }
    TraceData scratch;
    scratch.source = out.source;
    try {
        Reader(*src, scratch, ReadOptions{}, &finder).run();
    } catch (const InputError& e) {
        out.warnings.push_back(std::string("memory-peak-op: the second reading failed: ") + e.what());
        return;
    }
    finder.apply(out.memory);
}

}  // namespace

TraceData read_trace(const std::string& path, const ReadOptions& opts) {
    check_input_path(path, "trace file (.json or .json.gz)");
    auto src = detail::open_file_source(path);
    TraceData out = read_from(*src, input_name(path), opts);
    name_peak_ops(out, [&]() -> std::unique_ptr<detail::ByteSource> {
        return path == "-" ? nullptr : detail::open_file_source(path);
    });
    return out;
}

TraceData read_trace_bytes(std::string_view bytes, const std::string& source) {
    auto src = detail::memory_source(bytes, source);
    TraceData out = read_from(*src, source, ReadOptions{});
    name_peak_ops(out, [&] { return detail::memory_source(bytes, source); });
    return out;
}

}  // namespace lostflops::trace
