#!/usr/bin/env bash
# One daemon serves BLS12-381 and BN254 circuits side by side: each circuit's curve comes from its
# zkey, the GPU worker keeps a key of each curve resident, the synthesis workers evaluate each in its
# own field, and snarkjs accepts every proof. A BN254 job from circuit inputs runs the circuit's
# bn128 witness generator. A witness of one curve submitted to a circuit of the other is refused at
# submission, naming both curves; a generator of the wrong curve is a config error. It runs with
# synthesis.abc = "cpu" (the other daemon tests with the default, "gpu"): the synthesis workers
# evaluate a, b, c into the slots in each curve's field.
source "$(dirname "$0")/lib.sh"
require_tools
share_witness_runtime
BN_CIRC="$E2E_WORK/circuits.bn128"
BN_CASES="$E2E_WORK/cases.bn128"
for f in "$BN_CIRC/poseidon_merkle/circuit.zkey" "$BN_CASES/poseidon_merkle/witness.wtns" \
         "$BN_CIRC/multiplier/circuit.zkey" "$BN_CASES/multiplier/witness.wtns"; do
  [ -f "$f" ] || die "e2e fixture missing: $f"
done
G_BN_MULT="$BN_CIRC/multiplier/multiplier_cpp"
[ -d "$G_BN_MULT" ] || die "the bn128 multiplier fixture lacks circom's --c output"
INPUT_DIRS="\"$CASES\", \"$BN_CASES\", \"$IN\""

bn_circuits="
[[circuits]]
name = \"poseidon_bn\"
zkey = \"$BN_CIRC/poseidon_merkle/circuit.zkey\"
r1cs = \"$BN_CIRC/poseidon_merkle/circuit.r1cs\"
[[circuits]]
name = \"mult_bn\"
zkey = \"$BN_CIRC/multiplier/circuit.zkey\"
witness_generator = \"$G_BN_MULT\""

# A BLS12-381 generator on a BN254 key: refused at start with exit 78, naming the curves.
write_config 1 3 "$bn_circuits
[[circuits]]
name = \"mixed\"
zkey = \"$BN_CIRC/multiplier/circuit.zkey\"
witness_generator = \"$CIRC/multiplier/multiplier_cpp\""
refused_at_start "a generator of the other curve" "bls12381" "bn128"

write_config 2 3 "$bn_circuits"
sed -i 's/^workers = 2$/workers = 2\nabc = "cpu"/' "$CONFIG"
start_daemon
grep 'slot ring' "$WORK/sup.log" | grep -q 'w only' && die "the slot ring is w only with synthesis.abc = cpu"

j_bls=$(submit poseidon "$W_POSEIDON" "$W_POSEIDON")
j_bn=$(submit poseidon_bn "$BN_CASES/poseidon_merkle/witness.wtns" "$BN_CASES/poseidon_merkle/witness.wtns")
j_in=$(cz submit --socket "$SOCK" --circuit mult_bn --input "$CUZK_SRC/tests/e2e/inputs/multiplier.json" \
  --input "$CUZK_SRC/tests/e2e/inputs/multiplier.json")
j_mult=$(submit mult "$W_MULT")
await_ok "$j_bls" "$WORK/out_bls" "$VK_POSEIDON" 2
await_ok "$j_bn" "$WORK/out_bn" "$BN_CIRC/poseidon_merkle/vk.json" 2
await_ok "$j_in" "$WORK/out_in" "$BN_CIRC/multiplier/vk.json" 2
await_ok "$j_mult" "$WORK/out_mult" "$VK_MULT" 1
grep -q '"curve": "bn128"' "$WORK/out_bn/proof_0.json" || die "a BN254 proof does not say curve bn128"
grep -q '"curve": "bls12381"' "$WORK/out_bls/proof_0.json" || die "a BLS12-381 proof does not say curve bls12381"
cmp -s "$WORK/out_in/public_0.json" "$BN_CASES/multiplier/snarkjs_public.json" ||
  die "the BN254 job from inputs has other public signals than snarkjs's"

# A witness of the other curve: 400 at submission, naming both curves, and no job.
rc=0
cz submit --socket "$SOCK" --circuit poseidon --witness "$BN_CASES/poseidon_merkle/witness.wtns" \
  >"$WORK/cross.log" 2>&1 || rc=$?
[ "$rc" -ne 0 ] || die "a bn128 witness was accepted by a BLS12-381 circuit"
grep -qF "BN254 (bn128) witness" "$WORK/cross.log" && grep -qF "is BLS12-381 (bls12381)" "$WORK/cross.log" ||
  die "the refusal does not name both curves: $(cat "$WORK/cross.log")"
[ "$(jstat 's.workers.filter(w => w.restarts > 0).length')" = 0 ] || die "a worker restarted"
# a, b, c were evaluated by synthesis: the GPU worker's timeline has no eval stage.
! grep -q "GPU_END,$j_bn,.*kernel_eval_ms=" "$WORK/state/timeline.log" ||
  die "the GPU worker evaluated a, b, c: $(grep "GPU_END,$j_bn," "$WORK/state/timeline.log" | head -2)"
log "ok"
