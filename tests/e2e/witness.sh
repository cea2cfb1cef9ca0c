#!/usr/bin/env bash
# Fixture: the witness of one test case (snarkjs + circom's wasm) and snarkjs's own proof of it,
# which is the reference for public.json and a proof for cuzk's verifier to accept.
# Usage: witness.sh <case name> <circuit name>   (input: tests/e2e/inputs/<case>.json)
source "$(dirname "$0")/lib.sh"
require_tools
case="$1" circuit="$2"
input="$(case_input "$case")"
[ -f "$input" ] || die "no input $input"
cdir="$(circuit_dir "$circuit")"
[ -f "$cdir/.stamp" ] || die "circuit fixture '$circuit' is missing (its e2e setup test failed?)"

dir="$(case_dir "$case")"
key="$( { cat "$cdir/.stamp"; cat "$input"; } | sha256sum | cut -d' ' -f1)"
if stamp_ok "$dir" "$key"; then
  log "reusing $dir"
  exit 0
fi
rm -rf "$dir"
mkdir -p "$dir"
quiet "$dir/wtns.log" snarkjs wtns calculate "$cdir/circuit.wasm" "$input" "$dir/witness.wtns"
quiet "$dir/wtns_check.log" snarkjs wtns check "$cdir/circuit.r1cs" "$dir/witness.wtns"
quiet "$dir/wtns_json.log" snarkjs wtns export json "$dir/witness.wtns" "$dir/witness.json"
quiet "$dir/prove.log" snarkjs groth16 prove "$cdir/circuit.zkey" "$dir/witness.wtns" \
  "$dir/snarkjs_proof.json" "$dir/snarkjs_public.json"
quiet "$dir/verify.log" snarkjs groth16 verify "$cdir/vk.json" "$dir/snarkjs_public.json" "$dir/snarkjs_proof.json"
node "$E2E_DIR/json_tool.mjs" public-matches-witness "$dir/witness.json" "$cdir/vk.json" "$dir/snarkjs_public.json"
stamp_write "$dir" "$key"
log "case $case ready in $dir"
