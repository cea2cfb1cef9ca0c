#!/usr/bin/env bash
# On the GPU machine: a same-run A/B of two bundles (base and new) plus the gpu tests of both, so
# that one device call gives correctness and before/after figures measured side by side.
#
#   scripts/gpu_ab.sh BASE_BUNDLE NEW_BUNDLE [bench args for both, default: msm-g1 24 and msm-g2 22]
# Writes logs under $OUT (or ./gpu-out). Benchmarks alternate base/new twice to expose drift. The
# base bundle runs only the BASE_FILTER tests (default: the prover and device ones), the new one all.
set -uo pipefail
base="$1"; new="$2"; shift 2
out="${OUT:-./gpu-out}"
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv \
  >"$out/machine.txt" 2>&1
cat "$out/machine.txt"
rc=0
for b in base new; do
  dir=$base; [ $b = new ] && dir=$new
  [ -x "$dir/bin/cuzk_gpu_tests" ] || continue
  echo "== gpu tests ($b)"
  filter="*"; [ $b = base ] && filter="${BASE_FILTER:-GpuProver.*:GpuDevice.*}"
  timeout "${TEST_TIMEOUT:-240}" "$dir/run" cuzk_gpu_tests --gtest_color=no --gtest_filter="$filter" \
    >"$out/tests_$b.log" 2>&1
  t=$?
  grep -E "random seed|^\[ *(FAILED|PASSED) *\]|Failure|Expected|Which is|error" "$out/tests_$b.log" | head -40
  echo "tests ($b) exit status $t"
  [ "$t" = 0 ] || rc=1
done
bench() {  # bench LABEL DIR ARGS...
  local label=$1 dir=$2; shift 2
  timeout "${BENCH_TIMEOUT:-200}" "$dir/run" cuzk_gpu_bench --runs "${RUNS:-7}" --warmup 2 "$@" 2>&1 |
    tee -a "$out/bench_$label.log" | grep -v "^#" | sed "s/^/[$label] /"
}
for round in 1 2; do
  echo "== round $round"
  for b in base new; do
    dir=$base; [ $b = new ] && dir=$new
    bench $b "$dir" msm-g1 --sizes 24 --scalars random
    bench $b "$dir" msm-g2 --sizes 22 --scalars random
  done
done
if [ -n "${PROVE_SIZES:-}" ]; then
  echo "== prove (new)"
  bench new "$new" prove --sizes "$PROVE_SIZES" --runs 3 --warmup 1
fi
exit $rc
