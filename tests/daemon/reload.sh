#!/usr/bin/env bash
# SIGHUP reloads the configuration: an invalid file is logged and changes nothing; a valid one drains,
# starts again in the same process (same pid) with the new file, and queued work carries on.
source "$(dirname "$0")/lib.sh"
require_tools
write_config 1 2
start_daemon
pid="$SUP_PID"
j1=$(submit mult "$W_MULT" "$W_MULT")

# An invalid file: the daemon logs it and goes on.
cp "$CONFIG" "$WORK/good.toml"
echo "this is not toml [" >>"$CONFIG"
kill -HUP "$pid"
wait_until 10 "the refusal in the log" "grep -q 'SIGHUP: .* is not valid' '$WORK/sup.log'"
kill -0 "$pid" || die "an invalid file on SIGHUP stopped the daemon"
status >/dev/null || die "the API does not answer after a refused reload"

# A valid file with one more circuit: drained, started again as the same pid, the new circuit served.
cp "$WORK/good.toml" "$CONFIG"
cat >>"$CONFIG" <<TOML
[[circuits]]
name = "mult2"
zkey = "$CIRC/multiplier/circuit.zkey"
TOML
kill -HUP "$pid"
wait_until 60 "the daemon to start again" "grep -q 'starting again with' '$WORK/sup.log' && \
  jstat \"s.workers.every(w=>w.state==='idle')\" 2>/dev/null | grep -qx true"
kill -0 "$pid" || die "the supervisor's pid changed over a reload"
j2=$(submit mult2 "$W_MULT")
await_ok "$j1" "$WORK/out1" "$VK_MULT" 2
await_ok "$j2" "$WORK/out2" "$VK_MULT" 1
[ "$(grep -c 'listening on' "$WORK/sup.log")" -eq 2 ] || die "expected two starts in the log"

kill -TERM "$pid"
wait "$pid" || die "supervisor exited $? after SIGTERM"
SUP_PID=""
log "ok"
