// ZeRO-3 / FSDP parameter gathers and gradient reduce-scatters, counted per
// layer and bucket as the engine issues them, their exposure behind each
// layer's compute, and the gathered parameters they keep alive. Internal.
#pragma once

#include "estimate/memory.h"
#include "estimate/stage_time.h"

namespace lostflops {

// The engine's behaviour, parallel.zero_* resolved against the framework's
// defaults (docs/job-file-parallel.md "ZeRO-3 engine").
struct Zero3Engine {
    double bucket_params = 0;         // elements per parameter all-gather; 0 = one per layer (FSDP unit)
    double reduce_bucket_params = 0;  // elements per gradient reduce-scatter; 0 = one per layer
    int prefetch = 1;                 // gathers issued ahead of use
    bool regather_recompute = false;  // full recompute gathers the layer once more
    double max_live_params = 0;       // cap on gathered elements alive; 0 = no cap
};
Zero3Engine zero3_engine(const Job& job);

// Collectives of one layer for one micro-batch on one GPU: dense weights over
// the dp*cp group, expert weights over the dp*cp/ep group.
struct Zero3Collectives {
    double gathers = 0;          // all-gathers per pass (forward; backward the same)
    double reduce_scatters = 0;  // per backward
    double gather_s = 0;         // time of one pass's gathers
    double reduce_scatter_s = 0; // time of the backward's reduce-scatters
};
Zero3Collectives zero3_layer_collectives(const Job& job, const PlanContext& ctx, const Zero3Engine& e,
                                         const LayerWork& lw);

// One pass over `layers` layers: `hideable_s` per layer runs during the
// previous layer's compute window (prefetch; reduce-scatter after the layer),
// `edge_s` cannot hide (first gather, last reduce-scatter), `serial_s` per
// layer never hides (no prefetch).
struct PassExposure {
    double exposed_s = 0;
    double hidden_s = 0;
};
PassExposure zero3_pass_exposure(double layers, double hideable_s, double edge_s, double serial_s,
                                 double window_s);

// The traffic of one pipeline rank's ZeRO-3 step that does not depend on
// recompute depth, overlap_grad_reduce or the compute windows: the engine,
// one layer's collectives, whether prefetch fits under the live cap, and the
// rest of the stage (embedding, output layer) gathered and reduced as one
// exposed unit. Computed once per plan setup (estimate/estimate_parts.h).
struct Zero3Comm {
    Zero3Engine engine;
    Zero3Collectives layer;
    bool prefetch = false;
    double root_s = 0;  // per micro-batch
};
Zero3Comm zero3_comm(const Job& job, const PlanContext& ctx, const LayerWork& lw, const StageParams& sp);

// Exposed seconds per step of ZeRO-3 traffic on one pipeline rank (hidden
// traffic charged at calibration overlap_slowdown). layer_fwd_s/layer_bwd_s:
// one layer's forward and backward (with recompute) for one micro-batch.
double zero3_exposed_s(const Job& job, const Calibration& cal, const Zero3Comm& comm, const StageParams& sp,
                       double layer_fwd_s, double layer_bwd_s, double m);
// The same, with the traffic computed here.
double zero3_exposed_s(const Job& job, const Calibration& cal, const PlanContext& ctx, const LayerWork& lw,
                       const StageParams& sp, double layer_fwd_s, double layer_bwd_s, double m);

// Gathered parameters alive at the peak and the unreduced gradient buffer.
struct Zero3Live {
    double params = 0;       // gathered (unsharded) elements alive
    bool capped = false;     // limited by zero_max_live_params
    double grad_params = 0;  // unsharded gradient elements awaiting reduce-scatter
    double bytes = 0;        // 2 bytes per gathered element + gradient bytes
};
Zero3Live zero3_live(const Job& job, const LayerWork& lw, const StageParams& sp);

}  // namespace lostflops
