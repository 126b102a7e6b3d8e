// No token mixer (MixerKind::none): an MLP-only layer, Nemotron-H's
// hybrid_override_pattern '-' (arXiv 2504.03624). No parameters, no FLOPs,
// nothing on a GPU; the layer's checks are its MLP's (job/layer_stack.cpp).
#include "job/mixers/mixer_parts.h"

namespace lostflops {

namespace {

MixerCount count(const LayerKind&, double) { return {}; }
double core_flops(const LayerKind&, int64_t, bool) { return 0; }
void on_rank(const LayerKind&, const MixerRank&, MixerOnRank&) {}
KindProblem problem(const LayerKind&) { return {}; }
std::string tp_problem(const LayerKind&, int64_t) { return {}; }
std::string shape_text(const LayerKind&) { return {}; }

}  // namespace

const MixerFns kNoMixer{count, core_flops, on_rank, problem, tp_problem, shape_text};

}  // namespace lostflops
