#!/usr/bin/env bash
# On the GPU machine, one call that checks a merged tree: build its kernels there (with the object
# cache of scripts/gpu_devbuild_cached.sh when PREBUILT is set), run every gpu test under the shipped
# defaults, then the headline benchmarks (NTT 2^24/2^27, G2 MSM 2^22 plain + precomputed, whole
# proofs at 2^24 with the key resident). Logs under $OUT (or ./gpu-out), most important first, so a
# call cut short still returns the test results.
#
#   [PREBUILT=DIR] scripts/gpu_check.sh DEVLIBS BASE_BUNDLE
set -uo pipefail
libs="$1"; base="$2"
out="${OUT:-./gpu-out}"
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,memory.total --format=csv \
  >"$out/machine.txt" 2>&1
t0=$(date +%s)
if ! scripts/gpu_devbuild_cached.sh "$libs" "$base" /tmp/bnew >"$out/build.log" 2>&1; then
  tail -60 "$out/build.log"
  exit 1
fi
echo "== built in $(( $(date +%s) - t0 )) s ($(grep -c '^reused' "$out/build.log") objects reused)"
rc=0
timeout "${TEST_TIMEOUT:-220}" /tmp/bnew/run cuzk_gpu_tests --gtest_color=no >"$out/tests.log" 2>&1
t=$?
grep -E "random seed|^\[ *(FAILED|PASSED) *\]|Failure|tests? from .* ran" "$out/tests.log" | head -20
echo "== gpu tests exit status $t after $(( $(date +%s) - t0 )) s"; [ "$t" = 0 ] || rc=1
bench() {  # bench LOG ARGS...
  local log=$1; shift
  timeout 120 /tmp/bnew/run cuzk_gpu_bench "$@" 2>&1 | tee -a "$out/$log" | grep -v "^# device"
}
bench bench_ntt.log --runs 7 --warmup 2 ntt --sizes 20,24,27
bench bench_g2.log --runs 5 --warmup 1 msm-g2-ab --sizes 22 --scalars random
bench bench_prove.log --runs 5 --warmup 1 --ab-env CUZK_MSM_G2_ACC=pair prove-ab --sizes 24
echo "== done after $(( $(date +%s) - t0 )) s"
exit $rc
