#!/usr/bin/env bash
# SHA-256 (circomlib, ~59k constraints, 256 public outputs, domain 2^16): too large for a ceremony in
# CI time, so the key comes from `cuzk setup`. snarkjs makes the witness and checks it against the
# r1cs; cuzk proves and snarkjs verifies; snarkjs proves with the same key and cuzk verifies; both
# public.json files are equal.
source "$(dirname "$0")/lib.sh"
require_tools
name=sha256_512
d="$(scratch_dir "sha256")"
(
  cd "$CUZK_SRC"
  quiet "$d/compile.log" node "$CIRCOM_CLI" "tests/e2e/circuits/$name.circom" \
    --prime bls12381 --O2 --r1cs --wasm -l node_modules -o "$(realpath --relative-to=. "$d")"
)
quiet "$d/wtns.log" snarkjs wtns calculate "$d/${name}_js/$name.wasm" "$E2E_DIR/inputs/$name.json" "$d/witness.wtns"
quiet "$d/wtns_check.log" snarkjs wtns check "$d/$name.r1cs" "$d/witness.wtns"
expect_rc 0 "$d/setup.log" "$CUZK_BIN" setup "$d/$name.r1cs" "$d/key.zkey" --seed sha256
expect_rc 0 "$d/export.log" "$CUZK_BIN" export vk "$d/key.zkey" "$d/vk.json"
expect_rc 0 "$d/prove.log" "$CUZK_BIN" prove "$d/key.zkey" "$d/witness.wtns" "$d/proof.json" "$d/public.json" --verify
expect_rc 0 "$d/sj_verify.log" snarkjs groth16 verify "$d/vk.json" "$d/public.json" "$d/proof.json"
expect_rc 0 "$d/sj_prove.log" snarkjs groth16 prove "$d/key.zkey" "$d/witness.wtns" "$d/sj_proof.json" "$d/sj_public.json"
expect_rc 0 "$d/cz_verify.log" "$CUZK_BIN" verify "$d/vk.json" "$d/sj_public.json" "$d/sj_proof.json"
json_equal "$d/public.json" "$d/sj_public.json"
log "PASS sha256"
