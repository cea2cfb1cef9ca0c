#!/usr/bin/env bash
# Makes a payload for scripts/gpu_e2e.sh of cases no test has seen: fresh random inputs for the e2e
# circuits (snarkjs computes the witnesses here, the keys are the e2e fixtures' ceremony keys), plus
# a gen-circuit R1CS with a fresh seed (keyed on the GPU host with `cuzk setup`). The GPU host proves
# them with --backend cuda; back here scripts/gpu_e2e_verify.sh has snarkjs verify every proof.
#
#   scripts/gpu_e2e_fresh.sh E2E_WORK CUZK OUT_DIR [GEN_LOG2]
# E2E_WORK: a built e2e work folder (e.g. build-daemon/e2e, made by the e2e tests); CUZK: a cuzk
# binary (for gen-circuit); GEN_LOG2: size of the generated circuit (default 16, 0 = none).
set -euo pipefail
work="$1" cuzk="$2" out="$3" gen="${4:-16}"
here="$(cd "$(dirname "$0")/.." && pwd)"
snarkjs="$here/node_modules/.bin/snarkjs"
rm -rf "$out" && mkdir -p "$out"
# A uniformly random field element below r, as a decimal string.
rand_fr() {
  node -e 'const r = 52435875175126190479447740508185965837690552500527637822603658699938581184513n;
    const b = require("crypto").randomBytes(40); let v = 0n; for (const x of b) v = (v << 8n) | BigInt(x);
    console.log((v % r).toString());'
}
make_case() {  # make_case NAME CIRCUIT INPUT_JSON
  local name="$1" circuit="$2" input="$3" d="$out/$1" c="$work/circuits/$2"
  mkdir -p "$d"
  echo "$input" >"$d/input.json"
  "$snarkjs" wtns calculate "$c/circuit.wasm" "$d/input.json" "$d/witness.wtns" >/dev/null
  cp "$c/circuit.zkey" "$c/vk.json" "$d/"
  echo "$name: witness of $circuit for fresh random inputs"
}
make_case fresh_multiplier multiplier "{\"a\": \"$(rand_fr)\", \"b\": \"$(rand_fr)\"}"
make_case fresh_no_public no_public "{\"a\": \"$(rand_fr)\", \"b\": \"$(rand_fr)\"}"
make_case fresh_chain_pow2 chain_pow2 "{\"x\": \"$(rand_fr)\"}"
make_case fresh_chain_pow2_plus1 chain_pow2_plus1 "{\"x\": \"$(rand_fr)\"}"
xs=""
for i in $(seq 40); do xs="$xs${xs:+, }\"$(rand_fr)\""; done
make_case fresh_many_public many_public "{\"x\": [$xs], \"k\": \"$(rand_fr)\"}"
if [ "$gen" != 0 ]; then
  d="$out/fresh_gen$gen"
  mkdir -p "$d"
  "$cuzk" -q gen-circuit "$gen" "$d/circuit.r1cs" "$d/witness.wtns" --seed "$RANDOM$RANDOM"
  xz -T2 -1 "$d/circuit.r1cs"
  echo "fresh_gen$gen: gen-circuit 2^$gen, fresh seed (key made on the GPU host)"
fi
du -sh "$out"
