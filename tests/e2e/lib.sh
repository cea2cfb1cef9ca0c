# Shared helpers for the end-to-end tests. Sourced by every script in this folder.
# ctest passes CUZK_SRC (source tree), CUZK_BIN (the cuzk binary) and E2E_WORK (a folder under the
# build tree that caches the ceremony and the compiled circuits between runs).
set -euo pipefail

: "${CUZK_SRC:?CUZK_SRC must name the source tree}"
: "${CUZK_BIN:?CUZK_BIN must name the cuzk binary}"
: "${E2E_WORK:?E2E_WORK must name the e2e work folder}"

E2E_DIR="$CUZK_SRC/tests/e2e"
NODE_MODULES="$CUZK_SRC/node_modules"
SNARKJS_CLI="$NODE_MODULES/snarkjs/build/cli.cjs"
CIRCOM_CLI="$NODE_MODULES/circom2/cli.js"
# The curve of the fixtures, by circom's and snarkjs's name: bls12381 (default) or bn128. BN254's
# fixtures live in folders of their own (".bn128" after circuits, cases, runs and ptau).
export E2E_CURVE="${E2E_CURVE:-bls12381}"
case "$E2E_CURVE" in
  bls12381) CURVE_SUFFIX=""; PTAU_CURVE="bls12-381" ;;
  bn128) CURVE_SUFFIX=".bn128"; PTAU_CURVE="bn128" ;;
  *) echo "[e2e] FAIL: unknown E2E_CURVE $E2E_CURVE (bls12381 or bn128)" >&2; exit 1 ;;
esac
# The power of the shared powers-of-tau file: 2^10 covers every test circuit (largest domain 1024).
PTAU_POWER="${E2E_PTAU_POWER:-10}"
PTAU_FILE="$E2E_WORK/ptau$CURVE_SUFFIX/pot${PTAU_POWER}_final.ptau"
# ctest's SKIP_RETURN_CODE.
SKIP=77

log() { echo "[e2e] $*"; }
die() { echo "[e2e] FAIL: $*" >&2; exit 1; }

# The npm tools are a prerequisite (npm ci). Without them a developer build skips the e2e tests;
# under CI that is a failure, so a broken install never passes as "all skipped".
require_tools() {
  command -v node >/dev/null 2>&1 || { [ -n "${CI:-}" ] && die "node is not installed"; log "skipped: node is not installed"; exit $SKIP; }
  if [ ! -f "$SNARKJS_CLI" ] || [ ! -f "$CIRCOM_CLI" ]; then
    [ -n "${CI:-}" ] && die "snarkjs/circom2 missing under $NODE_MODULES (run npm ci in $CUZK_SRC)"
    log "skipped: snarkjs/circom2 missing under $NODE_MODULES (run npm ci in $CUZK_SRC)"
    exit $SKIP
  fi
  [ -x "$CUZK_BIN" ] || die "cuzk binary not found at $CUZK_BIN (build the 'cuzk' target)"
}

snarkjs() { node "$SNARKJS_CLI" "$@"; }

# wasm2c (Debian's wabt) compiles circom's .wasm: without it a developer build skips the wasm tests;
# under CI that is a failure.
require_wasm2c() {
  command -v wasm2c >/dev/null 2>&1 && return 0
  [ -n "${CI:-}" ] && die "wasm2c is not installed (Debian's wabt: scripts/setup.sh)"
  log "skipped: wasm2c is not installed (Debian's wabt: scripts/setup.sh)"
  exit $SKIP
}

# Values at the edges of E2E_CURVE's scalar field: P, P_MINUS_1, and BIG = 2^200.
field_values() {
  case "$E2E_CURVE" in
    bls12381) P="52435875175126190479447740508185965837690552500527637822603658699938581184513" ;;
    bn128) P="21888242871839275222246405745257275088548364400416034343698204186575808495617" ;;
  esac
  P_MINUS_1="$(node -e "console.log((BigInt('$P') - 1n).toString())")"
  BIG="$(node -e "console.log((1n << 200n).toString())")"
}

# Runs a chatty command with its output in a log file; shows the log only when it fails.
quiet() {
  local logfile="$1"; shift
  if ! "$@" >"$logfile" 2>&1; then
    echo "[e2e] command failed: $*" >&2
    tail -n 40 "$logfile" >&2
    return 1
  fi
}

# Runs a command and checks its exit status against a list of accepted ones ("0", "1", "1 2", "nonzero").
# Output goes to "$logfile"; the last lines are shown on a mismatch.
expect_rc() {
  local want="$1" logfile="$2"; shift 2
  local rc=0
  "$@" >"$logfile" 2>&1 || rc=$?
  local ok=0
  if [ "$want" = "nonzero" ]; then
    # A signal (rc >= 128) is a crash, never an acceptable rejection.
    [ "$rc" -ne 0 ] && [ "$rc" -lt 128 ] && ok=1
  else
    for w in $want; do [ "$rc" -eq "$w" ] && ok=1; done
  fi
  if [ "$ok" -ne 1 ]; then
    echo "[e2e] expected exit status [$want], got $rc from: $*" >&2
    tail -n 40 "$logfile" >&2
    return 1
  fi
  local shown="$(basename "$1") ${*:2}"
  log "ok (exit $rc): ${shown//"$E2E_WORK"/\$E2E_WORK}"
}

# Deep JSON equality (object key order and whitespace ignored); prints the first difference.
json_equal() { node "$E2E_DIR/json_tool.mjs" equal "$1" "$2"; }

# Cache stamps: a folder is reused when its .stamp holds the same key as the one computed now.
stamp_ok() { [ -f "$1/.stamp" ] && [ "$(cat "$1/.stamp")" = "$2" ]; }
stamp_write() { printf '%s' "$2" >"$1/.stamp"; }

tool_versions() {
  node -e 'for (const p of ["snarkjs","circom2","circomlib"]) process.stdout.write(p + "@" + require(process.argv[1] + "/" + p + "/package.json").version + " ")' "$NODE_MODULES"
}

# Every cached artefact of a circuit depends on its sources, the tool versions and the ceremony.
circuit_key() {
  local name="$1"
  {
    echo "circuit-v2 $(tool_versions) ptau=$PTAU_POWER"
    cat "$PTAU_FILE.stamp" 2>/dev/null || true
    cat "$E2E_DIR/circuits/$name.circom" "$E2E_DIR"/circuits/lib/*.circom
  } | sha256sum | cut -d' ' -f1
}

circuit_dir() { echo "$E2E_WORK/circuits$CURVE_SUFFIX/$1"; }
# circom's C++ witness generator of a circuit fixture (its .sym lies beside it).
generator_dir() { echo "$(circuit_dir "$1")/$1_cpp"; }
# Compiled generators are cached here by `cuzk witness`, shared by the tests (the cache is locked while
# one is built).
export CUZK_CACHE_DIR="$E2E_WORK/cache"
# own_cache DIR: a generator cache of the test's own (fresh artefacts, built by its first inputs)
# whose runtime objects are the shared cache's: circom's runtime with cuzk's driver and tracer, and
# wasm2c's runtime with cuzk's wasm driver, are the same for every circuit on a prime and kept under
# <cache>/witness/runtime/<key>, keyed by their sources, flags and tools, so that any cache may
# link them. Only witness_runtime.sh, which tests that cache, starts from an empty one.
own_cache() {
  export CUZK_CACHE_DIR="$1"
  mkdir -p "$E2E_WORK/cache/witness/runtime" "$CUZK_CACHE_DIR/witness"
  ln -sfn "$E2E_WORK/cache/witness/runtime" "$CUZK_CACHE_DIR/witness/runtime"
}
case_dir() { echo "$E2E_WORK/cases$CURVE_SUFFIX/$1"; }
# A case's circuit inputs: inputs/<case>.<curve>.json where the values depend on the field (a
# Poseidon root, values near r), else inputs/<case>.json.
case_input() {
  local f="$E2E_DIR/inputs/$1.$E2E_CURVE.json"
  [ -f "$f" ] || f="$E2E_DIR/inputs/$1.json"
  echo "$f"
}

# A fresh scratch folder for one test, so that tests running in parallel never share outputs.
scratch_dir() {
  local d="$E2E_WORK/runs$CURVE_SUFFIX/$1"
  rm -rf "$d"
  mkdir -p "$d"
  echo "$d"
}

# Fails unless the circuit and case fixtures exist (a missing fixture means its setup test failed).
require_case() {
  local circuit="$1" case="$2"
  [ -f "$(circuit_dir "$circuit")/.stamp" ] || die "circuit fixture '$circuit' is missing (its e2e setup test failed?)"
  [ -f "$(case_dir "$case")/.stamp" ] || die "witness fixture '$case' is missing (its e2e setup test failed?)"
}
