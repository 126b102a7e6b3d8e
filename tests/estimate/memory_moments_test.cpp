// The moments' verdict and what reads it: reserved is the most over the
// step (the allocator gives nothing back), the report's memory over the step
// peaks at estimate's allocated bytes, the search prices a Hugging Face job
// and a MaxText remat policy as estimate does and proposes only plans the
// framework launches, optimizer_kernel's default follows the framework,
// and what framework hf cannot model is refused by name.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "estimate/memory.h"
#include "explain/report_data.h"
#include "lostflops/calibration.h"
#include "lostflops/error.h"
#include "lostflops/estimate.h"
#include "lostflops/framework_rules.h"
#include "lostflops/job.h"
#include "lostflops/search.h"
#include "test_util.h"
#include "workload/layer_work.h"

namespace lostflops {
namespace {

// Llama-3.2-1B's shape on one H200 under framework hf (the H200 table's).
std::string hf_job(const std::string& plan, int gpus = 1, int global = 2) {
    return R"(name: hf
model: {model_type: llama, num_hidden_layers: 16, hidden_size: 2048, intermediate_size: 8192,
        num_attention_heads: 32, num_key_value_heads: 8, vocab_size: 128256, hidden_act: silu,
        tie_word_embeddings: true}
cluster: {gpu: h200-sxm, num_gpus: )" +
           std::to_string(gpus) + R"(, gpus_per_node: 8}
training: {seq_length: 2048, micro_batch_size: 2, global_batch_size: )" +
           std::to_string(global) + R"(, precision: bf16, framework: hf}
parallel: )" + plan + "\n";
}

TEST(MemoryMoments, ReservedIsTheMostOverTheStep) {
    const Calibration cal = default_calibration();
    // FSDP2 on one rank, full recompute: the first backward holds the
    // freed sharded gradients' pool; a foreach optimizer adds a temporary
    // at its step. Adding memory never lowers what is reserved.
    const std::string plan = "{zero: 3, recompute: full}";
    const Memory fused = estimate(parse_job(hf_job(plan), "j.yaml", {"training.optimizer_kernel=fused"}), cal).memory;
    const Memory each = estimate(parse_job(hf_job(plan), "j.yaml", {"training.optimizer_kernel=foreach"}), cal).memory;
    EXPECT_GE(each.allocated_bytes, fused.allocated_bytes);
    EXPECT_GE(each.reserved_bytes, fused.reserved_bytes);
    EXPECT_GE(each.reserved_bytes, each.allocated_bytes);
    EXPECT_DOUBLE_EQ(each.peak_bytes, each.weights_bytes + each.gradients_bytes + each.optimizer_bytes +
                                          each.activations_bytes + each.logits_bytes + each.buffers_bytes +
                                          each.weight_copies_bytes + each.temporary_bytes);
}

TEST(MemoryMoments, OptimizerKernelFollowsTheFramework) {
    const std::string plan = "{zero: 0}";
    EXPECT_EQ(parse_job(hf_job(plan), "j.yaml").training.optimizer_kernel, OptimizerKernel::foreach);
    // torchtitan asks for fused (config/job_config.py), given or found from the source.
    EXPECT_EQ(parse_job(hf_job(plan), "j.yaml", {"training.framework=fsdp"}).training.optimizer_kernel,
              OptimizerKernel::fused);
    EXPECT_EQ(parse_job("source: torchtitan benchmarks\n" + hf_job(plan), "j.yaml", {"training.framework=auto"})
                  .training.optimizer_kernel,
              OptimizerKernel::fused);
    EXPECT_EQ(parse_job(hf_job(plan), "j.yaml", {"training.optimizer_kernel=fused"}).training.optimizer_kernel,
              OptimizerKernel::fused);
    EXPECT_EQ(parse_job(hf_job(plan), "j.yaml", {"training.framework=megatron-core"}).training.optimizer_kernel,
              OptimizerKernel::fused);
}

TEST(MemoryMoments, HfRefusesWhatItsLedgerDoesNotHold) {
    const std::string plan = "{zero: 0}";
    EXPECT_THROW(parse_job(hf_job(plan), "j.yaml", {"training.precision=fp8"}), InputError);
    EXPECT_THROW(parse_job(hf_job(plan), "j.yaml", {"training.optimizer=adam-bf16"}), InputError);
    const std::string mamba = R"(name: m
model: {model_type: nemotron_h, num_hidden_layers: 2, hybrid_override_pattern: "M-", hidden_size: 1024,
        num_attention_heads: 8, num_key_value_heads: 8, head_dim: 128, intermediate_size: 4096,
        mlp_hidden_act: relu2, mamba_num_heads: 16, mamba_head_dim: 64, ssm_state_size: 128, n_groups: 1,
        conv_kernel: 4, vocab_size: 1000}
cluster: {gpu: h200-sxm, num_gpus: 1, gpus_per_node: 8}
training: {seq_length: 1024, global_batch_size: 1, framework: hf}
parallel: {}
)";
    try {
        parse_job(mamba, "m.yaml");
        ADD_FAILURE() << "a Mamba-2 model under hf was accepted";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("training.framework"), std::string::npos) << e.what();
    }
}

// The report's memory over the step peaks where estimate says: the worst
// rank's curve reaches estimate's allocated bytes (default job, zero-bubble,
// DualPipeV, a Hugging Face step of four micro-batches, FSDP2 with a foreach
// optimizer whose step is the peak).
TEST(MemoryOverStep, TheCurvePeaksAtEstimatesAllocated) {
    const Calibration cal = default_calibration();
    const std::vector<std::pair<Job, std::string>> jobs = {
        {default_job(), "default"},
        {default_job({"parallel.pipeline_schedule=zero-bubble", "parallel.vpp=1"}), "zero-bubble"},
        {default_job({"parallel.pipeline_schedule=dualpipev", "parallel.vpp=2"}), "dualpipev"},
        {parse_job(hf_job("{zero: 0}", 1, 8), "j.yaml"), "hf, 4 micro-batches"},
        {parse_job(hf_job("{zero: 3, recompute: full}"), "j.yaml", {"training.seq_length=1024"}), "hf fsdp2 foreach"}};
    for (const auto& [job, name] : jobs) {
        SCOPED_TRACE(name);
        const Estimate e = estimate(job, cal);
        const StepTimeline tl = step_timeline(job, cal, e);
        const std::vector<MemoryCurve> curves = memory_over_step(job, cal, tl);
        ASSERT_EQ(curves.size(), static_cast<size_t>(job.plan.pp));
        double peak = 0;
        for (const MemoryCurve& c : curves) {
            peak = std::max(peak, c.peak_bytes);
            for (const auto& [t, v] : c.points) EXPECT_GE(v, 0) << "rank " << c.rank << " at " << t;
        }
        EXPECT_NEAR(peak, e.memory.allocated_bytes, 1e-6 * e.memory.allocated_bytes);
    }
}

// A Hugging Face job on 8 GPUs: every plan the search ranks launches under
// hf (data parallelism only, recompute none or full) and has estimate's peak.
TEST(MemoryMoments, SearchOfAnHfJobRanksOnlyItsPlansAtEstimatesPeak) {
    const Calibration cal = default_calibration();
    const SearchJob sj = parse_search_job(hf_job("{zero: 3}", 8, 64), "j.yaml", {}, SearchJobPlan::fixed_where_given);
    SearchOptions o;
    o.fix = plan_fix_from(sj);
    o.threads = 1;
    const SearchResult r = search_plans(sj.job, cal, o);
    ASSERT_FALSE(r.ranked.empty());
    for (const RankedPlan& p : r.ranked) {
        const PlanScore s = plan_score(sj.job, r, p);
        const Job j = job_with_plan(sj.job, s);
        EXPECT_TRUE(rule_breaks(j).empty()) << plan_words(s);
        EXPECT_NE(j.plan.recompute, Recompute::selective) << plan_words(s);
        EXPECT_EQ(estimate(j, cal).memory.peak_bytes, s.peak_bytes) << plan_words(s);
    }
}

// MaxText's named remat policy under selective recompute: the layer's
// input and the named outputs; under another mode it is ignored (and
// warned), as the search frees the mode.
TEST(RematPolicy, SaveDotExceptMlpwiKeepsQkvOutAndMlpwo) {
    const Job j = load_job(test::source_path("data/published/maxtext/runs/maxtext-llama2-70b-v5p-128.yaml"));
    ASSERT_EQ(j.plan.remat_policy, RematPolicy::save_dot_except_mlpwi);
    const LayerWork w = layer_work(j.model, j.training, j.plan);
    // Llama 2 70B: h 8192, 64 heads and 8 KV heads of 128; 2 x 4096 tokens a
    // chip, bf16, no tensor parallelism: input, q, k, v, out_proj, mlpwo.
    const double tokens = 2 * 4096.0;
    EXPECT_DOUBLE_EQ(w.activation_bytes, 2 * tokens * (8192 + (8192 + 2 * 1024) + 8192 + 8192));
    const Job none = load_job(test::source_path("data/published/maxtext/runs/maxtext-llama2-70b-v5p-128.yaml"),
                              {"parallel.recompute=none"});
    const LayerWork wn = layer_work(none.model, none.training, none.plan);
    EXPECT_DOUBLE_EQ(wn.activation_bytes, wn.activation_bytes_full);
    // Offloaded activations keep each layer's input only.
    const Job off = load_job(test::source_path("data/published/maxtext/runs/maxtext2403-v5e-128b-1x-v5e-256.yaml"));
    ASSERT_TRUE(off.plan.offload_activations);
    const LayerWork wo = layer_work(off.model, off.training, off.plan);
    EXPECT_DOUBLE_EQ(wo.activation_bytes, wo.checkpoint_bytes);
}

}  // namespace
}  // namespace lostflops
