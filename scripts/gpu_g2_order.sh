#!/usr/bin/env bash
# On the GPU machine, the verification call for the G2 lane-pair defaults and the A/B of the opt-in
# follow-ups: build this tree's kernels there (scripts/gpu_devbuild.sh, ~230 s on a fresh machine), run
# every gpu test under the shipped defaults (G2 kind pair4, no task order, chains of 32 group sums),
# then alternating processes on G2 2^22 (default / CUZK_MSM_TASK_ORDER=g2 / CUZK_MSM_G2_PAIR_TREE=1 /
# CUZK_MSM_G2_ACC=pair), G1 2^24 (CUZK_MSM_TASK_ORDER=all vs none), and whole proofs at 2^24 with the
# default kind against pair in one process (prove-ab --ab-env). About 7-8 minutes in all.
#
#   scripts/gpu_g2_order.sh DEVLIBS BASE_BUNDLE      (carry both; logs under $OUT or ./gpu-out)
set -uo pipefail
libs="$1"; base="$2"
out="${OUT:-./gpu-out}"
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,memory.total --format=csv \
  >"$out/machine.txt" 2>&1
t0=$(date +%s)
if ! scripts/gpu_devbuild.sh "$libs" "$base" /tmp/bnew >"$out/build.log" 2>&1; then
  tail -60 "$out/build.log"
  exit 1
fi
echo "== built in $(( $(date +%s) - t0 )) s"
cuobjdump -res-usage /tmp/bnew/bin/cuzk_gpu_bench 2>/dev/null | grep -A1 -E "Function .*(pair|k_acc0)" |
  grep -oE "REG:[0-9]+|STACK:[0-9]+|Function [^:]*" | paste -sd' ' | sed 's/Function/\nFunction/g' >"$out/res_usage.txt"
rc=0
echo "== gpu tests (defaults)"
timeout 180 /tmp/bnew/run cuzk_gpu_tests --gtest_color=no >"$out/tests.log" 2>&1
t=$?
grep -E "random seed|^\[ *(FAILED|PASSED) *\]|Failure|Expected|Which is|tests? from .* ran" "$out/tests.log" | head -20
echo "tests exit status $t"; [ "$t" = 0 ] || rc=1
bench() {  # bench LOG ARGS...
  local log=$1; shift
  timeout 100 /tmp/bnew/run cuzk_gpu_bench --runs 5 --warmup 1 "$@" 2>&1 | tee -a "$out/$log" | grep -v "^# device"
}
for v in default CUZK_MSM_TASK_ORDER=g2 CUZK_MSM_G2_PAIR_TREE=1 CUZK_MSM_G2_ACC=pair; do
  echo "# $v" | tee -a "$out/bench_g2.log"
  ( [ "$v" = default ] || export "$v"; bench bench_g2.log msm-g2-ab --sizes 22 --scalars random )
done
for o in all none; do
  echo "# CUZK_MSM_TASK_ORDER=$o" | tee -a "$out/bench_g1.log"
  CUZK_MSM_TASK_ORDER=$o bench bench_g1.log msm-g1-ab --sizes 24 --scalars random
done
echo "== prove-ab 2^24: default G2 kind (prove-pre) vs CUZK_MSM_G2_ACC=pair (prove-env)"
timeout 150 /tmp/bnew/run cuzk_gpu_bench --runs 5 --warmup 1 --ab-env CUZK_MSM_G2_ACC=pair prove-ab --sizes 24 2>&1 |
  tee -a "$out/bench_prove.log" | grep -v "^# device"
exit $rc
