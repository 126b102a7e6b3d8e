// The exhaustive search of issue 8: Llama-3.1-405B, sequence 8,192, global
// batch 2,048 on 16,384 H100, every knob. Reports the search's wall time per
// iteration (real_time), plans enumerated and evaluated per second (counters
// enumerated_per_s, evaluated_per_s), and the layout enumeration alone;
// threads:0 is every core; table:1 keeps the best plans as the table does,
// table:0 every plan as JSON / CSV do.
// Reported in notes and README, never asserted.
#include <benchmark/benchmark.h>

#include "lostflops/job.h"
#include "lostflops/search.h"
#include "search/enumerate.h"

namespace {

using namespace lostflops;

const std::vector<std::string> kJob = {"model={preset: llama3.1-405b}", "cluster.num_gpus=16384",
                                       "training.seq_length=8192", "training.global_batch_size=2048"};

void BM_search_405b_16k(benchmark::State& state) {
    const SearchJob sj = default_search_job(kJob);
    const Calibration cal = default_calibration();
    SearchOptions o;
    o.threads = static_cast<int>(state.range(0));  // 0: every core
    o.sort_top = 5;
    // 1: keep the best plans only, as the CLI's table does (cmd_search.cpp);
    // 0: keep every plan, as JSON / CSV rankings do.
    if (state.range(1) == 1) o.keep_best = size_t{1} << 16;
    SearchCounts c;
    for (auto _ : state) {
        const SearchResult r = search_plans(sj.job, cal, o);
        c = r.counts;
        benchmark::DoNotOptimize(r.ranked.data());
    }
    const double n = static_cast<double>(state.iterations());
    state.counters["enumerated"] = static_cast<double>(c.enumerated);
    state.counters["evaluated"] = static_cast<double>(c.evaluated);
    state.counters["enumerated_per_s"] = benchmark::Counter(static_cast<double>(c.enumerated) * n, benchmark::Counter::kIsRate);
    state.counters["evaluated_per_s"] = benchmark::Counter(static_cast<double>(c.evaluated) * n, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_search_405b_16k)->ArgNames({"threads", "table"})->Args({0, 1})->Args({1, 1})->Args({0, 0})->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(5);

void BM_enumerate_layouts_405b_16k(benchmark::State& state) {
    const SearchJob sj = default_search_job(kJob);
    int64_t layouts = 0;
    for (auto _ : state) {
        layouts = search::enumerate_layouts(sj.job, [](const search::Layout&) {}).valid;
        benchmark::DoNotOptimize(layouts);
    }
    state.counters["layouts"] = static_cast<double>(layouts);
}
BENCHMARK(BM_enumerate_layouts_405b_16k)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
