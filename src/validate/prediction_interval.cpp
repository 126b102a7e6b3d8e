// The 80 % prediction interval from out-of-sample residuals of the same
// regime (contract and method: lostflops/prediction_interval.h). Empirical
// quantiles of held-out errors: the interval is as wide as the model has been
// wrong on published runs like this job, never narrower than the data allow.
#include "lostflops/prediction_interval.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "lostflops/embedded.h"
#include "lostflops/error.h"
#include "lostflops/validate.h"

namespace lostflops {

Regime regime_of(const Job& job, const Calibration& cal) {
    Regime r;
    r.framework = to_string(job.training.framework);
    r.family = cal.device(job.cluster.gpu.arch).name;
    const int n = job.cluster.num_gpus;
    r.scale = n <= 8 ? "<=8" : n <= 64 ? "<=64" : n <= 512 ? "<=512" : ">512";
    r.moe = job.model.is_moe() ? "moe" : "dense";
    const int64_t s = job.training.seq_length;
    r.context = s <= 4096 ? "<=4k" : s <= 16384 ? "<=16k" : ">16k";
    return r;
}

double percentile(std::vector<double> v, double pct) {
    std::sort(v.begin(), v.end());
    const double at = pct / 100.0 * static_cast<double>(v.size() - 1);
    const auto lo = static_cast<std::size_t>(std::floor(at));
    const std::size_t hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (at - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

namespace {

// Dimensions of the regime, in the order they are dropped; `dropped` counts
// how many are ignored (dimension d is ignored when dropped > d).
enum Dim { kContext, kScale, kMoe, kFramework, kFamily, kDims };

bool matches(const Regime& a, const Regime& b, int dropped) {
    return (dropped > kContext || a.context == b.context) && (dropped > kScale || a.scale == b.scale) &&
           (dropped > kMoe || a.moe == b.moe) && (dropped > kFramework || a.framework == b.framework) &&
           (dropped > kFamily || a.family == b.family);
}

std::string describe(const Regime& r, int dropped) {
    auto part = [&](int dim, const std::string& v, const char* any) { return dropped > dim ? std::string(any) : v; };
    return fmt::format("{}, {}, {}, {}, {}", part(kFramework, r.framework, "any framework"),
                       part(kFamily, r.family, "any GPU family"),
                       part(kScale, r.scale + " GPUs", "any scale"), part(kMoe, r.moe, "dense or MoE"),
                       part(kContext, "context " + r.context, "any context"));
}

}  // namespace

PredictionInterval prediction_interval(const Job& job, const Estimate& e, const Calibration& cal,
                                       const std::vector<Residual>& residuals) {
    const Regime r = regime_of(job, cal);
    PredictionInterval out;
    std::vector<double> errors;
    int dropped = 0;  // dimensions 0..dropped-1 are ignored
    for (; dropped <= kDims; ++dropped) {
        errors.clear();
        for (const auto& x : residuals)
            if (matches(x.regime, r, dropped)) errors.push_back(x.error_pct / 100.0);
        if (static_cast<int>(errors.size()) >= kMinResiduals || dropped == kDims) break;
    }
    out.residuals = static_cast<int>(errors.size());
    out.regime = describe(r, dropped);
    if (errors.empty()) return out;
    const double e10 = percentile(errors, 10), e90 = percentile(errors, 90);
    out.error_p10_pct = 100 * e10;
    out.error_p90_pct = 100 * e90;
    // measured = predicted / (1 + e): e90 gives the low end, e10 the high end.
    out.tokens_per_s_per_gpu_lo = e.tokens_per_s_per_gpu / (1 + e90);
    out.tokens_per_s_per_gpu_hi = e.tokens_per_s_per_gpu / (1 + e10);
    out.step_time_s_lo = e.step_time_s * (1 + e10);
    out.step_time_s_hi = e.step_time_s * (1 + e90);
    return out;
}

std::vector<Residual> parse_residuals(std::string_view text, const std::string& source) {
    std::size_t at = 0;
    int skipped = 0;
    while (at < text.size() && text[at] == '#') {
        const std::size_t end = text.find('\n', at);
        at = end == std::string_view::npos ? text.size() : end + 1;
        ++skipped;
    }
    const auto rows = parse_csv(std::string(text.substr(at)), source);
    const std::vector<std::string> header = {"name", "framework", "family", "scale", "moe", "context",
                                             "measured_tokens_per_s_per_gpu", "predicted_tokens_per_s_per_gpu",
                                             "error_pct"};
    if (rows.empty() || rows[0] != header)
        throw InputError(source, fmt::format("line {}", skipped + 1), "expected the header " +
                                                                          fmt::format("{}", fmt::join(header, ",")));
    std::vector<Residual> out;
    for (std::size_t i = 1; i < rows.size(); ++i) {
        const auto& c = rows[i];
        const std::string where = fmt::format("line {}", skipped + 1 + static_cast<int>(i));
        if (c.size() != header.size()) throw InputError(source, where, "expected 9 fields");
        char* end = nullptr;
        const double e = std::strtod(c[8].c_str(), &end);
        if (c[8].empty() || *end != '\0' || !std::isfinite(e) || e <= -100)
            throw InputError(source, where + ": error_pct", "expected a number above -100");
        out.push_back({c[0], {c[1], c[2], c[3], c[4], c[5]}, e});
    }
    if (out.empty()) throw InputError(source, "", "no residuals");
    return out;
}

const std::vector<Residual>& builtin_residuals() {
    static const std::vector<Residual> table = [] {
        const char* name = "calibration/residuals.csv";
        auto text = embedded_file(name);
        if (!text) throw InputError(name, "", "built-in residual table is missing");
        return parse_residuals(*text, "data/calibration/residuals.csv");
    }();
    return table;
}

PredictionInterval prediction_interval(const Job& job, const Estimate& e, const Calibration& cal) {
    return prediction_interval(job, e, cal, builtin_residuals());
}

}  // namespace lostflops
