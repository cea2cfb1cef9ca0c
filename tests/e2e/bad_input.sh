#!/usr/bin/env bash
# Malformed or mismatched inputs: cuzk must stop with a clear "error: ..." message and a non-zero
# exit status (2 for the verifier's bad files), never crash, and never leave a proof behind.
# Usage: bad_input.sh <case> <circuit> <other case> <other circuit>   (two circuits of different size)
source "$(dirname "$0")/lib.sh"
require_tools
case="$1" circuit="$2" ocase="$3" ocircuit="$4"
require_case "$circuit" "$case"
require_case "$ocircuit" "$ocase"
c="$(circuit_dir "$circuit")" k="$(case_dir "$case")"
oc="$(circuit_dir "$ocircuit")" ok="$(case_dir "$ocase")"
d="$(scratch_dir "bad_input.$case")"

# cuzk prove on bad inputs: non-zero, an error message, no proof.json.
prove_fails() {
  local tag="$1" zkey="$2" wtns="$3"
  rm -f "$d/proof.json" "$d/public.json"
  expect_rc nonzero "$d/$tag.log" "$CUZK_BIN" prove "$zkey" "$wtns" "$d/proof.json" "$d/public.json"
  grep -qi "error" "$d/$tag.log" || die "$tag: no error message; output was: $(cat "$d/$tag.log")"
  [ ! -e "$d/proof.json" ] || die "$tag: a proof.json was written despite the error"
}

zsize=$(stat -c %s "$c/circuit.zkey")
head -c $((zsize / 2)) "$c/circuit.zkey" >"$d/half.zkey"
head -c $((zsize - 1)) "$c/circuit.zkey" >"$d/minus1.zkey"
head -c 64 "$c/circuit.zkey" >"$d/header.zkey"
: >"$d/empty.zkey"
head -c 4096 /dev/urandom >"$d/random.zkey"
wsize=$(stat -c %s "$k/witness.wtns")
head -c $((wsize - 32)) "$k/witness.wtns" >"$d/short.wtns"

prove_fails truncated-half "$d/half.zkey" "$k/witness.wtns"
prove_fails truncated-by-one "$d/minus1.zkey" "$k/witness.wtns"
prove_fails header-only "$d/header.zkey" "$k/witness.wtns"
prove_fails empty-zkey "$d/empty.zkey" "$k/witness.wtns"
prove_fails random-zkey "$d/random.zkey" "$k/witness.wtns"
prove_fails truncated-wtns "$c/circuit.zkey" "$d/short.wtns"
prove_fails wtns-as-zkey "$k/witness.wtns" "$k/witness.wtns"
prove_fails zkey-as-wtns "$c/circuit.zkey" "$c/circuit.zkey"
prove_fails r1cs-as-zkey "$c/circuit.r1cs" "$k/witness.wtns"
prove_fails other-circuit-wtns "$c/circuit.zkey" "$ok/witness.wtns"
prove_fails other-circuit-zkey "$oc/circuit.zkey" "$k/witness.wtns"

# cuzk verify on malformed files: exit 2 with a message.
verify_bad() {
  local tag="$1"; shift
  expect_rc 2 "$d/$tag.log" "$CUZK_BIN" verify "$@"
  grep -qi "error" "$d/$tag.log" || die "$tag: no error message; output was: $(cat "$d/$tag.log")"
}
echo 'this is not json' >"$d/garbage.json"
echo '{"pi_a": ["1", "2", "1"], "protocol": "groth16"}' >"$d/partial_proof.json"
echo '{"not": "an array"}' >"$d/object_public.json"
echo '["12", "abc"]' >"$d/nondecimal_public.json"
verify_bad garbage-vk "$d/garbage.json" "$k/snarkjs_public.json" "$k/snarkjs_proof.json"
verify_bad garbage-public "$c/vk.json" "$d/garbage.json" "$k/snarkjs_proof.json"
verify_bad garbage-proof "$c/vk.json" "$k/snarkjs_public.json" "$d/garbage.json"
verify_bad partial-proof "$c/vk.json" "$k/snarkjs_public.json" "$d/partial_proof.json"
verify_bad object-public "$c/vk.json" "$d/object_public.json" "$k/snarkjs_proof.json"
verify_bad nondecimal-public "$c/vk.json" "$d/nondecimal_public.json" "$k/snarkjs_proof.json"
verify_bad proof-as-vk "$k/snarkjs_proof.json" "$k/snarkjs_public.json" "$k/snarkjs_proof.json"
expect_rc nonzero "$d/missing-file.log" "$CUZK_BIN" verify "$d/does_not_exist.json" "$k/snarkjs_public.json" "$k/snarkjs_proof.json"
log "PASS bad_input.$case"
