#!/usr/bin/env bash
# `cuzk gen-circuit` in both profiles makes circuits that snarkjs agrees with: snarkjs checks that the
# witness satisfies the R1CS (`wtns check`), and verifies cuzk's proof under a `cuzk setup` key with
# the verification key snarkjs exports from it. The porep profile's witness is at least 90% 0/1.
# Usage: gen_circuit.sh <log2>
source "$(dirname "$0")/lib.sh"
require_tools
k="$1"
d="$(scratch_dir "gen_circuit$CURVE_SUFFIX")"
curve=bls12381
[ "$E2E_CURVE" = bn128 ] && curve=bn254

for profile in circom porep; do
  p="$d/$profile"
  mkdir -p "$p"
  expect_rc 0 "$p/gen.log" "$CUZK_BIN" gen-circuit "$k" "$p/c.r1cs" "$p/w.wtns" --profile "$profile" --curve "$curve" --seed 11
  expect_rc 0 "$p/check.log" snarkjs wtns check "$p/c.r1cs" "$p/w.wtns"
  grep -q "WITNESS IS CORRECT" "$p/check.log" || die "$profile: snarkjs wtns check did not accept the witness ($p/check.log)"
  expect_rc 0 "$p/setup.log" "$CUZK_BIN" setup "$p/c.r1cs" "$p/c.zkey" --seed gen
  expect_rc 0 "$p/vk.log" snarkjs zkey export verificationkey "$p/c.zkey" "$p/vk.json"
  expect_rc 0 "$p/prove.log" "$CUZK_BIN" prove "$p/c.zkey" "$p/w.wtns" "$p/proof.json" "$p/public.json" --backend cpu
  expect_rc 0 "$p/verify.log" snarkjs groth16 verify "$p/vk.json" "$p/public.json" "$p/proof.json"
done
# The texture: the share of 0/1 values, read from snarkjs's JSON export of each witness.
expect_rc 0 "$d/json.log" snarkjs wtns export json "$d/porep/w.wtns" "$d/porep/w.json"
expect_rc 0 "$d/json2.log" snarkjs wtns export json "$d/circom/w.wtns" "$d/circom/w.json"
share() { node -e 'const w = JSON.parse(require("fs").readFileSync(process.argv[1]));
  console.log((w.filter(v => v === "0" || v === "1").length / w.length).toFixed(3))' "$1"; }
porep="$(share "$d/porep/w.json")" circom="$(share "$d/circom/w.json")"
log "share of 0/1 witness values: porep $porep, circom $circom"
node -e 'process.exit(+process.argv[1] >= 0.9 && +process.argv[2] < 0.6 ? 0 : 1)' "$porep" "$circom" ||
  die "0/1 shares out of profile: porep $porep (>= 0.9 wanted), circom $circom (< 0.6 wanted)"
log "PASS gen_circuit$CURVE_SUFFIX"
