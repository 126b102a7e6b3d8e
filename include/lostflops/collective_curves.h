// Which measured nccl-tests curves price a job's collectives, and what the
// estimate's output says about them (`estimate` names every curve it used,
// and warns when a curve was measured on another GPU).
//
// One entry per parallel group of the job with more than one member and each
// collective the cost model runs on it (tensor parallel: all-gather and
// reduce-scatter with sequence parallelism, else all-reduce; context
// parallel: all-gather; expert parallel: all-to-all; data parallel and
// expert data parallel: reduce-scatter and all-gather with ZeRO >= 1, else
// all-reduce; tied embeddings: all-reduce; pipeline sends are priced on the
// link, never by a curve), placed as the
// estimate places it (estimate/stage_time.h make_plan_context), matched as
// the cost model matches (lostflops/nccl_curve.h find_curve).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>  // declarations only: a .cpp that builds or reads JSON includes json.hpp

#include "lostflops/calibration.h"
#include "lostflops/nccl_curve.h"
#include "lostflops/spec.h"

namespace lostflops {

struct CollectiveCurveUse {
    std::string group;             // "tp", "cp", "ep", "dp", "edp", "pp", "embedding"
    Collective op = Collective::all_reduce;
    CurveKey placement;            // of the group
    const BusBwCurve* curve = nullptr;  // into the calibration; nullptr: the alpha-beta formula prices it
    std::string gpu_warning;       // curve measured on another GPU (curve_gpu_mismatch), or ""
};

// Empty when the profile has no measured curves.
std::vector<CollectiveCurveUse> collective_curves(const Job& job, const Calibration& cal);

// "dp reduce_scatter (64 ranks, 8 per node on 8 nodes): curve reduce_scatter
// measured on 16 ranks, 8 per node on 2 nodes (NVIDIA H100 80GB HBM3)", one
// per line; and the warnings, one per curve.
std::string collective_curves_text(const std::vector<CollectiveCurveUse>& uses);
std::vector<std::string> collective_curve_warnings(const std::vector<CollectiveCurveUse>& uses);
// [{group, op, ranks, ranks_per_node, nodes, curve: {op, ranks, ranks_per_node,
// nodes, gpu, sizes} or null, warning}]
nlohmann::json collective_curves_json(const std::vector<CollectiveCurveUse>& uses);

}  // namespace lostflops
