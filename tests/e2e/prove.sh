#!/usr/bin/env bash
# cuzk proves with snarkjs's ceremony key; snarkjs and cuzk both accept the proof; public.json is
# the witness's public wires and equals snarkjs's; cuzk accepts snarkjs's own proof; two proofs of
# the same witness differ (fresh r, s each time).
# Usage: prove.sh <case> <circuit>
source "$(dirname "$0")/lib.sh"
require_tools
case="$1" circuit="$2"
require_case "$circuit" "$case"
c="$(circuit_dir "$circuit")" k="$(case_dir "$case")"
d="$(scratch_dir "prove.$case")"

expect_rc 0 "$d/prove.log" "$CUZK_BIN" prove "$c/circuit.zkey" "$k/witness.wtns" "$d/proof.json" "$d/public.json"
node "$E2E_DIR/json_tool.mjs" check-proof "$d/proof.json"
node "$E2E_DIR/json_tool.mjs" public-matches-witness "$k/witness.json" "$c/vk.json" "$d/public.json"
json_equal "$d/public.json" "$k/snarkjs_public.json"
expect_rc 0 "$d/snarkjs_verify.log" snarkjs groth16 verify "$c/vk.json" "$d/public.json" "$d/proof.json"
expect_rc 0 "$d/cuzk_verify.log" "$CUZK_BIN" verify "$c/vk.json" "$d/public.json" "$d/proof.json"
expect_rc 0 "$d/cuzk_verify_snarkjs.log" "$CUZK_BIN" verify "$c/vk.json" "$k/snarkjs_public.json" "$k/snarkjs_proof.json"

expect_rc 0 "$d/prove2.log" "$CUZK_BIN" prove "$c/circuit.zkey" "$k/witness.wtns" "$d/proof2.json" "$d/public2.json"
if node "$E2E_DIR/json_tool.mjs" equal "$d/proof.json" "$d/proof2.json" 2>/dev/null; then
  die "two proofs of the same witness are identical: r, s are not random"
fi
expect_rc 0 "$d/snarkjs_verify2.log" snarkjs groth16 verify "$c/vk.json" "$d/public2.json" "$d/proof2.json"
log "PASS prove.$case"
