#!/usr/bin/env bash
# SIGHUP reloads the configuration: an invalid file is logged and changes nothing, and so does one
# that parses but could not start (a witness generator of another circuit), refused before anything
# is drained; a valid one drains, starts again in the same process (same pid) with the new file,
# and queued work carries on. A SIGTERM while a reload drains stops the daemon (exit 0) instead.
source "$(dirname "$0")/lib.sh"
require_tools
write_config 1 2
# Test hook: proofs take a second, so that the last reload is still draining when SIGTERM comes.
export CUZK_TEST_PROVE_DELAY_MS=1000
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

# A file --check-config passes (the generator is circom's source, which only the daemon builds) but
# the start would refuse: the multiplier's generator for the poseidon key. Refused before draining.
cp "$WORK/good.toml" "$CONFIG"
cat >>"$CONFIG" <<TOML
[[circuits]]
name = "wrong_generator"
zkey = "$CIRC/poseidon_merkle/circuit.zkey"
witness_generator = "$CIRC/multiplier/multiplier_cpp"
TOML
"$SUP_BIN" --config "$CONFIG" --check-config >/dev/null || die "--check-config refuses the file; the test needs one it passes"
refusals=$(grep -c 'SIGHUP: .* is not valid' "$WORK/sup.log")
kill -HUP "$pid"
wait_until 300 "the second refusal in the log" \
  "! kill -0 $pid 2>/dev/null || [ \$(grep -c 'SIGHUP: .* is not valid' '$WORK/sup.log') -gt $refusals ]"
kill -0 "$pid" 2>/dev/null || die "a reload that could not start stopped the daemon"
grep 'SIGHUP: .* is not valid' "$WORK/sup.log" | tail -n 1 | grep -qF 'circuits[3].witness_generator' ||
  die "the refusal does not name circuits[3].witness_generator: $(grep 'is not valid' "$WORK/sup.log" | tail -n 1)"
grep -q 'SIGHUP: draining' "$WORK/sup.log" && die "a reload that could not start drained the daemon"
sleep 0.5
kill -0 "$pid" || die "a reload that could not start stopped the daemon"
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

# SIGTERM while a reload drains: stopped, exit 0, not started again.
j3=$(submit mult "$W_MULT" "$W_MULT" "$W_MULT")
wait_until 30 "a proof in flight" "[ \"\$(state_of gpu0)\" = busy ]"
valid=$(grep -c 'SIGHUP: .* is valid; draining' "$WORK/sup.log")
kill -HUP "$pid"
wait_until 30 "the reload to drain" "[ \$(grep -c 'SIGHUP: .* is valid; draining' '$WORK/sup.log') -gt $valid ]"
kill -TERM "$pid"
rc=0; wait "$pid" || rc=$?
SUP_PID=""
[ "$rc" -eq 0 ] || die "supervisor exited $rc after SIGTERM during a reload"
grep -q "SIGTERM during a reload: stopping when drained instead of starting again" "$WORK/sup.log" ||
  die "the SIGTERM during the reload is not in the log"
[ "$(grep -c 'supervisor: starting again with' "$WORK/sup.log")" -eq 1 ] || die "the daemon started again after SIGTERM"
log "ok (job $j3 stays queued for the next start)"
