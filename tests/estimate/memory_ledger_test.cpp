// The memory ledger and its moments: a Hugging Face layer's saved tensors
// against the H200 allocator trace (hand-counted), the moments of the step
// (first backward, end of backward, optimizer step), the verdict's terms
// (allocated, reserved, usable, margin), and the measured peaks of
// ../shared/reference/h200/ (skipped when absent).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "estimate/memory.h"
#include "lostflops/calibration.h"
#include "lostflops/estimate.h"
#include "lostflops/job.h"
#include "lostflops/validate.h"
#include "test_util.h"
#include "workload/eager_ledger.h"
#include "workload/layer_work.h"

namespace lostflops {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

// Llama-3.2-1B's shape (h 2048, 32 heads of 64, 8 KV heads, SwiGLU 8192,
// vocabulary 128256, tied), 2 x 4096 tokens on one H200, as the H200 table's
// job files write it.
std::string llama1b_yaml(const std::string& recipe_zero, const std::string& recompute, int global = 2) {
    return R"(name: llama1b
model: {model_type: llama, num_hidden_layers: 16, hidden_size: 2048, intermediate_size: 8192,
        num_attention_heads: 32, num_key_value_heads: 8, vocab_size: 128256, hidden_act: silu,
        tie_word_embeddings: true}
cluster: {gpu: h200-sxm, num_gpus: 1, gpus_per_node: 1}
training: {seq_length: 4096, micro_batch_size: 2, global_batch_size: )" +
           std::to_string(global) + R"(, precision: bf16, framework: hf}
parallel: {tp: 1, pp: 1, zero: )" + recipe_zero + ", recompute: " + recompute + "}\n";
}

Job llama1b(const std::string& zero, const std::string& recompute, int global = 2,
            const std::vector<std::string>& sets = {}) {
    return parse_job(llama1b_yaml(zero, recompute, global), "llama1b.yaml", sets);
}

TEST(EagerLedger, LlamaLayerUnderAutocastIsTheTracesCount) {
    const Job j = llama1b("0", "none");
    const EagerLayerLedger l = eager_layer_ledger(j.model, j.model.kind(0), j.training, j.plan);
    // Per token: two fp32 norms (x and the normalised x, 8h each), the q, k,
    // v and gate, up projections' own bf16 casts (5 x 2h), SDPA's q (2q),
    // k and v (4kv), output (2q) and fp32 log-sum-exp (4 x 32 heads), and
    // SwiGLU's gate, SiLU, up and product (8f):
    // 26h + 4q + 4kv + 4a + 8f with h = q = 2048, kv = 512, f = 8192.
    const double by_hand = 26 * 2048.0 + 4 * 2048 + 4 * 512 + 4 * 32 + 8 * 8192;
    EXPECT_DOUBLE_EQ(by_hand, 129152);  // 1,009 MiB per layer at 8,192 tokens, as the allocator trace holds
    EXPECT_DOUBLE_EQ(l.total(), by_hand);
    EXPECT_DOUBLE_EQ(l.input_bytes_per_token, 4 * 2048.0);  // the fp32 residual a checkpoint keeps
    const LayerWork w = layer_work(j.model, j.training, j.plan);
    EXPECT_DOUBLE_EQ(w.activation_bytes, by_hand * 8192);
    EXPECT_DOUBLE_EQ(w.weight_copy_bytes, 2 * w.params);  // autocast's cached bf16 weights
}

TEST(EagerLedger, Fsdp2LayerIsBf16WithFp32NormUpcasts) {
    const Job j = llama1b("3", "none");
    const EagerLayerLedger l = eager_layer_ledger(j.model, j.model.kind(0), j.training, j.plan);
    // Norms: the fp32 upcast (4h) and the normalised bf16 copy (2h), the
    // output saved once by the projections (2h): 8h a block; attention and
    // MLP as under autocast: 16h + 4q + 4kv + 4a + 8f.
    EXPECT_DOUBLE_EQ(l.total(), 16 * 2048.0 + 4 * 2048 + 4 * 512 + 4 * 32 + 8 * 8192);
    EXPECT_DOUBLE_EQ(l.input_bytes_per_token, 2 * 2048.0);
    EXPECT_DOUBLE_EQ(layer_work(j.model, j.training, j.plan).weight_copy_bytes, 0);
}

TEST(EagerLedger, CompiledLayerKeepsWhatTheMinCutSaves) {
    const Job j = llama1b("0", "none", 2, {"training.compile=true"});
    const EagerLayerLedger l = eager_layer_ledger(j.model, j.model.kind(0), j.training, j.plan);
    // The fp32 residual in (4h), the output projection's output (2h), SDPA's
    // q, k, v, output and log-sum-exp (4q + 4kv + 4 x 32), gate and up (4f).
    EXPECT_DOUBLE_EQ(l.total(), 6 * 2048.0 + 4 * 2048 + 4 * 512 + 4 * 32 + 4 * 8192);
    EXPECT_DOUBLE_EQ(l.total(), 55424);
    // Autocast's weight casts are recomputed in backward: no cached copies.
    EXPECT_DOUBLE_EQ(layer_work(j.model, j.training, j.plan).weight_copy_bytes, 0);
    EXPECT_DOUBLE_EQ(head_work(j.model, j.training, j.plan).head_weight_copy_bytes, 0);
}

// A window SDPA is handed as a boolean (b, 1, s, s) band: SDPA makes an
// additive mask of the query's dtype from it on every call, and the
// kernel's backward keeps it: s elements per token on each windowed layer.
TEST(EagerLedger, SdpaKeepsTheAdditiveMaskOfAWindowBand) {
    const auto ledger = [](int window, const std::string& training, const std::string& config = "") {
        const Job j = parse_job(
            "model: {model_type: mistral, num_hidden_layers: 2, hidden_size: 256, intermediate_size: 688, "
            "num_attention_heads: 4, num_key_value_heads: 4, vocab_size: 1000, sliding_window: " +
                std::to_string(window) + config +
                "}\ncluster: {gpu: h200-sxm, num_gpus: 1}\ntraining: {seq_length: 4096, micro_batch_size: 2, "
                "global_batch_size: 2, framework: hf" + training + "}\nparallel: {}\n",
            "window.yaml");
        return eager_layer_ledger(j.model, j.model.kind(0), j.training, j.plan);
    };
    const auto named = [](const EagerLayerLedger& l, const std::string& what) {
        for (int i = 0; i < l.count; ++i)
            if (what == l.entries[static_cast<size_t>(i)].what) return l.entries[static_cast<size_t>(i)].bytes_per_token;
        return 0.0;
    };
    const std::string mask = "SDPA's additive window mask (b, 1, s, s)";
    // Window 1,024 of 4,096 tokens: a band, a bf16 bias (autocast casts the query) of 4,096 keys a token.
    const EagerLayerLedger band = ledger(1024, "");
    const EagerLayerLedger none = ledger(8192, "");  // longer than the sequence: is_causal, no mask
    EXPECT_DOUBLE_EQ(named(band, mask), 2 * 4096.0);
    EXPECT_DOUBLE_EQ(band.total() - none.total(), 2 * 4096.0);
    EXPECT_DOUBLE_EQ(named(none, mask), 0);
    // fp32 training: the query, and so the bias, are fp32.
    EXPECT_DOUBLE_EQ(named(ledger(1024, ", precision: fp32"), mask), 4 * 4096.0);
    // flash_attention_2 takes the window itself; compiled, the min-cut's ledger has no such entry.
    EXPECT_DOUBLE_EQ(named(ledger(1024, "", ", attn_implementation: flash_attention_2"), mask), 0);
    EXPECT_DOUBLE_EQ(named(ledger(1024, ", compile: true"), mask), 0);
}

TEST(EagerLedger, TheLossBackwardHoldsThreeFp32Logits) {
    const Job j = llama1b("0", "none");
    const HeadWork hw = head_work(j.model, j.training, j.plan);
    EXPECT_DOUBLE_EQ(hw.logits_memory_bytes, 8192.0 * 128256 * 12);
    EXPECT_DOUBLE_EQ(hw.head_weight_copy_bytes, 2.0 * 128256 * 2048);  // the output layer's bf16 cast
    // The final norm (8h) and the output layer's bf16 input (2h).
    EXPECT_DOUBLE_EQ(hw.head_saved_bytes, 8192.0 * 10 * 2048);
}

TEST(MemoryMoments, AutocastPeaksAtTheLossWithEveryCopyAndNoGradient) {
    const Calibration cal = default_calibration();
    const Estimate e = estimate(llama1b("0", "none"), cal);
    const Memory& m = e.memory;
    EXPECT_EQ(m.moment, MemoryMoment::first_backward);
    EXPECT_NEAR(e.params_total, 1235814400, 1e3);  // Llama-3.2-1B, tied
    const double params = m.weights_bytes / 4;     // the stage's (the final norm's 2,048 aside)
    EXPECT_NEAR(params, 1235814400, 4096);
    EXPECT_DOUBLE_EQ(m.weights_bytes, 4 * params);
    EXPECT_DOUBLE_EQ(m.optimizer_bytes, 8 * params);
    EXPECT_DOUBLE_EQ(m.gradients_bytes, 0);  // one micro-batch: zero_grad(set_to_none) freed them
    EXPECT_DOUBLE_EQ(m.allocated_bytes, m.weights_bytes + m.optimizer_bytes + m.activations_bytes + m.logits_bytes +
                                            m.weight_copies_bytes + cal.workspace_bytes);
    // What the H200 trace recorded: 43.84 GiB (allocated at the peak).
    EXPECT_NEAR(m.allocated_bytes / kGiB, 43.84, 0.05);
    // Two micro-batches: the first one's gradients are alive at the second's loss.
    const Estimate e2 = estimate(llama1b("0", "none", 4), cal);
    EXPECT_DOUBLE_EQ(e2.memory.gradients_bytes, 4 * params);
    EXPECT_EQ(e2.memory.moment_micro_batch, 1);
}

TEST(MemoryMoments, ForeachOptimizerStepCanBeThePeak) {
    const Calibration cal = default_calibration();
    // Full recompute under FSDP2 on one rank with foreach AdamW: 4 (fp32
    // shard) + 4 (fp32 gradient) + 8 (m, v) + 4 (the foreach temporary) per
    // parameter at the step, above the loss's buffers.
    const Job j = llama1b("3", "full", 2, {"training.optimizer_kernel=foreach", "training.seq_length=1024"});
    const Memory m = estimate(j, cal).memory;
    EXPECT_EQ(m.moment, MemoryMoment::optimizer_step);
    const double params = m.weights_bytes / 4;
    EXPECT_DOUBLE_EQ(m.temporary_bytes, 4 * params);
    EXPECT_NEAR(m.allocated_bytes, 20 * params + cal.workspace_bytes, 1);
    EXPECT_DOUBLE_EQ(m.activations_bytes, 0);
    // Fused: no temporary; the most allocated is the last layer's backward,
    // every gradient and one recomputed layer (above the loss's 2,048 x
    // 128,256 x 12 B); the most reserved the first backward's, when the
    // freed sharded gradients of the last step stay in FSDP2's pool.
    const Memory f = estimate(llama1b("3", "full", 2, {"training.optimizer_kernel=fused", "training.seq_length=1024"}),
                              cal).memory;
    EXPECT_EQ(f.moment, MemoryMoment::first_backward);
    EXPECT_DOUBLE_EQ(f.temporary_bytes, 0);
    EXPECT_GT(f.allocated_bytes, 16 * params);
    EXPECT_LT(f.allocated_bytes, m.allocated_bytes);
}

TEST(MemoryVerdict, UsableIsTheDriversTotalLessTheContext) {
    const Calibration cal = default_calibration();
    const Memory m = estimate(llama1b("0", "none"), cal).memory;
    // H200: the driver's 150,109,880,320 B (139.80 GiB) less the CUDA context
    // and the allocator's last block (0.5913e9 B): within 0.01 GiB of the
    // 149,518,548,992 B the caching allocator could take in 256 MiB blocks.
    EXPECT_NEAR(m.usable_bytes, 149518548992.0, 0.01 * kGiB);
    EXPECT_DOUBLE_EQ(m.capacity_bytes, m.usable_bytes);
    EXPECT_DOUBLE_EQ(m.margin_bytes, m.usable_bytes - m.reserved_bytes);
    EXPECT_DOUBLE_EQ(m.peak_bytes, m.reserved_bytes);
    EXPECT_GE(m.reserved_bytes, m.allocated_bytes);
    EXPECT_TRUE(m.fits);
}

// Every row of the H200 table with a measured peak: the prediction of max
// allocated within 5 %, the out-of-memory row "does not fit".
TEST(H200Memory, MeasuredPeaksWithinFivePercent) {
    const std::string table = test::source_path("../shared/reference/h200/measured-runs.csv");
    if (!std::filesystem::exists(table)) GTEST_SKIP() << "../shared/reference/h200 absent";
    const MemoryValidation v = validate_memory(load_run_table(table), default_calibration());
    int rows = 0;
    for (const MemoryValidationRow& r : v.rows) {
        SCOPED_TRACE(r.name);
        if (r.measured_oom) {
            EXPECT_FALSE(r.predicted_fits);
            continue;
        }
        ++rows;
        EXPECT_TRUE(r.predicted_fits);
        EXPECT_LT(std::fabs(r.error_pct), 5.0);
    }
    EXPECT_GE(rows, 15);
    EXPECT_EQ(v.oom_rows, 1);
    EXPECT_EQ(v.oom_predicted, 1);
}

// Every run of every table that ran is predicted to fit: the project's
// tables always, the shared ones when ../shared is here.
TEST(MemoryLedger, EveryPublishedRunFits) {
    const char* tables[] = {"data/published/published-runs.csv",
                            "data/published/modern/published-runs.csv",
                            "data/published/modern/measured-memory.csv",
                            "data/published/maxtext/published-runs.csv",
                            "data/measured/vtrain-train/measured-runs.csv",
                            "../shared/reference/published-runs.csv",
                            "../shared/reference/modern/published-runs.csv",
                            "../shared/reference/modern/measured-memory.csv",
                            "../shared/reference/vtrain-train/measured-runs.csv",
                            "../shared/reference/h200/measured-runs.csv"};
    const Calibration cal = default_calibration();
    int read = 0;
    for (const char* t : tables) {
        const std::string path = test::source_path(t);
        if (std::string(t).rfind("../", 0) == 0 && !std::filesystem::exists(path)) continue;
        SCOPED_TRACE(t);
        const MemoryValidation v = validate_memory(load_run_table(path), cal);
        for (const MemoryValidationRow& r : v.rows) {
            if (!r.measured_oom) {
                EXPECT_TRUE(r.predicted_fits) << r.name;
            }
        }
        EXPECT_EQ(v.ran_but_does_not_fit, 0);
        ++read;
    }
    EXPECT_GE(read, 5);
}

// The DeepSeek-V3 example, as its technical report trains it (recomputed
// norms and MLA up-projections, cached SwiGLU inputs, BF16 Adam moments,
// DualPipe's PP + 1 stages in flight): fits on 80 GB H800s.
TEST(MemoryLedger, DeepSeekV3ExampleFits) {
    const Job j = load_job(test::source_path("examples/deepseek-v3-2048xh800-goodput.yaml"));
    const Memory m = estimate(j, default_calibration()).memory;
    EXPECT_TRUE(m.fits);
    EXPECT_GT(m.margin_bytes, 0);
    EXPECT_EQ(m.inflight_microbatches, 8.5);  // 17 chunk passes of 4 layers over the rank's 8
    // Without the report's recipe (the default modules, fp32 moments) it does not.
    const Job plain = load_job(test::source_path("examples/deepseek-v3-2048xh800-goodput.yaml"),
                               {"parallel.recompute_modules=[core_attn]", "training.optimizer=adam"});
    EXPECT_FALSE(estimate(plain, default_calibration()).memory.fits);
}

}  // namespace
}  // namespace lostflops
