#!/usr/bin/env bash
# Sets up and builds (scripts/setup.sh), then runs every test: the C++ unit tests and the
# end-to-end checks against snarkjs. Tests labelled gpu run only where an NVIDIA GPU is visible.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

BUILD_DIR="${BUILD_DIR:-build}"
args=(--test-dir "$BUILD_DIR" --output-on-failure -j "${CTEST_JOBS:-2}")
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "[test] no GPU visible: skipping tests labelled gpu"
  args+=(--label-exclude gpu)
fi
ctest "${args[@]}" "$@"
