# Cross-check against @noble/curves: a fixture writes fresh random vectors with node (seed printed in
# the log; CUZK_NOBLE_SEED, else CUZK_TEST_SEED, replays one), then the Noble.* GoogleTests (cuzk_noble_tests) run on them.
set(CUZK_NOBLE_VECTORS ${CMAKE_BINARY_DIR}/noble_vectors.json)
add_test(NAME noble.vectors
  COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/run.sh gen ${PROJECT_SOURCE_DIR} ${CUZK_NOBLE_VECTORS})
set_tests_properties(noble.vectors PROPERTIES
  FIXTURES_SETUP noble_vectors LABELS noble TIMEOUT 300 SKIP_RETURN_CODE 77)
add_test(NAME noble.crosscheck
  COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/run.sh test ${CUZK_NOBLE_VECTORS} $<TARGET_FILE:cuzk_noble_tests>)
set_tests_properties(noble.crosscheck PROPERTIES
  FIXTURES_REQUIRED noble_vectors LABELS noble TIMEOUT 300 SKIP_RETURN_CODE 77
  ENVIRONMENT CUZK_NOBLE_VECTORS=${CUZK_NOBLE_VECTORS})
