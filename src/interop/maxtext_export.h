// `lostflops export maxtext`: a job's plan as MaxText config keys
// (maxtext_export.cpp).
#pragma once

#include "lostflops/interop.h"

namespace lostflops {

// MaxText config keys of the job's plan: the ici_* / dcn_* mesh (each axis
// split, fastest first, into the part inside a slice and the part across
// slices), per_device_batch_size, max_target_length, remat_policy. Throws
// InputError when an axis straddles slices unevenly.
ExportResult export_maxtext(const Job& job);

}  // namespace lostflops
