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

# BN254 (circom's default prime, snarkjs's bn128): the same scripts over bn128 fixtures of their own.
set(CUZK_E2E_BN128_CASES
  multiplier:multiplier
  no_public:no_public
  many_public:many_public
  poseidon_merkle:poseidon_merkle
  chain_pow2_plus1:chain_pow2_plus1
)
set(CUZK_E2E_BN128_TAMPER_CASES multiplier many_public)
set(CUZK_E2E_BN128_SETUP_CASES many_public poseidon_merkle)

set(CUZK_E2E_DIR ${PROJECT_SOURCE_DIR}/tests/e2e)

# One e2e test: a bash script from tests/e2e with its arguments, labelled e2e, 77 = skipped; its
# fixtures are over the curve `curve` (circom's prime name). Each computes (snarkjs, circom, the
# compilers, cuzk) most of its time, so it holds a core: two of scripts/test.sh's slots.
function(cuzk_e2e_test_on curve name timeout script)
  add_test(NAME ${name} COMMAND ${CMAKE_COMMAND} -E env
    CUZK_SRC=${PROJECT_SOURCE_DIR} CUZK_BIN=$<TARGET_FILE:cuzk> E2E_WORK=${CMAKE_BINARY_DIR}/e2e E2E_CURVE=${curve}
    bash ${CUZK_E2E_DIR}/${script} ${ARGN})
  set_tests_properties(${name} PROPERTIES LABELS e2e TIMEOUT ${timeout} SKIP_RETURN_CODE 77 PROCESSORS 2)
endfunction()
function(cuzk_e2e_test name timeout script)
  cuzk_e2e_test_on(bls12381 ${name} ${timeout} ${script} ${ARGN})
endfunction()

# The ceremony, the circuits, their witnesses and the prove / verify / tamper / setup tests of one
# curve. Test and fixture names carry `tag` (empty for BLS12-381, ".bn128" for BN254).
function(cuzk_e2e_suite curve tag cases tamper_cases setup_cases)
  cuzk_e2e_test_on(${curve} e2e${tag}.setup.ptau 1200 ptau.sh)
  set_tests_properties(e2e${tag}.setup.ptau PROPERTIES FIXTURES_SETUP e2e${tag}_ptau)
  set(_circuits "")
  foreach(entry ${cases})
    string(REPLACE ":" ";" parts ${entry})
    list(GET parts 0 case)
    list(GET parts 1 circuit)
    set(circuit_of_${case} ${circuit})
    if(NOT circuit IN_LIST _circuits)
      list(APPEND _circuits ${circuit})
      cuzk_e2e_test_on(${curve} e2e${tag}.setup.circuit.${circuit} 600 circuit.sh ${circuit})
      set_tests_properties(e2e${tag}.setup.circuit.${circuit} PROPERTIES
        FIXTURES_SETUP e2e${tag}_circuit_${circuit} FIXTURES_REQUIRED e2e${tag}_ptau)
      cuzk_e2e_test_on(${curve} e2e${tag}.export_vk.${circuit} 120 export_vk.sh ${circuit})
      set_tests_properties(e2e${tag}.export_vk.${circuit} PROPERTIES FIXTURES_REQUIRED e2e${tag}_circuit_${circuit})
    endif()
    cuzk_e2e_test_on(${curve} e2e${tag}.setup.case.${case} 300 witness.sh ${case} ${circuit})
    set_tests_properties(e2e${tag}.setup.case.${case} PROPERTIES
      FIXTURES_SETUP e2e${tag}_case_${case} FIXTURES_REQUIRED e2e${tag}_circuit_${circuit})
    foreach(kind prove witness_calc)
      cuzk_e2e_test_on(${curve} e2e${tag}.${kind}.${case} 600 ${kind}.sh ${case} ${circuit})
      set_tests_properties(e2e${tag}.${kind}.${case} PROPERTIES
        FIXTURES_REQUIRED "e2e${tag}_circuit_${circuit};e2e${tag}_case_${case}")
    endforeach()
  endforeach()
  foreach(kind_cases tamper:tamper_cases cuzk_setup:setup_cases)
    string(REPLACE ":" ";" kc ${kind_cases})
    list(GET kc 0 kind)
    list(GET kc 1 var)
    foreach(case ${${var}})
      set(circuit ${circuit_of_${case}})
      cuzk_e2e_test_on(${curve} e2e${tag}.${kind}.${case} 300 ${kind}.sh ${case} ${circuit})
      set_tests_properties(e2e${tag}.${kind}.${case} PROPERTIES
        FIXTURES_REQUIRED "e2e${tag}_circuit_${circuit};e2e${tag}_case_${case}")
    endforeach()
  endforeach()
endfunction()

cuzk_e2e_suite(bls12381 "" "${CUZK_E2E_CASES}" "${CUZK_E2E_TAMPER_CASES}" "${CUZK_E2E_SETUP_CASES}")
cuzk_e2e_suite(bn128 ".bn128" "${CUZK_E2E_BN128_CASES}" "${CUZK_E2E_BN128_TAMPER_CASES}"
               "${CUZK_E2E_BN128_SETUP_CASES}")

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

# Generators of different circuits sharing one compile of circom's runtime, and that compile redone
# for changed sources or another compiler.
cuzk_e2e_test(e2e.witness_runtime 600 witness_runtime.sh)
set_tests_properties(e2e.witness_runtime PROPERTIES FIXTURES_REQUIRED
  "e2e_circuit_multiplier;e2e_case_multiplier;e2e_circuit_no_public;e2e_case_no_public;e2e_circuit_many_public;e2e_case_many_public")

# The compiled witness program on every operation of circom's runtime, and on inputs that take
# other paths through the circuit's code than the one it was traced on.
cuzk_e2e_test(e2e.witness_program 600 witness_program.sh)
cuzk_e2e_test_on(bn128 e2e.witness_program.bn128 600 witness_program.sh)

# circom's .wasm as the witness generator: the same circuit at every optimisation level, natively and
# as the program traced on it; its assert's message; a module that traps.
cuzk_e2e_test(e2e.witness_wasm 600 witness_wasm.sh)
cuzk_e2e_test_on(bn128 e2e.witness_wasm.bn128 600 witness_wasm.sh)

cuzk_e2e_test(e2e.curve_mismatch 120 curve_mismatch.sh multiplier multiplier)
set_tests_properties(e2e.curve_mismatch PROPERTIES FIXTURES_REQUIRED
  "e2e_circuit_multiplier;e2e_case_multiplier;e2e.bn128_circuit_multiplier;e2e.bn128_case_multiplier")

# Both gen-circuit profiles against snarkjs: wtns check, a cuzk setup key, cuzk's proof verified.
cuzk_e2e_test(e2e.gen_circuit 300 gen_circuit.sh 12)
cuzk_e2e_test_on(bn128 e2e.gen_circuit.bn128 300 gen_circuit.sh 12)
