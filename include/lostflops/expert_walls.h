// The expert part of an MoE job's step, wall by wall: router, permutation,
// dispatch, combine, expert GEMMs, shared experts, expert-data-parallel
// gradient traffic. Each is a slice of the main walls (lostflops/walls.h:
// compute, memory_bound, recompute, ep_comm, dp_comm), priced by the same
// rule as estimate() prices the step, so that:
//   - the step time is estimate()'s, unchanged: these slices are read off
//     it, not added to it;
//   - dispatch + combine hold all of the step's ep_comm_s;
//   - every other main wall holds at least the slices it is given.
// Contract of expert_walls(job, cal): a job loaded by load_job(); `moe`
// false (and every wall 0) when no layer has routed experts. Deterministic,
// no I/O. The rules are in src/estimate/expert_walls.cpp.
#pragma once

#include <array>

#include "lostflops/calibration.h"
#include "lostflops/estimate.h"
#include "lostflops/spec.h"

namespace lostflops {

enum class ExpertWallId { router, permute, dispatch, combine, expert_gemm, shared_experts, expert_dp };
inline constexpr int kExpertWallCount = 7;

struct ExpertWall {
    ExpertWallId id = ExpertWallId::router;
    // Its seconds per step, by the main wall that holds them (compute_s,
    // memory_bound_s, recompute_s, ep_comm_s or dp_comm_s); in.total_s()
    // is the wall's share of the step.
    Breakdown in;
    // Communication (dispatch, combine, expert_dp): what the collectives take
    // per step, hidden or not (in.total_s() is the exposed part); else 0.
    double collective_s = 0;
    double step_s() const { return in.total_s(); }
};

struct ExpertWalls {
    bool moe = false;
    MoeDispatcher dispatcher = MoeDispatcher::alltoall;
    std::array<ExpertWall, kExpertWallCount> walls{};
    const ExpertWall& operator[](ExpertWallId id) const { return walls[static_cast<size_t>(id)]; }
    // Sum of the walls' slices of each main wall.
    Breakdown sum() const;
};

// Stable key ("router", "permute", "dispatch", "combine", "expert_gemm",
// "shared_experts", "expert_dp") and words for people.
const char* key_of(ExpertWallId id);
const char* words_of(ExpertWallId id);

ExpertWalls expert_walls(const Job& job, const Calibration& cal);

}  // namespace lostflops
