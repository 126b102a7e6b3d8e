// The `devices:` section of a calibration profile: one device family per
// architecture family (calibration.h DeviceFamily), read strictly (unknown
// keys, missing keys of a new family, values out of range, an architecture
// listed by two families are InputErrors naming the dotted key), and the
// attention curves of the built-in profile read from the component table
// data/calibration/attention.csv (each point's efficiency = measured TFLOP/s
// over the catalog bf16 dense peak of the GPU it was measured on). A family
// looked up and its curves indexed: cost/calibration_lookup.cpp.
#include "calibrate/calibration_devices.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include <fmt/format.h>

#include "calibrate/calibration_fields.h"
#include "calibrate/component_tables.h"
#include "lostflops/accelerator.h"
#include "lostflops/catalog.h"
#include "lostflops/error.h"
#include "job/did_you_mean.h"
#include "job/yaml_reader.h"

namespace lostflops {

namespace calib {

namespace {

// read_archs holds every arch of a family to one model.
ComputeModel family_compute(const DeviceFamily& f) {
    const AcceleratorTraits* t = f.archs.empty() ? nullptr : find_accelerator(f.archs[0]);
    return t ? t->compute : ComputeModel::tile_wave;
}

std::string join(const std::string& a, const std::string& b) { return a + "." + b; }

double number(const YAML::Node& n, const std::string& file, const std::string& key, double lo, double hi) {
    const double v = scalar_number(n, file, key, std::numeric_limits<double>::lowest(),
                                   std::numeric_limits<double>::max());
    if (hi == 1 && v > 1)
        throw InputError(file, key, fmt::format("{} is above 1; expected an efficiency in [{}, 1] (a fraction: 0.85 for 85 %)",
                                                n.Scalar(), lo));
    if (v < lo || v > hi) throw InputError(file, key, fmt::format("{} is out of range; expected {} to {}", n.Scalar(), lo, hi));
    return v;
}

void require_map(const YAML::Node& n, const std::string& file, const std::string& key) {
    if (!n.IsMap()) throw InputError(file, key, "expected a mapping of keys to values");
}

std::string key_of(const YAML::Node& k, const std::string& file, const std::string& prefix) {
    if (!k.IsScalar()) throw InputError(file, prefix, "keys must be plain strings");
    return k.Scalar();
}

void read_gemm_max(const YAML::Node& n, DeviceFamily& f, const std::string& file, const std::string& prefix) {
    require_map(n, file, prefix);
    for (const auto& kv : n) {
        const std::string k = key_of(kv.first, file, prefix);
        const auto d = gemm_dtype_from_string(k);
        if (!d)
            throw InputError(file, join(prefix, k),
                             "unknown GEMM dtype; expected bf16, fp8_tensor, fp8_row, fp8_block or mxfp8");
        // 0 = not measured; otherwise an efficiency (calib::kMinEfficiency..1).
        const double v = number(kv.second, file, join(prefix, k), 0, 1);
        if (v != 0 && v < kMinEfficiency)
            throw InputError(file, join(prefix, k), "an efficiency in [0.01, 1], or 0 for not measured");
        f.gemm_max[static_cast<int>(*d)] = v;
    }
}

void read_attention_kernels(const YAML::Node& n, DeviceFamily& f, const std::string& file,
                            const std::string& prefix) {
    require_map(n, file, prefix);
    for (const auto& kv : n) {
        const std::string k = key_of(kv.first, file, prefix);
        bool known = false;
        for (Framework fw : kFrameworks) {
            if (k != framework_key(fw)) continue;
            const auto impl = kv.second.IsScalar() ? attention_impl_from_string(kv.second.Scalar()) : std::nullopt;
            if (!impl) throw InputError(file, join(prefix, k), "expected fa2, fa3 or cudnn");
            f.attention_kernel[static_cast<int>(fw)] = *impl;
            known = true;
        }
        if (!known)
            throw InputError(file, join(prefix, k), "unknown framework; expected megatron_lm, megatron_core, fsdp, deepspeed or hf");
    }
}

// [kernel, fwd|bwd, causal 0|1, head_dim, seq, efficiency]
std::vector<AttentionPoint> read_attention_points(const YAML::Node& n, const std::string& file,
                                                  const std::string& prefix) {
    if (!n.IsSequence()) throw InputError(file, prefix, "expected a list of [kernel, pass, causal, head_dim, seq, efficiency]");
    std::vector<AttentionPoint> out;
    for (std::size_t i = 0; i < n.size(); ++i) {
        const std::string key = fmt::format("{}[{}]", prefix, i);
        const YAML::Node& p = n[i];
        if (!p.IsSequence() || p.size() != 6)
            throw InputError(file, key, "expected [kernel, pass, causal, head_dim, seq, efficiency]");
        AttentionPoint a;
        const auto impl = p[0].IsScalar() ? attention_impl_from_string(p[0].Scalar()) : std::nullopt;
        if (!impl) throw InputError(file, key + "[0]", "expected fa2, fa3 or cudnn");
        a.kernel = *impl;
        if (!p[1].IsScalar() || (p[1].Scalar() != "fwd" && p[1].Scalar() != "bwd"))
            throw InputError(file, key + "[1]", "expected fwd or bwd");
        a.backward = p[1].Scalar() == "bwd";
        a.causal = number(p[2], file, key + "[2]", 0, 1) != 0;
        a.head_dim = static_cast<int>(number(p[3], file, key + "[3]", 1, 4096));
        a.seq = number(p[4], file, key + "[4]", 1, 1e9);
        a.efficiency = number(p[5], file, key + "[5]", kMinEfficiency, 1);
        out.push_back(a);
    }
    sort_attention_points(out);
    return out;
}

void read_archs(const YAML::Node& n, DeviceFamily& f, const std::string& file, const std::string& prefix) {
    if (!n.IsSequence() || n.size() == 0) throw InputError(file, prefix, "expected a non-empty list of GPU architectures");
    f.archs.clear();
    for (std::size_t i = 0; i < n.size(); ++i) {
        if (!n[i].IsScalar() || n[i].Scalar().empty())
            throw InputError(file, fmt::format("{}[{}]", prefix, i), "expected an architecture name");
        // Only an architecture a GPU can have (lostflops/accelerator.h) can
        // price one; anything else is a typo, or text a writer could not give
        // back (fuzz_calibration: a name folded over lines read back changed).
        const std::string& a = n[i].Scalar();
        if (find_accelerator(a) == nullptr) {
            const std::vector<std::string> known = accelerator_archs();
            throw InputError(file, fmt::format("{}[{}]", prefix, i),
                             fmt::format("unknown architecture '{}'{}; expected one of: {}", a, did_you_mean(a, known),
                                         fmt::join(known, ", ")));
        }
        f.archs.push_back(a);
    }
    // One device model per family: tile-and-wave GPUs and systolic TPUs are
    // priced by different formulas (cost/device_time.cpp).
    const ComputeModel compute = find_accelerator(f.archs[0])->compute;
    for (std::size_t i = 1; i < f.archs.size(); ++i)
        if (find_accelerator(f.archs[i])->compute != compute)
            throw InputError(file, fmt::format("{}[{}]", prefix, i),
                             fmt::format("'{}' has {} matrix units and '{}' {}: a family prices one kind", f.archs[i],
                                         to_string(find_accelerator(f.archs[i])->compute), f.archs[0],
                                         to_string(compute)));
}

void read_family(const YAML::Node& n, DeviceFamily& f, bool is_new, const std::string& file,
                 const std::string& prefix) {
    require_map(n, file, prefix);
    std::set<std::string> seen;
    for (const auto& kv : n) {
        const std::string k = key_of(kv.first, file, prefix);
        seen.insert(k);
        const std::string key = join(prefix, k);
        if (k == "archs") {
            read_archs(kv.second, f, file, key);
        } else if (k == "gemm_max") {
            read_gemm_max(kv.second, f, file, key);
        } else if (k == "attention_kernel") {
            read_attention_kernels(kv.second, f, file, key);
        } else if (k == "attention") {
            f.attention = read_attention_points(kv.second, file, key);
        } else {
            bool known = false;
            for (const auto& ff : kFamilyFields) {
                if (k != ff.key) continue;
                f.*ff.member = number(kv.second, file, key, ff.range == Range::fraction ? kMinEfficiency : 0,
                                      ff.range == Range::non_negative ? ff.max : 1);
                known = true;
            }
            if (!known) {
                std::vector<std::string> keys{"archs", "gemm_max", "attention_kernel", "attention"};
                for (const auto& ff : kFamilyFields) keys.emplace_back(ff.key);
                throw InputError(file, key, "unknown key" + did_you_mean(k, keys));
            }
        }
    }
    if (!is_new) return;
    // A new family has no defaults to fall back on: every key must be given.
    // (A systolic family without attention curves runs attention on its
    // matrix units: no kernel to name.)
    for (const char* k : {"archs", "gemm_max", "attention_kernel", "memory_bound"})
        if (!seen.count(k) && !(family_compute(f) == ComputeModel::systolic && std::string_view(k) == "attention_kernel")) throw InputError(file, join(prefix, k), "missing (a new device family must give it)");
}

}  // namespace

void read_devices(const YAML::Node& node, Calibration& c, const std::string& file) {
    require_map(node, file, "devices");
    for (const auto& kv : node) {
        const std::string name = key_of(kv.first, file, "devices");
        const std::string prefix = join("devices", name);
        DeviceFamily* f = c.find_family(name);
        const bool is_new = f == nullptr;
        if (is_new) {
            c.devices.push_back(DeviceFamily{});
            f = &c.devices.back();
            f->name = name;
        }
        read_family(kv.second, *f, is_new, file, prefix);
    }
    // One family per architecture, or the price of a GPU would depend on order.
    std::set<std::string> archs;
    for (const auto& f : c.devices)
        for (const auto& a : f.archs)
            if (!archs.insert(a).second)
                throw InputError(file, join(join("devices", f.name), "archs"),
                                 fmt::format("architecture '{}' is listed by two families", a));
}

std::vector<AttentionPoint> attention_points_from_table(const std::vector<AttentionRow>& rows,
                                                        const DeviceFamily& family, const std::string& source) {
    std::vector<AttentionPoint> out;
    for (const auto& r : rows) {
        const auto gpu = find_gpu(r.gpu);
        if (!gpu) throw InputError(source, fmt::format("line {}: gpu", r.line), "'" + r.gpu + "' is not a catalog GPU");
        if (std::find(family.archs.begin(), family.archs.end(), gpu->arch) == family.archs.end()) continue;
        AttentionPoint p;
        p.kernel = r.kernel;
        p.backward = r.backward;
        p.causal = r.causal;
        p.head_dim = r.head_dim;
        p.seq = r.seq;
        p.efficiency = std::min(1.0, r.tflops / gpu->peak_bf16_tflops);
        out.push_back(p);
    }
    sort_attention_points(out);
    return out;
}

}  // namespace calib
}  // namespace lostflops
