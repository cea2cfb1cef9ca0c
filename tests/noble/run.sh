#!/usr/bin/env bash
# ctest driver for the @noble/curves cross-check (see noble.cmake).
#   run.sh gen  SRC VECTORS          write fresh vectors with node (seed from CUZK_NOBLE_SEED, else
#                                    CUZK_TEST_SEED, else random; the log and the file name it)
#   run.sh test VECTORS TESTBIN      run the Noble* GoogleTests on them
# Exit 77 means skipped (node or @noble/curves missing); under CI (CI set) that is a failure instead,
# so that a broken npm install never passes as "skipped".
set -euo pipefail
SKIP=77
skip_or_fail() {
  if [ -n "${CI:-}" ]; then echo "noble: $1" >&2; exit 1; fi
  echo "noble: skipped: $1"
  exit $SKIP
}
mode=$1
case "$mode" in
  gen)
    src=$2 out=$3
    rm -f "$out"
    command -v node >/dev/null 2>&1 || skip_or_fail "node is not installed"
    [ -d "$src/node_modules/@noble/curves" ] || skip_or_fail "@noble/curves missing under $src/node_modules (run npm ci in $src)"
    seed="${CUZK_NOBLE_SEED:-${CUZK_TEST_SEED:-}}"
    exec node "$src/tests/noble/gen_vectors.mjs" "$out" ${seed:+"$seed"}
    ;;
  test)
    vectors=$2 bin=$3
    [ -f "$vectors" ] || skip_or_fail "no vectors at $vectors (the noble.vectors fixture was skipped)"
    CUZK_NOBLE_VECTORS="$vectors" exec "$bin" --gtest_filter='Noble.*'
    ;;
  *)
    echo "usage: run.sh gen SRC OUT | run.sh test VECTORS TESTBIN" >&2
    exit 2
    ;;
esac
