#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, -fsanitize=fuzzer,address,undefined) and runs them.
#
#   scripts/fuzz.sh [build|seed|TARGET|all] [SECONDS]
#
#   build     configure and build BUILD_DIR (default build-fuzz), then write the seed corpora
#   seed      write the seed corpora only (BUILD_DIR/seeds/<target>)
#   TARGET    build, then fuzz one target for SECONDS (default 60): zkey wtns r1cs config http submit spool
#             msg verify_json inputs
#   all       the same for every target, one after the other (default)
#
# Each run reads BUILD_DIR/seeds/<target> and fuzz/corpus/<target>, grows BUILD_DIR/corpus/<target>
# (kept between runs) and writes any crashing input to BUILD_DIR/artifacts/<target>/. One input
# taking longer than FUZZ_TIMEOUT seconds (default 1) counts as a hang. It exits non-zero on the
# first target that finds something; replay an input with BUILD_DIR/bin/fuzz_<target> FILE.
# Environment: BUILD_DIR, FUZZ_TIMEOUT, FUZZ_NO_BUILD=1 (use the build as it is), FUZZ_ARGS (extra
# libFuzzer flags, e.g. -runs=10000000), JOBS (build parallelism, default 2).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$(pwd)"

TARGETS=(zkey wtns r1cs config http submit spool msg verify_json inputs)
BUILD_DIR="${BUILD_DIR:-build-fuzz}"
case "$BUILD_DIR" in /*) ;; *) BUILD_DIR="$ROOT/$BUILD_DIR" ;; esac
what="${1:-all}"
seconds="${2:-60}"
say() { echo "[fuzz] $*"; }

build() {
  if ! command -v clang++ >/dev/null 2>&1; then
    echo "[fuzz] clang++ not found (Debian: apt-get install clang libclang-rt-dev)" >&2
    exit 1
  fi
  if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
    say "configuring $BUILD_DIR (clang, libFuzzer, ASan + UBSan)"
    launcher=()
    command -v ccache >/dev/null 2>&1 && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
    generator=()
    command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
    CC=clang CXX=clang++ cmake -S "$ROOT" -B "$BUILD_DIR" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCUZK_FUZZ=ON -DCUZK_TESTS=OFF -DCUZK_BENCH=OFF -DCUZK_CUDA=OFF "${launcher[@]}" >/dev/null
  fi
  say "building the fuzz targets in $BUILD_DIR"
  cmake --build "$BUILD_DIR" -j "${JOBS:-2}" --target cuzk_fuzzers >"$BUILD_DIR/fuzz-build.log" 2>&1 || {
    tail -n 40 "$BUILD_DIR/fuzz-build.log" >&2
    exit 1
  }
}

# Seeds from the repository's real files and from the product's own writers (fuzz_make_seeds);
# the small hand-made ones in fuzz/corpus/<target> are read in place.
seed() {
  local s="$BUILD_DIR/seeds"
  rm -rf "$s"
  mkdir -p "$s"
  for t in "${TARGETS[@]}"; do mkdir -p "$s/$t"; done
  "$BUILD_DIR/bin/fuzz_make_seeds" "$s" >/dev/null
  cp examples/merkle/merkle.wtns "$s/wtns/merkle.wtns"
  cp config/cuzk.example.toml "$s/config/example.toml"
  for f in examples/merkle/proof.json examples/merkle/public.json examples/merkle/verification_key.json \
           tests/fixtures/reference/merkle_known_toxic/verification_key.json; do
    cp "$f" "$s/verify_json/$(echo "$f" | tr / _)"
  done
  cp examples/merkle/merkle.json "$s/inputs/merkle.json"
  cp examples/sector/input_16.json "$s/inputs/sector_16.json"
  # Circuit inputs are what inline submissions carry too.
  for f in "$s"/inputs/*.json fuzz/corpus/inputs/*.json; do
    printf '{"circuit": "g", "inputs": [%s]}' "$(cat "$f")" >"$s/submit/inputs_$(basename "$f")"
  done
  # Spooled bodies are submission bodies.
  cp "$s"/submit/* fuzz/corpus/submit/* "$s/spool/"
  say "seed corpora in $s"
}

dict_of() {
  case "$1" in
    config) echo "$ROOT/fuzz/dict/toml.dict" ;;
    http) echo "$ROOT/fuzz/dict/http.dict" ;;
    submit | spool | verify_json | inputs) echo "$ROOT/fuzz/dict/json.dict" ;;
  esac
}

run() {
  local t="$1" corpus="$BUILD_DIR/corpus/$1" art="$BUILD_DIR/artifacts/$1"
  mkdir -p "$corpus" "$art"
  local dirs=("$corpus" "$BUILD_DIR/seeds/$t")
  [ -d "fuzz/corpus/$t" ] && dirs+=("$ROOT/fuzz/corpus/$t")
  local args=(-max_total_time="$seconds" -timeout="${FUZZ_TIMEOUT:-1}" -rss_limit_mb=2048 -print_final_stats=1
              -artifact_prefix="$art/")
  local d
  d="$(dict_of "$t")"
  [ -n "$d" ] && args+=(-dict="$d")
  say "$t: ${seconds}s over ${dirs[*]}"
  # shellcheck disable=SC2086
  ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}" UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}" \
    "$BUILD_DIR/bin/fuzz_$t" "${args[@]}" ${FUZZ_ARGS:-} "${dirs[@]}"
}

case "$what" in
  build) build; seed ;;
  seed) seed ;;
  all | zkey | wtns | r1cs | config | http | submit | spool | msg | verify_json | inputs)
    if [ "${FUZZ_NO_BUILD:-0}" != 1 ]; then build; seed; fi
    [ -d "$BUILD_DIR/seeds" ] || seed
    if [ "$what" = all ]; then
      for t in "${TARGETS[@]}"; do run "$t"; done
    else
      run "$what"
    fi
    ;;
  *)
    echo "usage: scripts/fuzz.sh [build|seed|zkey|wtns|r1cs|config|http|submit|spool|msg|verify_json|inputs|all] [seconds]" >&2
    exit 2
    ;;
esac
