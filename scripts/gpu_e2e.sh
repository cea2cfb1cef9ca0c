#!/usr/bin/env bash
# On a GPU host (no node there): proves every case of a payload folder with
# `cuzk prove --backend cuda --verify`, and packs proof.json, public.json and vk.json per case into
# OUT/proofs.tgz, so that snarkjs can verify them on a machine that has node (scripts/gpu_e2e_verify.sh).
#   scripts/gpu_e2e.sh BUNDLE PAYLOAD OUT
# PAYLOAD/<case>/ holds witness.wtns and either circuit.zkey + vk.json (a snarkjs ceremony key) or
# circuit.r1cs.xz (keyed here with `cuzk setup`, for circuits too large for a ceremony in test time).
set -uo pipefail
bundle="$1" payload="$2" out="$3"
run="$bundle/run"
mkdir -p "$out/proofs"
fail=0
for d in "$payload"/*/; do
  c="$(basename "$d")"
  p="$out/proofs/$c"
  mkdir -p "$p"
  if [ ! -f "$d/circuit.zkey" ]; then
    xz -dc "$d/circuit.r1cs.xz" >"$d/circuit.r1cs" &&
      "$run" cuzk -q setup "$d/circuit.r1cs" "$d/circuit.zkey" --seed "$c" 2>/dev/null &&
      "$run" cuzk export vk "$d/circuit.zkey" "$d/vk.json" || { echo "$c: SETUP FAILED"; fail=1; continue; }
  fi
  cp "$d/vk.json" "$p/vk.json"
  [ -f "$d/snarkjs_public.json" ] && cp "$d/snarkjs_public.json" "$p/"
  if "$run" cuzk prove "$d/circuit.zkey" "$d/witness.wtns" "$p/proof.json" "$p/public.json" \
    --backend cuda --verify >"$p/prove.log" 2>&1; then
    echo "$c: proved on the GPU, cuzk verify OK ($(grep -o 'proving[^:]*: [0-9.]* s' "$p/prove.log" | tail -1))"
  else
    echo "$c: PROVE FAILED"; tail -3 "$p/prove.log"; fail=1
  fi
done
tar -C "$out" -czf "$out/proofs.tgz" proofs && rm -rf "$out/proofs"
exit $fail
