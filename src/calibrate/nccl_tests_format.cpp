// Line-level parsing of nccl-tests text output. Formats taken from
// NVIDIA/nccl-tests src/common.cu (2017-2022: print_header in each test, e.g.
// "size count type redop time algbw busbw error", all_gather without redop,
// the oldest "bytes N type op ... res") and src/util.cu (2023-: one header
// "size count type redop root time algbw busbw #wrong", optional cputime,
// per-iteration and timestamp columns). Positions always come from the header.
#include "calibrate/nccl_tests_format.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "lostflops/nccl_curve.h"

namespace lostflops::nccl_format {

std::vector<std::string_view> split_ws(std::string_view s) {
    std::vector<std::string_view> out;
    std::size_t i = 0;
    while (i < s.size()) {
        while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r')) ++i;
        std::size_t j = i;
        while (j < s.size() && s[j] != ' ' && s[j] != '\t' && s[j] != '\r') ++j;
        if (j > i) out.push_back(s.substr(i, j - i));
        i = j;
    }
    return out;
}

std::optional<unsigned long long> parse_uint(std::string_view s) {
    unsigned long long v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return std::nullopt;
    return v;
}

std::optional<double> parse_double(std::string_view s) {
    if (s.empty() || s.size() > 64) return std::nullopt;
    const std::string tmp(s);
    char* end = nullptr;
    const double v = std::strtod(tmp.c_str(), &end);
    if (end != tmp.c_str() + tmp.size() || !std::isfinite(v)) return std::nullopt;
    return v;
}

TestKind classify_test(std::string_view token) {
    const auto slash = token.find_last_of('/');
    if (slash != std::string_view::npos) token.remove_prefix(slash + 1);
    struct Name {
        std::string_view name;
        TestKind::Class cls;
        Collective op;
    };
    using C = TestKind::Class;
    static constexpr Name kNames[] = {
        {"all_reduce_perf", C::collective, Collective::all_reduce},
        {"all_gather_perf", C::collective, Collective::all_gather},
        {"reduce_scatter_perf", C::collective, Collective::reduce_scatter},
        {"alltoall_perf", C::collective, Collective::all_to_all},
        {"sendrecv_perf", C::collective, Collective::send_recv},
        {"broadcast_perf", C::unsupported, Collective::all_reduce},
        {"reduce_perf", C::unsupported, Collective::all_reduce},
        {"gather_perf", C::unsupported, Collective::all_reduce},
        {"scatter_perf", C::unsupported, Collective::all_reduce},
        {"hypercube_perf", C::unsupported, Collective::all_reduce},
        {"alltoallv_perf", C::unsupported, Collective::all_reduce},
    };
    for (const auto& n : kNames) {
        // Exact, or with a suffix such as "_mpi" (some builds rename binaries).
        if (token == n.name || (token.size() > n.name.size() && token.substr(0, n.name.size()) == n.name &&
                                token[n.name.size()] == '_'))
            return {n.cls, n.op, std::string(n.name)};
    }
    return {};
}

int Columns::needed() const {
    return 1 + std::max({size, count, type, redop, root, time, busbw});
}

std::optional<Columns> parse_header(const std::vector<std::string_view>& tokens) {
    Columns c;
    for (int i = 0; i < static_cast<int>(tokens.size()); ++i) {
        const auto t = tokens[i];
        auto first = [i](int& slot) {
            if (slot < 0) slot = i;
        };
        if (t == "size" || t == "bytes") first(c.size);
        else if (t == "count" || t == "N") first(c.count);
        else if (t == "type") first(c.type);
        else if (t == "redop" || t == "op") first(c.redop);
        else if (t == "root") first(c.root);
        else if (t == "time" || t == "cputime") first(c.time);
        else if (t == "algbw") first(c.algbw);
        else if (t == "busbw") first(c.busbw);
        else if (t == "#wrong") c.wrong.push_back(i);
    }
    if (c.size != 0 || c.time < 0 || c.busbw < 0) return std::nullopt;
    return c;
}

std::optional<RankLine> parse_rank_line(const std::vector<std::string_view>& tokens,
                                        std::string_view raw) {
    if (tokens.size() < 4 || tokens[0] != "Rank") return std::nullopt;
    auto rank = parse_uint(tokens[1]);
    if (!rank || *rank > 100000000ULL) return std::nullopt;
    RankLine r;
    r.rank = static_cast<long>(*rank);
    for (std::size_t i = 2; i + 1 < tokens.size(); ++i) {
        if (tokens[i] == "on") {
            r.host = std::string(tokens[i + 1]);
            break;
        }
    }
    if (r.host.empty()) return std::nullopt;
    // The device name follows the "[bus id]" bracket and runs to the line end.
    const auto close = raw.find(']');
    if (close != std::string_view::npos) {
        auto rest = raw.substr(close + 1);
        while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) rest.remove_prefix(1);
        while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\r')) rest.remove_suffix(1);
        r.device = std::string(rest.substr(0, 200));
    }
    return r;
}

ShapeFit fit_collectives(const RowShape& row, int n) {
    ShapeFit out;
    auto keep_if = [&](auto pred) {
        for (int i = 0; i < 5; ++i) out.fit[i] = out.fit[i] && pred(kCollectives[i]);
    };
    auto reducing = [](Collective c) {
        return c == Collective::all_reduce || c == Collective::reduce_scatter;
    };
    if (!row.redop.empty()) {
        const bool none = row.redop == "none";
        keep_if([&](Collective c) { return reducing(c) != none; });
        out.evidence += fmt::format(" redop '{}'", row.redop);
    } else if (!row.redop_column && row.type_column) {
        keep_if([&](Collective c) { return !reducing(c); });
        out.evidence += " no redop column";
    }
    const int ts = type_size_bytes(row.type);
    if (row.count > 0 && ts > 0) {
        const double k = static_cast<double>(row.size) / (static_cast<double>(row.count) * ts);
        const bool per_rank = std::fabs(k - n) < 0.01 * n;
        const bool full = std::fabs(k - 1) < 0.01;
        if (per_rank != full) {
            keep_if([&](Collective c) {
                return (c == Collective::all_reduce || c == Collective::send_recv) == full;
            });
            out.evidence += fmt::format(" size/count={:g}", k);
        }
    }
    if (row.algbw >= 1 && row.busbw >= 1 && n >= 2) {  // two decimals: precise enough above 1
        const double q = row.busbw / row.algbw;
        keep_if([&](Collective c) {
            const double f = bus_factor(c, n);
            return std::fabs(q - f) <= 0.05 * f;
        });
        out.evidence += fmt::format(" busbw/algbw={:.3f}", q);
    }
    return out;
}

int type_size_bytes(std::string_view type) {
    static constexpr std::pair<std::string_view, int> kTypes[] = {
        {"int8", 1},     {"uint8", 1},    {"char", 1},     {"int32", 4},    {"uint32", 4},
        {"int", 4},      {"int64", 8},    {"uint64", 8},   {"half", 2},     {"float16", 2},
        {"float", 4},    {"float32", 4},  {"double", 8},   {"float64", 8},  {"bfloat16", 2},
        {"f8e4m3", 1},   {"f8e5m2", 1},   {"fp8_e4m3", 1}, {"fp8_e5m2", 1},
    };
    for (const auto& [name, bytes] : kTypes)
        if (type == name) return bytes;
    return 0;
}

}  // namespace lostflops::nccl_format
