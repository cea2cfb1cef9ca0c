#!/usr/bin/env bash
# A circuit's files as circom and snarkjs make them, and bad ones. An r1cs from which circom dropped
# unused private inputs (nWires below 1 + nPubOut + nPubIn + nPrvIn) checks every job's constraints
# like any other, and its proofs verify. An r1cs of another circuit is refused by --check-config and
# at start, naming circuits[i].r1cs. A circuit file damaged while the daemon runs fails each job at
# once with the reason, without retries. A zkey replaced for a while by a larger circuit's fails its
# jobs at once meanwhile, and once it is back its jobs are proved again, without a restart.
source "$(dirname "$0")/lib.sh"
require_tools
PTAU="$E2E_WORK/ptau/pot10_final.ptau"
CIRCOM_CLI="$CUZK_SRC/node_modules/circom2/cli.js"
[ -f "$PTAU" ] || die "e2e fixture missing: $PTAU"

# 1. The circuit: six private inputs declared, two used; circom --O2 keeps wires for those two only.
D="$WORK/dropped"
mkdir -p "$D"
cat >"$D/dropped.circom" <<'EOF'
pragma circom 2.0.0;
template Dropped() {
  signal input a;
  signal input b;
  signal input unused1;
  signal input unused2;
  signal input unused3;
  signal input unused4;
  signal input pub;
  signal output out;
  signal t;
  t <== a * b;
  out <== t * pub;
}
component main {public [pub]} = Dropped();
EOF
(cd "$D" && node "$CIRCOM_CLI" dropped.circom --prime bls12381 --O2 --r1cs --wasm -o . >compile.log 2>&1) ||
  die "circom: $(cat "$D/compile.log")"
snarkjs r1cs info "$D/dropped.r1cs" >"$D/info.log" 2>&1 || die "snarkjs r1cs info: $(cat "$D/info.log")"
count() { sed 's/\x1b\[[0-9;]*m//g' "$D/info.log" | sed -n "s/.*# of $1: \([0-9]*\).*/\1/p"; }
wires=$(count Wires) prv=$(count "Private Inputs") pub=$(count "Public Inputs") outs=$(count Outputs)
[ -n "$wires" ] && [ "$wires" -lt $((1 + outs + pub + prv)) ] ||
  die "the circuit does not have fewer wires than 1 + outputs + inputs: $(cat "$D/info.log")"
snarkjs groth16 setup "$D/dropped.r1cs" "$PTAU" "$D/dropped.zkey" >"$D/setup.log" 2>&1 ||
  die "snarkjs setup: $(cat "$D/setup.log")"
snarkjs zkey export verificationkey "$D/dropped.zkey" "$D/vk.json" >/dev/null 2>&1 || die "snarkjs vk export"
echo '{"a": "3", "b": "5", "unused1": "0", "unused2": "0", "unused3": "0", "unused4": "0", "pub": "7"}' >"$D/in.json"
snarkjs wtns calculate "$D/dropped_js/dropped.wasm" "$D/in.json" "$IN/dropped.wtns" >/dev/null 2>&1 ||
  die "snarkjs wtns calculate"
log "circuit with dropped private inputs: $wires wires, 1 + $outs + $pub + $prv signals declared"

dropped_circuit="[[circuits]]
name = \"dropped\"
zkey = \"$D/dropped.zkey\"
r1cs = \"$D/dropped.r1cs\""
write_config 1 2 "$dropped_circuit"
"$SUP_BIN" --config "$CONFIG" --check-config >"$WORK/check.log" 2>&1 || die "--check-config refused it: $(cat "$WORK/check.log")"
start_daemon
job=$(submit dropped "$IN/dropped.wtns" "$IN/dropped.wtns")
await_ok "$job" "$WORK/out_dropped" "$D/vk.json" 2
# Its r1cs is used: a witness that does not satisfy it fails in synthesis.
make_unsat "$IN/dropped.wtns" "$IN/dropped_unsat.wtns"
job=$(submit dropped "$IN/dropped_unsat.wtns")
rc=0
cz await --socket "$SOCK" --out "$WORK/out_unsat" --timeout 60 "$job" >"$WORK/await_unsat.log" 2>&1 || rc=$?
[ $rc -eq 1 ] && grep -qF "does not satisfy constraint" "$WORK/await_unsat.log" ||
  die "an unsatisfied witness of the circuit: await exited $rc: $(cat "$WORK/await_unsat.log")"
stop_daemon
rm -rf "$WORK/state"
log "an r1cs without the unused private inputs' wires: accepted, jobs proved and checked"

# 2. The r1cs of another circuit: refused by --check-config and at start, naming the key and file.
write_config 1 2
sed -i "s#$CIRC/poseidon_merkle/circuit.r1cs#$CIRC/multiplier/circuit.r1cs#" "$CONFIG"
rc=0
"$SUP_BIN" --config "$CONFIG" --check-config >"$WORK/check.log" 2>&1 || rc=$?
[ $rc -eq 78 ] && grep -qF "circuits[0].r1cs" "$WORK/check.log" && grep -qF "$CIRC/multiplier/circuit.r1cs" "$WORK/check.log" ||
  die "--check-config with the r1cs of another circuit: rc $rc: $(cat "$WORK/check.log")"
refused_at_start "the r1cs of another circuit" "circuits[0].r1cs" "$CIRC/multiplier/circuit.r1cs" "nWires="
rm -rf "$WORK/state"

# 3. An r1cs damaged after the start (before a worker first loads it): the job fails at once,
# naming the file, after one synthesis and with no attempt counted as a retryable failure.
cp "$CIRC/poseidon_merkle/circuit.r1cs" "$WORK/poseidon.r1cs"
write_config 1 2
sed -i "s#$CIRC/poseidon_merkle/circuit.r1cs#$WORK/poseidon.r1cs#" "$CONFIG"
start_daemon
head -c 200 "$CIRC/poseidon_merkle/circuit.r1cs" >"$WORK/poseidon.r1cs"
job=$(submit poseidon "$W_POSEIDON")
rc=0
cz await --socket "$SOCK" --out "$WORK/out_damaged" --timeout 60 "$job" >"$WORK/await_damaged.log" 2>&1 || rc=$?
[ $rc -eq 1 ] && grep -qF "$WORK/poseidon.r1cs" "$WORK/await_damaged.log" ||
  die "a damaged r1cs: await exited $rc: $(cat "$WORK/await_damaged.log")"
attempts=$(node -e '
const http = require("http");
http.get({socketPath: process.argv[1], path: "/v1/proofs/" + process.argv[2]}, r => { let b = ""; r.on("data", d => b += d);
  r.on("end", () => { const j = JSON.parse(b); console.log(j.state + " " + j.partitions[0].attempts); }); });
' "$SOCK" "$job")
[ "$attempts" = "failed 0" ] || die "a damaged r1cs was retried: state and attempts '$attempts'"
! grep -qF "gave up" "$WORK/await_damaged.log" || die "a damaged r1cs was retried: $(cat "$WORK/await_damaged.log")"
sleep 0.6
[ "$(grep -c ",SYNTH_START,$job," "$WORK/state/timeline.log")" -eq 1 ] || die "a damaged r1cs: more than one synthesis"
no_restarts "a damaged r1cs"
stop_daemon
rm -rf "$WORK/state"
log "a damaged r1cs: the job failed at once"

# 4. mult's zkey replaced, after the start and before a synthesis worker first loads it, by
# poseidon's, larger than the slot rings (sized for chain and mult alone): its job fails at once
# naming the file; put back, the workers read it again and prove.
cp "$CIRC/multiplier/circuit.zkey" "$WORK/mult.zkey"
write_config 1 2
sed -i '/^\[\[circuits\]\]$/{N;/name = "poseidon"/{N;N;d}}' "$CONFIG"
sed -i "s#$CIRC/multiplier/circuit.zkey#$WORK/mult.zkey#" "$CONFIG"
! grep -q poseidon "$CONFIG" || die "poseidon is still in the config"
start_daemon
mv "$WORK/mult.zkey" "$WORK/mult.zkey.orig"
cp "$CIRC/poseidon_merkle/circuit.zkey" "$WORK/mult.zkey.new" && mv "$WORK/mult.zkey.new" "$WORK/mult.zkey"
job=$(submit mult "$W_MULT")
rc=0
cz await --socket "$SOCK" --out "$WORK/out_swapped" --timeout 60 "$job" >"$WORK/await_swapped.log" 2>&1 || rc=$?
[ $rc -eq 1 ] && grep -qF "$WORK/mult.zkey" "$WORK/await_swapped.log" && grep -qF "does not fit the slot ring" "$WORK/await_swapped.log" ||
  die "a zkey replaced by a larger one: await exited $rc: $(cat "$WORK/await_swapped.log")"
! grep -qF "gave up" "$WORK/await_swapped.log" || die "a zkey too large for the rings was retried: $(cat "$WORK/await_swapped.log")"
sleep 0.6
[ "$(grep -c ",SYNTH_START,$job," "$WORK/state/timeline.log")" -eq 1 ] || die "a zkey too large for the rings: more than one synthesis"
mv "$WORK/mult.zkey.orig" "$WORK/mult.zkey"
job=$(submit mult "$W_MULT")
await_ok "$job" "$WORK/out_restored" "$VK_MULT" 1
no_restarts "a zkey replaced and put back"
stop_daemon
log "a zkey replaced for a while: its jobs failed at once meanwhile, and were proved once it was back"
log "ok"
