# Trace reader throughput (MB/s of uncompressed JSON); included from bench/CMakeLists.txt.
add_executable(bench_trace ${CMAKE_CURRENT_LIST_DIR}/bench_trace.cpp)
target_link_libraries(bench_trace PRIVATE lostflops_core benchmark::benchmark ZLIB::ZLIB PkgConfig::ISAL)
# libdeflate (Debian libdeflate-dev), optional, only for the gzip comparison of bench_trace.
find_library(LIBDEFLATE_LIBRARY deflate)
find_path(LIBDEFLATE_INCLUDE libdeflate.h)
if(LIBDEFLATE_LIBRARY AND LIBDEFLATE_INCLUDE)
  target_compile_definitions(bench_trace PRIVATE LOSTFLOPS_BENCH_LIBDEFLATE)
  target_link_libraries(bench_trace PRIVATE ${LIBDEFLATE_LIBRARY})
endif()
target_compile_definitions(bench_trace PRIVATE LOSTFLOPS_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
set_target_properties(bench_trace PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
