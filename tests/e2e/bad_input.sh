#!/usr/bin/env bash
# Malformed or mismatched inputs: cuzk must stop with a clear "error: ..." message and a non-zero
# exit status (2 for the verifier's bad files), never crash, and never leave a proof behind.
# Usage: bad_input.sh <case> <circuit> <other case> <other circuit>   (two circuits of different size)
source "$(dirname "$0")/lib.sh"
require_tools
case="$1" circuit="$2" ocase="$3" ocircuit="$4"
require_case "$circuit" "$case"
require_case "$ocircuit" "$ocase"
c="$(circuit_dir "$circuit")" k="$(case_dir "$case")"
oc="$(circuit_dir "$ocircuit")" ok="$(case_dir "$ocase")"
d="$(scratch_dir "bad_input.$case")"

# cuzk prove on bad inputs: non-zero, an error message, no proof.json.
prove_fails() {
  local tag="$1" zkey="$2" wtns="$3"
  rm -f "$d/proof.json" "$d/public.json"
  expect_rc nonzero "$d/$tag.log" "$CUZK_BIN" prove "$zkey" "$wtns" "$d/proof.json" "$d/public.json"
  grep -qi "error" "$d/$tag.log" || die "$tag: no error message; output was: $(cat "$d/$tag.log")"
  [ ! -e "$d/proof.json" ] || die "$tag: a proof.json was written despite the error"
}

zsize=$(stat -c %s "$c/circuit.zkey")
head -c $((zsize / 2)) "$c/circuit.zkey" >"$d/half.zkey"
head -c $((zsize - 1)) "$c/circuit.zkey" >"$d/minus1.zkey"
head -c 64 "$c/circuit.zkey" >"$d/header.zkey"
: >"$d/empty.zkey"
head -c 4096 /dev/urandom >"$d/random.zkey"
wsize=$(stat -c %s "$k/witness.wtns")
head -c $((wsize - 32)) "$k/witness.wtns" >"$d/short.wtns"

prove_fails truncated-half "$d/half.zkey" "$k/witness.wtns"
prove_fails truncated-by-one "$d/minus1.zkey" "$k/witness.wtns"
prove_fails header-only "$d/header.zkey" "$k/witness.wtns"
prove_fails empty-zkey "$d/empty.zkey" "$k/witness.wtns"
prove_fails random-zkey "$d/random.zkey" "$k/witness.wtns"
prove_fails truncated-wtns "$c/circuit.zkey" "$d/short.wtns"
prove_fails wtns-as-zkey "$k/witness.wtns" "$k/witness.wtns"
prove_fails zkey-as-wtns "$c/circuit.zkey" "$c/circuit.zkey"
prove_fails r1cs-as-zkey "$c/circuit.r1cs" "$k/witness.wtns"
prove_fails other-circuit-wtns "$c/circuit.zkey" "$ok/witness.wtns"
prove_fails other-circuit-zkey "$oc/circuit.zkey" "$k/witness.wtns"

# cuzk verify on malformed files: exit 2 with a message.
verify_bad() {
  local tag="$1"; shift
  expect_rc 2 "$d/$tag.log" "$CUZK_BIN" verify "$@"
  grep -qi "error" "$d/$tag.log" || die "$tag: no error message; output was: $(cat "$d/$tag.log")"
}
echo 'this is not json' >"$d/garbage.json"
echo '{"pi_a": ["1", "2", "1"], "protocol": "groth16"}' >"$d/partial_proof.json"
echo '{"not": "an array"}' >"$d/object_public.json"
echo '["12", "abc"]' >"$d/nondecimal_public.json"
verify_bad garbage-vk "$d/garbage.json" "$k/snarkjs_public.json" "$k/snarkjs_proof.json"
verify_bad garbage-public "$c/vk.json" "$d/garbage.json" "$k/snarkjs_proof.json"
verify_bad garbage-proof "$c/vk.json" "$k/snarkjs_public.json" "$d/garbage.json"
verify_bad partial-proof "$c/vk.json" "$k/snarkjs_public.json" "$d/partial_proof.json"
verify_bad object-public "$c/vk.json" "$d/object_public.json" "$k/snarkjs_proof.json"
verify_bad nondecimal-public "$c/vk.json" "$d/nondecimal_public.json" "$k/snarkjs_proof.json"
verify_bad proof-as-vk "$k/snarkjs_proof.json" "$k/snarkjs_public.json" "$k/snarkjs_proof.json"
expect_rc nonzero "$d/missing-file.log" "$CUZK_BIN" verify "$d/does_not_exist.json" "$k/snarkjs_public.json" "$k/snarkjs_proof.json"

# Files that are not regular files are named as what they are, at once: a device would be read
# without end (/dev/zero), a FIFO would block until written to. `timeout` turns a hang into 124.
rm -f "$d/fifo.wtns" "$d/fifo.json"
mkfifo "$d/fifo.wtns" "$d/fifo.json"
not_regular() {  # not_regular TAG WANT_TEXT cuzk-args...
  local tag="$1" want="$2"; shift 2
  expect_rc 2 "$d/$tag.log" timeout 20 "$CUZK_BIN" "$@"
  grep -qF -- "$want" "$d/$tag.log" || die "$tag: the message lacks '$want': $(cat "$d/$tag.log")"
}
not_regular verify-dev-zero "/dev/zero: is a character device, not a regular file" \
  verify /dev/zero "$k/snarkjs_public.json" "$k/snarkjs_proof.json"
not_regular verify-fifo "$d/fifo.json: is a FIFO, not a regular file" verify "$c/vk.json" "$d/fifo.json" "$k/snarkjs_proof.json"
not_regular prove-fifo-wtns "$d/fifo.wtns: is a FIFO, not a regular file" \
  prove "$c/circuit.zkey" "$d/fifo.wtns" "$d/proof.json" "$d/public.json"
not_regular prove-fifo-zkey "$d/fifo.wtns: is a FIFO, not a regular file" \
  prove "$d/fifo.wtns" "$k/witness.wtns" "$d/proof.json" "$d/public.json"
not_regular prove-dir-wtns "$d: is a directory, not a regular file" prove "$c/circuit.zkey" "$d" "$d/proof.json" "$d/public.json"
not_regular info-dev-zero "/dev/zero: is a character device" info /dev/zero
[ ! -e "$d/proof.json" ] || die "a proof.json was written for a witness that is not a file"
log "PASS bad_input.$case"
