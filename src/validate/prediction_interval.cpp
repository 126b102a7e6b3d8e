// The 80 % prediction interval from out-of-sample residuals of the same
// regime (contract and method: lostflops/prediction_interval.h): split
// conformal prediction (Lei et al. 2018, sec. 2.2) on |ln(1 + error)| with
// source families as the exchangeable units, each source one unit of weight
// and the job's own source one more at +infinity (the weighted quantile of
// Tibshirani et al. 2019; Lee, Barber & Willett 2023 for a new group), so
// that a job from a source the table does not hold gets an interval as wide
// as the model has been wrong on other sources like it.
#include "lostflops/prediction_interval.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>

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
    r.scale = n == 1 ? "1" : n <= 8 ? "<=8" : n <= 64 ? "<=64" : n <= 512 ? "<=512" : ">512";
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

double weighted_conformal_score(const std::vector<double>& scores, const std::vector<double>& weights,
                                double new_weight) {
    std::vector<std::pair<double, double>> v;
    v.reserve(scores.size());
    double total = 0;
    for (std::size_t i = 0; i < scores.size(); ++i) {
        v.emplace_back(scores[i], weights[i]);
        total += weights[i];
    }
    std::sort(v.begin(), v.end());
    // A relative tolerance, so that weights 1 / n_f summing to a whole
    // number of sources reach it exactly (one run per source: the rank).
    const double reach = 0.8 * (total + new_weight) * (1 - 1e-12);
    double acc = 0;
    for (const auto& [score, w] : v) {
        acc += w;
        if (acc >= reach) return score;
    }
    return v.back().first;
}

double source_conformal_score(const std::vector<double>& scores, const std::vector<std::string>& sources) {
    std::map<std::string, int> runs_of;
    for (const auto& s : sources) ++runs_of[s];
    std::vector<double> weights;
    weights.reserve(scores.size());
    for (const auto& s : sources) weights.push_back(1.0 / runs_of[s]);
    return weighted_conformal_score(scores, weights, 1.0);
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
                       part(kScale, r.scale == "1" ? "1 GPU" : r.scale + " GPUs", "any scale"),
                       part(kMoe, r.moe, "dense or MoE"),
                       part(kContext, "context " + r.context, "any context"));
}

}  // namespace

std::string to_string(const Regime& r) { return describe(r, 0); }

double exposed_comm_share(const Estimate& e) {
    const Breakdown& b = e.breakdown;
    const double comm = b.tp_comm_s + b.cp_comm_s + b.ep_comm_s + b.pp_p2p_s + b.dp_comm_s;
    return e.step_time_s > 0 ? comm / e.step_time_s : 0;
}

PredictionInterval prediction_interval(const Job& job, const Estimate& e, const Calibration& cal,
                                       const std::vector<Residual>& residuals) {
    const Regime r = regime_of(job, cal);
    PredictionInterval out;
    std::vector<double> scores;
    std::vector<std::string> source_of;
    std::set<std::string> sources;
    int dropped = 0;  // dimensions 0..dropped-1 are ignored
    for (; dropped <= kDims; ++dropped) {
        scores.clear();
        source_of.clear();
        sources.clear();
        for (const auto& x : residuals) {
            if (!matches(x.regime, r, dropped)) continue;
            scores.push_back(std::fabs(std::log1p(x.error_pct / 100.0)));
            source_of.push_back(source_family(x.name));
            sources.insert(source_of.back());
        }
        const bool enough = static_cast<int>(scores.size()) >= kMinResiduals &&
                            static_cast<int>(sources.size()) >= kMinSources;
        if (enough || dropped == kDims) break;
    }
    out.residuals = static_cast<int>(scores.size());
    out.sources = static_cast<int>(sources.size());
    out.regime = describe(r, dropped);
    // Outside calibration: no residual of the job's framework, family and
    // scale band, or a step more launch- and host-bound, or more
    // communication-bound, than any behind them.
    bool like = false;
    for (const auto& x : residuals)
        like |= x.regime.framework == r.framework && x.regime.family == r.family && x.regime.scale == r.scale;
    const double overhead = e.step_time_s > 0 ? (e.breakdown.overhead_s + e.breakdown.host_s) / e.step_time_s : 0;
    if (!like) {
        out.calibrated = false;
        out.outside = fmt::format("no published run of {} on {} at {} GPU{}", r.framework, r.family,
                                  r.scale == "1" ? "one" : r.scale, r.scale == "1" ? "" : "s");
    } else if (overhead > kMaxCalibratedOverheadShare) {
        out.calibrated = false;
        out.outside = fmt::format("kernel launches and host wait take {:.0f} % of the step, more than in any published "
                                  "run ({:.0f} % at most)",
                                  100 * overhead, 100 * kMaxCalibratedOverheadShare);
    } else if (const double comm = exposed_comm_share(e); comm > kMaxCalibratedCommShare) {
        out.calibrated = false;
        out.outside = fmt::format("exposed communication takes {:.0f} % of the step, more than in any published "
                                  "run ({:.0f} % at most)",
                                  100 * comm, 100 * kMaxCalibratedCommShare);
    }
    if (scores.empty()) return out;
    // Each source one unit, the job's own source one more (at +infinity).
    const double q = source_conformal_score(scores, source_of);
    const double down = std::exp(-q), up = std::exp(q);
    out.error_p10_pct = 100 * (down - 1);
    out.error_p90_pct = 100 * (up - 1);
    // measured = predicted / (1 + e) with ln(1 + e) in [-q, q].
    out.tokens_per_s_per_gpu_lo = e.tokens_per_s_per_gpu * down;
    out.tokens_per_s_per_gpu_hi = e.tokens_per_s_per_gpu * up;
    out.step_time_s_lo = e.step_time_s * down;
    out.step_time_s_hi = e.step_time_s * up;
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
    std::vector<std::size_t> lines;  // each row's line after the comments
    const auto rows = parse_csv(std::string(text.substr(at)), source, &lines);
    const std::vector<std::string> header = {"name", "framework", "family", "scale", "moe", "context",
                                             "measured_tokens_per_s_per_gpu", "predicted_tokens_per_s_per_gpu",
                                             "error_pct"};
    if (rows.empty() || rows[0] != header)
        throw InputError(source, fmt::format("line {}", skipped + (lines.empty() ? 1 : lines[0])), "expected the header " +
                                                                          fmt::format("{}", fmt::join(header, ",")));
    std::vector<Residual> out;
    for (std::size_t i = 1; i < rows.size(); ++i) {
        const auto& c = rows[i];
        const std::string where = fmt::format("line {}", skipped + lines[i]);
        if (c.size() != header.size()) throw InputError(source, where, "expected 9 fields");
        const auto e = parse_table_number(c[8]);
        if (!e || *e <= -100) throw InputError(source, where + ": error_pct", "expected a number above -100");
        out.push_back({c[0], {c[1], c[2], c[3], c[4], c[5]}, *e});
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
