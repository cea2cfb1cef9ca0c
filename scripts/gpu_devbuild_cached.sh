#!/usr/bin/env bash
# scripts/gpu_devbuild.sh with an object cache, to save device time on repeated A/B calls:
#
#   PREBUILT=DIR scripts/gpu_devbuild_cached.sh DEVLIBS BASE_BUNDLE OUT_BUNDLE
#
# Every translation unit is preprocessed first (nvcc -E, same flags); when DIR holds NAME.o with a
# NAME.hash equal to the hash of that preprocessed text, the object is reused instead of compiled.
# OUT_BUNDLE/obj/ gets every object with its .hash, ready to be returned and carried as DIR next time.
set -euo pipefail
libs="$1"; base="$2"; out="$3"
pre="${PREBUILT:-}"
mkdir -p "$out/obj" "$out/bin" "$out/lib"
cp "$base/run" "$out/"
nv=(nvcc -O3 -DNDEBUG "--generate-code=arch=compute_90,code=[compute_90,sm_90]" --expt-relaxed-constexpr
    -Xcudafe=--diag_suppress=177 -std=c++20 -I.)
unit() {  # unit SRC OBJNAME EXTRA_FLAGS...
  local f="$1" o="$2"; shift 2
  local h="none" tmp="$out/obj/$o.i"
  if "${nv[@]}" "$@" -E "$f" -o "$tmp" 2>/dev/null && [ "$(wc -c <"$tmp")" -gt 10000 ]; then
    h=$(grep -v '^#' "$tmp" | sha256sum | cut -c1-64)
  fi
  rm -f "$tmp"
  if [ -n "$pre" ] && [ "$h" != none ] && [ -f "$pre/$o.o" ] && [ "$(cat "$pre/$o.hash" 2>/dev/null)" = "$h" ]; then
    cp "$pre/$o.o" "$out/obj/$o.o"
    echo "reused $o"
  else
    "${nv[@]}" "$@" -c "$f" -o "$out/obj/$o.o"
    echo "compiled $o"
  fi
  echo "$h" >"$out/obj/$o.hash"
}
pids=()
for f in kernels/*.cu kernels/*.cpp bench/gpu/cuzk_gpu_bench.cpp; do
  unit "$f" "$(basename "$f")" & pids+=($!)
done
unit tests/gpu/gpu_device_test.cpp gpu_device_test -I"$libs/include" -DCUZK_SOURCE_DIR="\"$PWD\"" \
  -DCUZK_BINARY_DIR="\"$out\"" & pids+=($!)
for p in "${pids[@]}"; do wait "$p"; done
objs=$(ls "$out"/obj/*.o | grep -v -e cuzk_gpu_bench -e gpu_device_test)
host=("$libs/libcuzk_groth16.a" "$libs/libcuzk_math.a" -lpthread -ldl -lrt)
nvcc -o "$out/bin/cuzk_gpu_bench" "$out/obj/cuzk_gpu_bench.cpp.o" $objs "${host[@]}"
nvcc -o "$out/bin/cuzk_gpu_tests" "$out/obj/gpu_device_test.o" $objs "$libs/libgtest_main.a" "$libs/libgtest.a" "${host[@]}"
echo "built $out"
