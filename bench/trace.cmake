# Trace reader throughput (MB/s of uncompressed JSON); included from bench/CMakeLists.txt.
add_executable(bench_trace ${CMAKE_CURRENT_LIST_DIR}/bench_trace.cpp)
target_link_libraries(bench_trace PRIVATE lostflops_core benchmark::benchmark ZLIB::ZLIB)
target_compile_definitions(bench_trace PRIVATE LOSTFLOPS_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
set_target_properties(bench_trace PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
