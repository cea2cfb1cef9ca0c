# Process tests of the daemon: the real supervisor and workers (cpu backend), the exact client
# command forms, kill -9 of workers and of the supervisor, proofs verified by snarkjs. They reuse
# the e2e fixtures (circom circuits with snarkjs keys and witnesses).
if(NOT CUZK_DAEMON)
  return()
endif()
set(CUZK_DAEMON_TEST_ENV ${CMAKE_COMMAND} -E env
  CUZK_SRC=${PROJECT_SOURCE_DIR}
  CUZK_BIN=$<TARGET_FILE:cuzk>
  SUP_BIN=$<TARGET_FILE:cuzk-supervisor>
  E2E_WORK=${CMAKE_BINARY_DIR}/e2e)
set(_daemon_fixtures
  e2e_circuit_poseidon_merkle e2e_case_poseidon_merkle e2e_circuit_chain_pow2 e2e_case_chain_pow2
  e2e_case_chain_zero e2e_circuit_multiplier e2e_case_multiplier
  e2e.bn128_circuit_poseidon_merkle e2e.bn128_case_poseidon_merkle e2e.bn128_circuit_multiplier
  e2e.bn128_case_multiplier)
foreach(t jobs kill_workers kill_supervisor cancel_priority bad_input heartbeat inputs inputs_wasm limits disk_full shm_full two_curves two_devices reload
          multi_node multi_node_kill multi_node_outage uploads access clients one_daemon confined state_writes key_budget crash_rows
          circuits circuit_files input_files worker_exits squatted_names removed_circuit key_wait slow_store load killed_compile)
  add_test(NAME daemon.${t} COMMAND ${CUZK_DAEMON_TEST_ENV} bash ${PROJECT_SOURCE_DIR}/tests/daemon/${t}.sh)
  set_tests_properties(daemon.${t} PROPERTIES LABELS daemon TIMEOUT 600 SKIP_RETURN_CODE 77
    FIXTURES_REQUIRED "${_daemon_fixtures}")
endforeach()
# Access by submitter class over a shared PostgreSQL store (skipped where no server can start).
add_test(NAME daemon.access_shared COMMAND ${CUZK_DAEMON_TEST_ENV} ACCESS_STORE=postgresql
  bash ${PROJECT_SOURCE_DIR}/tests/daemon/access.sh)
set_tests_properties(daemon.access_shared PROPERTIES LABELS daemon TIMEOUT 600 SKIP_RETURN_CODE 77
  FIXTURES_REQUIRED "${_daemon_fixtures}")
# Circuits added on one node and served by another, over a shared PostgreSQL store.
add_test(NAME daemon.circuits_shared COMMAND ${CUZK_DAEMON_TEST_ENV} CIRCUITS_STORE=postgresql
  bash ${PROJECT_SOURCE_DIR}/tests/daemon/circuits.sh)
set_tests_properties(daemon.circuits_shared PROPERTIES LABELS daemon TIMEOUT 600 SKIP_RETURN_CODE 77
  FIXTURES_REQUIRED "${_daemon_fixtures}")
# A 30 s run of the kill-soak (scripts/soak.sh; docs/RELIABILITY.md has the long runs).
add_test(NAME daemon.soak_smoke COMMAND ${CMAKE_COMMAND} -E env SOAK_NO_SETUP=1 BUILD_DIR=${CMAKE_BINARY_DIR}
  bash ${PROJECT_SOURCE_DIR}/scripts/soak.sh 0.5)
set_tests_properties(daemon.soak_smoke PROPERTIES LABELS daemon TIMEOUT 300
  FIXTURES_REQUIRED "${_daemon_fixtures}")
# The same on a mix named by --circuits, its proofs packed and verified afterwards.
add_test(NAME daemon.soak_mix COMMAND ${CUZK_DAEMON_TEST_ENV} BUILD_DIR=${CMAKE_BINARY_DIR}
  bash ${PROJECT_SOURCE_DIR}/tests/daemon/soak_mix.sh)
set_tests_properties(daemon.soak_mix PROPERTIES LABELS daemon TIMEOUT 300
  FIXTURES_REQUIRED "${_daemon_fixtures}")
