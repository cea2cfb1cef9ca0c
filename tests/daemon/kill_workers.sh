#!/usr/bin/env bash
# kill -9 a synthesis worker mid-synthesis and the GPU worker mid-proof, holding both the slot it
# proves and the next one it was given: every job still finishes with proofs snarkjs accepts, the
# killed workers' restart counts go up, the others keep their pids.
source "$(dirname "$0")/lib.sh"
require_tools
write_config 2 4
# Test hooks: stretch both stages so that a worker is reliably caught in the middle of one.
export CUZK_TEST_SYNTH_DELAY_MS=1500 CUZK_TEST_PROVE_DELAY_MS=1500
start_daemon
s0=$(pid_of synth0); s1=$(pid_of synth1); g0=$(pid_of gpu0)

j1=$(submit poseidon "$W_POSEIDON" "$W_POSEIDON" "$W_POSEIDON")
j2=$(submit chain "$W_CHAIN" "$W_ZERO" "$W_CHAIN")

wait_until 30 "synth0 busy" "[ \"\$(state_of synth0)\" = busy ]"
sleep 0.5
log "kill -9 synth0 (pid $s0) mid-synthesis"
kill -9 "$s0"
wait_until 30 "gpu0 holding two proofs" "[ \"\$(jstat \"s.workers.find(w=>w.name==='gpu0').tasks.length\")\" = 2 ]"
sleep 0.3
log "kill -9 gpu0 (pid $g0) mid-proof, with the next proof queued"
kill -9 "$g0"

await_ok "$j1" "$WORK/out1" "$VK_POSEIDON" 3
await_ok "$j2" "$WORK/out2" "$VK_CHAIN" 3

[ "$(restarts_of synth0)" -ge 1 ] || die "synth0 restarts did not go up"
[ "$(restarts_of gpu0)" -ge 1 ] || die "gpu0 restarts did not go up"
[ "$(restarts_of synth1)" -eq 0 ] || die "synth1 restarted"
[ "$(pid_of synth1)" = "$s1" ] || die "synth1's pid changed"
[ "$(pid_of synth0)" != "$s0" ] || die "synth0 was not replaced"
grep -q ",WORKER_EXIT,[0-9]*,worker=synth0,pid=$s0,.*signal=9,partition=" "$WORK/state/timeline.log" || die "no WORKER_EXIT for synth0"
grep -q ",WORKER_EXIT,[0-9]*,worker=gpu0,pid=$g0,.*signal=9,partition=" "$WORK/state/timeline.log" || die "no WORKER_EXIT for gpu0"
# The GPU crash was repaired from shared memory: a slot went back to READY and was picked up again
# without a second synthesis of that partition.
grep -q ",WORKER_EXIT,[0-9]*,worker=gpu0,pid=$g0,.*signal=9,partition=.*,tasks=2" "$WORK/state/timeline.log" ||
  die "gpu0's WORKER_EXIT does not say it held two proofs"
[ "$(grep -c "back to READY after gpu0 died" "$WORK/sup.log")" -ge 2 ] ||
  die "gpu crash did not put both of its slots back to READY"
log "ok"
