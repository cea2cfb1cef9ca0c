#!/usr/bin/env bash
# Sets up and builds (scripts/setup.sh), then shows cuzk at work: `cuzk demo` proves the bundled
# circuit and verifies the proof; then a generated 2^12 circuit goes through key generation,
# proving and verification with cuzk, and the proof is checked by snarkjs as well.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

BUILD_DIR="${BUILD_DIR:-build}"
CUZK="$BUILD_DIR/bin/cuzk"
echo
echo "== cuzk demo"
"$CUZK" demo

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo
echo "== a generated circuit with 2^12 constraints, end to end"
set -x
"$CUZK" gen-circuit 12 "$work/circuit.r1cs" "$work/witness.wtns" --seed 1
"$CUZK" setup "$work/circuit.r1cs" "$work/circuit.zkey" --seed demo
"$CUZK" export vk "$work/circuit.zkey" "$work/verification_key.json"
"$CUZK" prove "$work/circuit.zkey" "$work/witness.wtns" "$work/proof.json" "$work/public.json"
"$CUZK" verify "$work/verification_key.json" "$work/public.json" "$work/proof.json"
npx --no-install snarkjs groth16 verify "$work/verification_key.json" "$work/public.json" "$work/proof.json"
