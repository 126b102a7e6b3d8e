# Compiler warnings for every target the project builds (the library, the
# CLI, the tests, the benchmarks, the Python module, the fuzz targets), and
# -Werror when LOSTFLOPS_WERROR is ON (`make check`, hence CI, turns it on).
# Third-party headers come from /usr/include as system headers, so their
# warnings are not ours to fix and do not count.
option(LOSTFLOPS_WERROR "treat compiler warnings as errors" OFF)

# lostflops_warnings(TARGET...): -Wall -Wextra (and -Werror) on each target
# that exists in this configuration; the others are skipped. Not
# -Wmissing-field-initializers: the tests brace-initialise event and row
# structs leaving trailing members to their default member initializers, on
# purpose (gcc 12 warns even then). Nor, on gcc 12, the middle-end warnings
# it reports falsely inside libstdc++'s inlined std::string code at -O2/-O3
# (-Wrestrict on `"x" + str`: GCC bug 105329; googletest issue 4108, Catch2
# issue 2522): which lines trip them depends on constant string lengths, even
# the length of the source directory's path, so a clean clone elsewhere could
# fail where this one passes.
set(LOSTFLOPS_GCC12_FALSE_POSITIVES "")
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  set(LOSTFLOPS_GCC12_FALSE_POSITIVES -Wno-restrict -Wno-array-bounds -Wno-stringop-overflow -Wno-stringop-overread)
endif()
function(lostflops_warnings)
  foreach(t IN LISTS ARGN)
    if(TARGET ${t})
      target_compile_options(${t} PRIVATE -Wall -Wextra -Wno-missing-field-initializers ${LOSTFLOPS_GCC12_FALSE_POSITIVES} $<$<BOOL:${LOSTFLOPS_WERROR}>:-Werror>)
    endif()
  endforeach()
endfunction()
