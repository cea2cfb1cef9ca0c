# End-to-end tests against snarkjs and circom (npm packages from package.json; run `npm ci` first).
# The ceremony and the compiled circuits are ctest fixtures cached under <build>/e2e, so a re-run
# only proves and verifies. Without node_modules the tests skip, except under CI where they fail.
#
# Cases: <case>:<circuit>; tests/e2e/inputs/<case>.json feeds tests/e2e/circuits/<circuit>.circom.
set(CUZK_E2E_CASES
  multiplier:multiplier             # one constraint, one public output
  no_public:no_public               # nPublic = 0
  many_public:many_public           # 56 public signals, among them 0 and r-1
  poseidon_merkle:poseidon_merkle   # circomlib Poseidon, depth-3 Merkle path, domain 1024
  chain_pow2:chain_pow2             # nConstraints + nPublic + 1 == 256 exactly
  chain_pow2_plus1:chain_pow2_plus1 # one row past 256: domain 512
  chain_zero:chain_pow2             # all-zero witness apart from the constant wire
)
# Cases that also get the negative, CLI and cross-setup tests.
set(CUZK_E2E_TAMPER_CASES multiplier no_public many_public)
set(CUZK_E2E_SETUP_CASES no_public many_public poseidon_merkle chain_pow2 chain_zero)

set(CUZK_E2E_DIR ${PROJECT_SOURCE_DIR}/tests/e2e)
set(CUZK_E2E_ENV ${CMAKE_COMMAND} -E env
  CUZK_SRC=${PROJECT_SOURCE_DIR}
  CUZK_BIN=$<TARGET_FILE:cuzk>
  E2E_WORK=${CMAKE_BINARY_DIR}/e2e)

# One e2e test: a bash script from tests/e2e with its arguments, labelled e2e, 77 = skipped.
function(cuzk_e2e_test name timeout script)
  add_test(NAME ${name} COMMAND ${CUZK_E2E_ENV} bash ${CUZK_E2E_DIR}/${script} ${ARGN})
  set_tests_properties(${name} PROPERTIES LABELS e2e TIMEOUT ${timeout} SKIP_RETURN_CODE 77)
endfunction()

cuzk_e2e_test(e2e.setup.ptau 1200 ptau.sh)
set_tests_properties(e2e.setup.ptau PROPERTIES FIXTURES_SETUP e2e_ptau)

set(_circuits "")
foreach(entry ${CUZK_E2E_CASES})
  string(REPLACE ":" ";" parts ${entry})
  list(GET parts 0 case)
  list(GET parts 1 circuit)
  set(CUZK_E2E_CIRCUIT_OF_${case} ${circuit})
  if(NOT circuit IN_LIST _circuits)
    list(APPEND _circuits ${circuit})
    cuzk_e2e_test(e2e.setup.circuit.${circuit} 600 circuit.sh ${circuit})
    set_tests_properties(e2e.setup.circuit.${circuit} PROPERTIES
      FIXTURES_SETUP e2e_circuit_${circuit} FIXTURES_REQUIRED e2e_ptau)
    cuzk_e2e_test(e2e.export_vk.${circuit} 120 export_vk.sh ${circuit})
    set_tests_properties(e2e.export_vk.${circuit} PROPERTIES FIXTURES_REQUIRED e2e_circuit_${circuit})
  endif()
  cuzk_e2e_test(e2e.setup.case.${case} 300 witness.sh ${case} ${circuit})
  set_tests_properties(e2e.setup.case.${case} PROPERTIES
    FIXTURES_SETUP e2e_case_${case} FIXTURES_REQUIRED e2e_circuit_${circuit})
  cuzk_e2e_test(e2e.prove.${case} 300 prove.sh ${case} ${circuit})
  set_tests_properties(e2e.prove.${case} PROPERTIES
    FIXTURES_REQUIRED "e2e_circuit_${circuit};e2e_case_${case}")
  cuzk_e2e_test(e2e.witness_calc.${case} 600 witness_calc.sh ${case} ${circuit})
  set_tests_properties(e2e.witness_calc.${case} PROPERTIES
    FIXTURES_REQUIRED "e2e_circuit_${circuit};e2e_case_${case}")
endforeach()

foreach(case ${CUZK_E2E_TAMPER_CASES})
  set(circuit ${CUZK_E2E_CIRCUIT_OF_${case}})
  cuzk_e2e_test(e2e.tamper.${case} 300 tamper.sh ${case} ${circuit})
  set_tests_properties(e2e.tamper.${case} PROPERTIES
    FIXTURES_REQUIRED "e2e_circuit_${circuit};e2e_case_${case}")
endforeach()

foreach(case ${CUZK_E2E_SETUP_CASES})
  set(circuit ${CUZK_E2E_CIRCUIT_OF_${case}})
  cuzk_e2e_test(e2e.cuzk_setup.${case} 300 cuzk_setup.sh ${case} ${circuit})
  set_tests_properties(e2e.cuzk_setup.${case} PROPERTIES
    FIXTURES_REQUIRED "e2e_circuit_${circuit};e2e_case_${case}")
endforeach()

cuzk_e2e_test(e2e.cli_flags 300 cli_flags.sh poseidon_merkle poseidon_merkle)
set_tests_properties(e2e.cli_flags PROPERTIES
  FIXTURES_REQUIRED "e2e_circuit_poseidon_merkle;e2e_case_poseidon_merkle")

cuzk_e2e_test(e2e.bad_input 300 bad_input.sh poseidon_merkle poseidon_merkle multiplier multiplier)
set_tests_properties(e2e.bad_input PROPERTIES FIXTURES_REQUIRED
  "e2e_circuit_poseidon_merkle;e2e_case_poseidon_merkle;e2e_circuit_multiplier;e2e_case_multiplier")

# SHA-256 at domain 2^16 with a `cuzk setup` key (a ceremony at that size takes most of an hour).
cuzk_e2e_test(e2e.sha256 900 sha256.sh)

cuzk_e2e_test(e2e.witness_bad 600 witness_bad.sh)
set_tests_properties(e2e.witness_bad PROPERTIES FIXTURES_REQUIRED
  "e2e_circuit_poseidon_merkle;e2e_case_poseidon_merkle;e2e_circuit_multiplier;e2e_case_multiplier")
