// A transformers step's own rates on the H200 (data/measured/h200-steps):
// its GEMMs at the step's clock (calibration hf_power_bound_gemm_fraction)
// and, under torch.compile, attention over the whole square with the boolean
// mask transformers materialises while dynamo traces (hf_attention.h
// masked_square_attention; hf_masked_attention_{fwd,bwd}_fraction), and in an
// eager step wherever a sliding window hands SDPA a mask (hf_attention.h
// hf_sdpa_attention), by hand.
#include <filesystem>
#include <fstream>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "cost/device_time.h"
#include "lostflops/calibration.h"
#include "lostflops/catalog.h"
#include "lostflops/estimate.h"
#include "lostflops/hf_attention.h"
#include "lostflops/job.h"
#include "lostflops/report.h"
#include "test_util.h"
#include "workload/layer_work.h"

namespace lostflops {
namespace {

Job llama1b(std::vector<std::string> sets = {}) { return test::h200_llama1b(4096, std::move(sets)); }

DeviceModel device(const Job& job) {
    return make_device_model(job.cluster.gpu, job.training.precision, default_calibration(), device_use(job));
}

// The 1B down projection (8,192 x 8,192 -> 2,048) takes 0.864 of its time
// under another stack: the same GEMM at the step's clock.
TEST(HfStepRates, GemmsRunAtTheStepsClock) {
    const Job hf = llama1b(), fsdp = llama1b({"training.framework=fsdp"});
    const DeviceModel a = device(hf), b = device(fsdp);
    EXPECT_DOUBLE_EQ(a.gemm_max, b.gemm_max / 0.864);
    const double t_hf = gemm_time_s(a, 8192, 2048, 8192), t_fsdp = gemm_time_s(b, 8192, 2048, 8192);
    EXPECT_NEAR(t_hf / t_fsdp, 0.864, 1e-9);
    // 2 x 8,192 x 8,192 x 2,048 = 274.9 GFLOP: the eager trace's 336 us is
    // 818 TFLOP/s (docs/trace-memory.md); priced within 10 % of it now.
    EXPECT_NEAR(t_hf, 336e-6, 33.6e-6);
    // A user's calibration cannot push a GEMM past the peak.
    Calibration cal = default_calibration();
    cal.hf_power_bound_gemm_fraction = 0.01;
    EXPECT_DOUBLE_EQ(make_device_model(hf.cluster.gpu, Precision::bf16, cal, device_use(hf)).gemm_max, 1.0);
}

TEST(HfStepRates, CompiledTransformersAttendOverTheWholeSquare) {
    const Job eager = llama1b(), compiled = llama1b({"training.compile=true"});
    // torchtitan's own model calls SDPA with is_causal under compile too.
    const Job titan = llama1b({"training.framework=fsdp", "training.compile=true"});
    const double full = 4.0 * 2 * 32 * 4096.0 * 4096 * 64;  // 274,877,906,944 forward FLOPs a layer
    EXPECT_DOUBLE_EQ(layer_work(compiled.model, compiled.training, compiled.plan).attention_flops_fwd, full);
    EXPECT_DOUBLE_EQ(layer_work(eager.model, eager.training, eager.plan).attention_flops_fwd, full / 2);
    EXPECT_DOUBLE_EQ(layer_work(titan.model, titan.training, titan.plan).attention_flops_fwd, full / 2);
    EXPECT_TRUE(masked_square_attention(compiled.model, compiled.training));
    EXPECT_FALSE(masked_square_attention(eager.model, eager.training));
    EXPECT_FALSE(masked_square_attention(titan.model, titan.training));
}

TEST(HfStepRates, MaskedAttentionRunsAtItsFractionOfTheUnmaskedCurve) {
    const Calibration& cal = default_calibration();
    const Job compiled = llama1b({"training.compile=true"});
    const DeviceModel d = device(compiled);
    const DeviceFamily& f = cal.device(compiled.cluster.gpu.arch);
    const double power = d.power_factor;
    const double fwd = attention_efficiency(f, AttentionImpl::cudnn, false, false, 64, 4096);
    const double bwd = attention_efficiency(f, AttentionImpl::cudnn, true, false, 64, 4096);
    ASSERT_GT(fwd, 0);
    ASSERT_GT(bwd, 0);
    EXPECT_DOUBLE_EQ(d.attention_fwd, fwd * power * 0.51);
    EXPECT_DOUBLE_EQ(d.attention_bwd, bwd * power * 0.58);
    // The compiled trace (data/measured/h200-steps/trace-1b-s4096-b2-
    // autocast-compiled.json.gz): cuDNN's masked kernels take 17.29 ms
    // forward and 47.59 ms backward a step of 16 layers, 4.055 ms a layer;
    // priced within 15 % of that.
    const double full = 4.0 * 2 * 32 * 4096.0 * 4096 * 64;
    const double layer_s = flash_attention_fwd_s(d, full) + flash_attention_bwd_s(d, full);
    EXPECT_NEAR(layer_s, (17.29e-3 + 47.59e-3) / 16, 0.15 * (17.29e-3 + 47.59e-3) / 16);
}

// A Mistral-shaped config.json (4 heads of 64, window `window`, `extra` keys)
// on one H200 under `framework`: 2 x 4,096 tokens, `training` keys besides.
Job windowed(const std::string& name, int window, const std::string& extra = "", const std::string& training = "",
             const std::string& framework = "hf") {
    const std::filesystem::path p = std::filesystem::temp_directory_path() / ("lostflops_hf_window_" + name + ".json");
    std::ofstream(p) << R"({"model_type": "mistral", "hidden_size": 256, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 4, "vocab_size": 1000, "intermediate_size": 688,
        "sliding_window": )" << window << extra << "}";
    return parse_job("model: {hf_config: " + p.string() +
                         "}\ncluster: {gpu: h200-sxm, num_gpus: 1}\n"
                         "training: {seq_length: 4096, micro_batch_size: 2, global_batch_size: 2, framework: " +
                         framework + training + "}\nparallel: {}\n",
                     name + ".yaml");
}

// transformers builds a (b, 1, s, s) boolean mask for a sliding window no
// longer than the sequence (masking_utils.py _ignore_causal_mask_sdpa), and
// SDPA runs the whole square with it; flash_attention_2 takes the window
// itself, and a window longer than the sequence builds no mask.
TEST(HfStepRates, EagerSdpaRunsASlidingWindowOverTheWholeSquare) {
    const double full = 4.0 * 2 * 4 * 4096.0 * 4096 * 64;      // the square: 34,359,738,368 FLOPs a layer
    const double band = 2.0 * 2 * 4 * 4096 * 128 * 896.0;      // (4096 x 1024 - 1024^2 / 2) / 4096 = 896 keys
    const auto work = [](const Job& j) { return layer_work(j.model, j.training, j.plan); };
    const Job sdpa_job = windowed("sdpa", 1024);
    const LayerWork sdpa = work(sdpa_job);
    EXPECT_TRUE(hf_sdpa_masks_windows(sdpa_job.model, sdpa_job.training));
    const std::string table = estimate_table(sdpa_job, estimate(sdpa_job, default_calibration()));
    EXPECT_NE(table.find("flash attention (SDPA: sliding windows as a masked square)"), std::string::npos) << table;
    EXPECT_DOUBLE_EQ(sdpa.attention_flops_fwd, full);
    EXPECT_DOUBLE_EQ(sdpa.attention_masked_flops_fwd, full);
    const LayerWork fa2 = work(windowed("fa2", 1024, R"(, "attn_implementation": "flash_attention_2")"));
    EXPECT_DOUBLE_EQ(fa2.attention_flops_fwd, band);
    EXPECT_DOUBLE_EQ(fa2.attention_masked_flops_fwd, 0);
    const LayerWork equal = work(windowed("equal", 4096));  // kv_length 4,096 is not below the window
    EXPECT_DOUBLE_EQ(equal.attention_masked_flops_fwd, full);
    const Job longer_job = windowed("longer", 4097);
    EXPECT_FALSE(hf_sdpa_masks_windows(longer_job.model, longer_job.training));
    const LayerWork longer = work(longer_job);
    EXPECT_DOUBLE_EQ(longer.attention_flops_fwd, full / 2);
    EXPECT_DOUBLE_EQ(longer.attention_masked_flops_fwd, 0);
    // Another stack's SDPA takes the window (torchtitan, Megatron: a flash kernel).
    const LayerWork fsdp = work(windowed("fsdp", 1024, "", "", "fsdp"));
    EXPECT_DOUBLE_EQ(fsdp.attention_flops_fwd, band);
    // Compiled: every layer's rates are the masked ones; the windowed square
    // is not masked twice.
    const LayerWork compiled = work(windowed("compiled", 1024, "", ", compile: true"));
    EXPECT_DOUBLE_EQ(compiled.attention_flops_fwd, full);
    EXPECT_DOUBLE_EQ(compiled.attention_masked_flops_fwd, 0);
    // Compiled with flash_attention_2 named: no square mask (flash_attention_mask), the band.
    const Job fa2_compiled = windowed("fa2c", 1024, R"(, "attn_implementation": "flash_attention_2")", ", compile: true");
    EXPECT_FALSE(masked_square_attention(fa2_compiled.model, fa2_compiled.training));
    EXPECT_DOUBLE_EQ(work(fa2_compiled).attention_flops_fwd, band);
    // Gemma 3's pattern: the windowed layer is masked, the full one keeps is_causal.
    const std::filesystem::path g = std::filesystem::temp_directory_path() / "lostflops_hf_window_gemma3.json";
    std::ofstream(g) << R"({"model_type": "gemma3_text", "hidden_size": 256, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 4, "head_dim": 64, "vocab_size": 1000,
        "intermediate_size": 688, "sliding_window": 1024, "sliding_window_pattern": 2})";
    const Job gemma = parse_job("model: {hf_config: " + g.string() +
                                    "}\ncluster: {gpu: h200-sxm, num_gpus: 1}\ntraining: {seq_length: 4096, "
                                    "micro_batch_size: 2, global_batch_size: 2, framework: hf}\nparallel: {}\n",
                                "gemma3.yaml");
    ASSERT_EQ(gemma.model.kinds().size(), 2u);
    for (const LayerKind& k : gemma.model.kinds()) {
        const LayerWork lw = layer_work(gemma.model, k, gemma.training, gemma.plan);
        EXPECT_DOUBLE_EQ(lw.attention_masked_flops_fwd, k.attention.window > 0 ? full : 0.0);
        EXPECT_DOUBLE_EQ(lw.attention_flops_fwd, k.attention.window > 0 ? full : full / 2);
    }

    // The masked square's rates: the non-causal cuDNN curve at head dim 64,
    // 4,096 keys, times 0.51 forward and 0.58 backward and the power factor.
    const Job eager = windowed("rates", 1024);
    const DeviceModel d = device(eager);
    const Calibration cal = default_calibration();  // by value: the family below refers into it
    const DeviceFamily& f = cal.device(eager.cluster.gpu.arch);
    const double fwd = attention_efficiency(f, AttentionImpl::cudnn, false, false, 64, 4096);
    const double bwd = attention_efficiency(f, AttentionImpl::cudnn, true, false, 64, 4096);
    EXPECT_DOUBLE_EQ(d.attention_masked_fwd, fwd * d.power_factor * 0.51);
    EXPECT_DOUBLE_EQ(d.attention_masked_bwd, bwd * d.power_factor * 0.58);
    const double peak = d.attention_peak_flops;
    EXPECT_DOUBLE_EQ(flash_attention_fwd_s(d, full, full), full / (peak * d.attention_masked_fwd));
    EXPECT_DOUBLE_EQ(flash_attention_bwd_s(d, full, full), 2.5 * full / (peak * d.attention_masked_bwd));
    // Half masked: each half at its own rate.
    EXPECT_DOUBLE_EQ(flash_attention_fwd_s(d, full, full / 2),
                     full / 2 / (peak * d.attention_fwd) + full / 2 / (peak * d.attention_masked_fwd));
}

}  // namespace
}  // namespace lostflops
