// The `run:` section of a job (docs/whole-run.md): failure rate, checkpoint
// storage and interval, restarts, spares, price, power and data loading. Each
// key is optional; the defaults and their sources are below. Rates may be 0,
// never negative; bandwidths and sizes must be above 0. checkpoint_bytes is
// left 0 when absent: run/run_inputs.cpp derives it from the parameter count.
#include <cmath>

#include "lostflops/accelerator.h"
#include "lostflops/error.h"
#include "job/job_sections.h"
#include "job/yaml_reader.h"

namespace lostflops {

namespace {

// Llama 3 405B pre-training: 419 unexpected interruptions in a 54-day
// snapshot on 16,384 H100 GPUs (Dubey et al. 2024, "The Llama 3 Herd of
// Models", section 3.3.4, table 5): 419 / (16,384 x 54 x 24 h) = 1.97e-5 per
// GPU-hour, a job MTBF of 3.1 h at that size.
constexpr double kLlama3Interruptions = 419;
constexpr double kLlama3Gpus = 16384;
constexpr double kLlama3Hours = 54 * 24;

// Storage: Meta's Tectonic file system for Llama 3 sustains 2 TB/s (peak
// 7 TB/s) for the 16,384-GPU cluster (Dubey et al. 2024, section 3.3.1,
// "Storage"). The default gives the job the same share per GPU, 2e12 / 16,384
// = 0.122 GB/s per GPU, aggregated over its GPUs.
constexpr double kStorageGBpsPerGpu = 2000.0 / 16384;

// 10 minutes to detect a failure, drain and reschedule the job, re-initialise
// NCCL and the framework and warm up. An assumption, not a measurement: the
// Llama 3 report gives no figure; docs/whole-run.md's band shows how the
// result moves with it.
constexpr double kRestartOverheadS = 600;

// Power usage effectiveness 1.10: Google's fleet-wide trailing twelve-month
// average (Google 2023 Environmental Report, "Data centers").
constexpr double kPue = 1.10;

// Device-to-host copy per GPU for the async snapshot: the GPU's PCIe link per
// direction, from the architecture table (lostflops/accelerator.h, sources
// in src/job/accelerator_traits.cpp).
double pcie_GBps(const std::string& arch) {
    const AcceleratorTraits* t = find_accelerator(arch);
    return t ? t->host_link_GBps : 64;  // every Gpu::arch has a row (gpu_parse.cpp checks it)
}

// Tokens stored as the smallest integer holding the vocabulary: 2 bytes below
// 65,500 entries, else 4 (Megatron-LM's indexed dataset,
// megatron/core/datasets/indexed_dataset.py, DType.optimal_dtype).
double token_bytes(int64_t vocab) { return vocab < 65500 ? 2 : 4; }

constexpr double kMinGBps = 1e-6;  // 1 kB/s: anything below is a unit slip or zero
constexpr double kMaxGBps = 1e9;

}  // namespace

RunSpec read_run(YAML::Node node, const std::string& file, const Cluster& cluster, const Model& model) {
    if (node && !node.IsNull() && !node.IsMap()) throw InputError(file, "run", "expected a mapping");
    YamlSection s(node, file, "run");
    // A mean time between failures is given as its inverse here: no spelling
    // of "mtbf" is near `gpu_failure_rate`, so it is named outright.
    if (node && node.IsMap())
        for (const auto& kv : node)
            if (kv.first.IsScalar() && kv.first.Scalar().rfind("mtbf", 0) == 0)
                throw InputError(file, "run." + kv.first.Scalar(),
                                 "unknown key; did you mean `gpu_failure_rate`? (failures per GPU-hour: 1 / one GPU's "
                                 "mean time between failures in hours)");
    RunSpec r;
    r.gpu_failure_rate_per_gpu_h =
        s.num_or("gpu_failure_rate", kLlama3Interruptions / (kLlama3Gpus * kLlama3Hours), 0, 1);
    r.checkpoint_bytes = s.num_or("checkpoint_bytes", 0, 1, 1e18);
    const double storage = kStorageGBpsPerGpu * cluster.num_gpus;
    r.checkpoint_write_GBps = s.num_or("checkpoint_write_GBps", storage, kMinGBps, kMaxGBps);
    r.checkpoint_read_GBps = s.num_or("checkpoint_read_GBps", storage, kMinGBps, kMaxGBps);
    // `auto` (default) or seconds of work between checkpoints; null = auto.
    const YAML::Node interval = s.raw("checkpoint_interval");
    if (s.has("checkpoint_interval") && !(interval.IsScalar() && interval.Scalar() == "auto"))
        r.checkpoint_interval_s = s.num_req("checkpoint_interval", 1e-3, 1e9);
    r.checkpoint_mode = s.bool_or("async_checkpoint", true) ? CheckpointMode::async : CheckpointMode::sync;
    r.snapshot_GBps = s.num_or("snapshot_GBps", pcie_GBps(cluster.gpu.arch), kMinGBps, kMaxGBps);
    r.restart_overhead_s = s.num_or("restart_overhead_s", kRestartOverheadS, 0, 1e8);
    r.spare_nodes = static_cast<int>(s.int_or("spare_nodes", 0, 0, 1'000'000));
    r.node_repair_s = 3600 * s.num_or("node_repair_h", 0, 0, 1e5);
    r.price_per_gpu_hour = s.num_or("price_per_gpu_hour", 0, 0, 1e6);
    // Default: the GPU's maximum board power (catalog tdp_w, from its datasheet).
    r.gpu_power_w = s.num_or("gpu_power_w", cluster.gpu.tdp_w, 1, 1e5);
    r.pue = s.num_or("pue", kPue, 1, 10);
    r.bytes_per_token = s.num_or("bytes_per_token", token_bytes(model.vocab), 1e-3, 1e9);
    r.storage_read_GBps = s.num_or("storage_read_GBps", storage, kMinGBps, kMaxGBps);
    // The loader's CPU time has one home, the step (docs/data-loader.md):
    // the whole-run keys that priced it once per run name where it went.
    for (const char* moved : {"preprocess_tokens_per_s_per_core", "cpu_cores_per_gpu"})
        if (s.has(moved))
            throw InputError(file, std::string("run.") + moved,
                             "moved: the data loader's CPU time is priced in the step, "
                             "training.data_loader_s_per_sequence (seq_length / tokens per second of one process) "
                             "and training.data_loader_workers (docs/data-loader.md)");
    s.finish({"source"});
    return r;
}

}  // namespace lostflops
