#!/usr/bin/env bash
# On the GPU machine, one call: build this tree's kernels there (scripts/gpu_devbuild.sh), run every
# gpu test (whole proofs against the CPU backend run over the key's precomputed tables by default;
# GpuProver.PrecomputedTablesOnOffAndPartialGiveSameProofs covers none/some/all tables), then the
# same-process A/B of whole proofs with the key's tables on and off (cuzk_gpu_bench prove-ab, the
# driver behind `cuzk bench`: per size two rounds of warm-up + RUNS proofs each way, medians).
#
#   scripts/gpu_prove_pre.sh DEVLIBS BASE_BUNDLE      (carry both; logs under $OUT or ./gpu-out)
# Sizes: SIZES (default "20 22 24"); a size whose run fails is run again with 8 GiB headroom.
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
rc=0
echo "== gpu tests"
timeout "${TEST_TIMEOUT:-120}" /tmp/bnew/run cuzk_gpu_tests --gtest_color=no >"$out/tests.log" 2>&1
t=$?
grep -E "random seed|^\[ *(FAILED|PASSED) *\]|Failure|Expected|Which is|error|Precomputed|tests? from .* ran" \
  "$out/tests.log" | head -40
echo "tests exit status $t"
[ "$t" = 0 ] || rc=1
for k in ${SIZES:-20 22 24}; do
  echo "== prove-ab 2^$k"
  timeout "${BENCH_TIMEOUT:-150}" /tmp/bnew/run cuzk_gpu_bench --runs "${RUNS:-5}" --warmup 1 \
    --csv "$out/prove_ab_$k.csv" prove-ab --sizes "$k" 2>&1 | tee -a "$out/bench_prove.log" | grep -v "^# device"
  if [ "${PIPESTATUS[0]}" != 0 ]; then
    rc=1
    echo "== prove-ab 2^$k again with 8 GiB headroom (fewer tables)"
    CUZK_GPU_PRECOMPUTE_HEADROOM_MB=8192 timeout "${BENCH_TIMEOUT:-150}" /tmp/bnew/run cuzk_gpu_bench \
      --runs "${RUNS:-5}" --warmup 1 prove-ab --sizes "$k" 2>&1 | tee -a "$out/bench_prove.log" | grep -v "^# device"
  fi
done
nvidia-smi --query-gpu=memory.used,memory.total --format=csv >>"$out/machine.txt" 2>&1
exit $rc
