#!/usr/bin/env bash
# cuzk's CPU prover against `snarkjs groth16 prove` on the same machine, key and witness.
# For each size 2^k: a generated circuit (`cuzk gen-circuit`) and a development key
# (`cuzk setup --seed`, reproducible), both cached; then the median of CUZK_RUNS cuzk proofs and
# SNARKJS_RUNS snarkjs proofs (median too when more than one), the two provers taking turns.
# Both proofs are checked with `snarkjs groth16 verify` so that a fast wrong prover can't look good.
# Prints a Markdown table (also written to $WORK/results.md) to paste into docs/PERFORMANCE.md.
#
# Usage: bash bench/vs_snarkjs.sh [k ...]          (default: 16 18)
# Environment: BUILD_DIR (build), CUZK_RUNS (5), SNARKJS_RUNS (1), THREADS (all CPUs),
#              WORK (<build>/bench-vs-snarkjs)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh

BUILD_DIR="${BUILD_DIR:-build}"
CUZK="$BUILD_DIR/bin/cuzk"
CUZK_RUNS="${CUZK_RUNS:-5}"
SNARKJS_RUNS="${SNARKJS_RUNS:-1}"
WORK="${WORK:-$BUILD_DIR/bench-vs-snarkjs}"
SNARKJS=(node node_modules/snarkjs/build/cli.cjs)
sizes=("$@")
[ "${#sizes[@]}" -gt 0 ] || sizes=(16 18)

[ -x "$CUZK" ] || { echo "no $CUZK: build first (bash scripts/setup.sh)" >&2; exit 1; }
[ -f node_modules/snarkjs/build/cli.cjs ] || { echo "no snarkjs: run npm ci" >&2; exit 1; }
mkdir -p "$WORK"
threads_arg=()
[ -n "${THREADS:-}" ] && threads_arg=(--threads "$THREADS")

# Wall-clock seconds of one command (its output goes to a log, shown if it fails).
time_it() {
  local logfile="$1"; shift
  local t0=$EPOCHREALTIME
  if ! "$@" >"$logfile" 2>&1; then
    echo "failed: $*" >&2
    tail -n 30 "$logfile" >&2
    exit 1
  fi
  local t1=$EPOCHREALTIME
  echo "$t0 $t1" | awk '{printf "%.3f", $2 - $1}'
}
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {if (NR % 2) printf "%.2f", a[(NR+1)/2]; else printf "%.2f", (a[NR/2] + a[NR/2+1]) / 2}'; }

load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
cpu="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
rows=()
for k in "${sizes[@]}"; do
  d="$WORK/k$k"
  bench_circuit "$CUZK" "$d" "$k"

  # The two provers take turns (cuzk, snarkjs, cuzk, ...), so that both see the same minutes of a
  # shared machine whose speed drifts; the extra cuzk runs come after the last snarkjs run. cuzk
  # proves with --no-verify, as snarkjs does not verify either; snarkjs verifies both proofs below.
  ct=()
  st=()
  for i in $(seq "$(( CUZK_RUNS > SNARKJS_RUNS ? CUZK_RUNS : SNARKJS_RUNS ))"); do
    if [ "$i" -le "$CUZK_RUNS" ]; then
      t=$(time_it "$d/cuzk_prove.log" "$CUZK" "${threads_arg[@]}" prove --no-verify "$d/circuit.zkey" "$d/witness.wtns" "$d/cuzk_proof.json" "$d/cuzk_public.json")
      echo "[bench] 2^$k: cuzk prove run $i: ${t}s"
      ct+=("$t")
    fi
    if [ "$i" -le "$SNARKJS_RUNS" ]; then
      t=$(time_it "$d/snarkjs_prove.log" "${SNARKJS[@]}" groth16 prove "$d/circuit.zkey" "$d/witness.wtns" "$d/sj_proof.json" "$d/sj_public.json")
      echo "[bench] 2^$k: snarkjs groth16 prove run $i: ${t}s"
      st+=("$t")
    fi
  done
  "${SNARKJS[@]}" groth16 verify "$d/vk.json" "$d/cuzk_public.json" "$d/cuzk_proof.json" >"$d/verify_cuzk.log" 2>&1 \
    || { echo "snarkjs rejects cuzk's proof at 2^$k" >&2; cat "$d/verify_cuzk.log" >&2; exit 1; }
  "${SNARKJS[@]}" groth16 verify "$d/vk.json" "$d/sj_public.json" "$d/sj_proof.json" >"$d/verify_sj.log" 2>&1 \
    || { echo "snarkjs rejects its own proof at 2^$k" >&2; exit 1; }

  cm=$(median "${ct[@]}")
  sm=$(median "${st[@]}")
  ratio=$(awk -v s="$sm" -v c="$cm" 'BEGIN {printf "%.1f", s / c}')
  runs="$SNARKJS_RUNS run"
  [ "$SNARKJS_RUNS" -eq 1 ] || runs+="s"
  rows+=("| 2^$k | $cm s (median of $CUZK_RUNS) | $sm s ($runs) | ${ratio}x |")
done

{
  echo "Measured $(date -u +%Y-%m-%d) on $cpu, $(nproc) CPUs, $(free -g | awk '/Mem:/ {print $2}') GiB;"
  echo "cuzk $(git rev-parse --short HEAD 2>/dev/null || echo '?') with ${THREADS:-all} threads, snarkjs $(node -p 'require("./node_modules/snarkjs/package.json").version'), node $(node --version)."
  echo "Circuit: \`cuzk gen-circuit k\` (domain 2^k), key: \`cuzk setup --seed bench\`; wall-clock time of the whole"
  echo "command, file loading included. Load average before the run: $load_before (other work on the"
  echo "machine slows both provers; compare ratios from the same run)."
  echo
  echo "| domain | cuzk prove | snarkjs groth16 prove | speed-up |"
  echo "|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
} | tee "$WORK/results.md"
