#!/usr/bin/env bash
# Makes a relocatable bundle of the CUDA build for a GPU host that has no build tools or packages:
# the executables plus every shared library they need that is not part of the C runtime or the
# NVIDIA driver (cudart is linked statically), and run wrappers that point the loader at them.
#
#   scripts/bundle.sh [BUILD_DIR] [OUT_DIR]     (defaults: build-cuda, bundle)
#
# On the GPU host:  OUT_DIR/run cuzk_gpu_tests ...   or   OUT_DIR/run cuzk prove --backend cuda ...
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$here/build-cuda}"
out="${2:-$here/bundle}"
bins=(cuzk cuzk_gpu_tests cuzk_gpu_bench cuzk_tests cuzk-supervisor cuzk-synth-worker cuzk-gpu-worker)

[ -d "$build/bin" ] || { echo "error: $build/bin not found: build with -DCUZK_CUDA=ON first" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib"
found=0
for b in "${bins[@]}"; do
  [ -x "$build/bin/$b" ] || continue
  cp "$build/bin/$b" "$out/bin/"
  found=1
  # Libraries the loader resolves for this binary, minus the C runtime and the driver, which the
  # GPU host provides (and must, in the driver's case, match its kernel module).
  ldd "$build/bin/$b" | awk '/=> \// {print $3}' | while read -r lib; do
    case "$(basename "$lib")" in
      libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*|libcuda.so*|libnvidia*) ;;
      *) cp -Ln "$lib" "$out/lib/" ;;
    esac
  done
done
[ "$found" = 1 ] || { echo "error: none of ${bins[*]} found in $build/bin" >&2; exit 1; }
cat >"$out/run" <<'RUN'
#!/usr/bin/env bash
# Runs one bundled executable with the bundled libraries: run <name> [args...]
here="$(cd "$(dirname "$0")" && pwd)"
name="$1"; shift
export LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
exec "$here/bin/$name" "$@"
RUN
chmod +x "$out/run"
# Leave a record of what went in and what it was built from.
{
  echo "built $(date -u +%FT%TZ) from $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  for f in "$out"/bin/* "$out"/lib/*; do [ -f "$f" ] && echo "$(basename "$f") $(stat -c %s "$f")"; done
} >"$out/MANIFEST"
du -sh "$out" | awk '{print "bundle: " $2 " (" $1 ")"}'
