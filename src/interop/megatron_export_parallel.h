// A job's parallel plan as Megatron-LM flags, for export_megatron
// (megatron_export.cpp; megatron_export_parallel.cpp).
#pragma once

#include <string>
#include <vector>

#include "interop/export_launch.h"
#include "lostflops/interop.h"

namespace lostflops::interop {

// The parallel plan's flags, the inverse of megatron_plan.cpp: degrees, the
// stages (megatron_export_stages.h; `model_flags` holds a hybrid pattern that
// may take them), expert parallelism for a model with experts only,
// sequence parallelism, recompute, ZeRO and the overlaps. What Megatron
// cannot be told goes to `notes`.
std::vector<ExportLine> megatron_parallel_flags(const Job& job, std::vector<std::string>& model_flags,
                                                std::vector<ImportNote>& notes);

// Megatron-FSDP (--use-megatron-fsdp) runs ZeRO-2, and ZeRO-3 with pp or ep
// (--use-torch-fsdp2 asserts pp 1 and ep 1, arguments.py validate_args).
bool megatron_fsdp(const ParallelPlan& p);

}  // namespace lostflops::interop
