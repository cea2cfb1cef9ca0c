#!/usr/bin/env bash
# On the GPU host: the daemon proves partitions submitted as circuit inputs, for several numbers of
# pinned synthesis workers, and `cuzk waterfall` (text and SVG) records each run. Built for hosts
# without node or compilers: the inputs are files made elsewhere (examples/sector/gen_input.mjs), the
# witness generator an artefact from `cuzk witness build`, and the key is made here with `cuzk setup`.
#
#   scripts/gpu_synth.sh BUNDLE R1CS GENERATOR INPUTS_DIR OUT [WORKERS] [PARTITIONS]
#   scripts/gpu_synth.sh BUNDLE gen:K - - OUT [WORKERS] [PARTITIONS]
#
# The second form proves .wtns files instead: a `cuzk gen-circuit K` circuit and its witness,
# submitted as paths (daemon.input_dirs names their folder).
# BUNDLE: a folder with `run` and the daemon's binaries (scripts/bundle.sh, scripts/gpu_devbuild.sh);
# R1CS: the circuit (.r1cs or .r1cs.xz); WORKERS: synthesis worker counts, one run each (default
# "1 2 4 8 12"), then one run of OVERLAP_W (default 8) workers whose CPU sets include the GPU
# worker's; PARTITIONS: per run (default 24), in jobs of 4. GPU_CORES (default 2) last cores go to the
# GPU worker; SLOTS (default: workers + 2) per run.
set -euo pipefail
bundle="$(cd "$1" && pwd)"; r1cs="$2"; gen="$3"; inputs="$4"; out="$5"
workers="${6:-1 2 4 8 12}"; n="${7:-24}"; per_job=4
gpu_cores="${GPU_CORES:-2}"; overlap_w="${OVERLAP_W:-8}"
mkdir -p "$out"; out="$(cd "$out" && pwd)"
run() { "$bundle/run" "$@"; }
work="$(mktemp -d /tmp/cuzk-gs.XXXXXX)"
ncpu=$(nproc)

if [[ "$r1cs" == gen:* ]]; then
  inputs="$work/wtns"; mkdir -p "$inputs"
  run cuzk -q gen-circuit "${r1cs#gen:}" "$work/circuit.r1cs" "$inputs/w.wtns" --seed 7
  r1cs="$work/circuit.r1cs"
else
  gen="$(cd "$gen" && pwd)"; inputs="$(cd "$inputs" && pwd)"
fi
if [[ "$r1cs" == *.xz ]]; then xz -d -c "$r1cs" >"$work/circuit.r1cs"; r1cs="$work/circuit.r1cs"; fi
t0=$SECONDS
run cuzk -q setup "$r1cs" "$work/circuit.zkey" --seed gpu-synth >/dev/null
run cuzk -q export vk "$work/circuit.zkey" "$out/vk.json"
echo "setup: $((SECONDS - t0)) s"
# N partitions from the input files, reused in turn when there are fewer files.
mapfile -t avail_files < <(ls "$inputs"/*.json "$inputs"/*.wtns 2>/dev/null)
files=()
for ((i = 0; i < n; i++)); do files+=("${avail_files[$((i % ${#avail_files[@]}))]}"); done

# cpu_sets FIRST COUNT W: COUNT CPUs from FIRST split into W consecutive sets, sizes within one.
cpu_sets() {
  local lo="$1" count="$2" w="$3" i k sets=""
  for ((i = 0; i < w; i++)); do
    k=$((count / w + (i < count % w ? 1 : 0)))
    sets+="${sets:+, }\"$lo-$((lo + k - 1))\""
    lo=$((lo + k))
  done
  echo "$sets"
}

one() {  # one TAG W SYNTH_SETS
  local tag="$1" w="$2" sets="$3" sock="$work/$1.sock" rd="$out/$1"
  mkdir -p "$rd"
  cat >"$work/$tag.toml" <<TOML
[daemon]
instance = "gs$tag"
state_dir = "$work/state-$tag"
socket = "$sock"
heartbeat_timeout_ms = 60000
input_dirs = ["$inputs"]
[synthesis]
workers = $w
cpus = [$sets]
[gpu]
backend = "cuda"
devices = [0]
slots = $((w + 2))
cpus = ["$((ncpu - gpu_cores))-$((ncpu - 1))"]
[[circuits]]
name = "c"
zkey = "$work/circuit.zkey"
max_partitions = $per_job
TOML
  [ "$gen" = - ] || echo "witness_generator = \"$gen\"" >>"$work/$tag.toml"
  "$bundle/run" cuzk-supervisor --config "$work/$tag.toml" 2>"$rd/supervisor.log" &
  local sup=$! i
  for ((i = 0; i < 1200; i++)); do
    st="$(run cuzk status --socket "$sock" --json 2>/dev/null || true)"
    if [ -n "$st" ] && grep -q '"workers"' <<<"$st" && ! grep -Eq '"state": ?"starting"' <<<"$st"; then break; fi
    sleep 0.1
  done
  local t1=$SECONDS ids=() k j args
  for ((k = 0; k < ${#files[@]}; k += per_job)); do
    args=()
    for ((j = k; j < k + per_job && j < ${#files[@]}; j++)); do
      if [[ "${files[$j]}" == *.wtns ]]; then args+=(--witness "${files[$j]}"); else args+=(--input "${files[$j]}"); fi
    done
    ids+=("$(run cuzk submit --socket "$sock" --circuit c "${args[@]}")")
  done
  for id in "${ids[@]}"; do run cuzk await --socket "$sock" --out "$work/out-$tag-$id" --timeout 600 "$id" >/dev/null; done
  local wall=$((SECONDS - t1))
  kill -TERM "$sup"; wait "$sup" || true
  cp "$work/state-$tag/timeline.log" "$rd/timeline.log"
  run cuzk waterfall "$rd/timeline.log" >"$rd/waterfall.txt" 2>&1 || true
  run cuzk waterfall "$rd/timeline.log" --svg "$rd/waterfall.svg" >/dev/null 2>&1 || true
  echo "$tag: workers=$w sets=[$sets] partitions=${#files[@]} wall=${wall}s"
  # One proof per run goes back for snarkjs.
  cp "$work/out-$tag-${ids[0]}/proof_0.json" "$rd/proof_0.json"
  cp "$work/out-$tag-${ids[0]}/public_0.json" "$rd/public_0.json"
}

avail=$((ncpu - gpu_cores))
for w in $workers; do
  [ "$w" -le "$avail" ] || { echo "w$w: skipped ($avail CPUs for synthesis)"; continue; }
  one "w$w" "$w" "$(cpu_sets 0 "$avail" "$w")"
done
if [ "$overlap_w" -gt 0 ]; then one "w$overlap_w-overlap" "$overlap_w" "$(cpu_sets 0 "$ncpu" "$overlap_w")"; fi
