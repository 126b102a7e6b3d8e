// Parts of the Megatron import (megatron_import.cpp): which Megatron the
// flags are for, and the parallel plan with its recompute setting.
#pragma once

#include <string>
#include <vector>

#include "interop/job_draft.h"
#include "interop/megatron_args.h"
#include "lostflops/interop.h"

namespace lostflops::interop {

// Megatron-Core unless a flag of legacy Megatron-LM says otherwise; `why`
// says which.
Framework megatron_framework(const MegatronArgs& f, std::vector<ImportNote>& notes, std::string& why);

// The `parallel:` section: tp, pp, vpp, cp, ep, zero, sequence parallelism,
// recompute, overlaps, gradient precision.
void megatron_parallel(const MegatronArgs& f, int layers, bool bf16, JobDraft& d, std::vector<ImportNote>& notes);

}  // namespace lostflops::interop
