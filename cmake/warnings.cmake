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
# purpose (gcc 12 warns even then).
function(lostflops_warnings)
  foreach(t IN LISTS ARGN)
    if(TARGET ${t})
      target_compile_options(${t} PRIVATE -Wall -Wextra -Wno-missing-field-initializers $<$<BOOL:${LOSTFLOPS_WERROR}>:-Werror>)
    endif()
  endforeach()
endfunction()
