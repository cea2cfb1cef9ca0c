#!/usr/bin/env bash
# cuzk computes witnesses from circuit inputs with circom's C++ generator, and with circom's .wasm
# alone: `cuzk witness calc` writes the same bytes as `snarkjs wtns calculate`, and `cuzk prove
# --input` proves in one step with a proof snarkjs accepts and the same public.json as snarkjs's.
# Usage: witness_calc.sh <case> <circuit>
source "$(dirname "$0")/lib.sh"
require_tools
case="$1" circuit="$2"
require_case "$circuit" "$case"
c="$(circuit_dir "$circuit")" k="$(case_dir "$case")" g="$(generator_dir "$circuit")"
d="$(scratch_dir "witness_calc.$case")"
input="$(case_input "$case")"

expect_rc 0 "$d/calc.log" "$CUZK_BIN" witness calc "$g" "$input" "$d/witness.wtns"
cmp "$d/witness.wtns" "$k/witness.wtns" || die "cuzk witness calc and snarkjs wtns calculate differ for $case"
log "witness.wtns is byte-identical to snarkjs's"

expect_rc 0 "$d/prove.log" "$CUZK_BIN" prove --input "$input" --witness-generator "$g" \
  "$c/circuit.zkey" "$d/proof.json" "$d/public.json"
json_equal "$d/public.json" "$k/snarkjs_public.json"
expect_rc 0 "$d/snarkjs_verify.log" snarkjs groth16 verify "$c/vk.json" "$d/public.json" "$d/proof.json"

# An artefact built ahead of time (`cuzk witness build`) serves the same witness (checked on the
# smallest circuit: a build costs a full compile).
if [ "$case" = multiplier ]; then
  expect_rc 0 "$d/build.log" "$CUZK_BIN" witness build "$g" "$d/artefact"
  expect_rc 0 "$d/calc2.log" "$CUZK_BIN" witness calc "$d/artefact" "$input" "$d/witness2.wtns"
  cmp "$d/witness2.wtns" "$k/witness.wtns" || die "the prebuilt artefact's witness differs for $case"
fi
# The circuit's .wasm, the one snarkjs computed the reference with: natively, then as the program
# traced on this input (the first call builds it), then in one prove.
if command -v wasm2c >/dev/null 2>&1 || [ -n "${CI:-}" ]; then
  expect_rc 0 "$d/wasm_native.log" "$CUZK_BIN" witness calc --engine native "$c/circuit.wasm" "$input" "$d/wasm_native.wtns"
  cmp "$d/wasm_native.wtns" "$k/witness.wtns" || die "the native wasm's witness differs from snarkjs's for $case"
  expect_rc 0 "$d/wasm_first.log" "$CUZK_BIN" witness calc "$c/circuit.wasm" "$input" "$d/wasm_first.wtns"
  expect_rc 0 "$d/wasm_program.log" "$CUZK_BIN" witness calc "$c/circuit.wasm" "$input" "$d/wasm_program.wtns"
  grep -q "(program)" "$d/wasm_program.log" || die "the program traced on the wasm did not run: $(cat "$d/wasm_program.log")"
  for f in wasm_first wasm_program; do
    cmp "$d/$f.wtns" "$k/witness.wtns" || die "$f: the witness from the wasm differs from snarkjs's for $case"
  done
  expect_rc 0 "$d/prove_wasm.log" "$CUZK_BIN" prove --input "$input" --witness-generator "$c/circuit.wasm" \
    "$c/circuit.zkey" "$d/proof_wasm.json" "$d/public_wasm.json"
  json_equal "$d/public_wasm.json" "$k/snarkjs_public.json"
  expect_rc 0 "$d/snarkjs_verify_wasm.log" snarkjs groth16 verify "$c/vk.json" "$d/public_wasm.json" "$d/proof_wasm.json"
  log "from circuit.wasm: byte-identical to snarkjs's, natively and as the program; the proof verifies"
else
  log "wasm2c is not installed (Debian's wabt): the .wasm is not tried"
fi
log "PASS witness_calc.$case"
