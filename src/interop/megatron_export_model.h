// The model of a job as Megatron-LM flags, one flag (with its value) per
// string, for export_megatron (megatron_export.cpp). What no flag can say is
// appended to `notes` (key "model").
#pragma once

#include <string>
#include <vector>

#include "lostflops/interop.h"
#include "lostflops/model.h"

namespace lostflops::interop {

void megatron_model_flags(const Model& m, std::vector<std::string>& flags, std::vector<ImportNote>& notes);

}  // namespace lostflops::interop
