// Kineto-shaped traces of a made-up training job with known answers: for the
// project's own tests, benchmarks and `lostflops trace synth` (trying the
// cluster path — Slurm array, Dask, `trace merge` — without a GPU).
//
// The job: `ranks` GPUs, `gpus_per_node` per node (node = rank /
// gpus_per_node), tensor parallel groups of `tp` consecutive ranks (inside a
// node), data parallel groups of the ranks with the same rank mod tp. Every
// ProfilerStep on every rank runs, on compute stream 7: a host gap (the CPU
// late: data loading), `layers` transformer layers forward (GEMMs, flash
// attention, a norm, an activation, a tiny launch-bound add, a TP all-reduce
// after attention and after the MLP when tp > 1) and backward (a TP
// all-reduce at the start of each layer, then its GEMMs, attention and
// elementwise kernels); on stream 20 a data-parallel bucket all-reduce
// launched when layer 0's backward starts its compute (it overlaps that
// compute), and the final data-parallel all-reduce; then two optimizer
// kernels. A collective ends for all its members at the latest member's
// arrival plus its transfer time, so a slow rank makes its groups wait.
// Compute kernels on rank r in step s take their base time x
// slow_rank_factor (r == slow_rank) x slow_node_factor (r's node ==
// slow_node) x (1 + u) with u uniform in +-jitter_pct/100 from a hash of
// (seed, r, s): same spec, same bytes.
//
// Every CPU launch (cudaLaunchKernel, 6 us) precedes its kernel by 20 us,
// except the first kernel of a step: launched 5 us before it starts, after
// the previous kernel ended (host wait). Times are microseconds from
// kSynthEpochUs on a grid of 1/8 us (exact in a double), written with three
// decimals as Kineto writes them.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace lostflops::trace {

struct SynthSpec {
    int ranks = 8;            // world size, 1 .. kMaxSynthRanks
    int gpus_per_node = 8;    // 1 .. 64
    int tp = 1;               // divides gpus_per_node
    int steps = 3;            // ProfilerSteps, 1 .. 1000
    int64_t first_step = 10;  // N of the first ProfilerStep#N
    int layers = 4;           // 1 .. 1000
    int slow_rank = -1;       // none when < 0
    double slow_rank_factor = 1.5;
    int slow_node = -1;       // none when < 0
    double slow_node_factor = 1.25;
    double jitter_pct = 0;    // 0 .. 50
    uint64_t seed = 1;
};
inline constexpr int kMaxSynthRanks = 1 << 20;
inline constexpr double kSynthEpochUs = 4e12;  // a monotonic clock's microseconds, as recent Kineto traces have

// What the generated trace of one rank holds, counted as it is written
// (independently of the reader and the analysis).
struct SynthTruth {
    int rank = 0;
    int node = 0;
    int64_t kernels = 0;          // GPU kernels
    double span_us = 0;           // first kernel start to last kernel end
    double compute_us = 0;        // compute kernels (one stream: their union is their sum)
    double matmul_us = 0;         // GEMM and attention kernels
    double comm_us = 0;           // communication kernels (never two at once)
    double exposed_comm_us = 0;   // communication while no compute kernel runs
    double idle_us = 0;           // span minus the time some kernel runs
    int64_t launch_bound = 0;     // kernels shorter than their 6 us launch
    struct Total {
        int64_t count = 0;
        double time_us = 0;
    };
    std::map<std::string, Total> categories;  // "gemm", ..., "comm:all_reduce"
    std::vector<int64_t> step_numbers;
    std::vector<double> step_us;              // ProfilerStep durations
    std::vector<double> first_comm_start_us;  // per step
};

// Throws InputError (file "trace synth", key the option) on a spec outside
// the ranges above.
void check_synth_spec(const SynthSpec& s);

// The simulated job: the collective end times of every rank, computed once
// (O(ranks x kernels per rank)); then each rank's trace in O(its kernels).
class SynthJob {
public:
    // Throws InputError as check_synth_spec.
    explicit SynthJob(const SynthSpec& s);
    ~SynthJob();
    SynthJob(const SynthJob&) = delete;
    SynthJob& operator=(const SynthJob&) = delete;
    // Rank `rank`'s trace (Kineto JSON) and, when asked, what it holds.
    std::string trace(int rank, SynthTruth* truth = nullptr) const;
    const SynthSpec& spec() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// One rank's trace (the whole job simulated for it).
std::string synth_trace(const SynthSpec& s, int rank, SynthTruth* truth = nullptr);

// "rank00017.json": the file name `trace synth` gives rank 17.
std::string synth_file_name(int rank);

}  // namespace lostflops::trace
