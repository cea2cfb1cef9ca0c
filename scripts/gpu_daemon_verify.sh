#!/usr/bin/env bash
# Here, after scripts/gpu_daemon.sh ran on the GPU host: snarkjs verifies every proof it brought
# back (DIR/proofs/<circuit>_<job>/proof_<i>.json against DIR/<circuit>_vk.json).
#   scripts/gpu_daemon_verify.sh DIR
set -euo pipefail
dir="$1"
snarkjs=(node "$(cd "$(dirname "$0")/.." && pwd)/node_modules/snarkjs/build/cli.cjs")
n=0; bad=0
for jd in "$dir"/proofs/*/; do
  c="$(basename "$jd")"; c="${c%%_*}"
  for p in "$jd"/proof_*.json; do
    i="${p##*proof_}"; i="${i%.json}"
    if "${snarkjs[@]}" groth16 verify "$dir/${c}_vk.json" "$jd/public_$i.json" "$p" 2>&1 | grep -q OK; then n=$((n + 1))
    else echo "REJECTED: $p" >&2; bad=$((bad + 1)); fi
  done
done
echo "snarkjs verified $n proofs, rejected $bad"
[ $bad -eq 0 ] && [ $n -gt 0 ]
