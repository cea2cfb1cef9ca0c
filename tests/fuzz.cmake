# Fuzzing (label fuzz): where clang can link libFuzzer, scripts/fuzz.sh builds the fuzz targets into
# <build>/fuzz (clang, ASan + UBSan; a fixture), then each target runs CUZK_FUZZ_SECONDS (default 20)
# over its seed corpus and what earlier runs kept in <build>/fuzz/corpus. A crash, leak, UB report,
# failed invariant or an input slower than 10 s fails the test; the input is in
# <build>/fuzz/artifacts/<target>/. Long runs: scripts/fuzz.sh TARGET SECONDS (docs/RELIABILITY.md).
if(CUZK_FUZZ OR NOT CUZK_DAEMON)
  return()
endif()
find_program(CUZK_CLANGXX clang++)
if(NOT CUZK_CLANGXX)
  message(STATUS "fuzz tests: clang++ not found, not registered")
  return()
endif()
set(_probe ${CMAKE_BINARY_DIR}/CMakeFiles/fuzz_probe)
file(WRITE ${_probe}.cpp
     "#include <cstddef>\n#include <cstdint>\nextern \"C\" int LLVMFuzzerTestOneInput(const uint8_t*, size_t) { return 0; }\n")
execute_process(COMMAND ${CUZK_CLANGXX} -fsanitize=fuzzer,address,undefined ${_probe}.cpp -o ${_probe}
                RESULT_VARIABLE _probe_rc OUTPUT_QUIET ERROR_QUIET)
if(NOT _probe_rc EQUAL 0)
  message(STATUS "fuzz tests: ${CUZK_CLANGXX} cannot link -fsanitize=fuzzer (Debian: libclang-rt-dev), not registered")
  return()
endif()

set(CUZK_FUZZ_SECONDS 20 CACHE STRING "Seconds each fuzz target runs under ctest")
set(_fuzz_env ${CMAKE_COMMAND} -E env BUILD_DIR=${CMAKE_BINARY_DIR}/fuzz)
# The build is the longest test and only the fuzz runs wait for it: it starts first (COST, for a
# build without ctest's timings yet) and runs at the lowest priority, so that it takes the CPU time
# the other tests leave while they wait on their daemons, and never slows their timed steps.
add_test(NAME fuzz.build COMMAND ${_fuzz_env} JOBS=2 nice -n 19 bash ${PROJECT_SOURCE_DIR}/scripts/fuzz.sh build)
set_tests_properties(fuzz.build PROPERTIES LABELS fuzz TIMEOUT 1800 FIXTURES_SETUP cuzk_fuzz COST 10000)
# A run is CPU-bound for its whole time: it holds a core (two of scripts/test.sh's slots).
foreach(t zkey wtns r1cs config http submit spool msg verify_json inputs)
  add_test(NAME fuzz.${t}
           COMMAND ${_fuzz_env} FUZZ_NO_BUILD=1 FUZZ_TIMEOUT=10
                   bash ${PROJECT_SOURCE_DIR}/scripts/fuzz.sh ${t} ${CUZK_FUZZ_SECONDS})
  set_tests_properties(fuzz.${t} PROPERTIES LABELS fuzz TIMEOUT 300 FIXTURES_REQUIRED cuzk_fuzz PROCESSORS 2)
endforeach()
