#!/usr/bin/env bash
# Jobs from circuit inputs: the synthesis workers run circom's C++ witness generator (compiled by the
# daemon and cached under state_dir), and snarkjs accepts the proofs. Bad inputs are refused at
# submission naming the signal; inputs the circuit rejects fail their job naming the assert; generated
# code that segfaults or never ends fails its job with the reason, while the workers and other jobs
# carry on; a job stuck in its generator can be cancelled.
source "$(dirname "$0")/lib.sh"
require_tools
share_witness_runtime
G_POSEIDON="$CIRC/poseidon_merkle/poseidon_merkle_cpp"
G_MULT="$CIRC/multiplier/multiplier_cpp"
[ -d "$G_POSEIDON" ] && [ -d "$G_MULT" ] || die "the circuit fixtures lack circom's --c output"
# The poseidon generator takes the longest to compile: use the artefact the e2e tests built, when
# there is one (the multiplier's generators are compiled by the daemon itself).
# The cache holds the circuit's artefacts for both curves: take the BLS12-381 one.
for a in "$E2E_WORK"/cache/witness/poseidon_merkle-*/; do
  grep -q '"curve": "bls12381"' "$a/manifest.json" 2>/dev/null && G_POSEIDON="${a%/}"
done

# Broken generators: copies of the multiplier's generated code that segfault, or loop forever.
broken_copy() {  # broken_copy NAME C_STATEMENT
  mkdir -p "$WORK/$1"
  cp -r "$G_MULT" "$WORK/$1/multiplier_cpp"
  sed -i "s/^void Multiplier_0_run(uint ctx_index,Circom_CalcWit\\* ctx){\$/&\\n$2/" "$WORK/$1/multiplier_cpp/multiplier.cpp"
  grep -qF "$2" "$WORK/$1/multiplier_cpp/multiplier.cpp" || die "could not patch the generated code for $1"
}
broken_copy crash '{ volatile int* p = nullptr; *p = 1; }'
broken_copy hang '{ volatile int spin = 1; while (spin) {} }'

write_config 2 3 "
[[circuits]]
name = \"poseidon_in\"
zkey = \"$CIRC/poseidon_merkle/circuit.zkey\"
witness_generator = \"$G_POSEIDON\"
[[circuits]]
name = \"mult_in\"
zkey = \"$CIRC/multiplier/circuit.zkey\"
witness_generator = \"$G_MULT\"
[[circuits]]
name = \"mult_crash\"
zkey = \"$CIRC/multiplier/circuit.zkey\"
witness_generator = \"$WORK/crash/multiplier_cpp\"
[[circuits]]
name = \"mult_hang\"
zkey = \"$CIRC/multiplier/circuit.zkey\"
witness_generator = \"$WORK/hang/multiplier_cpp\""
sed -i 's/^workers = 2$/workers = 2\nwitness_timeout_s = 3/' "$CONFIG"
"$SUP_BIN" --config "$CONFIG" >>"$WORK/sup.log" 2>&1 &
SUP_PID=$!
# The first start compiles four generators.
wait_until 600 "all workers idle" "jstat \"s.workers.every(w=>w.state==='idle')\" 2>/dev/null | grep -qx true"
synth_pids="$(pid_of synth0) $(pid_of synth1)"

# 1. Proofs from inputs, two circuits, several partitions; public outputs as the circuit computes them.
printf '{"a": 3, "b": "11"}\n' >"$WORK/m0.json"
printf '{"a": "0x5", "b": 7}\n' >"$WORK/m1.json"
jm=$(inputs_job mult_in "$WORK/m0.json" "$WORK/m1.json")
jp=$(inputs_job poseidon_in "$CUZK_SRC/tests/e2e/inputs/poseidon_merkle.json" "$CUZK_SRC/tests/e2e/inputs/poseidon_merkle.json")
await_ok "$jm" "$WORK/out_m" "$VK_MULT" 2
await_ok "$jp" "$WORK/out_p" "$VK_POSEIDON" 2
grep -q '"33"' "$WORK/out_m/public_0.json" && grep -q '"35"' "$WORK/out_m/public_1.json" ||
  die "public outputs are not a*b: $(cat "$WORK/out_m/public_0.json" "$WORK/out_m/public_1.json")"
grep -q "SYNTH_END,$jp,.*witness_ms=.*source=inputs,witness_engine=" "$WORK/state/timeline.log" ||
  die "SYNTH_END lacks witness_ms/source=inputs/witness_engine: $(grep SYNTH_END "$WORK/state/timeline.log" | tail -3)"
log "jobs from inputs: proofs verified by snarkjs"

# 1b. The first inputs a circuit accepts run on circom's generator and are the sample its compiled
#     witness program is traced on, beside the work; once it is built, inputs on the traced path run
#     on the program (counted and on the timeline), and every proof verifies.
wait_until 120 "the poseidon program to be built" "ls $WORK/state/witness/*/program.bin 2>/dev/null | grep -q . || ls $G_POSEIDON/program.bin 2>/dev/null | grep -q ."
until_program poseidon_in "$CUZK_SRC/tests/e2e/inputs/poseidon_merkle.json" "$VK_POSEIDON"
log "compiled witness program: partitions on it counted and marked on the timeline"

# 2. Inputs that cannot be right are refused at submission, naming the signal.
expect_refused() {  # expect_refused WANT JSON
  printf '%s\n' "$2" >"$WORK/bad.json"
  set +e
  inputs_job mult_in "$WORK/bad.json" >"$WORK/bad.log" 2>&1
  local rc=$?
  set -e
  [ $rc -eq 2 ] || die "bad inputs ($1) exited $rc, want 2: $(cat "$WORK/bad.log")"
  grep -qF "$1" "$WORK/bad.log" || die "bad inputs: message lacks '$1': $(cat "$WORK/bad.log")"
}
expect_refused "missing input signal 'b'" '{"a": 1}'
expect_refused "signal 'c' is not an input" '{"a": 1, "b": 2, "c": 3}'
expect_refused "signal 'a': 'abc' is not a decimal number" '{"a": "abc", "b": 2}'
expect_refused "signal 'b': value is not below the field's prime" \
  '{"a": 1, "b": "52435875175126190479447740508185965837690552500527637822603658699938581184513"}'
log "bad inputs refused at submission"

# 3. Inputs the circuit itself rejects: the job fails naming the template and line of the assert.
sed 's/"root": "[0-9]*"/"root": "12345"/' "$CUZK_SRC/tests/e2e/inputs/poseidon_merkle.json" >"$WORK/wrong_root.json"
jw=$(inputs_job poseidon_in "$WORK/wrong_root.json")
cz await --socket "$SOCK" --out "$WORK/out_w" --timeout 120 "$jw" >"$WORK/await_w.log" 2>&1 && die "the wrong root was proved"
[ "$(job_field "$jw" state)" = failed ] || die "wrong root: job state $(job_field "$jw" state)"
job_field "$jw" error | grep -Eq "Failed assert in template/function PoseidonMerkle line [0-9]+" ||
  die "wrong root: error does not name the assert: $(job_field "$jw" error)"
log "inputs the circuit rejects: job failed naming the assert"

# 4. Generated code that segfaults, and code that never ends: the job fails with the reason (the
#    crash after its attempts, the hang at its first timeout), the synthesis workers are never
#    restarted, and a good job submitted meanwhile succeeds.
jc=$(inputs_job mult_crash "$WORK/m0.json")
jh=$(inputs_job mult_hang "$WORK/m0.json")
jg=$(inputs_job mult_in "$WORK/m1.json")
await_ok "$jg" "$WORK/out_g" "$VK_MULT" 1
wait_until 120 "the crashing and hanging jobs to fail" \
  "[ \"\$(job_field $jc state)\" = failed ] && [ \"\$(job_field $jh state)\" = failed ]"
job_field "$jc" error | grep -q "Segmentation fault" || die "crash: error lacks the signal: $(job_field "$jc" error)"
job_field "$jh" error | grep -q "witness_timeout_s" || die "hang: error lacks the timeout: $(job_field "$jh" error)"
# A generator that runs out of time on an input would on every attempt: the input's fault, not retried.
job_field "$jh" error | grep -q "gave up after" && die "hang: the input was retried: $(job_field "$jh" error)"
[ "$(job_field "$jh" 'partitions[0].attempts')" -le 1 ] ||
  die "hang: $(job_field "$jh" 'partitions[0].attempts') attempts counted (retried)"
[ "$(pid_of synth0) $(pid_of synth1)" = "$synth_pids" ] || die "a synthesis worker was restarted"
log "crashing and hanging generators contained"

# 5. Cancel interrupts a job stuck in its generator; the slot is free for the next job.
jx=$(inputs_job mult_hang "$WORK/m0.json")
wait_until 30 "the stuck job to synthesize" "[ \"\$(job_field $jx 'partitions[0].state')\" = synthesizing ]"
cz cancel --socket "$SOCK" "$jx" >/dev/null
wait_until 2 "the cancel to land" "[ \"\$(job_field $jx state)\" = cancelled ]"
jy=$(inputs_job mult_in "$WORK/m0.json")
await_ok "$jy" "$WORK/out_y" "$VK_MULT" 1
log "PASS daemon.inputs"
