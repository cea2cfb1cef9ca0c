#!/usr/bin/env bash
# Compiles one size of the sector circuit with circom (BLS12-381, --O2) into
# examples/sector/build/sector_<SIZE>/: the .r1cs, the .sym, the wasm witness calculator
# (sector_<SIZE>_js/) and circom's C++ witness generator (sector_<SIZE>_cpp/), which it then builds
# with the generated Makefile (-O3). circom's time and peak memory go to circom.time (GNU time -v).
#
#   examples/sector/build.sh SIZE [--no-make]      SIZE: 16, 18, 20, ... (examples/sector/sector_SIZE.circom)
set -euo pipefail
size="${1:?usage: build.sh SIZE [--no-make]}"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
name="sector_$size"
[ -f "$here/$name.circom" ] || { echo "build.sh: no $here/$name.circom" >&2; exit 2; }
[ -f "$root/node_modules/circom2/cli.js" ] || { echo "build.sh: run npm ci --no-audit --no-fund in $root first" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "build.sh: GNU time (/usr/bin/time) is needed for the memory figures" >&2; exit 2; }

out="$here/build/$name"
rm -rf "$out"
mkdir -p "$out"
# circom2 runs as WebAssembly (WASI) and sees only paths relative to its working folder: run it from
# the repository root with relative paths.
cd "$root"
rel="$(realpath --relative-to=. "$out")"
echo "== circom $name.circom -> $rel"
/usr/bin/time -v -o "$out/circom.time" \
  node node_modules/circom2/cli.js "examples/sector/$name.circom" --prime bls12381 --O2 \
  --r1cs --c --wasm --sym -l node_modules -o "$rel" 2>&1 | sed 's/\x1b\[[0-9;]*m//g' | tee "$out/circom.log"
grep -q "Written successfully: $rel/$name.r1cs" "$out/circom.log" || { echo "build.sh: circom failed" >&2; exit 1; }
awk -F': ' '/Elapsed \(wall clock\)/ { w = $2 } /User time/ { u = $2 } /Maximum resident/ { m = $2 }
  END { printf "circom: wall %s, user %s s, peak RSS %.2f GiB\n", w, u, m / 1048576 }' "$out/circom.time"

if [ "${2:-}" != "--no-make" ]; then
  echo "== make -C $rel/${name}_cpp"
  /usr/bin/time -f "make: wall %e s, peak RSS %M KiB" make -s -C "$out/${name}_cpp" 2>&1 | grep -v "^make\[" || true
  [ -x "$out/${name}_cpp/$name" ] || { echo "build.sh: the witness generator did not build" >&2; exit 1; }
fi
echo "built $out"
