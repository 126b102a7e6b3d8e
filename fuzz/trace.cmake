# libFuzzer target for the trace reader; included from fuzz/CMakeLists.txt.
# The reader's own sources are compiled into the target as well, so that they
# carry libFuzzer's coverage instrumentation (lostflops_core does not).
set(LOSTFLOPS_TRACE_FUZZ_SOURCES
  ${CMAKE_SOURCE_DIR}/src/trace/trace_source.cpp
  ${CMAKE_SOURCE_DIR}/src/trace/trace_event.cpp
  ${CMAKE_SOURCE_DIR}/src/trace/trace_keep.cpp
  ${CMAKE_SOURCE_DIR}/src/trace/trace_reader.cpp
  ${CMAKE_SOURCE_DIR}/src/trace/trace_classify.cpp
  ${CMAKE_SOURCE_DIR}/src/trace/trace_intervals.cpp
  ${CMAKE_SOURCE_DIR}/src/trace/trace_analyze.cpp)
lostflops_fuzzer(fuzz_trace ${CMAKE_CURRENT_LIST_DIR}/fuzz_trace.cpp ${LOSTFLOPS_TRACE_FUZZ_SOURCES})
