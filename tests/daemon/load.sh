#!/usr/bin/env bash
# `cuzk load` against a real daemon: clients in a closed loop get every job done, each proof
# verifies in `cuzk load --vk` and in snarkjs, the daemon-side times come from the timeline (or the
# job records), and jobs that fail (a witness that does not satisfy the circuit, one of another
# circuit, a proof that does not verify against the key given) are counted as failed with their
# error instead of hanging the run.
source "$(dirname "$0")/lib.sh"
require_tools
write_config 2 4
start_daemon

# load ARGS...: `cuzk load` on the daemon, bounded in time (a hung run fails the test).
load() { timeout 120 "$CUZK_BIN" load --socket "$SOCK" "$@"; }
# jget FILE EXPR: a value of the JSON summary in FILE (EXPR over j).
jget() { node -e "const j=JSON.parse(require('fs').readFileSync(process.argv[1],'utf8')); console.log($2)" "$1"; }

# Four clients, 24 counted jobs after 4 of warm-up, proofs kept; the timeline gives the daemon side.
load --circuit mult --witness "$W_MULT" --clients 4 --jobs 24 --warmup 4 --out "$WORK/proofs" --vk "$VK_MULT" \
  --timeline "$WORK/state/timeline.log" --json >"$WORK/load.json" 2>"$WORK/load.err" ||
  die "load exited $?: $(cat "$WORK/load.json" "$WORK/load.err")"
cat "$WORK/load.json"
[ "$(jget "$WORK/load.json" 'j.completed')" = 24 ] || die "expected 24 jobs done"
[ "$(jget "$WORK/load.json" 'j.failed + "," + j.first_error + "," + j.clients + "," + j.verified')" = "0,null,4,24" ] ||
  die "failures reported, or not 24 proofs verified"
[ "$(jget "$WORK/load.json" 'j.jobs_per_s > 0 && j.wall_s > 0')" = true ] || die "no throughput"
l='j.latency_ms'
[ "$(jget "$WORK/load.json" "$l.p50 > 0 && $l.p50 <= $l.p90 && $l.p90 <= $l.p99 && $l.p99 <= $l.max")" = true ] ||
  die "latency percentiles out of order"
[ "$(jget "$WORK/load.json" 'j.daemon_ms.source + "," + j.daemon_ms.jobs')" = "timeline,24" ] ||
  die "the daemon side is not the timeline's 24 jobs"
[ "$(jget "$WORK/load.json" 'j.daemon_ms.p50 > 0 && j.daemon_ms.p50 <= j.daemon_ms.p99')" = true ] ||
  die "daemon-side percentiles"
# 28 jobs submitted (warm-up included): the daemon saw each.
[ "$(grep -c ',JOB_SUBMIT,' "$WORK/state/timeline.log")" -eq 28 ] || die "the daemon did not see 28 jobs"
mapfile -t dirs < <(ls -d "$WORK/proofs"/*/)
[ "${#dirs[@]}" -eq 24 ] || die "expected 24 proof folders, found ${#dirs[@]}"
node "$CUZK_SRC/tests/daemon/verify_all.js" "$CUZK_SRC/node_modules/snarkjs" "$VK_MULT" 1 "${dirs[@]}" \
  >"$WORK/verify.log" 2>&1 || die "snarkjs: $(cat "$WORK/verify.log")"
log "24 jobs done, every proof verified by snarkjs"

# One client (the latency mode), human summary; without --timeline the job records' times.
load --circuit mult --witness "$W_MULT" --clients 1 --jobs 3 >"$WORK/one.txt" || die "one client: $(cat "$WORK/one.txt")"
cat "$WORK/one.txt"
grep -q '^jobs: *3 done, 0 failed$' "$WORK/one.txt" || die "one client: not 3 jobs done"
grep -Eq '^latency: *p50 [0-9.]+ ms, p90 [0-9.]+ ms, p99 [0-9.]+ ms, max [0-9.]+ ms' "$WORK/one.txt" || die "no latency line"
grep -q "^daemon: .*created_ms to finished_ms.*, 3 jobs)$" "$WORK/one.txt" || die "no daemon-side line from the job records"

# Failing jobs: files used in turn, a good one, one that violates a constraint (the job fails in
# synthesis) and one of another circuit (refused at submission). Exit 1, each counted, the first
# error named.
make_unsat "$W_POSEIDON" "$IN/unsat.wtns"
rc=0
load --circuit poseidon --witness "$W_POSEIDON" --witness "$IN/unsat.wtns" --witness "$W_MULT" --clients 1 --jobs 6 \
  --json >"$WORK/bad.json" 2>"$WORK/bad.err" || rc=$?
cat "$WORK/bad.json"
[ "$rc" -eq 1 ] || die "a run with failed jobs exited $rc: $(cat "$WORK/bad.err")"
[ "$(jget "$WORK/bad.json" 'j.completed + "," + j.failed')" = "2,4" ] || die "expected 2 done and 4 failed"
jget "$WORK/bad.json" 'j.first_error' | grep -q "^job [0-9]* failed: .*partition 0" ||
  die "the first error does not name the failed job: $(jget "$WORK/bad.json" 'j.first_error')"
# Two clients: the refusal at submission is reported as such.
rc=0
load --circuit poseidon --witness "$W_MULT" --clients 2 --jobs 2 >"$WORK/refused.txt" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || die "refused submissions: exit $rc"
grep -q '^jobs: *0 done, 2 failed$' "$WORK/refused.txt" || die "refused submissions: $(cat "$WORK/refused.txt")"
grep -q '^first error: submit: witnesses\[0\]' "$WORK/refused.txt" || die "refused submissions: $(cat "$WORK/refused.txt")"
# Proofs checked against another key of the same circuit: each job fails, named, exit 1.
"$CUZK_BIN" -q setup "$CIRC/multiplier/circuit.r1cs" "$WORK/other.zkey" --seed other >/dev/null 2>&1 || die "setup failed"
"$CUZK_BIN" -q export vk "$WORK/other.zkey" "$WORK/other_vk.json" || die "export vk failed"
rc=0
load --circuit mult --witness "$W_MULT" --clients 2 --jobs 3 --vk "$WORK/other_vk.json" >"$WORK/wrong_vk.txt" 2>&1 || rc=$?
cat "$WORK/wrong_vk.txt"
[ "$rc" -eq 1 ] || die "proofs of another key: exit $rc"
grep -q '^jobs: *0 done, 3 failed$' "$WORK/wrong_vk.txt" || die "proofs of another key counted as done"
grep -q "^first error: job [0-9]*: the proof does not verify against $WORK/other_vk.json$" "$WORK/wrong_vk.txt" ||
  die "the first error does not say which proof failed to verify"
grep -q "^proofs: *0 verified against $WORK/other_vk.json$" "$WORK/wrong_vk.txt" || die "no proofs line"
log "failed jobs counted with their errors"

no_restarts "load"
stop_daemon
# No daemon: every client stops, exit 74, the error says where it could not connect.
rc=0
load --circuit mult --witness "$W_MULT" --clients 3 --jobs 9 >"$WORK/gone.txt" 2>&1 || rc=$?
[ "$rc" -eq 74 ] || die "no daemon: exit $rc: $(cat "$WORK/gone.txt")"
grep -q "^first error: submit: cannot connect to the daemon at $SOCK" "$WORK/gone.txt" || die "no daemon: $(cat "$WORK/gone.txt")"
log "ok"
