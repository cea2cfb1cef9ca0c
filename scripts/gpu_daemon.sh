#!/usr/bin/env bash
# On the GPU host: the daemon with the cuda backend and several pinned synthesis workers proves a
# stream of jobs (a generated 2^K circuit with a cuzk development key, and snarkjs-made circuits),
# with one kill -9 of the GPU worker mid-stream. Proofs, verification keys, the merged timeline,
# the waterfall (text and SVG) and the status go to $OUT for checking elsewhere
# (scripts/gpu_daemon_verify.sh).
#
#   scripts/gpu_daemon.sh BUNDLE PAYLOAD OUT [K]     (PAYLOAD: the gpu-e2e folder of scripts/gpu_e2e.sh)
set -euo pipefail
bundle="$(cd "$1" && pwd)"; payload="$(cd "$2" && pwd)"; out="$3"; k="${4:-18}"
mkdir -p "$out"
run() { "$bundle/run" "$@"; }
work="$(mktemp -d /tmp/cuzk-gd.XXXXXX)"
ncpu=$(nproc)

echo "== generated circuit 2^$k and its development key"
t0=$SECONDS
run cuzk -q gen-circuit "$k" "$work/gen.r1cs" "$work/gen.wtns" --seed 7
run cuzk -q setup "$work/gen.r1cs" "$work/gen.zkey" --seed gpu-daemon >/dev/null
run cuzk -q export vk "$work/gen.zkey" "$out/gen_vk.json"
echo "setup took $((SECONDS - t0)) s"

# Four synthesis workers on four cores each (the last set smaller when the host has fewer), the
# GPU worker's host-side work on the last two cores.
q=$(( (ncpu - 2) / 4 )); [ $q -ge 1 ] || q=1
cpus=""
for i in 0 1 2 3; do lo=$((i * q)); hi=$((lo + q - 1)); cpus+="${cpus:+, }\"$lo-$hi\""; done
synth_cpus="cpus = [$cpus]"; gpu_cpus="cpus = [\"$((ncpu - 2))-$((ncpu - 1))\"]"
if [ "$ncpu" -lt 8 ]; then synth_cpus=""; gpu_cpus=""; fi  # too few cores to pin apart
cat >"$work/cuzk.toml" <<TOML
[daemon]
instance = "gpud"
state_dir = "$work/state"
socket = "$work/cuzk.sock"
heartbeat_timeout_ms = 60000
[synthesis]
workers = 4
$synth_cpus
[gpu]
backend = "${BACKEND:-cuda}"
devices = [0]
slots = 6
$gpu_cpus
[[circuits]]
name = "gen"
zkey = "$work/gen.zkey"
r1cs = "$work/gen.r1cs"
[[circuits]]
name = "poseidon"
zkey = "$payload/poseidon_merkle/circuit.zkey"
[[circuits]]
name = "chain"
zkey = "$payload/chain_pow2/circuit.zkey"
TOML
cp "$work/cuzk.toml" "$out/"

"$bundle/run" cuzk-supervisor --config "$work/cuzk.toml" 2>"$out/supervisor.log" &  # run execs: $! is the supervisor
sup=$!
st() { run cuzk status --socket "$work/cuzk.sock" --json 2>/dev/null; }
for _ in $(seq 1 1200); do
  st | grep -q '"state":"starting"' || { st | grep -q '"workers"' && break; }
  sleep 0.1
done
kill -0 "$sup" 2>/dev/null || { cat "$out/supervisor.log"; echo "the supervisor did not start" >&2; exit 1; }
run cuzk status --socket "$work/cuzk.sock" | tee "$out/status_start.txt"

echo "== a stream of jobs"
jobs=()
for i in 1 2 3 4 5 6; do
  jobs+=("gen:$(run cuzk submit --socket "$work/cuzk.sock" --circuit gen --witness "$work/gen.wtns" --witness "$work/gen.wtns" --witness "$work/gen.wtns" --witness "$work/gen.wtns")")
done
jobs+=("poseidon:$(run cuzk submit --socket "$work/cuzk.sock" --circuit poseidon --witness "$payload/poseidon_merkle/witness.wtns" --witness "$payload/poseidon_merkle/witness.wtns")")
jobs+=("chain:$(run cuzk submit --socket "$work/cuzk.sock" --circuit chain --witness "$payload/chain_pow2/witness.wtns" --witness "$payload/chain_zero/witness.wtns" --priority high)")
sleep 1.5
gpid=$(st | grep -o '"name":"gpu0","partition":[^,]*,"pid":[0-9]*' | grep -o '[0-9]*$' || true)
[ -n "$gpid" ] || gpid=$(pgrep -f cuzk-gpu-worker | head -1)
echo "kill -9 gpu worker $gpid mid-stream"; kill -9 "$gpid" || true
for i in 7 8; do
  jobs+=("gen:$(run cuzk submit --socket "$work/cuzk.sock" --circuit gen --witness "$work/gen.wtns" --witness "$work/gen.wtns" --witness "$work/gen.wtns" --witness "$work/gen.wtns")")
done
status=0
for e in "${jobs[@]}"; do
  c="${e%%:*}"; j="${e#*:}"
  run cuzk await --socket "$work/cuzk.sock" --out "$out/proofs/${c}_$j" --timeout 400 "$j" || status=1
done
run cuzk status --socket "$work/cuzk.sock" --json >"$out/status_end.json"
kill -TERM "$sup"; wait "$sup" || status=1
cp "$work/state/timeline.log" "$out/"
run cuzk waterfall "$work/state/timeline.log" --svg "$out/waterfall.svg" >"$out/waterfall.txt" || status=1
cp "$payload/poseidon_merkle/vk.json" "$out/poseidon_vk.json"
cp "$payload/chain_pow2/vk.json" "$out/chain_vk.json"
cat "$out/waterfall.txt"
exit $status
