// Collective start skew per process group and step, accumulated one rank at a
// time (definitions in include/lostflops/trace_cluster.h): per (group, step)
// the earliest, the latest and the next latest start, so that memory is one
// small record per group and step, never per rank. Internal to src/trace.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "lostflops/trace_cluster.h"

namespace lostflops::trace::detail {

class SkewAccumulator {
public:
    // Records `rank`'s first communication start of step `step` in `group`
    // ("" = all ranks: the first communication kernel of the step);
    // `first`: no other group of the rank communicated earlier in the step
    // (only then can its lateness not come from waiting in an earlier
    // collective of the step: lateness is counted only there).
    void add(const std::string& group, int64_t step, int rank, double start_us, bool first);
    bool any_process_group() const { return group_names_.size() > 1; }
    struct Result {
        std::vector<GroupSkew> groups;                  // largest median skew first
        std::vector<StepSkew> steps;                    // all ranks, by step
        std::unordered_map<int, double> late_us;        // rank -> summed (latest - next latest)
    };
    // Per group (all ranks only when no process group was seen) and step with
    // two or more ranks; late_us only where the latest rank's start was its
    // first of the step.
    Result finish() const;

private:
    struct Acc {
        double earliest = 0, latest = 0, second = 0;
        int earliest_rank = -1, latest_rank = -1;
        bool latest_first = false;
        int64_t count = 0;
    };
    struct Key {
        uint32_t group;
        int64_t step;
        bool operator==(const Key& o) const { return group == o.group && step == o.step; }
    };
    struct KeyHash {
        std::size_t operator()(const Key& k) const {
            return std::hash<uint64_t>()(static_cast<uint64_t>(k.step) * 0x9E3779B97F4A7C15ULL ^ k.group);
        }
    };
    std::unordered_map<std::string, uint32_t> group_ids_{{"", 0}};
    std::vector<std::string> group_names_{""};
    std::unordered_map<Key, Acc, KeyHash> acc_;
};

}  // namespace lostflops::trace::detail
