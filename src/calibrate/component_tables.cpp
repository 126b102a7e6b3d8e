// Readers of the component micro-benchmark tables (component_tables.h): RFC
// 4180 CSV (validate.h parse_csv) after the leading '#' comment lines, columns
// found by name, every number checked (finite, positive, plausible) and every
// GPU a catalog name, errors naming file, line and column.
#include "calibrate/component_tables.h"

#include <cmath>
#include <filesystem>
#include <map>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lostflops/catalog.h"
#include "lostflops/embedded.h"
#include "lostflops/error.h"
#include "lostflops/validate.h"
#include "job/text_input.h"

namespace lostflops::calib {

namespace {

// The table after its leading comment lines, and how many lines they took.
std::pair<std::string, int> strip_comments(std::string_view text) {
    int skipped = 0;
    std::size_t at = 0;
    while (at < text.size() && text[at] == '#') {
        const std::size_t end = text.find('\n', at);
        at = end == std::string_view::npos ? text.size() : end + 1;
        ++skipped;
    }
    return {std::string(text.substr(at)), skipped};
}

class Table {
public:
    Table(std::string_view text, const std::string& source) : source_(source) {
        auto [body, skipped] = strip_comments(text);
        first_line_ = skipped + 1;
        rows_ = parse_csv(body, source, &lines_);
        if (rows_.empty()) throw InputError(source, "", "expected a header row");
        for (std::size_t r = 1; r < rows_.size(); ++r)
            if (rows_[r].size() != rows_[0].size())
                throw InputError(source, where(r), fmt::format("{} fields; the header has {}", rows_[r].size(),
                                                               rows_[0].size()));
    }
    std::size_t size() const { return rows_.empty() ? 0 : rows_.size() - 1; }
    std::size_t column(const std::string& name) const {
        for (std::size_t i = 0; i < rows_[0].size(); ++i)
            if (rows_[0][i] == name) return i;
        throw InputError(source_, where(0), "missing column '" + name + "'");
    }
    // A column the table may leave out.
    std::optional<std::size_t> optional_column(const std::string& name) const {
        for (std::size_t i = 0; i < rows_[0].size(); ++i)
            if (rows_[0][i] == name) return i;
        return std::nullopt;
    }
    const std::string& text(std::size_t row, std::size_t col) const { return rows_[row + 1][col]; }
    double number(std::size_t row, std::size_t col, double lo, double hi) const {
        const std::string& s = text(row, col);
        const auto v = parse_table_number(s);
        if (!v || *v < lo || *v > hi)
            throw InputError(source_, fmt::format("{}: {}", where(row + 1), rows_[0][col]),
                             fmt::format("'{}' is not a number in [{}, {}]", s, lo, hi));
        return *v;
    }
    std::string gpu(std::size_t row, std::size_t col) const {
        const std::string& g = text(row, col);
        if (!find_gpu(g))
            throw InputError(source_, fmt::format("{}: {}", where(row + 1), rows_[0][col]),
                             "'" + g + "' is not a catalog GPU (lostflops list gpus)");
        return g;
    }
    // The file's line of data row `row` / of CSV row `csv_row` (0: the
    // header): blank lines and quoted line breaks counted.
    int line(std::size_t row) const { return file_line(row + 1); }
    std::string where(std::size_t csv_row) const { return fmt::format("line {}", file_line(csv_row)); }
    const std::string& source() const { return source_; }

private:
    std::string source_;
    int first_line_ = 1;                // the file's line of the CSV's first line
    std::vector<std::size_t> lines_;    // each CSV row's line within the CSV
    std::vector<std::vector<std::string>> rows_;
    int file_line(std::size_t csv_row) const { return first_line_ - 1 + static_cast<int>(lines_[csv_row]); }
};

// Plausible ranges: a GEMM dimension up to 1e7, a rate up to 1e5 TFLOP/s
// (20x the largest dense peak of the catalog), a bandwidth up to 1e5 GB/s
// (12x the fastest HBM of the catalog), a sequence up to 1e9 tokens.
constexpr double kMaxDim = 1e7, kMaxTflops = 1e5, kMaxGBps = 1e5, kMaxSeq = 1e9;

template <typename T, typename F>
T parse_enum(const Table& t, std::size_t r, std::size_t c, F from_string, const char* expected) {
    const auto v = from_string(t.text(r, c));
    if (!v) throw InputError(t.source(), fmt::format("{}: column {}", t.where(r + 1), c + 1), std::string("expected ") + expected);
    return *v;
}

// The board power a row was measured at, in watts, checked against the GPU's
// TDP (catalog): nvidia-smi only sets a power limit inside the board's
// [Min Power Limit, Max Power Limit] (nvidia-smi(1), -pl), which for the
// catalog's boards lies inside [0.1, 2] x TDP (H100 SXM 200-700 W at a 700 W
// TDP, A100 SXM 100-400 W at 400 W: nvidia-smi -q, POWER section). Outside
// that the value is a typo or another unit, and the fit's power exponent,
// shared by every family, would follow it.
constexpr double kMinPowerOverTdp = 0.1, kMaxPowerOverTdp = 2;

void check_power(double w, const Gpu& gpu, const std::string& file, const std::string& key, const std::string& shown) {
    if (std::isfinite(w) && w >= kMinPowerOverTdp * gpu.tdp_w && w <= kMaxPowerOverTdp * gpu.tdp_w) return;
    throw InputError(file, key,
                     fmt::format("power limit {}: expected watts from {:g} to {:g} ({:g} to {:g} x the {} W TDP of {})",
                                 shown, kMinPowerOverTdp * gpu.tdp_w, kMaxPowerOverTdp * gpu.tdp_w, kMinPowerOverTdp,
                                 kMaxPowerOverTdp, gpu.tdp_w, gpu.name));
}

// A GEMM row faster than the GPU's dense tensor-core peak for its format
// (catalog, from the datasheets) is a wrong row: no kernel beats the peak.
// 5 % above it is let through for a clock above the datasheet's boost clock.
constexpr double kMaxOverPeak = 1.05;

void check_gemm_peak(const GemmRow& g, const Table& t, std::size_t r) {
    const auto gpu = find_gpu(g.gpu);
    const bool fp8 = g.dtype != GemmDtype::bf16;
    const double peak = gpu ? (fp8 ? gpu->peak_fp8_tflops : gpu->peak_bf16_tflops) : 0;
    if (!gpu || g.tflops <= kMaxOverPeak * peak) return;
    throw InputError(t.source(), fmt::format("{}: tflops", t.where(r + 1)),
                     peak <= 0 ? fmt::format("{} TFLOP/s in {} on {}, which has no {} tensor cores (catalog)", g.tflops,
                                             to_string(g.dtype), g.gpu, fp8 ? "fp8" : "bf16")
                               : fmt::format("{:g} TFLOP/s is {:.1f} x the {:g} TFLOP/s dense {} peak of {} (catalog); "
                                             "a measurement cannot exceed it (at most {:g} x)",
                                             g.tflops, g.tflops / peak, peak, fp8 ? "fp8" : "bf16", g.gpu, kMaxOverPeak));
}

}  // namespace

std::vector<GemmRow> parse_gemm_table(std::string_view text, const std::string& source) {
    const Table t(text, source);
    const auto cg = t.column("gpu"), cp = t.column("power_w"), cd = t.column("dtype"), cm = t.column("m"),
               cn = t.column("n"), ck = t.column("k"), ct = t.column("tflops"), cs = t.column("source");
    const auto cb = t.optional_column("best_of_sweep");
    std::vector<GemmRow> out;
    for (std::size_t r = 0; r < t.size(); ++r) {
        GemmRow g;
        g.gpu = t.gpu(r, cg);
        g.power_w = t.number(r, cp, 1, 1e4);
        check_power(g.power_w, *find_gpu(g.gpu), source, t.where(r + 1) + ": power_w", t.text(r, cp));
        g.dtype = parse_enum<GemmDtype>(t, r, cd, gemm_dtype_from_string, "bf16, fp8_tensor, fp8_row, fp8_block or mxfp8");
        g.m = t.number(r, cm, 1, kMaxDim);
        g.n = t.number(r, cn, 1, kMaxDim);
        g.k = t.number(r, ck, 1, kMaxDim);
        g.tflops = t.number(r, ct, 1e-6, kMaxTflops);
        g.source = t.text(r, cs);
        g.line = t.line(r);
        check_gemm_peak(g, t, r);
        if (cb) {
            const std::string& b = t.text(r, *cb);
            if (b != "0" && b != "1") throw InputError(source, t.where(r + 1) + ": best_of_sweep", "expected 0 or 1");
            g.best_of_sweep = b == "1";
        }
        out.push_back(std::move(g));
    }
    return out;
}

std::vector<AttentionRow> parse_attention_table(std::string_view text, const std::string& source) {
    const Table t(text, source);
    const auto cg = t.column("gpu"), ck = t.column("kernel"), cp = t.column("pass"), cc = t.column("causal"),
               ch = t.column("head_dim"), cs = t.column("seq"), ct = t.column("tflops"), co = t.column("source");
    std::vector<AttentionRow> out;
    for (std::size_t r = 0; r < t.size(); ++r) {
        AttentionRow a;
        a.gpu = t.gpu(r, cg);
        a.kernel = parse_enum<AttentionImpl>(t, r, ck, attention_impl_from_string, "fa2, fa3 or cudnn");
        const std::string& pass = t.text(r, cp);
        if (pass != "fwd" && pass != "bwd") throw InputError(source, t.where(r + 1) + ": pass", "expected fwd or bwd");
        a.backward = pass == "bwd";
        a.causal = t.number(r, cc, 0, 1) != 0;
        a.head_dim = static_cast<int>(t.number(r, ch, 1, 4096));
        a.seq = t.number(r, cs, 1, kMaxSeq);
        a.tflops = t.number(r, ct, 1e-6, kMaxTflops);
        a.source = t.text(r, co);
        a.line = t.line(r);
        out.push_back(std::move(a));
    }
    return out;
}

std::vector<MemoryRow> parse_memory_table(std::string_view text, const std::string& source) {
    const Table t(text, source);
    const auto cg = t.column("gpu"), ck = t.column("kernel"), cb = t.column("GBps"), cs = t.column("source");
    std::vector<MemoryRow> out;
    for (std::size_t r = 0; r < t.size(); ++r)
        out.push_back({t.gpu(r, cg), t.text(r, ck), t.number(r, cb, 1e-6, kMaxGBps), t.text(r, cs), t.line(r)});
    return out;
}

ComponentTables builtin_component_tables() {
    ComponentTables t;
    auto text = [](const char* name) {
        auto v = embedded_file(name);
        if (!v) throw InputError(name, "", "built-in component table is missing");
        return *v;
    };
    t.gemm = parse_gemm_table(text("calibration/gemm.csv"), "data/calibration/gemm.csv");
    t.attention = parse_attention_table(text("calibration/attention.csv"), "data/calibration/attention.csv");
    t.memory = parse_memory_table(text("calibration/memory_bound.csv"), "data/calibration/memory_bound.csv");
    t.sources = {"data/calibration/gemm.csv", "data/calibration/attention.csv", "data/calibration/memory_bound.csv"};
    return t;
}

namespace {

// The measured folder's files, in the columns gpu_components.py writes.
std::string measured_source(const std::string& dir, const nlohmann::json& meta) {
    auto get = [&](const char* k) { return meta.contains(k) ? meta[k].dump() : std::string("?"); };
    std::string driver = "?";
    if (meta.contains("nvidia_smi") && meta["nvidia_smi"].contains("driver_version"))
        driver = meta["nvidia_smi"]["driver_version"].dump();
    return fmt::format("measured: {} (gpu {}, driver {}, torch {}, cuda {}, cudnn {}, date {})", dir, get("gpu"),
                       driver, get("torch"), get("cuda"), get("cudnn"), get("date"));
}

double power_of(const nlohmann::json& meta, const Gpu& gpu, const std::string& meta_path) {
    // nvidia-smi --query-gpu=power.limit prints "700.00 W" (gpu_components.py
    // keeps that text; a bare JSON number is read as watts); "[N/A]" on a
    // board that does not report it, and an absent key: the catalog TDP.
    if (!meta.is_object() || !meta.contains("nvidia_smi") || !meta["nvidia_smi"].is_object() ||
        !meta["nvidia_smi"].contains("power.limit"))
        return gpu.tdp_w;
    const nlohmann::json& v = meta["nvidia_smi"]["power.limit"];
    const std::string key = "nvidia_smi.power.limit";
    if (v.is_number()) {
        const double w = v.get<double>();
        check_power(w, gpu, meta_path, key, v.dump());
        return w;
    }
    if (!v.is_string())
        throw InputError(meta_path, key, std::string("expected watts as text (\"700.00 W\") or a number, got ") + v.type_name());
    const std::string s = v.get<std::string>();
    if (s == "[N/A]" || s == "N/A") return gpu.tdp_w;
    char* end = nullptr;
    const double w = std::strtod(s.c_str(), &end);
    std::string_view rest(end);
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    if (end == s.c_str() || !(rest.empty() || rest == "W"))
        throw InputError(meta_path, key, "'" + s + "': expected watts as nvidia-smi prints them (\"700.00 W\")");
    check_power(w, gpu, meta_path, key, "'" + s + "'");
    return w;
}

}  // namespace

ComponentTables read_measured_tables(const std::string& dir, const std::string& gpu_name) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
        throw InputError(dir, "", fs::exists(dir, ec) ? "not a folder: --measured takes the folder gpu_components.py wrote"
                                                      : "no such folder (--measured takes the folder gpu_components.py wrote)");
    const std::string gpu = gpu_name.empty() ? fs::path(dir).filename().string() : gpu_name;
    const auto spec = find_gpu(gpu);
    if (!spec)
        throw InputError(dir, "gpu", "'" + gpu + "' is not a catalog GPU; name the folder after it or give --gpu");
    const std::string meta_path = (fs::path(dir) / "meta.json").string();
    nlohmann::json meta;
    try {
        meta = nlohmann::json::parse(read_text_file(meta_path, kMaxTableBytes, "measurement metadata (JSON)"));
    } catch (const nlohmann::json::exception& e) {
        throw InputError(meta_path, "", std::string("invalid JSON: ") + e.what());
    }
    const std::string source = measured_source(dir, meta);
    const double power = power_of(meta, *spec, meta_path);
    ComponentTables out;
    out.sources.push_back(source);
    auto load = [&](const char* name) -> std::optional<Table> {
        const auto p = fs::path(dir) / name;
        if (!fs::exists(p)) return std::nullopt;
        return Table(read_text_file(p.string(), kMaxTableBytes, "measured table (CSV)"), p.string());
    };
    if (auto t = load("gemm.csv")) {
        const auto cd = t->column("dtype"), cs = t->column("scaling"), cm = t->column("m"), cn = t->column("n"),
                   ck = t->column("k"), ct = t->column("tflops");
        for (std::size_t r = 0; r < t->size(); ++r) {
            GemmRow g{gpu, power, GemmDtype::bf16, t->number(r, cm, 1, kMaxDim), t->number(r, cn, 1, kMaxDim),
                      t->number(r, ck, 1, kMaxDim), t->number(r, ct, 1e-6, kMaxTflops), source, t->line(r)};
            const std::string d = t->text(r, cd), s = t->text(r, cs);
            if (d == "fp8" && s == "tensor") g.dtype = GemmDtype::fp8_tensor;
            else if (d == "fp8" && s == "row") g.dtype = GemmDtype::fp8_row;
            else if (d != "bf16") throw InputError(t->source(), t->where(r + 1) + ": dtype", "expected bf16 or fp8 (tensor/row)");
            check_gemm_peak(g, *t, r);
            out.gemm.push_back(std::move(g));
        }
    }
    if (auto t = load("attention.csv")) {
        const auto cb = t->column("backend"), cd = t->column("head_dim"), cs = t->column("seq"),
                   cc = t->column("causal"), cf = t->column("fwd_tflops"), cw = t->column("bwd_tflops");
        for (std::size_t r = 0; r < t->size(); ++r) {
            if (t->text(r, cf).empty()) continue;  // the script records a kernel that failed with an empty time
            const std::string b = t->text(r, cb);
            const AttentionImpl k = b == "cudnn" ? AttentionImpl::cudnn : AttentionImpl::fa2;
            if (b != "cudnn" && b != "flash") throw InputError(t->source(), t->where(r + 1) + ": backend", "expected flash or cudnn");
            const int hd = static_cast<int>(t->number(r, cd, 1, 4096));
            const double seq = t->number(r, cs, 1, kMaxSeq);
            const bool causal = t->number(r, cc, 0, 1) != 0;
            out.attention.push_back({gpu, k, false, causal, hd, seq, t->number(r, cf, 1e-6, kMaxTflops), source, t->line(r)});
            out.attention.push_back({gpu, k, true, causal, hd, seq, t->number(r, cw, 1e-6, kMaxTflops), source, t->line(r)});
        }
    }
    if (auto t = load("memory_bound.csv")) {
        const auto ck = t->column("kernel"), cb = t->column("useful_GBps");
        for (std::size_t r = 0; r < t->size(); ++r)
            out.memory.push_back({gpu, t->text(r, ck), t->number(r, cb, 1e-6, kMaxGBps), source, t->line(r)});
    }
    return out;
}

ComponentTables merge_tables(const ComponentTables& base, const ComponentTables& extra) {
    ComponentTables out;
    std::map<std::pair<std::string, int>, bool> gemm_kinds, attn_kinds;
    std::map<std::string, bool> mem_gpus;
    for (const auto& g : extra.gemm) gemm_kinds[{g.gpu, static_cast<int>(g.dtype)}] = true;
    for (const auto& a : extra.attention) attn_kinds[{a.gpu, static_cast<int>(a.kernel)}] = true;
    for (const auto& m : extra.memory) mem_gpus[m.gpu] = true;
    for (const auto& g : base.gemm)
        if (!gemm_kinds.count({g.gpu, static_cast<int>(g.dtype)})) out.gemm.push_back(g);
    for (const auto& a : base.attention)
        if (!attn_kinds.count({a.gpu, static_cast<int>(a.kernel)})) out.attention.push_back(a);
    for (const auto& m : base.memory)
        if (!mem_gpus.count(m.gpu)) out.memory.push_back(m);
    out.gemm.insert(out.gemm.end(), extra.gemm.begin(), extra.gemm.end());
    out.attention.insert(out.attention.end(), extra.attention.begin(), extra.attention.end());
    out.memory.insert(out.memory.end(), extra.memory.begin(), extra.memory.end());
    out.sources = base.sources;
    out.sources.insert(out.sources.end(), extra.sources.begin(), extra.sources.end());
    return out;
}

}  // namespace lostflops::calib
