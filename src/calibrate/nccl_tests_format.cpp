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

std::string ranks_hint(const RowShape& row, std::optional<Collective> named) {
    if (!(row.algbw >= 1 && row.busbw > 0)) return "";  // two decimals: too coarse below 1 GB/s
    const double q = row.busbw / row.algbw;
    std::optional<int> found;
    Collective which = Collective::all_reduce;
    for (Collective c : kCollectives) {
        if (named && c != *named) continue;
        // F = 2(n-1)/n for all-reduce, (n-1)/n for the others that move data (nccl_curve.h).
        double n = 0;
        if (c == Collective::all_reduce && q < 2) n = 2 / (2 - q);
        else if (c != Collective::send_recv && c != Collective::all_reduce && q < 1) n = 1 / (1 - q);
        const double whole = std::round(n);
        if (whole < 2 || whole > 100000 || std::fabs(n - whole) > 0.02 * whole) continue;
        if (!fit_collectives(row, static_cast<int>(whole)).fits(c)) continue;
        if (found && *found != static_cast<int>(whole)) return "";
        found = static_cast<int>(whole);
        which = c;
    }
    if (!found) return "";
    return fmt::format(" (the bandwidths say {} for {}: busbw/algbw = {:.3f})", *found, to_string(which), q);
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

namespace {

bool all_digits(std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// "[1,0]<stdout>:" / "[1,0]<stderr>:": the stream, and the text after it.
std::optional<std::pair<std::string_view, std::string_view>> mpi_tag(std::string_view line) {
    if (line.empty() || line[0] != '[') return std::nullopt;
    const auto close = line.find("]<");
    if (close == std::string_view::npos || close < 4) return std::nullopt;
    const auto inner = line.substr(1, close - 1);
    const auto comma = inner.find(',');
    if (comma == std::string_view::npos || !all_digits(inner.substr(0, comma)) || !all_digits(inner.substr(comma + 1)))
        return std::nullopt;
    const auto end = line.find(">:", close);
    if (end == std::string_view::npos) return std::nullopt;
    return std::make_pair(line.substr(close + 2, end - close - 2), line.substr(end + 2));
}

std::string without_rank_tags(std::string_view line) {
    std::string out;
    for (std::size_t i = 0; i < line.size(); ++i) {
        if (line[i] == '[') {
            std::size_t j = i + 1;
            while (j < line.size() && line[j] >= '0' && line[j] <= '9') ++j;
            if (j > i + 1 && j < line.size() && line[j] == ']') {
                out += ' ';
                i = j;
                continue;
            }
        }
        out += line[i];
    }
    return out;
}

bool starts_table_line(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    return !s.empty() && (s.front() == '#' || (s.front() >= '0' && s.front() <= '9'));
}

bool is_redop(std::string_view t) {
    return t == "sum" || t == "prod" || t == "min" || t == "max" || t == "avg" || t == "none" || t == "premulsum" ||
           t == "mulsum";
}

bool is_int(std::string_view t) { return !t.empty() && (all_digits(t) || (t[0] == '-' && all_digits(t.substr(1)))); }

}  // namespace

CleanText clean_nccl_text(std::string_view text) {
    CleanText out;
    std::string right;
    std::vector<int> right_lines;
    int tagged = 0, dropped = 0, labelled = 0, rank_tags = 0, quoted = 0, panes = 0;
    std::size_t pos = 0;
    int number = 0;
    while (pos < text.size()) {
        std::size_t nl = text.find('\n', pos);
        if (nl == std::string_view::npos) nl = text.size();
        std::string_view line = text.substr(pos, nl - pos);
        pos = nl + 1;
        ++number;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (const auto tag = mpi_tag(line)) {
            if (tag->first != "stdout") {
                ++dropped;
                continue;
            }
            ++tagged;
            line = tag->second;
        }
        // srun --label: "12: " before the program's line.
        std::size_t k = 0;
        while (k < line.size() && line[k] == ' ') ++k;
        std::size_t d = k;
        while (d < line.size() && line[d] >= '0' && line[d] <= '9') ++d;
        if (d > k && d + 1 < line.size() && line[d] == ':' && line[d + 1] == ' ') {
            ++labelled;
            line.remove_prefix(d + 2);
        }
        std::size_t q = 0;
        while (q < line.size() && (line[q] == ' ' || line[q] == '\t')) ++q;
        if (q < line.size() && line[q] == '>') {
            ++quoted;
            line.remove_prefix(q + 1);
        }
        std::string clean = without_rank_tags(line);
        if (clean != std::string(line) && starts_table_line(clean)) ++rank_tags;
        const auto bar = clean.find('|');
        if (bar != std::string::npos && starts_table_line(clean)) {
            const std::string pane = clean.substr(bar + 1);
            if (starts_table_line(pane)) {
                ++panes;
                right += pane + "\n";
                right_lines.push_back(number);
                clean.resize(bar);
            }
        }
        out.text += clean + "\n";
        out.lines.push_back(number);
    }
    if (!right.empty()) {
        out.text += "\n" + right;
        out.lines.push_back(right_lines.front());
        out.lines.insert(out.lines.end(), right_lines.begin(), right_lines.end());
    }
    if (tagged) out.notes.push_back(fmt::format("mpirun --tag-output prefixes removed from {} line(s)", tagged));
    if (dropped) out.notes.push_back(fmt::format("{} line(s) of the processes' standard error skipped", dropped));
    if (labelled) out.notes.push_back(fmt::format("srun --label prefixes removed from {} line(s)", labelled));
    if (rank_tags) out.notes.push_back(fmt::format("'[N]' rank tags removed from {} line(s)", rank_tags));
    if (quoted) out.notes.push_back(fmt::format("'>' quote marks removed from {} line(s)", quoted));
    if (panes) out.notes.push_back(fmt::format("{} line(s) held two outputs side by side ('|'): read one after the other", panes));
    return out;
}

std::optional<Columns> columns_from_row(const std::vector<std::string_view>& t) {
    if (t.size() < 11 || t.size() > 13 || !parse_uint(t[0]) || !parse_uint(t[1]) || type_size_bytes(t[2]) == 0)
        return std::nullopt;
    Columns c;
    c.size = 0;
    c.count = 1;
    c.type = 2;
    int next = 3;
    if (is_redop(t[3])) c.redop = next++;
    if (t.size() - static_cast<std::size_t>(next) == 9 && is_int(t[static_cast<std::size_t>(next)])) c.root = next++;
    if (t.size() - static_cast<std::size_t>(next) != 8) return std::nullopt;
    c.time = next;
    c.algbw = next + 1;
    c.busbw = next + 2;
    for (const int i : {next, next + 1, next + 2, next + 4, next + 5, next + 6})  // times and bandwidths
        if (!parse_double(t[static_cast<std::size_t>(i)])) return std::nullopt;
    return c;
}

}  // namespace lostflops::nccl_format
