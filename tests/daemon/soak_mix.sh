#!/usr/bin/env bash
# The kill-soak on a mix given by --circuits (folders of key, verification key and witness), with
# its proofs packed (SOAK_PROOFS, as on a GPU host without node) and verified afterwards by
# `soak.sh verify`: the line names the mix, and every packed proof verifies.
set -euo pipefail
: "${CUZK_SRC:?}" "${E2E_WORK:?}" "${BUILD_DIR:?}"
mix="$(mktemp -d /tmp/cuzk-mix.XXXXXX)"
trap 'rm -rf "$mix"' EXIT
for c in poseidon_merkle chain_pow2 multiplier; do
  mkdir -p "$mix/$c"
  cp "$E2E_WORK/circuits/$c/circuit.zkey" "$E2E_WORK/circuits/$c/vk.json" "$mix/$c/"
  cp "$E2E_WORK/cases/$c/witness.wtns" "$mix/$c/"
done
cp "$E2E_WORK/circuits/poseidon_merkle/circuit.r1cs" "$mix/poseidon_merkle/"
out="$(SOAK_NO_SETUP=1 SOAK_PROOFS="$mix/proofs.tgz" bash "$CUZK_SRC/scripts/soak.sh" 0.3 --circuits "$mix")"
echo "$out"
grep -q "circuits chain_pow2 multiplier poseidon_merkle," <<<"$out" || { echo "FAIL: the mix is not the folders" >&2; exit 1; }
grep -Eq "^soak: [0-9]+ jobs, [1-9][0-9]* proofs to verify .* 0 lost, 0 leaked" <<<"$out" || { echo "FAIL: $out" >&2; exit 1; }
n=$(sed -n 's/^soak: [0-9]* jobs, \([0-9]*\) proofs to verify.*/\1/p' <<<"$out")
v="$(bash "$CUZK_SRC/scripts/soak.sh" verify "$mix/proofs.tgz")"
echo "$v"
grep -q "^soak proofs: $n of $n verified by snarkjs" <<<"$v" || { echo "FAIL: $v" >&2; exit 1; }
