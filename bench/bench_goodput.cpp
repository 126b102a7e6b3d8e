// The whole-run Monte Carlo of issue 10: 1,000 samples of a 54-day run on
// 16,384 H100 (Llama 3.1 405B, examples/llama3.1-405b-16384xh100-goodput.yaml,
// its work cut to 54 days of failure-free steps), the default failure rate
// (~419 failures per run) and the Young/Daly interval. Reports the time per
// 1,000 samples and the failures simulated per second, on one thread and on
// every core; and the 10^6 samples of the example's whole run. Never asserted.
#include <cmath>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "lostflops/calibration.h"
#include "lostflops/estimate.h"
#include "lostflops/job.h"
#include "lostflops/run_cost.h"

namespace {

using namespace lostflops;

RunCost run_54_days() {
    const Job job = load_job(std::string(LOSTFLOPS_SOURCE_DIR) + "/examples/llama3.1-405b-16384xh100-goodput.yaml");
    const Estimate e = estimate(job, default_calibration());
    RunCost r = run_cost(job, e);
    r.inputs.steps = static_cast<int64_t>(std::round(54 * 86400 / e.step_time_s));
    return r;
}

void BM_simulate_54_days_16k_gpus(benchmark::State& state) {
    const RunCost r = run_54_days();
    const int samples = static_cast<int>(state.range(0));
    RunSimulation s;
    for (auto _ : state) {
        s = simulate_run(r.inputs, r.inputs.checkpoint_interval_s, samples, 1, static_cast<int>(state.range(1)));
        benchmark::DoNotOptimize(s);  // the whole struct: GCC with "+m,r" on one double can leave garbage in it
    }
    state.counters["failures_per_sample"] = s.mean_failures;
    state.counters["failures_per_s"] = benchmark::Counter(
        s.mean_failures * samples * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_simulate_54_days_16k_gpus)->ArgNames({"samples", "threads"})->Args({1000, 1})->Args({1000, 0})
    ->Unit(benchmark::kMillisecond)->UseRealTime();

// `goodput --simulate 1000000` of issue 21: the whole example run
// (examples/llama3.1-405b-16384xh100-goodput.yaml, 15.6T tokens, ~588
// failures per run), 10^6 samples; threads:0 every core. The label gives the
// figures to 17 digits, to compare between thread counts (1, 2, 8, every core).
void BM_simulate_example_1m(benchmark::State& state) {
    const Job job = load_job(std::string(LOSTFLOPS_SOURCE_DIR) + "/examples/llama3.1-405b-16384xh100-goodput.yaml");
    const RunCost r = run_cost(job, estimate(job, default_calibration()));
    RunSimulation s;
    for (auto _ : state) {
        s = simulate_run(r.inputs, r.inputs.checkpoint_interval_s, 1'000'000, 1, static_cast<int>(state.range(0)));
        benchmark::DoNotOptimize(s);  // the whole struct: GCC with "+m,r" on one double can leave garbage in it
    }
    state.counters["failures_per_sample"] = s.mean_failures;
    state.SetLabel(fmt::format("wall p10/p50/p90/mean {:.17g}/{:.17g}/{:.17g}/{:.17g} s, goodput mean {:.17g}, "
                               "failures mean {:.17g}",
                               s.p10_wall_time_s, s.p50_wall_time_s, s.p90_wall_time_s, s.mean_wall_time_s,
                               s.mean_goodput, s.mean_failures));
}
BENCHMARK(BM_simulate_example_1m)->ArgName("threads")->Arg(1)->Arg(2)->Arg(8)->Arg(0)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
