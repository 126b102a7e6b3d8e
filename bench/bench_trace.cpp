// Streaming trace reader throughput: MB/s of uncompressed Kineto JSON read
// and reduced to kernel intervals, on one core (read_trace on a plain file,
// page-cached after the first iteration), and the analysis on top.
// The trace is $LOSTFLOPS_BENCH_TRACE (make a >= 1 GB one with
// scripts/make_big_trace.py), by default a test trace decompressed into a
// temporary file. Reported in notes, never asserted in tests.
#include <benchmark/benchmark.h>
#include <zlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "lostflops/trace.h"

namespace {

std::string decompress_to_temp(const std::string& gz_path) {
    const auto out = (std::filesystem::temp_directory_path() / "lostflops_bench_trace.json").string();
    gzFile in = gzopen(gz_path.c_str(), "rb");
    FILE* f = std::fopen(out.c_str(), "wb");
    if (in == nullptr || f == nullptr) {
        std::fprintf(stderr, "bench_trace: cannot prepare %s\n", out.c_str());
        std::exit(1);
    }
    char buf[1 << 16];
    int n = 0;
    while ((n = gzread(in, buf, sizeof buf)) > 0) std::fwrite(buf, 1, static_cast<std::size_t>(n), f);
    gzclose(in);
    std::fclose(f);
    return out;
}

const std::string& trace_path() {
    static const std::string path = [] {
        const char* env = std::getenv("LOSTFLOPS_BENCH_TRACE");
        if (env != nullptr && *env != '\0') return std::string(env);
        return decompress_to_temp(std::string(LOSTFLOPS_SOURCE_DIR) +
                                  "/tests/data/trace/v100-2rank-allreduce.rank1.json.gz");
    }();
    return path;
}

void BM_read_trace(benchmark::State& state) {
    const auto& path = trace_path();
    const auto bytes = static_cast<int64_t>(std::filesystem::file_size(path));
    for (auto _ : state) {
        const auto d = lostflops::trace::read_trace(path);
        benchmark::DoNotOptimize(d.gpu.size());
    }
    state.SetBytesProcessed(state.iterations() * bytes);
}
BENCHMARK(BM_read_trace)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_read_and_analyze_hta(benchmark::State& state) {
    const auto& path = trace_path();
    const auto bytes = static_cast<int64_t>(std::filesystem::file_size(path));
    for (auto _ : state) {
        const auto d = lostflops::trace::read_trace(path);
        benchmark::DoNotOptimize(lostflops::trace::analyze(d, {true}).compute_us);
    }
    state.SetBytesProcessed(state.iterations() * bytes);
}
BENCHMARK(BM_read_and_analyze_hta)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
