// Streaming trace reader throughput: MB/s of uncompressed Kineto JSON read
// and reduced to kernel intervals, on one core (read_trace on a plain file,
// page-cached after the first iteration), and the analysis on top; the same
// per CPU second; gzip reading and inflate alone (zlib, ISA-L, libdeflate
// when installed) on $LOSTFLOPS_BENCH_TRACE_GZ.
// The trace is $LOSTFLOPS_BENCH_TRACE (make a 300 MB one with
// scripts/make_big_trace.py), by default a generated one (trace_synth.h, about
// 40 MB) written to a temporary file; gzip rows read $LOSTFLOPS_BENCH_TRACE_GZ,
// by default the same gzipped. Reported in notes, never asserted in tests.
// BM_kept_bytes_per_kernel: heap bytes held by read_trace's result per GPU
// event kept (glibc mallinfo2: in-use arena bytes + mmapped blocks), on a
// synthetic trace of tiny kernels, each with its cudaLaunchKernel CPU event.
#include <benchmark/benchmark.h>
#include <malloc.h>
#include <isa-l/igzip_lib.h>
#include <zlib.h>
#ifdef LOSTFLOPS_BENCH_LIBDEFLATE
#include <libdeflate.h>
#endif

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <cstring>
#include <string>
#include <vector>

#include "lostflops/trace.h"
#include "lostflops/trace_synth.h"

namespace {

// A generated trace (one rank of a 16-rank job, 40 steps of 16 layers), plain or gzipped.
std::string generated_to_temp(bool gz) {
    const auto out = (std::filesystem::temp_directory_path() /
                      (gz ? "lostflops_bench_trace.json.gz" : "lostflops_bench_trace.json")).string();
    lostflops::trace::SynthSpec s;
    s.ranks = 16;
    s.tp = 8;
    s.steps = 40;
    s.layers = 16;
    s.jitter_pct = 2;
    const std::string text = lostflops::trace::synth_trace(s, 3);
    if (gz) {
        gzFile f = gzopen(out.c_str(), "wb6");
        if (f == nullptr || gzwrite(f, text.data(), static_cast<unsigned>(text.size())) <= 0) std::exit(1);
        gzclose(f);
    } else {
        FILE* f = std::fopen(out.c_str(), "wb");
        if (f == nullptr || std::fwrite(text.data(), 1, text.size(), f) != text.size()) std::exit(1);
        std::fclose(f);
    }
    return out;
}

const std::string& trace_path() {
    static const std::string path = [] {
        const char* env = std::getenv("LOSTFLOPS_BENCH_TRACE");
        if (env != nullptr && *env != '\0') return std::string(env);
        return generated_to_temp(false);
    }();
    return path;
}

void read_trace_loop(benchmark::State& state) {
    const auto& path = trace_path();
    const auto bytes = static_cast<int64_t>(std::filesystem::file_size(path));
    for (auto _ : state) {
        const auto d = lostflops::trace::read_trace(path);
        benchmark::DoNotOptimize(d.gpu.size());
    }
    state.SetBytesProcessed(state.iterations() * bytes);
}

void BM_read_trace(benchmark::State& state) { read_trace_loop(state); }
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

// The same, timed by the CPU time of the reading thread (Google Benchmark's
// default): MB/s per core, which a machine shared with other work does not
// blur as much as the wall clock.
void BM_read_trace_cpu(benchmark::State& state) { read_trace_loop(state); }
BENCHMARK(BM_read_trace_cpu)->Unit(benchmark::kMillisecond);

// gzip: $LOSTFLOPS_BENCH_TRACE_GZ (e.g. `gzip -6 -k` of the trace above), by
// default the generated trace gzipped. Bytes are the uncompressed bytes (d.bytes).
const char* gz_path() {
    static const std::string path = [] {
        const char* env = std::getenv("LOSTFLOPS_BENCH_TRACE_GZ");
        if (env != nullptr && *env != '\0') return std::string(env);
        return generated_to_temp(true);
    }();
    return path.c_str();
}

void BM_read_trace_gz_cpu(benchmark::State& state) {
    int64_t bytes = 0;
    for (auto _ : state) {
        const auto d = lostflops::trace::read_trace(gz_path());
        bytes += static_cast<int64_t>(d.bytes);
    }
    state.SetBytesProcessed(bytes);
}
BENCHMARK(BM_read_trace_gz_cpu)->Unit(benchmark::kMillisecond);

std::string slurp(const char* path) {
    FILE* f = std::fopen(path, "rb");
    if (f == nullptr) std::exit(1);
    std::string s;
    char buf[1 << 16];
    std::size_t n = 0;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
    std::fclose(f);
    return s;
}

// Inflate alone, 4 MiB of output at a time (as the reader asks), from the
// compressed file in memory: zlib (inflate, gzip wrapper) against ISA-L
// (isal_inflate, ISAL_GZIP), the reader's choice; and libdeflate, which only
// inflates a whole buffer at once, when built with it.
void BM_inflate_zlib(benchmark::State& state) {
    const std::string gz = slurp(gz_path());
    std::vector<char> out(4u << 20);
    int64_t bytes = 0;
    for (auto _ : state) {
        z_stream zs{};
        inflateInit2(&zs, 16 + MAX_WBITS);
        zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
        zs.avail_in = static_cast<uInt>(gz.size());
        int rc = Z_OK;
        while (rc == Z_OK) {
            zs.next_out = reinterpret_cast<Bytef*>(out.data());
            zs.avail_out = static_cast<uInt>(out.size());
            rc = inflate(&zs, Z_NO_FLUSH);
            bytes += static_cast<int64_t>(out.size() - zs.avail_out);
        }
        inflateEnd(&zs);
    }
    state.SetBytesProcessed(bytes);
}
BENCHMARK(BM_inflate_zlib)->Unit(benchmark::kMillisecond);

void BM_inflate_isal(benchmark::State& state) {
    const std::string gz = slurp(gz_path());
    std::vector<char> out(4u << 20);
    int64_t bytes = 0;
    for (auto _ : state) {
        inflate_state st;
        isal_inflate_init(&st);
        st.crc_flag = ISAL_GZIP;
        st.next_in = reinterpret_cast<uint8_t*>(const_cast<char*>(gz.data()));
        st.avail_in = static_cast<uint32_t>(gz.size());
        while (st.block_state != ISAL_BLOCK_FINISH) {
            st.next_out = reinterpret_cast<uint8_t*>(out.data());
            st.avail_out = static_cast<uint32_t>(out.size());
            if (isal_inflate(&st) != ISAL_DECOMP_OK) break;
            bytes += static_cast<int64_t>(out.size() - st.avail_out);
        }
    }
    state.SetBytesProcessed(bytes);
}
BENCHMARK(BM_inflate_isal)->Unit(benchmark::kMillisecond);

#ifdef LOSTFLOPS_BENCH_LIBDEFLATE
void BM_inflate_libdeflate_whole(benchmark::State& state) {
    const std::string gz = slurp(gz_path());
    uint32_t isize = 0;  // RFC 1952: uncompressed size mod 2^32 in the last 4 bytes
    std::memcpy(&isize, gz.data() + gz.size() - 4, 4);
    int64_t bytes = 0;
    for (auto _ : state) {
        std::vector<char> out(isize);  // the whole output at once: memory = uncompressed size
        libdeflate_decompressor* d = libdeflate_alloc_decompressor();
        std::size_t got = 0;
        libdeflate_gzip_decompress(d, gz.data(), gz.size(), out.data(), out.size(), &got);
        libdeflate_free_decompressor(d);
        bytes += static_cast<int64_t>(got);
    }
    state.SetBytesProcessed(bytes);
}
BENCHMARK(BM_inflate_libdeflate_whole)->Unit(benchmark::kMillisecond);
#endif

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
