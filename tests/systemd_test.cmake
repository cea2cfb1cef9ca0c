# systemd/ (label systemd): a scratch-prefix `cmake --install` of the whole build, then
# `systemd-analyze verify` of the installed unit and the sysusers.d/tmpfiles.d snippets applied to
# an empty root directory. Needs everything built (the unit's ExecStart must exist).
if(CUZK_DAEMON)
  add_test(NAME systemd_install_verify
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/systemd_test.sh ${CMAKE_BINARY_DIR} ${CMAKE_COMMAND})
  set_tests_properties(systemd_install_verify PROPERTIES LABELS systemd TIMEOUT 180)
endif()
