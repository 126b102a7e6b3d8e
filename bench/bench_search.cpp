// Layout enumeration for the exhaustive search of issue 8: Llama-3.1-405B,
// sequence 8,192, global batch 2,048 on 16,384 H100. Reports layouts per
// second and the count (counter "layouts"). Reported in notes, never asserted.
#include <benchmark/benchmark.h>

#include "lostflops/job.h"
#include "search/enumerate.h"

namespace {

using namespace lostflops;

void BM_enumerate_layouts_405b_16k(benchmark::State& state) {
    const Job job = default_job({"model={preset: llama3.1-405b}", "cluster.num_gpus=16384",
                                 "training.seq_length=8192", "training.global_batch_size=2048",
                                 "parallel.tp=8", "parallel.pp=16", "parallel.vpp=1", "parallel.dp=128"});
    int64_t layouts = 0;
    for (auto _ : state) {
        int64_t n = 0;
        search::enumerate_layouts(job, [&n](const search::Layout& l) { n += l.tp; });
        benchmark::DoNotOptimize(n);
        layouts = search::enumerate_layouts(job, [](const search::Layout&) {}).valid;
    }
    state.counters["layouts"] = static_cast<double>(layouts);
    state.counters["layouts_per_s"] =
        benchmark::Counter(static_cast<double>(layouts) * static_cast<double>(state.iterations()) * 2,
                           benchmark::Counter::kIsRate);
}
BENCHMARK(BM_enumerate_layouts_405b_16k)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
