// Streaming reader of Kineto Chrome-trace JSON (Chrome Trace Event Format,
// "JSON Object Format" with a traceEvents array, or the bare "JSON Array
// Format"). Chunks of the (possibly gzipped) file go through a small state
// machine that tracks strings, escapes and bracket depth to cut out each
// value (trace_reader_buffer.cpp); every traceEvents object is parsed in
// place by the hand-written strict parser of trace_event.cpp (parse_event)
// and reduced to what the analysis keeps (see trace_read.h). Top-level keys other
// than traceEvents (distributedInfo, displayTimeUnit, deviceProperties,
// host_name) are cut out whole and read with nlohmann::json, wherever they
// sit in the file; other values are skipped as they stream by, keeping
// nothing.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <functional>
#include <memory>

#include "lostflops/error.h"
#include "lostflops/trace.h"
#include "job/text_input.h"
#include "trace/trace_reader.h"

namespace lostflops::trace {

namespace detail {

void Reader::run() {
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

void Reader::document() {
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

void Reader::object() {
    if (need() == '}') { ++pos_; return; }
    for (;;) {
        if (need() != '"') bad("expected a key string");
        auto [ks, ke] = cut();
        std::string key(buf_.get() + ks + 1, ke - ks - 2);
        if (need() != ':') bad("expected ':' after key \"" + key + "\"");
        ++pos_;
        const int v = need();
        if (key == "traceEvents" && v == '[') {
            // A second traceEvents (two traces pasted into one object) is
            // read on, as before, and said (it was not).
            if (event_arrays_++ == 1)
                warn("duplicate-key: \"traceEvents\" appears more than once in the object; the events of every "
                     "array are read: two traces in one file?");
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

void Reader::events() {
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

void Reader::event() {
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

void Reader::check_junk() {
    const uint64_t junk = malformed_ + skipped_nonobject_;
    if (junk > kMaxTraceJunkItems && 2 * junk > out_.events + skipped_nonobject_) {
        bad("more than " + std::to_string(kMaxTraceJunkItems) +
            " malformed or non-object items in traceEvents, more than good events: not a trace");
    }
}

void Reader::metadata(const std::string& key, std::string_view text) {
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
        // Rank 8 of 8 ranks: one of the two is wrong; the rank names the file.
        if (out_.rank && out_.world_size && *out_.rank >= *out_.world_size) {
            warn(fmt::format("metadata: distributedInfo.rank {} is not below its world_size {}; the world size is "
                             "ignored",
                             *out_.rank, *out_.world_size));
            out_.world_size.reset();
        }
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

std::optional<int> Reader::small_int(const nlohmann::json& j, const char* key, int64_t lo, int64_t hi) {
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

void Reader::truncated() {
    warn("truncated: the file ends at byte " + std::to_string(base_ + end_) +
         (src_.cut_short() ? " (compressed stream cut short)" : "") + "; " +
         std::to_string(out_.events) + " events read before it are used");
    saw_events_ = true;
}

void Reader::finish() {
    if (src_.trailing_garbage())
        warn("gzip: bytes after the last gzip member are not gzip data; ignored (gzip -d: trailing garbage ignored)");
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

bool Reader::truncated_reported() const {
    return std::any_of(out_.warnings.begin(), out_.warnings.end(),
                       [](const std::string& w) { return w.rfind("truncated", 0) == 0; });
}

}  // namespace detail

namespace {

using detail::Reader;

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
