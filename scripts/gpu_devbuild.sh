#!/usr/bin/env bash
# Builds cuzk_gpu_bench and cuzk_gpu_tests on the GPU host itself (it has nvcc and 16 cores; this
# side has 2), for a quick A/B of a kernel change: the host-only libraries come prebuilt from here.
#
#   scripts/gpu_devbuild.sh DEVLIBS BASE_BUNDLE OUT_BUNDLE
# DEVLIBS holds libcuzk_groth16.a, libcuzk_math.a (from build-cuda/lib), libgtest.a, libgtest_main.a
# and include/gtest; OUT_BUNDLE gets bin/ plus BASE_BUNDLE's run wrapper. The binaries are linked
# by the GPU host's own (newer) g++, so they use its libstdc++, not the one bundled from here.
# When DEVLIBS also holds gpu_worker.o (gpu-worker/gpu_worker.cpp compiled with CUZK_HAVE_CUDA=1),
# libcuzk_config.a, libcuzk_shm.a and libtomlplusplus.so*, the daemon's cuzk-gpu-worker is linked
# too, and BASE_BUNDLE's other binaries (supervisor, synthesis worker, cuzk) are copied over.
set -euo pipefail
libs="$1"; base="$2"; out="$3"
mkdir -p "$out/obj" "$out/bin"
mkdir -p "$out/lib"
cp "$base/run" "$out/"
nv=(nvcc -O3 -DNDEBUG "--generate-code=arch=compute_90,code=[compute_90,sm_90]" --expt-relaxed-constexpr
    -Xcudafe=--diag_suppress=177 -std=c++20 -I.)
pids=()
for f in kernels/*.cu kernels/*.cpp bench/gpu/cuzk_gpu_bench.cpp; do
  "${nv[@]}" -c "$f" -o "$out/obj/$(basename "$f").o" & pids+=($!)
done
"${nv[@]}" -I"$libs/include" -DCUZK_SOURCE_DIR="\"$PWD\"" -DCUZK_BINARY_DIR="\"$out\"" \
  -c tests/gpu/gpu_device_test.cpp -o "$out/test.o" & pids+=($!)
for p in "${pids[@]}"; do wait "$p"; done
objs=$(ls "$out"/obj/*.o | grep -v cuzk_gpu_bench)
host=("$libs/libcuzk_groth16.a" "$libs/libcuzk_math.a" -lpthread -ldl -lrt)
nvcc -o "$out/bin/cuzk_gpu_bench" "$out/obj/cuzk_gpu_bench.cpp.o" $objs "${host[@]}"
nvcc -o "$out/bin/cuzk_gpu_tests" "$out/test.o" $objs "$libs/libgtest_main.a" "$libs/libgtest.a" "${host[@]}"
if [ -f "$libs/gpu_worker.o" ]; then
  cp -n "$base"/bin/* "$out/bin/" 2>/dev/null || true
  cp -n "$base"/lib/* "$out/lib/" 2>/dev/null || true
  toml=$(basename "$(ls "$libs"/libtomlplusplus.so* | head -1)")
  nvcc -o "$out/bin/cuzk-gpu-worker" "$libs/gpu_worker.o" $objs "$libs/libcuzk_config.a" "$libs/libcuzk_shm.a" \
    "$libs/libcuzk_groth16.a" "$libs/libcuzk_math.a" -L"$libs" -l:"$toml" -lpthread -ldl -lrt
fi
echo "built $out"
