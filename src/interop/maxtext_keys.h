// MaxText's vocabulary (AI-Hypercomputer/maxtext, src/maxtext/configs/base.yml
// and configs/models/*.yml): the model presets by `model_name`, the mesh
// axes, the TPU slice types, and the documented list of keys that do not
// change the cost of a training step. Tables only; maxtext_import.cpp and
// maxtext_config.cpp read a config with them.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lostflops::interop {

// One `configs/models/NAME.yml`: the keys it sets, as MaxText writes them.
struct MaxTextModel {
    const char* name;
    std::vector<std::pair<const char*, const char*>> keys;
};
const std::vector<MaxTextModel>& maxtext_models();
const MaxTextModel* find_maxtext_model(std::string_view name);
std::vector<std::string> maxtext_model_names();

// A mesh axis: the job's parallel setting it multiplies ("dp", "fsdp",
// "tp", "cp", "ep", "pp"), or "" when lostflops does not model it (an
// axis other than 1 is then a warning).
struct MeshAxis {
    const char* name;  // "data": the keys ici_data_parallelism, dcn_data_parallelism
    const char* maps_to;
};
const std::vector<MeshAxis>& maxtext_mesh_axes();

// Why a key does not change the cost of a step (paths, logging, data,
// optimizer hyper-parameters, decoding); nullptr when it may.
const char* maxtext_nocost_reason(std::string_view key);

// A Cloud TPU slice type ("v5p-128", "v5e-256", "v5litepod-16", "v6e-64",
// "v4-128") as the catalog GPU, chips per slice, the torus of the slice and
// one ICI link; nullopt (with `why` set) when not one.
struct TpuSlice {
    std::string gpu;            // catalog name: "tpu-v5p"
    int chips = 0;
    std::vector<int> torus;     // chips per axis (2 or 3 axes); empty for one chip
};
std::optional<TpuSlice> parse_tpu_slice(const std::string& type, std::string& why);

}  // namespace lostflops::interop
