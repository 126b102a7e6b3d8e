// ZeRO-3 / FSDP traffic counted per layer and bucket, NCCL's ring latency
// growing with the ring, what prefetch hides, the live-parameter cap, and
// Megatron-LM's in-flight micro-batches — each against hand-computed values.
#include <gtest/gtest.h>

#include "cost/collective_time.h"
#include "estimate/inflight.h"
#include "estimate/memory.h"
#include "estimate/stage_time.h"
#include "estimate/zero3_time.h"
#include "lostflops/calibration.h"
#include "lostflops/job.h"
#include "lostflops/report.h"
#include "test_util.h"
#include "workload/layer_work.h"

namespace lostflops {
namespace {

// The small job (24 layers, h 2048, 16 heads, ffn 8192, GeLU, tied vocab
// 51200) as pure ZeRO-3 over 16 GPUs on two 8-GPU nodes, one micro-batch.
Job zero3_job(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> sets = {"parallel.tp=1", "parallel.pp=1", "parallel.zero=3",
                                     "training.global_batch_size=32", "training.framework=fsdp"};
    sets.insert(sets.end(), extra.begin(), extra.end());
    return parse_job(test::small_job_text(), "zero3.yaml", sets);
}

// Layer weights of the small model: attention 4h^2, MLP 2*h*4h, two norms 2h.
constexpr double kH = 2048;
constexpr double kLayerParams = 4 * kH * kH + 2 * kH * 4 * kH + 2 * kH;  // 50,335,744
constexpr double kUs = 1e-6;

Cluster two_level(double nvlink_GBps, double network_GBps) {
    Cluster c;
    c.gpus_per_node = 8;
    c.intra_node = Link{nvlink_GBps, 2};
    c.inter_node = Link{network_GBps, 5};
    return c;
}

TEST(Zero3Latency, RingAllGatherGrowsLinearlyWithNodes) {
    const Calibration cal = default_calibration();
    const CommModel cm = make_comm_model(two_level(300, 25), cal);
    // 8 GPUs per node, N nodes: (8N - N) NVLink hops + (N - 1) network hops.
    double previous = 0;
    for (int nodes : {2, 4, 8, 16, 32, 64}) {
        const GroupPlacement g = place_group(8 * nodes, 1, 8);
        ASSERT_EQ(g.nodes, nodes);
        const double expect = (cal.collective_launch_us + 7.0 * nodes * 2 + (nodes - 1) * 5.0) * kUs;
        EXPECT_NEAR(collective_latency_s(cm, Collective::all_gather, g), expect, 1e-12) << nodes;
        EXPECT_NEAR(collective_latency_s(cm, Collective::reduce_scatter, g), expect, 1e-12) << nodes;
        if (previous > 0) { EXPECT_NEAR(expect - previous, nodes / 2 * 19 * kUs, 1e-12); }  // 7*2 + 5 us per node
        previous = expect;
    }
    // One member per node (tp = 8): every step crosses the network.
    EXPECT_NEAR(collective_latency_s(cm, Collective::all_gather, place_group(64, 8, 8)),
                (cal.collective_launch_us + 63 * 5.0) * kUs, 1e-12);
}

TEST(Zero3Latency, AllReduceTakesTheTreeAtScale) {
    const Calibration cal = default_calibration();
    const CommModel cm = make_comm_model(two_level(300, 25), cal);
    // 16 nodes, one member each: ring 2*15*5 = 150 us, tree 2*log2(16)*5 = 40 us.
    EXPECT_NEAR(collective_latency_s(cm, Collective::all_reduce, place_group(16, 8, 8)),
                (cal.collective_launch_us + 40) * kUs, 1e-12);
    // Two nodes of 8: ring 2*(14*2 + 5) = 66 us, tree 2*(7*2 + 1*5) = 38 us.
    EXPECT_NEAR(collective_latency_s(cm, Collective::all_reduce, place_group(16, 1, 8)),
                (cal.collective_launch_us + 38) * kUs, 1e-12);
    // The latency is the formula's whole non-bandwidth part.
    const GroupPlacement g = place_group(16, 1, 8);
    const double bw = 2 * (7.0 / 8 * 1e8 / (300e9 * cal.bus_eff_intra) + 0.5 * (1e8 / 8) / (25e9 * cal.bus_eff_inter));
    EXPECT_NEAR(collective_time_s(cm, Collective::all_reduce, g, 1e8), bw + (cal.collective_launch_us + 38) * kUs, 1e-12);
}

// Bandwidth term of an all-gather / reduce-scatter of `bytes` over the 16
// GPUs of zero3_job (8 per node on NVLink 300 GB/s, 2 nodes on 25 GB/s).
double ag_bandwidth_s(const Calibration& cal, double bytes) {
    return 7.0 / 8 * bytes / (300e9 * cal.bus_eff_intra) + 0.5 * (bytes / 8) / (25e9 * cal.bus_eff_inter);
}
// Launch + 14 NVLink hops of 2 us + 1 network hop of 5 us.
double ag_latency_s(const Calibration& cal) { return (cal.collective_launch_us + 14 * 2 + 5) * kUs; }

TEST(Zero3Collectives, FsdpGathersEachLayerOnce) {
    const Job job = zero3_job();
    const Calibration cal = default_calibration();
    const PlanContext ctx = make_plan_context(job, cal);
    const LayerWork lw = layer_work(job.model, job.training, job.plan);
    ASSERT_DOUBLE_EQ(lw.params, kLayerParams);
    const Zero3Engine e = zero3_engine(job);
    EXPECT_EQ(e.bucket_params, 0);
    EXPECT_EQ(e.prefetch, 1);
    EXPECT_FALSE(e.regather_recompute);
    EXPECT_EQ(e.max_live_params, 0);
    const Zero3Collectives c = zero3_layer_collectives(job, ctx, e, lw);
    EXPECT_DOUBLE_EQ(c.gathers, 1);
    EXPECT_DOUBLE_EQ(c.reduce_scatters, 1);
    EXPECT_NEAR(c.gather_s, ag_bandwidth_s(cal, 2 * kLayerParams) + ag_latency_s(cal), 1e-12);
    const double gb = grad_bytes_per_param(job.plan, job.training.precision);
    EXPECT_NEAR(c.reduce_scatter_s, ag_bandwidth_s(cal, gb * kLayerParams) + ag_latency_s(cal), 1e-12);
}

TEST(Zero3Collectives, DeepSpeedGathersPerBucket) {
    const Calibration cal = default_calibration();
    // Defaults from deepspeed/runtime/zero/config.py.
    const Job ds = zero3_job({"training.framework=deepspeed"});
    const Zero3Engine e = zero3_engine(ds);
    EXPECT_EQ(e.bucket_params, 5e7);
    EXPECT_EQ(e.reduce_bucket_params, 5e8);
    EXPECT_EQ(e.max_live_params, 1e9);
    const PlanContext ctx = make_plan_context(ds, cal);
    const LayerWork lw = layer_work(ds.model, ds.training, ds.plan);
    // 2e7-element buckets: 50,335,744 / 2e7 = 2.517 gathers per layer, each
    // paying the 48 us latency; the bandwidth term is unchanged.
    Zero3Engine b = e;
    b.bucket_params = 2e7;
    Zero3Collectives c = zero3_layer_collectives(ds, ctx, b, lw);
    const double n = kLayerParams / 2e7;
    EXPECT_NEAR(c.gathers, n, 1e-12);
    EXPECT_NEAR(c.gather_s, ag_bandwidth_s(cal, 2 * kLayerParams) + n * ag_latency_s(cal), 1e-12);
    // Reduce buckets of 5e8 span ten layers: 0.1007 reduce-scatters per layer.
    const double gb = grad_bytes_per_param(ds.plan, ds.training.precision);
    EXPECT_NEAR(c.reduce_scatters, kLayerParams / 5e8, 1e-12);
    EXPECT_NEAR(c.reduce_scatter_s, ag_bandwidth_s(cal, gb * kLayerParams) + kLayerParams / 5e8 * ag_latency_s(cal),
                1e-12);
    // 1e7-element buckets would need 5.03, but a bucket holds whole tensors:
    // at most one gather per weight matrix (QKV, projection, fc1, fc2).
    b.bucket_params = 1e7;
    c = zero3_layer_collectives(ds, ctx, b, lw);
    EXPECT_DOUBLE_EQ(c.gathers, 4);
    EXPECT_NEAR(c.gather_s, ag_bandwidth_s(cal, 2 * kLayerParams) + 4 * ag_latency_s(cal), 1e-12);
}

TEST(Zero3Exposure, PrefetchHidesAllButTheFirstGather) {
    // Ten layers, 2 ms gather, 3 ms of compute window: only the first is exposed.
    PassExposure x = zero3_pass_exposure(10, 2e-3, 2e-3, 0, 3e-3);
    EXPECT_NEAR(x.exposed_s, 2e-3, 1e-15);
    EXPECT_NEAR(x.hidden_s, 9 * 2e-3, 1e-15);
    // 5 ms gather over 3 ms windows: 2 ms sticks out of each of the nine.
    x = zero3_pass_exposure(10, 5e-3, 5e-3, 0, 3e-3);
    EXPECT_NEAR(x.exposed_s, 5e-3 + 9 * 2e-3, 1e-15);
    EXPECT_NEAR(x.hidden_s, 9 * 3e-3, 1e-15);
    // No prefetch: every gather waits.
    x = zero3_pass_exposure(10, 0, 0, 2e-3, 3e-3);
    EXPECT_NEAR(x.exposed_s, 10 * 2e-3, 1e-15);
    EXPECT_EQ(x.hidden_s, 0);
}

TEST(Zero3Exposure, StepWithAndWithoutPrefetch) {
    Calibration cal = default_calibration();
    const double c_f = 1e-3, c_b = 2e-3;  // one layer's forward and backward
    // prefetch 0 and no reduce overlap: everything serial, per micro-batch
    // 24 forward gathers + 24 (gather + reduce-scatter) + the root unit
    // (tied embedding 51200 x 2048: one gather, one reduce-scatter).
    const Job serial = zero3_job({"parallel.zero_prefetch=0", "parallel.overlap_grad_reduce=false"});
    const PlanContext ctx = make_plan_context(serial, cal);
    const LayerWork lw = layer_work(serial.model, serial.training, serial.plan);
    const StageParams sp = stage_params(serial, lw, head_work(serial.model, serial.training, serial.plan), 0);
    const double gb = grad_bytes_per_param(serial.plan, serial.training.precision);
    const double g = ag_bandwidth_s(cal, 2 * kLayerParams) + ag_latency_s(cal);
    const double r = ag_bandwidth_s(cal, gb * kLayerParams) + ag_latency_s(cal);
    const double root = 51200 * kH;
    const double root_s = ag_bandwidth_s(cal, 2 * root) + ag_bandwidth_s(cal, gb * root) + 2 * ag_latency_s(cal);
    const double none = zero3_exposed_s(serial, cal, ctx, lw, sp, c_f, c_b, 1);
    EXPECT_NEAR(none, 24 * g + 24 * (g + r) + root_s, 1e-9);
    // prefetch 1 with overlapped reduce-scatters: first gather, first gather +
    // last reduce-scatter, and per later layer what sticks out of the window
    // (dp_overlap of its compute); the hidden part costs overlap_slowdown.
    const Job fsdp = zero3_job();
    const double w = cal.dp_overlap;
    const double fwd = g + 23 * std::max(0.0, g - w * c_f);
    const double bwd = (g + r) + 23 * std::max(0.0, g + r - w * c_b);
    const double hidden = 23 * (std::min(g, w * c_f) + std::min(g + r, w * c_b));
    const double pre = zero3_exposed_s(fsdp, cal, ctx, lw, sp, c_f, c_b, 1);
    EXPECT_NEAR(pre, fwd + bwd + root_s + hidden * cal.overlap_slowdown, 1e-9);
    EXPECT_LT(pre, none);
    // Two micro-batches pay it twice.
    EXPECT_NEAR(zero3_exposed_s(fsdp, cal, ctx, lw, sp, c_f, c_b, 2), 2 * pre, 1e-9);
    // Checkpointing around the unit gathers once more per recomputed layer.
    const Job regather = zero3_job({"parallel.recompute=full", "parallel.zero_regather_recompute=true",
                                    "parallel.zero_prefetch=0", "parallel.overlap_grad_reduce=false"});
    EXPECT_NEAR(zero3_exposed_s(regather, cal, ctx, lw, sp, c_f, c_b, 1), none + 24 * g, 1e-9);
}

TEST(Zero3Memory, LiveParametersAreCappedNotWholeLayers) {
    const Calibration cal = default_calibration();
    // DeepSpeed with stage3_max_live_parameters 2e8: 2e8 gathered elements of
    // the 1.31e9 on the rank, plus one 5e8 reduce bucket of fp32 gradients.
    const Job ds = zero3_job({"training.framework=deepspeed", "parallel.zero_max_live_params=2e8"});
    const LayerWork lw = layer_work(ds.model, ds.training, ds.plan);
    const HeadWork hw = head_work(ds.model, ds.training, ds.plan);
    const double gb = grad_bytes_per_param(ds.plan, ds.training.precision);
    Zero3Live z = zero3_live(ds, lw, stage_params(ds, lw, hw, 0));
    EXPECT_DOUBLE_EQ(z.params, 2e8);
    EXPECT_TRUE(z.capped);
    EXPECT_DOUBLE_EQ(z.bytes, 2 * 2e8 + gb * 5e8);
    const Memory mem = stage_memory(ds, cal, lw, hw, 0);
    // Beside the cuBLAS workspace and the allocator's reserve over the
    // churned memory, which counts these gathers too (estimate/memory.cpp).
    EXPECT_NEAR(mem.buffers_bytes - cal.workspace_bytes - mem.fragmentation_bytes, 2 * 2e8 + gb * 5e8, 1);
    EXPECT_NEAR(mem.fragmentation_bytes,
                mem.churn_reserve_fraction * (mem.activations_bytes + mem.logits_bytes + 2 * 2e8 + gb * 5e8), 1);
    EXPECT_DOUBLE_EQ(mem.zero_live_params, 2e8);
    // FSDP: current + one prefetched block and the root unit (the tied
    // embedding) gathered, one block's gradient awaiting its reduce-scatter.
    const Job fsdp = zero3_job();
    z = zero3_live(fsdp, lw, stage_params(fsdp, lw, hw, 0));
    EXPECT_DOUBLE_EQ(z.params, 2 * kLayerParams + 51200 * kH);
    EXPECT_FALSE(z.capped);
    EXPECT_DOUBLE_EQ(z.bytes, 2 * (2 * kLayerParams + 51200 * kH) + gb * kLayerParams);
    // Deeper prefetch holds one more block per step.
    z = zero3_live(zero3_job({"parallel.zero_prefetch=2"}), lw, stage_params(fsdp, lw, hw, 0));
    EXPECT_DOUBLE_EQ(z.params, 3 * kLayerParams + 51200 * kH);
}

TEST(InFlight, InterleavedWarmupByHand) {
    // pp 4, vpp 2, 3 layers per chunk, dp 2, micro-batch 2.
    const auto job = [](int micro_batches, const char* framework = "megatron-core") {
        return parse_job(test::small_job_text(), "inflight.yaml",
                         {"parallel.pp=4", "parallel.vpp=2", std::string("training.framework=") + framework,
                          "training.global_batch_size=" + std::to_string(4 * micro_batches)});
    };
    // m = 8, rank 0: warm-up 2*3 + 1*4 = 10 chunk forwards, 11 alive: passes
    // 0-3 chunk 0, 4-7 chunk 1, 8-10 chunk 0 -> 7 + 4, i.e. 5.5 stages
    // (= p(1 + (p-1)/(pv)), Korthikanti et al. 2022).
    InFlight f = inflight_passes(job(8), 0);
    EXPECT_EQ(f.warmup, 10);
    EXPECT_EQ(f.alive, 11);
    EXPECT_DOUBLE_EQ(f.first_chunk, 7);
    EXPECT_DOUBLE_EQ(f.stage_units, 5.5);
    // Rank 3: warm-up 0 + 4 = 4, 5 alive: 4 of chunk 0, 1 of chunk 1.
    f = inflight_passes(job(8), 3);
    EXPECT_EQ(f.warmup, 4);
    EXPECT_DOUBLE_EQ(f.first_chunk, 4);
    EXPECT_DOUBLE_EQ(f.stage_units, 2.5);
    // m == pp: Megatron (legacy and Megatron-Core through 2024) runs all 8
    // chunk forwards before any backward, on every rank (the last one too:
    // 4 stages, not 2.5) ...
    f = inflight_passes(job(4, "megatron-lm"), 3);
    EXPECT_EQ(f.warmup, 8);
    EXPECT_EQ(f.alive, 8);
    EXPECT_DOUBLE_EQ(f.stage_units, 4);
    f = inflight_passes(job(4, "megatron-core"), 3);
    EXPECT_EQ(f.alive, 8);
    EXPECT_DOUBLE_EQ(f.stage_units, 4);
    // ... another stack keeps the formula there (4 + 1 passes), and rank 0
    // reaches all 8 anyway (2*3 + 4 = 10 > 8).
    f = inflight_passes(job(4, "fsdp"), 3);
    EXPECT_EQ(f.alive, 5);
    EXPECT_DOUBLE_EQ(f.stage_units, 2.5);
    f = inflight_passes(job(4, "fsdp"), 0);
    EXPECT_EQ(f.warmup, 8);
    EXPECT_EQ(f.alive, 8);
    // 1F1B (vpp 1), rank 1 of 4 with m = 8: min(p - r, m) = 3.
    const Job plain = parse_job(test::small_job_text(), "inflight.yaml",
                                {"parallel.pp=4", "training.global_batch_size=32"});
    f = inflight_passes(plain, 1);
    EXPECT_EQ(f.warmup, 2);
    EXPECT_DOUBLE_EQ(f.stage_units, 3);
}

TEST(MemoryVerdict, NamesTheDecidingAssumption) {
    // Interleaved plan whose activations do not fit.
    const Job job = default_job({"parallel.pp=8", "parallel.vpp=2", "training.micro_batch_size=4"});
    const Estimate e = estimate(job, default_calibration());
    ASSERT_FALSE(e.memory.fits);
    const std::string why = memory_assumption(job, e.memory);
    EXPECT_NE(why.find("in-flight micro-batches"), std::string::npos) << why;
    EXPECT_NE(why.find("interleaved 1F1B warm-up"), std::string::npos) << why;
    EXPECT_NE(estimate_table(job, e).find("deciding assumption"), std::string::npos);
    // A ZeRO-3 gather buffer larger than the activations, capped.
    Memory m;
    m.capacity_bytes = 10e9;
    m.peak_bytes = 9.5e9;
    m.fits = true;
    m.activations_bytes = 1e9;
    m.zero_live_bytes = 5e9;
    m.zero_live_params = 1e9;
    m.zero_live_capped = true;
    const Job ds = zero3_job({"training.framework=deepspeed"});
    const std::string z = memory_assumption(ds, m);
    EXPECT_EQ(z.find("deciding assumption: ZeRO-3 live parameters"), 0u) << z;
    EXPECT_NE(z.find("zero_max_live_params"), std::string::npos) << z;
    // Far from the limit: nothing to say.
    m.peak_bytes = 5e9;
    EXPECT_EQ(memory_assumption(ds, m), "");
}

TEST(Zero3Keys, BadValuesNameTheKey) {
    const std::vector<std::string> z3 = {"parallel.tp=1", "parallel.pp=1", "parallel.zero=3"};
    const auto error = [&](const std::string& set) {
        std::vector<std::string> sets = z3;
        sets.push_back(set);
        return test::parse_error(test::small_job_text(), sets);
    };
    for (const auto& [set, key] : std::vector<std::pair<std::string, std::string>>{
             {"parallel.zero_prefetch=-1", "parallel.zero_prefetch"},
             {"parallel.zero_prefetch=65", "parallel.zero_prefetch"},
             {"parallel.zero_prefetch=1.5", "parallel.zero_prefetch"},
             {"parallel.zero_bucket_params=lots", "parallel.zero_bucket_params"},
             {"parallel.zero_bucket_params=-5e7", "parallel.zero_bucket_params"},
             {"parallel.zero_reduce_bucket_params=1e20", "parallel.zero_reduce_bucket_params"},
             {"parallel.zero_regather_recompute=maybe", "parallel.zero_regather_recompute"},
             {"parallel.zero_max_live_params=-1", "parallel.zero_max_live_params"}}) {
        const std::string msg = error(set);
        EXPECT_NE(msg.find(key), std::string::npos) << set << ": " << msg;
    }
    // Below ZeRO-3 the keys have nothing to set.
    const std::string msg = test::parse_error(test::small_job_text(), {"parallel.zero=1", "parallel.zero_prefetch=2"});
    EXPECT_NE(msg.find("parallel.zero_prefetch"), std::string::npos) << msg;
    EXPECT_NE(msg.find("zero: 3"), std::string::npos) << msg;
    // Good values are read as given.
    const Job ok = parse_job(test::small_job_text(), "job.yaml",
                             {"parallel.tp=1", "parallel.pp=1", "parallel.zero=3", "parallel.zero_bucket_params=5e7",
                              "parallel.zero_prefetch=0", "parallel.zero_regather_recompute=true",
                              "parallel.zero_max_live_params=0", "parallel.zero_reduce_bucket_params=0"});
    const Zero3Engine e = zero3_engine(ok);
    EXPECT_EQ(e.bucket_params, 5e7);
    EXPECT_EQ(e.prefetch, 0);
    EXPECT_TRUE(e.regather_recompute);
    EXPECT_EQ(e.max_live_params, 0);
    EXPECT_EQ(e.reduce_bucket_params, 0);
}

}  // namespace
}  // namespace lostflops
