#!/usr/bin/env bash
# A worker that stops answering (SIGSTOP: alive, but silent) misses its heartbeats: the supervisor
# kills it, counts a restart, and the job it held still finishes with valid proofs. A stalled
# supervisor is not a silent worker: after SIGSTOP/SIGCONT of the supervisor for longer than the
# heartbeat timeout, the heartbeats queued meanwhile are read first and no worker is killed, and the
# supervisor logs how long its loop was held.
source "$(dirname "$0")/lib.sh"
require_tools
write_config 1 1
sed -i 's/^heartbeat_timeout_ms = .*/heartbeat_timeout_ms = 1500/' "$CONFIG"
export CUZK_TEST_PROVE_DELAY_MS=3000
start_daemon
g0=$(pid_of gpu0)
job=$(submit mult "$W_MULT")
wait_until 30 "gpu0 busy" "[ \"\$(state_of gpu0)\" = busy ]"
log "SIGSTOP gpu0 (pid $g0)"
kill -STOP "$g0"
wait_until 30 "gpu0 restarted" "[ \"\$(restarts_of gpu0)\" -ge 1 ]"
kill -0 "$g0" 2>/dev/null && die "the silent worker $g0 was not killed"
grep -q "no heartbeat" "$WORK/sup.log" || die "the supervisor did not report the missed heartbeat"
await_ok "$job" "$WORK/out" "$VK_MULT" 1

before="$(restarts_of synth0) $(restarts_of gpu0)"
log "SIGSTOP the supervisor for 4 s (heartbeat timeout 1.5 s)"
kill -STOP "$SUP_PID"
sleep 4
kill -CONT "$SUP_PID"
sleep 1.5
[ "$(restarts_of synth0) $(restarts_of gpu0)" = "$before" ] ||
  die "workers were restarted after a supervisor stall: restarts $before -> $(restarts_of synth0) $(restarts_of gpu0)"
[ "$(grep -c "no heartbeat" "$WORK/sup.log")" -eq 1 ] || die "a heartbeat was reported missing after the stall"
grep -Eq "event loop was held for about (3[5-9]|4[0-9])[0-9]{2} ms" "$WORK/sup.log" ||
  die "the supervisor did not report its loop held for about 4 s"
job2=$(submit mult "$W_MULT")
await_ok "$job2" "$WORK/out2" "$VK_MULT" 1
log "ok"
