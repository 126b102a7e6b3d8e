// Across ranks: which ranks and nodes hold the others back, and where; the
// skew of collective starts per process group; how much steps vary. Computed
// by a merger that takes one rank at a time and keeps a fixed-size row per
// rank, so that `trace merge` of thousands of summaries needs memory for the
// rows, not for the ranks' details.
//
// Per rank, per profiler step (the rank's steps, 1 without ProfilerSteps):
//  - step_us: its mean ProfilerStep duration, else its kernel span;
//  - busy_us = step_us - exposed communication per step: the time it spends
//    on its own work (compute, copies, waiting for its own host) rather than
//    waiting inside a collective for the others. In synchronous training every
//    step ends when the slowest rank arrives, so a rank busy longer than the
//    median makes the others wait about that much;
//  - late_us: per (process group, step), the rank that started its first
//    communication kernel of the step last delays that collective for every
//    member by (its start - the next latest start); late_us is its sum, per
//    step considered (at most kMaxClusterSteps steps per rank), over the
//    groups where that start was the rank's first of the step. It is shown,
//    not judged: a rank is late either by its own work (which busy_us counts:
//    its compute and its GPU waiting for its host are in it), or because it
//    waited in another group's collective just before (a victim: with
//    tensor- and data-parallel groups a slow rank's delay reaches the next
//    step of every member of its data-parallel group), or by its host
//    clock's offset;
//  - held_back_us = max(busy_us - median busy_us, 0): how much it holds the
//    others back, per step;
//  - phase: of gemm, attention, norm_elementwise, other_compute, memory copies
//    (exposed) and idle (the GPU waiting for the host), where its time per
//    step exceeds the median rank's the most.
// Outliers: robust z-scores (Iglewicz and Hoaglin 1993, "How to Detect and
// Handle Outliers": z = 0.6745 (x - median) / MAD, an outlier when z >
// kOutlierZ = 3.5; with MAD = 0, z = (x - median) / (1.253314 MeanAD), the
// form IBM SPSS uses) of busy_us, from 3 ranks on; below 3
// ranks there is no median to stand out from, and the report gives each
// rank's difference from the fastest instead. Nodes: a rank's node is its
// trace's host name, else rank / GPUs per node (the trace's deviceProperties
// count, or the merger's gpus_per_node); a node's busy_us is the median of
// its ranks', tested against the other nodes the same way (3 nodes or more).
// Per step: over ranks, the mean and longest ProfilerStep and the rank
// busiest in it; the spread of the step means.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lostflops/trace.h"

namespace lostflops::trace {

inline constexpr double kOutlierZ = 3.5;
inline constexpr std::size_t kMaxClusterSteps = 64;  // steps per rank in the skew analysis
inline constexpr std::size_t kMaxStepStats = 4096;   // step numbers in the per-step table
inline constexpr std::size_t kMaxClusterKernels = 100000;  // distinct (category, name) pairs summed over ranks

struct RankRow {
    int rank = 0;
    std::string node;    // host name, "node N", or "" when unknown
    std::string source;
    bool hta_compatible = false;
    int64_t kernels = 0;
    double steps = 1;
    double step_us = 0;
    double kernel_span_us = 0, compute_us = 0, non_compute_us = 0, idle_us = 0;
    double exposed_comm_us = 0, exposed_memory_us = 0, mean_step_us = 0;
    std::optional<double> comm_comp_overlap_pct;
    double busy_us = 0, late_us = 0, held_back_us = 0;  // per step (above)
    std::optional<double> z;                            // robust z of busy_us (3 ranks or more)
    std::string phase;
    double phase_excess_us = 0;  // per step, over the median rank
    double step_cv_pct = 0;      // standard deviation / mean of its step durations
    std::size_t warnings = 0;
};

// A rank or a node that holds the others back.
struct SlowOne {
    int rank = -1;          // -1 for a node
    std::string node;
    std::string ranks;      // a node's ranks: "24-31" or "3, 9, 12"
    double busy_us = 0, median_busy_us = 0, late_us = 0, held_back_us = 0;
    std::optional<double> z;
    std::string phase;
    double phase_excess_us = 0;
    bool on_slow_node = false;  // a rank whose node is itself slow
};

struct GroupSkew {
    std::string group;       // process group: description (name) [ranks], or "all ranks"
    int64_t ranks = 0;       // ranks seen in it
    int64_t steps = 0;       // steps with two or more of them
    double median_skew_us = 0, max_skew_us = 0;
    int latest_rank = -1;    // last to start most often
    int64_t latest_count = 0;
};

struct StepStat {
    int64_t step = 0;
    int64_t ranks = 0;
    double mean_us = 0, max_us = 0;
    int slowest_rank = -1;
    double max_busy_us = 0;
    int busiest_rank = -1;
};

struct ClusterReport {
    int64_t ranks = 0;
    int64_t nodes = 0;             // distinct nodes (0 when unknown)
    std::vector<RankRow> rows;     // by rank
    double median_busy_us = 0;
    bool outlier_test = false;     // 3 ranks or more
    std::vector<SlowOne> slow_ranks;  // outliers most held back first; below 3 ranks every rank slower than the fastest
    std::vector<SlowOne> slow_nodes;
    std::vector<GroupSkew> groups;    // largest median skew first
    std::vector<StepSkew> step_skew;  // "all ranks": first communication kernel of each step (trace.h StepSkew)
    std::vector<StepStat> steps;      // by step number
    double step_spread_pct = 0;       // (longest - shortest step mean) / median step mean
    // Summed over ranks.
    std::vector<CategoryTotal> categories;
    std::vector<TopKernel> top_kernels;
    std::vector<CollectiveStats> collectives;
    double span_us = 0, compute_us = 0, matmul_us = 0, idle_us = 0, comm_us = 0;
    double exposed_comm_us = 0, exposed_memory_us = 0;
    double host_wait_us = 0, kernel_wait_us = 0, other_wait_us = 0;  // idle by stream, summed over streams
    int64_t kernels = 0, launched = 0, launch_bound = 0;
    double launch_bound_gpu_us = 0;
    double launch_us = 0;  // CPU time of the launches (launched x mean launch)
    // The stack's host events (RankReport::stack_markers; 0 from summaries)
    // and the CPU ProfilerSteps of the ranks that recorded them, summed.
    std::array<uint64_t, kStackMarkers> stack_markers{};
    int64_t marked_steps = 0;
};

class ClusterMerger {
public:
    // gpus_per_node > 0 overrides what the traces say (deviceProperties).
    explicit ClusterMerger(int gpus_per_node = 0);
    ~ClusterMerger();
    ClusterMerger(const ClusterMerger&) = delete;
    ClusterMerger& operator=(const ClusterMerger&) = delete;
    // One rank, in any order. A rank added twice throws InputError naming
    // both sources (one rank, one file): `origin` (the summary file it came
    // from) when given, else the rank's trace. The rank's rank must be >= 0.
    void add(const RankReport& r, const std::string& origin = "");
    ClusterReport finish();

private:
    struct State;
    std::unique_ptr<State> s_;
};

ClusterReport cluster_report(const std::vector<RankReport>& ranks, int gpus_per_node = 0);

// Robust z-scores of `v` (above); empty below 3 values.
std::vector<double> robust_z(const std::vector<double>& v);
double median_of(std::vector<double> v);

}  // namespace lostflops::trace
