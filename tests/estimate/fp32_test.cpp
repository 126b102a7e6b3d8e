// fp32 training (Precision::fp32): the bytes per parameter (4 weight + 4
// gradient + 8 Adam, no master copy), 4-byte activations, the TF32 peak its
// GEMMs and MFU are priced at, the refusal on a GPU without a TF32 figure,
// and a Megatron script without --bf16 / --fp16 imported and exported.
#include <gtest/gtest.h>

#include <string>

#include "cost/device_time.h"
#include "interop/interop_util.h"
#include "estimate/memory.h"
#include "lostflops/calibration.h"
#include "lostflops/catalog.h"
#include "lostflops/estimate.h"
#include "lostflops/explain.h"
#include "lostflops/interop.h"
#include "lostflops/job.h"
#include "test_util.h"
#include "workload/layer_work.h"

namespace lostflops {
namespace {

// The small GPT job on A100 (test_util.h) at one precision, plus `sets`.
Job small(const std::string& precision, std::vector<std::string> sets = {}) {
    sets.push_back("training.precision=" + precision);
    sets.push_back("training.attention=flash");
    return parse_job(test::small_job_text(), "small.yaml", sets);
}

TEST(Fp32Training, StateIsSixteenBytesPerParameterWithoutMaster) {
    const Calibration cal = default_calibration();
    const Memory m32 = estimate(small("fp32"), cal).memory;
    const Memory m16 = estimate(small("bf16"), cal).memory;
    // bf16: 2 (weight) + 4 (fp32 main grad) + 12 (master, m, v) per parameter;
    // fp32: 4 + 4 + 8. Same parameters on the rank, so the ratios are exact.
    ASSERT_GT(m16.weights_bytes, 0);
    EXPECT_DOUBLE_EQ(m32.weights_bytes, 2 * m16.weights_bytes);
    EXPECT_DOUBLE_EQ(m32.gradients_bytes, m16.gradients_bytes);
    EXPECT_DOUBLE_EQ(m32.optimizer_bytes * 12, m16.optimizer_bytes * 8);
    // Per parameter, by hand: weights 4 bytes, gradients 4, Adam's m and v 8.
    const double params = m32.weights_bytes / 4;
    EXPECT_DOUBLE_EQ(m32.gradients_bytes, 4 * params);
    EXPECT_DOUBLE_EQ(m32.optimizer_bytes, 8 * params);
    // The distributed optimizer shards the 8 bytes of moments over dp.
    const Job z1 = small("fp32", {"parallel.zero=1"});
    const Memory mz = estimate(z1, cal).memory;
    EXPECT_DOUBLE_EQ(mz.optimizer_bytes, 8 * params / z1.plan.dp);
    EXPECT_DOUBLE_EQ(mz.weights_bytes, 4 * params);
    EXPECT_EQ(optimizer_state_bytes_per_param(Optimizer::adam, Precision::fp32), 8.0);
    EXPECT_EQ(grad_bytes_per_param(z1.plan, Precision::fp32), 4.0);
}

TEST(Fp32Training, ActivationsAreFourBytesAnElement) {
    // GELU MLP with dropout: every saved tensor doubles but the 1-byte
    // dropout masks (one per block: 2 x tokens x hidden, here tp 1, no SP).
    const Job j32 = small("fp32", {"parallel.tp=1", "parallel.pp=1"});
    const Job j16 = small("bf16", {"parallel.tp=1", "parallel.pp=1"});
    const LayerWork w32 = layer_work(j32.model, j32.model.kind(0), j32.training, j32.plan);
    const LayerWork w16 = layer_work(j16.model, j16.model.kind(0), j16.training, j16.plan);
    const double sbh = 2.0 * 2048 * 2048;  // micro-batch 2 x seq 2048 x hidden 2048
    EXPECT_DOUBLE_EQ(w32.activation_bytes_full, 2 * (w16.activation_bytes_full - 2 * sbh) + 2 * sbh);
    // Korthikanti et al. 2022 table 2 per layer, no TP: sbh(34 + 5as/h) at
    // 2 bytes; flash keeps no scores: 34 sbh, of which 2 sbh the masks.
    EXPECT_DOUBLE_EQ(w16.activation_bytes_full, 34 * sbh);
    EXPECT_DOUBLE_EQ(w32.activation_bytes_full, 66 * sbh);
    EXPECT_DOUBLE_EQ(w32.checkpoint_bytes, 4 * sbh);
}

TEST(Fp32Training, GemmsAndMfuUseTheTf32Peak) {
    const Calibration cal = default_calibration();
    const Gpu h100 = *find_gpu("h100-sxm");
    EXPECT_DOUBLE_EQ(h100.peak_tflops(Precision::fp32), 494.7);  // H100 whitepaper table 2, dense TF32
    EXPECT_DOUBLE_EQ(find_gpu("a100-sxm-80gb")->peak_tflops(Precision::fp32), 156.0);
    const DeviceModel d32 = make_device_model(h100, Precision::fp32, cal);
    const DeviceModel d16 = make_device_model(h100, Precision::bf16, cal);
    EXPECT_DOUBLE_EQ(d32.peak_flops, 494.7e12);
    EXPECT_DOUBLE_EQ(d32.attention_peak_flops, 494.7e12);
    EXPECT_EQ(d32.bytes_per_element, 4.0);
    EXPECT_EQ(d32.out_bytes_per_element, 4.0);
    EXPECT_DOUBLE_EQ(d32.gemm_max, d16.gemm_max);  // ASSUMPTION: the bf16 efficiency shape
    const Job j = small("fp32");
    const Estimate e = estimate(j, cal);
    const double peak = 156.0e12 * j.cluster.num_gpus;  // a100-sxm-80gb TF32
    EXPECT_NEAR(e.mfu, e.model_flops_per_step / (e.step_time_s * peak), 1e-12);
    // Twice the bytes and half the peak of bf16: slower.
    EXPECT_GT(e.step_time_s, estimate(small("bf16"), cal).step_time_s);
}

TEST(Fp32Training, RefusedWhereTheGpuHasNoTf32Figure) {
    try {
        small("fp32", {"cluster.gpu=v100-sxm2-32gb"});
        FAIL() << "fp32 on V100 accepted";
    } catch (const InputError& e) {
        EXPECT_EQ(e.key(), "training.precision");
        EXPECT_NE(std::string(e.what()).find("TF32"), std::string::npos) << e.what();
    }
    try {
        small("fp32", {"training.optimizer=adam-bf16"});
        FAIL() << "adam-bf16 with fp32 accepted";
    } catch (const InputError& e) {
        EXPECT_EQ(e.key(), "training.optimizer");
    }
}

TEST(Fp32Training, MegatronScriptWithoutBf16ImportsAsFp32AndComesBack) {
    const std::string flags =
        "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 24 --hidden-size 2048 --num-attention-heads 16 "
        "--seq-length 2048 --max-position-embeddings 2048 --micro-batch-size 2 --global-batch-size 64 "
        "--vocab-size 51200 --tensor-model-parallel-size 2";
    const ImportResult r = import_megatron(flags, "fp32.sh");
    const Job job = parse_job(r.job_yaml, "fp32.yaml", {"cluster.gpu=a100-sxm-80gb"});
    EXPECT_EQ(job.training.precision, Precision::fp32);
    // Transformer Engine's flash and fused attention refuse fp32 inputs.
    EXPECT_EQ(job.training.attention, AttentionKernel::unfused);
    const ExportResult e = export_megatron(job);
    EXPECT_EQ(e.text.find("--bf16"), std::string::npos) << e.text;
    EXPECT_EQ(e.text.find("--fp16"), std::string::npos) << e.text;
    const Job back = parse_job(import_megatron(e.text, "exported").job_yaml, "back.yaml", {"cluster.gpu=a100-sxm-80gb"});
    EXPECT_EQ(back.training.precision, Precision::fp32);
    EXPECT_EQ(back.training.attention, AttentionKernel::unfused);
    EXPECT_DOUBLE_EQ(estimate(back, default_calibration()).step_time_s,
                     estimate(job, default_calibration()).step_time_s);
}

TEST(Fp32Training, TorchtitanFloat32ComesBackWithTheTf32Assumption) {
    const std::string kTt = "torchtitan24-a100-llama3-70b-full";
    const Job tt = load_job(test::run_path(kTt), {"training.precision=fp32"});
    const ExportResult e = export_torchtitan(tt);
    EXPECT_NE(e.text.find("mixed_precision_param = \"float32\""), std::string::npos) << e.text;
    const ImportResult r = import_torchtitan(e.text, "tt.toml");
    bool assumed = false;
    for (const auto& n : r.notes) assumed = assumed || (n.kind == NoteKind::assumed && n.setting == "training.mixed_precision_param");
    EXPECT_TRUE(assumed);
    const Job back = parse_job(r.job_yaml, "tt.yaml", {test::run_cluster_override(kTt)});
    EXPECT_EQ(back.training.precision, Precision::fp32);
    EXPECT_EQ(back.plan.zero, tt.plan.zero);
    EXPECT_DOUBLE_EQ(estimate(back, default_calibration()).memory.weights_bytes,
                     estimate(tt, default_calibration()).memory.weights_bytes);
}

TEST(Fp32Training, Bf16MixedPrecisionIsALever) {
    const Calibration cal = default_calibration();
    const JobSource src{test::run_path("megatron24-h100-gpt-70b"),
                        {"training.precision=fp32", "training.attention=unfused", "parallel.recompute=selective"}};
    const Job job = load_job_source(src);
    const Estimate e = estimate(job, cal);
    bool seen = false;
    for (const Lever& l : mfu_levers(src, job, cal, e, 100)) {
        if (l.change != "bf16 mixed precision") continue;
        seen = true;
        std::vector<std::string> all = src.overrides;
        all.insert(all.end(), l.set.begin(), l.set.end());
        const Estimate after = estimate(load_job(src.path, all), cal);
        EXPECT_DOUBLE_EQ(after.step_time_s, l.step_time_s);
        EXPECT_LT(after.step_time_s, e.step_time_s);
    }
    EXPECT_TRUE(seen);
}

}  // namespace
}  // namespace lostflops
