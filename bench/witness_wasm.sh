#!/usr/bin/env bash
# One circom circuit's witness on one input, five ways: snarkjs's witness calculator (the .wasm under
# node, in process), circom's .wasm compiled natively by cuzk, circom's C++ generator compiled by
# cuzk, and the compiled program traced on each of those two; and what each artefact took to build
# (`cuzk witness build` from fresh caches, then the program's trace and checks). Every witness is
# compared with snarkjs's, byte for byte. Prints one Markdown row for docs/PERFORMANCE.md, then the
# whole commands timed (`cuzk witness calc`, each engine, against `snarkjs wtns calculate`).
#
# Usage: bash bench/witness_wasm.sh <circom out dir> <name> <input.json> [runs]
#   (<out dir>/<name>_js/<name>.wasm and <out dir>/<name>_cpp/, as `circom --wasm --c` writes them)
# Environment: BUILD_DIR (build), WORK (<build>/bench-witness-wasm/<name>)
set -euo pipefail
cd "$(dirname "$0")/.."
out="$(realpath "$1")" name="$2" input="$(realpath "$3")" runs="${4:-5}"
BUILD_DIR="${BUILD_DIR:-build}"
CUZK="$(realpath "$BUILD_DIR/bin/cuzk")"
WORK="${WORK:-$BUILD_DIR/bench-witness-wasm/$name}"
wasm="$out/${name}_js/$name.wasm" cpp="$out/${name}_cpp"
[ -f "$wasm" ] && [ -d "$cpp" ] || { echo "no $wasm or $cpp (circom --wasm --c)" >&2; exit 2; }
rm -rf "$WORK"
mkdir -p "$WORK"

now() { date +%s%N; }
seconds() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", (b - a) / 1e9 }'; }  # seconds since $1 (now)
snark_ms=$(node bench/wtns_calc_time.cjs "$wasm" "$input" "$runs")
t0=$(now)
node node_modules/snarkjs/build/cli.cjs wtns calculate "$wasm" "$input" "$WORK/snarkjs.wtns"
snark_cmd=$(seconds "$t0")

# build KIND SOURCE: the artefact from fresh caches, its build and program times, and both engines'
# medians (`cuzk witness bench`, which compares them); KIND's witness checked against snarkjs's.
build() {
  local kind="$1" src="$2" t0
  t0=$(now)
  CUZK_CACHE_DIR="$WORK/cache-$kind" "$CUZK" -q witness build "$src" "$WORK/$kind"
  eval "${kind}_build=$(seconds "$t0")"
  "$CUZK" witness bench "$WORK/$kind" "$input" --runs "$runs" >"$WORK/$kind.bench" 2>&1
  eval "${kind}_native=$(awk '/^native:/ {print $2}' "$WORK/$kind.bench")"
  eval "${kind}_program=$(awk '/^program: [0-9.]+ ms/ {print $2}' "$WORK/$kind.bench")"
  eval "${kind}_trace=$(grep -o 'opened or built in [0-9]* ms' "$WORK/$kind.bench" | awk '{print $5 / 1000}')"
  "$CUZK" -q witness calc "$WORK/$kind" "$input" "$WORK/$kind.wtns"
  cmp "$WORK/$kind.wtns" "$WORK/snarkjs.wtns" || { echo "$kind: the witness differs from snarkjs's" >&2; exit 1; }
}
build wasm "$wasm"
build cpp "$cpp"
printf '| %s | %s ms | %s ms | %s ms | %s ms | %s ms | %.0f s + %.1f s | %.0f s + %.1f s |\n' \
  "$name" "$snark_ms" "$wasm_native" "$cpp_native" "$wasm_program" "$cpp_program" \
  "$wasm_build" "$wasm_trace" "$cpp_build" "$cpp_trace"

# The whole commands, as a user runs them (after a warm-up run, which also stores the program's
# layout): the median of `runs` each.
median_ms() {
  local t0 all=()
  "$@" >/dev/null 2>&1
  for ((i = 0; i < runs; i++)); do
    t0=$(now)
    "$@" >/dev/null 2>&1
    all+=($((($(now) - t0) / 1000000)))
  done
  printf '%s\n' "${all[@]}" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}
for engine in program native; do
  for kind in wasm cpp; do
    echo "cuzk witness calc --engine $engine ($kind): $(median_ms "$CUZK" -q witness calc --engine "$engine" "$WORK/$kind" "$input" "$WORK/cmd.wtns") ms"
  done
done
echo "snarkjs wtns calculate: $snark_cmd s"
