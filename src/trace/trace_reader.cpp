// Streaming reader of Kineto Chrome-trace JSON (Chrome Trace Event Format,
// "JSON Object Format" with a traceEvents array, or the bare "JSON Array
// Format"). Chunks of the (possibly gzipped) file go through a small state
// machine that tracks strings, escapes and bracket depth to cut out each
// value; every traceEvents object is handed to parse_event() and reduced to
// what the analysis keeps (see trace.h). Top-level keys other than
// traceEvents (distributedInfo, displayTimeUnit, deviceProperties) are cut out
// whole and read with nlohmann::json, wherever they sit in the file.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <unordered_map>

#include "lostflops/error.h"
#include "lostflops/trace.h"
#include "trace/trace_event.h"
#include "trace/trace_internal.h"
#include "trace/trace_source.h"

namespace lostflops::trace {
namespace {

constexpr std::size_t kChunk = 4u << 20;            // bytes per read
constexpr std::size_t kMaxValue = 512u << 20;       // one event or metadata value

struct Truncated {};  // internal signal: the input ended inside a value

class Reader {
public:
    Reader(detail::ByteSource& src, TraceData& out)
        : src_(src), out_(out), buf_(new char[kChunk]), cap_(kChunk) {}

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
    // Reads more; keeps bytes from `keep` on. Returns false at the end.
    bool refill(std::size_t& keep) {
        if (eof_) return false;
        if (keep > 0) {
            std::memmove(buf_.get(), buf_.get() + keep, end_ - keep);
            base_ += keep;
            end_ -= keep;
            pos_ -= keep;
            keep = 0;
        }
        if (cap_ - end_ < kChunk / 2) {
            if (cap_ >= kMaxValue) {
                throw InputError(out_.source, "byte " + std::to_string(offset()),
                                 "a single JSON value is larger than 512 MiB");
            }
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
        return true;
    }
    // Next non-whitespace byte (not consumed); -1 at the end.
    int peek() {
        for (;;) {
            while (pos_ < end_) {
                const char c = buf_[pos_];
                if (c != ' ' && c != '\n' && c != '\r' && c != '\t') return static_cast<unsigned char>(c);
                ++pos_;
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

    // Cuts one complete JSON value starting at pos_; returns [start, end) in buf_.
    std::pair<std::size_t, std::size_t> cut() {
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
        const int c = peek();
        if (c < 0) bad("empty file: expected a JSON object with \"traceEvents\"");
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
            } else {
                auto [vs, ve] = cut();
                metadata(key, std::string_view(buf_.get() + vs, ve - vs));
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
                auto [s, e] = cut();  // not an object: skipped, like pandas would
                (void)s;
                (void)e;
                ++skipped_nonobject_;
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
                pos_ += used;
                break;
            }
            if (r == detail::ParseResult::malformed) {
                if (malformed_++ == 0) first_malformed_ = "byte " + std::to_string(offset()) + ", " + err_;
                cut();
                return;
            }
            std::size_t keep = pos_;
            if (!refill(keep)) throw Truncated{};
        }
        control_chars_ += f_.control_chars;
        if (f_.ts_fractional) out_.fractional_ts = true;
        detail::keep_event(f_, out_, state_);
    }

    void metadata(const std::string& key, std::string_view text) {
        if (key != "distributedInfo" && key != "displayTimeUnit" && key != "deviceProperties") return;
        const auto j = nlohmann::json::parse(text, nullptr, false);
        if (j.is_discarded()) {
            warn("metadata: \"" + key + "\" is not valid JSON; ignored");
            return;
        }
        if (key == "displayTimeUnit" && j.is_string()) {
            out_.display_time_unit = j.get<std::string>();
        } else if (key == "distributedInfo" && j.is_object()) {
            const auto r = j.find("rank");
            if (r != j.end() && r->is_number_integer()) out_.rank = r->get<int>();
            const auto w = j.find("world_size");
            if (w != j.end() && w->is_number_integer()) out_.world_size = w->get<int>();
        } else if (key == "deviceProperties" && j.is_array() && !j.empty() && j[0].is_object()) {
            const auto n = j[0].find("name");
            if (n != j[0].end() && n->is_string()) out_.device_name = n->get<std::string>();
        }
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

TraceData read_from(detail::ByteSource& src, const std::string& source) {
    TraceData out;
    out.source = source;
    out.names.emplace_back();
    Reader reader(src, out);
    reader.run();
    return out;
}

}  // namespace

TraceData read_trace(const std::string& path) {
    auto src = detail::open_file_source(path);
    return read_from(*src, path);
}

TraceData read_trace_bytes(std::string_view bytes, const std::string& source) {
    auto src = detail::memory_source(bytes, source);
    return read_from(*src, source);
}

}  // namespace lostflops::trace
