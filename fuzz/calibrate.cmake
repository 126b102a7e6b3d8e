# libFuzzer target of the calibrate area (included from fuzz/CMakeLists.txt).
lostflops_fuzzer(fuzz_nccl fuzz_nccl.cpp)
