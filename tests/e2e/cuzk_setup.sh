#!/usr/bin/env bash
# Keys from `cuzk setup` work in snarkjs: snarkjs exports the same verification key as cuzk, snarkjs
# proves with the key, and both verifiers accept; cuzk's own proof with that key passes snarkjs too.
# The same --seed gives the same key, byte for byte.
# Usage: cuzk_setup.sh <case> <circuit>
source "$(dirname "$0")/lib.sh"
require_tools
case="$1" circuit="$2"
require_case "$circuit" "$case"
c="$(circuit_dir "$circuit")" k="$(case_dir "$case")"
d="$(scratch_dir "cuzk_setup.$case")"

expect_rc 0 "$d/setup.log" "$CUZK_BIN" setup "$c/circuit.r1cs" "$d/cuzk.zkey" --seed 20240101
expect_rc 0 "$d/setup2.log" "$CUZK_BIN" setup "$c/circuit.r1cs" "$d/cuzk2.zkey" --seed 20240101
cmp -s "$d/cuzk.zkey" "$d/cuzk2.zkey" || die "cuzk setup with the same --seed wrote different keys"

expect_rc 0 "$d/cuzk_export.log" "$CUZK_BIN" export vk "$d/cuzk.zkey" "$d/cuzk_vk.json"
expect_rc 0 "$d/snarkjs_export.log" snarkjs zkey export verificationkey "$d/cuzk.zkey" "$d/snarkjs_vk.json"
json_equal "$d/cuzk_vk.json" "$d/snarkjs_vk.json"

expect_rc 0 "$d/snarkjs_prove.log" snarkjs groth16 prove "$d/cuzk.zkey" "$k/witness.wtns" "$d/sj_proof.json" "$d/sj_public.json"
expect_rc 0 "$d/snarkjs_verify.log" snarkjs groth16 verify "$d/snarkjs_vk.json" "$d/sj_public.json" "$d/sj_proof.json"
expect_rc 0 "$d/cuzk_verify.log" "$CUZK_BIN" verify "$d/cuzk_vk.json" "$d/sj_public.json" "$d/sj_proof.json"
json_equal "$d/sj_public.json" "$k/snarkjs_public.json"

expect_rc 0 "$d/cuzk_prove.log" "$CUZK_BIN" prove "$d/cuzk.zkey" "$k/witness.wtns" "$d/cz_proof.json" "$d/cz_public.json"
expect_rc 0 "$d/snarkjs_verify_cz.log" snarkjs groth16 verify "$d/snarkjs_vk.json" "$d/cz_public.json" "$d/cz_proof.json"
# A proof under cuzk's key is no proof under the ceremony key.
expect_rc 1 "$d/cross_key.log" "$CUZK_BIN" verify "$c/vk.json" "$d/cz_public.json" "$d/cz_proof.json"
log "PASS cuzk_setup.$case"
