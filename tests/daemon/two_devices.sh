#!/usr/bin/env bash
# Two devices (gpu.devices = [0, 1]) on the cpu backend: one GPU worker and one slot ring per device,
# partitions of one stream proved on both, and a kill -9 of gpu1 mid-proof while gpu0 keeps proving:
# gpu1 comes back, gpu0 is untouched, nothing is lost, snarkjs accepts every proof, and the merged
# waterfall has a lane and a utilisation line per device. (The same run on two real GPUs is
# `scripts/device.sh devices`.)
source "$(dirname "$0")/lib.sh"
require_tools
write_config 2 2
sed -i 's/^devices = \[0\]$/devices = [0, 1]/' "$CONFIG"
grep -qx 'devices = \[0, 1\]' "$CONFIG" || die "the config does not name two devices"
# Test hook: a long proof, so that both devices are busy at once and gpu1 is caught mid-proof.
export CUZK_TEST_PROVE_DELAY_MS=700
start_daemon
g0=$(pid_of gpu0)
[ "$(jstat "s.workers.filter(w=>w.kind==='gpu').map(w=>w.name).join(',')")" = "gpu0,gpu1" ] ||
  die "status does not list gpu0 and gpu1: $(jstat "s.workers.map(w=>w.name+':'+w.kind).join(',')")"
rings="/dev/shm/$(cat "$WORK/state/rings")"
ls "$rings".dev* >/dev/null 2>&1 || die "no slot ring in /dev/shm"
[ "$(ls "$rings".dev* | wc -l)" -eq 2 ] || die "not one slot ring per device: $(ls /dev/shm/cuzk."$INSTANCE".*)"

j1=$(submit mult "$W_MULT" "$W_MULT" "$W_MULT" "$W_MULT" "$W_MULT" "$W_MULT")
j2=$(submit chain "$W_CHAIN" "$W_ZERO" "$W_CHAIN" "$W_ZERO")
wait_until 30 "gpu1 busy" "[ \"\$(state_of gpu1)\" = busy ]"
g1=$(pid_of gpu1)
sleep 0.3
log "kill -9 gpu1 (pid $g1) mid-proof"
kill -9 "$g1"
killed_at=$(date +%s%N)

await_ok "$j1" "$WORK/out1" "$VK_MULT" 6
await_ok "$j2" "$WORK/out2" "$VK_CHAIN" 4

[ "$(restarts_of gpu1)" -ge 1 ] || die "gpu1 restarts did not go up"
[ "$(pid_of gpu1)" != "$g1" ] || die "gpu1 was not replaced"
[ "$(restarts_of gpu0)" -eq 0 ] || die "gpu0 restarted"
[ "$(pid_of gpu0)" = "$g0" ] || die "gpu0's pid changed"
tl="$WORK/state/timeline.log"
grep -q ",WORKER_EXIT,[0-9]*,worker=gpu1,pid=$g1,.*signal=9" "$tl" || die "no WORKER_EXIT for gpu1"
n0=$(grep -c ',GPU_END,.*worker=gpu0,.*device=0' "$tl" || true)
n1=$(grep -c ',GPU_END,.*worker=gpu1,.*device=1' "$tl" || true)
[ "$n0" -ge 1 ] && [ "$n1" -ge 1 ] || die "both devices should prove: gpu0 $n0 proofs, gpu1 $n1"
[ "$((n0 + n1))" -ge 10 ] || die "10 partitions, $((n0 + n1)) proofs"
# gpu0 went on proving while gpu1 was down: one of gpu0's partitions, from its pickup to its
# GPU_END, overlaps the window from gpu1's exit to its return. (The test hook's 700 ms fall between
# GPU_PICKUP and GPU_START, and gpu1 is back within about 350 ms, so a GPU_START or GPU_END inside
# the window would be luck, not a property.)
exit_ms=$(grep ",WORKER_EXIT,[0-9]*,worker=gpu1,pid=$g1," "$tl" | cut -d, -f2)
back_ms=$(awk -F, -v t="$exit_ms" '$3 == "WORKER_READY" && $0 ~ /worker=gpu1/ && $2 > t { print $2; exit }' "$tl")
[ -n "$back_ms" ] || die "gpu1 never reported ready after its restart"
awk -F, -v a="$exit_ms" -v b="$back_ms" '
  $0 !~ /worker=gpu0/ { next }
  $3 == "GPU_PICKUP" { s = $2 }
  $3 == "GPU_END" && s != "" { if (s < b && $2 > a) f = 1; s = "" }
  END { exit !f }' "$tl" ||
  die "gpu0 proved nothing while gpu1 was down ($exit_ms .. $back_ms ms): $(grep -E ',GPU_(PICKUP|END),.*worker=gpu0' "$tl" | cut -d, -f2,3 | tr '\n' ' ')"
grep -q "back to READY after gpu1 died" "$WORK/sup.log" || die "gpu1's crash did not put its slot back to READY"

cz waterfall "$tl" >"$WORK/waterfall.txt" || die "cuzk waterfall failed"
grep -q '^gpu0 *|' "$WORK/waterfall.txt" && grep -q '^gpu1 *|' "$WORK/waterfall.txt" ||
  die "the waterfall lacks a lane per device: $(cat "$WORK/waterfall.txt")"
grep -q 'device 0 (gpu0): GPU busy' "$WORK/waterfall.txt" && grep -q 'device 1 (gpu1): GPU busy' "$WORK/waterfall.txt" ||
  die "the waterfall lacks a utilisation line per device: $(cat "$WORK/waterfall.txt")"
grep -q 'worker down' "$WORK/waterfall.txt" || die "the waterfall does not show gpu1 down"
log "ok: gpu0 $n0 proofs, gpu1 $n1 proofs, gpu1 restarted once ($(( ($(date +%s%N) - killed_at) / 1000000 )) ms ago)"
