// Reading per-rank summaries (format: include/lostflops/trace_summary.h,
// docs/trace-summary-format.md) in one SAX pass (nlohmann::json::sax_parse):
// the top level is checked as it streams by, and each element of "ranks" is
// built as a small tree of at most kMaxSummaryRankValues values and depth
// kMaxRankDepth, turned into a RankReport (trace_summary_fields.cpp) and
// dropped. So a file of millions of empty objects, or one deep nesting, is an
// error after its first bad value, not gigabytes of tree.
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "lostflops/error.h"
#include "lostflops/trace_summary.h"
#include "job/text_input.h"
#include "trace/trace_summary_fields.h"

namespace lostflops::trace {
namespace {

using nlohmann::json;
constexpr int kMaxRankDepth = 6;  // rank > launch_stats > kernels > kernel; rank > iterations > it > starts

class SummarySax {
public:
    SummarySax(const std::string& source, const std::function<void(RankReport&&)>& each)
        : source_(source), each_(each) {}

    bool null() { return value(json(nullptr)); }
    bool boolean(bool v) { return value(json(v)); }
    bool number_integer(json::number_integer_t v) { return value(json(v)); }
    bool number_unsigned(json::number_unsigned_t v) { return value(json(v)); }
    bool number_float(json::number_float_t v, const std::string&) { return value(json(v)); }
    bool string(std::string& v) { return value(json(std::move(v))); }
    bool binary(json::binary_t&) { return value(json(nullptr)); }

    bool start_object(std::size_t) {
        if (depth_ == 0) {  // the document
            depth_ = 1;
            return true;
        }
        if (depth_ == 2 && stack_.empty()) element_start();
        else if (depth_ < 2) top_value_expected_object();
        json* p = add(json::object());
        stack_.push_back(p);
        ++depth_;
        return true;
    }
    bool key(std::string& k) {
        if (depth_ == 1) {
            top_key_ = k;
            if (k != "format" && k != "version" && k != "ranks")
                throw InputError(source_, k, "unknown key (a summary has \"format\", \"version\" and \"ranks\")");
            return true;
        }
        json& obj = *stack_.back();
        if (obj.contains(k)) throw InputError(source_, where() + "." + k, "repeated key");
        slot_ = &obj[k];
        return true;
    }
    bool end_object() {
        --depth_;
        if (depth_ == 0) return true;
        stack_.pop_back();
        if (stack_.empty()) element_end();
        return true;
    }
    bool start_array(std::size_t) {
        if (depth_ == 0) throw InputError(source_, "", "not a trace summary (expected a JSON object)");
        if (depth_ == 1) {
            if (top_key_ != "ranks") throw InputError(source_, top_key_, "expected a value, not an array");
            in_ranks_ = true;
            depth_ = 2;
            return true;
        }
        if (depth_ == 2 && stack_.empty()) element_start();
        json* p = add(json::array());
        stack_.push_back(p);
        ++depth_;
        return true;
    }
    bool end_array() {
        --depth_;
        if (depth_ == 1) {
            in_ranks_ = false;
            saw_ranks_ = true;
            return true;
        }
        stack_.pop_back();
        if (stack_.empty()) element_end();
        return true;
    }
    bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) {
        std::string what = e.what();
        const auto colon = what.rfind(": ");
        throw InputError(source_, fmt::format("byte {}", position),
                         "not valid JSON (" + (colon == std::string::npos ? what : what.substr(colon + 2)) + ")");
    }

    void finish() const {
        if (!saw_format_) throw InputError(source_, "format", std::string("not a trace summary (expected \"format\": \"") + kSummaryFormat + "\")");
        if (version_ == 0) throw InputError(source_, "version", "missing");
        if (!saw_ranks_) throw InputError(source_, "ranks", "expected an array");
    }

private:
    [[noreturn]] void top_value_expected_object() {
        throw InputError(source_, top_key_, "expected a value, not an object");
    }
    std::string where() const { return fmt::format("ranks[{}]", index_); }

    bool value(json&& v) {
        if (depth_ == 0) throw InputError(source_, "", "not a trace summary (expected a JSON object)");
        if (depth_ == 1) return top(std::move(v));
        if (depth_ == 2 && stack_.empty()) throw InputError(source_, where(), "expected an object");
        add(std::move(v));
        return true;
    }
    bool top(json&& v) {
        if (top_key_ == "format") {
            if (!v.is_string() || v.get<std::string>() != kSummaryFormat)
                throw InputError(source_, "format",
                                 std::string("not a trace summary (expected \"format\": \"") + kSummaryFormat + "\")");
            saw_format_ = true;
        } else if (top_key_ == "version") {
            if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > kSummaryVersion)
                throw InputError(source_, "version",
                                 fmt::format("unsupported summary version (expected 1 to {})", kSummaryVersion));
            version_ = static_cast<int>(v.get<int64_t>());
        } else {
            throw InputError(source_, top_key_, "expected an array");
        }
        return true;
    }
    void element_start() {
        values_ = 0;
        root_ = json();
    }
    json* add(json&& v) {
        if (++values_ > kMaxSummaryRankValues)
            throw InputError(source_, where(), fmt::format("more than {} values in one rank", kMaxSummaryRankValues));
        if (stack_.size() >= static_cast<std::size_t>(kMaxRankDepth))
            throw InputError(source_, where(), fmt::format("nested deeper than {} levels", kMaxRankDepth));
        if (stack_.empty()) {
            root_ = std::move(v);
            return &root_;
        }
        json& top = *stack_.back();
        if (top.is_array()) {
            top.push_back(std::move(v));
            return &top.back();
        }
        *slot_ = std::move(v);
        return slot_;
    }
    void element_end() {
        each_(detail::rank_from_json(root_, source_, where()));
        root_ = json();
        ++index_;
    }

    const std::string& source_;
    const std::function<void(RankReport&&)>& each_;
    int depth_ = 0;
    std::string top_key_;
    bool saw_format_ = false, saw_ranks_ = false, in_ranks_ = false;
    int version_ = 0;
    std::size_t index_ = 0, values_ = 0;
    json root_;
    std::vector<json*> stack_;
    json* slot_ = nullptr;
};

}  // namespace

void read_summary(std::string_view text, const std::string& source, const std::function<void(RankReport&&)>& each) {
    if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // UTF-8 byte-order mark
    SummarySax sax(source, each);
    json::sax_parse(text.begin(), text.end(), &sax);
    sax.finish();
}

std::vector<RankReport> summary_from_json(std::string_view text, const std::string& source) {
    std::vector<RankReport> out;
    read_summary(text, source, [&](RankReport&& r) { out.push_back(std::move(r)); });
    return out;
}

void load_summary(const std::string& path, const std::function<void(RankReport&&)>& each) {
    const std::string text = read_file_bounded(path, kMaxSummaryBytes, "trace summary");
    read_summary(text, input_name(path), each);
}

std::vector<RankReport> load_summary(const std::string& path) {
    std::vector<RankReport> out;
    load_summary(path, [&](RankReport&& r) { out.push_back(std::move(r)); });
    return out;
}

}  // namespace lostflops::trace
