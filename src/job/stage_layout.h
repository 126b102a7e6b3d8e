// Which layers each virtual pipeline stage holds (virtual stage v = chunk *
// pp + rank, model order, as Megatron-LM interleaves): the default split, the
// first/last stage layer counts, or an explicit layout (lostflops/spec.h
// ParallelPlan). Closed forms: O(1) per stage. Shared by the plan checks, the
// estimate, the search and explain.
#pragma once

#include <algorithm>

#include "lostflops/spec.h"

namespace lostflops {

struct VirtualStage {
    int first = 0;           // index of its first decoder layer
    int layers = 0;          // decoder layers
    bool embedding = false;  // holds the input embedding
    bool loss = false;       // holds the output layer and the loss
    int mtp = 0;             // multi-token prediction modules (default: on the loss's stage)
};

// The default split: when pp*vpp does not divide the layers, the first and
// last virtual stages (which also hold the embedding and the output layer) get
// the fewer layers, as Llama 3 405B's 126 layers on 16 stages did (Llama Team
// 2024, sec. 3.3.2): the layers missing from an even split of base+1 each are
// taken from the two ends first, then inwards.
inline int layers_on(int model_layers, int pp, int vpp, int rank, int chunk) {
    const int k = pp * vpp;                     // virtual stages
    const int base = model_layers / k;
    const int rem = model_layers % k;
    if (rem == 0) return base;
    const int vs = chunk * pp + rank;
    const int missing = k - rem;
    const int from_end = k - 1 - vs;
    const int dist = std::min(vs, from_end);    // 0 for the first and last
    const int rank_from_ends = 2 * dist + (vs <= from_end ? 0 : 1);
    return base + (rank_from_ends < missing ? 0 : 1);
}

// Rank `rank`'s chunks under the default split, in closed form: the light
// ones hold `base` layers (the first `head` chunks and the last `tail`), the
// others base + 1. (All `base` when pp*vpp divides the layers.)
struct RankSplit {
    int base = 0, head = 0, tail = 0, chunks = 0;
    int light() const { return head + tail; }
    int heavy() const { return chunks - head - tail; }
    int64_t layers() const { return static_cast<int64_t>(light()) * base + static_cast<int64_t>(heavy()) * (base + 1); }
};
inline RankSplit default_rank_split(int model_layers, int pp, int vpp, int rank) {
    const int stages = pp * vpp;
    const int missing = stages - model_layers % stages;
    const int light_head = (missing + 1) / 2, from = stages - missing / 2;
    RankSplit s;
    s.base = model_layers / stages;
    s.chunks = vpp;
    // Chunks c with c*pp + rank < light_head, and with c*pp + rank >= from.
    s.head = light_head / pp + (rank < light_head % pp ? 1 : 0);
    s.tail = std::max(0, vpp - (from / pp + (rank < from % pp ? 1 : 0)));
    return s;
}

inline bool default_split(const ParallelPlan& p) {
    return !p.layout && p.first_stage_layers < 0 && p.last_stage_layers < 0;
}

VirtualStage virtual_stage(const Job& job, int rank, int chunk);

// Layers of the fullest virtual stage (O(1) but for an explicit layout).
int max_stage_layers(const Job& job);

// Whether some rank's `chunks` virtual stages (chunk c = stage c * pp + rank)
// hold different numbers of layers: the default split when pp * chunks does
// not divide the layers, an explicit layout that says so (scanned, O(pp *
// chunks)); never with first/last stage counts, which split each rank's
// layers evenly over its chunks. False for one chunk.
bool rank_chunks_uneven(const Job& job, int chunks);

inline int layers_on(const Job& job, int rank, int chunk) {
    if (default_split(job.plan)) return layers_on(job.model.layers, job.plan.pp, job.plan.vpp, rank, chunk);
    return virtual_stage(job, rank, chunk).layers;
}

}  // namespace lostflops
