// One trace event object -> EventFields. parse_event tries the fast path of
// trace_event_fast.cpp first; this file is the strict parser that decides
// every event the fast path gives up on (and names the error of a malformed
// one): the fields Kineto writes read over the strict JSON grammar of
// trace_json_strict.cpp (RFC 8259, no DOM, strings scanned 16 bytes at a
// time, numbers correctly rounded like Python's float()). Raw control
// characters inside strings are tolerated and counted (real traces contain
// them; the reader reports them as a named warning).
#include "trace/trace_event.h"

#include <cmath>
#include <string>
#include <string_view>

#include "trace/trace_json_strict.h"

namespace lostflops::trace::detail {
namespace {

class Parser : public StrictJson {
public:
    Parser(const char* p, const char* end, EventFields& f, std::string& err) : StrictJson(p, end, f, err) {}

    bool event() {
        ws();
        if (!expect('{')) return false;
        std::string key_buf;
        return items('}', true, &key_buf, "expected ',' or '}' in event",
                     [this](std::string_view key) { return top_field(key); });
    }

private:
    bool top_field(std::string_view key) {
        Scalar v;
        if (key == "args") {
            if (peek() == '{') return args();
            return value(v, nullptr, 1);
        }
        std::string* buf = nullptr;
        if (key == "name") buf = &f_.name_buf;
        else if (key == "cat") buf = &f_.cat_buf;
        else if (key == "ph") buf = &f_.ph_buf;
        const bool numeric = key == "ts" || key == "dur" || key == "pid" || key == "tid";
        if (!value(v, buf ? buf : &scratch_, 1, numeric)) return false;
        if (key == "ph") {
            if (v.kind == Scalar::Kind::string) f_.ph = v.text;
        } else if (key == "cat") {
            f_.has_cat = v.kind == Scalar::Kind::string;
            if (f_.has_cat) f_.cat = v.text;
        } else if (key == "name") {
            if (v.kind == Scalar::Kind::string) f_.name = v.text;
        } else if (key == "ts") {
            f_.has_ts = v.kind == Scalar::Kind::number && std::isfinite(v.number);
            f_.ts = v.number;
            f_.ts_fractional = !f_.has_ts || v.fractional;
        } else if (key == "dur") {
            f_.has_dur = v.kind == Scalar::Kind::number && std::isfinite(v.number);
            f_.dur = v.number;
        } else if (key == "pid") {
            f_.pid = to_int(v);
        } else if (key == "tid") {
            f_.tid = to_int(v);
        }
        return true;
    }

    bool args() {
        ++p_;
        std::string key_buf;
        return items('}', true, &key_buf, "expected ',' or '}' in args",
                     [this](std::string_view key) { return arg_field(key); });
    }

    // One member of "args": the fields of EventFields it holds.
    bool arg_field(std::string_view key) {
        Scalar v;
        const bool coll = key == "Collective name";
        const bool dtype = key == "dtype";
        std::string_view* pg = key == "Process Group Name"          ? &f_.pg_name
                               : key == "Process Group Description" ? &f_.pg_desc
                               : key == "Process Group Ranks"       ? &f_.pg_ranks
                                                                    : nullptr;
        std::string* pg_buf = pg == &f_.pg_name ? &f_.pg_name_buf : pg == &f_.pg_desc ? &f_.pg_desc_buf
                                                                                      : &f_.pg_ranks_buf;
        // NCCL message sizes (Kineto's record_param_comms arguments on the kernel).
        const bool in_n = key == "In msg nelems", out_n = key == "Out msg nelems", group = key == "Group size";
        double* mem = memory_arg(key);
        const bool numeric = key == "stream" || key == "correlation" || in_n || out_n || group || mem;
        if (!value(v, coll ? &f_.coll_buf : dtype ? &f_.dtype_buf : pg ? pg_buf : &scratch_, 2, numeric)) return false;
        if (key == "stream") {
            f_.has_stream = true;
            f_.stream = to_int(v);
        } else if (key == "correlation") {
            f_.correlation = to_int(v);
        } else if (coll && v.kind == Scalar::Kind::string) {
            f_.collective = v.text;
        } else if (dtype && v.kind == Scalar::Kind::string) {
            f_.dtype = v.text;
        } else if (pg != nullptr && v.kind == Scalar::Kind::string) {
            *pg = v.text;
        } else if (in_n || out_n || group) {
            const double x = v.kind == Scalar::Kind::number && std::isfinite(v.number) ? v.number : -1;
            (in_n ? f_.in_nelems : out_n ? f_.out_nelems : f_.group_size) = x;
        } else if (mem != nullptr) {
            *mem = v.kind == Scalar::Kind::number ? v.number : kNoNumber;
        }
        return true;
    }

    // The field of a [memory] event's argument, or nullptr.
    double* memory_arg(std::string_view key) {
        return key == "Total Allocated" ? &f_.mem_allocated
               : key == "Total Reserved" ? &f_.mem_reserved
               : key == "Device Type"    ? &f_.mem_device_type
               : key == "Device Id"      ? &f_.mem_device_id
                                         : nullptr;
    }

    // Python's int() as HTA applies it to a stream number: integers and
    // integral floats convert, decimal strings convert, anything else is -1.
    static int64_t to_int(const Scalar& v) {
        if (v.kind == Scalar::Kind::number) return python_int(v.number);
        if (v.kind != Scalar::Kind::string) return -1;
        return python_int(v.text);
    }

    std::string scratch_;
};

}  // namespace

void reset_event_fields(EventFields& out) {
    out.ph = out.cat = out.name = out.collective = {};
    out.has_cat = out.has_ts = out.has_dur = out.has_stream = false;
    out.ts_fractional = true;  // a missing "ts" makes pandas read the column as float
    out.ts = out.dur = 0;
    out.stream = -1;
    out.correlation = -1;
    out.pid = out.tid = -1;
    out.mem_allocated = out.mem_reserved = out.mem_device_type = out.mem_device_id = kNoNumber;
    out.control_chars = 0;
    out.dtype = out.pg_name = out.pg_desc = out.pg_ranks = {};
    out.in_nelems = out.out_nelems = out.group_size = -1;
}

ParseResult parse_event(const char* p, const char* end, EventFields& out, std::string& error,
                        std::size_t& consumed) {
    reset_event_fields(out);
    if (parse_event_fast(p, end, out, consumed)) return ParseResult::ok;
    // The fast path gave up (trace_event_fast.cpp): the strict parser decides.
    return parse_event_strict(p, end, out, error, consumed);
}

ParseResult parse_event_strict(const char* p, const char* end, EventFields& out, std::string& error,
                               std::size_t& consumed) {
    reset_event_fields(out);
    Parser parser(p, end, out, error);
    if (parser.event()) {
        consumed = parser.consumed();
        return ParseResult::ok;
    }
    return parser.need_more() ? ParseResult::need_more : ParseResult::malformed;
}

}  // namespace lostflops::trace::detail
