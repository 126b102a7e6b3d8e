// The MFU waterfall: from 100 % of dense peak down to the predicted MFU.
//
// MFU = model FLOPs / (step time * GPUs * dense peak) (PaLM, Chowdhery et al.
// 2022, app. B), so with ideal = model FLOPs / (GPUs * peak) the MFU is
// ideal / step and 100 - MFU% = 100 * (step - ideal) / step. The step time is
// estimate()'s breakdown (lostflops/estimate.h: its fields sum to the step);
// each wall but compute (lostflops/walls.h, in its order) is one step of the waterfall, and compute (GEMMs and
// attention of the slowest pipeline rank) minus the ideal is split into the
// GEMMs' and the attention core's losses: the attention part of compute is
// the worst rank's layers * micro-batches * the attention kernels' time
// (explain/pass_model.cpp), its ideal the attention FLOPs of model FLOPs
// (workload/flops.h) at peak; the GEMMs take the rest, which also holds the
// slowest rank's extra work over the mean (stage imbalance). Each step's
// pp = 100 * s / step, so the steps sum to 100 - 100 * MFU exactly (to rounding).
#include <cmath>

#include "explain/pass_model.h"
#include "lostflops/explain.h"
#include "lostflops/hf_attention.h"
#include "lostflops/walls.h"
#include "workload/flops.h"

namespace lostflops {

std::vector<WaterfallStep> mfu_waterfall(const Job& job, const Calibration& cal, const Estimate& e) {
    const Breakdown& bd = e.breakdown;
    const double step = e.step_time_s;
    const double peak_flops = job.cluster.gpu.peak_tflops(job.training.precision) * 1e12;
    const double gpus = job.cluster.num_gpus;
    const double ideal = e.model_flops_per_step / (gpus * peak_flops);
    double attn_model_flops = 0;
    for (size_t k = 0; k < job.model.kinds().size(); ++k) {
        const LayerForwardFlops lf =
            layer_forward_flops(job.model.kinds()[k], job.model.hidden, job.training.seq_length, job.training.causal_flops);
        attn_model_flops += 3.0 * lf.attention_core * job.model.kind_count(static_cast<int>(k)) * e.tokens_per_step;
    }
    const double ideal_attn = attn_model_flops / (gpus * peak_flops);
    const double ideal_gemm = ideal - ideal_attn;

    const JobPasses jp = job_passes(job, cal);
    int worst_layers = 0;
    for (int c = 0; c < job.plan.vpp; ++c) worst_layers += jp.layers[static_cast<size_t>(jp.worst_rank) * job.plan.vpp + c];
    const double attn_s = static_cast<double>(jp.micro_batches) * worst_layers * attention_layer_s(jp.setup);
    const double gemm_s = bd.compute_s - attn_s;

    std::vector<WaterfallStep> steps;
    const auto add = [&](const char* key, const char* name, double s) {
        if (s == 0 || !std::isfinite(s)) return;
        steps.push_back(WaterfallStep{key, name, 100.0 * s / step, s});
    };
    add("gemm", "GEMM efficiency (kernels, tile/wave quantisation, stage imbalance)", gemm_s - ideal_gemm);
    add("attention",
        job.training.attention == AttentionKernel::unfused || hf_attention_keeps_scores(job.model, job.training)
            ? "attention kernels (unfused softmax path)"
            : "attention kernel efficiency",
        attn_s - ideal_attn);
    for (const WallInfo& w : kWalls)
        if (w.seconds != &Breakdown::compute_s) add(w.waterfall_key, w.words, bd.*w.seconds);
    return steps;
}

}  // namespace lostflops
