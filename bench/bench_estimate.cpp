// Cost of one estimate once the job is parsed: the figure that decides how
// many plans a search can evaluate per second. Reported in notes, never
// asserted in tests.
#include <benchmark/benchmark.h>

#include "lostflops/calibration.h"
#include "lostflops/estimate.h"
#include "lostflops/job.h"
#include "lostflops/pipeline.h"

namespace {

using namespace lostflops;

void BM_estimate_default_job(benchmark::State& state) {
    const Job job = default_job();
    const Calibration cal = default_calibration();
    for (auto _ : state) benchmark::DoNotOptimize(estimate(job, cal).step_time_s);
}
BENCHMARK(BM_estimate_default_job);

// A deep pipeline: 64 stages (the closed form loops over stages).
void BM_estimate_pp64(benchmark::State& state) {
    const Job job = default_job({"model.num_hidden_layers=128", "parallel.pp=64", "parallel.vpp=1",
                                 "parallel.tp=8", "cluster.num_gpus=4096", "training.global_batch_size=2048"});
    const Calibration cal = default_calibration();
    for (auto _ : state) benchmark::DoNotOptimize(estimate(job, cal).step_time_s);
}
BENCHMARK(BM_estimate_pp64);

// A sweep over plans as a search would do it: vary tp, pp, micro-batch.
void BM_estimate_plan_sweep(benchmark::State& state) {
    const Calibration cal = default_calibration();
    std::vector<Job> jobs;
    for (int tp : {1, 2, 4, 8})
        for (int pp : {1, 2, 4, 8})
            for (int mb : {1, 2})
                jobs.push_back(default_job({"parallel.tp=" + std::to_string(tp), "parallel.pp=" + std::to_string(pp),
                                            "parallel.vpp=1", "training.global_batch_size=4096",
                                            "training.micro_batch_size=" + std::to_string(mb)}));
    size_t i = 0;
    for (auto _ : state) {
        benchmark::DoNotOptimize(estimate(jobs[i], cal).step_time_s);
        i = (i + 1) % jobs.size();
    }
}
BENCHMARK(BM_estimate_plan_sweep);

void BM_pipeline_simulate_p35_v3(benchmark::State& state) {
    PipelineInput in;
    in.stages = 35;
    in.chunks = 3;
    in.micro_batches = 280;
    in.fwd_s.assign(105, 1.0);
    in.bwd_s.assign(105, 2.0);
    in.p2p_s = 0.05;
    for (auto _ : state) benchmark::DoNotOptimize(pipeline_simulate(in).makespan_s);
}
BENCHMARK(BM_pipeline_simulate_p35_v3)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
