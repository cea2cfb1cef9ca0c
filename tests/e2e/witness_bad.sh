#!/usr/bin/env bash
# Bad circuit inputs and broken generators: every malformed input gets its own clear error naming the
# signal; inputs the circuit rejects name the failed assert's template and line; a generator whose
# generated code crashes or never ends is contained (cuzk reports it and exits normally).
# Usage: witness_bad.sh   (uses the poseidon_merkle and multiplier fixtures)
source "$(dirname "$0")/lib.sh"
require_tools
require_case poseidon_merkle poseidon_merkle
require_case multiplier multiplier
d="$(scratch_dir witness_bad)"
gp="$(generator_dir poseidon_merkle)" gm="$(generator_dir multiplier)"
good="$E2E_DIR/inputs/poseidon_merkle.json"
r_minus_1="52435875175126190479447740508185965837690552500527637822603658699938581184512"
r="52435875175126190479447740508185965837690552500527637822603658699938581184513"

# bad_case NAME EXPECTED_MESSAGE_REGEX JSON: exit 2 and a message matching the regex.
bad_case() {
  local name="$1" want="$2" json="$3"
  printf '%s\n' "$json" >"$d/$name.json"
  expect_rc 2 "$d/$name.log" "$CUZK_BIN" witness calc "$gp" "$d/$name.json" "$d/$name.wtns"
  grep -Eq "$want" "$d/$name.log" || die "$name: expected a message matching /$want/, got: $(cat "$d/$name.log")"
  [ ! -e "$d/$name.wtns" ] || die "$name: a witness was written for bad input"
}
bad_case missing "missing input signal 'pathIndices' \(3 values\)" \
  '{"root": "1", "leaf": "42", "pathElements": ["1", "2", "3"]}'
bad_case extra "signal 'bogus' is not an input of the circuit" \
  '{"root": "1", "leaf": "42", "pathElements": ["1", "2", "3"], "pathIndices": [0, 1, 1], "bogus": 5}'
bad_case short_array "signal 'pathElements' expects 3 values, got 2" \
  '{"root": "1", "leaf": "42", "pathElements": ["1", "2"], "pathIndices": [0, 1, 1]}'
bad_case not_number "signal 'pathElements\[1\]': 'x12' is not a decimal number" \
  '{"root": "1", "leaf": "42", "pathElements": ["1", "x12", "3"], "pathIndices": [0, 1, 1]}'
bad_case not_below_p "signal 'leaf': value is not below the field's prime" \
  "{\"root\": \"1\", \"leaf\": \"$r\", \"pathElements\": [\"1\", \"2\", \"3\"], \"pathIndices\": [0, 1, 1]}"
bad_case fraction "signal 'leaf': 1.5 is not an exact integer" \
  '{"root": "1", "leaf": 1.5, "pathElements": ["1", "2", "3"], "pathIndices": [0, 1, 1]}'
bad_case bool "signal 'leaf': expected a number or a numeric string, got boolean" \
  '{"root": "1", "leaf": true, "pathElements": ["1", "2", "3"], "pathIndices": [0, 1, 1]}'
bad_case not_object "circuit inputs must be a JSON object" '[1, 2, 3]'
printf '{"root": ' >"$d/truncated.json"
expect_rc 2 "$d/truncated.log" "$CUZK_BIN" witness calc "$gp" "$d/truncated.json" "$d/truncated.wtns"
grep -q "truncated.json: not JSON" "$d/truncated.log" || die "truncated JSON: $(cat "$d/truncated.log")"
# Valid numbers in every accepted form, r-1 and a negative value among them, make a witness.
printf '{"a": "0x10", "b": "-1"}\n' >"$d/forms.json"
expect_rc 0 "$d/forms.log" "$CUZK_BIN" witness calc "$gm" "$d/forms.json" "$d/forms.wtns"
printf '{"a": "%s", "b": "0b11"}\n' "$r_minus_1" >"$d/forms2.json"
expect_rc 0 "$d/forms2.log" "$CUZK_BIN" witness calc "$gm" "$d/forms2.json" "$d/forms2.wtns"
# The wrong root passes every input check; the circuit's own constraint rejects it, by template and line.
sed 's/"root": "[0-9]*"/"root": "12345"/' "$good" >"$d/wrong_root.json"
expect_rc 2 "$d/wrong_root.log" "$CUZK_BIN" witness calc "$gp" "$d/wrong_root.json" "$d/wrong_root.wtns"
grep -Eq "Failed assert in template/function PoseidonMerkle line [0-9]+" "$d/wrong_root.log" ||
  die "wrong root: expected the failed assert's template and line, got: $(cat "$d/wrong_root.log")"

# Generated code that crashes: a copy of the multiplier's generator whose template segfaults.
cp -r "$gm" "$d/crash_cpp"
cp "$(dirname "$gm")/multiplier.sym" "$d/"
sed -i 's/^void Multiplier_0_run(uint ctx_index,Circom_CalcWit\* ctx){$/&\n{ volatile int* p = nullptr; *p = 1; }/' \
  "$d/crash_cpp/multiplier.cpp"
grep -q 'volatile int\* p = nullptr' "$d/crash_cpp/multiplier.cpp" || die "could not patch the generated code"
printf '{"a": "3", "b": "11"}\n' >"$d/mult.json"
expect_rc 70 "$d/crash.log" "$CUZK_BIN" witness calc "$d/crash_cpp" "$d/mult.json" "$d/crash.wtns"
grep -q "Segmentation fault" "$d/crash.log" || die "crash: expected the signal to be named, got: $(cat "$d/crash.log")"
log "PASS witness_bad"
