#!/usr/bin/env bash
# On the GPU machine, one call: build this tree's kernels there (scripts/gpu_devbuild_cached.sh,
# reusing carried objects whose preprocessed source is unchanged), read the NTT kernels' resource
# usage and instruction mix, then the same-build A/B of the NTT: alternating processes ROUNDS times,
# each 2 warm-ups + RUNS transforms (CUDA events, median), one process per variant:
#   base   CUZK_NTT_V2=0            radix-2 passes in shared memory, element-wise bit reversal
#   r4     CUZK_NTT_V2=r4           v2 passes: radix-4 register sub-rounds, two-plane tile, lazy
#                                   reduction, r-shaped Fr multiply (kernels/ntt_core.cuh)
#   r4plain CUZK_NTT_V2=r4plain     the same with the generic multiply
#   r2     CUZK_NTT_V2=r2           v2 with radix-2 sub-rounds
#   r4b4   CUZK_NTT_V2=r4b4         r4 with registers capped at 64 (4 blocks = 32 warps per SM)
#   perm / r4perm                   base / r4 with the tiled bit reversal (CUZK_NTT_TILED_PERM=1)
#   (H stage) r4 fuses the scale into the inverse passes' last store; r4nofuse: CUZK_NTT_FUSE_SCALE=0
# then (NCU=1) an Nsight Compute read of one pass kernel of each, and the gpu tests (TEST_FILTER,
# with TEST_ENV exported, e.g. CUZK_NTT_V2=r4).
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
(cd /tmp/bnew/obj && tar czf "$out/objs.tgz" ./*.o ./*.hash) && ls -la "$out/objs.tgz"
cuobjdump -res-usage /tmp/bnew/bin/cuzk_gpu_bench 2>/dev/null | grep -A1 -E "Function .*(k_ntt|k_h_combine)" |
  grep -oE "REG:[0-9]+|STACK:[0-9]+|LOCAL:[0-9]+|SHARED:[0-9]+|Function [^:]*" | paste -sd' ' |
  sed 's/Function/\nFunction/g' >"$out/res_usage.txt"
cut -c1-220 "$out/res_usage.txt" | grep -E "v2|k_ntt_pass|elementwise"
# Instruction mix of each pass kernel (SASS opcodes, static counts).
cuobjdump -sass /tmp/bnew/obj/ntt_v2.cu.o /tmp/bnew/obj/ntt.cu.o 2>/dev/null | awk '
  /Function :/ { fn = $3 }
  /^ +\/\*[0-9a-f]+\*\/ / { op = $2; if (op ~ /^@/) op = $3; sub(/;$/, "", op); split(op, a, "."); cnt[fn " " a[1] (a[2] == "WIDE" ? ".WIDE" : "")]++ }
  END { for (k in cnt) print k, cnt[k] }' | sort >"$out/sass_mix.txt"
grep -E "k_ntt_pass(_v2)?" "$out/sass_mix.txt" | awk '$2 ~ /^(IMAD|IMAD.WIDE|IADD3|LOP3|SEL|LDS|STS|LDG|STG|BAR|ISETP|SHF|LEA|STL|LDL)$/' |
  sed -E 's/_ZN4cuzk3gpu[^ ]*k_ntt_pass_v2ILi([0-9])ELb([01])ELb([01])ELi([0-9])E[^ ]*/v2<R=\1,DIT=\2,Fast=\3,MinB=\4>/; s/_ZN4cuzk3gpu[^ ]*k_ntt_pass_r8[^ ]*/r8/; s/_ZN4cuzk3gpu[^ ]*k_ntt_pass[^ ]*/radix2/' |
  awk '{a[$1] = a[$1] " " $2 "=" $3} END {for (k in a) print k a[k]}' | sort
sizes="${SIZES:-20,22,24,26,27}"
bench() {  # bench TAG OP SIZES ENV...
  local tag=$1 op=$2 sz=$3; shift 3
  env "$@" timeout "${BENCH_TIMEOUT:-120}" /tmp/bnew/run cuzk_gpu_bench --runs "${RUNS:-7}" --warmup 2 "$op" \
    --sizes "$sz" 2>&1 | grep -v "^# device" | sed "s/^/$tag /" >>"$out/bench_ntt.log"
}
envof() {
  case "$1" in
    base) echo CUZK_NTT_V2=0 ;; r4) echo CUZK_NTT_V2=r4 ;; r4plain) echo CUZK_NTT_V2=r4plain ;;
    r2) echo CUZK_NTT_V2=r2 ;; perm) echo CUZK_NTT_V2=0 CUZK_NTT_TILED_PERM=1 ;;
    r4perm) echo CUZK_NTT_V2=r4 CUZK_NTT_TILED_PERM=1 ;; r4nofuse) echo CUZK_NTT_V2=r4 CUZK_NTT_FUSE_SCALE=0 ;; *) echo "CUZK_NTT_V2=$1" ;;
  esac
}
variants="${VARIANTS:-base r4 r4plain r2 r4b4 perm r4perm}"
echo "== NTT A/B: $variants, ${ROUNDS:-2} rounds"
t1=$(date +%s)
for r in $(seq "${ROUNDS:-2}"); do
  for v in $variants; do bench "$v" ntt "$sizes" $(envof "$v"); done
  for v in ${HVARIANTS:-base r4 r4nofuse}; do bench "$v" h-stage 24 $(envof "$v"); done
done
echo "bench took $(( $(date +%s) - t1 )) s"
awk '{for (i = 1; i <= NF; i++) if ($i == "median") print $1, $2, $3, $(i + 1)}' "$out/bench_ntt.log" |
  awk '{k = $1 " " $2 " " $3; v[k] = v[k] " " $4} END {for (k in v) print k v[k]}' | sort -k2,2 -k3,3 -k1,1
if [ "${NCU:-0}" = 1 ] && command -v ncu >/dev/null; then
  echo "== ncu"
  for v in base r4; do
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
exit $t
