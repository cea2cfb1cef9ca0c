#!/usr/bin/env bash
# Fixture: one small powers-of-tau ceremony (new, one contribution, phase-2 preparation) shared by
# every e2e circuit. Kept in the build tree and rebuilt only when the snarkjs version or power changes.
source "$(dirname "$0")/lib.sh"
require_tools

key="ptau-v1 curve=$E2E_CURVE power=$PTAU_POWER $(tool_versions)"
dir="$(dirname "$PTAU_FILE")"
mkdir -p "$dir"
if [ -f "$PTAU_FILE" ] && [ "$(cat "$PTAU_FILE.stamp" 2>/dev/null)" = "$key" ]; then
  log "reusing $PTAU_FILE"
  exit 0
fi
rm -f "$dir"/*.ptau "$PTAU_FILE.stamp"
log "powers of tau, $PTAU_CURVE, 2^$PTAU_POWER (the phase-2 preparation takes a minute or so)"
quiet "$dir/new.log" snarkjs powersoftau new "$PTAU_CURVE" "$PTAU_POWER" "$dir/pot_0000.ptau"
quiet "$dir/contribute.log" snarkjs powersoftau contribute "$dir/pot_0000.ptau" "$dir/pot_0001.ptau" \
  --name="cuzk e2e" -e="cuzk e2e test entropy, not a real ceremony"
quiet "$dir/prepare.log" snarkjs powersoftau prepare phase2 "$dir/pot_0001.ptau" "$PTAU_FILE.tmp"
mv "$PTAU_FILE.tmp" "$PTAU_FILE"
rm -f "$dir/pot_0000.ptau" "$dir/pot_0001.ptau"
printf '%s' "$key" >"$PTAU_FILE.stamp"
log "wrote $PTAU_FILE"
