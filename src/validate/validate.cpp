// Published-run validation: predict each run of the table and report the
// error of tokens/s per GPU, the one throughput figure that needs no FLOP
// convention, and the mean absolute percentage error. The table is read and
// every job loaded once (load_run_table), so callers that predict the same
// runs many times (calibrate runs) parse nothing twice.
#include "lostflops/validate.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "lostflops/catalog.h"
#include "lostflops/error.h"
#include "lostflops/estimate.h"
#include "lostflops/job.h"
#include "job/did_you_mean.h"
#include "job/text_input.h"
#include "workload/flops.h"

namespace lostflops {

std::vector<std::vector<std::string>> parse_csv(const std::string& text, const std::string& source,
                                                std::vector<std::size_t>* row_lines) {
    std::vector<std::vector<std::string>> rows;
    std::vector<std::string> row;
    std::string field;
    bool quoted = false, field_started = false;
    size_t line = 1, row_line = 1;  // the line now, and the one the row began on
    if (row_lines) row_lines->clear();
    // Memory bounds: an empty field costs a std::string (32 bytes) and a row a
    // vector, so 4 MiB of commas or of newlines took 272 MB; a run table has
    // a handful of columns and tens of rows.
    const auto push_field = [&] {
        if (row.size() >= kMaxCsvFields)
            throw InputError(source, fmt::format("line {}", line),
                             fmt::format("more than {} fields in a row; a run table has a few columns", kMaxCsvFields));
        row.push_back(field);
    };
    const auto push_row = [&] {
        if (rows.size() >= kMaxCsvRows)
            throw InputError(source, fmt::format("line {}", line),
                             fmt::format("more than {} rows; a run table has tens — is this the right file?",
                                         kMaxCsvRows));
        rows.push_back(row);
        if (row_lines) row_lines->push_back(row_line);
    };
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (quoted) {
            if (c == '"') {
                if (i + 1 < text.size() && text[i + 1] == '"') {
                    field += '"';
                    ++i;
                } else {
                    quoted = false;
                }
            } else {
                if (c == '\n') ++line;
                field += c;
            }
            continue;
        }
        if (c == '"' && !field_started) {
            quoted = true;
            field_started = true;
        } else if (c == ',') {
            push_field();
            field.clear();
            field_started = false;
        } else if (c == '\n' || c == '\r') {
            if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
            push_field();
            field.clear();
            field_started = false;
            if (!(row.size() == 1 && row[0].empty())) push_row();
            row.clear();
            row_line = ++line;
        } else {
            field += c;
            field_started = true;
        }
    }
    if (quoted) throw InputError(source, fmt::format("line {}", line), "unterminated quoted field");
    if (field_started || !row.empty()) {
        push_field();
        push_row();
    }
    return rows;
}

std::optional<double> parse_table_number(const std::string& text) {
    double v = 0;
    const char* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, v);  // decimal only: no hex, sign '-' only
    if (text.empty() || ec != std::errc() || ptr != end || !std::isfinite(v)) return std::nullopt;
    return v;
}

namespace {

// A run's name is the stem of its job file in runs/: one path component
// (no '/', not "." or ".."), no control characters, and short enough that
// NAME.yaml fits a file name (NAME_MAX, 255 bytes on Linux file systems).
// A name like "../x" loaded a job from outside runs/, and one of 300 bytes
// ended in an internal error (ENAMETOOLONG from std::filesystem::exists).
void check_run_name(const std::string& name, const std::string& csv_path, const std::string& key) {
    constexpr std::size_t kMaxName = 255 - 5;  // room for ".yaml"
    if (name.empty()) throw InputError(csv_path, key, "expected the name of a run");
    if (name.size() > kMaxName)
        throw InputError(csv_path, key, fmt::format("{} bytes; a run's name names its job file runs/NAME.json or "
                                                    "runs/NAME.yaml, at most {} bytes",
                                                    name.size(), kMaxName));
    if (name == "." || name == ".." || name.find('/') != std::string::npos)
        throw InputError(csv_path, key, fmt::format("'{}': a run's name is a file name in runs/ (no '/', not '.' or "
                                                    "'..')", name));
    for (char c : name)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
            throw InputError(csv_path, key, "control character in a run's name");
}

// A measurement is the job's model FLOPs at some share of the GPUs' dense
// peak: MFU = measured tokens/s x model FLOPs per token / the dense peak of
// the job's precision, as estimate.cpp counts them (no calibration: the FLOP
// count does not depend on it). Above 150 % of the peak (this model's FLOP
// count may exceed a framework's, as for causal attention) or below 0.01 % it
// is a typo or another unit, and its error would be absurd.
constexpr double kMinMfu = 1e-4, kMaxMfu = 1.5;

void check_measurement(const MeasuredRun& run, const std::string& csv_path, const std::string& key) {
    const Job& job = run.job;
    const double flops_per_token =
        lostflops::flops_per_token(job.model, job.training, job.plan.recompute, 1.0, moe_kept_share(job.plan)).model;
    const double peak_tflops = job.cluster.gpu.peak_tflops(job.training.precision);
    const double mfu = run.measured_tokens_per_s_per_gpu * flops_per_token / 1e12 / peak_tflops;
    if (mfu >= kMinMfu && mfu <= kMaxMfu) return;
    throw InputError(csv_path, key,
                     fmt::format("{:g} tokens/s per GPU is an MFU of {} on {}: expected {:g} % to {:g} % of the "
                                 "GPUs' dense peak (a typo, or another unit?)",
                                 run.measured_tokens_per_s_per_gpu,
                                 std::isfinite(mfu) ? fmt::format("{:.3g} %", 100 * mfu) : std::string("more than any number"),
                                 run.job.cluster.gpu.name, 100 * kMinMfu, 100 * kMaxMfu));
}

double positive(const std::string& text, const std::string& file, const std::string& key) {
    const auto v = parse_table_number(text);
    if (!v || !(*v > 0)) throw InputError(file, key, "expected a positive number");
    return *v;
}

// The H200 table's recipes (shared/reference/h200/README.md): a Hugging Face
// model under fp32 weights + bf16 autocast with AdamW(fused=True), or under
// FSDP2 fully_shard (bf16 params, fp32 reduce) with AdamW(foreach=True).
std::vector<std::string> recipe_overrides(const std::string& recipe, const std::string& file, const std::string& key) {
    if (recipe.empty()) return {};
    if (recipe == "autocast")
        return {"training.framework=hf", "parallel.zero=0", "training.optimizer_kernel=fused"};
    if (recipe == "fsdp2") return {"training.framework=hf", "parallel.zero=3", "training.optimizer_kernel=foreach"};
    throw InputError(file, key, "unknown recipe '" + recipe + "'; expected autocast or fsdp2 (or empty)");
}

}  // namespace

// The columns load_run_table reads; any other is a note (source, published,
// derivation, ...), and one a typo away from these is warned of.
const std::vector<std::string> kRunTableColumns = {"name",     "tokens_per_s_per_gpu", "peak_allocated_GiB",
                                                   "measured_peak_GiB", "recipe", "compiled", "num_gpus", "gpu"};

std::vector<MeasuredRun> load_run_table(const std::string& csv_path, std::vector<std::string>* warnings) {
    std::vector<std::size_t> lines;  // each row's line in the file
    const auto rows = parse_csv(read_text_file(csv_path, kMaxTableBytes, "run table (CSV)"), csv_path, &lines);
    if (rows.size() < 2) throw InputError(csv_path, "", "expected a header row and at least one run");
    const auto& header = rows[0];
    const std::string header_at = fmt::format("line {}", lines[0]);  // after any blank lines
    // A column named twice is refused: which one holds the runs is not said.
    auto find = [&](const std::string& name) -> std::optional<size_t> {
        const auto first = std::find(header.begin(), header.end(), name);
        if (first == header.end()) return std::nullopt;
        const auto again = std::find(first + 1, header.end(), name);
        if (again != header.end())
            throw InputError(csv_path, header_at,
                             fmt::format("column '{}' appears twice (fields {} and {}): which one holds the runs?", name,
                                         first - header.begin() + 1, again - header.begin() + 1));
        return static_cast<size_t>(first - header.begin());
    };
    auto column = [&](const std::string& name) -> size_t {
        if (const auto i = find(name)) return *i;
        throw InputError(csv_path, header_at, "missing column '" + name + "'");
    };
    const size_t c_name = column("name");
    const auto c_tps = find("tokens_per_s_per_gpu");
    const auto c_alloc = find("peak_allocated_GiB");
    const auto c_reserved = find("measured_peak_GiB");
    const auto c_recipe = find("recipe");
    const auto c_compiled = find("compiled");
    const auto c_gpus = find("num_gpus");  // said by the run file too: the two must agree
    const auto c_gpu = find("gpu");        // likewise, when it names a catalog GPU
    // A misspelt column ("recipie") would be a note, and its runs validated
    // without it, without a word.
    for (size_t i = 0; warnings && i < header.size(); ++i) {
        if (std::find(kRunTableColumns.begin(), kRunTableColumns.end(), header[i]) != kRunTableColumns.end()) continue;
        const std::string hint = did_you_mean(header[i], kRunTableColumns);
        if (!hint.empty())
            warnings->push_back(
                fmt::format("{}: {}: column '{}' is not read (a note){}", csv_path, header_at, header[i], hint));
    }
    if (!c_tps && !c_alloc && !c_reserved)
        throw InputError(csv_path, header_at,
                         "missing column 'tokens_per_s_per_gpu' (or a memory column: peak_allocated_GiB, "
                         "measured_peak_GiB)");
    const auto dir = std::filesystem::path(csv_path).parent_path() / "runs";
    std::vector<MeasuredRun> out;
    std::map<std::string, size_t> line_of;  // each run's name: the line that gave it
    for (size_t r = 1; r < rows.size(); ++r) {
        const auto& row = rows[r];
        const std::string where = fmt::format("line {}", lines[r]);
        if (row.size() != header.size())
            throw InputError(csv_path, where, fmt::format("{} fields; the header has {}", row.size(), header.size()));
        MeasuredRun run;
        run.name = row[c_name];
        check_run_name(run.name, csv_path, where + ": name");
        // A run given twice would count twice in the MAPE and in a fit.
        if (const auto [at, fresh] = line_of.emplace(run.name, lines[r]); !fresh)
            throw InputError(csv_path, where + ": name",
                             fmt::format("'{}' is named again (first at line {}): a run is one row", run.name, at->second));
        if (c_tps) {
            if (row[*c_tps] == "oom") run.oom = true;
            else run.measured_tokens_per_s_per_gpu = positive(row[*c_tps], csv_path, where + ": tokens_per_s_per_gpu");
        }
        // A memory cell may be empty (not measured); GiB below 100 TiB.
        const auto gib = [&](std::optional<size_t> c, const char* key) {
            if (!c || row[*c].empty()) return 0.0;
            const double v = positive(row[*c], csv_path, where + ": " + key);
            if (v > 102'400) throw InputError(csv_path, where + ": " + key, "more than 100 TiB per GPU");
            return v * 1024.0 * 1024 * 1024;
        };
        run.measured_allocated_bytes = gib(c_alloc, "peak_allocated_GiB");
        run.measured_reserved_bytes = gib(c_reserved, "measured_peak_GiB");
        if (!run.oom && !run.has_throughput() && run.measured_allocated_bytes <= 0 && run.measured_reserved_bytes <= 0)
            throw InputError(csv_path, where, "no measurement in the row (tokens_per_s_per_gpu, peak_allocated_GiB or "
                                              "measured_peak_GiB)");
        std::vector<std::string> sets;
        if (c_recipe) sets = recipe_overrides(row[*c_recipe], csv_path, where + ": recipe");
        if (c_compiled) {
            const std::string& v = row[*c_compiled];
            if (v != "0" && v != "1") throw InputError(csv_path, where + ": compiled", "expected 0 or 1");
            if (v == "1") sets.push_back("training.compile=true");
        }
        // NAME.json, else NAME.yaml; anything at the .json path (a link loop
        // included) is taken, and load_job says what is wrong with it.
        std::filesystem::path job_path = dir / (run.name + ".json");
        std::error_code ec;
        if (!std::filesystem::exists(std::filesystem::symlink_status(job_path, ec))) job_path = dir / (run.name + ".yaml");
        run.job = load_job(job_path.string(), sets);
        // The row's GPU count was read by nobody: a table saying 64 beside a
        // run file of 32 was validated on 32 without a word.
        if (c_gpus && !row[*c_gpus].empty()) {
            const double n = positive(row[*c_gpus], csv_path, where + ": num_gpus");
            if (n != static_cast<double>(run.job.cluster.num_gpus))
                throw InputError(csv_path, where + ": num_gpus",
                                 fmt::format("{} GPUs, where its run file {} runs on {}: the row and the file must agree",
                                             row[*c_gpus], job_path.string(), run.job.cluster.num_gpus));
        }
        // A gpu cell naming a catalog GPU must be the run file's; any other
        // text ("inline h100-sxm (96 GiB, ...)") is a note.
        if (c_gpu && find_gpu(row[*c_gpu]) && row[*c_gpu] != run.job.cluster.gpu.name)
            throw InputError(csv_path, where + ": gpu",
                             fmt::format("{}, where its run file {} runs on {}: the row and the file must agree",
                                         row[*c_gpu], job_path.string(), run.job.cluster.gpu.name));
        if (run.has_throughput()) check_measurement(run, csv_path, where + ": tokens_per_s_per_gpu");
        out.push_back(std::move(run));
    }
    return out;
}

std::vector<MeasuredRun> throughput_runs(const std::vector<MeasuredRun>& runs) {
    std::vector<MeasuredRun> out;
    for (const MeasuredRun& r : runs)
        if (r.has_throughput()) out.push_back(r);
    return out;
}

std::string source_family(const std::string& run_name) { return run_name.substr(0, run_name.find('-')); }

ValidationResult validate_runs(const std::vector<MeasuredRun>& runs, const Calibration& cal) {
    ValidationResult out;
    double sum_abs = 0, sum = 0;
    for (const auto& run : runs) {
        if (!run.has_throughput()) continue;
        const Estimate e = estimate(run.job, cal);
        ValidationRow v;
        v.name = run.name;
        v.gpu = run.job.cluster.gpu.name;
        v.num_gpus = run.job.cluster.num_gpus;
        v.published_tokens_per_s_per_gpu = run.measured_tokens_per_s_per_gpu;
        v.predicted_tokens_per_s_per_gpu = e.tokens_per_s_per_gpu;
        v.error_pct = 100.0 * (e.tokens_per_s_per_gpu - v.published_tokens_per_s_per_gpu) /
                      v.published_tokens_per_s_per_gpu;
        v.mfu = e.mfu;
        v.fits = e.memory.fits;
        sum_abs += std::fabs(v.error_pct);
        sum += v.error_pct;
        out.max_abs_error_pct = std::max(out.max_abs_error_pct, std::fabs(v.error_pct));
        out.rows.push_back(v);
    }
    if (!out.rows.empty()) {
        out.mape_pct = sum_abs / static_cast<double>(out.rows.size());
        out.mean_signed_pct = sum / static_cast<double>(out.rows.size());
    }
    return out;
}

ValidationResult validate_table(const std::string& csv_path, const Calibration& cal) {
    return validate_runs(load_run_table(csv_path), cal);
}

}  // namespace lostflops
