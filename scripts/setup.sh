#!/usr/bin/env bash
# Prepares a Debian 12 machine and builds cuzk: Debian packages, the npm tools used by the
# interoperability tests (snarkjs, circom2), then a CMake release build in build/.
# Safe to re-run: each step is skipped when it is already done.
# Environment: BUILD_DIR (default build), CUZK_CMAKE_ARGS (extra configure flags), JOBS (default nproc).
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD_DIR="${BUILD_DIR:-build}"
JOBS="${JOBS:-$(nproc)}"
say() { echo "[setup] $*"; }

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

# 1. Debian packages. node/npm may come from elsewhere (e.g. NodeSource, whose nodejs conflicts with
#    Debian's npm package), so they are taken from Debian only when node is missing altogether.
# nasm and libgmp-dev compile circom's C++ witness generators (`cuzk witness build`, and the daemon's
# witness_generator), and wabt's wasm2c translates circom's .wasm to C for the same;
# libxxhash-dev hashes their sources for the generator cache. clang and
# libclang-rt-dev (libFuzzer and the sanitizer runtimes, only a recommendation of clang) build the
# fuzz targets that the tests labelled fuzz run (scripts/fuzz.sh).
pkgs=(cmake g++ make pkg-config libcli11-dev nlohmann-json3-dev libgtest-dev libgmock-dev libbenchmark-dev xz-utils
      nasm libgmp-dev wabt libxxhash-dev clang libclang-rt-dev
      libtomlplusplus-dev libspdlog-dev libuv1-dev libboost-dev libhttp-parser-dev libsqlite3-dev libpq-dev libsystemd-dev
      systemd postgresql)
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  if command -v node >/dev/null 2>&1; then
    echo "[setup] node is installed but npm is not; install npm alongside your node" >&2
    exit 1
  fi
  pkgs+=(nodejs npm)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  if [ -n "$SUDO" ] && ! command -v sudo >/dev/null 2>&1; then
    echo "[setup] not root and no sudo: as root, apt-get install ${missing[*]}" >&2
    exit 1
  fi
  say "apt-get install ${missing[*]}"
  log="$(mktemp)"
  if ! { $SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    echo "[setup] apt-get failed" >&2
    exit 1
  fi
  rm -f "$log"
else
  say "Debian packages present"
fi

# 2. npm tools, exactly as pinned in package-lock.json. Skipped when node_modules matches the lockfile.
lock_sum="$(sha256sum package-lock.json | cut -d' ' -f1)"
if [ -f node_modules/.cuzk-lock.sha256 ] && [ "$(cat node_modules/.cuzk-lock.sha256)" = "$lock_sum" ]; then
  say "node_modules up to date"
else
  say "npm ci (node $(node --version), npm $(npm --version))"
  npm ci --no-audit --no-fund --loglevel=error
  echo "$lock_sum" >node_modules/.cuzk-lock.sha256
fi

# 3. Build.
if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
  say "configuring $BUILD_DIR"
fi
# The CUDA backend is compiled wherever CUDA's compiler is installed (CI included, which has no GPU:
# there the kernels must still build); CUZK_CUDA=OFF opts out.
cuda_args=()
NVCC="${NVCC:-/usr/local/cuda/bin/nvcc}"
if [ "${CUZK_CUDA:-auto}" != OFF ] && [ -x "$NVCC" ]; then
  say "CUDA compiler found: $NVCC (building the cuda backend)"
  cuda_args=(-DCUZK_CUDA=ON -DCMAKE_CUDA_COMPILER="$NVCC")
fi
# shellcheck disable=SC2086
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release "${cuda_args[@]}" ${CUZK_CMAKE_ARGS:-} >/dev/null
say "building in $BUILD_DIR with $JOBS jobs"
cmake --build "$BUILD_DIR" -j "$JOBS"
say "done: $BUILD_DIR/bin/cuzk"
