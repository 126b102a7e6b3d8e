# libFuzzer targets of the calibrate area (included from fuzz/CMakeLists.txt).
lostflops_fuzzer(fuzz_nccl fuzz_nccl.cpp)
lostflops_fuzzer(fuzz_calibration fuzz_calibration.cpp)
lostflops_fuzzer(fuzz_components fuzz_components.cpp)
