#!/usr/bin/env bash
# Here, with node: snarkjs verifies every proof that scripts/gpu_e2e.sh made on the GPU host, and each
# public.json equals snarkjs's own where the payload had one.
#   scripts/gpu_e2e_verify.sh proofs.tgz
set -euo pipefail
cd "$(dirname "$0")/.."
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
tar -C "$tmp" -xzf "$1"
fail=0
for p in "$tmp"/proofs/*/; do
  c="$(basename "$p")"
  if node node_modules/snarkjs/build/cli.cjs groth16 verify "$p/vk.json" "$p/public.json" "$p/proof.json" 2>&1 | grep -q "OK!"; then
    msg="snarkjs verify OK"
  else
    msg="snarkjs verify FAILED"; fail=1
  fi
  if [ -f "$p/snarkjs_public.json" ]; then
    if node tests/e2e/json_tool.mjs equal "$p/public.json" "$p/snarkjs_public.json" >/dev/null 2>&1; then
      msg="$msg, public.json equals snarkjs's"
    else
      msg="$msg, public.json DIFFERS from snarkjs's"; fail=1
    fi
  fi
  echo "$c: $msg"
done
exit $fail
