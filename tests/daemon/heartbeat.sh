#!/usr/bin/env bash
# A worker that stops answering (SIGSTOP: alive, but silent) misses its heartbeats: the supervisor
# kills it, counts a restart, and the job it held still finishes with valid proofs.
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
log "ok"
