#!/usr/bin/env bash
# On the GPU machine, one call: build this tree's kernels there (scripts/gpu_devbuild.sh), read the
# MSM kernels' resource usage, run every gpu test, then the same-process A/B of the plain MSM and the
# MSM over precomputed bases (cuzk_gpu_bench msm-g1-ab / msm-g2-ab: alternating, median of RUNS).
#
#   scripts/gpu_msm_pre.sh DEVLIBS BASE_BUNDLE      (carry both; logs under $OUT or ./gpu-out)
# G1 2^24 (random and witness scalars), G2 2^G2_SIZES (default 22), then G1 2^G1_LARGE (default 26).
set -uo pipefail
libs="$1"; base="$2"
out="${OUT:-./gpu-out}"
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv \
  >"$out/machine.txt" 2>&1
cat "$out/machine.txt"
t0=$(date +%s)
if ! scripts/gpu_devbuild.sh "$libs" "$base" /tmp/bnew >"$out/build.log" 2>&1; then
  tail -40 "$out/build.log"
  exit 1
fi
echo "== built in $(( $(date +%s) - t0 )) s"
# Registers / stack / local memory of the MSM kernels.
cuobjdump -res-usage /tmp/bnew/bin/cuzk_gpu_bench 2>/dev/null | grep -A1 -E "Function .*(k_acc0|k_acc_level|k_shifted|k_chunks|k_emit)" |
  grep -oE "REG:[0-9]+|STACK:[0-9]+|LOCAL:[0-9]+|SHARED:[0-9]+|Function [^:]*" | paste -sd' ' |
  sed 's/Function/\nFunction/g' | sed 's/_ZN4cuzk3gpu[0-9A-Za-z_]*_cu_[0-9a-f]*//' >"$out/res_usage.txt"
cat "$out/res_usage.txt" | cut -c1-220
rc=0
echo "== gpu tests"
timeout "${TEST_TIMEOUT:-240}" /tmp/bnew/run cuzk_gpu_tests --gtest_color=no >"$out/tests.log" 2>&1
t=$?
grep -E "random seed|^\[ *(FAILED|PASSED) *\]|Failure|Expected|Which is|error|Precomputed" "$out/tests.log" | head -40
echo "tests exit status $t"
[ "$t" = 0 ] || rc=1
bench() {  # bench LOG ARGS...
  local log=$1; shift
  timeout "${BENCH_TIMEOUT:-200}" /tmp/bnew/run cuzk_gpu_bench --runs "${RUNS:-5}" --warmup 1 "$@" 2>&1 |
    tee -a "$out/$log" | grep -v "^# device"
}
echo "== G1 2^24"
bench bench_g1.log msm-g1-ab --sizes 24 --scalars both
echo "== G2 2^${G2_SIZES:-22}"
bench bench_g2.log msm-g2-ab --sizes "${G2_SIZES:-22}" --scalars random
for k in ${G1_LARGE:-26}; do  # last, so that a time limit cuts only these
  echo "== G1 2^$k"
  bench bench_g1.log msm-g1-ab --sizes "$k" --scalars random
done
exit $rc
