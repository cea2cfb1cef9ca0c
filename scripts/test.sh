#!/usr/bin/env bash
# Sets up and builds (scripts/setup.sh), then runs every test: the C++ unit tests and the
# end-to-end checks against snarkjs. Tests labelled gpu run only where an NVIDIA GPU is visible.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

BUILD_DIR="${BUILD_DIR:-build}"
# Two slots a core: a test that computes most of its time holds two (PROCESSORS 2: the e2e tests,
# the fuzz runs), one that mostly waits on its daemons holds one, so that the waiting ones overlap;
# the fuzz build runs at the lowest priority in the time they leave (tests/fuzz.cmake), in one slot
# more.
args=(--test-dir "$BUILD_DIR" --output-on-failure -j "${CTEST_JOBS:-$((2 * $(nproc) + 1))}")
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "[test] no GPU visible: skipping tests labelled gpu"
  args+=(--label-exclude gpu)
fi
ctest "${args[@]}" "$@"
