#!/usr/bin/env bash
# Fixture: compile one test circuit with circom (over E2E_CURVE's prime, --O2: the r1cs, the wasm witness
# calculator, and the C++ witness generator <name>_cpp/ with its <name>.sym) and run a real Groth16
# phase-2 ceremony for it with snarkjs (setup from the shared ptau, one contribution, verification key).
# Usage: circuit.sh <circuit name>   (tests/e2e/circuits/<name>.circom)
source "$(dirname "$0")/lib.sh"
require_tools
name="$1"
src="$E2E_DIR/circuits/$name.circom"
[ -f "$src" ] || die "no circuit $src"
[ -f "$PTAU_FILE" ] || die "the ptau fixture $PTAU_FILE is missing (its e2e setup test failed?)"

dir="$(circuit_dir "$name")"
key="$(circuit_key "$name")"
if stamp_ok "$dir" "$key"; then
  log "reusing $dir"
  exit 0
fi
rm -rf "$dir"
mkdir -p "$dir"

# circom2 runs as WebAssembly and sees files only through paths relative to its working folder
# (absolute paths, and include paths with "..", are not found): run it from the source tree.
(
  cd "$CUZK_SRC"
  quiet "$dir/compile.log" node "$CIRCOM_CLI" "tests/e2e/circuits/$name.circom" \
    --prime "$E2E_CURVE" --O2 --r1cs --wasm --c --sym -l node_modules -o "$(realpath --relative-to=. "$dir")"
)
mv "$dir/$name.r1cs" "$dir/circuit.r1cs"
mv "$dir/${name}_js/$name.wasm" "$dir/circuit.wasm"
rm -rf "$dir/${name}_js"
grep -E 'constraints|public|private|wires' "$dir/compile.log" | sed 's/\x1b\[[0-9;]*m//g' | sed 's/^/[e2e]   /'

quiet "$dir/setup.log" snarkjs groth16 setup "$dir/circuit.r1cs" "$PTAU_FILE" "$dir/circuit_0000.zkey"
quiet "$dir/contribute.log" snarkjs zkey contribute "$dir/circuit_0000.zkey" "$dir/circuit.zkey" \
  --name="cuzk e2e" -e="cuzk e2e phase-2 entropy for $name"
rm -f "$dir/circuit_0000.zkey"
quiet "$dir/vk.log" snarkjs zkey export verificationkey "$dir/circuit.zkey" "$dir/vk.json"
stamp_write "$dir" "$key"
log "circuit $name ready in $dir"
