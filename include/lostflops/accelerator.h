// Accelerator architecture traits: one table row per `Gpu::arch` value the
// catalog and inline GPU specs accept (src/job/accelerator_traits.cpp, with
// the source of every figure). The row says who makes it, how its matrix
// units are modelled, its host link and the software defaults that follow
// from the architecture. Which calibration family prices an architecture is
// the profile's `devices:` table (calibration.h DeviceFamily::archs), not
// this one: a profile may price an architecture or refuse it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace lostflops {

enum class Vendor { nvidia, amd, google };
// How the device time model sees the matrix units:
//   tile_wave  SMs / CUs each running output tiles; waves of tiles
//              (src/cost/device_time.cpp), Gpu::sm_count of them
//   systolic   a few large systolic arrays (TPU MXUs): matrix dimensions
//              padded to the array (AcceleratorTraits::mxu_dim), no tile
//              waves, XLA-compiled programs without per-kernel launches
//              (src/cost/device_time.cpp; docs/tpu.md)
enum class ComputeModel { tile_wave, systolic };

struct AcceleratorTraits {
    std::string_view arch;   // Gpu::arch
    Vendor vendor = Vendor::nvidia;
    ComputeModel compute = ComputeModel::tile_wave;
    double host_link_GBps = 0;  // device <-> host, per direction (PCIe x16), 1e9 B/s
    // Transformer Engine overlaps tensor-parallel collectives with GEMMs
    // (userbuffers, --tp-comm-overlap) by default on this architecture.
    bool te_tp_overlap = false;
    // Side of one systolic matrix unit (MXU), in elements: a matmul's
    // contracting and output dimensions are padded to multiples of it, its
    // rows to multiples of kSystolicRows. 0 for tile_wave.
    int mxu_dim = 0;
    // One ICI link, one direction, 1e9 B/s (TPU slices' torus; 0 elsewhere):
    // what cluster.intra_node of a torus job gives (spec.h Cluster::torus).
    double ici_link_GBps = 0;
    // The device models of this architecture as their names carry them
    // ("NVIDIA H100 80GB HBM3" -> h100), space-separated: how a measured
    // nccl-tests curve's device name is matched to an architecture
    // (src/cost/nccl_curve.cpp).
    std::string_view models;
};

// The MXU takes its left-hand operand 8 rows at a time: one
// bf16[8,128] @ bf16[128,128] -> f32[8,128] every 8 cycles (Austin et al.,
// "How to Scale Your Model" (2025), part 2 "How to Think About TPUs").
inline constexpr int kSystolicRows = 8;

// Every architecture, in table order.
const std::vector<AcceleratorTraits>& accelerator_traits();
// The row of `arch`; nullptr when the table has none.
const AcceleratorTraits* find_accelerator(std::string_view arch);
std::vector<std::string> accelerator_archs();
// Whether `arch` is a systolic (TPU) architecture: its programs are compiled
// whole by XLA (fused elementwise work, static buffer assignment; docs/tpu.md).
// A prefix test first, so GPU architectures never scan the table.
bool xla_compiled(std::string_view arch);
// What one device of `arch` is called in a table: "chip" for a TPU
// (xla_compiled; Google Cloud's TPU pages count chips), "GPU" otherwise.
const char* device_noun(std::string_view arch);
const char* to_string(Vendor v);
const char* to_string(ComputeModel m);

}  // namespace lostflops
