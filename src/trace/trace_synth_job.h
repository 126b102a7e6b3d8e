// The made-up job of `lostflops trace synth` (internal to src/trace), shared
// by the generator's two passes: trace_synth.cpp plays the whole job op by op
// in lock step over all ranks and keeps each collective's end per group;
// trace_synth_write.cpp replays one rank alone with those ends and writes its
// events.
#pragma once

#include <cstdint>
#include <vector>

#include "lostflops/trace_synth.h"

namespace lostflops::trace {

namespace synth {

enum class OpKind : uint8_t { compute, tp_allreduce, dp_bucket, dp_final };

// What a kernel counts as in SynthTruth (the analysis' category names).
struct KernelKind {
    const char* name;
    const char* category;  // "gemm", "attention", "norm_elementwise", "other_compute"
    double base_us;
};

// The job's kernels (trace_synth.cpp), by index.
extern const KernelKind kKernels[];

inline constexpr double kHostGapUs = 300;     // GPU idle at each step's start while the CPU prepares the batch
inline constexpr double kStepTailUs = 20;     // the CPU's step ends this long after its last kernel

struct Op {
    OpKind kind;
    int kernel = -1;  // compute: index into kKernels
};

struct CollectiveKind {
    double transfer_us;
    double nelems;  // BFloat16 elements
    const char* group;  // process group description
};

// Times on a grid of 1/8 us: exact in a double near kSynthEpochUs and in the
// three decimals written, so the counts below are exactly what is read.
double on_grid(double us);

// Where one rank is.
struct Clock {
    double gpu = kSynthEpochUs;   // the compute stream is free from here
    double comm = kSynthEpochUs;  // stream 20 is free from here
    double launch_free = kSynthEpochUs;  // the CPU thread's next launch can start here
    double step_start = kSynthEpochUs;
    bool first_of_step = true;
};

// The collective an op stands for: its transfer time, size and group.
const CollectiveKind& kind_of(OpKind k);
// When a rank's stream reaches the collective: TP on the compute stream, DP on stream 20.
double arrival(const Clock& c, OpKind k);

}  // namespace synth

struct SynthJob::Impl {
    SynthSpec spec;
    std::vector<synth::Op> ops;  // one step
    // Collective ends: [step][collective index in the step][group].
    std::vector<std::vector<std::vector<double>>> ends;

    int tp_group(int r) const { return r / spec.tp; }
    int dp_group(int r) const { return r % spec.tp; }
    // The factor on rank r's compute kernel times in `step` (slow rank, slow
    // node, jitter).
    double factor(int r, int step) const;
};

}  // namespace lostflops::trace
