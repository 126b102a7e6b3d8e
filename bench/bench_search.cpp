// The exhaustive search of issue 8: Llama-3.1-405B, sequence 8,192, global
// batch 2,048 on 16,384 H100, every knob. Reports the search's wall time per
// iteration (real_time), plans enumerated and evaluated per second (counters
// enumerated_per_s, evaluated_per_s), and the layout enumeration alone;
// threads:0 is every core; table:1 keeps the best plans as the table does,
// table:0 every plan; the layout space of 110,880 GPUs; the JSON ranking,
// default and whole.
// Reported in notes and README, never asserted.
#include <benchmark/benchmark.h>

#include "lostflops/job.h"
#include <thread>

#include "lostflops/search.h"
#include "lostflops/search_report.h"
#include "search/enumerate.h"
#include "search/layout_space.h"

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

// The 256-expert search of issue 22: DeepSeek-V3 (preset; the model and
// cluster of examples/deepseek-v3-2048xh800-goodput.yaml) on 2,048 H800,
// sequence 4,096, global batch 15,360, micro-batch fixed at 1, every other
// knob searched (as `lostflops search JOB --fix micro_batch_size=1`): a
// stack of two layer kinds (3 dense, 58 MoE) and an MTP module, so every
// pipeline pass is timed by the pass rule. threads:0 is every core.
void BM_search_deepseek_v3_2048(benchmark::State& state) {
    const SearchJob sj = default_search_job({"model={preset: deepseek-v3}", "cluster={preset: hgx-h800, num_gpus: 2048}",
                                             "training.seq_length=4096", "training.global_batch_size=15360",
                                             "training.micro_batch_size=1", "training.precision=fp8"});
    const Calibration cal = default_calibration();
    SearchOptions o;
    o.threads = static_cast<int>(state.range(0));
    o.sort_top = 5;
    o.keep_best = size_t{1} << 16;  // as the CLI's table keeps them
    o.fix = plan_fix_from(sj);  // the job's launch stack, as the CLI takes it
    add_plan_fix(o.fix, "micro_batch_size=1", "bench");
    SearchCounts c;
    for (auto _ : state) {
        const SearchResult r = search_plans(sj.job, cal, o);
        c = r.counts;
        benchmark::DoNotOptimize(r.ranked.data());
    }
    state.counters["layouts"] = static_cast<double>(c.layouts);
    state.counters["enumerated"] = static_cast<double>(c.enumerated);
    state.counters["evaluated"] = static_cast<double>(c.evaluated);
}
BENCHMARK(BM_search_deepseek_v3_2048)->ArgName("threads")->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);

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

// The layout space of GPU counts with many divisors (issue 21): 110,880 H100
// (2^5 x 3^2 x 5 x 7 x 11: 35,840 shapes tp x cp x pp), global batch 2,520
// or 110,880: every candidate walked and its plans counted, as the search's
// first stage does; threads:0 every core.
void BM_layout_space_110880(benchmark::State& state) {
    const SearchJob sj = default_search_job({"model={preset: llama3.1-405b}", "cluster.num_gpus=110880",
                                             "training.seq_length=8192",
                                             "training.global_batch_size=" + std::to_string(state.range(0))});
    const unsigned threads = state.range(1) > 0 ? static_cast<unsigned>(state.range(1)) : std::thread::hardware_concurrency();
    search::LayoutSpace s;
    for (auto _ : state) {
        s = search::layout_space(sj.job, PlanFix{}, search::LayoutFix{}, threads);
        benchmark::DoNotOptimize(s.layouts.data());
    }
    state.counters["layouts"] = static_cast<double>(s.layouts.size());
    state.counters["enumerated"] = static_cast<double>(s.plans + s.rejected_plans);
}
BENCHMARK(BM_layout_space_110880)->ArgNames({"batch", "threads"})->Args({2520, 1})->Args({2520, 0})
    ->Args({110880, 1})->Args({110880, 0})->Unit(benchmark::kMillisecond)->UseRealTime();

// The JSON ranking of examples/llama3.1-405b-16384xh100-search.yaml (issue
// 21): listing:5 the default (the first 5 plans, searched as the table
// keeps them), listing:0 every plan streamed chunk by chunk (--top all);
// bytes written to a counter, not kept.
void BM_search_json_405b_16k(benchmark::State& state) {
    const SearchJob sj = load_search_job(std::string(LOSTFLOPS_SOURCE_DIR) + "/examples/llama3.1-405b-16384xh100-search.yaml", {});
    const Calibration cal = default_calibration();
    const auto top = static_cast<size_t>(state.range(0));
    size_t bytes = 0;
    for (auto _ : state) {
        SearchOptions o;
        SearchView v;
        v.limit = top;
        keep_for_listing(o, top, v.other_shapes);
        const SearchResult r = search_plans(sj.job, cal, o);
        bytes = 0;
        search_json(sj.job, cal, r, v, [&](std::string_view s) { bytes += s.size(); },
                    top == 0 ? every_plan(sj.job, cal, o, r) : PlanChunks{});
    }
    state.counters["bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_search_json_405b_16k)->ArgName("listing")->Arg(5)->Arg(0)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
