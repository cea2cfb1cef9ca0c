#!/usr/bin/env bash
# The compiled witness program against circom's own witness calculator, on a circuit that uses every
# operation of circom's runtime and branches, loops and indexes on input values
# (circuits/witness_ops.circom). Traced on the first input, the program computes every input that
# takes the same path through the circuit's code; an input that takes another path is refused by a
# guard, computed by circom's native generator and traced into a further program, which then
# computes the inputs on its path. Either way the .wtns is byte for byte the one `snarkjs wtns
# calculate` writes, and `--engine native` writes the same.
# Usage: witness_program.sh   (over E2E_CURVE's prime)
source "$(dirname "$0")/lib.sh"
require_tools
d="$(scratch_dir witness_program)"
name=witness_ops
(
  cd "$CUZK_SRC"
  quiet "$d/compile.log" node "$CIRCOM_CLI" "tests/e2e/circuits/$name.circom" \
    --prime "$E2E_CURVE" --O2 --wasm --c --sym -l node_modules -o "$(realpath --relative-to=. "$d")"
)
g="$d/${name}_cpp" wasm="$d/${name}_js/$name.wasm"
own_cache "$d/cache"  # a fresh artefact: the first input below builds the program
field_values

# witness CASE ENGINE JSON: the witness of JSON equals snarkjs's, and ENGINE computed it.
witness() {
  local case="$1" want="$2" json="$3"
  printf '%s\n' "$json" >"$d/$case.json"
  quiet "$d/$case.snarkjs.log" snarkjs wtns calculate "$wasm" "$d/$case.json" "$d/$case.snarkjs.wtns"
  expect_rc 0 "$d/$case.log" "$CUZK_BIN" witness calc "$g" "$d/$case.json" "$d/$case.wtns"
  cmp "$d/$case.wtns" "$d/$case.snarkjs.wtns" || die "$case: cuzk's witness differs from snarkjs's"
  grep -q "($want" "$d/$case.log" || die "$case: expected the $want engine, got: $(cat "$d/$case.log")"
  expect_rc 0 "$d/$case.native.log" "$CUZK_BIN" witness calc --engine native "$g" "$d/$case.json" "$d/$case.native.wtns"
  cmp "$d/$case.native.wtns" "$d/$case.snarkjs.wtns" || die "$case: the native engine's witness differs from snarkjs's"
  log "$case: byte-identical to snarkjs ($want)"
}
# The first input runs on the native generator and is the sample the program is traced on: x > y,
# x nonzero, a loop of 3 iterations, table[3]. From then on the program computes its path.
witness sample "native" '{"x": "7", "y": "3", "k": "3"}'
[ -n "$(find "$d/cache" -name program.bin)" ] || die "no program.bin in the artefact after the first input"
witness traced program '{"x": "7", "y": "3", "k": "3"}'
# The first process that ran the program stored its layout; the next ones map it.
[ -n "$(find "$d/cache" -name layout.bin)" ] || die "no layout.bin in the artefact after the program ran"
# Other values on the same path.
witness same_path program '{"x": "123456789012345678901234567890", "y": "98765", "k": "3"}'
# Other paths: each is refused by a guard and computed by the native generator.
# Other paths: each is refused by the programs, computed by the native generator and traced.
witness other_branch "native (the program refused" '{"x": "5", "y": "9", "k": "3"}'
grep -q "traced as a further path" "$d/other_branch.log" || die "other_branch: not traced: $(cat "$d/other_branch.log")"
witness zero "native (the program refused" '{"x": "0", "y": "9", "k": "3"}'
witness loop_bound "native (the program refused" '{"x": "7", "y": "3", "k": "5"}'
witness signed "native (the program refused" "{\"x\": \"$P_MINUS_1\", \"y\": \"$BIG\", \"k\": \"15\"}"
# From then on, inputs on those paths run on their programs: x == y takes other_branch's path.
witness equal "program, path 1" "{\"x\": \"$BIG\", \"y\": \"$BIG\", \"k\": \"3\"}"
witness loop_again "program, path 3" '{"x": "9", "y": "4", "k": "5"}'
witness sample_again program '{"x": "8", "y": "3", "k": "3"}'
[ "$(find "$d/cache" -name 'program-*.bin' | wc -l)" -eq 4 ] || die "expected 4 further paths: $(ls "$d"/cache/witness/*/)"
# The circuit's assert rejects an input on either engine, naming its template and line.
printf '{"x": "7", "y": "3", "k": "16"}\n' >"$d/assert.json"
expect_rc 2 "$d/assert.log" "$CUZK_BIN" witness calc "$g" "$d/assert.json" "$d/assert.wtns"
grep -Eq "Failed assert in template/function WitnessOps line [0-9]+" "$d/assert.log" ||
  die "assert: expected the template and line, got: $(cat "$d/assert.log")"
# The benchmark runs both engines on the traced path and compares their outputs.
expect_rc 0 "$d/bench.log" "$CUZK_BIN" witness bench "$g" "$d/traced.json" --runs 2
grep -q "outputs equal" "$d/bench.log" || die "witness bench: $(cat "$d/bench.log")"
log "PASS witness_program"
