#!/usr/bin/env bash
# On the GPU machine, one call: build this tree's kernels there (scripts/gpu_devbuild_cached.sh,
# reusing carried objects whose preprocessed source is unchanged), read the NTT kernels' resource
# usage and instruction mix, then the same-build A/B of the NTT: alternating processes ROUNDS times,
# each 2 warm-ups + RUNS transforms (CUDA events, median), one process per variant (VARIANTS):
#   base    CUZK_NTT_V2=0 CUZK_NTT_TILED_PERM=0   the default before: radix-2 passes in shared memory,
#                                                 element-wise bit reversal
#   new     CUZK_NTT_V2=auto                      the default now: r4 up to 2^24, r4b4 above, tiled
#                                                 bit reversal, H stage scale fused
#   r4      v2 passes (kernels/ntt_v2_core.cuh): radix-4 register sub-rounds, two-plane tile, lazy
#           reduction, r-shaped Fr multiply; r4plain: generic multiply; r2: radix-2 sub-rounds;
#   r4b4    r4 with registers capped at 64 (4 blocks = 32 warps per SM); r4pf: r4 on a persistent
#           grid that prefetches the next tile (cp.async); perm: radix-2 passes + tiled bit reversal
#   (H stage, HVARIANTS) r4nofuse: r4 with the scale as a separate kernel (CUZK_NTT_FUSE_SCALE=0)
#   sepperm CUZK_NTT_FUSED_PERM=0: the separate tiled bit reversal instead of the last pass's store;
#   lastB   CUZK_NTT_LAST_PASS_BITS=B: the fused plan with a last pass of B stages (last7: 9+8+7, 10+10+7)
# then (NCU=1) an Nsight Compute read of pass kernels, and the gpu tests (TEST_FILTER, with TEST_ENV
# exported), optionally a second filtered pass under TEST2_ENV / TEST2_FILTER. TAR_OBJS=1 returns the
# objects (objs.tgz) to carry as prebuilt/objs.tgz next time.
#
#   scripts/gpu_ntt_pre.sh DEVLIBS BASE_BUNDLE      (carry both; logs under $OUT or ./gpu-out)
set -uo pipefail
libs="$1"; base="$2"
out="${OUT:-./gpu-out}"
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw,memory.total \
  --format=csv 2>&1 | sed 's/^/# /' | tee "$out/bench_ntt.log"
t0=$(date +%s)
pre=""
if [ -f prebuilt/objs.tgz ]; then mkdir -p /tmp/prebuilt && tar xzf prebuilt/objs.tgz -C /tmp/prebuilt && pre=/tmp/prebuilt; fi
if ! PREBUILT="$pre" scripts/gpu_devbuild_cached.sh "$libs" "$base" /tmp/bnew >"$out/build.log" 2>&1; then
  tail -40 "$out/build.log"
  exit 1
fi
grep -E "^(reused|compiled)" "$out/build.log" | paste -sd' '
echo "== built in $(( $(date +%s) - t0 )) s"
[ "${TAR_OBJS:-0}" = 1 ] && (cd /tmp/bnew/obj && tar czf "$out/objs.tgz" ./*.o ./*.hash) && ls -la "$out/objs.tgz"
cuobjdump -res-usage /tmp/bnew/bin/cuzk_gpu_bench 2>/dev/null | grep -A1 -E "Function .*(k_ntt|k_h_combine)" |
  grep -oE "REG:[0-9]+|STACK:[0-9]+|LOCAL:[0-9]+|SHARED:[0-9]+|Function [^:]*" | paste -sd' ' |
  sed 's/Function/\nFunction/g' >"$out/res_usage.txt"
sed -E 's/Function _ZN4cuzk3gpu[^ ]*(k_ntt_pass_v2_pf|k_ntt_pass_v2|k_ntt_pass_r8|k_ntt_pass|k_ntt_permute_tiled|k_ntt_elementwise)(ILi([0-9])ELb([01])ELb([01])ELi([0-9])E)?[^ ]*/\1<\3,\4,\5,\6>/' \
  "$out/res_usage.txt" | grep -E "k_ntt"
# Instruction mix of the pass kernels (static SASS opcode counts, from the linked binary).
cuobjdump -sass /tmp/bnew/bin/cuzk_gpu_bench 2>/dev/null | awk '
  /Function :/ { fn = $3; keep = fn ~ /k_ntt_pass/ }
  keep && /\/\*[0-9a-f]+\*\// { op = $2; if (op ~ /^@/) op = $3; sub(/;$/, "", op); n = split(op, a, ".");
    o = a[1]; if (op ~ /WIDE/) o = o ".WIDE"; cnt[fn " " o]++ }
  END { for (k in cnt) print k, cnt[k] }' | sort >"$out/sass_mix.txt"
wc -l "$out/sass_mix.txt"
sizes="${SIZES:-20,21,22,23,24,25,26,27}"
bench() {  # bench TAG OP SIZES ENV...
  local tag=$1 op=$2 sz=$3; shift 3
  env "$@" timeout "${BENCH_TIMEOUT:-120}" /tmp/bnew/run cuzk_gpu_bench --runs "${RUNS:-7}" --warmup 2 "$op" \
    --sizes "$sz" 2>&1 | grep -v "^# device" | sed "s/^/$tag /" >>"$out/bench_ntt.log"
}
envof() {
  case "$1" in
    base) echo CUZK_NTT_V2=0 CUZK_NTT_TILED_PERM=0 ;;  # the default before the v2 passes
    new) echo CUZK_NTT_V2=auto ;;                     # the default now (auto, tiled bit reversal)
    perm) echo CUZK_NTT_V2=0 ;;
    r4nofuse) echo CUZK_NTT_V2=r4 CUZK_NTT_FUSE_SCALE=0 ;;
    sepperm) echo CUZK_NTT_FUSED_PERM=0 ;;
    last[0-9]*) echo "CUZK_NTT_LAST_PASS_BITS=${1#last}" ;;
    *) echo "CUZK_NTT_V2=$1" ;;
  esac
}
variants="${VARIANTS:-base new r4 r4b4 r4pf}"
echo "== NTT A/B: $variants, ${ROUNDS:-2} rounds"
t1=$(date +%s)
for r in $(seq "${ROUNDS:-2}"); do
  for v in $variants; do bench "$v" ntt "$sizes" $(envof "$v"); done
  for v in ${HVARIANTS:-base new r4nofuse}; do bench "$v" h-stage "${HSIZES:-20,22,24}" $(envof "$v"); done
done
echo "bench took $(( $(date +%s) - t1 )) s"
awk '{for (i = 1; i <= NF; i++) if ($i == "median") print $1, $2, $3, $(i + 1)}' "$out/bench_ntt.log" |
  awk '{k = $1 " " $2 " " $3; v[k] = v[k] " " $4} END {for (k in v) print k v[k]}' | sort -k2,2 -k3,3 -k1,1
if [ "${NCU:-0}" = 1 ] && command -v ncu >/dev/null; then
  echo "== ncu"
  for v in base new; do
    # The middle pass of a 2^24 forward transform, and (base) the bit reversal.
    env $(envof "$v") timeout 150 ncu --clock-control none --kernel-name regex:"k_ntt_pass|k_ntt_elementwise" \
      --launch-skip 1 --launch-count 3 --section SpeedOfLight --section ComputeWorkloadAnalysis \
      --section WarpStateStats --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis \
      --section SchedulerStats --section InstructionStats \
      /tmp/bnew/bin/cuzk_gpu_bench --runs 1 --warmup 0 ntt --sizes 24 >"$out/ncu_$v.txt" 2>&1
    grep -E "k_ntt|Duration|Compute \(SM\) Throughput|Memory Throughput|Issue Slots Busy|Executed Ipc A|Achieved Occupancy|Registers Per|Theoretical Occ|Stall|Bank|No Eligible|Eligible Warps|Warp Cycles Per Issued" "$out/ncu_$v.txt" | head -60
  done
fi
echo "== gpu tests (${TEST_ENV:-default env}, filter ${TEST_FILTER:-*})"
env ${TEST_ENV:-} timeout "${TEST_TIMEOUT:-300}" /tmp/bnew/run cuzk_gpu_tests --gtest_color=no \
  --gtest_filter="${TEST_FILTER:-*}" >"$out/tests.log" 2>&1
t=$?
grep -E "random seed|^\[ *(FAILED|PASSED) *\]|Failure|Expected|Which is|error|tests? from .* ran|OK \] GpuNtt" \
  "$out/tests.log" | head -40
echo "tests exit status $t"
if [ -n "${TEST2_ENV:-}" ]; then
  echo "== gpu tests again ($TEST2_ENV, filter $TEST2_FILTER)"
  env $TEST2_ENV timeout 200 /tmp/bnew/run cuzk_gpu_tests --gtest_color=no --gtest_filter="$TEST2_FILTER" \
    >"$out/tests2.log" 2>&1
  t2=$?
  grep -E "random seed|^\[ *(FAILED|PASSED) *\]|Failure|tests? from .* ran" "$out/tests2.log" | head -20
  echo "tests (2) exit status $t2"
  [ "$t2" = 0 ] || t=1
fi
exit $t
