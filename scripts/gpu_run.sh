#!/usr/bin/env bash
# On the GPU machine: runs the bundled GPU tests and benchmarks and writes the logs under $OUT
# (or ./gpu-out). Each stage has its own time limit so that a hang cannot eat the whole session.
#
#   scripts/gpu_run.sh [BUNDLE_DIR] [tests|sanitize|bench|all] [extra cuzk_gpu_bench arguments...]
set -uo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
bundle="${1:-$here/bundle}"
what="${2:-all}"
shift $(( $# > 2 ? 2 : $# ))
out="${OUT:-$here/gpu-out}"
mkdir -p "$out"
run="$bundle/run"
[ -x "$run" ] || { echo "error: no bundle at $bundle (make one with scripts/bundle.sh)" >&2; exit 1; }

{
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
    --format=csv 2>&1
  uname -a; nproc; cat "$bundle/MANIFEST" 2>/dev/null
} >"$out/machine.txt"
cat "$out/machine.txt"

rc=0
# Instruction mix of the hot kernels (bucket accumulation, NTT pass), from the shipped machine code.
if command -v cuobjdump >/dev/null; then
  cuobjdump -sass "$bundle/bin/cuzk_gpu_bench" 2>/dev/null | awk '
    /Function :/ { fn = $3; keep = (fn ~ /k_acc0|k_ntt_pass|k_eval_abc/) }
    keep && /\/\*[0-9a-f]+\*\// { for (i = 1; i <= NF; i++) if ($i ~ /^[A-Z][A-Z0-9._]+$/ && $i !~ /^R[0-9]/ && $i !~ /^P[0-9T]/ && $i !~ /^UR/ && $i !~ /^UP/) { ops[fn" "$i]++; tot[fn]++; break } }
    END { for (k in ops) { split(k, p, " "); if (ops[k] * 50 >= tot[p[1]]) print p[1], p[2], ops[k], tot[p[1]] } }' |
    sort | sed 's/_ZN4cuzk3gpu[0-9A-Za-z_]*_cu_[0-9a-f]*//' >"$out/sass_mix.txt"
  cuobjdump -res-usage "$bundle/bin/cuzk_gpu_bench" 2>/dev/null | grep -A1 -E "k_acc0|k_ntt_pass|k_chunks|k_emit" |
    grep -oE "REG:[0-9]+|STACK:[0-9]+|LOCAL:[0-9]+|Function [^:]*" | paste -sd' ' >>"$out/sass_mix.txt"
fi
if [ "$what" = tests ] || [ "$what" = all ]; then
  echo "== gpu tests"
  timeout "${TEST_TIMEOUT:-300}" "$run" cuzk_gpu_tests --gtest_color=no 2>&1 | tee "$out/gpu_tests.log" |
    grep -E "^\[ *(OK|FAILED|SKIPPED|PASSED) *\]|Failure|error|seed|Expected|Which is|^  " | head -150
  t=${PIPESTATUS[0]}
  echo "gpu tests exit status $t"
  [ "$t" = 0 ] || rc=1
fi
# Memory and race checks of the kernels on small cases (slow under the sanitizer, so a subset).
if [ "$what" = sanitize ] || [ "$what" = all ]; then
  if command -v compute-sanitizer >/dev/null; then
    for tool in memcheck racecheck; do
      echo "== compute-sanitizer --tool $tool"
      timeout "${SAN_TIMEOUT:-90}" compute-sanitizer --tool $tool --error-exitcode 9 "$run" cuzk_gpu_tests \
        --gtest_filter='GpuMsm.G1EveryWindowWidth:GpuMsm.G2MatchesCpu:GpuNtt.HStageMatchesCpu:GpuProver.RejectsWrongWitnessLength' \
        >"$out/sanitize_$tool.log" 2>&1
      s=$?
      grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$out/sanitize_$tool.log" | tail -3
      echo "$tool exit status $s"
      [ "$s" = 0 ] || [ "$s" = 124 ] || rc=1
    done
  else
    echo "compute-sanitizer not found; skipped"
  fi
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
  echo "== benchmarks"
  timeout "${BENCH_TIMEOUT:-400}" "$run" cuzk_gpu_bench --csv "$out/bench.csv" "${@:-all}" 2>&1 | tee "$out/bench.log"
  b=${PIPESTATUS[0]}
  echo "bench exit status $b"
  [ "$b" = 0 ] || rc=1
fi
exit $rc
