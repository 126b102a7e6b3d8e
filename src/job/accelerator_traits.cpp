// The accelerator architecture table (lostflops/accelerator.h): one row per
// architecture, each figure with its source.
//
// Host link: PCIe x16 per direction, the generation each part's datasheet
// names: Gen3 16 GB/s (V100 SXM2 datasheet: 32 GB/s both ways; T4 datasheet;
// TPU v4: x16 PCIe Gen3, Google Cloud "TPU v4" page), Gen4 32 GB/s (A100
// datasheet: 64 GB/s both ways; L40 datasheet; MI250X datasheet), Gen5 64 GB/s
// (H100 SXM datasheet: 128 GB/s both ways; B200, MI300X/MI325X/MI355X
// datasheets; TPU v6e: "connects to the host through a PCIe Gen5 interface",
// Google Cloud "TPU v6e" page). ASSUMPTION where no public page names it: TPU
// v5e and v5p Gen4 x16, TPU7x (Ironwood) Gen5 x16.
//
// MXU side: 128 x 128 on TPU v2-v5 (v4: 4 MXUs per TensorCore; v5e 4 MXUs of
// 128 x 128, Google Cloud "TPU v5e" page), 256 x 256 on v6e ("Trillium ...
// 256 x 256 MXUs", Google Cloud "TPU v6e" page; scaling book part 2: "matrices
// padded to multiples of 128 (256 on v6e)"). ASSUMPTION: TPU7x (Ironwood)
// 256 x 256 as v6e (Google names TensorCores, not the MXU size).
//
// ICI per link, one way: v4 and v5e 4.5e10 B/s, v5p and v6e 9e10 B/s
// (Austin et al., "How to Scale Your Model" (2025), part 2, ICI table).
// ASSUMPTION: TPU7x 1e11 B/s (1.2 TB/s bidirectional per chip over 6 links).
//
// Models: the device names of each architecture's parts (the catalog's, and
// those nccl-tests prints for parts the catalog lacks: A10/A30/A40, L4/L40,
// GH200, H20, B100, T4; NVIDIA and AMD product pages).
//
// TP overlap: Transformer Engine's userbuffers overlap is the default of
// Megatron-Core jobs on sm90 and newer (Hopper, Blackwell); nothing else.
#include "lostflops/accelerator.h"

#include <algorithm>

namespace lostflops {

namespace {

using enum Vendor;
using enum ComputeModel;

// Built on first use, not at static initialisation: a catalog read from
// another translation unit's static initialiser (the fuzz targets do) would
// otherwise see an empty table (found by fuzz_nccl: "unknown value 'ampere';
// expected one of: ").
const std::vector<AcceleratorTraits>& traits_table() {
    static const std::vector<AcceleratorTraits> table = {
    {"volta", nvidia, tile_wave, 16, false, 0, 0, "v100"},
    {"turing", nvidia, tile_wave, 16, false, 0, 0, "t4"},
    {"ampere", nvidia, tile_wave, 32, false, 0, 0, "a100 a800 a10 a30 a40"},
    {"ada", nvidia, tile_wave, 32, false, 0, 0, "l40 l4"},
    {"hopper", nvidia, tile_wave, 64, true, 0, 0, "gh200 h100 h200 h800 h20"},
    {"blackwell", nvidia, tile_wave, 64, true, 0, 0, "gb200 gb300 b200 b300 b100"},
    {"cdna2", amd, tile_wave, 32, false, 0, 0, "mi250x mi250"},
    {"cdna3", amd, tile_wave, 64, false, 0, 0, "mi300x mi300a mi325x"},
    {"cdna4", amd, tile_wave, 64, false, 0, 0, "mi350x mi355x"},
    {"tpu_v4", google, systolic, 16, false, 128, 45, ""},
    {"tpu_v5e", google, systolic, 32, false, 128, 45, ""},
    {"tpu_v5p", google, systolic, 32, false, 128, 90, ""},
    {"tpu_v6e", google, systolic, 64, false, 256, 90, ""},
    {"tpu_v7", google, systolic, 64, false, 256, 100, ""},
    };
    return table;
}

}  // namespace

const std::vector<AcceleratorTraits>& accelerator_traits() { return traits_table(); }

const AcceleratorTraits* find_accelerator(std::string_view arch) {
    const auto& table = traits_table();
    const auto it = std::find_if(table.begin(), table.end(), [&](const auto& t) { return t.arch == arch; });
    return it == table.end() ? nullptr : &*it;
}

std::vector<std::string> accelerator_archs() {
    std::vector<std::string> out;
    for (const auto& t : traits_table()) out.emplace_back(t.arch);
    return out;
}

bool xla_compiled(std::string_view arch) {
    if (arch.rfind("tpu", 0) != 0) return false;
    const AcceleratorTraits* t = find_accelerator(arch);
    return t && t->compute == ComputeModel::systolic;
}

const char* device_noun(std::string_view arch) { return xla_compiled(arch) ? "chip" : "GPU"; }

const char* to_string(Vendor v) {
    switch (v) {
        case Vendor::nvidia: return "nvidia";
        case Vendor::amd: return "amd";
        case Vendor::google: return "google";
    }
    return "?";
}

const char* to_string(ComputeModel m) {
    switch (m) {
        case ComputeModel::tile_wave: return "tile-wave";
        case ComputeModel::systolic: return "systolic";
    }
    return "?";
}

}  // namespace lostflops
