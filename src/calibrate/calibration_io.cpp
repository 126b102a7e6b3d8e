// Reader of calibration profiles (YAML): the built-in defaults
// (data/calibration/default.yaml, embedded) overlaid with a user's file.
// Strict: unknown keys, wrong types, values outside their range (see
// calibration_fields.h), NaN/inf, repeated keys, empty and binary files are
// InputErrors that name the file and the dotted key or line, so that a typo
// never silently keeps a default. Documents and numbers go through the job
// reader's YAML intake (job/yaml_document.h: unique keys, nesting limit;
// job/yaml_reader.h: YAML 1.2 numbers), files through job/text_input.h.
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <set>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "calibrate/calibration_devices.h"
#include "calibrate/calibration_fields.h"
#include "calibrate/component_tables.h"
#include "lostflops/calibration.h"
#include "lostflops/embedded.h"
#include "lostflops/error.h"
#include "lostflops/nccl_curve.h"
#include "job/text_input.h"
#include "job/yaml_document.h"
#include "job/yaml_reader.h"

namespace lostflops {

namespace {

using calib::Range;

std::string join_key(const std::string& prefix, const std::string& key) {
    return prefix.empty() ? key : prefix + "." + key;
}

double parse_number(const YAML::Node& node, const std::string& file, const std::string& key) {
    return scalar_number(node, file, key, std::numeric_limits<double>::lowest(), std::numeric_limits<double>::max());
}

double parse_in_range(const YAML::Node& node, Range range, const std::string& file,
                      const std::string& key, double max = 1) {
    const double v = parse_number(node, file, key);
    switch (range) {
        case Range::fraction:
            if (v > 1)
                throw InputError(file, key, fmt::format("{} is not an efficiency in [{}, 1]: above 1 (an efficiency "
                                                        "is a fraction: 0.85 for 85 %)",
                                                        node.Scalar(), calib::kMinEfficiency));
            if (v < calib::kMinEfficiency)
                throw InputError(file, key, fmt::format("{} is not an efficiency in [{}, 1] (below 1 % is not "
                                                        "plausible for any GPU)", node.Scalar(), calib::kMinEfficiency));
            break;
        case Range::closed_fraction:
            if (v < 0 || v > 1)
                throw InputError(file, key, fmt::format("{} is not a fraction in [0, 1]", node.Scalar()));
            break;
        case Range::non_negative:
            if (v < 0 || v > max)
                throw InputError(file, key, fmt::format("{} is out of range; expected 0 to {}", node.Scalar(), max));
            break;
    }
    return v;
}

const YAML::Node& require_map(const YAML::Node& node, const std::string& file, const std::string& key) {
    if (!node.IsMap()) throw InputError(file, key, "expected a mapping of keys to values");
    return node;
}

std::string key_text(const YAML::Node& k, const std::string& file, const std::string& prefix) {
    if (!k.IsScalar()) throw InputError(file, prefix, "keys must be plain strings");
    return k.Scalar();
}

template <class Fields>
std::vector<std::string> field_keys(const Fields& fields) {
    std::vector<std::string> out;
    for (const auto& f : fields) out.emplace_back(f.key);
    return out;
}

BusBwPoint read_point(const YAML::Node& node, const BusBwCurve& curve, const std::string& file,
                      const std::string& key) {
    if (!node.IsSequence() || (node.size() != 2 && node.size() != 3))
        throw InputError(file, key, "expected [bytes, busbw_GBps, time_us] or [bytes, busbw_GBps]");
    BusBwPoint p;
    p.bytes = parse_number(node[0], file, key + "[0]");
    p.busbw_GBps = parse_number(node[1], file, key + "[1]");
    if (!(p.bytes > 0)) throw InputError(file, key, "bytes must be > 0");
    if (!(p.busbw_GBps > 0)) throw InputError(file, key, "busbw_GBps must be > 0");
    // Plausible ranges (calib::kMaxCurve*, with their reasons). Small busbw
    // figures are real (8-byte messages print 0.00 GB/s), so busbw has no
    // lower bound but > 0; an absurd one shows in the time, which is bounded.
    if (p.bytes > calib::kMaxCurveBytes) throw InputError(file, key + "[0]", fmt::format("{} bytes is out of range; expected up to 1e12", node[0].Scalar()));
    if (p.busbw_GBps > calib::kMaxCurveBusBwGBps)
        throw InputError(file, key + "[1]", fmt::format("{} GB/s is out of range; expected up to 100000", node[1].Scalar()));
    if (node.size() == 3) {
        p.time_us = parse_number(node[2], file, key + "[2]");
        if (!(p.time_us > 0)) throw InputError(file, key, "time_us must be > 0");
    } else {
        p.time_us = p.bytes * bus_factor(curve.op, curve.ranks) / (p.busbw_GBps * 1e3);
    }
    if (!(p.time_us <= calib::kMaxCurveTimeUs))
        throw InputError(file, key, fmt::format("time {:.4g} us is out of range (more than 1e9 us, 17 minutes, for one "
                                                "collective){}",
                                                p.time_us, node.size() == 3 ? "" : ": busbw_GBps is too small"));
    return p;
}

BusBwCurve read_curve(const YAML::Node& node, const std::string& file, const std::string& prefix) {
    require_map(node, file, prefix);
    BusBwCurve c;
    std::set<std::string> seen;
    for (const auto& kv : node) seen.insert(key_text(kv.first, file, prefix));
    const std::vector<std::string> curve_keys{"op", "scope", "ranks", "points", "ranks_per_node", "nodes", "gpu"};
    for (const auto& k : seen)
        if (k != "op" && k != "scope" && k != "ranks" && k != "points" && k != "ranks_per_node" && k != "nodes" &&
            k != "gpu")
            throw InputError(file, join_key(prefix, k), "unknown key" + did_you_mean(k, curve_keys));
    for (const char* k : {"op", "scope", "ranks", "points"})
        if (!seen.count(k)) throw InputError(file, join_key(prefix, k), "missing");
    const YAML::Node op = node["op"], scope = node["scope"], ranks = node["ranks"];
    auto o = op.IsScalar() ? collective_from_string(op.Scalar()) : std::nullopt;
    if (!o)
        throw InputError(file, join_key(prefix, "op"),
                         "expected all_reduce, all_gather, reduce_scatter, all_to_all or send_recv");
    auto s = scope.IsScalar() ? link_scope_from_string(scope.Scalar()) : std::nullopt;
    if (!s) throw InputError(file, join_key(prefix, "scope"), "expected intra_node or inter_node");
    const double r = parse_number(ranks, file, join_key(prefix, "ranks"));
    if (r < 2 || r > 1e7 || std::floor(r) != r)
        throw InputError(file, join_key(prefix, "ranks"), "expected an integer >= 2");
    c.op = *o;
    c.scope = *s;
    c.ranks = static_cast<int>(r);
    // Where the ranks sat; both or neither, and consistent with ranks and scope.
    if (seen.count("ranks_per_node") != seen.count("nodes"))
        throw InputError(file, join_key(prefix, seen.count("nodes") ? "ranks_per_node" : "nodes"),
                         "missing (ranks_per_node and nodes go together)");
    if (seen.count("nodes")) {
        const double g = parse_number(node["ranks_per_node"], file, join_key(prefix, "ranks_per_node"));
        const double n = parse_number(node["nodes"], file, join_key(prefix, "nodes"));
        if (g < 1 || n < 1 || std::floor(g) != g || std::floor(n) != n || g * n != r)
            throw InputError(file, join_key(prefix, "nodes"),
                             fmt::format("ranks_per_node x nodes must be ranks ({}), both positive integers", r));
        if ((n > 1) != (c.scope == LinkScope::inter_node))
            throw InputError(file, join_key(prefix, "nodes"), "more than one node is scope inter_node, one is intra_node");
        c.ranks_per_node = static_cast<int>(g);
        c.nodes = static_cast<int>(n);
    }
    if (seen.count("gpu")) {
        const YAML::Node g = node["gpu"];
        if (!g.IsScalar()) throw InputError(file, join_key(prefix, "gpu"), "expected the device name nccl-tests printed");
        c.gpu = g.Scalar();
    }
    const YAML::Node points = node["points"];
    const std::string pkey = join_key(prefix, "points");
    if (!points.IsSequence() || points.size() == 0)
        throw InputError(file, pkey, "expected a non-empty list of [bytes, busbw_GBps, time_us]");
    for (std::size_t i = 0; i < points.size(); ++i) {
        const std::string key = fmt::format("{}[{}]", pkey, i);
        BusBwPoint p = read_point(points[i], c, file, key);
        if (!c.points.empty() && p.bytes <= c.points.back().bytes)
            throw InputError(file, key, "sizes must be strictly increasing");
        c.points.push_back(p);
    }
    return c;
}

std::vector<BusBwCurve> read_curves(const YAML::Node& node, const std::string& file) {
    if (node.IsNull()) return {};
    if (!node.IsSequence()) throw InputError(file, "nccl", "expected a list of curves");
    std::vector<BusBwCurve> out;
    for (std::size_t i = 0; i < node.size(); ++i) {
        const std::string prefix = fmt::format("nccl[{}]", i);
        BusBwCurve c = read_curve(node[i], file, prefix);
        for (const auto& o : out)
            if (o.op == c.op && o.scope == c.scope && o.ranks == c.ranks &&
                curve_layout(o).ranks_per_node == curve_layout(c).ranks_per_node)
                throw InputError(file, prefix, "a second curve for the same op, scope, ranks and ranks per node");
        out.push_back(std::move(c));
    }
    return out;
}

// YAML items of a profile (yaml_document.h kMaxYamlItems): a measured point
// `- [bytes, busbw_GBps, time_us]` is 8, so 400,000 hold 50,000 points, five
// runs of nccl_tests.cpp's 10,000-row limit; yaml-cpp takes about 300 bytes
// an item, so the profile stays under 256 MB (docs/reliability.md "Bad input and limits").
constexpr std::size_t kMaxCalibrationItems = 400'000;

YAML::Node parse_yaml(std::string_view text, const std::string& file) {
    const std::string owned(text);
    check_text(owned, file);
    return load_yaml_document(owned, file, "", Duplicates::error, kMaxCalibrationItems);
}

}  // namespace

Calibration overlay_calibration(const Calibration& base, std::string_view text,
                                const std::string& source) {
    const YAML::Node root = parse_yaml(text, source);
    if (!root || root.IsNull())
        throw InputError(source, "", "empty file; expected a calibration profile (YAML mapping)");
    require_map(root, source, "");
    Calibration c = base;
    c.source = source;
    try {
        for (const auto& kv : root) {
            const std::string k = key_text(kv.first, source, "");
            bool known = false;
            if (k == "devices") {
                calib::read_devices(kv.second, c, source);
                known = true;
            }
            for (const auto& f : calib::kScalarFields) {
                if (k != f.key) continue;
                c.*f.member = parse_in_range(kv.second, f.range, source, k, f.max);
                known = true;
            }
            if (k == "nccl") {
                c.nccl = read_curves(kv.second, source);
                known = true;
            }
            if (k == "fitted_on") {
                const YAML::Node& n = kv.second;
                if (!n.IsSequence()) throw InputError(source, k, "expected a list of run tables (CSV paths)");
                c.fitted_on.clear();
                for (std::size_t i = 0; i < n.size(); ++i) {
                    if (!n[i].IsScalar() || n[i].Scalar().empty())
                        throw InputError(source, fmt::format("fitted_on[{}]", i), "expected a path");
                    c.fitted_on.push_back(n[i].Scalar());
                }
                known = true;
            }
            if (!known) {
                std::vector<std::string> top = field_keys(calib::kScalarFields);
                for (const char* key : {"devices", "nccl", "fitted_on"}) top.emplace_back(key);
                throw InputError(source, k, "unknown key" + did_you_mean(k, top));
            }
        }
    } catch (const YAML::Exception& e) {  // defensive: node access on odd documents
        throw InputError(source, fmt::format("line {}", e.mark.line + 1), "invalid YAML: " + e.msg);
    }
    return c;
}

Calibration parse_calibration_text(std::string_view text, const std::string& source) {
    return overlay_calibration(default_calibration(), text, source);
}

Calibration default_calibration() {
    // Parsed once (thread-safe static initialisation); copies are cheap.
    static const Calibration defaults = [] {
        const char* name = "calibration/default.yaml";
        auto text = embedded_file(name);
        if (!text) throw InputError(name, "", "built-in calibration profile is missing");
        Calibration c = overlay_calibration(Calibration{}, *text, name);
        c.source = "<builtin>";
        // Attention curves come from the component table itself.
        const auto tables = calib::builtin_component_tables();
        for (auto& f : c.devices)
            if (f.attention.empty())
                f.attention = calib::attention_points_from_table(tables.attention, f, "data/calibration/attention.csv");
        return c;
    }();
    return defaults;
}

Calibration load_calibration(const std::string& path) {
    // Bounded read: a device or a FIFO is refused by its kind, a huge file at
    // the size limit, instead of being read to the end.
    return parse_calibration_text(read_text_file(path, kMaxCalibrationBytes, "calibration profile"),
                                  input_name(path));
}

}  // namespace lostflops
