# The node client (clients/js): its tests run against real daemons on the cpu backend, started by
# its harness with the daemon tests' environment and fixtures (daemon.cmake, included before this).
if(NOT CUZK_DAEMON)
  return()
endif()
add_test(NAME clients.js COMMAND ${CUZK_DAEMON_TEST_ENV} node ${PROJECT_SOURCE_DIR}/clients/js/test/harness.mjs)
set_tests_properties(clients.js PROPERTIES LABELS "daemon;client" TIMEOUT 300 SKIP_RETURN_CODE 77
  FIXTURES_REQUIRED "${_daemon_fixtures}")
