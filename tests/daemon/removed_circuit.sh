#!/usr/bin/env bash
# A removed runtime circuit's accepted jobs finish, across restarts. A circuit added at run time
# has a job of 8 partitions in flight when it is removed; the daemon is then killed (-9) and
# started again, and stopped (SIGTERM) and started again, and the job completes with every proof
# verified. Meanwhile the circuit is listed as removed and takes no new job. Once its last job has
# ended the store forgets it: a restart no longer lists it, and the name can be added again.
source "$(dirname "$0")/lib.sh"
require_tools
KEYS="$WORK/keys"
mkdir -p "$KEYS"
cp "$CIRC/multiplier/circuit.zkey" "$KEYS/c12.zkey"
write_config 1 3
sed -i "/^\[daemon\]/a key_dirs = [\"$KEYS\"]" "$CONFIG"
listed() { cz circuit list --socket "$SOCK" --json | node -e "
  const l = JSON.parse(require('fs').readFileSync(0, 'utf8')).circuits; const v = ($1);
  console.log(typeof v === 'object' ? JSON.stringify(v) : v)"; }
# restart SIGNAL: the supervisor stopped by SIGNAL and started again, up once its API answers
# (start_daemon would wait for idle workers: for the job to end).
restart() {
  kill "-$1" "$SUP_PID"
  wait "$SUP_PID" 2>/dev/null || true
  sleep 0.3
  "$SUP_BIN" --config "$CONFIG" >>"$WORK/sup.log" 2>&1 &
  SUP_PID=$!
  wait_until 60 "the API after a restart" "{ kill -0 $SUP_PID 2>/dev/null || die 'the supervisor exited at start'; } &&
    status >/dev/null 2>&1"
}

# Proofs take 400 ms each: the job is still in flight at each restart.
export CUZK_TEST_PROVE_DELAY_MS=400
start_daemon
cz circuit add --socket "$SOCK" --name c12 --zkey "$KEYS/c12.zkey" >/dev/null || die "cannot add c12"
job=$(submit c12 "$W_MULT" "$W_MULT" "$W_MULT" "$W_MULT" "$W_MULT" "$W_MULT" "$W_MULT" "$W_MULT")
wait_until 30 "a proof of job $job" "grep -q 'PROOF_DONE' '$WORK/state/timeline.log'"
cz circuit remove --socket "$SOCK" c12 >"$WORK/remove.out" || die "remove c12: $(cat "$WORK/remove.out")"

restart 9
[ "$(listed "l.filter((c) => c.name === 'c12').map((c) => c.state).join(',')")" = removed ] ||
  die "after kill -9, c12 is not listed as removed: $(listed l)"
[ "$(jstat "s.queues.jobs_running + s.queues.jobs_queued")" -ge 1 ] || die "the job of c12 is not in flight after kill -9"
rc=0
submit c12 "$W_MULT" >"$WORK/refused.out" 2>&1 || rc=$?
[ "$rc" -ne 0 ] && grep -qF "unknown circuit 'c12'" "$WORK/refused.out" ||
  die "a removed circuit took a new job after a restart: $(cat "$WORK/refused.out")"
restart TERM
await_ok "$job" "$WORK/out" "$VK_MULT" 8
grep -q "no longer configured" "$WORK/sup.log" && die "the supervisor said c12 is no longer configured"

# Its last job has ended: the store forgets it, and the name is free again.
restart TERM
wait_until 30 "idle workers" "jstat \"s.workers.every(w=>w.state==='idle')\" 2>/dev/null | grep -qx true"
[ -z "$(listed "l.filter((c) => c.name === 'c12').map((c) => c.state).join(',')")" ] ||
  die "c12 is still listed after its last job ended: $(listed l)"
cz circuit add --socket "$SOCK" --name c12 --zkey "$KEYS/c12.zkey" >/dev/null || die "c12 cannot be added again"
unset CUZK_TEST_PROVE_DELAY_MS
await_ok "$(submit c12 "$W_MULT")" "$WORK/out2" "$VK_MULT" 1
stop_daemon
log "ok"
