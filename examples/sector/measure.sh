#!/usr/bin/env bash
# Witness generation of one built size (build.sh SIZE first): circom's native generator against
# snarkjs's wasm calculator on the same input, and whether the two .wtns files are byte-identical.
# Each generator runs once to warm the page cache, then RUNS (default 3) timed runs; the fastest run's
# wall time, CPU time (user + system) and peak RSS are reported. Prints one markdown table row.
#
#   examples/sector/measure.sh SIZE [SEED] [--check]    --check: also snarkjs wtns check against the r1cs
set -euo pipefail
size="${1:?usage: measure.sh SIZE [SEED] [--check]}"
seed="${2:-1}"
check="${3:-}"
runs="${RUNS:-3}"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
name="sector_$size"
dir="$here/build/$name"
native="$dir/${name}_cpp/$name"
wasm="$dir/${name}_js/$name.wasm"
snarkjs=("node" "$root/node_modules/snarkjs/build/cli.cjs")
if [ ! -x "$native" ] || [ ! -f "$wasm" ]; then echo "measure.sh: build it first: examples/sector/build.sh $size" >&2; exit 2; fi

in="$dir/in_$seed.json"
node "$here/gen_input.mjs" --seed "$seed" --circuit "$here/$name.circom" --out "$in"

# best CMD...: runs CMD once untimed, then $runs times; prints "wall cpu rss_kib" of the fastest run.
best() {
  "$@" >/dev/null 2>&1 || { echo "measure.sh: failed: $*" >&2; "$@" >&2; exit 1; }
  local t="$dir/time.$$" i
  for ((i = 0; i < runs; i++)); do
    /usr/bin/time -f "%e %U %S %M" -o "$t" "$@" >/dev/null 2>&1
    cat "$t"
  done | awk '{ cpu = $2 + $3; if (NR == 1 || $1 < w) { w = $1; c = cpu; m = $4 } } END { printf "%.2f %.2f %d\n", w, c, m }'
  rm -f "$t"
}

read -r nw nc nm < <(best "$native" "$in" "$dir/native.wtns")
read -r ww wc wm < <(best "${snarkjs[@]}" wtns calculate "$wasm" "$in" "$dir/wasm.wtns")
if cmp -s "$dir/native.wtns" "$dir/wasm.wtns"; then same=yes; else same=NO; fi
node "$here/check_labels.mjs" "$in" "$dir/$name.sym" "$dir/native.wtns" >&2
if [ "$check" = "--check" ]; then
  "${snarkjs[@]}" wtns check "$dir/$name.r1cs" "$dir/native.wtns" 2>&1 | grep -q "WITNESS IS CORRECT" ||
    { echo "measure.sh: snarkjs wtns check rejects the witness" >&2; exit 1; }
  echo "snarkjs wtns check: the witness satisfies $name.r1cs" >&2
fi

log="$dir/circom.log"
field() { grep -m1 "$1" "$log" | sed 's/.*: *//; s/ .*//'; }
constraints=$(( $(field "non-linear constraints") + $(field "^linear constraints") ))
wires=$(field "^wires")
params=$(grep -o 'SectorProof([0-9, ]*)' "$here/$name.circom" | tr -d ' ')
ctime=$(awk -F': ' '/Elapsed \(wall clock\)/ { w = $2 } /User time/ { u = $2 } /Maximum resident/ { m = $2 }
  END { printf "%s wall, %.0f s CPU, %.2f GiB", w, u, m / 1048576 }' "$dir/circom.time")
printf '| %s | %s | %s | %s | %s | %s s (%s s CPU, %d MiB) | %s s (%s s CPU, %d MiB) | %s |\n' \
  "$size" "$params" "$constraints" "$wires" "$ctime" "$nw" "$nc" $((nm / 1024)) "$ww" "$wc" $((wm / 1024)) "$same"
