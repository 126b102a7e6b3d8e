# libFuzzer targets for the trace reader and the trace summary reader; included from fuzz/CMakeLists.txt.
lostflops_fuzzer(fuzz_trace fuzz_trace.cpp)
lostflops_fuzzer(fuzz_trace_summary fuzz_trace_summary.cpp)
