#!/usr/bin/env bash
# The crash-repair rows that a kill from outside hits only by luck, reached on purpose with the
# CUZK_TEST_CRASH_AT hook (one SIGKILL at a point, then never again):
#  - a synthesis worker dies after making its slot READY and before reporting it (synth, READY):
#    the supervisor adopts the synthesis, and the partition is proved from that slot, not
#    synthesized again;
#  - a GPU worker dies after writing a proof's result files and freeing its slot, before reporting
#    it (gpu, FREE): the partition is completed from the files, not proved again (the next proof it
#    held, PROVING, is proved again from its slot);
#  - a synthesis worker dies after freeing its slot for a witness that does not satisfy the
#    circuit, before reporting it (synth, FREE): the partition is synthesized again, not counted as
#    an attempt, and its report then fails the job naming the constraint.
# Each job's proofs are verified by snarkjs, and only the worker that died restarted, once.
source "$(dirname "$0")/lib.sh"
require_tools

restarts_of_kind() { jstat "s.workers.filter(w => w.kind === '$1').reduce((n, w) => n + w.restarts, 0)"; }
# How many times the timeline shows EVENT for JOB's partition P.
count() { timeline | grep -c ",$1,$2,partition=$3," || true; }

# crash_at POINT DEAD OTHER: a daemon whose first worker to reach POINT dies there proves one job of
# three partitions (snarkjs verifies them); workers of kind DEAD restarted once, of kind OTHER never.
crash_at() {
  rm -rf "$WORK/state"
  CUZK_TEST_CRASH_AT="$1:$WORK/crashed-$1" start_daemon
  job=$(submit poseidon "$W_POSEIDON" "$W_POSEIDON" "$W_POSEIDON")
  await_ok "$job" "$WORK/out_$1" "$VK_POSEIDON" 3
  [ -f "$WORK/crashed-$1" ] || die "$1: no worker reached the crash point"
  sleep 0.6  # the supervisor writes the timeline every 300 ms
  [ "$(restarts_of_kind "$2")" = 1 ] && [ "$(restarts_of_kind "$3")" = 0 ] ||
    die "$1: expected a $2 worker alone to restart, once: $(jstat 's.workers')"
}
once_synthesized() {
  local p
  for p in 0 1 2; do
    [ "$(count SYNTH_START "$job" $p)" = 1 ] || die "partition $p was synthesized $(count SYNTH_START "$job" $p) times"
  done
}

write_config 1 3
crash_at synth-ready synth gpu
grep -q "synthesis adopted" "$WORK/sup.log" || die "the READY slot of the dead synthesis worker was not adopted"
once_synthesized
log "synth, READY: synthesis adopted, nothing synthesized twice"
stop_daemon

crash_at gpu-freed gpu synth
# The partition whose files were written when gpu0 died is its oldest task (WORKER_EXIT's partition).
exit_line=$(timeline | grep ",WORKER_EXIT,$job," | grep "worker=gpu0") || die "no WORKER_EXIT of gpu0 holding job $job"
done_p=$(sed 's/.*,partition=\([0-9]*\),.*/\1/' <<<"$exit_line")
[ "$(count GPU_START "$job" "$done_p")" = 1 ] ||
  die "partition $done_p, whose result files were written, was proved $(count GPU_START "$job" "$done_p") times"
once_synthesized
log "gpu, FREE: partition $done_p completed from its result files; nothing synthesized twice"
stop_daemon

rm -rf "$WORK/state"
make_unsat "$W_POSEIDON" "$IN/unsat.wtns"
CUZK_TEST_CRASH_AT="synth-freed:$WORK/crashed-synth-freed" start_daemon
job=$(submit poseidon "$W_POSEIDON" "$IN/unsat.wtns")
set +e
cz await --socket "$SOCK" --out "$WORK/out_freed" --timeout 120 "$job" >"$WORK/await_freed.log" 2>&1
rc=$?
set -e
[ $rc -eq 1 ] && grep -qF "does not satisfy constraint" "$WORK/await_freed.log" ||
  die "synth, FREE: the job did not fail naming the constraint (await $rc): $(cat "$WORK/await_freed.log")"
[ -f "$WORK/crashed-synth-freed" ] || die "synth-freed: no worker reached the crash point"
[ "$(restarts_of_kind synth)" = 1 ] && [ "$(restarts_of_kind gpu)" = 0 ] ||
  die "synth-freed: expected a synthesis worker alone to restart, once: $(jstat 's.workers')"
requeued=$(grep -c "job $job partition 1: requeued (synth0 died during synthesis)" "$WORK/sup.log" || true)
[ "$requeued" = 1 ] || die "synth-freed: the partition was requeued $requeued times by the repair, want 1"
attempts=$(node "$CUZK_SRC/tests/daemon/raw_client.js" get "$SOCK" "/v1/proofs/$job" |
  node -e "const o = JSON.parse(require('fs').readFileSync(0, 'utf8')); console.log(JSON.parse(o.body).partitions[1].attempts)")
[ "$attempts" = 0 ] || die "synth-freed: the repair counted an attempt ($attempts), want 0"
log "synth, FREE: synthesized again, then its report failed the job"
stop_daemon
log "ok"
