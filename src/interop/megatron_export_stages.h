// A plan's pipeline stages in Megatron-LM's shortest words
// (megatron_export_stages.cpp), for `lostflops export megatron`.
#pragma once

#include <string>
#include <vector>

#include "lostflops/spec.h"

namespace lostflops::interop {

// The flags that give every virtual stage its layers, the shortest that
// Megatron-LM takes: none for an even split without chunks;
// --num-layers-per-virtual-pipeline-stage for even chunks;
// --decoder-first-pipeline-num-layers / --decoder-last-pipeline-num-layers
// (with --num-virtual-stages-per-pipeline-rank) when only the first and the
// last rank differ from the others and each rank's chunks are equal; else
// --pipeline-model-parallel-layout with runs of equal stages grouped
// ("Et|(t|)*3(tt|)*36(t|)*3tL"). A hybrid stack (`model_flags` holds its
// --hybrid-layer-pattern) takes uneven or interleaved stages as '|' in the
// pattern instead, which is edited in place (Megatron refuses the other
// flags beside it).
std::vector<std::string> megatron_stage_flags(const Job& job, std::vector<std::string>& model_flags);

// The layout string of the plan's virtual stages, runs of equal stages grouped
// as Megatron's parser expands them ((...)*N, x*N).
std::string megatron_layout_text(const Job& job);

}  // namespace lostflops::interop
