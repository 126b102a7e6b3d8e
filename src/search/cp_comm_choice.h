// The search's choice of context-parallel attention variant for a layout
// (parallel.cp_comm_type: p2p ring, all-gather, all-to-all / Ulysses;
// cost/cp_attention.h). The variant changes only the attention layers'
// kernels and exchange, so instead of evaluating every plan three times the
// search takes, per layout with cp > 1, the variant whose layers' forward and
// backward time (estimate/stage_time.h layer_time, every layer kind weighted
// by its count) is least among those the job's framework launches
// (lostflops/framework_rules.h, the rules on parallel.cp_comm_type:
// Megatron-Core all three, a2a only when cp divides the local heads;
// torchtitan p2p and allgather; DeepSpeed a2a). `--fix cp_comm_type=X` or
// the job's own key keeps one; a search without a framework's rules
// (PlanFix::launch unset: every plan job/validate.cpp passes) keeps the
// job's own variant (its framework's default when not given).
// Internal to search.
#pragma once

#include <map>
#include <tuple>

#include "lostflops/search.h"

namespace lostflops::search {

// The variant is a function of tp, cp and the micro-batch (the CP group's
// placement, the tokens and local heads of a rank): kept per (tp, cp,
// micro-batch), so a search computes each once.
class CpCommChooser {
public:
    CpCommChooser(const Job& job, const Calibration& cal, const PlanFix& fix) : job_(job), cal_(cal), fix_(fix) {}
    // The job's own variant when cp is 1.
    CpCommType operator()(const SearchLayout& l);

private:
    const Job& job_;
    const Calibration& cal_;
    const PlanFix& fix_;
    std::map<std::tuple<int, int, int64_t>, CpCommType> memo_;
};

// Whether fix.launch's stack launches `type` on the layout (true without one).
bool cp_comm_launches(const Job& job, const SearchLayout& l, CpCommType type, const PlanFix& fix);

}  // namespace lostflops::search
