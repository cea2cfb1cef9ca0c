#!/usr/bin/env bash
# On the GPU machine, one call: build this tree's kernels there (scripts/gpu_devbuild.sh), read the
# MSM kernels' resource usage, run every gpu test (plus the whole-proof test under each G2 kind), then
# the same-build A/B of the G2 level-0 accumulation kinds (CUZK_MSM_G2_ACC, see kernels/engines.cuh):
# alternating processes, each `cuzk_gpu_bench msm-g2-ab` (plain and over precomputed bases, median of
# RUNS after a warm-up, twice), a stage breakdown (CUZK_MSM_PROFILE=1), whole proofs at 2^PROVE_SIZE
# with the new default against legacy in one process (prove-ab --ab-env), and a shared-window sweep.
#
#   scripts/gpu_g2_pair.sh DEVLIBS BASE_BUNDLE      (carry both; logs under $OUT or ./gpu-out)
set -uo pipefail
libs="$1"; base="$2"
out="${OUT:-./gpu-out}"
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw,memory.total \
  --format=csv >"$out/machine.txt" 2>&1
cat "$out/machine.txt"
t0=$(date +%s)
if ! scripts/gpu_devbuild.sh "$libs" "$base" /tmp/bnew >"$out/build.log" 2>&1; then
  tail -60 "$out/build.log"
  exit 1
fi
echo "== built in $(( $(date +%s) - t0 )) s"
{
  cuobjdump -res-usage /tmp/bnew/bin/cuzk_gpu_bench 2>/dev/null |
    grep -A1 -E "Function .*(k_acc0|k_acc_level|k_chunks|k_group_sum|k_shifted)" |
    grep -oE "REG:[0-9]+|STACK:[0-9]+|LOCAL:[0-9]+|SHARED:[0-9]+|Function [^:]*" | paste -sd' ' |
    sed 's/Function/\nFunction/g' | sed 's/_ZN4cuzk3gpu[0-9A-Za-z_]*_cu_[0-9a-f]*//'
  echo
} >"$out/res_usage.txt"
cut -c1-160 "$out/res_usage.txt"
rc=0
echo "== gpu tests (default G2 kind)"
timeout "${TEST_TIMEOUT:-240}" /tmp/bnew/run cuzk_gpu_tests --gtest_color=no >"$out/tests.log" 2>&1
t=$?
grep -E "random seed|^\[ *(FAILED|PASSED) *\]|Failure|Expected|Which is|error|tests? from .* ran" "$out/tests.log" | head -30
echo "tests exit status $t"
[ "$t" = 0 ] || rc=1
for kind in legacy pair4 pair-lb3 pair4-lb3; do
  CUZK_MSM_G2_ACC=$kind timeout 120 /tmp/bnew/run cuzk_gpu_tests --gtest_color=no \
    --gtest_filter='GpuProver.GeneratedCircuitsMatchCpuBackend:GpuProver.PrecomputedTablesOnOffAndPartialGiveSameProofs' \
    >>"$out/tests.log" 2>&1
  t=$?
  echo "whole-proof tests with CUZK_MSM_G2_ACC=$kind: exit status $t"
  [ "$t" = 0 ] || rc=1
done
bench() {  # bench LOG ARGS...
  local log=$1; shift
  timeout "${BENCH_TIMEOUT:-150}" /tmp/bnew/run cuzk_gpu_bench --runs "${RUNS:-5}" --warmup 1 "$@" 2>&1 |
    tee -a "$out/$log" | grep -v "^# device"
}
echo "== G2 2^22 A/B of the level-0 kinds, alternating processes"
for round in 1 2; do
  for kind in ${KINDS:-legacy pair pair4 pair-lb3 pair4-lb3}; do
    echo "# kind $kind round $round" | tee -a "$out/bench_g2.log"
    CUZK_MSM_G2_ACC=$kind bench bench_g2.log msm-g2-ab --sizes 22 --scalars random
  done
done
echo "== stage breakdown (CUZK_MSM_PROFILE=1)"
for kind in legacy pair; do
  echo "# kind $kind" >>"$out/profile.log"
  CUZK_MSM_PROFILE=1 CUZK_MSM_G2_ACC=$kind timeout 120 /tmp/bnew/run cuzk_gpu_bench --runs 2 --warmup 1 \
    msm-g2-ab --sizes 22 --scalars random >>"$out/profile.log" 2>&1
done
grep -E "^# kind|msm-profile run|plan" "$out/profile.log" | awk '!seen[$0]++' | tail -24
echo "== prove-ab 2^${PROVE_SIZE:-24}: default G2 kind (prove-pre) vs CUZK_MSM_G2_ACC=legacy (prove-env)"
timeout "${PROVE_TIMEOUT:-150}" /tmp/bnew/run cuzk_gpu_bench --runs "${RUNS:-5}" --warmup 1 \
  --ab-env CUZK_MSM_G2_ACC=legacy prove-ab --sizes "${PROVE_SIZE:-24}" 2>&1 | tee -a "$out/bench_prove.log" |
  grep -v "^# device"
echo "== shared-window sweep, G2 2^22, default kind"
for c in ${SWEEP:-19 21}; do
  echo "# CUZK_MSM_SHARED_WINDOW=$c" | tee -a "$out/bench_g2_sweep.log"
  CUZK_MSM_SHARED_WINDOW=$c bench bench_g2_sweep.log msm-g2-ab --sizes 22 --scalars random
done
exit $rc
