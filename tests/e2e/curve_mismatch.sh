#!/usr/bin/env bash
# Files of two curves never mix: a BN254 key with a BLS12-381 witness, or a verification key with a
# proof of the other curve, is a clear error that names both files and both curves.
# Usage: curve_mismatch.sh <case> <circuit>   (a case with fixtures on both curves)
source "$(dirname "$0")/lib.sh"
require_tools
case="$1" circuit="$2"
E2E_CURVE=bn128 CURVE_SUFFIX=.bn128
bn_c="$(circuit_dir "$circuit")" bn_k="$(case_dir "$case")"
CURVE_SUFFIX=""
bls_c="$(circuit_dir "$circuit")" bls_k="$(case_dir "$case")"
for f in "$bn_c/circuit.zkey" "$bn_k/witness.wtns" "$bls_c/vk.json" "$bls_k/snarkjs_proof.json" "$bn_c/vk.json"; do
  [ -f "$f" ] || die "fixture $f is missing (its e2e setup test failed?)"
done
d="$(scratch_dir "curve_mismatch.$case")"

expect_mentions() {  # log, then the strings the message must contain
  local logfile="$1"; shift
  for s in "$@"; do grep -qF -- "$s" "$logfile" || die "$(basename "$logfile") lacks \"$s\": $(tail -n 3 "$logfile")"; done
}

expect_rc nonzero "$d/prove.log" "$CUZK_BIN" prove "$bn_c/circuit.zkey" "$bls_k/witness.wtns" "$d/p.json" "$d/pub.json"
expect_mentions "$d/prove.log" "$bn_c/circuit.zkey" "$bls_k/witness.wtns" BN254 BLS12-381
[ ! -e "$d/p.json" ] || die "a proof was written for mismatched files"

expect_rc nonzero "$d/verify.log" "$CUZK_BIN" verify "$bn_c/vk.json" "$bls_k/snarkjs_public.json" "$bls_k/snarkjs_proof.json"
expect_mentions "$d/verify.log" "$bn_c/vk.json" "$bls_k/snarkjs_proof.json" BN254 BLS12-381

expect_rc 0 "$d/info.log" "$CUZK_BIN" info "$bn_c/circuit.zkey"
expect_mentions "$d/info.log" "Groth16, BN254"
log "PASS curve_mismatch.$case"
