#!/usr/bin/env bash
# kill -9 the supervisor with jobs queued and in flight: its workers die with it (PDEATHSIG), and
# a new supervisor on the same state finishes every job from the store.
source "$(dirname "$0")/lib.sh"
require_tools
write_config 1 1
export CUZK_TEST_SYNTH_DELAY_MS=800
start_daemon
pids=$(jstat "s.workers.map(w=>w.pid).join(' ')")
j1=$(submit poseidon "$W_POSEIDON" "$W_POSEIDON")
j2=$(submit chain "$W_CHAIN" "$W_ZERO" "$W_CHAIN" -- --request-id restart-me)
wait_until 30 "synth0 busy" "[ \"\$(state_of synth0)\" = busy ]"
log "kill -9 supervisor $SUP_PID"
kill -9 "$SUP_PID"
wait "$SUP_PID" 2>/dev/null || true
SUP_PID=""
for p in $pids; do
  wait_until 10 "worker $p to die with the supervisor" "! kill -0 $p 2>/dev/null"
done
unset CUZK_TEST_SYNTH_DELAY_MS
start_daemon
# The request id still names the same job after the restart.
[ "$(submit chain "$W_CHAIN" "$W_ZERO" "$W_CHAIN" -- --request-id restart-me)" = "$j2" ] || die "request id lost across restart"
await_ok "$j1" "$WORK/out1" "$VK_POSEIDON" 2
await_ok "$j2" "$WORK/out2" "$VK_CHAIN" 3

# SIGTERM with work queued: exits 0, and the next start finishes the work.
export CUZK_TEST_PROVE_DELAY_MS=1000
kill -TERM "$SUP_PID"; wait "$SUP_PID" || die "exit status $? after SIGTERM"; SUP_PID=""
start_daemon
j3=$(submit poseidon "$W_POSEIDON" "$W_POSEIDON" "$W_POSEIDON")
wait_until 30 "gpu0 busy" "[ \"\$(state_of gpu0)\" = busy ]"
kill -TERM "$SUP_PID"; wait "$SUP_PID" || die "exit status $? after SIGTERM with work in flight"; SUP_PID=""
unset CUZK_TEST_PROVE_DELAY_MS
start_daemon
await_ok "$j3" "$WORK/out3" "$VK_POSEIDON" 3
log "ok"
