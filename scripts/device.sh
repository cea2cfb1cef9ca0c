#!/usr/bin/env bash
# The GPU-host workflow: what is built here, carried to a GPU host, run there, and brought back.
#
# The GPU host has nvcc, CMake and 16 cores but none of cuzk's Debian packages and no node. So
# binaries (or the host-only libraries the CUDA parts are linked with) travel as one xz'd tarball,
# .devbundle/bundle.tar.xz, together with any payload under .devbundle/; the host unpacks it, runs,
# and leaves its logs in $OUT (./gpu-out when OUT is unset), at most 8 files two folders deep.
# Proofs come back as proofs.tgz and snarkjs verifies them here.
#
#   here    scripts/device.sh bundle [--build DIR] [--devlibs] [--no-strip] [BIN...]
#   GPU     scripts/device.sh devbuild
#   GPU     scripts/device.sh check [--sanitize] [GTEST_FILTER]
#   GPU     scripts/device.sh bench [--base TARBALL] [prove LOG2 | CUZK_BENCH_ARGS...]
#   here    scripts/device.sh e2e payload [--e2e-work DIR] [--gen LOG2]
#   GPU     scripts/device.sh e2e prove
#   here    scripts/device.sh e2e verify proofs.tgz
#   GPU     scripts/device.sh daemon [LOG2 [CASE...]]
#   GPU     scripts/device.sh synth R1CS GENERATOR INPUTS_DIR [WORKERS] [PARTITIONS]
#   GPU     scripts/device.sh synth gen:LOG2 - - [WORKERS] [PARTITIONS]
#   GPU     scripts/device.sh witness ARTEFACT INPUT.json [RUNS]
#   GPU     scripts/device.sh keys [LOG2 [N [PARTITIONS]]]
#   GPU     scripts/device.sh devices [WORKERS] [PARTITIONS]      (two GPUs)
#   GPU     scripts/device.sh clients [LOG2 [CLIENTS [JOBS]]]
#   here    scripts/device.sh soak payload [--e2e-work DIR]
#   GPU     scripts/device.sh soak MINUTES
#   here    bash scripts/soak.sh verify soak-proofs.tgz
#
# `scripts/device.sh help` describes each subcommand.
set -uo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DEV="$ROOT/.devbundle"               # carried to the GPU host (ignored by git)
TARBALL="$DEV/bundle.tar.xz"
OUT="${OUT:-$ROOT/gpu-out}"
B="${CUZK_BUNDLE_DIR:-/tmp/cuzk-bundle}"  # the unpacked bundle on the GPU host
CUDA_BINS=(cuzk_gpu_tests cuzk-bench)
BACKEND="${CUZK_DEVICE_BACKEND:-cuda}"    # cpu: a dry run of e2e/daemon/synth/clients without a GPU

SUP=""   # a supervisor this script started
TMPS=()  # scratch folders of this script
cleanup() {
  [ -z "$SUP" ] || kill -9 "$SUP" 2>/dev/null
  [ ${#TMPS[@]} -eq 0 ] || rm -rf "${TMPS[@]}"
}
trap cleanup EXIT
scratch() { mktemp -d "/tmp/cuzk-$1.XXXXXX" || die "mktemp failed"; }

say() { echo "== $*"; }
die() { echo "device.sh: $*" >&2; exit 1; }
since() { echo "$((SECONDS - ${1:-0})) s"; }

usage() {
  cat <<'EOF'
scripts/device.sh SUBCOMMAND ...    (here = this machine, GPU = the GPU host; logs under $OUT there)

bundle [--build DIR] [--devlibs] [--no-strip] [BIN...]                                        here
    Packs BUILD's executables (default: every cuzk executable there) with the shared libraries
    they need, minus the C runtime and the NVIDIA driver, into .devbundle/bundle.tar.xz, with a
    `run` wrapper that points the loader at them. DIR defaults to build-cuda, else build.
    --devlibs adds the third-party headers and libraries `devbuild` builds with (GoogleTest,
    toml++, CLI11, nlohmann/json, xxHash, and the Boost headers that DIR's objects include); a
    CPU-only build is enough then.
devbuild                                                                                      GPU
    Builds cuzk_gpu_tests, cuzk-bench and cuzk-gpu-worker from this tree with CMake
    (-DCUZK_CUDA=ON -DCUZK_GPU_HOST=ON) and the host's nvcc on all its cores, into the bundle.
    Its build folder, build-device, stays while the host does: a later call rebuilds what changed.
    check, bench, e2e, daemon and synth do this first whenever the bundle brought devlibs and no
    CUDA binaries.
check [--sanitize] [GTEST_FILTER]                                                              GPU
    Every gpu test (or the filter), the kernels' register and stack use, and with --sanitize
    compute-sanitizer memcheck and racecheck over a few small tests.
bench [--base TARBALL] [prove LOG2 | CUZK_BENCH_ARGS...]                                       GPU
    Without arguments, every figure of docs/PERFORMANCE.md's GPU table. `prove LOG2` times whole
    proofs at 2^LOG2; anything else is passed to `cuzk bench` as it is. --base TARBALL runs the
    same benchmarks with a second bundle too, alternating, two rounds each (a same-run A/B).
e2e payload [--e2e-work DIR] [--gen LOG2]                                                     here
    Cases no test has seen, into .devbundle/e2e: the e2e circuits with fresh random inputs, the
    Poseidon Merkle circuit with its e2e input (snarkjs computes witnesses and public signals; keys
    from the e2e ceremony in DIR, default build/e2e, made by the e2e tests), and a `cuzk
    gen-circuit LOG2` circuit (default 16, 0 for none) with a fresh seed, keyed on the GPU host.
e2e prove                                                                                      GPU
    `cuzk prove --backend cuda --verify` for every payload case; proofs into $OUT/proofs.tgz.
e2e verify FILE                                                                               here
    snarkjs verifies every proof in a proofs.tgz (from e2e prove or daemon) against its vk.json,
    and each public.json equals snarkjs's where the payload had one.
daemon [LOG2 [CASE...]]                                                                        GPU
    The daemon on the cuda backend with four pinned synthesis workers proves a stream of jobs (8 x 4
    partitions of a gen-circuit 2^LOG2, default 18, and 2 of each payload CASE, default every case
    with a snarkjs key, the last at high priority), with a kill -9 of the GPU worker mid-stream;
    proofs, timeline and waterfall into $OUT (needs `e2e payload`).
synth R1CS GENERATOR INPUTS_DIR [WORKERS] [PARTITIONS]                                         GPU
synth gen:LOG2 - - [WORKERS] [PARTITIONS]
    The daemon proves PARTITIONS (default 24, in jobs of 4) for each count of pinned synthesis
    workers in WORKERS (default "1 2 4 8 12"), then once with OVERLAP_W (default 8) workers whose
    CPU sets include the GPU worker's; one waterfall per run. The first form generates witnesses
    from circuit inputs (a `cuzk witness build` artefact and input JSON files under .devbundle),
    the second submits .wtns files of a gen-circuit. GPU_CORES (default 2) last cores go to the
    GPU worker. ABC (default "cpu"; "cpu gpu" for both) sets synthesis.abc: where a, b, c are
    evaluated; runs with "gpu" are tagged -abcgpu. PER_JOB (default 4) sets the partitions per
    job, SLOTS (default WORKERS + 2) gpu.slots and BATCH (default 32) gpu.batch; SYNTH_CURVE
    (default bls12381, or bn254) the gen-circuit's curve, SYNTH_CORES (default: every core not
    the GPU worker's) how many of the first cores the synthesis workers share.
keys [LOG2 [N [PARTITIONS]]]                                                                   GPU
    More keys than gpu.key_memory holds: N (default 4) gen-circuits of 2^LOG2 (default 22), each
    keyed, and a round-robin stream of PARTITIONS (default 96, jobs of 4, one circuit a job) over
    them, with 4 synthesis workers: every key resident (tables as they fit, then none), a stream
    of c0 alone with c1 added halfway (cuzk circuit add: c0's proof times before and after), then
    gpu.key_memory at half of what the keys take without tables (or of KEYS_BYTES, skipping the
    run without tables), with gpu.key_wait_ms from KEYS_WAIT (default "10000"), and once more with
    gpu.key_host_memory for all of them. Key loads, evictions and waterfalls per run; one proof per
    circuit and run comes back for snarkjs. KEYS_DIR keeps the keys for a next call on a warm host;
    KEYS_RUNS picks runs from "resident add half host" (the default, all of them).
witness ARTEFACT INPUT.json [RUNS]                                                            GPU
    `cuzk witness bench` on one core (WITNESS_CPU, default 0): the compiled witness program
    (built into the artefact first, its build time reported) against circom's native generator,
    RUNS each (default 5), outputs compared; appended to witness.txt.
devices [WORKERS] [PARTITIONS]                                                      GPU (two GPUs)
    synth's 2^22 .wtns stream (DEVICES_LOG2 to change it) with WORKERS synthesis workers (default
    4) and PARTITIONS (default 240): on gpu.devices = [0], then [0, 1], then [0, 1] with a kill -9 of
    gpu1 after a third of the proofs. Each GPU worker has its own GPU_CORES (default 4) of the last
    cores. Every proof of the kill run comes back in proofs.tgz (`e2e verify proofs.tgz` here).
    SYNTH_DEVICES="1 2 2k" is the same for any synth form.
clients [LOG2 [CLIENTS [JOBS]]]                                                               GPU
    What a proving service sees from many clients: a gen-circuit of 2^LOG2 (default 13), the daemon
    (SQLite store) with 4 synthesis workers and synthesis.abc = "gpu", and `cuzk load` with
    single-partition jobs: one client for CLIENTS_LATENCY_JOBS (default 200) jobs, the latency,
    then CLIENTS (default 16) clients for JOBS (default 4000) jobs, the throughput; each after a
    warm-up, each proof checked against the key by the client. Jobs/s, client latency
    p50/p90/p99/max and the daemon's JOB_SUBMIT to JOB_DONE p50/p99 into summary.txt (after the
    config), the timeline and waterfall beside it, four of the latency run's proofs into proofs.tgz.
    CLIENTS_CURVE (default bls12381, or bn254) sets the gen-circuit's curve.
soak payload [--e2e-work DIR]                                                                 here
    The kill-soak's circuits and witnesses (poseidon_merkle, chain_pow2, multiplier from the e2e
    ceremony in DIR, default build/e2e) into .devbundle/soak.
soak MINUTES                                                                                   GPU
    scripts/soak.sh on the cuda backend with the bundle's executables; the proofs come back as
    soak-proofs.tgz, for `bash scripts/soak.sh verify soak-proofs.tgz` here (snarkjs).

CUZK_DEVICE_BACKEND=cpu makes e2e prove, daemon, synth and clients a dry run on the cpu backend,
for a machine without a GPU. The GPU host runs these from the repository root with .devbundle carried:
    scripts/device.sh bundle --build build-cuda cuzk cuzk-bench cuzk_gpu_tests    # here
    scripts/device.sh check && scripts/device.sh bench                  # GPU host
EOF
}

# ---------------------------------------------------------------------------------------------
# Here: the bundle.

# Copies the shared libraries BIN needs into DIR, except the C runtime and the driver, which the
# GPU host provides (the driver must match its kernel module; cudart is linked statically).
copy_libs() {
  local bin="$1" dir="$2" lib
  ldd "$bin" | awk '/=> \// {print $3}' | while read -r lib; do
    case "$(basename "$lib")" in
      libc.so* | libm.so* | libpthread.so* | libdl.so* | librt.so* | ld-linux* | libcuda.so* | libnvidia*) ;;
      *) cp -Ln "$lib" "$dir/" ;;
    esac
  done
}

# What devbuild's CMake finds on the GPU host, laid out as under /usr: the files of the Debian
# packages below (headers, libraries, CMake package files) and, of Boost, every library whose
# headers an object in BUILD included (its depfile says which), whole. Copied with their times: a
# new bundle does not make devbuild compile again what includes them.
DEVLIB_PACKAGES=(nlohmann-json3-dev libcli11-dev libtomlplusplus-dev libtomlplusplus3 libgtest-dev libxxhash-dev)
pack_devlibs() {
  local build="$1" d="$2/usr" p f mods
  for p in "${DEVLIB_PACKAGES[@]}"; do
    dpkg -L "$p" >/dev/null 2>&1 || die "$p is not installed (scripts/setup.sh installs it)"
    while read -r f; do
      [ -f "$f" ] || [ -L "$f" ] || continue  # files and links; folders come with them
      mkdir -p "$d/$(dirname "${f#/usr/}")" && cp -a "$f" "$d/${f#/usr/}" || die "cannot copy $f"
    done < <(dpkg -L "$p" | grep -E '^/usr/(include|lib|share/cmake)/')
  done
  mods="$(find "$build" -name '*.o.d' -exec grep -ho '/usr/include/boost/[^ \\]*' {} + | sed 's|^/usr/include/boost/||; s|/.*||' |
    sort -u)"
  [ -n "$mods" ] || die "no object in $build included Boost: build the project there first"
  mkdir -p "$d/include/boost"
  for f in $mods version.hpp; do cp -a "/usr/include/boost/$f" "$d/include/boost/" || die "cannot copy Boost's $f"; done
}

cmd_bundle() {
  local build="" devlibs=0 strip=1 bins=()
  while [ $# -gt 0 ]; do
    case "$1" in
      --build) build="$2"; shift 2 ;;
      --devlibs) devlibs=1; shift ;;
      --no-strip) strip=0; shift ;;
      -*) die "bundle: unknown option $1" ;;
      *) bins+=("$1"); shift ;;
    esac
  done
  if [ -z "$build" ]; then
    build="$ROOT/build"
    [ -d "$ROOT/build-cuda/bin" ] && build="$ROOT/build-cuda"
  fi
  [ -d "$build/bin" ] || die "$build/bin not found: build first (-DCUZK_CUDA=ON for the kernels, or use --devlibs)"
  [ ${#bins[@]} -gt 0 ] || bins=(cuzk cuzk-supervisor cuzk-synth-worker cuzk-gpu-worker "${CUDA_BINS[@]}")
  local tmp b n=0 name
  tmp="$(scratch bundle)" && TMPS+=("$tmp")
  b="$tmp/bundle"
  mkdir -p "$b/bin" "$b/lib"
  for name in "${bins[@]}"; do
    [ -x "$build/bin/$name" ] || continue
    cp "$build/bin/$name" "$b/bin/"
    copy_libs "$build/bin/$name" "$b/lib"
    n=$((n + 1))
  done
  [ $n -gt 0 ] || die "none of ${bins[*]} in $build/bin"
  [ $strip = 1 ] && strip "$b"/bin/* 2>/dev/null
  [ $devlibs = 1 ] && pack_devlibs "$build" "$b/devlibs"
  cat >"$b/run" <<'RUN'
#!/usr/bin/env bash
# Runs one bundled executable with the bundled libraries: run NAME [ARGS...]
here="$(cd "$(dirname "$0")" && pwd)"
name="$1"; shift
export LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
exec "$here/bin/$name" "$@"
RUN
  chmod +x "$b/run"
  {
    echo "built $(date -u +%FT%TZ) from $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)$(
      git -C "$ROOT" diff --quiet HEAD 2>/dev/null || echo ' (with uncommitted changes)')"
    (cd "$b" && find bin lib devlibs -maxdepth 1 -type f -printf '%p %s\n' 2>/dev/null | sort)
  } >"$b/MANIFEST"
  mkdir -p "$DEV"
  tar -C "$tmp" -cf - bundle | xz -T0 -6 >"$TARBALL" || die "packing failed"
  echo "$TARBALL: $(du -h "$TARBALL" | cut -f1) ($n executables$([ $devlibs = 1 ] && echo ', devlibs'))"
  [ "$(stat -c %s "$TARBALL")" -lt $((60 << 20)) ] || echo "warning: over 60 MiB; a device call carries 64 MiB in all" >&2
}

# ---------------------------------------------------------------------------------------------
# The GPU host: unpacking, building, and what every run shares.

# Unpacks TARBALL into DIR, in place of whatever was there.
unpack() {
  rm -rf "$2"
  mkdir -p "$2" || die "cannot make $2"
  xz -dc "$1" | tar -x -C "$2" --strip-components=1 || die "unpacking $1 failed"
}

# Unpacks .devbundle/bundle.tar.xz into $B (once per tarball), starts $OUT and records the machine.
# CUZK_BUNDLE_DIR names an unpacked bundle to use instead.
open_bundle() {
  mkdir -p "$OUT"
  if [ -z "${CUZK_BUNDLE_DIR:-}" ]; then
    [ -f "$TARBALL" ] || die "no $TARBALL: make it with 'scripts/device.sh bundle' and carry .devbundle"
    local sum
    sum="$(sha256sum "$TARBALL" | cut -c1-16)"
    if [ "$(cat "$B/.tarball" 2>/dev/null)" != "$sum" ]; then
      unpack "$TARBALL" "$B"
      echo "$sum" >"$B/.tarball"
    fi
  fi
  [ -x "$B/run" ] || die "no bundle at $B"
  {
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw,memory.total \
      --format=csv 2>&1
    echo "$(nproc) CPUs; bundle $(head -1 "$B/MANIFEST" 2>/dev/null)"
  } >"$OUT/machine.txt"
  cat "$OUT/machine.txt"
  # A bundle of host libraries is built against this tree's kernels on every call (unchanged
  # objects are kept in the build folder), so an edited kernel never runs as a stale binary.
  if [ -d "$B/devlibs" ] && ! grep -q '^bin/cuzk_gpu_tests ' "$B/MANIFEST"; then devbuild_logged; fi
}
DEVBUILT=0
devbuild_logged() {
  DEVBUILT=1
  devbuild >"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; die "devbuild failed (log: $OUT/build.log)"; }
  tail -1 "$OUT/build.log"
}
run() { "$B/run" "$@"; }

# The tree's files as "SHA256 MTIME PATH" lines: everything but build folders, the bundle, outputs
# and node's packages.
tree_state() {
  local files=()
  mapfile -d '' files < <(cd "$ROOT" && find . \( -path ./.git -o -path './build*' -o -path ./node_modules -o -path ./.devbundle \
    -o -path ./gpu-out \) -prune -o -type f -print0)
  (cd "$ROOT" && paste -d ' ' <(sha256sum "${files[@]}" | cut -c1-64) <(stat -c '%Y %n' "${files[@]}"))
}
# Make decides by times, and a copy of the tree may give every file a new one or an old one: a file
# whose content BUILD's last build saw gets that build's time for it back, any other file the time
# now. What the build is about to see is recorded first, so a build that stops midway leaves a record
# that holds for the objects it made.
settle_times() {
  local rec="$1/tree-state.txt" sum t f
  declare -A was
  if [ -f "$rec" ]; then
    while read -r sum t f; do was["$f"]="$sum $t"; done <"$rec"
    while read -r sum t f; do
      if [ "${was[$f]:-}" = "" ] || [ "${was[$f]%% *}" != "$sum" ]; then
        touch -m "$ROOT/$f"
      elif [ "${was[$f]#* }" != "$t" ]; then
        touch -m -d "@${was[$f]#* }" "$ROOT/$f"
      fi
    done < <(tree_state)
  fi
  mkdir -p "$1" && tree_state >"$rec"
}

# Builds the CUDA executables into $B/bin with CMake (CUZK_GPU_HOST: the CUDA tests, the GPU
# benchmark and the GPU worker, from this tree) and the host's nvcc on all its cores, the
# third-party headers and libraries from $B/devlibs. The build folder stays while the host does.
devbuild() {
  local L="$B/devlibs/usr" dir="${CUZK_DEVBUILD_DIR:-$ROOT/build-device}" t0=$SECONDS cxx rpath t
  [ -d "$L" ] || die "the bundle has no devlibs (make it with 'scripts/device.sh bundle --devlibs')"
  command -v nvcc >/dev/null || die "no nvcc on this host"
  command -v cmake >/dev/null || die "no cmake on this host"
  settle_times "$dir"
  # Linked against the host's own (newer) C++ runtime: an RPATH to it comes before the bundle's
  # lib/ in LD_LIBRARY_PATH, also when the supervisor starts the GPU worker; then the carried
  # libraries' folder (toml++). No other: CMake's own build RPATH ends in an empty entry, the
  # current folder.
  cxx="$(g++ -print-file-name=libstdc++.so.6 2>/dev/null)"
  [[ "$cxx" == /* ]] && rpath="$(dirname "$(readlink -f "$cxx")"):"
  rpath+="$(find "$L" -name 'libtomlplusplus.so*' -printf '%h\n' -quit)"
  cmake -S "$ROOT" -B "$dir" -DCMAKE_BUILD_TYPE=Release -DCUZK_CUDA=ON -DCUZK_GPU_HOST=ON \
    -DCMAKE_CUDA_ARCHITECTURES="${CUZK_CUDA_ARCH:-90}" -DCMAKE_PREFIX_PATH="$L" -DBoost_NO_BOOST_CMAKE=ON -DCMAKE_SKIP_BUILD_RPATH=ON \
    -DCMAKE_EXE_LINKER_FLAGS="-Wl,--disable-new-dtags -Wl,-rpath,$rpath" || return 1
  cmake --build "$dir" -j "${CUZK_DEVBUILD_JOBS:-$(nproc)}" --target "${CUDA_BINS[@]}" cuzk-gpu-worker || return 1
  for t in "${CUDA_BINS[@]}" cuzk-gpu-worker; do cp "$dir/bin/$t" "$B/bin/" || return 1; done
  echo "devbuild: ${CUDA_BINS[*]} cuzk-gpu-worker in $(since "$t0")"
}

# Runs the gpu tests (filter $1) into $OUT/LOG ($2); prints the seed and the verdict.
gpu_tests() {
  local filter="${1:-*}" log="$OUT/$2" t
  timeout "${TEST_TIMEOUT:-300}" "$B/run" cuzk_gpu_tests --gtest_color=no --gtest_filter="$filter" >"$log" 2>&1
  t=$?
  grep -E "random seed|^\[ *(FAILED|PASSED) *\]|Failure|Expected|Which is|tests? from .* ran" "$log" | head -40
  echo "gpu tests ($filter): exit status $t"
  return $t
}

# Runs `cuzk-bench ARGS` (what `cuzk bench` runs) with bundle DIR, output
# appended to $OUT/LOG and printed with TAG in front.
bench_run() {
  local dir="$1" log="$2" tag="$3"
  shift 3
  local exe=(cuzk-bench)
  echo "# ${exe[*]} $*" >>"$OUT/$log"
  timeout "${BENCH_TIMEOUT:-300}" "$dir/run" "${exe[@]}" "$@" 2>&1 | tee -a "$OUT/$log" | grep -v '^# device' |
    sed "s/^/$tag/"
  return "${PIPESTATUS[0]}"
}

# The benchmarks behind docs/PERFORMANCE.md's GPU table, one `cuzk bench` line each.
HEADLINE=(
  "--runs 7 --warmup 2 ntt --sizes 20..27"
  "--runs 5 --warmup 1 h-stage --sizes 20,22,24"
  "--runs 5 --warmup 1 prove --sizes 20"
  "--runs 5 --warmup 1 prove --sizes 22"
  "--runs 5 --warmup 1 prove --sizes 24"
  "--runs 5 --warmup 1 msm-g1-ab --sizes 20,22,24 --scalars both"
  "--runs 5 --warmup 1 msm-g2-ab --sizes 20,22 --scalars both"
  "--runs 3 --warmup 1 msm-g1-ab --sizes 26 --scalars both"
  "--runs 5 --warmup 1 msm-g1 --sizes 24,26 --scalars witness --profile porep"
  "--runs 5 --warmup 1 prove --sizes 24 --profile porep"
)

# At most 8 files, two folders deep, come back from $OUT: pack the rest into results.tar.xz.
pack_out() {
  local n deep
  n="$(find "$OUT" -type f | wc -l)"
  deep="$(find "$OUT" -mindepth 3 -type f | head -1)"
  if [ "$n" -gt 8 ] || [ -n "$deep" ]; then
    local keep=(machine.txt summary.txt proofs.tgz)
    (cd "$OUT" && find . -type f ! -name machine.txt ! -name summary.txt ! -name proofs.tgz -printf '%P\n' |
      tar -cJf results.tar.xz -T - --remove-files && find . -mindepth 1 -type d -empty -delete)
    echo "$OUT: packed into results.tar.xz (the rest: ${keep[*]})"
  fi
}

# ---------------------------------------------------------------------------------------------
# The GPU host: subcommands.

cmd_devbuild() {
  open_bundle  # builds when the bundle brought host libraries only
  [ $DEVBUILT = 1 ] || devbuild_logged
}

cmd_check() {
  local sanitize=0 filter="*" rc=0
  while [ $# -gt 0 ]; do
    case "$1" in
      --sanitize) sanitize=1; shift ;;
      *) filter="$1"; shift ;;
    esac
  done
  open_bundle
  if command -v cuobjdump >/dev/null; then
    cuobjdump -res-usage "$B/bin/cuzk_gpu_tests" 2>/dev/null | grep -A1 "Function" |
      grep -oE "REG:[0-9]+|STACK:[0-9]+|LOCAL:[0-9]+|SHARED:[0-9]+|Function [^:]*" | paste -sd' ' |
      sed 's/Function /\n/g' | sed 's/^_ZN4cuzk3gpu[0-9A-Za-z_]*_cu_[0-9a-f]*//' >"$OUT/res_usage.txt"
    echo "register and stack use: $(grep -c . "$OUT/res_usage.txt") kernels in res_usage.txt;" \
      "with a stack: $(grep -cE 'STACK:[1-9]' "$OUT/res_usage.txt")"
  fi
  say "gpu tests"
  gpu_tests "$filter" tests.log || rc=1
  if [ $sanitize = 1 ]; then
    local tool s
    for tool in memcheck racecheck; do
      say "compute-sanitizer --tool $tool"
      timeout "${SAN_TIMEOUT:-120}" compute-sanitizer --tool $tool --error-exitcode 9 "$B/run" cuzk_gpu_tests \
        --gtest_filter="${SAN_FILTER:-GpuMsm.G1EveryWindowWidth:GpuMsm.G2MatchesCpu:GpuNtt.HStageMatchesCpu}" \
        >"$OUT/sanitize_$tool.log" 2>&1
      s=$?
      grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$OUT/sanitize_$tool.log" | tail -3
      echo "$tool: exit status $s"
      [ $s = 0 ] || rc=1
    done
  fi
  return $rc
}

cmd_bench() {
  local base="" rc=0
  if [ "${1:-}" = --base ]; then base="$2"; shift 2; fi
  local lines=()
  if [ $# -eq 0 ]; then
    lines=("${HEADLINE[@]}")
  elif [ "$1" = prove ] && [[ "${2:-}" =~ ^[0-9]+$ ]]; then
    lines=("--runs ${RUNS:-5} --warmup 1 prove --sizes $2 ${*:3}")
  else
    lines=("$*")
  fi
  open_bundle
  local dirs=("$B") tags=("")
  if [ -n "$base" ]; then
    local nb="$B-base"
    unpack "$base" "$nb"
    # devbuild compiles this tree's kernels, so a base must bring its own CUDA binaries.
    [ -x "$nb/bin/cuzk-bench" ] || [ -x "$nb/bin/cuzk_gpu_tests" ] ||
      die "$base holds no CUDA binaries (bundle a -DCUZK_CUDA=ON build for a base)"
    dirs=("$nb" "$B" "$nb" "$B") tags=("[base] " "[new] " "[base] " "[new] ")
  fi
  local line i args
  for line in "${lines[@]}"; do
    read -r -a args <<<"$line"
    for i in "${!dirs[@]}"; do
      bench_run "${dirs[$i]}" bench.log "${tags[$i]}" "${args[@]}" || rc=1
    done
  done
  return $rc
}

# e2e prove: every payload case with `cuzk prove --backend cuda --verify`, keyed here when the
# payload brought an R1CS instead of a key.
cmd_e2e_prove() {
  open_bundle
  local payload="$DEV/e2e" fail=0 d c p
  [ -d "$payload" ] || die "no payload at $payload (scripts/device.sh e2e payload, here)"
  mkdir -p "$OUT/proofs"
  for d in "$payload"/*/; do
    c="$(basename "$d")"
    p="$OUT/proofs/$c"
    mkdir -p "$p"
    key_case "$d" "$c" || { echo "$c: SETUP FAILED"; fail=1; continue; }
    cp "$d/vk.json" "$p/vk.json"
    [ -f "$d/snarkjs_public.json" ] && cp "$d/snarkjs_public.json" "$p/"
    if run cuzk prove "$d/circuit.zkey" "$d/witness.wtns" "$p/proof.json" "$p/public.json" --backend "$BACKEND" --verify \
      >"$p/prove.log" 2>&1; then
      echo "$c: proved ($BACKEND backend), cuzk verify OK ($(grep -o 'proving[^:]*: [0-9.]* s' "$p/prove.log" | tail -1))"
    else
      echo "$c: PROVE FAILED"; tail -3 "$p/prove.log"; fail=1
    fi
  done
  tar -C "$OUT" -czf "$OUT/proofs.tgz" proofs && rm -rf "$OUT/proofs"
  return $fail
}

# A payload case that brought circuit.r1cs.xz gets its key here (`cuzk setup`, development key).
key_case() {
  local d="$1" c="$2"
  [ -f "$d/circuit.zkey" ] && return 0
  xz -dc "$d/circuit.r1cs.xz" >"$d/circuit.r1cs" &&
    run cuzk -q setup "$d/circuit.r1cs" "$d/circuit.zkey" --seed "$c" >/dev/null 2>&1 &&
    run cuzk -q export vk "$d/circuit.zkey" "$d/vk.json"
}

# CPU sets for W workers: COUNT CPUs from FIRST in W consecutive sets, sizes within one.
cpu_sets() {
  local lo="$1" count="$2" w="$3" i k sets=""
  for ((i = 0; i < w; i++)); do
    k=$((count / w + (i < count % w ? 1 : 0)))
    sets+="${sets:+, }\"$lo-$((lo + k - 1))\""
    lo=$((lo + k))
  done
  echo "$sets"
}

# Starts the supervisor on CONFIG (stderr to LOG) and waits until every worker has started.
start_daemon() {
  local config="$1" log="$2" sock i st
  sock="$(sed -n 's/^socket = "\(.*\)"/\1/p' "$config")"
  "$B/run" cuzk-supervisor --config "$config" 2>"$log" &  # run execs: $! is the supervisor
  SUP=$!
  for ((i = 0; i < 1200; i++)); do
    st="$(run cuzk status --socket "$sock" --json 2>/dev/null)"
    if grep -q '"workers"' <<<"$st" && ! grep -Eq '"state": ?"starting"' <<<"$st"; then return 0; fi
    kill -0 "$SUP" 2>/dev/null || break
    sleep 0.1
  done
  tail -20 "$log"
  die "the daemon did not start (config $config)"
}
# Stops it with SIGTERM (drain) and writes its timeline and waterfall (text and SVG) into DIR.
stop_daemon() {
  local state="$1" dir="$2" rc=0
  kill -TERM "$SUP" && wait "$SUP" || rc=1
  SUP=""
  cp "$state/timeline.log" "$dir/"
  run cuzk waterfall "$state/timeline.log" --svg "$dir/waterfall.svg" >"$dir/waterfall.txt" 2>&1 || rc=1
  return $rc
}

# The [daemon] table of a run's configuration.
daemon_table() {  # daemon_table WORK TAG
  printf '[daemon]\ninstance = "dev%s"\nstate_dir = "%s/state-%s"\nsocket = "%s/%s.sock"\nheartbeat_timeout_ms = 60000\n' \
    "$2" "$1" "$2" "$1" "$2"
}

cmd_daemon() {
  local k="${1:-18}" payload="$DEV/e2e" work status=0 cases=() d c
  shift
  # The payload cases to prove beside the generated circuit: those named, else every one with a key.
  if [ $# -gt 0 ]; then
    for d in "$@"; do [ -f "$payload/$d/circuit.zkey" ] || die "no keyed payload case $d"; cases+=("$d"); done
  else
    for d in "$payload"/*/; do [ -f "$d/circuit.zkey" ] && cases+=("$(basename "$d")"); done
  fi
  open_bundle
  work="$(scratch daemon)" && TMPS+=("$work")
  say "generated circuit 2^$k and its development key"
  local t0=$SECONDS
  local g="$work/gen"  # also an input folder: apart from the daemon's state
  mkdir -p "$g"
  run cuzk -q gen-circuit "$k" "$g/gen.r1cs" "$g/gen.wtns" --seed 7
  run cuzk -q setup "$g/gen.r1cs" "$g/gen.zkey" --seed gpu-daemon >/dev/null 2>&1 || die "setup failed"
  run cuzk -q export vk "$g/gen.zkey" "$g/gen_vk.json"
  mkdir -p "$OUT/proofs"
  echo "setup took $(since $t0)"
  # Four synthesis workers on equal CPU sets, the GPU worker's host side on the last two CPUs.
  local ncpu
  ncpu="$(nproc)"
  {
    daemon_table "$work" d
    echo "input_dirs = [\"$g\", \"$payload\"]"
    printf '[synthesis]\nworkers = 4\n'
    [ "$ncpu" -ge 8 ] && echo "cpus = [$(cpu_sets 0 $((ncpu - 2)) 4)]"
    printf '[gpu]\nbackend = "%s"\ndevices = [0]\nslots = 6\n' "$BACKEND"
    [ "$ncpu" -ge 8 ] && echo "cpus = [\"$((ncpu - 2))-$((ncpu - 1))\"]"
    printf '[[circuits]]\nname = "gen"\nzkey = "%s/gen.zkey"\nr1cs = "%s/gen.r1cs"\n' "$g" "$g"
    for c in "${cases[@]}"; do printf '[[circuits]]\nname = "%s"\nzkey = "%s"\n' "$c" "$payload/$c/circuit.zkey"; done
  } >"$work/cuzk.toml"
  cp "$work/cuzk.toml" "$OUT/"
  start_daemon "$work/cuzk.toml" "$OUT/supervisor.log"
  local sock="$work/d.sock" jobs=() i
  submit() {  # submit CIRCUIT ARGS...: queues a job, recorded as CIRCUIT:ID
    local id
    id="$(run cuzk submit --socket "$sock" --circuit "$@")"
    [ -n "$id" ] || die "submitting to $1 failed"
    jobs+=("$1:$id")
  }
  gen_job() { submit gen --witness "$g/gen.wtns" --witness "$g/gen.wtns" --witness "$g/gen.wtns" --witness "$g/gen.wtns"; }
  say "a stream of jobs, with kill -9 of the GPU worker after 1.5 s"
  for i in 1 2 3 4 5 6; do gen_job; done
  local prio
  for i in "${!cases[@]}"; do  # two partitions per case; the last case's job jumps the queue
    c="${cases[$i]}" prio=normal
    [ "$i" = $((${#cases[@]} - 1)) ] && prio=high
    submit "$c" --witness "$payload/$c/witness.wtns" --witness "$payload/$c/witness.wtns" --priority $prio
  done
  sleep 1.5
  local gpid
  gpid="$(run cuzk status --socket "$sock" --json | tr -d ' \n' | grep -o '"name":"gpu0","partition":[^,]*,"pid":[0-9]*' |
    grep -o '[0-9]*$')"
  if [ -n "$gpid" ]; then echo "kill -9 gpu0 (pid $gpid)"; kill -9 "$gpid"; else echo "gpu0's pid not found" >&2; status=1; fi
  gen_job
  gen_job
  local e j
  for e in "${jobs[@]}"; do
    c="${e%%:*}" j="${e#*:}"
    run cuzk await --socket "$sock" --out "$OUT/proofs/${c}_$j" --timeout 400 "$j" >/dev/null || status=1
    if [ "$c" = gen ]; then cp "$g/gen_vk.json" "$OUT/proofs/${c}_$j/vk.json"; else cp "$payload/$c/vk.json" "$OUT/proofs/${c}_$j/"; fi
  done
  run cuzk status --socket "$sock" --json >"$OUT/status.json"
  stop_daemon "$work/state-d" "$OUT" || status=1
  cat "$OUT/waterfall.txt"
  tar -C "$OUT" -czf "$OUT/proofs.tgz" proofs && rm -rf "$OUT/proofs"
  echo "proofs: $OUT/proofs.tgz (here: scripts/device.sh e2e verify proofs.tgz)"
  return $status
}

# kill_gpu1_midstream TIMELINE N: once N proofs are done (GPU_END in the daemon's timeline), kill -9
# the GPU worker of device 1.
kill_gpu1_midstream() {
  local tl="$1" n="$2" pid i
  for ((i = 0; i < 6000; i++)); do
    [ "$(grep -c ',GPU_END,' "$tl" 2>/dev/null || true)" -ge "$n" ] && break
    sleep 0.1
  done
  pid="$(grep ',WORKER_START,.*worker=gpu1,' "$tl" | tail -1 | sed -n 's/.*,pid=\([0-9]*\).*/\1/p')"
  [ -n "$pid" ] || die "no gpu1 in $tl"
  echo "kill -9 gpu1 (pid $pid) after $n proofs"
  kill -9 "$pid"
}

# devices [WORKERS] [PARTITIONS]: the 2^22 .wtns stream on one GPU, on two, and on two with a kill
# of gpu1 mid-stream; needs a host with two GPUs.
cmd_devices() {
  local w="${1:-4}" n="${2:-240}" ng
  if [ "$BACKEND" = cuda ]; then
    ng="$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)"
    [ "$ng" -ge 2 ] || die "devices needs two GPUs; this host has ${ng:-0}"
  fi
  SYNTH_DEVICES="1 2 2k" OVERLAP_W=0 GPU_CORES="${GPU_CORES:-4}" cmd_synth "gen:${DEVICES_LOG2:-22}" - - "$w" "$n"
}

cmd_synth() {
  [ $# -ge 3 ] || die "synth R1CS GENERATOR INPUTS_DIR [WORKERS] [PARTITIONS] (see: scripts/device.sh help)"
  local r1cs="$1" gen="$2" inputs="$3" workers="${4:-1 2 4 8 12}" n="${5:-24}" per_job="${PER_JOB:-4}"
  local gpu_cores="${GPU_CORES:-2}" overlap_w="${OVERLAP_W:-8}" work ncpu
  open_bundle
  work="$(scratch synth)" && TMPS+=("$work")
  ncpu="$(nproc)"
  if [[ "$r1cs" == gen:* ]]; then
    inputs="$work/wtns" gen=-
    mkdir -p "$inputs"
    run cuzk -q gen-circuit "${r1cs#gen:}" "$work/circuit.r1cs" "$inputs/w.wtns" --seed 7 --curve "${SYNTH_CURVE:-bls12381}"
    r1cs="$work/circuit.r1cs"
  else
    gen="$(cd "$gen" && pwd)" inputs="$(cd "$inputs" && pwd)" || die "no generator or inputs folder"
  fi
  if [[ "$r1cs" == *.xz ]]; then xz -dc "$r1cs" >"$work/circuit.r1cs" && r1cs="$work/circuit.r1cs"; fi
  local t0=$SECONDS
  run cuzk -q setup "$r1cs" "$work/circuit.zkey" --seed gpu-synth >/dev/null 2>&1 || die "setup failed"
  echo "setup: $(since $t0)"
  # N partitions from the input files, reused in turn when there are fewer files.
  local avail_files files=() i
  mapfile -t avail_files < <(ls "$inputs"/*.json "$inputs"/*.wtns 2>/dev/null)
  [ ${#avail_files[@]} -gt 0 ] || die "no .json or .wtns files in $inputs"
  for ((i = 0; i < n; i++)); do files+=("${avail_files[$((i % ${#avail_files[@]}))]}"); done
  mkdir -p "$OUT/runs"
  run cuzk -q export vk "$work/circuit.zkey" "$OUT/runs/vk.json"
  # synth_run TAG W SYNTH_SETS [DEVICES [KILL]]: DEVICES GPU workers (default 1), each on its own
  # GPU_CORES of the last cores; KILL = 1: kill -9 of gpu1 once a third of the proofs are done, and
  # every proof goes back for snarkjs (otherwise one per run).
  synth_run() {
    local tag="$1" w="$2" sets="$3" nd="${4:-1}" kill="${5:-0}" rd="$OUT/runs/$1" sock="$work/$1.sock" ids=() k j args
    local devs="0" gsets
    [ "$nd" -eq 2 ] && devs="0, 1"
    gsets=""  # GPU_CORES=0: the GPU workers unpinned (a dry run on a small machine)
    [ "$gpu_cores" -gt 0 ] && gsets="$(cpu_sets $((ncpu - nd * gpu_cores)) $((nd * gpu_cores)) "$nd")"
    mkdir -p "$rd"
    {
      daemon_table "$work" "$tag"
      echo "input_dirs = [\"$inputs\"]"
      printf '[synthesis]\nworkers = %s\ncpus = [%s]\nabc = "%s"\n' "$w" "$sets" "$abc"
      printf '[gpu]\nbackend = "%s"\ndevices = [%s]\nslots = %s\nbatch = %s\n' "$BACKEND" "$devs" \
        "${SLOTS:-$((w + 2))}" "${BATCH:-32}"
      [ -z "$gsets" ] || printf 'cpus = [%s]\n' "$gsets"
      printf '[[circuits]]\nname = "c"\nzkey = "%s/circuit.zkey"\nmax_partitions = %s\n' "$work" $per_job
      [ "$gen" = - ] || echo "witness_generator = \"$gen\""
    } >"$work/$tag.toml"
    start_daemon "$work/$tag.toml" "$rd/supervisor.log"
    local t1=$SECONDS
    for ((k = 0; k < ${#files[@]}; k += per_job)); do
      args=()
      for ((j = k; j < k + per_job && j < ${#files[@]}; j++)); do
        if [[ "${files[$j]}" == *.wtns ]]; then args+=(--witness "${files[$j]}"); else args+=(--input "${files[$j]}"); fi
      done
      ids+=("$(run cuzk submit --socket "$sock" --circuit c "${args[@]}")")
      [ -n "${ids[-1]}" ] || die "submitting to the $tag daemon failed"
    done
    [ "$kill" = 1 ] && kill_gpu1_midstream "$work/state-$tag/timeline.log" $((${#files[@]} / 3))
    for j in "${ids[@]}"; do
      run cuzk await --socket "$sock" --out "$work/out-$tag-$j" --timeout 600 "$j" >/dev/null ||
        echo "$tag: job $j did not finish" | tee -a "$OUT/summary.txt"
    done
    local wall=$((SECONDS - t1))
    stop_daemon "$work/state-$tag" "$rd"
    echo "$tag: workers=$w sets=[$sets] devices=[$devs] partitions=${#files[@]} wall=${wall}s;" \
      "$(grep -m1 '^span' "$rd/waterfall.txt")" | tee -a "$OUT/summary.txt"
    grep -E '^  [0-9]+ devices, steady|^  device |^    steady state|^      idle inside|^    start-up before' \
      "$rd/waterfall.txt" | tee -a "$OUT/summary.txt"
    mkdir -p "$OUT/proofs/$tag"
    cp "$OUT/runs/vk.json" "$OUT/proofs/$tag/"
    if [ "$kill" = 1 ]; then
      for j in "${ids[@]}"; do
        for f in "$work/out-$tag-$j"/proof_*.json; do
          [ -f "$f" ] || continue
          local i="${f##*/proof_}"
          cp "$f" "$OUT/proofs/$tag/proof_${j}_$i"
          cp "$work/out-$tag-$j/public_$i" "$OUT/proofs/$tag/public_${j}_$i"
        done
      done
      echo "$tag: $(ls "$OUT/proofs/$tag"/proof_* 2>/dev/null | wc -l) of ${#files[@]} proofs back for snarkjs" |
        tee -a "$OUT/summary.txt"
    else
      cp "$work/out-$tag-${ids[0]}/proof_0.json" "$work/out-$tag-${ids[0]}/public_0.json" "$OUT/proofs/$tag/"
    fi
  }
  local w d avail abc
  for abc in ${ABC:-cpu}; do
    for d in ${SYNTH_DEVICES:-1}; do
      local nd="${d%k}" kill=0
      [ "$d" != "$nd" ] && kill=1
      avail=$((ncpu - nd * gpu_cores))
      [ -n "${SYNTH_CORES:-}" ] && [ "$SYNTH_CORES" -lt "$avail" ] && avail="$SYNTH_CORES"
      for w in $workers; do
        [ "$w" -le "$avail" ] || { echo "w$w: skipped ($avail CPUs for synthesis)"; continue; }
        local tag="w$w"
        [ "$d" = 1 ] || tag+="-d$d"
        [ "$abc" = cpu ] || tag+="-abc$abc"
        synth_run "$tag" "$w" "$(cpu_sets 0 "$avail" "$w")" "$nd" "$kill"
      done
    done
    [ "$overlap_w" -gt 0 ] && synth_run "w$overlap_w-overlap-abc$abc" "$overlap_w" "$(cpu_sets 0 "$ncpu" "$overlap_w")"
  done
  tar -C "$OUT" -czf "$OUT/proofs.tgz" proofs && rm -rf "$OUT/proofs"
  return 0
}

# clients [LOG2 [CLIENTS [JOBS]]]: `cuzk load` on a gen-circuit of 2^LOG2, one job a partition: one
# client's latency, then CLIENTS clients' throughput, each proof checked against the key by the
# client too, with the daemon's own submit-to-done times from its timeline.
cmd_clients() {
  local k="${1:-13}" nc="${2:-16}" jobs="${3:-4000}" lat_jobs="${CLIENTS_LATENCY_JOBS:-200}" work g status=0
  open_bundle
  work="$(scratch clients)" && TMPS+=("$work")
  g="$work/gen"  # also the input folder: apart from the daemon's state
  mkdir -p "$g"
  local t0=$SECONDS
  run cuzk -q gen-circuit "$k" "$g/gen.r1cs" "$g/gen.wtns" --seed 7 --curve "${CLIENTS_CURVE:-bls12381}" ||
    die "gen-circuit failed"
  run cuzk -q setup "$g/gen.r1cs" "$g/gen.zkey" --seed gpu-clients >/dev/null 2>&1 || die "setup failed"
  run cuzk -q export vk "$g/gen.zkey" "$g/vk.json" || die "export vk failed"
  echo "setup: $(since $t0)"
  # At most CLIENTS jobs are in flight (each client waits for its job): a slot for each and a few to spare.
  {
    daemon_table "$work" c
    echo "input_dirs = [\"$g\"]"
    printf '[synthesis]\nworkers = 4\nabc = "gpu"\n'
    printf '[gpu]\nbackend = "%s"\ndevices = [0]\nslots = %s\n' "$BACKEND" $((nc + 4))
    printf '[[circuits]]\nname = "gen"\nzkey = "%s/gen.zkey"\n' "$g"
  } >"$work/cuzk.toml"
  { say "config"; cat "$work/cuzk.toml"; } >>"$OUT/summary.txt"
  start_daemon "$work/cuzk.toml" "$OUT/supervisor.log"
  local load=(run cuzk load --socket "$work/c.sock" --circuit gen --witness "$g/gen.wtns" --vk "$g/vk.json"
    --timeline "$work/state-c/timeline.log")
  say "2^$k: one client, $lat_jobs jobs (latency)" | tee -a "$OUT/summary.txt"
  "${load[@]}" --clients 1 --jobs "$lat_jobs" --warmup 20 --out "$work/out" 2>&1 | tee -a "$OUT/summary.txt"
  [ "${PIPESTATUS[0]}" = 0 ] || status=1
  say "2^$k: $nc clients, $jobs jobs (throughput)" | tee -a "$OUT/summary.txt"
  "${load[@]}" --clients "$nc" --jobs "$jobs" --warmup $((nc * 4)) 2>&1 | tee -a "$OUT/summary.txt"
  [ "${PIPESTATUS[0]}" = 0 ] || status=1
  stop_daemon "$work/state-c" "$OUT" || status=1
  # Four of the latency run's proofs for snarkjs.
  local d
  for d in $(ls -d "$work/out"/*/ 2>/dev/null | head -4); do
    mkdir -p "$OUT/proofs/gen_$(basename "$d")"
    cp "$d"/proof_0.json "$d"/public_0.json "$g/vk.json" "$OUT/proofs/gen_$(basename "$d")/"
  done
  [ -d "$OUT/proofs" ] && tar -C "$OUT" -czf "$OUT/proofs.tgz" proofs && rm -rf "$OUT/proofs"
  echo "proofs: $OUT/proofs.tgz (here: scripts/device.sh e2e verify proofs.tgz)"
  return $status
}

# More keys than a budget holds: N gen-circuits of 2^LOG2 (each its own key), a round-robin stream
# of jobs over them, proved with every key resident and with gpu.key_memory at a fraction of what
# the keys take.
cmd_keys() {
  local k="${1:-22}" n="${2:-4}" parts="${3:-96}" per_job=4 work ncpu w=4 i
  open_bundle
  work="$(scratch keys)" && TMPS+=("$work")
  ncpu="$(nproc)"
  # The circuits: an input folder apart from the daemons' state; KEYS_DIR keeps them for the next
  # call on a warm host.
  local t0=$SECONDS g="${KEYS_DIR:-$work/keys}"
  mkdir -p "$g"
  for ((i = 0; i < n; i++)); do
    [ -f "$g/c$i.vk.json" ] && continue
    run cuzk -q gen-circuit "$k" "$g/c$i.r1cs" "$g/c$i.wtns" --seed $((11 + i)) || die "gen-circuit failed"
    run cuzk -q setup "$g/c$i.r1cs" "$g/c$i.zkey" --seed "keys-$i" >/dev/null 2>&1 || die "setup failed"
    run cuzk -q export vk "$g/c$i.zkey" "$g/c$i.vk.json"
  done
  echo "$n circuits of 2^$k keyed in $(since $t0)" | tee -a "$OUT/summary.txt"
  # Runs and proofs gather beside the work and are packed into $OUT after each run, so that a call
  # cut short still brings back what was done.
  local res="$work/results"
  mkdir -p "$res/runs" "$res/proofs"
  # keys_run TAG KEY_MEMORY HOST_MEMORY PRECOMPUTE [KEY_WAIT_MS]
  keys_run() {
    local tag="$1" rd="$res/runs/$1" sock="$work/$1.sock" ids=() j c p args t1 wall
    mkdir -p "$rd"
    {
      daemon_table "$work" "$tag"
      echo "input_dirs = [\"$g\"]"
      printf '[synthesis]\nworkers = %s\n' "$w"
      [ "$ncpu" -lt 8 ] || printf 'cpus = [%s]\n' "$(cpu_sets 0 $((ncpu - 2)) "$w")"  # unpinned on a small machine
      printf '[gpu]\nbackend = "%s"\ndevices = [0]\nslots = %s\n' "$BACKEND" $((w + 2))
      [ "$ncpu" -lt 8 ] || printf 'cpus = ["%s-%s"]\n' $((ncpu - 2)) $((ncpu - 1))
      printf 'key_memory = %s\nkey_host_memory = %s\nprecompute = "%s"\nkey_wait_ms = %s\n' "$2" "$3" "$4" "${5:-10000}"
      for ((c = 0; c < n; c++)); do
        printf '[[circuits]]\nname = "c%s"\nzkey = "%s/c%s.zkey"\nmax_partitions = %s\n' $c "$g" $c $per_job
      done
    } >"$work/$tag.toml"
    start_daemon "$work/$tag.toml" "$rd/supervisor.log"
    run cuzk status --socket "$sock" --json >"$rd/status_start.json"
    t1=$SECONDS
    for ((j = 0; j < parts / per_job; j++)); do
      c=$((j % n)) args=()
      for ((p = 0; p < per_job; p++)); do args+=(--witness "$g/c$c.wtns"); done
      ids+=("$(run cuzk submit --socket "$sock" --circuit "c$c" "${args[@]}")")
    done
    for j in "${ids[@]}"; do
      run cuzk await --socket "$sock" --out "$work/out-$tag-$j" --timeout 900 "$j" >/dev/null ||
        echo "$tag: job $j did not finish" | tee -a "$OUT/summary.txt"
    done
    wall=$((SECONDS - t1))
    run cuzk status --socket "$sock" --json >"$rd/status_end.json"
    stop_daemon "$work/state-$tag" "$rd"
    echo "$tag: key_memory=$2 key_host_memory=$3 precompute=$4 wait=${5:-10000} partitions=$parts wall=${wall}s;" \
      "KEY_LOAD $(grep -c ',KEY_LOAD,' "$rd/timeline.log"), KEY_EVICT $(grep -c ',KEY_EVICT,' "$rd/timeline.log");" \
      "$(grep -m1 '^span' "$rd/waterfall.txt")" | tee -a "$OUT/summary.txt"
    grep -E '^    steady state|^      idle inside|^    idle ' "$rd/waterfall.txt" | tee -a "$OUT/summary.txt"
    grep ',KEY_LOAD,' "$rd/timeline.log" | sed 's/.*circuit=\(c[0-9]*\),bytes=\([0-9]*\),load_ms=\([0-9.]*\),source=\([a-z]*\).*/\1 \2 \3 \4/' |
      awk -v t="$tag" '{ n++; ms += $3; b = $2 } END { if (n) printf "%s: %d key loads, mean %.0f ms, last %.2f GB\n", t, n, ms / n, b / 1e9 }' |
      tee -a "$OUT/summary.txt"
    for ((c = 0; c < n && c < ${#ids[@]}; c++)); do
      mkdir -p "$res/proofs/$tag-c$c"
      cp "$g/c$c.vk.json" "$res/proofs/$tag-c$c/vk.json"
      cp "$work/out-$tag-${ids[$c]}/proof_0.json" "$work/out-$tag-${ids[$c]}/public_0.json" "$res/proofs/$tag-c$c/"
    done
    tar -C "$res" -cJf "$OUT/results.tar.xz" runs && tar -C "$res" -czf "$OUT/proofs.tgz" proofs
  }
  # A circuit added while a stream of another is proved (cuzk circuit add): the stream's proof times
  # and GPU_START intervals before CIRCUIT_ADD and after it.
  keys_add_run() {
    local tag=add rd="$res/runs/add" sock="$work/add.sock" ids=() j p args
    mkdir -p "$rd"
    {
      daemon_table "$work" "$tag"
      printf 'input_dirs = ["%s"]\nkey_dirs = ["%s"]\n' "$g" "$g"
      printf '[synthesis]\nworkers = %s\n' "$w"
      [ "$ncpu" -lt 8 ] || printf 'cpus = [%s]\n' "$(cpu_sets 0 $((ncpu - 2)) "$w")"
      printf '[gpu]\nbackend = "%s"\ndevices = [0]\nslots = %s\n' "$BACKEND" $((w + 2))
      [ "$ncpu" -lt 8 ] || printf 'cpus = ["%s-%s"]\n' $((ncpu - 2)) $((ncpu - 1))
      printf '[[circuits]]\nname = "c0"\nzkey = "%s/c0.zkey"\nmax_partitions = %s\n' "$g" $per_job
    } >"$work/$tag.toml"
    start_daemon "$work/$tag.toml" "$rd/supervisor.log"
    for ((j = 0; j < parts / per_job; j++)); do
      args=()
      for ((p = 0; p < per_job; p++)); do args+=(--witness "$g/c0.wtns"); done
      ids+=("$(run cuzk submit --socket "$sock" --circuit c0 "${args[@]}")")
    done
    for ((j = 0; j < ${#ids[@]} / 2; j++)); do run cuzk await --socket "$sock" --out "$work/out-add-$j" "${ids[$j]}" >/dev/null; done
    run cuzk circuit add --socket "$sock" --name c1 --zkey "$g/c1.zkey" >"$rd/add.txt" 2>&1 ||
      echo "add: cuzk circuit add failed: $(cat "$rd/add.txt")" | tee -a "$OUT/summary.txt"
    for ((; j < ${#ids[@]}; j++)); do run cuzk await --socket "$sock" --out "$work/out-add-$j" "${ids[$j]}" >/dev/null; done
    # Then a job of the circuit added: its key loaded on demand, its proof back for snarkjs.
    args=()
    for ((p = 0; p < per_job; p++)); do args+=(--witness "$g/c1.wtns"); done
    j="$(run cuzk submit --socket "$sock" --circuit c1 "${args[@]}")"
    if run cuzk await --socket "$sock" --out "$work/out-add-c1" --timeout 300 "$j" >"$rd/await_c1.txt" 2>&1; then
      mkdir -p "$res/proofs/add-c1"
      cp "$g/c1.vk.json" "$res/proofs/add-c1/vk.json"
      cp "$work/out-add-c1/proof_0.json" "$work/out-add-c1/public_0.json" "$res/proofs/add-c1/"
      echo "add: a job of c1, added at run time, proved" | tee -a "$OUT/summary.txt"
    else
      echo "add: the job of c1 failed: $(cat "$rd/await_c1.txt")" | tee -a "$OUT/summary.txt"
    fi
    run cuzk status --socket "$sock" --json >"$rd/status_end.json"
    stop_daemon "$work/state-$tag" "$rd"
    awk -F, -v c0_last="${ids[-1]}" 'BEGIN { after = 0 } $3 == "CIRCUIT_ADD" { after = 1 }
      $4 + 0 > c0_last { next }  # the stream of c0 only
      $3 == "GPU_END" { for (i = 5; i <= NF; i++) if ($i ~ /^prove_ms=/) { split($i, x, "="); ms[after] += x[2]; n[after]++ } }
      $3 == "GPU_START" { if (last) { gap[after] += $2 - last; m[after]++ } last = $2 }
      END { for (a = 0; a < 2; a++) printf "add: %s CIRCUIT_ADD: %d proofs, prove_ms mean %.1f, GPU_START every %.1f ms\n",
              a ? "after" : "before", n[a], n[a] ? ms[a] / n[a] : 0, m[a] ? gap[a] / m[a] : 0 }' \
      "$rd/timeline.log" | tee -a "$OUT/summary.txt"
    tar -C "$res" -cJf "$OUT/results.tar.xz" runs && tar -C "$res" -czf "$OUT/proofs.tgz" proofs
  }
  local bytes="${KEYS_BYTES:-}" wait_ms runs=" ${KEYS_RUNS:-resident add half host} "
  [[ "$runs" != *" resident "* ]] || keys_run resident 0 0 auto
  [[ "$runs" != *" add "* ]] || keys_add_run
  [[ "$runs" == *" half "* || "$runs" == *" host "* ]] || return 0
  if [ -z "$bytes" ]; then
    # The keys' own size without tables, from a run that has none: half of it is the budget.
    keys_run resident-notables 0 0 off
    bytes="$(grep ',KEY_LOAD,' "$res/runs/resident-notables/timeline.log" | sed 's/.*,bytes=\([0-9]*\).*/\1/' |
      awk '{ s += $1 } END { print s }')"
    [ -n "$bytes" ] && [ "$bytes" -gt 0 ] || die "no KEY_LOAD bytes in the run without tables"
  fi
  echo "keys without tables: $bytes bytes in all; budget $((bytes / 2))" | tee -a "$OUT/summary.txt"
  wait_ms="${KEYS_WAIT:-10000}"
  if [[ "$runs" == *" half "* ]]; then
    local r=0
    for wait_ms in ${KEYS_WAIT:-10000}; do  # a value given twice is run twice, each a run of its own
      r=$((r + 1))
      keys_run "half-wait$wait_ms-$r" $((bytes / 2)) 0 auto "$wait_ms"
    done
  fi
  [[ "$runs" != *" host "* ]] || keys_run half-host $((bytes / 2)) $((bytes * 2)) auto "${wait_ms%% *}"
}

# Both witness engines on one core of the GPU host (the first one, the host's others idle).
cmd_witness() {
  [ $# -ge 2 ] || die "witness ARTEFACT INPUT.json [RUNS]"
  local art="$1" input="$2" runs="${3:-5}" cache
  open_bundle
  cache="$(scratch witness)" && TMPS+=("$cache")
  mkdir -p "$OUT"
  { echo "== $(basename "$art") $(basename "$input") on cpu ${WITNESS_CPU:-0}"
    CUZK_CACHE_DIR="$cache" taskset -c "${WITNESS_CPU:-0}" "$B/run" cuzk witness bench "$art" "$input" --runs "$runs" 2>&1; } |
    tee -a "$OUT/witness.txt"
}

# ---------------------------------------------------------------------------------------------
# Here: the e2e payload and snarkjs verification.

snarkjs() { node "$ROOT/node_modules/snarkjs/build/cli.cjs" "$@"; }

# A uniformly random field element below r, as a decimal string.
# A random scalar below r of BLS12-381, or of BN254 with the argument bn128.
rand_fr() {
  node -e 'const r = process.argv[1] === "bn128"
      ? 21888242871839275222246405745257275088548364400416034343698204186575808495617n
      : 52435875175126190479447740508185965837690552500527637822603658699938581184513n;
    const b = require("crypto").randomBytes(40); let v = 0n; for (const x of b) v = (v << 8n) | BigInt(x);
    console.log((v % r).toString());' "${1:-bls12381}"
}

SOAK_CIRCUITS=(poseidon_merkle chain_pow2 multiplier)
cmd_soak_payload() {
  local work="$ROOT/build/e2e" c
  [ "${1:-}" != --e2e-work ] || work="$2"
  [ -d "$work/circuits" ] || die "no e2e circuits under $work (run the e2e tests: ctest -L e2e)"
  rm -rf "$DEV/soak"
  for c in "${SOAK_CIRCUITS[@]}"; do
    mkdir -p "$DEV/soak/circuits/$c" "$DEV/soak/cases/$c"
    cp "$work/circuits/$c/circuit.zkey" "$work/circuits/$c/circuit.r1cs" "$work/circuits/$c/vk.json" \
      "$DEV/soak/circuits/$c/" || die "$c: the e2e ceremony is incomplete under $work"
    cp "$work/cases/$c/witness.wtns" "$DEV/soak/cases/$c/" || die "$c: no e2e witness under $work"
  done
  echo "$DEV/soak: $(du -sh "$DEV/soak" | cut -f1)"
}

# The kill-soak with the bundle's executables on the cuda backend (as root: fills too, where the
# host lets it mount in a private namespace). The bundle's wrapper is bypassed: the soak starts
# the executables itself, so the loader finds the bundle's libraries through LD_LIBRARY_PATH.
cmd_soak() {
  local minutes="${1:-}"
  [[ "$minutes" =~ ^[0-9]+([.][0-9]+)?$ ]] || die "soak MINUTES"
  [ -f "$DEV/soak/cases/multiplier/witness.wtns" ] || die "no soak payload (scripts/device.sh soak payload, here)"
  open_bundle
  LD_LIBRARY_PATH="$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" SOAK_NO_SETUP=1 BUILD_DIR="$B" SOAK_E2E="$DEV/soak" \
    SOAK_PROOFS="$OUT/soak-proofs.tgz" bash "$ROOT/scripts/soak.sh" "$minutes" --backend "$BACKEND" 2>&1 | tee "$OUT/soak.log" |
    grep -v '^\[soak\] seed'
  return "${PIPESTATUS[0]}"
}

cmd_e2e_payload() {
  local work="$ROOT/build/e2e" gen=16
  while [ $# -gt 0 ]; do
    case "$1" in
      --e2e-work) work="$2"; shift 2 ;;
      --gen) gen="$2"; shift 2 ;;
      *) die "e2e payload: unknown argument $1" ;;
    esac
  done
  [ -d "$work/circuits" ] || die "no e2e circuits under $work (run the e2e tests: ctest -L e2e)"
  local cuzk
  cuzk="$(dirname "$work")/bin/cuzk"
  [ -x "$cuzk" ] || die "no cuzk binary at $cuzk"
  local out="$DEV/e2e"
  rm -rf "$out" && mkdir -p "$out"
  make_case() {  # make_case NAME CIRCUIT INPUT_JSON [CIRCUITS]: witness and snarkjs's own public signals
    local d="$out/$1" c="$work/${4:-circuits}/$2"
    mkdir -p "$d"
    echo "$3" >"$d/input.json"
    snarkjs wtns calculate "$c/circuit.wasm" "$d/input.json" "$d/witness.wtns" >/dev/null || die "$1: witness failed"
    snarkjs groth16 prove "$c/circuit.zkey" "$d/witness.wtns" "$d/snarkjs_proof.json" "$d/snarkjs_public.json" \
      >/dev/null || die "$1: snarkjs prove failed"
    rm "$d/snarkjs_proof.json"
    cp "$c/circuit.zkey" "$c/vk.json" "$d/"
    echo "$1: $2, input $(head -c 60 "$d/input.json")..."
  }
  make_case fresh_multiplier multiplier "{\"a\": \"$(rand_fr)\", \"b\": \"$(rand_fr)\"}"
  make_case fresh_no_public no_public "{\"a\": \"$(rand_fr)\", \"b\": \"$(rand_fr)\"}"
  make_case fresh_chain_pow2 chain_pow2 "{\"x\": \"$(rand_fr)\"}"
  make_case fresh_chain_pow2_plus1 chain_pow2_plus1 "{\"x\": \"$(rand_fr)\"}"
  local xs="" i
  for i in $(seq 40); do xs="$xs${xs:+, }\"$(rand_fr)\""; done
  make_case fresh_many_public many_public "{\"x\": [$xs], \"k\": \"$(rand_fr)\"}"
  # A Merkle root must match its path, so this one keeps the e2e tests' input.
  make_case poseidon_merkle poseidon_merkle "$(cat "$ROOT/tests/e2e/inputs/poseidon_merkle.json")"
  # BN254 (circom's default prime), when the e2e tests have built its fixtures.
  if [ -d "$work/circuits.bn128" ]; then
    make_case bn128_multiplier multiplier "{\"a\": \"$(rand_fr bn128)\", \"b\": \"$(rand_fr bn128)\"}" circuits.bn128
    make_case bn128_no_public no_public "{\"a\": \"$(rand_fr bn128)\", \"b\": \"$(rand_fr bn128)\"}" circuits.bn128
    make_case bn128_chain_pow2_plus1 chain_pow2_plus1 "{\"x\": \"$(rand_fr bn128)\"}" circuits.bn128
    xs=""
    for i in $(seq 40); do xs="$xs${xs:+, }\"$(rand_fr bn128)\""; done
    make_case bn128_many_public many_public "{\"x\": [$xs], \"k\": \"$(rand_fr bn128)\"}" circuits.bn128
    make_case bn128_poseidon_merkle poseidon_merkle "$(cat "$ROOT/tests/e2e/inputs/poseidon_merkle.bn128.json")" \
      circuits.bn128
  fi
  if [ "$gen" != 0 ]; then
    local d="$out/fresh_gen$gen"
    mkdir -p "$d"
    "$cuzk" -q gen-circuit "$gen" "$d/circuit.r1cs" "$d/witness.wtns" --seed "$RANDOM$RANDOM" || die "gen-circuit failed"
    xz -T2 -1 "$d/circuit.r1cs"
    echo "fresh_gen$gen: gen-circuit 2^$gen with a fresh seed (keyed on the GPU host)"
  fi
  du -sh "$out"
}

# Verifies every proof of a proofs.tgz: proofs/<case>/proof[_<i>].json against that folder's vk.json.
cmd_e2e_verify() {
  local file="${1:?e2e verify FILE (a proofs.tgz from the GPU host)}" tmp fail=0 n=0 p dir pub msg
  tmp="$(scratch verify)" && TMPS+=("$tmp")
  tar -C "$tmp" -xzf "$file" || die "cannot read $file"
  for p in "$tmp"/proofs/*/proof*.json; do
    dir="$(dirname "$p")" pub="$(basename "$p")"
    pub="$dir/${pub/proof/public}"
    msg="$(basename "$dir")/$(basename "$p"): "
    if snarkjs groth16 verify "$dir/vk.json" "$pub" "$p" 2>&1 | grep -q "OK!"; then
      msg+="snarkjs verify OK"; n=$((n + 1))
    else
      msg+="snarkjs verify FAILED"; fail=1
    fi
    if [ -f "$dir/snarkjs_public.json" ]; then
      if node "$ROOT/tests/e2e/json_tool.mjs" equal "$pub" "$dir/snarkjs_public.json" >/dev/null 2>&1; then
        msg+=", public signals equal snarkjs's"
      else
        msg+=", public signals DIFFER from snarkjs's"; fail=1
      fi
    fi
    echo "$msg"
  done
  [ $n -gt 0 ] || { echo "no proofs in $file" >&2; return 1; }
  echo "snarkjs accepted $n proofs"
  return $fail
}

# ---------------------------------------------------------------------------------------------

main() {
  local cmd="${1:-help}" rc
  shift
  case "$cmd" in
    bundle) cmd_bundle "$@"; return ;;
    e2e)
      case "${1:-}" in
        payload) shift; cmd_e2e_payload "$@"; return ;;
        verify) shift; cmd_e2e_verify "$@"; return ;;
        prove) shift; cmd_e2e_prove "$@"; rc=$? ;;
        *) die "e2e payload|prove|verify" ;;
      esac ;;
    devbuild) cmd_devbuild "$@"; rc=$? ;;
    check) cmd_check "$@"; rc=$? ;;
    bench) cmd_bench "$@"; rc=$? ;;
    daemon) cmd_daemon "$@"; rc=$? ;;
    synth) cmd_synth "$@"; rc=$? ;;
    witness) cmd_witness "$@"; rc=$? ;;
    keys) cmd_keys "$@"; rc=$? ;;
    devices) cmd_devices "$@"; rc=$? ;;
    clients) cmd_clients "$@"; rc=$? ;;
    soak)
      case "${1:-}" in
        payload) shift; cmd_soak_payload "$@"; return ;;
        *) cmd_soak "$@"; rc=$? ;;
      esac ;;
    help | -h | --help) usage; return 0 ;;
    *) usage >&2; return 2 ;;
  esac
  pack_out
  return $rc
}

main "$@"
