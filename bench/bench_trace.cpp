// Streaming trace reader throughput: MB/s of uncompressed Kineto JSON read
// and reduced to kernel intervals, on one core (read_trace on a plain file,
// page-cached after the first iteration), and the analysis on top.
// The trace is $LOSTFLOPS_BENCH_TRACE (make a >= 1 GB one with
// scripts/make_big_trace.py), by default a test trace decompressed into a
// temporary file. Reported in notes, never asserted in tests.
// BM_kept_bytes_per_kernel: heap bytes held by read_trace's result per GPU
// event kept (glibc mallinfo2: in-use arena bytes + mmapped blocks), on a
// synthetic trace of tiny kernels, each with its cudaLaunchKernel CPU event.
#include <benchmark/benchmark.h>
#include <malloc.h>
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

std::string tiny_kernels_trace(int64_t n) {
    const auto out = (std::filesystem::temp_directory_path() / "lostflops_bench_tiny.json").string();
    FILE* f = std::fopen(out.c_str(), "wb");
    if (f == nullptr) std::exit(1);
    static const char* names[] = {"sgemm_128x128_nn", "vectorized_elementwise_kernel",
                                  "ncclKernel_AllReduce_RING_LL_Sum_float", "layer_norm_kernel"};
    std::fputs("{\"distributedInfo\": {\"rank\": 0}, \"traceEvents\": [\n", f);
    for (int64_t i = 0; i < n; ++i) {
        std::fprintf(f,
                     "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"ts\": %lld, "
                     "\"dur\": 1, \"args\": {\"correlation\": %lld}},\n"
                     "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"ts\": %lld.5, \"dur\": 2, "
                     "\"args\": {\"stream\": 7, \"correlation\": %lld}}%s\n",
                     static_cast<long long>(3 * i), static_cast<long long>(i + 1), names[i % 4],
                     static_cast<long long>(3 * i), static_cast<long long>(i + 1), i + 1 < n ? "," : "");
    }
    std::fputs("]}\n", f);
    std::fclose(f);
    return out;
}

std::size_t heap_in_use() {
    const struct mallinfo2 m = mallinfo2();
    return m.uordblks + m.hblkhd;
}

void BM_kept_bytes_per_kernel(benchmark::State& state) {
    const int64_t n = state.range(0);
    const std::string path = tiny_kernels_trace(n);
    double per_kernel = 0;
    for (auto _ : state) {
        const std::size_t before = heap_in_use();
        const auto d = lostflops::trace::read_trace(path);
        per_kernel = static_cast<double>(heap_in_use() - before) / static_cast<double>(d.gpu.size());
        benchmark::DoNotOptimize(d.gpu.size());
    }
    state.counters["kept_bytes_per_kernel"] = per_kernel;
    std::filesystem::remove(path);
}
BENCHMARK(BM_kept_bytes_per_kernel)->Arg(1 << 20)->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
