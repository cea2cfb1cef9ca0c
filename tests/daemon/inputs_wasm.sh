#!/usr/bin/env bash
# Jobs from circuit inputs with circom's .wasm as the witness generator, as circom projects ship it:
# configured (the .wasm file) and added at run time (`cuzk circuit add` naming the <name>_js folder),
# compiled by the daemon into its state folder, the proofs accepted by snarkjs. Once the program
# traced on the first input is built, partitions run on it (counted, and on the timeline). An input
# on another path through the circuit's code is traced beside the work into a further program, on
# which the next inputs of that path run. Bad inputs are refused at submission; a module that never
# ends fails its job at the timeout while the workers carry on.
source "$(dirname "$0")/lib.sh"
require_tools
share_witness_runtime
command -v wasm2c >/dev/null 2>&1 || { [ -z "${CI:-}" ] || die "no wasm2c (wabt)"; log "skipped: no wasm2c (wabt)"; exit $SKIP; }
KEYS="$WORK/keys"
mkdir -p "$KEYS/mult_js"
cp "$CIRC/multiplier/circuit.zkey" "$KEYS/mult.zkey"
cp "$CIRC/multiplier/circuit.wasm" "$KEYS/mult_js/mult.wasm"
# A copy of the module whose template loops forever.
wasm2wat "$CIRC/multiplier/circuit.wasm" -o "$WORK/hang.wat"
awk '{ if (s == 1 && $0 !~ /^    \(local /) { print "    loop\n      br 0\n    end"; s = 2 }
       print
       if (s == 0 && $0 ~ /^  \(func \$Multiplier_[0-9]+_run /) s = 1 }' "$WORK/hang.wat" >"$WORK/hang2.wat"
grep -q "^      br 0$" "$WORK/hang2.wat" || die "could not patch the module"
wat2wasm --debug-names "$WORK/hang2.wat" -o "$KEYS/hang.wasm"

# witness_ops: branches, loops and indices on its inputs; a development key.
(
  cd "$CUZK_SRC"
  node node_modules/circom2/cli.js tests/e2e/circuits/witness_ops.circom --prime bls12381 --O2 --wasm --r1cs \
    -l node_modules -o "$(realpath --relative-to=. "$KEYS")" >"$WORK/circom.log" 2>&1
) || die "circom: $(tail -5 "$WORK/circom.log")"
cz setup "$KEYS/witness_ops.r1cs" "$KEYS/ops.zkey" --seed inputs_wasm >"$WORK/setup.log" 2>&1 || die "setup: $(cat "$WORK/setup.log")"
cz export vk "$KEYS/ops.zkey" "$WORK/ops_vk.json" >/dev/null

write_config 1 3 "
[[circuits]]
name = \"ops\"
zkey = \"$KEYS/ops.zkey\"
witness_generator = \"$KEYS/witness_ops_js/witness_ops.wasm\"
[[circuits]]
name = \"mult_wasm\"
zkey = \"$KEYS/mult.zkey\"
witness_generator = \"$CIRC/multiplier/circuit.wasm\"
[[circuits]]
name = \"mult_hang\"
zkey = \"$KEYS/mult.zkey\"
witness_generator = \"$KEYS/hang.wasm\""
sed -i "s/^workers = 1$/workers = 1\nwitness_timeout_s = 3/" "$CONFIG"
sed -i "/^\[daemon\]/a key_dirs = [\"$KEYS\"]" "$CONFIG"
"$SUP_BIN" --config "$CONFIG" >>"$WORK/sup.log" 2>&1 &
SUP_PID=$!
# The first start compiles both modules.
wait_until 300 "all workers idle" "{ kill -0 $SUP_PID 2>/dev/null || die 'the supervisor exited at start'; } &&
  jstat \"s.workers.every(w=>w.state==='idle')\" 2>/dev/null | grep -qx true"
synth_pid="$(pid_of synth0)"
# 1. Proofs from inputs through the configured .wasm; the public outputs as the circuit computes them.
printf '{"a": 3, "b": "11"}\n' >"$IN/m0.json"
printf '{"a": "0x5", "b": 7}\n' >"$IN/m1.json"
jm=$(inputs_job mult_wasm "$IN/m0.json" "$IN/m1.json")
await_ok "$jm" "$WORK/out_m" "$VK_MULT" 2
grep -q '"33"' "$WORK/out_m/public_0.json" && grep -q '"35"' "$WORK/out_m/public_1.json" ||
  die "public outputs are not a*b: $(cat "$WORK/out_m/public_0.json" "$WORK/out_m/public_1.json")"
log "jobs from inputs through circuit.wasm: proofs verified by snarkjs"

# 2. The program traced on the wasm: partitions run on it once it is built.
until_program mult_wasm "$IN/m1.json" "$VK_MULT"
log "the program traced on the wasm: partitions on it counted and marked on the timeline"

# 2b. Paths: an input that the first program refuses runs natively and is traced beside the work;
#     the next inputs of its path run on that program (witness_path=1), and the trace is counted.
printf '{"x": "7", "y": "3", "k": "3"}\n' >"$IN/o_first.json"
printf '{"x": "5", "y": "9", "k": "3"}\n' >"$IN/o_other.json"
printf '{"x": "6", "y": "11", "k": "3"}\n' >"$IN/o_other2.json"
until_program ops "$IN/o_first.json" "$WORK/ops_vk.json"
jo=$(inputs_job ops "$IN/o_other.json")
await_ok "$jo" "$WORK/out_o" "$WORK/ops_vk.json" 1
sleep 0.6
grep -q "SYNTH_END,$jo,.*witness_engine=fallback.*witness_trace=1" "$WORK/state/timeline.log" ||
  die "the other path's input was not traced: $(grep "SYNTH_END,$jo," "$WORK/state/timeline.log")"
n=0
while :; do
  n=$((n + 1))
  jp=$(inputs_job ops "$IN/o_other2.json")
  await_ok "$jp" "$WORK/out_p$n" "$WORK/ops_vk.json" 1
  sleep 0.6
  grep -q "SYNTH_END,$jp,.*witness_engine=program,.*witness_path=1" "$WORK/state/timeline.log" && break
  [ $n -lt 20 ] || die "no partition ran on the further path's program: $(grep SYNTH_END "$WORK/state/timeline.log" | tail -3)"
done
metrics | grep -q '^cuzk_witness_traces_total [1-9]' || die "the trace is not counted: $(metrics | grep witness_traces)"
log "a further path traced beside the work: its inputs run on its program, the trace counted"

# 3. Added at run time, naming circom's <name>_js folder.
cz circuit add --socket "$SOCK" --name mult_js --zkey "$KEYS/mult.zkey" --witness-generator "$KEYS/mult_js" \
  >"$WORK/add.log" 2>&1 || die "circuit add: $(cat "$WORK/add.log")"
ja=$(inputs_job mult_js "$IN/m0.json")
await_ok "$ja" "$WORK/out_a" "$VK_MULT" 1
log "a circuit added at run time with its _js folder: proofs verified"

# 4. Inputs that cannot be right are refused at submission.
printf '{"a": 1}\n' >"$IN/bad.json"
rc=0
inputs_job mult_wasm "$IN/bad.json" >"$WORK/bad.log" 2>&1 || rc=$?
[ $rc -eq 2 ] && grep -q "missing input" "$WORK/bad.log" || die "bad inputs: exit $rc: $(cat "$WORK/bad.log")"
log "bad inputs refused at submission"

# 5. A module that never ends: the job fails at the timeout, the worker is not restarted, and a good
#    job submitted meanwhile succeeds.
jh=$(inputs_job mult_hang "$IN/m0.json")
jg=$(inputs_job mult_wasm "$IN/m1.json")
await_ok "$jg" "$WORK/out_g" "$VK_MULT" 1
wait_until 120 "the hanging job to fail" "[ \"\$(job_field $jh state)\" = failed ]"
job_field "$jh" error | grep -q "witness_timeout_s" || die "hang: error lacks the timeout: $(job_field "$jh" error)"
[ "$(pid_of synth0)" = "$synth_pid" ] || die "the synthesis worker was restarted"
log "PASS daemon.inputs_wasm"
