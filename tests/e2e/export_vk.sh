#!/usr/bin/env bash
# `cuzk export vk` writes the same verification_key.json as `snarkjs zkey export verificationkey`
# (compared as JSON: same keys, same decimal strings, including vk_alphabeta_12).
# Usage: export_vk.sh <circuit>
source "$(dirname "$0")/lib.sh"
require_tools
circuit="$1"
c="$(circuit_dir "$circuit")"
[ -f "$c/.stamp" ] || die "circuit fixture '$circuit' is missing (its e2e setup test failed?)"
d="$(scratch_dir "export_vk.$circuit")"
expect_rc 0 "$d/export.log" "$CUZK_BIN" export vk "$c/circuit.zkey" "$d/vk.json"
json_equal "$d/vk.json" "$c/vk.json"
log "PASS export_vk.$circuit"
