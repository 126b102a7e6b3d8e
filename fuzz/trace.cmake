# libFuzzer target for the trace reader; included from fuzz/CMakeLists.txt.
lostflops_fuzzer(fuzz_trace fuzz_trace.cpp)
