#!/usr/bin/env bash
# Resident memory of the daemon's synthesis workers once each has synthesized one partition: a real
# cuzk-supervisor (cpu backend) with WORKERS synthesis workers and as many slots, one job of WORKERS
# partitions of a `cuzk gen-circuit k` circuit, then Rss and Pss (with its anonymous, file and shmem
# parts) of every synthesis worker from /proc/<pid>/smaps_rollup. The GPU worker is stopped (SIGSTOP)
# as soon as it exists: with the cpu backend it would load the whole key and prove 2^k on the CPU,
# which is not what is measured, and the synthesis workers do not wait for it.
# Prints a Markdown table (also written to $WORK/results.md).
#
# Usage: bash bench/synth_memory.sh [k] [workers]        (default: 22 8)
# Environment: BUILD_DIR (build; its bin/ has cuzk and the daemon's executables), BIN (overrides
#              BUILD_DIR/bin, e.g. an older build to compare), WORK (<build>/bench-synth-memory),
#              MIN_AVAILABLE_MB (2048: the run stops when the host's MemAvailable falls below it)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh

K="${1:-22}"
WORKERS="${2:-8}"
BUILD_DIR="${BUILD_DIR:-build}"
BIN_IS_TREE=""
[ -n "${BIN:-}" ] || BIN_IS_TREE=1
BIN="${BIN:-$BUILD_DIR/bin}"
WORK="${WORK:-$BUILD_DIR/bench-synth-memory}"
MIN_AVAILABLE_MB="${MIN_AVAILABLE_MB:-2048}"
CUZK="$BIN/cuzk"
for b in cuzk cuzk-supervisor cuzk-synth-worker cuzk-gpu-worker; do
  [ -x "$BIN/$b" ] || { echo "no $BIN/$b: build first (bash scripts/setup.sh)" >&2; exit 1; }
done
command -v node >/dev/null || { echo "node is needed to read the status JSON" >&2; exit 1; }
say() { echo "[synth-memory] $*" >&2; }

d="$WORK/k$K"
bench_circuit "$CUZK" "$d" "$K"

RUN="$(mktemp -d /tmp/cuzk-sm.XXXXXX)"  # short: unix socket paths are limited to 107 bytes
INSTANCE="sm$$"
SOCK="$RUN/cuzk.sock"
SUP_PID=""
GPU_PID=""
cleanup() {
  [ -n "$GPU_PID" ] && kill -CONT "$GPU_PID" 2>/dev/null || true
  if [ -n "$SUP_PID" ] && kill -0 "$SUP_PID" 2>/dev/null; then
    kill -TERM "$SUP_PID" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$SUP_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$SUP_PID" 2>/dev/null || true
  fi
  for p in ${WORKER_PIDS:-} $GPU_PID; do kill -KILL "$p" 2>/dev/null || true; done
  rm -f /dev/shm/cuzk."$INSTANCE".* 2>/dev/null || true
  rm -rf "$RUN"
}
trap cleanup EXIT

cat >"$RUN/cuzk.toml" <<TOML
[daemon]
instance = "$INSTANCE"
state_dir = "$RUN/state"
socket = "$SOCK"
heartbeat_interval_ms = 500
heartbeat_timeout_ms = 3600000
[synthesis]
workers = $WORKERS
[gpu]
backend = "cpu"
devices = [0]
slots = $WORKERS
[[circuits]]
name = "k$K"
zkey = "$(realpath "$d/circuit.zkey")"
TOML

status() { "$CUZK" status --socket "$SOCK" --json 2>/dev/null; }
jstat() { status | node -e "const s=JSON.parse(require('fs').readFileSync(0,'utf8')); const v=($1); console.log(v)"; }
avail_mb() { awk '/MemAvailable/ {print int($2 / 1024)}' /proc/meminfo; }
guard() {
  [ "$(avail_mb)" -ge "$MIN_AVAILABLE_MB" ] || { say "stopping: MemAvailable $(avail_mb) MB < $MIN_AVAILABLE_MB MB"; exit 1; }
}

"$BIN/cuzk-supervisor" --config "$RUN/cuzk.toml" >"$RUN/sup.log" 2>&1 &
SUP_PID=$!
disown "$SUP_PID"  # killed at the end; no job-control notice
for _ in $(seq 600); do
  GPU_PID="$(jstat "(s.workers.find(w => w.name === 'gpu0') || {}).pid || ''" 2>/dev/null || true)"
  [ -n "$GPU_PID" ] && [ "$GPU_PID" != "0" ] && break
  kill -0 "$SUP_PID" 2>/dev/null || { cat "$RUN/sup.log" >&2; exit 1; }
  sleep 0.05
done
kill -STOP "$GPU_PID"
for _ in $(seq 600); do
  [ "$(jstat "s.workers.filter(w => w.name.startsWith('synth') && w.state === 'idle').length" 2>/dev/null || echo 0)" = "$WORKERS" ] && break
  sleep 0.1
done
WORKER_PIDS="$(jstat "s.workers.filter(w => w.name.startsWith('synth')).map(w => w.pid).join(' ')")"

wargs=()
for _ in $(seq "$WORKERS"); do wargs+=(--witness "$(realpath "$d/witness.wtns")"); done
"$CUZK" submit --socket "$SOCK" --circuit "k$K" "${wargs[@]}" >/dev/null
say "2^$K: $WORKERS partitions submitted to $WORKERS synthesis workers"
TL="$RUN/state/timeline.log"
for _ in $(seq 36000); do
  guard
  [ "$(grep -c ',SYNTH_END,' "$TL" 2>/dev/null || true)" -ge "$WORKERS" ] && break
  sleep 0.1
done
grep ',SYNTH_END,' "$TL" | grep -qv 'status=0' && { say "a synthesis failed:"; grep ',SYNTH_END,' "$TL" >&2; exit 1; }
sleep 0.5  # let the workers settle after reporting

field() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/smaps_rollup"; }
mb() { awk -v kb="$1" 'BEGIN {printf "%.0f", kb / 1024}'; }
rows=()
tot=(0 0 0 0 0)
i=0
for p in $WORKER_PIDS; do
  v=("$(field "$p" Rss)" "$(field "$p" Pss)" "$(field "$p" Pss_Anon)" "$(field "$p" Pss_File)" "$(field "$p" Pss_Shmem)")
  for j in 0 1 2 3 4; do tot[$j]=$((tot[j] + v[j])); done
  rows+=("| synth$i | $(mb "${v[0]}") | $(mb "${v[1]}") | $(mb "${v[2]}") | $(mb "${v[3]}") | $(mb "${v[4]}") |")
  i=$((i + 1))
done
synth_ms="$(grep ',SYNTH_END,' "$TL" | sed -n 's/.*synth_ms=\([0-9.]*\).*/\1/p' | sort -g | tr '\n' ' ')"
cache="$(cd "$RUN/state" && ls -l evaluator/*.csr 2>/dev/null | awk '{printf "<state_dir>/%s, %.0f MB", $NF, $5 / 1048576}' || true)"
{
  echo "2^$K ($("$CUZK" info "$d/circuit.zkey" | awk '/coefficients/ {print $2}') coefficients), $WORKERS synthesis workers, $(nproc) CPUs;"
  echo "binaries: $BIN${BIN_IS_TREE:+ (built from $(git rev-parse --short HEAD 2>/dev/null || echo '?'))}; evaluator cache file: ${cache:-none}."
  echo "synth_ms of the $WORKERS partitions (first use: evaluator load included): $synth_ms"
  echo
  echo "| worker | Rss MB | Pss MB | Pss anon MB | Pss file MB | Pss shmem MB |"
  echo "|---|---|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
  echo "| **sum** | $(mb "${tot[0]}") | **$(mb "${tot[1]}")** | $(mb "${tot[2]}") | $(mb "${tot[3]}") | $(mb "${tot[4]}") |"
} | tee "$WORK/results.md"
