#!/usr/bin/env bash
# The prover's options: --verify (self-check before writing), --threads (global and per command),
# --seed-rs (fixed r, s: reproducible proofs for testing), --backend, and `cuzk info` on each file type.
# Usage: cli_flags.sh <case> <circuit>
source "$(dirname "$0")/lib.sh"
require_tools
case="$1" circuit="$2"
require_case "$circuit" "$case"
c="$(circuit_dir "$circuit")" k="$(case_dir "$case")"
d="$(scratch_dir "cli_flags.$case")"
zkey="$c/circuit.zkey" wtns="$k/witness.wtns"

expect_rc 0 "$d/prove_verify.log" "$CUZK_BIN" prove "$zkey" "$wtns" "$d/p1.json" "$d/pub1.json" --verify
expect_rc 0 "$d/snarkjs1.log" snarkjs groth16 verify "$c/vk.json" "$d/pub1.json" "$d/p1.json"

expect_rc 0 "$d/threads_global.log" "$CUZK_BIN" --threads 1 prove "$zkey" "$wtns" "$d/p2.json" "$d/pub2.json"
expect_rc 0 "$d/snarkjs2.log" snarkjs groth16 verify "$c/vk.json" "$d/pub2.json" "$d/p2.json"
expect_rc 0 "$d/threads_local.log" "$CUZK_BIN" prove "$zkey" "$wtns" "$d/p3.json" "$d/pub3.json" --threads 3
expect_rc 0 "$d/snarkjs3.log" snarkjs groth16 verify "$c/vk.json" "$d/pub3.json" "$d/p3.json"

# Fixed r, s: the same proof every time and for every thread count, and still a valid one.
expect_rc 0 "$d/seed_a.log" "$CUZK_BIN" prove "$zkey" "$wtns" "$d/s1.json" "$d/spub1.json" --seed-rs 7,11
expect_rc 0 "$d/seed_b.log" "$CUZK_BIN" --threads 1 prove "$zkey" "$wtns" "$d/s2.json" "$d/spub2.json" --seed-rs 7,11
json_equal "$d/s1.json" "$d/s2.json"
expect_rc 0 "$d/snarkjs_seed.log" snarkjs groth16 verify "$c/vk.json" "$d/spub1.json" "$d/s1.json"
expect_rc 0 "$d/seed_c.log" "$CUZK_BIN" prove "$zkey" "$wtns" "$d/s3.json" "$d/spub3.json" --seed-rs 7,12
if node "$E2E_DIR/json_tool.mjs" equal "$d/s1.json" "$d/s3.json" 2>/dev/null; then
  die "--seed-rs 7,11 and 7,12 gave the same proof"
fi

# Backends: cpu always works; cuda works where a GPU is visible and otherwise fails with a message and
# no proof (never a silent fallback); auto is the GPU where there is one, else the CPU.
expect_rc 0 "$d/backend_cpu.log" "$CUZK_BIN" prove "$zkey" "$wtns" "$d/b1.json" "$d/bpub1.json" --backend cpu --seed-rs 7,11
json_equal "$d/s1.json" "$d/b1.json"
expect_rc 0 "$d/backend_auto.log" "$CUZK_BIN" prove "$zkey" "$wtns" "$d/b2.json" "$d/bpub2.json" --backend auto --seed-rs 7,11
json_equal "$d/s1.json" "$d/b2.json"
if nvidia-smi -L >/dev/null 2>&1; then
  expect_rc 0 "$d/backend_cuda.log" "$CUZK_BIN" prove "$zkey" "$wtns" "$d/b3.json" "$d/bpub3.json" --backend cuda --seed-rs 7,11
  json_equal "$d/s1.json" "$d/b3.json"
else
  rm -f "$d/b3.json"
  expect_rc nonzero "$d/backend_cuda.log" "$CUZK_BIN" prove "$zkey" "$wtns" "$d/b3.json" "$d/bpub3.json" --backend cuda
  grep -qi "cuda" "$d/backend_cuda.log" || die "--backend cuda without a GPU failed without saying why"
  [ ! -e "$d/b3.json" ] || die "--backend cuda without a GPU still wrote a proof"
fi
expect_rc nonzero "$d/backend_bad.log" "$CUZK_BIN" prove "$zkey" "$wtns" "$d/b4.json" "$d/bpub4.json" --backend tpu

for f in "$zkey" "$wtns" "$c/circuit.r1cs"; do
  expect_rc 0 "$d/info.$(basename "$f").log" "$CUZK_BIN" info "$f"
  [ -s "$d/info.$(basename "$f").log" ] || die "cuzk info $f printed nothing"
done
expect_rc 0 "$d/help.log" "$CUZK_BIN" --help
expect_rc nonzero "$d/unknown.log" "$CUZK_BIN" no-such-command
log "PASS cli_flags.$case"
