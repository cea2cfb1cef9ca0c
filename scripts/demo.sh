#!/usr/bin/env bash
# Sets up and builds (scripts/setup.sh), then shows cuzk at work: `cuzk demo` proves the bundled
# circuit (a snarkjs ceremony key) and verifies the proof, and snarkjs verifies the same proof; then
# a generated 2^12 circuit goes through key generation, proving and verification with cuzk, and
# snarkjs checks that proof too.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

BUILD_DIR="${BUILD_DIR:-build}"
CUZK="$(realpath "$BUILD_DIR/bin/cuzk")"
SNARKJS=(node "$PWD/node_modules/snarkjs/build/cli.cjs")
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

echo
echo "== cuzk demo"
(cd "$work" && "$CUZK" demo)
echo "== snarkjs groth16 verify (the demo's proof)"
"${SNARKJS[@]}" groth16 verify "$work/demo-out/verification_key.json" "$work/demo-out/public.json" "$work/demo-out/proof.json"

echo
echo "== a generated circuit with 2^12 constraints, end to end"
g="$work/generated"
mkdir -p "$g"
set -x
"$CUZK" gen-circuit 12 "$g/circuit.r1cs" "$g/witness.wtns" --seed 1
"$CUZK" setup "$g/circuit.r1cs" "$g/circuit.zkey" --seed demo
"$CUZK" export vk "$g/circuit.zkey" "$g/verification_key.json"
"$CUZK" prove "$g/circuit.zkey" "$g/witness.wtns" "$g/proof.json" "$g/public.json"
"$CUZK" verify "$g/verification_key.json" "$g/public.json" "$g/proof.json"
"${SNARKJS[@]}" groth16 verify "$g/verification_key.json" "$g/public.json" "$g/proof.json"
{ set +x; } 2>/dev/null
