// Fit of the device families to component micro-benchmarks (contract and
// method: include/lostflops/calibrate_components.h). Deterministic grids; the
// cost model prices each GEMM row exactly as an estimate would (gemm_time_s);
// gemm_max is bounded by the best-of-sweep rows (stas00's Maximum Achievable
// Matmul FLOPS table, data/calibration/gemm.csv), a constrained least squares.
#include "lostflops/calibrate_components.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "calibrate/calibration_devices.h"
#include "calibrate/component_tables.h"
#include "cost/device_time.h"
#include "lostflops/accelerator.h"
#include "lostflops/catalog.h"
#include "lostflops/error.h"

namespace lostflops {

namespace {

using calib::GemmRow;

bool is_fp8(GemmDtype d) { return d != GemmDtype::bf16; }

struct PricedRow {
    const GemmRow* row;
    Gpu gpu;
    const DeviceFamily* family;
    int family_index;
    double w_per_tflop;  // board power per dense bf16 TFLOP/s during the measurement
    bool capped;         // measured below the catalog TDP
};

double predicted_tflops(const PricedRow& p, double gemm_max, double power, double k_half) {
    DeviceModel d;
    const Precision prec = is_fp8(p.row->dtype) ? Precision::fp8 : Precision::bf16;
    d.peak_flops = p.gpu.peak_tflops(prec) * 1e12;
    d.hbm_Bps = p.gpu.hbm_GBps * 1e9;
    d.sms = std::max(1, p.gpu.sm_count);
    d.bytes_per_element = is_fp8(p.row->dtype) ? 1.0 : 2.0;
    d.memory_bound = p.family->memory_bound;
    d.gemm_max = gemm_max * power;
    d.gemm_k_half = gemm_k_half(k_half, d.peak_flops, d.sms);
    const AcceleratorTraits* t = find_accelerator(p.gpu.arch);
    if (t && t->compute == ComputeModel::systolic) {  // as make_device_model prices it
        d.mxu_dim = t->mxu_dim > 0 ? t->mxu_dim : 128;
        d.sms = 1;
        d.gemm_k_half = 0;
    }
    const double time_s = gemm_time_s(d, p.row->m, p.row->n, p.row->k);
    return 2.0 * p.row->m * p.row->n * p.row->k / time_s / 1e12;
}

double power_of(const PricedRow& p, double reference, double exponent) {
    if (!(reference > 0) || p.w_per_tflop >= reference) return 1.0;
    return std::pow(p.w_per_tflop / reference, exponent);
}

double sq_log_error(const PricedRow& p, double g, double power, double k_half) {
    const double e = std::log(predicted_tflops(p, g, power, k_half) / p.row->tflops);
    return e * e;
}

// The largest grid step (0.001) at or below a ceiling (1 without one); a
// hair of tolerance keeps an exact step such as 0.803 itself.
int ceiling_step(double ceiling) {
    return std::clamp(static_cast<int>(std::floor(ceiling * 1000 + 1e-9)), 50, 1000);
}

// The gemm_max of one group minimising its squared log error (grid 0.001),
// at most the group's ceiling (see gemm_ceilings).
std::pair<double, double> best_gemm_max(const std::vector<const PricedRow*>& group, const std::vector<double>& powers,
                                        double k_half, double ceiling) {
    double best = 0, best_err = std::numeric_limits<double>::infinity();
    const int top = ceiling_step(ceiling);
    for (int i = 50; i <= top; ++i) {
        const double g = i / 1000.0;
        double err = 0;
        for (std::size_t j = 0; j < group.size(); ++j) err += sq_log_error(*group[j], g, powers[j], k_half);
        if (err < best_err - 1e-15) {
            best_err = err;
            best = g;
        }
    }
    return {best, best_err};
}

using GroupKey = std::pair<int, int>;  // (family index, GemmDtype)

// The ceiling of each (family, format): a best-of-sweep row (the best shape of
// a sweep over shapes, stas00's MAMF) bounds its GPU at tflops / peak, the
// best of that GPU's such rows; a family shares one gemm_max, so it takes the
// lowest of its GPUs' bounds. The model's fastest GEMM runs at gemm_max
// (tile, wave and k factors are <= 1), so no shape is then priced above a
// measured maximum. Groups without such a row have no ceiling (1), but
// per-row fp8, which takes its family's per-tensor fp8 ceiling (below).
std::map<GroupKey, double> gemm_ceilings(const std::vector<PricedRow>& rows) {
    std::map<std::pair<GroupKey, std::string>, double> per_gpu;
    for (const auto& p : rows) {
        if (!p.row->best_of_sweep) continue;
        if (p.capped)
            throw InputError(p.row->source, fmt::format("line {}: best_of_sweep", p.row->line),
                             "a best-of-sweep row bounds gemm_max only when measured at the GPU's TDP (" +
                                 fmt::format("{:g}", p.gpu.tdp_w) + " W)");
        const Precision prec = is_fp8(p.row->dtype) ? Precision::fp8 : Precision::bf16;
        const double eff = p.row->tflops / p.gpu.peak_tflops(prec);
        double& b = per_gpu[{{p.family_index, static_cast<int>(p.row->dtype)}, p.row->gpu}];
        b = std::max(b, eff);
    }
    std::map<GroupKey, double> out;
    for (const auto& [key, eff] : per_gpu) {
        auto [it, fresh] = out.emplace(key.first, eff);
        if (!fresh) it->second = std::min(it->second, eff);
    }
    // Per-row fp8 runs the per-tensor GEMM's tensor-core instructions and
    // applies its row and column scales in the epilogue (CUTLASS's and
    // FBGEMM's rowwise kernels: the scales multiply the accumulator), so
    // without a sweep of its own it is bounded by the per-tensor ceiling.
    const int tensor = static_cast<int>(GemmDtype::fp8_tensor), row = static_cast<int>(GemmDtype::fp8_row);
    for (const auto& [key, eff] : std::map<GroupKey, double>(out))
        if (key.second == tensor) out.emplace(GroupKey{key.first, row}, eff);
    return out;
}

double ceiling_of(const std::map<GroupKey, double>& ceilings, const GroupKey& key) {
    const auto it = ceilings.find(key);
    return it == ceilings.end() ? 1.0 : it->second;
}

}  // namespace

ComponentFit fit_components(const calib::ComponentTables& tables, const Calibration& base) {
    ComponentFit out;
    out.calibration = base;
    out.sources = tables.sources;
    Calibration& cal = out.calibration;

    std::vector<PricedRow> rows;
    for (const auto& r : tables.gemm) {
        const auto gpu = find_gpu(r.gpu);
        if (!gpu) throw InputError(r.source, "gpu", "'" + r.gpu + "' is not a catalog GPU");
        const DeviceFamily& f = cal.device(gpu->arch);
        const int fi = static_cast<int>(&f - cal.devices.data());
        rows.push_back({&r, *gpu, &f, fi, r.power_w / gpu->peak_bf16_tflops, r.power_w < gpu->tdp_w});
    }
    // Reference power of each family: the leanest GPU measured at its TDP.
    std::vector<double> reference(cal.devices.size(), 0.0);
    for (const auto& p : rows) {
        // No power model for TPUs: their catalog power figures are
        // assumptions (Google publishes none for v5e/v5p/v6e), and no TPU row
        // is measured power-capped.
        const AcceleratorTraits* t = find_accelerator(p.gpu.arch);
        if (p.capped || (t && t->compute == ComputeModel::systolic)) continue;
        double& ref = reference[p.family_index];
        ref = ref > 0 ? std::min(ref, p.w_per_tflop) : p.w_per_tflop;
    }
    const std::map<GroupKey, double> ceilings = gemm_ceilings(rows);
    // Groups: (family, dtype).
    std::map<std::pair<int, int>, std::vector<const PricedRow*>> groups;
    for (const auto& p : rows) groups[{p.family_index, static_cast<int>(p.row->dtype)}].push_back(&p);
    for (const auto& p : rows) out.power_rows += p.capped ? 1 : 0;

    auto has_capped = [](const std::vector<const PricedRow*>& g) {
        return std::any_of(g.begin(), g.end(), [](const PricedRow* p) { return p->capped; });
    };
    // Only groups with a capped row depend on the exponent.
    auto total_error = [&](double k_half, double exponent, std::map<std::pair<int, int>, double>* fitted) {
        double total = 0;
        for (const auto& [key, group] : groups) {
            if (!fitted && !has_capped(group)) continue;
            std::vector<double> powers;
            for (const PricedRow* p : group) powers.push_back(power_of(*p, reference[key.first], exponent));
            const auto [g, err] = best_gemm_max(group, powers, k_half, ceiling_of(ceilings, key));
            if (fitted) (*fitted)[key] = g;
            total += err;
        }
        return total;
    };
    // gemm_k_half first at no power model (capped rows are few), then the
    // exponent at that k_half; a group with only capped rows needs both.
    const double k_grid[] = {0, 2, 4, 6, 8, 12, 16, 20, 24, 32, 40, 48, 64, 96, 128};
    double best_k = base.gemm_k_half, best_err = std::numeric_limits<double>::infinity();
    std::vector<const PricedRow*> nominal;
    for (const auto& p : rows)
        if (!p.capped) nominal.push_back(&p);
    for (double k : k_grid) {
        double err = 0;
        std::map<std::pair<int, int>, std::vector<const PricedRow*>> g2;
        for (const PricedRow* p : nominal) g2[{p->family_index, static_cast<int>(p->row->dtype)}].push_back(p);
        for (const auto& [key, group] : g2)
            err += best_gemm_max(group, std::vector<double>(group.size(), 1.0), k, ceiling_of(ceilings, key)).second;
        if (err < best_err - 1e-12) {
            best_err = err;
            best_k = k;
        }
    }
    out.gemm_k_half = rows.empty() ? base.gemm_k_half : best_k;
    double best_e = 0;
    if (out.power_rows > 0) {
        best_err = std::numeric_limits<double>::infinity();
        for (int i = 0; i <= 300; ++i) {
            const double e = i / 100.0;
            const double err = total_error(out.gemm_k_half, e, nullptr);
            if (err < best_err - 1e-12) {
                best_err = err;
                best_e = e;
            }
        }
    }
    out.power_exponent = out.power_rows > 0 ? best_e : 0.0;
    std::map<std::pair<int, int>, double> fitted;
    total_error(out.gemm_k_half, out.power_exponent, &fitted);

    cal.gemm_k_half = out.gemm_k_half;
    for (std::size_t fi = 0; fi < cal.devices.size(); ++fi) {
        DeviceFamily& f = cal.devices[fi];
        FamilyComponentFit ff;
        ff.family = f.name;
        for (int d = 0; d < kGemmDtypeCount; ++d) {
            auto it = fitted.find({static_cast<int>(fi), d});
            if (it == fitted.end()) continue;
            f.gemm_max[d] = it->second;
            ff.gemm_rows[d] = static_cast<int>(groups[{static_cast<int>(fi), d}].size());
            ff.gemm_ceiling[d] = ceiling_of(ceilings, {static_cast<int>(fi), d});
        }
        // Rounded down, so that the GPUs defining it are never derated.
        if (reference[fi] > 0) f.reference_w_per_tflop = std::floor(reference[fi] * 1e4) / 1e4;
        const AcceleratorTraits* ft = f.archs.empty() ? nullptr : find_accelerator(f.archs[0]);
        const bool systolic = ft && ft->compute == ComputeModel::systolic;
        if (out.power_rows > 0 && !systolic) f.power_exponent = out.power_exponent;
        double sum = 0;
        for (const auto& m : tables.memory) {
            const auto gpu = find_gpu(m.gpu);
            if (!gpu) throw InputError(m.source, "gpu", "'" + m.gpu + "' is not a catalog GPU");
            if (&cal.device(gpu->arch) != &f) continue;
            sum += m.GBps / gpu->hbm_GBps;
            ++ff.memory_rows;
        }
        if (ff.memory_rows) f.memory_bound = std::round(std::min(1.0, sum / ff.memory_rows) * 1000) / 1000;
        const auto points = calib::attention_points_from_table(tables.attention, f, "attention table");
        if (!points.empty()) f.attention = points;
        ff.attention_points = static_cast<int>(f.attention.size());
        ff.gemm_max = f.gemm_max;
        ff.memory_bound = f.memory_bound;
        ff.reference_w_per_tflop = f.reference_w_per_tflop;
        out.families.push_back(ff);
    }
    double sum_sq = 0;
    for (const auto& p : rows) {
        const DeviceFamily& f = cal.devices[p.family_index];
        const double g = f.gemm_max[static_cast<int>(p.row->dtype)];
        const double pred = predicted_tflops(p, g, power_of(p, f.reference_w_per_tflop, f.power_exponent), cal.gemm_k_half);
        out.gemm.push_back({f.name, p.row->gpu, p.row->dtype, p.row->m, p.row->n, p.row->k, p.row->power_w,
                            p.row->tflops, pred, p.row->source});
        const double e = std::log(pred / p.row->tflops);
        sum_sq += e * e;
    }
    if (!rows.empty()) out.gemm_rms_log_error = std::sqrt(sum_sq / static_cast<double>(rows.size()));
    return out;
}

}  // namespace lostflops
