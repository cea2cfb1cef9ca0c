#!/usr/bin/env bash
# circom's .wasm as the witness generator, as circom projects ship it: the circuit that uses every
# operation of circom's runtime and branches, loops and indexes on input values
# (circuits/witness_ops.circom), compiled with --O0, --O1 and --O2, each given to cuzk as its .wasm
# (or its <name>_js folder) alone. The first input runs on the wasm compiled natively and is the
# sample the program is traced on; then inputs on the traced path run on the program, the others on
# the native wasm, and each of those is traced into a program of its own. Every .wtns is byte for
# byte the one `snarkjs wtns calculate` writes with the same .wasm, and so is every one of `--engine
# native`. An input the circuit's assert rejects is refused with circom's message (template and
# line); a module that traps is contained.
# Usage: witness_wasm.sh   (over E2E_CURVE's prime)
source "$(dirname "$0")/lib.sh"
require_tools
require_wasm2c
d="$(scratch_dir witness_wasm)"
name=witness_ops
own_cache "$d/cache"  # fresh artefacts: each level's first input builds its program
field_values

# witness LEVEL CASE ENGINE JSON: the witness of JSON from the level's wasm equals snarkjs's, and
# ENGINE computed it; the native engine writes the same.
witness() {
  local level="$1" case="$2" want="$3" json="$4"
  local mod="$d/$level/${name}_js/$name.wasm" f="$d/$level/$case"
  printf '%s\n' "$json" >"$f.json"
  quiet "$f.snarkjs.log" snarkjs wtns calculate "$mod" "$f.json" "$f.snarkjs.wtns"
  expect_rc 0 "$f.log" "$CUZK_BIN" witness calc "$mod" "$f.json" "$f.wtns"
  cmp "$f.wtns" "$f.snarkjs.wtns" || die "$level $case: cuzk's witness differs from snarkjs's"
  grep -q "($want" "$f.log" || die "$level $case: expected the $want engine, got: $(cat "$f.log")"
  expect_rc 0 "$f.native.log" "$CUZK_BIN" witness calc --engine native "$d/$level/${name}_js" "$f.json" "$f.native.wtns"
  cmp "$f.native.wtns" "$f.snarkjs.wtns" || die "$level $case: the native wasm's witness differs from snarkjs's"
  log "$level $case: byte-identical to snarkjs ($want)"
}

seen=()
for level in O2 O1 O0; do
  mkdir -p "$d/$level"
  (
    cd "$CUZK_SRC"
    quiet "$d/$level/compile.log" node "$CIRCOM_CLI" "tests/e2e/circuits/$name.circom" \
      --prime "$E2E_CURVE" "--$level" --wasm -l node_modules -o "$(realpath --relative-to=. "$d/$level")"
  )
  # A level that compiles to the same module as an earlier one (--O1 and --O2 may) finds the
  # programs of every path its inputs took.
  first=native other="native (the program refused"
  for s in "${seen[@]}"; do cmp -s "$s" "$d/$level/${name}_js/$name.wasm" && first=program other=program; done
  seen+=("$d/$level/${name}_js/$name.wasm")
  witness "$level" sample "$first" '{"x": "7", "y": "3", "k": "3"}'
  witness "$level" same_path program '{"x": "123456789012345678901234567890", "y": "98765", "k": "3"}'
  witness "$level" other_branch "$other" '{"x": "5", "y": "9", "k": "3"}'
  witness "$level" loop_bound "$other" '{"x": "7", "y": "3", "k": "5"}'
  if [ "$level" = O2 ]; then
    witness O2 traced program '{"x": "7", "y": "3", "k": "3"}'
    witness O2 equal "program, path 1" "{\"x\": \"$BIG\", \"y\": \"$BIG\", \"k\": \"3\"}"  # other_branch's path
    witness O2 zero "native (the program refused" '{"x": "0", "y": "9", "k": "3"}'
    witness O2 signed "native (the program refused" "{\"x\": \"$P_MINUS_1\", \"y\": \"$BIG\", \"k\": \"15\"}"
  fi
done

mod="$d/O2/${name}_js/$name.wasm"
# The circuit's assert: circom's message, as snarkjs gives it, with the template and line.
printf '{"x": "7", "y": "3", "k": "16"}\n' >"$d/assert.json"
expect_rc 2 "$d/assert.log" "$CUZK_BIN" witness calc "$mod" "$d/assert.json" "$d/assert.wtns"
grep -Eq "Assert Failed\. Error in template WitnessOps_[0-9]+ line: [0-9]+" "$d/assert.log" ||
  die "assert: expected circom's message with template and line, got: $(cat "$d/assert.log")"
[ ! -e "$d/assert.wtns" ] || die "assert: a witness was written"

# A module whose template traps (a copy with `unreachable` at the start of its run): reported, contained.
wasm2wat "$mod" -o "$d/trap.wat"
awk '{ if (s == 1 && $0 !~ /^    \(local /) { print "    unreachable"; s = 2 }
       print
       if (s == 0 && $0 ~ /^  \(func \$WitnessOps_[0-9]+_run /) s = 1 }' "$d/trap.wat" >"$d/trap2.wat"
grep -q "^    unreachable$" "$d/trap2.wat" || die "could not patch the module"
mkdir -p "$d/trap_js"
wat2wasm --debug-names "$d/trap2.wat" -o "$d/trap_js/trap.wasm"
printf '{"x": "7", "y": "3", "k": "3"}\n' >"$d/trap.json"
expect_rc 70 "$d/trap.log" "$CUZK_BIN" witness calc --engine native "$d/trap_js" "$d/trap.json" "$d/trap.wtns"
grep -q "trapped in setInputSignal: unreachable executed" "$d/trap.log" || die "trap: expected the trap to be named, got: $(cat "$d/trap.log")"
log "PASS witness_wasm"
