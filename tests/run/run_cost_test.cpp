// The whole-run closed form (run_cost.h): the `run:` section's defaults and
// errors, hand-computed cases of each formula, and the Llama 3 405B case
// (419 interruptions in 54 days on 16,384 H100, Dubey et al. 2024, 3.3.4).
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "lostflops/calibration.h"
#include "lostflops/error.h"
#include "lostflops/estimate.h"
#include "lostflops/job.h"
#include "lostflops/run_cost.h"
#include "test_util.h"
#include "workload/flops.h"

namespace lostflops {
namespace {

Job llama3_job(const std::vector<std::string>& overrides = {}) {
    return load_job(test::source_path("examples/llama3.1-405b-16384xh100-goodput.yaml"), overrides);
}

// The key of the InputError parsing the small job with `overrides` gives; "" if none.
std::string error_key(const std::vector<std::string>& overrides, std::string* message = nullptr) {
    try {
        parse_job(test::small_job_text(), "job.yaml", overrides);
    } catch (const InputError& e) {
        if (message) *message = e.what();
        return e.key();
    }
    return "";
}

// A run with the given numbers and nothing else (no stall, no persist lag).
RunInputs plain_inputs(double work_s, double mtbf_s, double block_s, double recovery_s) {
    RunInputs in;
    in.step_time_s = 1;
    in.tokens_per_step = 1;
    in.steps = static_cast<int64_t>(work_s);
    in.num_gpus = 1;
    in.failures_per_s = mtbf_s > 0 ? 1 / mtbf_s : 0;
    in.checkpoint_block_s = block_s;
    in.restart_overhead_s = recovery_s;
    in.recovery_s = recovery_s;
    return in;
}

TEST(RunCost, DefaultFailureRateGivesLlama3Interruptions) {
    const Job job = llama3_job({"run={}"});  // every default
    const double rate = job.run.gpu_failure_rate_per_gpu_h;
    EXPECT_NEAR(rate * 16384 * 54 * 24, 419, 0.1 * 419);
    // The closed form counts failures over the whole wall time, restarts included.
    const RunCost r = run_cost(job, estimate(job, default_calibration()));
    EXPECT_NEAR(r.expected_failures / r.wall_time_s * 54 * 86400, 419, 0.1 * 419);
    EXPECT_NEAR(r.mtbf_s / 3600, 54.0 * 24 / 419, 0.01);
}

TEST(RunCost, DefaultsFollowTheJob) {
    const Job job = llama3_job({"run={}"});
    EXPECT_DOUBLE_EQ(job.run.gpu_power_w, job.cluster.gpu.tdp_w);
    EXPECT_NEAR(job.run.checkpoint_write_GBps, 2000, 1e-9);  // 2 TB/s at 16,384 GPUs
    EXPECT_EQ(job.run.bytes_per_token, 4);                   // vocabulary 128,256 > 65,500
    EXPECT_EQ(job.run.checkpoint_mode, CheckpointMode::async);
    EXPECT_NEAR(checkpoint_bytes(job), 14 * count_params(job.model).total, 1);
    const Job small = parse_job(test::small_job_text(), "job.yaml");
    EXPECT_EQ(small.run.bytes_per_token, 2);  // vocabulary 51,200
    EXPECT_NEAR(small.run.checkpoint_write_GBps, 2000.0 * 16 / 16384, 1e-9);
    EXPECT_EQ(small.run.snapshot_GBps, 32);  // A100: PCIe Gen4 x16
}

TEST(RunCost, BadRunValuesNameTheKey) {
    EXPECT_EQ(error_key({"run.gpu_failure_rate=-1e-5"}), "run.gpu_failure_rate");
    EXPECT_EQ(error_key({"run.checkpoint_write_GBps=0"}), "run.checkpoint_write_GBps");
    EXPECT_EQ(error_key({"run.checkpoint_read_GBps=0"}), "run.checkpoint_read_GBps");
    EXPECT_EQ(error_key({"run.storage_read_GBps=-3"}), "run.storage_read_GBps");
    EXPECT_EQ(error_key({"run.restart_overhead_s=-1"}), "run.restart_overhead_s");
    EXPECT_EQ(error_key({"run.pue=0.5"}), "run.pue");
    EXPECT_EQ(error_key({"run.checkpoint_interval=0"}), "run.checkpoint_interval");
    EXPECT_EQ(error_key({"run.checkpoint_interval=often"}), "run.checkpoint_interval");
    EXPECT_EQ(error_key({"run.spare_nodes=1.5"}), "run.spare_nodes");
    EXPECT_EQ(error_key({"run.async_checkpoint=maybe"}), "run.async_checkpoint");
    EXPECT_EQ(error_key({"run=5"}), "run");
    std::string message;
    EXPECT_EQ(error_key({"run.checkpoint_bandwidth=5"}, &message), "run.checkpoint_bandwidth");
    EXPECT_NE(message.find("--set run.checkpoint_bandwidth=5"), std::string::npos) << message;
    EXPECT_EQ(error_key({"run.checkpoint_interval=auto", "run.gpu_failure_rate=0"}), "");
    EXPECT_EQ(error_key({"run.checkpoint_interval=null", "run.pue=null"}), "");  // null: the default
    EXPECT_EQ(error_key({"run.checkpoint_interval=600"}), "");
    EXPECT_EQ(parse_job(test::small_job_text(), "job.yaml", {"run.checkpoint_interval=600"}).run.checkpoint_interval_s,
              600);
}

TEST(RunCost, RunThatCannotFinishIsAnError) {
    // 16,384 GPUs failing every 0.22 s cannot get through a 10-minute restart.
    const Job job = llama3_job({"run.gpu_failure_rate=1"});
    try {
        run_cost(job, estimate(job, default_calibration()));
        ADD_FAILURE() << "no error";
    } catch (const InputError& e) {
        EXPECT_EQ(e.key(), "run.gpu_failure_rate");
    }
}

TEST(RunCost, YoungDalyInterval) {
    EXPECT_DOUBLE_EQ(young_daly_interval_s(2, 100), std::sqrt(2.0 * 2 * 100) - 2);  // 18
    EXPECT_DOUBLE_EQ(young_daly_interval_s(60, 100), 100);  // block >= M/2: the MTBF (Daly 2006)
    EXPECT_TRUE(std::isinf(young_daly_interval_s(2, INFINITY)));
}

TEST(RunCost, WallTimeByHand) {
    // No failures: work plus one block per cycle (3 whole cycles of 30 s, one of 10 s).
    EXPECT_DOUBLE_EQ(expected_wall_time_s(plain_inputs(100, 0, 2, 50), 30), 100 + 4 * 2);
    // One cycle of 10 s work + 2 s block, MTBF 100 s, recovery 5 s:
    // 100 e^(5/100) (e^(12/100) - 1) = 13.4034...
    const double one = 100 * std::exp(0.05) * (std::exp(0.12) - 1);
    EXPECT_NEAR(expected_wall_time_s(plain_inputs(10, 100, 2, 5), 10), one, 1e-9);
    EXPECT_NEAR(one, 13.4034, 1e-4);
    // Small failure rate: first order 1 + block/tau + (tau/2 + R)/M of the work.
    const double m = 1e7, tau = 1000, block = 10, rec = 100;
    const double w = expected_wall_time_s(plain_inputs(1e6, m, block, rec), tau);
    EXPECT_NEAR(w / 1e6, 1 + block / tau + ((tau + block) / 2 + rec) / m, 1e-4);
}

TEST(RunCost, SplitSumsToWallAndFactorsMultiplyToMfu) {
    const Job job = llama3_job();
    const Estimate e = estimate(job, default_calibration());
    const RunCost r = run_cost(job, e);
    // Lost work (run_cost.cpp sets it to the rest of the wall time) by hand:
    // a failure during a cycle of work loses on average half the cycle and
    // its checkpoint, and an async checkpoint persist_s more (Young 1974's
    // first order); of the failures, those during a recovery of R (restart,
    // read, persist) lose no work: e^(-R/M) of them fall in work.
    const RunInputs& in = r.inputs;
    const double recovery_s = in.restart_overhead_s + in.checkpoint_read_s + in.checkpoint_persist_s;
    const double per_failure_s = (in.checkpoint_interval_s + in.checkpoint_block_s) / 2 + in.checkpoint_persist_s;
    EXPECT_NEAR(r.lost_work_s / (r.expected_failures * std::exp(-recovery_s / r.mtbf_s) * per_failure_s), 1.0, 0.02);
    // Restarts by hand: each failure starts a recovery of restart + read that
    // the next failure cuts short, M (1 - e^(-R/M)) on average, and waits for
    // a spare node.
    const double restart = in.restart_overhead_s + in.checkpoint_read_s;
    EXPECT_NEAR(r.restart_s / (r.expected_failures * (r.mtbf_s * -std::expm1(-restart / r.mtbf_s) + in.spare_wait_s)),
                1.0, 1e-9);
    ASSERT_EQ(r.utilisation.size(), 5u);
    EXPECT_NEAR(r.utilisation[1].value * r.utilisation[2].value, e.mfu, 1e-9);
    EXPECT_NEAR(r.utilisation[0].value, 1 / 1.1, 1e-12);
    EXPECT_DOUBLE_EQ(r.utilisation[3].value, r.goodput);
    EXPECT_DOUBLE_EQ(r.utilisation[4].value, 1.0);
    EXPECT_NEAR(r.energy_kwh, 700.0 * 16384 * r.wall_time_s * 1.1 / 3.6e6, 1e-6 * r.energy_kwh);
    EXPECT_NEAR(r.gpu_hours, 16384 * r.wall_time_s / 3600, 1e-6 * r.gpu_hours);
    EXPECT_FALSE(r.cost_given);
    // The interval is a whole number of steps near the Young/Daly optimum.
    const double steps = in.checkpoint_interval_s / in.step_time_s;
    EXPECT_NEAR(steps, std::round(steps), 1e-9);
    const double opt = young_daly_interval_s(in.checkpoint_block_s, r.mtbf_s);
    EXPECT_LE(std::abs(in.checkpoint_interval_s - std::max(opt, in.checkpoint_persist_s)), in.step_time_s);
}

TEST(RunCost, SparesPriceAndSyncCheckpoint) {
    const Job job = llama3_job({"run.spare_nodes=16", "run.price_per_gpu_hour=2", "run.async_checkpoint=false"});
    const Estimate e = estimate(job, default_calibration());
    const RunCost r = run_cost(job, e);
    EXPECT_NEAR(r.gpu_hours, (16384 + 128) * r.wall_time_s / 3600, 1e-6 * r.gpu_hours);
    EXPECT_NEAR(r.cost, 2 * r.gpu_hours, 1e-9 * r.cost);
    EXPECT_TRUE(r.cost_given);
    EXPECT_NEAR(r.utilisation[4].value, 16384.0 / (16384 + 128), 1e-12);
    // Sync: the whole checkpoint through the storage's write bandwidth.
    EXPECT_NEAR(r.inputs.checkpoint_block_s, checkpoint_bytes(job) / 2000e9, 1e-9);
    EXPECT_EQ(r.inputs.checkpoint_persist_s, 0);
    // Spares do not fail the job: the failure count is that of the running GPUs.
    EXPECT_NEAR(r.expected_failures, r.wall_time_s * job.run.gpu_failure_rate_per_gpu_h * 16384 / 3600,
                1e-9 * r.expected_failures);
}

TEST(RunCost, SpareWaitWithoutSparesIsTheRepairTime) {
    const Job job = llama3_job({"run.node_repair_h=2", "run.spare_nodes=0"});
    const RunInputs in = run_inputs(job, estimate(job, default_calibration()));
    EXPECT_NEAR(in.spare_wait_s, 7200, 1e-6);
    const Job spared = llama3_job({"run.node_repair_h=2", "run.spare_nodes=8"});
    const RunInputs in8 = run_inputs(spared, estimate(spared, default_calibration()));
    EXPECT_LT(in8.spare_wait_s, 1);  // ~0.65 nodes in repair on average: 8 spares rarely run out
}

// Issue 20 item 5: with many nodes in repair (a = failures/s x repair time
// beyond 745) exp(-a) underflowed to 0 and the wait with it; at repair
// 50,000 h the run came out shorter than at 40,000 h. For a >> S the wait per
// failure is repair x (P(K >= S) - (S/a) P(K >= S+1)) = repair x (1 - S/a)
// (sum of P(k)(k+1-S)/(k+1) over k >= S, with P(k)/(k+1) = P(k+1)/a).
TEST(RunCost, SpareWaitWithManyNodesInRepair) {
    for (const double repair_h : {1e3, 4e4, 5e4}) {
        const Job job = llama3_job({"run.spare_nodes=1", "run.gpu_failure_rate=0.001",
                                    "run.node_repair_h=" + std::to_string(repair_h)});
        const RunInputs in = run_inputs(job, estimate(job, default_calibration()));
        const double a = in.failures_per_s * repair_h * 3600;
        ASSERT_GT(a, 745);
        EXPECT_NEAR(in.spare_wait_s / (repair_h * 3600), 1 - 1 / a, 1e-7) << repair_h;
    }
    // The settings on the built-in job: a run of 13 days at 83 %
    // goodput before; with the wait a repair time per failure it never ends,
    // which the run model refuses, naming why.
    for (const char* repair : {"run.node_repair_h=40000", "run.node_repair_h=50000"}) {
        const Job job = default_job({"training.train_tokens=1e12", "run.spare_nodes=1", "run.gpu_failure_rate=0.001", repair});
        try {
            (void)run_cost(job, estimate(job, default_calibration()));
            ADD_FAILURE() << repair;
        } catch (const InputError& e) {
            EXPECT_NE(std::string(e.message()).find("would not finish"), std::string::npos) << e.what();
        }
    }
}

TEST(RunCost, DataStallWhenLoadingIsSlow) {
    const Job job = parse_job(test::small_job_text(), "job.yaml",
                              {"training.train_tokens=1e9", "run.bytes_per_token=1000", "run.storage_read_GBps=0.001"});
    const Estimate e = estimate(job, default_calibration());
    const RunInputs in = run_inputs(job, e);
    // 1e6 bytes/s / 1000 bytes per token = 1,000 tokens/s for 131,072 tokens per step.
    EXPECT_NEAR(in.data_stall_s, e.tokens_per_step / 1000.0 - e.step_time_s, 1e-9);
    const Job fast = parse_job(test::small_job_text(), "job.yaml", {"training.train_tokens=1e9"});
    EXPECT_EQ(run_inputs(fast, estimate(fast, default_calibration())).data_stall_s, 0);
    // Preprocessing is the step's (training.data_loader_*): the run's old
    // keys say where it went; the run's stall is storage's beyond that step.
    const std::string moved = test::error_of([] {
        (void)parse_job(test::small_job_text(), "job.yaml", {"run.preprocess_tokens_per_s_per_core=10"});
    });
    EXPECT_NE(moved.find("training.data_loader_s_per_sequence"), std::string::npos);
    EXPECT_NE(test::error_of([] { (void)parse_job(test::small_job_text(), "job.yaml", {"run.cpu_cores_per_gpu=2"}); })
                  .find("moved"),
              std::string::npos);
    const Job pre = parse_job(test::small_job_text(), "job.yaml",
                              {"training.train_tokens=1e9", "training.data_loader_s_per_sequence=0.5"});
    const Estimate ep = estimate(pre, default_calibration());
    EXPECT_GT(ep.breakdown.data_loader_s, 0);
    // The loader's wait is data stall, not useful time: out of the step, into the stall.
    const RunInputs pin = run_inputs(pre, ep);
    EXPECT_DOUBLE_EQ(pin.data_stall_s, ep.breakdown.data_loader_s);
    EXPECT_DOUBLE_EQ(pin.step_time_s + pin.data_stall_s, ep.step_time_s);
    const RunCost pc = run_cost(pre, ep);
    EXPECT_NEAR(pc.data_stall_s, pin.steps * ep.breakdown.data_loader_s, 1e-6 * pc.data_stall_s);
}

}  // namespace
}  // namespace lostflops
