#!/usr/bin/env bash
# A valid cuzk proof, then corrupted proofs and statements: cuzk verify and snarkjs verify must both
# reject every one. cuzk must answer 1 (invalid) for well-formed but wrong proofs and statements;
# for inputs that are not even well-formed (a point off the curve, a public value >= r, the wrong
# number of public values) either 1 or 2 (bad input) is accepted.
# Usage: tamper.sh <case> <circuit>
source "$(dirname "$0")/lib.sh"
require_tools
case="$1" circuit="$2"
require_case "$circuit" "$case"
c="$(circuit_dir "$circuit")" k="$(case_dir "$case")"
d="$(scratch_dir "tamper.$case")"

expect_rc 0 "$d/prove.log" "$CUZK_BIN" prove "$c/circuit.zkey" "$k/witness.wtns" "$d/proof.json" "$d/public.json"
expect_rc 0 "$d/verify.log" "$CUZK_BIN" verify "$c/vk.json" "$d/public.json" "$d/proof.json"

# Both verifiers reject; $1: the exit statuses accepted from cuzk.
reject_both() {
  local want="$1" tag="$2" pub="$3" proof="$4"
  expect_rc "$want" "$d/$tag.cuzk.log" "$CUZK_BIN" verify "$c/vk.json" "$pub" "$proof"
  expect_rc nonzero "$d/$tag.snarkjs.log" snarkjs groth16 verify "$c/vk.json" "$pub" "$proof"
}

for mode in negate-a swap-ac; do
  node "$E2E_DIR/json_tool.mjs" tamper "$mode" "$d/proof.json" "$d/proof.$mode.json"
  reject_both 1 "$mode" "$d/public.json" "$d/proof.$mode.json"
done
for mode in digit-a swap-b-x; do
  node "$E2E_DIR/json_tool.mjs" tamper "$mode" "$d/proof.json" "$d/proof.$mode.json"
  reject_both "1 2" "$mode" "$d/public.json" "$d/proof.$mode.json"
done

npub="$(node -e 'process.stdout.write(String(JSON.parse(require("fs").readFileSync(process.argv[1])).length))' "$d/public.json")"
if [ "$npub" -gt 0 ]; then
  node "$E2E_DIR/json_tool.mjs" tamper public-plus-one "$d/public.json" "$d/public.plus-one.json"
  reject_both 1 public-plus-one "$d/public.plus-one.json" "$d/proof.json"
  for mode in public-plus-r public-drop; do
    node "$E2E_DIR/json_tool.mjs" tamper "$mode" "$d/public.json" "$d/public.$mode.json"
    reject_both "1 2" "$mode" "$d/public.$mode.json" "$d/proof.json"
  done
fi
node "$E2E_DIR/json_tool.mjs" tamper public-extra "$d/public.json" "$d/public.public-extra.json"
reject_both "1 2" public-extra "$d/public.public-extra.json" "$d/proof.json"

log "PASS tamper.$case"
