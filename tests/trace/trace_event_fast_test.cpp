// The event parser's fast path against the strict parser: on every event of
// generated and real traces (../shared/traces, when present) and on seeded
// random mutations of them, whenever the fast path
// accepts an event it gives the strict parser's fields and length; it takes
// nearly all of Kineto's events (the speed depends on it); json_number and
// the fast path's own number reading give std::from_chars's double.
#include <gtest/gtest.h>

#include <charconv>
#include <cstring>
#include <nlohmann/json.hpp>
#include <random>

#include "trace/trace_event.h"
#include "trace/trace_test_util.h"

namespace lostflops::trace::detail {
namespace {

// Each event of a trace's JSON text, the way Kineto spaces it.
std::vector<std::string> events_of_text(const std::string& text) {
    const auto j = nlohmann::json::parse(text);
    std::vector<std::string> out;
    const auto& evs = j.is_array() ? j : j.at("traceEvents");
    for (const auto& e : evs) {
        std::string s = e.dump();
        // Kineto writes ", " and ": "; dump() writes neither.
        std::string spaced;
        bool in_string = false, escape = false;
        for (char c : s) {
            spaced += c;
            if (in_string) {
                if (escape) escape = false;
                else if (c == '\\') escape = true;
                else if (c == '"') in_string = false;
            } else if (c == '"') {
                in_string = true;
            } else if (c == ',' || c == ':') {
                spaced += ' ';
            }
        }
        out.push_back(std::move(spaced));
    }
    return out;
}

uint64_t bits(double x) {
    uint64_t b;
    std::memcpy(&b, &x, sizeof b);
    return b;
}

// Fast path (when it accepts) == strict parser, field by field.
bool agree(const std::string& ev, bool& accepted) {
    EventFields fast, strict;
    std::size_t fast_used = 0, strict_used = 0;
    reset_event_fields(fast);
    accepted = parse_event_fast(ev.data(), ev.data() + ev.size(), fast, fast_used);
    std::string err;
    const auto r = parse_event_strict(ev.data(), ev.data() + ev.size(), strict, err, strict_used);
    if (!accepted) return true;
    EXPECT_EQ(r, ParseResult::ok) << ev;
    if (r != ParseResult::ok) return false;
    const bool same = fast_used == strict_used && fast.ph == strict.ph && fast.cat == strict.cat &&
                      fast.name == strict.name && fast.collective == strict.collective &&
                      fast.has_cat == strict.has_cat && fast.has_ts == strict.has_ts &&
                      fast.ts_fractional == strict.ts_fractional && bits(fast.ts) == bits(strict.ts) &&
                      fast.has_dur == strict.has_dur && bits(fast.dur) == bits(strict.dur) &&
                      fast.has_stream == strict.has_stream && fast.stream == strict.stream &&
                      fast.correlation == strict.correlation && fast.control_chars == strict.control_chars &&
                      bits(fast.in_nelems) == bits(strict.in_nelems) &&
                      bits(fast.out_nelems) == bits(strict.out_nelems) &&
                      bits(fast.group_size) == bits(strict.group_size) && fast.dtype == strict.dtype &&
                      fast.pg_name == strict.pg_name && fast.pg_desc == strict.pg_desc &&
                      fast.pg_ranks == strict.pg_ranks && fast.tid == strict.tid &&
                      bits(fast.mem_allocated) == bits(strict.mem_allocated) &&
                      bits(fast.mem_reserved) == bits(strict.mem_reserved) &&
                      bits(fast.mem_device_type) == bits(strict.mem_device_type) &&
                      bits(fast.mem_device_id) == bits(strict.mem_device_id);
    EXPECT_TRUE(same) << ev;
    return same;
}

// Kineto's events are what the fast path is for: it must take nearly all.
void expect_agree_and_taken(const std::vector<std::string>& evs, const std::string& what) {
    ASSERT_GT(evs.size(), 100u) << what;
    std::size_t taken = 0;
    for (const auto& ev : evs) {
        bool accepted = false;
        ASSERT_TRUE(agree(ev, accepted));
        taken += accepted ? 1 : 0;
    }
    EXPECT_GT(static_cast<double>(taken), 0.99 * static_cast<double>(evs.size())) << what;
}

// Kineto-shaped events of a generated job (trace_synth.h), as written and as Kineto spaces them.
std::vector<std::string> generated_events() {
    SynthSpec s;
    s.ranks = 16;
    s.tp = 8;
    s.jitter_pct = 3;
    return events_of_text(synth_trace(s, 3));
}

TEST(TraceEventFast, AgreesWithStrictParserOnGeneratedEvents) {
    expect_agree_and_taken(generated_events(), "generated");
}

// The real traces of ../shared/traces (skipped when absent).
TEST(TraceEventFast, AgreesWithStrictParserOnRealEvents) {
    for (const char* file : {"a100-2rank-nccl.rank0.json.gz", "mi250-toy-train.json.gz",
                             "v100-ns-timeunit.rank0.json.gz", "sampled-128rank.rank0.json.gz"}) {
        LOSTFLOPS_SHARED_TRACE(path, file);
        expect_agree_and_taken(events_of_text(test::gunzip_file(path)), file);
    }
}

// Memory events (trace_memory.h): the two traces recorded with
// profile_memory=True in ../shared/traces/h200 (skipped when absent).
TEST(TraceEventFast, AgreesWithStrictParserOnMemoryEvents) {
    for (const char* file : {"h200/h200-llama3.2-1b-s4096-b2-autocast-memory.json.gz",
                             "h200/h200-llama3.2-3b-s8192-b2-fsdp2-memory.json.gz"}) {
        LOSTFLOPS_SHARED_TRACE(path, file);
        expect_agree_and_taken(events_of_text(test::gunzip_file(path)), file);
    }
}

TEST(TraceEventFast, AgreesWithStrictParserOnMutatedEvents) {
    auto evs = generated_events();
    const auto memory = events_of_text(test::read_bytes(test::data_path("memory-small.json")));
    for (int i = 0; i < 20; ++i) evs.insert(evs.end(), memory.begin(), memory.end());
    if (const std::string real = test::shared_trace("a100-2rank-nccl.rank0.json.gz"); !real.empty()) {
        const auto more = events_of_text(test::gunzip_file(real));
        evs.insert(evs.end(), more.begin(), more.begin() + 2000);
    }
    static const std::string alphabet = "{}[]\",:\\0123456789.eE-+ntfu \n\t\x01\x7f";
    static const char* const pieces[] = {"\\u0041", "\\\"", "1e400", "-0", "1e-400", "\"7\"", "null",
                                         "true", "[]", "{}", "[[1,2],[3]]", "{\"a\":[1,{\"b\":2}]}",
                                         "0.1e+2", "01", "1.", "9007199254740993", "1661203462608355.25",
                                         "123456789012345678901234567890", "\"stream\": 7, ",
                                         "\"correlation\": 1.5, ", "\"ts\": 2e3, ", "\"name\": 5, ",
                                         "\"Total Allocated\": \"5\", ", "\"Device Type\": 1.0, ", "\"tid\": \"3\", "};
    std::mt19937 rng(1105);
    std::size_t accepted_mutants = 0;
    for (int i = 0; i < 60000; ++i) {
        std::string s = evs[rng() % evs.size()];
        const int edits = 1 + static_cast<int>(rng() % 4);
        for (int k = 0; k < edits && !s.empty(); ++k) {
            const std::size_t at = rng() % s.size();
            switch (rng() % 5) {
                case 0: s[at] = static_cast<char>(s[at] ^ (1 << (rng() % 8))); break;
                case 1: s.resize(at); break;
                case 2: s.insert(at, 1, alphabet[rng() % alphabet.size()]); break;
                case 3: s.erase(at, 1 + rng() % 8); break;
                default: s.insert(at, pieces[rng() % std::size(pieces)]); break;
            }
        }
        bool accepted = false;
        ASSERT_TRUE(agree(s, accepted));
        accepted_mutants += accepted ? 1 : 0;
    }
    EXPECT_GT(accepted_mutants, 1000u);  // the comparison covered the fast path, not only its refusals
}

TEST(TraceEventFast, JsonNumberIsFromChars) {
    std::mt19937_64 rng(53);
    std::vector<std::string> cases = {"0", "-0", "0.0", "-0.0", "1661203462608355.0", "1661203462608355.5",
                                      "9007199254740992", "9007199254740993", "1e22", "1e23", "1e-22",
                                      "123456789012345678901234567890", "0.000001", "1E+2", "5e-324",
                                      "1e400", "-1e400", "1e-400", "17976931348623157e292",
                                      "1661203467694278.5", "9999999999999999999", "0.1234567890123456789"};
    for (int i = 0; i < 200000; ++i) {
        std::string s;
        if (rng() % 2) s += '-';
        const int int_digits = 1 + static_cast<int>(rng() % 20);
        s += static_cast<char>('1' + rng() % 9);
        for (int k = 1; k < int_digits; ++k) s += static_cast<char>('0' + rng() % 10);
        if (rng() % 2) {
            s += '.';
            const int frac = 1 + static_cast<int>(rng() % 8);
            for (int k = 0; k < frac; ++k) s += static_cast<char>('0' + rng() % (rng() % 3 ? 10 : 1));
        }
        if (rng() % 4 == 0) s += "e" + std::to_string(static_cast<int>(rng() % 61) - 30);
        cases.push_back(std::move(s));
    }
    // Kineto's times with fractions of a microsecond (beyond 2^53 as integers).
    for (int i = 0; i < 200000; ++i) {
        std::string s = std::to_string(1000000000000000ULL + rng() % 8000000000000000ULL) + ".";
        const int frac = 1 + static_cast<int>(rng() % 3);
        for (int k = 0; k < frac; ++k) s += static_cast<char>('0' + rng() % 10);
        cases.push_back(std::move(s));
    }
    for (const auto& s : cases) {
        double want = 0;
        const auto r = std::from_chars(s.data(), s.data() + s.size(), want);
        if (r.ec != std::errc()) continue;  // out of range: the strict parser's own rule, tested elsewhere
        ASSERT_EQ(bits(json_number(s.data(), s.data() + s.size())), bits(want)) << s;
        // The fast path sums the digits itself: the same double.
        const std::string ev = "{\"ts\": " + s + ", \"dur\": 1}";
        EventFields f;
        reset_event_fields(f);
        std::size_t used = 0;
        ASSERT_TRUE(parse_event_fast(ev.data(), ev.data() + ev.size(), f, used)) << ev;
        ASSERT_EQ(bits(f.ts), bits(want)) << s;
    }
}

}  // namespace
}  // namespace lostflops::trace::detail
