// Measured memory from [memory] events (rules: include/lostflops/trace_memory.h).
#include "trace/trace_memory.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>

#include "trace/trace_internal.h"

namespace lostflops::trace::detail {
namespace {

// b's largest allocated total (the earliest at a tie) and the larger reserved one.
void absorb(MemoryPoint& a, const MemoryPoint& b) {
    if (b.allocated_bytes > a.allocated_bytes || (b.allocated_bytes == a.allocated_bytes && b.ts_us < a.ts_us)) {
        a.ts_us = b.ts_us;
        a.allocated_bytes = b.allocated_bytes;
    }
    a.reserved_bytes = std::max(a.reserved_bytes, b.reserved_bytes);
}

template <typename Bucket>
void halve(std::vector<Bucket>& v) {
    std::size_t n = 0;
    for (std::size_t i = 0; i < v.size(); ++i) {
        const int64_t index = v[i].index >> 1;  // floor division by 2 (C++20: arithmetic shift)
        if (n > 0 && v[n - 1].index == index) {
            absorb(v[n - 1].p, v[i].p);
        } else {
            v[n] = v[i];
            v[n].index = index;
            ++n;
        }
    }
    v.resize(n);
}

bool whole_in(double x, double lo, double hi) { return x >= lo && x <= hi && x == std::floor(x); }

const char* to_string(MemorySkip why) {
    switch (why) {
        case MemorySkip::ts: return "ts not a number within +-2^53 us";
        case MemorySkip::device_type: return "Device Type missing or not a whole number";
        case MemorySkip::device_id: return "Device Id not a whole number in [0, 1023]";
        case MemorySkip::allocated: return "Total Allocated missing or not a whole number in [0, 2^40]";
        case MemorySkip::reserved: return "Total Reserved missing or not a whole number in [0, 2^40]";
        case MemorySkip::reserved_below: return "Total Reserved below Total Allocated";
    }
    return "?";
}

// An autograd node's evaluation (PyTorch's autograd engine records
// "autograd::engine::evaluate_function: <Node>"), a module (the profiler's
// with_modules: "nn.Module: <Class>_<n>") or a user annotation other than
// the step marks.
bool is_context(const EventFields& f) {
    constexpr std::string_view autograd = "autograd::engine::evaluate_function: ", module = "nn.Module: ";
    if (f.name.starts_with(autograd) || f.name.starts_with(module)) return true;
    int64_t step = 0;
    return f.cat == "user_annotation" && !is_profiler_step(f.name, step);
}

std::string gib(double bytes) { return fmt::format("{:.2f} GiB", bytes / kBytesPerGiB); }

}  // namespace

void MemoryTimeline::add(const MemoryPoint& p) {
    if (!any_) {
        origin_ = p.ts_us;
        any_ = true;
    }
    // |ts - origin| <= 2^54 and width >= 1 us: the index fits in 64 bits.
    const auto index = static_cast<int64_t>(std::floor((p.ts_us - origin_) / width_us_));
    if (hint_ < buckets_.size() && buckets_[hint_].index == index) {
        absorb(buckets_[hint_].p, p);
        return;
    }
    auto it = std::lower_bound(buckets_.begin(), buckets_.end(), index,
                               [](const Bucket& b, int64_t i) { return b.index < i; });
    if (it != buckets_.end() && it->index == index) {
        absorb(it->p, p);
    } else {
        it = buckets_.insert(it, Bucket{index, p});
    }
    hint_ = static_cast<std::size_t>(it - buckets_.begin());
    if (buckets_.size() > kMaxMemoryBuckets) {
        // The index range halves each time: the loop ends.
        while (buckets_.size() > kMaxMemoryBuckets / 2) {
            halve(buckets_);
            width_us_ *= 2;
        }
        hint_ = 0;
    }
}

std::vector<MemoryPoint> MemoryTimeline::points(std::size_t max_points) const {
    std::vector<Bucket> v = buckets_;
    while (v.size() > std::max<std::size_t>(max_points, 1)) halve(v);
    std::vector<MemoryPoint> out;
    out.reserve(v.size());
    for (const auto& b : v) out.push_back(b.p);
    return out;
}

void MemoryReader::add(const EventFields& f) {
    const double type = f.mem_device_type;
    if (!std::isfinite(type) || type != std::floor(type)) return skip(MemorySkip::device_type);
    if (type != kCudaDeviceType) return;  // the CPU's (0) and other devices' events: not a GPU's memory
    if (!f.has_ts || std::fabs(f.ts) > kMaxAbsTsUs) return skip(MemorySkip::ts);
    if (!whole_in(f.mem_device_id, 0, kMaxDeviceId)) return skip(MemorySkip::device_id);
    const double allocated = f.mem_allocated, reserved = f.mem_reserved;
    if (!whole_in(allocated, 0, kMaxAllocatorBytes)) return skip(MemorySkip::allocated);
    if (!whole_in(reserved, 0, kMaxAllocatorBytes)) return skip(MemorySkip::reserved);
    if (reserved < allocated) return skip(MemorySkip::reserved_below);
    const std::pair<int64_t, int> key{f.pid, static_cast<int>(f.mem_device_id)};
    if (last_ == nullptr || key != last_key_) {
        auto it = tracks_.find(key);
        if (it == tracks_.end()) {
            if (tracks_.size() >= kMaxMemoryTracks) {
                ++over_tracks_;
                return;
            }
            it = tracks_.emplace(key, Track{}).first;
            it->second.m.pid = key.first;
            it->second.m.device = key.second;
        }
        last_ = &it->second;  // std::map: stable while others are added
        last_key_ = key;
    }
    DeviceMemory& m = last_->m;
    const bool first = m.events++ == 0;
    if (first || allocated > m.peak_allocated_bytes ||
        (allocated == m.peak_allocated_bytes && f.ts < m.peak_allocated_ts_us)) {
        m.peak_allocated_bytes = allocated;
        m.peak_allocated_ts_us = f.ts;
        m.peak_allocated_tid = f.tid;
    }
    if (first || reserved > m.peak_reserved_bytes ||
        (reserved == m.peak_reserved_bytes && f.ts < m.peak_reserved_ts_us)) {
        m.peak_reserved_bytes = reserved;
        m.peak_reserved_ts_us = f.ts;
    }
    last_->timeline.add(MemoryPoint{f.ts, allocated, reserved});
}

std::vector<DeviceMemory> MemoryReader::finish(std::vector<std::string>& warnings) {
    std::vector<DeviceMemory> out;
    out.reserve(tracks_.size());
    for (auto& [key, t] : tracks_) {
        t.m.timeline = t.timeline.points(kMaxMemoryTimelinePoints);
        out.push_back(std::move(t.m));
    }
    tracks_.clear();
    last_ = nullptr;
    uint64_t total = 0;
    std::string why;
    for (std::size_t i = 0; i < kMemorySkips; ++i) {
        if (skipped_[i] == 0) continue;
        total += skipped_[i];
        why += fmt::format("{}{} ({})", why.empty() ? "" : ", ", to_string(static_cast<MemorySkip>(i)), skipped_[i]);
    }
    if (total > 0 || over_tracks_ > 0) {
        std::string w = "memory-events: ";
        if (total > 0) w += fmt::format("skipped {} malformed [memory] events: {}", total, why);
        if (over_tracks_ > 0)
            w += fmt::format("{}{} [memory] events of more than {} (pid, device) pairs passed over",
                             total > 0 ? "; " : "", over_tracks_, kMaxMemoryTracks);
        warnings.push_back(std::move(w));
    }
    return out;
}

void PeakOpFinder::Hit::offer(const EventFields& f) {
    // The innermost: the latest start; at equal starts the shorter.
    if (any && (f.ts < start || (f.ts == start && f.dur >= dur))) return;
    any = true;
    start = f.ts;
    dur = f.dur;
    name.assign(f.name);
}

PeakOpFinder::PeakOpFinder(const std::vector<DeviceMemory>& tracks) {
    for (std::size_t i = 0; i < tracks.size(); ++i) {
        if (tracks[i].events == 0) continue;
        targets_.push_back(Target{tracks[i].pid, tracks[i].peak_allocated_tid, tracks[i].peak_allocated_ts_us, i, {}, {}});
    }
    std::sort(targets_.begin(), targets_.end(), [](const Target& a, const Target& b) {
        return a.pid != b.pid ? a.pid < b.pid : a.tid < b.tid;
    });
    lo_ = std::numeric_limits<double>::infinity();
    hi_ = -lo_;
    for (const auto& t : targets_) lo_ = std::min(lo_, t.ts), hi_ = std::max(hi_, t.ts);
}

void PeakOpFinder::visit(const EventFields& f) {
    if (!f.has_ts || !f.has_dur || f.ts > hi_ || f.ts + f.dur < lo_ || f.ph != "X") return;
    const bool op = f.cat == "cpu_op";
    const bool context = is_context(f);
    if (!op && !context) return;
    const auto lo = std::lower_bound(targets_.begin(), targets_.end(), std::pair{f.pid, f.tid},
                                     [](const Target& t, const std::pair<int64_t, int64_t>& k) {
                                         return t.pid != k.first ? t.pid < k.first : t.tid < k.second;
                                     });
    for (auto it = lo; it != targets_.end() && it->pid == f.pid && it->tid == f.tid; ++it) {
        if (f.ts > it->ts || f.ts + f.dur < it->ts) continue;
        if (op) it->op.offer(f);
        if (context) it->context.offer(f);
    }
}

void PeakOpFinder::apply(std::vector<DeviceMemory>& tracks) const {
    for (const auto& t : targets_) {
        tracks[t.track].peak_op = t.op.name;
        tracks[t.track].peak_op_context = t.context.name;
    }
}

std::optional<DeviceMemory> rank_memory(const TraceData& d, std::vector<std::string>& warnings) {
    const DeviceMemory* best = nullptr;
    for (const auto& m : d.memory) {
        if (m.events > 0 && (best == nullptr || m.peak_allocated_bytes > best->peak_allocated_bytes)) best = &m;
    }
    if (best == nullptr) return std::nullopt;
    DeviceMemory r = *best;
    for (const auto& s : d.steps) {
        if (!s.on_cpu || r.peak_allocated_ts_us < s.ts_us || r.peak_allocated_ts_us > s.ts_us + s.dur_us) continue;
        r.peak_allocated_step = s.number;
        r.peak_allocated_step_offset_us = r.peak_allocated_ts_us - s.ts_us;
        break;
    }
    if (d.memory.size() > 1) {
        std::string others;
        std::size_t listed = 0;
        for (const auto& m : d.memory) {
            if (&m == best) continue;
            if (++listed > 8) {
                others += ", ...";
                break;
            }
            others += fmt::format("{}pid {} device {} at {}", others.empty() ? "" : ", ", m.pid, m.device,
                                  gib(m.peak_allocated_bytes));
        }
        warnings.push_back(fmt::format("memory-devices: [memory] events of {} (pid, CUDA device) pairs; reported: "
                                       "pid {} device {}, the highest allocated peak ({}); also {}",
                                       d.memory.size(), r.pid, r.device, gib(r.peak_allocated_bytes), others));
    }
    return r;
}

}  // namespace lostflops::trace::detail
