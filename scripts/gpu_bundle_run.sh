#!/usr/bin/env bash
# Device-time saver: the kernels are compiled HERE (build-cuda, ~0 s of device time instead of the
# ~230 s of scripts/gpu_devbuild.sh) and travel as one compressed bundle; on the GPU host this script
# unpacks it and runs the measurement plan named by PLAN (a file of bench lines, see below).
#
#   here:   scripts/gpu_bundle_run.sh pack [BUILD_DIR [BIN...]] -> .devbundle/b.tgz (stripped, ~40 MB;
#           default BINs cuzk_gpu_bench cuzk_gpu_tests: each carries the ~35 MB of device code)
#   device: scripts/gpu_bundle_run.sh run PLAN                  (carry .devbundle; logs under $OUT)
#
# PLAN lines: "LOG ENV... -- ARGS..." runs `cuzk_gpu_bench ARGS` with ENV set, output appended to
# $OUT/LOG; "tests [GTEST_FILTER]" runs the gpu test suite; "sh CMD..." runs a shell command with
# BUNDLE set to the unpacked bundle; "nsys LOG -- ARGS" runs the bench under nsys and keeps its
# per-kernel summary. Blank lines and # comments are skipped.
set -uo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
cmd="${1:?pack or run}"
if [ "$cmd" = pack ]; then
  build="${2:-$here/build-cuda}"
  keep=("${@:3}")
  [ ${#keep[@]} -gt 0 ] || keep=(cuzk_gpu_bench cuzk_gpu_tests)
  tmp=$(mktemp -d)
  bash "$here/scripts/bundle.sh" "$build" "$tmp/bundle" >/dev/null
  for f in "$tmp"/bundle/bin/*; do
    [[ " ${keep[*]} " == *" $(basename "$f") "* ]] || rm -f "$f"
  done
  strip "$tmp"/bundle/bin/* 2>/dev/null || true
  mkdir -p "$here/.devbundle"
  tar czf "$here/.devbundle/b.tgz" -C "$tmp" bundle
  git -C "$here" rev-parse --short HEAD >"$here/.devbundle/commit"
  git -C "$here" diff --quiet || echo "dirty" >>"$here/.devbundle/commit"
  rm -rf "$tmp"
  ls -la "$here/.devbundle"
  exit 0
fi
plan="${2:?plan file}"
out="${OUT:-./gpu-out}"
mkdir -p "$out"
b=/tmp/cuzk-bundle
rm -rf "$b" && mkdir -p "$b" && tar xzf "$here/.devbundle/b.tgz" -C "$b" --strip-components=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,memory.total --format=csv \
  >"$out/machine.txt" 2>&1
cat "$here/.devbundle/commit" >>"$out/machine.txt"
# The benchmarks: cuzk_gpu_bench when bundled, else the same code through `cuzk bench`.
bench=(cuzk_gpu_bench)
[ -x "$b/bin/cuzk_gpu_bench" ] || bench=(cuzk bench)
t0=$(date +%s)
rc=0
while IFS= read -r line; do
  case "$line" in ''|'#'*) continue ;; esac
  echo "== [$(( $(date +%s) - t0 )) s] $line"
  if [ "${line%% *}" = tests ]; then
    filter="${line#tests}"; filter="${filter# }"
    timeout "${TEST_TIMEOUT:-240}" "$b/run" cuzk_gpu_tests --gtest_color=no ${filter:+--gtest_filter=$filter} \
      >>"$out/tests.log" 2>&1
    t=$?
    grep -E "random seed|^\[ *(FAILED|PASSED) *\]|Failure|tests? from .* ran" "$out/tests.log" | head -20
    echo "gpu tests exit status $t"; [ "$t" = 0 ] || rc=1
    continue
  fi
  if [ "${line%% *}" = sh ]; then
    BUNDLE="$b" bash -c "${line#sh }" 2>&1 | tee -a "$out/sh.log"
    continue
  fi
  read -r -a words <<<"$line"
  log="${words[0]}"; envs=(); args=(); seen=0
  for w in "${words[@]:1}"; do
    if [ "$seen" = 0 ] && [ "$w" = -- ]; then seen=1; continue; fi
    if [ "$seen" = 0 ]; then envs+=("$w"); else args+=("$w"); fi
  done
  if [ "$log" = nsys ]; then
    if command -v nsys >/dev/null; then
      timeout 150 env "${envs[@]}" nsys profile -o /tmp/prof --force-overwrite true "$b/run" "${bench[@]}" "${args[@]}" \
        >/dev/null 2>&1
      nsys stats -q --report cuda_gpu_kern_sum --format csv /tmp/prof.nsys-rep 2>/dev/null | head -40 | tee -a "$out/nsys.csv"
    else
      echo "no nsys on this host"
    fi
    continue
  fi
  echo "# ${envs[*]} ${args[*]}" >>"$out/$log"
  timeout 150 env "${envs[@]}" "$b/run" "${bench[@]}" "${args[@]}" 2>&1 | tee -a "$out/$log" | grep -v "^# device"
done <"$plan"
echo "== done after $(( $(date +%s) - t0 )) s"
exit $rc
