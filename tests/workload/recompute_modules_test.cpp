// Megatron-Core's selective-recompute modules (parallel.recompute_modules):
// the activations each drops and the forward work each redoes, counted by
// hand on one-layer models (workload/layer_work.cpp), the default
// ["core_attn"] bit-identical to a job without the key, the key's errors,
// and --recompute-modules through the Megatron importer and exporter.
#include <gtest/gtest.h>

#include "cost/device_time.h"
#include "estimate/stage_time.h"
#include "lostflops/calibration.h"
#include "lostflops/error.h"
#include "lostflops/estimate.h"
#include "lostflops/interop.h"
#include "lostflops/job.h"
#include "workload/host_ops.h"
#include "workload/layer_work.h"

namespace lostflops {
namespace {

// h 256, 4 heads; MLA: q latent 64, kv latent 32, qk 32 + rope 16, v 32; dense gated MLP 512.
const std::string kMla = R"(  num_hidden_layers: 1
  hidden_size: 256
  num_attention_heads: 4
  q_lora_rank: 64
  kv_lora_rank: 32
  qk_nope_head_dim: 32
  qk_rope_head_dim: 16
  v_head_dim: 32
  intermediate_size: 512
  hidden_act: silu
  vocab_size: 1000)";

// Softmax attention, 8 experts of 128, top 2, one shared expert of 128.
const std::string kMoe = R"(  model_type: deepseek_v3
  num_hidden_layers: 1
  hidden_size: 256
  num_attention_heads: 4
  n_routed_experts: 8
  num_experts_per_tok: 2
  moe_intermediate_size: 128
  n_shared_experts: 1
  vocab_size: 1000)";

Job job_with(const std::string& model_yaml, const std::string& modules = "") {
    return parse_job("model:\n" + model_yaml +
                         "\ncluster: {gpu: h100-sxm, num_gpus: 1}\n"
                         "training: {seq_length: 1024, global_batch_size: 1, micro_batch_size: 1}\n"
                         "parallel: {recompute: selective" +
                         (modules.empty() ? "" : ", recompute_modules: " + modules) + "}\n",
                     "job.yaml");
}

LayerWork work(const Job& j) { return layer_work(j.model, j.model.kind(0), j.training, j.plan); }

double recompute_s(const Job& j) {
    const PlanContext ctx = make_plan_context(j, default_calibration());
    return layer_time(ctx, work(j), host_ops(j.model, j.training, j.plan), j.plan).bwd.recompute_s;
}

const double t = 1024, h = 256;  // tokens of a micro-batch, hidden

TEST(RecomputeModules, CoreAttnIsTodaysSelectiveBitForBit) {
    for (const std::string* m : {&kMla, &kMoe}) {
        const Job absent = job_with(*m), given = job_with(*m, "[core_attn]");
        EXPECT_EQ(work(absent).activation_bytes, work(given).activation_bytes);
        EXPECT_EQ(recompute_s(absent), recompute_s(given));
        const Estimate a = estimate(absent, default_calibration()), g = estimate(given, default_calibration());
        EXPECT_EQ(a.step_time_s, g.step_time_s);
        EXPECT_EQ(a.memory.peak_bytes, g.memory.peak_bytes);
    }
}

TEST(RecomputeModules, LayernormDropsTheSeparateNormsOutput) {
    // MLA's input norm is its own module (the dense MLP's is fused into fc1):
    // one norm output 2th dropped, one norm (read + write 2 x 2th) redone.
    const Job base = job_with(kMla), ln = job_with(kMla, "[core_attn, layernorm]");
    EXPECT_DOUBLE_EQ(work(base).activation_bytes - work(ln).activation_bytes, 2 * t * h);
    const PlanContext ctx = make_plan_context(ln, default_calibration());
    EXPECT_NEAR(recompute_s(ln) - recompute_s(base),
                memory_time_s(ctx.dev, 2 * 2 * t * h) + ctx.dev.kernel_overhead_s, 1e-15);
    // Softmax attention fuses its norm; the MoE block's pre-MLP norm is separate.
    EXPECT_DOUBLE_EQ(work(job_with(kMoe)).activation_bytes - work(job_with(kMoe, "[core_attn, layernorm]")).activation_bytes,
                     2 * t * h);
}

TEST(RecomputeModules, MlaUpProjectionDropsQKVAndRedoesTheUpGemms) {
    const Job base = job_with(kMla), up = job_with(kMla, "[core_attn, mla_up_proj]");
    // Q and K of 48 per head, V of 32, 4 heads, 2 bytes.
    EXPECT_DOUBLE_EQ(work(base).activation_bytes - work(up).activation_bytes, 2 * t * 4 * (48 + 48 + 32));
    const PlanContext ctx = make_plan_context(up, default_calibration());
    const DeviceModel& d = ctx.dev;
    const double q_up = gemm_time_s(d, t, 4 * 48, 64);           // q latent -> Q
    const double kv_up = gemm_time_s(d, t, 4 * (32 + 32), 32);   // kv latent -> K (no rope) and V
    const double rope = memory_time_s(d, 2 * t * (4 + 1) * 16 * 2);  // rotary on Q's and the shared key's rope dims
    EXPECT_NEAR(recompute_s(up) - recompute_s(base), q_up + kv_up + rope + 3 * d.kernel_overhead_s, 1e-15);
    // A model without MLA has no up projection: refused, as Megatron-Core does.
    EXPECT_THROW(job_with(kMoe, "[mla_up_proj]"), InputError);
}

TEST(RecomputeModules, MoeActDropsTheExpertsActivationOutput) {
    const Job base = job_with(kMoe), act = job_with(kMoe, "[core_attn, moe_act]");
    // fc2's input of the top-2 experts of 128: 2 x t x 256 bytes.
    EXPECT_DOUBLE_EQ(work(base).activation_bytes - work(act).activation_bytes, 2 * t * 2 * 128);
    const PlanContext ctx = make_plan_context(act, default_calibration());
    // SwiGLU reads gate and up, writes the product: 3 x 2 bytes per element.
    EXPECT_NEAR(recompute_s(act) - recompute_s(base), memory_time_s(ctx.dev, 6 * t * 2 * 128) + ctx.dev.kernel_overhead_s,
                1e-15);
}

TEST(RecomputeModules, MlpCoversDenseLayersOnly) {
    // The dense MLP's gate, up, product (6 bytes per FFN element) and its fused norm's output.
    EXPECT_DOUBLE_EQ(work(job_with(kMla)).activation_bytes - work(job_with(kMla, "[core_attn, mlp]")).activation_bytes,
                     6 * t * 512 + 2 * t * h);
    EXPECT_EQ(work(job_with(kMoe)).activation_bytes, work(job_with(kMoe, "[core_attn, mlp]")).activation_bytes);
    // The whole MoE block: expert and shared FFN tensors and the token copies
    // (the experts' fc1 inputs; Megatron-Core keeps no expert output).
    EXPECT_DOUBLE_EQ(work(job_with(kMoe)).activation_bytes - work(job_with(kMoe, "[core_attn, moe]")).activation_bytes,
                     6 * t * (2 * 128 + 128) + 2 * t * 2 * h);
}

TEST(RecomputeModules, BadListsAreInputErrors) {
    try {
        job_with(kMla, "[core_attn, mla_up_prj]");
        FAIL() << "accepted an unknown module";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("did you mean `mla_up_proj`"), std::string::npos) << e.what();
    }
    EXPECT_THROW(job_with(kMla, "[mhc]"), InputError);
    // With full recompute the list is unused and said so (Megatron reads it only with selective).
    const Job full = parse_job("model:\n" + kMla + "\ncluster: {gpu: h100-sxm, num_gpus: 1}\n"
                               "training: {seq_length: 1024, global_batch_size: 1, micro_batch_size: 1}\n"
                               "parallel: {recompute: full, recompute_modules: [layernorm]}\n", "job.yaml");
    bool warned = false;
    for (const JobWarning& w : job_warnings(full)) warned = warned || w.key == "parallel.recompute_modules";
    EXPECT_TRUE(warned);
    EXPECT_FALSE(full.plan.recomputes(RecomputeModule::layernorm));
    // An empty list recomputes nothing: today's none in time.
    EXPECT_EQ(recompute_s(job_with(kMla, "[]")), 0.0);
}

TEST(RecomputeModules, MegatronFlagRoundTrip) {
    const std::string launch =
        "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 8 --hidden-size 1024 --num-attention-heads 16 "
        "--seq-length 2048 --micro-batch-size 1 --global-batch-size 64 --vocab-size 32000 --bf16 "
        "--multi-latent-attention --q-lora-rank 256 --kv-lora-rank 128 --qk-head-dim 64 --qk-pos-emb-head-dim 32 "
        "--v-head-dim 64 --recompute-granularity selective --recompute-modules mla_up_proj layernorm mlp";
    const Job j = parse_job(import_megatron(launch, "t.sh").job_yaml, "imported", {"cluster.preset=dgx-h100"});
    EXPECT_TRUE(j.plan.recomputes(RecomputeModule::mla_up_proj));
    EXPECT_TRUE(j.plan.recomputes(RecomputeModule::layernorm));
    EXPECT_TRUE(j.plan.recomputes(RecomputeModule::mlp));
    EXPECT_FALSE(j.plan.recomputes(RecomputeModule::core_attn));
    const std::string text = export_megatron(j).text;
    EXPECT_NE(text.find("--recompute-modules layernorm mla_up_proj mlp"), std::string::npos) << text;
    const Job back = parse_job(import_megatron(text, "t.sh").job_yaml, "imported", {"cluster.preset=dgx-h100"});
    EXPECT_EQ(back.plan.recompute_modules, j.plan.recompute_modules);
    EXPECT_THROW(import_megatron(launch + " core_atn", "t.sh"), InputError);
}

}  // namespace
}  // namespace lostflops
