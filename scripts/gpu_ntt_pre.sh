#!/usr/bin/env bash
# On the GPU machine, one call: build this tree's kernels there (scripts/gpu_devbuild.sh), read the
# NTT kernels' resource usage, run every gpu test (NTT at all sizes 2^1..2^27, H stage, whole proofs
# against the CPU backend), then the same-build A/B of the NTT: the default (radix-2 passes,
# element-wise permutation) against the opt-in kernels of issue 3, each on its own and together
# (CUZK_NTT_R8=1: radix-8 register sub-rounds; CUZK_NTT_TILED_PERM=1: tiled bit-reversal),
# alternating processes ROUNDS times, each warm-up + RUNS transforms (CUDA events, median).
#
#   scripts/gpu_ntt_pre.sh DEVLIBS BASE_BUNDLE      (carry both; logs under $OUT or ./gpu-out)
set -uo pipefail
libs="$1"; base="$2"
out="${OUT:-./gpu-out}"
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw,memory.total \
  --format=csv >"$out/machine.txt" 2>&1
cat "$out/machine.txt"
t0=$(date +%s)
if ! scripts/gpu_devbuild.sh "$libs" "$base" /tmp/bnew >"$out/build.log" 2>&1; then
  tail -40 "$out/build.log"
  exit 1
fi
echo "== built in $(( $(date +%s) - t0 )) s"
cuobjdump -res-usage /tmp/bnew/bin/cuzk_gpu_bench 2>/dev/null | grep -A1 -E "Function .*(k_ntt|k_h_combine)" |
  grep -oE "REG:[0-9]+|STACK:[0-9]+|LOCAL:[0-9]+|SHARED:[0-9]+|Function [^:]*" | paste -sd' ' |
  sed 's/Function/\nFunction/g' >"$out/res_usage.txt"
cut -c1-200 "$out/res_usage.txt"
rc=0
sizes="${SIZES:-20,22,24,26,27}"
bench() {  # bench TAG ENV...
  local tag=$1; shift
  env "$@" timeout "${BENCH_TIMEOUT:-120}" /tmp/bnew/run cuzk_gpu_bench --runs "${RUNS:-7}" --warmup 2 ntt \
    --sizes "$sizes" 2>&1 | grep -v "^# device" | sed "s/^/$tag /" | tee -a "$out/bench_ntt.log"
}
echo "== NTT A/B (base = default, r8 / perm / both = opt-in kernels)"
for r in $(seq "${ROUNDS:-2}"); do
  bench base CUZK_NTT_R8=0
  bench r8 CUZK_NTT_R8=1
  bench perm CUZK_NTT_TILED_PERM=1
  bench both CUZK_NTT_R8=1 CUZK_NTT_TILED_PERM=1
done
echo "== gpu tests"
timeout "${TEST_TIMEOUT:-240}" /tmp/bnew/run cuzk_gpu_tests --gtest_color=no >"$out/tests.log" 2>&1
t=$?
grep -E "random seed|^\[ *(FAILED|PASSED) *\]|Failure|Expected|Which is|error|tests? from .* ran|OK \] GpuNtt" \
  "$out/tests.log" | head -40
echo "tests exit status $t"
[ "$t" = 0 ] || rc=1
exit $rc
