// Plausible ranges of the physical quantities a job or the GPU catalog may give
// (docs/job-file.md, "Hardware figures"). Not physics, only "surely a typo or a
// unit slip": each range spans the hardware anyone trains on today with one to
// two orders of magnitude of headroom on both sides, so a value outside it is a
// mistake (FLOP/s for TFLOP/s, bytes for GiB, Gb/s for GB/s by 1e9...) that would
// otherwise print a step time hundreds of digits long or of zero.
//
// Reference points (data/catalog/gpus.yaml and clusters.yaml, with sources):
// dense peaks from V100's 125 fp16 to GB200's 5,000 fp8 TFLOP/s; HBM 32-192 GiB
// at 900-8,000 GB/s; NVLink 150-900 GB/s per direction, PCIe 32-64; boards of
// 300-1,200 W with 80-304 SMs/CUs; InfiniBand NICs of 25-50 GB/s per GPU; NCCL
// per-hop latencies of 0.4-10 us (NCCL src/graph/tuning.cc).
#pragma once

#include <cstdint>

namespace lostflops::bounds {

// Dense tensor-core peak per precision, TFLOP/s. 0.1 is below any GPU with
// tensor cores (a T4: 65 fp16) and near a laptop CPU's fp32; 100,000 is 20x
// GB200's 5,000 dense fp8. 0 (not in the range) marks "no tensor cores for this
// precision" and is accepted separately.
inline constexpr double kMinTflops = 0.1;
inline constexpr double kMaxTflops = 100'000;
// HBM capacity, GiB: 1 GiB (the smallest card anyone trains on has 8-16) to
// 10 TiB (50x the largest GPU, 192 GiB).
inline constexpr double kMinMemoryGiB = 1;
inline constexpr double kMaxMemoryGiB = 10'240;
// Memory bandwidth, GB/s: 10 (one DDR4 channel is 25) to 100,000 (12x the
// 8,000 of B200/GB200).
inline constexpr double kMinHbmGBps = 10;
inline constexpr double kMaxHbmGBps = 100'000;
// Scale-up bandwidth per GPU per direction (the GPU's nvlink_GBps, a cluster's
// intra_node / inter_node bandwidth_GBps), GB/s: 0.1 (1 Gb/s Ethernet is
// 0.125 GB/s) to 100,000 (100x NVLink 5's 900 per direction).
inline constexpr double kMinLinkGBps = 0.1;
inline constexpr double kMaxLinkGBps = 100'000;
// Per-hop latency of a link, microseconds: 0 (an ideal link: no alpha term)
// to 10,000 (10 ms, a wide-area link; NCCL's per-hop figures are 0.4-10 us).
inline constexpr double kMinLatencyUs = 0;
inline constexpr double kMaxLatencyUs = 10'000;
// Streaming multiprocessors / compute units: 1 to 10,000 (33x MI300X's 304).
inline constexpr int64_t kMaxSmCount = 10'000;
// Board power, W: 10 (an edge module) to 10,000 (8x GB200's 1,200 per GPU).
inline constexpr double kMinTdpW = 10;
inline constexpr double kMaxTdpW = 10'000;

// GPUs of one job: 1 to 1,000,000 (30x the largest published training runs,
// e.g. Llama 3's 16,384 H100 and xAI's reported 100,000-200,000).
inline constexpr int64_t kMaxGpus = 1'000'000;

// Decoder layers of one model, and any count of them a plan gives: 1 to
// 10,000, 10x the deepest published Transformer (DeepNet's 1,000 layers, Wang
// et al. 2022, arXiv 2203.00555; large LMs have 61-126). It also bounds the
// search, whose layouts grow with the layers (185,138 layouts at 1,000 layers
// on 1,024 GPUs; `search --min-gpus` of the default job at 10,000 layers took
// 47 s on 2 threads, at 100,000 more than 5 minutes in a helper session's run).
inline constexpr int64_t kMaxLayers = 10'000;

}  // namespace lostflops::bounds
