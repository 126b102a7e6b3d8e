// The data loader's stall (docs/data-loader.md). Each data-parallel replica
// loads its share of the global batch a step, n = global_batch / dp
// sequences (every micro-batch of its pipeline; tensor-, context- and
// pipeline-parallel ranks of the replica read the same sequences), at
// training.data_loader_s_per_sequence CPU seconds each on one process:
//
//     load_s = n * s_per_sequence
//
// No worker (PyTorch DataLoader num_workers = 0): the training process
// loads the step's batches itself after the step's synchronisation (the
// loss or gradient norm read back to the host: hf_sync_us, Megatron's
// clip_grad_norm), when the GPU has nothing queued, so the GPU waits for all
// of it. That is the order of the Hugging Face Trainer, which fetches every
// micro-batch of an optimizer step before the first forward
// (transformers trainer.py Trainer.get_batch_samples, v4.46 on), and of any
// loop with one micro-batch a step; a loop that fetches each micro-batch
// just before its forward could hide the later ones behind the GPU's work
// (not priced: the rule is the upper end there).
//
//     stall = load_s
//
// W >= 1 workers: W processes load whole batches in parallel with training
// and keep prefetch_factor (2) x W of them ready
// (torch/utils/data/dataloader.py), so in the steady state the loader
// yields W batches per batch's load time and a step waits only when
// producing its n sequences takes longer than the step:
//
//     stall = max(0, load_s / W - step_s)
//
// Under the Hugging Face Trainer (framework hf), which takes all m
// micro-batches of a step before its first forward (get_batch_samples,
// above), only the 2W batches the workers keep ready are there at once; the
// other m - 2W are made while the GPU waits, W at a time, each a batch's
// load b = micro_batch_size * s_per_sequence:
//
//     stall = max(0, load_s / W - step_s, (m - 2W) * b / W)
//
// Not priced: the main process's cost of receiving a batch (unpickling from
// shared memory, pin_memory), the first step's fill, and CPU cores shared
// by W x (GPUs per node) worker processes (the per-sequence time is the
// one measured on the machine, with its contention).
#include "estimate/data_loader.h"

#include <algorithm>

namespace lostflops {

namespace {
// Batches each worker keeps ready (torch.utils.data.DataLoader
// prefetch_factor, default 2 when num_workers > 0).
constexpr double kPrefetchFactor = 2;
}  // namespace

double data_loader_stall_s(const Training& t, const ParallelPlan& p, double step_s) {
    if (!(t.data_loader_s_per_sequence > 0)) return 0.0;
    const double sequences = static_cast<double>(t.global_batch) / std::max(1, p.dp);
    const double load_s = sequences * t.data_loader_s_per_sequence;
    if (t.data_loader_workers <= 0) return load_s;
    const double w = t.data_loader_workers;
    double stall = std::max(0.0, load_s / w - step_s);
    if (t.framework == Framework::hf) {
        const double batches = sequences / static_cast<double>(std::max<int64_t>(1, t.micro_batch));
        const double batch_s = static_cast<double>(t.micro_batch) * t.data_loader_s_per_sequence;
        stall = std::max(stall, (batches - kPrefetchFactor * w) * batch_s / w);
    }
    return stall;
}

}  // namespace lostflops
