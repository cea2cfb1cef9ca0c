#!/usr/bin/env bash
# A slow disk under the job store (the test hook holds every SQLite commit 1.5 s) holds neither the
# API nor the event loop: status requests answer within 0.7 s while the commits of a job are held,
# the submission is answered only once its job is stored, and a kill -9 right after that answer
# loses nothing: the next start proves the job. Nor is a job's end shown before it is stored: a
# kill -9 the moment a job reads done leaves it done for the next start.
source "$(dirname "$0")/lib.sh"
require_tools
write_config 1 2
export CUZK_TEST_STORE_COMMIT_DELAY_MS=1500
start_daemon

t0=$(date +%s%N)
(submit mult "$W_MULT" >"$WORK/job.id" 2>"$WORK/submit.log"; date +%s%N >"$WORK/submitted") &
sub=$!
# The job's insert, then its partition's states, each in a commit held 1.5 s: statuses meanwhile.
longest=0
for _ in $(seq 12); do
  a=$(date +%s%N)
  status >/dev/null || die "GET /v1/status failed while a commit was held"
  ms=$((($(date +%s%N) - a) / 1000000))
  [ "$ms" -le "$longest" ] || longest=$ms
  sleep 0.2
done
[ "$longest" -lt 700 ] || die "GET /v1/status took $longest ms while a commit was held"
log "GET /v1/status: at most $longest ms while commits of 1.5 s were held"
wait "$sub" || die "the submission failed: $(cat "$WORK/submit.log")"
job=$(cat "$WORK/job.id")
answered_ms=$((($(cat "$WORK/submitted") - t0) / 1000000))
[ "$answered_ms" -ge 1400 ] || die "the submission was answered after $answered_ms ms, before its commit"
log "job $job: answered after $answered_ms ms, once stored"

# Stored means stored: a kill -9 now, and a start with the hook still on, proves it.
kill9() {
  local pid=$SUP_PID
  kill -9 "$pid"
  wait "$pid" 2>/dev/null || true
  sleep 0.3
  pkill -9 -f "cuzk-.*-worker --config $CONFIG" 2>/dev/null || true
}
job_state() {
  curl -sS --unix-socket "$SOCK" "http://localhost/v1/proofs/$1" |
    node -e 'console.log(JSON.parse(require("fs").readFileSync(0, "utf8")).state)'
}
kill9
start_daemon
await_ok "$job" "$WORK/out" "$VK_MULT" 1

# The end's commit is held 1.5 s: the job reads done only once it is in the file.
job2=$(submit mult "$W_MULT")
wait_until 60 "job $job2 done" "[ \"\$(job_state $job2)\" = done ]"
kill9
unset CUZK_TEST_STORE_COMMIT_DELAY_MS
start_daemon
await_ok "$job2" "$WORK/out2" "$VK_MULT" 1
ends=$(grep -c "job $job2: done" "$WORK/sup.log" || true)
[ "$ends" -eq 1 ] || die "job $job2 read done, but a kill -9 then had the next start prove it again ($ends ends logged)"
log "slow store: ok"
