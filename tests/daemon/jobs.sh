#!/usr/bin/env bash
# Several jobs of several partitions on three circuits, two synthesis workers: every proof verifies
# in snarkjs, the merged timeline shows the pipeline, and status/metrics/idempotency behave.
source "$(dirname "$0")/lib.sh"
require_tools
write_config 2 3
# A stale segment of an earlier run on this state folder (named in state/rings; of a device no
# longer configured) goes at start.
stale="cuzk.$INSTANCE.0123456789abcdef"
mkdir -p "$WORK/state" && echo "$stale" >"$WORK/state/rings"
head -c 4096 /dev/zero >"/dev/shm/$stale.dev9"
start_daemon
[ ! -e "/dev/shm/$stale.dev9" ] || die "the stale segment $stale.dev9 was not removed"

j1=$(submit poseidon "$W_POSEIDON" "$W_POSEIDON" "$W_POSEIDON")
j2=$(submit chain "$W_CHAIN" "$W_ZERO" "$W_CHAIN" "$W_ZERO" -- --priority high)
j3=$(submit mult "$W_MULT" "$W_MULT" -- --request-id req-42)
# The same request id returns the same job; with another body it is a 409 that says so.
j3b=$(submit mult "$W_MULT" "$W_MULT" -- --request-id req-42)
[ "$j3" = "$j3b" ] || die "request id req-42 gave jobs $j3 and $j3b"
if submit mult "$W_MULT" -- --request-id req-42 >"$WORK/req42.log" 2>&1; then die "req-42 with another body was accepted"; fi
grep -q "request_id: already used by this client for another request" "$WORK/req42.log" ||
  die "req-42 with another body: $(cat "$WORK/req42.log")"
await_ok "$j1" "$WORK/out1" "$VK_POSEIDON" 3
await_ok "$j2" "$WORK/out2" "$VK_CHAIN" 4
await_ok "$j3" "$WORK/out3" "$VK_MULT" 2
# Each partition's public.json is its own witness's: chain_zero's output differs from chain_pow2's.
cmp -s "$WORK/out2/public_0.json" "$WORK/out2/public_2.json" || die "partitions 0 and 2 (same witness) differ"
! cmp -s "$WORK/out2/public_0.json" "$WORK/out2/public_1.json" || die "partitions 0 and 1 have the same public signals"

# Status: every worker has kind, pid, state, restarts; nobody restarted.
status >"$WORK/status.json"
node -e '
const s = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
const kinds = s.workers.map(w => w.kind).sort().join(",");
if (kinds !== "gpu,synth,synth") throw new Error("workers: " + kinds);
for (const w of s.workers) {
  for (const k of ["kind", "pid", "state", "restarts", "cpus"]) if (!(k in w)) throw new Error(w.name + " lacks " + k);
  if (w.restarts !== 0) throw new Error(w.name + " restarted");
  if (!(w.pid > 0)) throw new Error(w.name + " has no pid");
}
if (s.devices[0].free !== 3) throw new Error("slots not all free: " + JSON.stringify(s.devices[0]));
' "$WORK/status.json" || die "status JSON: $(cat "$WORK/status.json")"
cz status --socket "$SOCK" | grep -q synth1 || die "human status lacks synth1"
cz status --socket "$SOCK" | grep -Eq '^  gpu0 +gpu +0 ' || die "human status: gpu0's kind is not gpu with device 0"

# Metrics in Prometheus text.
curl_metrics=$(node -e '
const http = require("http");
http.get({socketPath: process.argv[1], path: "/metrics"}, r => { let b = ""; r.on("data", d => b += d); r.on("end", () => console.log(b)); });
' "$SOCK")
echo "$curl_metrics" | grep -q '^cuzk_partitions_total{state="done"} 9$' || die "metrics: $curl_metrics"

# The timeline: every stage of every partition, in time order, with partition/worker/slot.
sleep 0.6  # the merger holds the newest events briefly
tl="$WORK/state/timeline.log"
for ev in DAEMON_START WORKER_START WORKER_READY JOB_SUBMIT SYNTH_START SYNTH_END SLOT_READY GPU_PICKUP GPU_START GPU_END PROOF_DONE JOB_DONE; do
  grep -q ",$ev," "$tl" || die "timeline lacks $ev"
done
grep ',SYNTH_END,' "$tl" | grep -v 'witness_ms=.*eval_ms=.*source=wtns' && die "SYNTH_END without witness_ms/eval_ms/source"
grep ',GPU_END,' "$tl" | grep -v 'kernel_ms=.*kernel_ntt_ms=.*kernel_msm_ms=' && die "GPU_END without the kernel-busy keys"
grep -q ',WORKER_READY,.*worker=gpu0,kind=gpu,device=0,.*startup_ms=' "$tl" || die "no WORKER_READY for gpu0"
# synthesis.abc = "gpu" (the default): slots of w only, and a, b, c evaluated by the GPU worker.
grep -q 'slot ring .* (w only: synthesis.abc = "gpu" saves' "$WORK/sup.log" ||
  die "the slot ring is not w only: $(grep 'slot ring' "$WORK/sup.log")"
grep ',GPU_END,' "$tl" | grep -v 'kernel_eval_ms=' && die "GPU_END without the GPU worker's eval stage"
[ "$(grep -c ',GPU_END,' "$tl")" -eq 9 ] || die "expected 9 GPU_END events"
grep ',SYNTH_START,' "$tl" | grep -v 'partition=.*worker=synth[01].*slot=[0-2]' && die "SYNTH_START without partition/worker/slot"
awk -F, '{ if ($2 + 0 < prev) { print "out of order: " $0; bad = 1 } prev = $2 + 0 } END { exit bad }' "$tl" ||
  die "timeline is not ordered by time"
cz timeline export --format chrome "$tl" >"$WORK/trace.json" || die "timeline export failed"
node -e 'const t = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); if (!t.traceEvents || t.traceEvents.length < 20) throw new Error("few events")' "$WORK/trace.json" ||
  die "chrome trace is not valid"
cz waterfall "$tl" --svg "$WORK/waterfall.svg" >"$WORK/waterfall.txt" || die "waterfall failed"
log "waterfall:"; head -n 30 "$WORK/waterfall.txt"
grep -q 'kernels busy [0-9.]*%' "$WORK/waterfall.txt" || die "the waterfall lacks kernels busy"
head -c 5 "$WORK/waterfall.svg" | grep -q '<?xml' && tail -n 1 "$WORK/waterfall.svg" | grep -q '</svg>' ||
  die "waterfall.svg is not an SVG document"

# SIGTERM: drains and exits 0.
kill -TERM "$SUP_PID"
wait "$SUP_PID" || die "supervisor exited $? after SIGTERM"
SUP_PID=""
[ -z "$(ls /dev/shm | grep "cuzk.$INSTANCE." || true)" ] || die "shm segment left behind"
log "ok"
