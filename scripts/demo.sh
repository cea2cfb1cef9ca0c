#!/usr/bin/env bash
# The main job: sets up and builds (scripts/setup.sh), compiles the bundled Merkle circuit's witness
# generator (circom --c, then `cuzk witness build`), starts the proving daemon with an embedded
# default configuration (the cuda backend when a GPU is visible and built in, the cpu backend
# otherwise), submits multi-partition jobs from circuit inputs (and one from .wtns files) through the
# `cuzk` client, verifies every proof with snarkjs, prints the results, the merged timeline and the
# waterfall (with the witness stage), and stops the daemon with SIGTERM.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

BUILD_DIR="${BUILD_DIR:-build}"
BIN="$(realpath "$BUILD_DIR/bin")"
CUZK="$BIN/cuzk"
SNARKJS=(node "$PWD/node_modules/snarkjs/build/cli.cjs")
work="$(mktemp -d /tmp/cuzk-demo.XXXXXX)"
sup_pid=""
cleanup() {
  [ -n "$sup_pid" ] && kill -9 "$sup_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

backend=cpu
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 &&
   grep -q "CUZK_CUDA:BOOL=ON" "$BUILD_DIR/CMakeCache.txt"; then
  backend=cuda
fi

echo "== circuits: the bundled Merkle circuit (snarkjs ceremony key) and a generated 2^12 circuit"
# The Merkle circuit's witness generator: circom's C++ output compiled by cuzk, kept in the build
# folder so that later runs reuse it (rebuilt when cuzk is newer).
demo_dir="$(realpath "$BUILD_DIR")/demo"
gen_dir="$demo_dir/merkle-generator"
if [ ! -f "$gen_dir/manifest.json" ] || [ "$CUZK" -nt "$gen_dir/manifest.json" ] ||
   [ examples/merkle/merkle.circom -nt "$gen_dir/manifest.json" ]; then
  echo "compiling the Merkle circuit's witness generator (circom --c, then cuzk witness build; once)"
  mkdir -p "$demo_dir"
  node node_modules/circom2/cli.js examples/merkle/merkle.circom --prime bls12381 --O2 --c --sym \
    -l node_modules -o "$(realpath --relative-to=. "$demo_dir")" >"$demo_dir/circom.log" 2>&1 ||
    { cat "$demo_dir/circom.log"; exit 1; }
  "$CUZK" -q witness build "$demo_dir/merkle_cpp" "$gen_dir"
fi
# Each partition's inputs: the bundled input with its own x (the circuit's output is x^k * leaf).
for x in 3 4 5 6 7; do
  node -e 'const i = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); i.x = process.argv[2];
           console.log(JSON.stringify(i));' examples/merkle/merkle.json "$x" >"$work/merkle_x$x.json"
done
g="$work/gen"
mkdir -p "$g"
"$CUZK" -q gen-circuit 12 "$g/circuit.r1cs" "$g/w1.wtns" --seed 1
"$CUZK" -q setup "$g/circuit.r1cs" "$g/circuit.zkey" --seed demo >/dev/null
"$CUZK" -q export vk "$g/circuit.zkey" "$g/vk.json"

# The embedded default configuration, with this demo's circuits.
cat >"$work/cuzk.toml" <<TOML
[daemon]
instance = "demo$$"
state_dir = "$work/state"
socket = "$work/cuzk.sock"
[synthesis]
workers = 2
[gpu]
backend = "$backend"
devices = [0]
slots = 3
[[circuits]]
name = "merkle"
zkey = "$PWD/examples/merkle/merkle.zkey"
witness_generator = "$gen_dir"
[[circuits]]
name = "gen12"
zkey = "$g/circuit.zkey"
r1cs = "$g/circuit.r1cs"
TOML

echo "== starting cuzk-supervisor ($backend backend, 2 synthesis workers)"
"$BIN/cuzk-supervisor" --config "$work/cuzk.toml" 2>"$work/supervisor.log" &
sup_pid=$!
# Until the socket answers, `cuzk status` prints nothing: only a status it printed is parsed.
ready=""
for _ in $(seq 1 600); do
  if st=$("$CUZK" status --socket "$work/cuzk.sock" --json 2>/dev/null) &&
    node -e 'process.exit(JSON.parse(process.argv[1]).workers.every(w => w.state === "idle") ? 0 : 1)' "$st"; then
    ready=1
    break
  fi
  kill -0 "$sup_pid" 2>/dev/null || { cat "$work/supervisor.log"; echo "the daemon did not start" >&2; exit 1; }
  sleep 0.1
done
[ -n "$ready" ] || { cat "$work/supervisor.log"; echo "the daemon's workers were not ready after 60 s" >&2; exit 1; }
"$CUZK" status --socket "$work/cuzk.sock"

echo
echo "== submitting jobs"
j1=$("$CUZK" submit --socket "$work/cuzk.sock" --circuit merkle \
       --input "$work/merkle_x3.json" --input "$work/merkle_x4.json" --input "$work/merkle_x5.json")
j2=$("$CUZK" submit --socket "$work/cuzk.sock" --circuit gen12 --upload --witness "$g/w1.wtns" --witness "$g/w1.wtns" \
       --priority high)
j3=$("$CUZK" submit --socket "$work/cuzk.sock" --circuit merkle --input "$work/merkle_x6.json" \
       --input "$work/merkle_x7.json" --request-id demo-3)
echo "jobs: $j1 (merkle from inputs x3), $j2 (gen12 from .wtns x2, high priority), $j3 (merkle from inputs x2)"

status=0
check() {  # check JOB VK N
  local out="$work/out_$1"
  "$CUZK" await --socket "$work/cuzk.sock" --out "$out" --timeout 600 "$1"
  for ((i = 0; i < $3; i++)); do
    if "${SNARKJS[@]}" groth16 verify "$2" "$out/public_$i.json" "$out/proof_$i.json" 2>&1 | grep -q OK; then
      echo "job $1 partition $i: proof verified by snarkjs ($out/proof_$i.json)"
    else
      echo "job $1 partition $i: snarkjs REJECTED the proof" >&2
      status=1
    fi
  done
}
check "$j1" examples/merkle/verification_key.json 3
check "$j2" "$g/vk.json" 2
check "$j3" examples/merkle/verification_key.json 2

echo
echo "== stopping the daemon (SIGTERM drains, then exits 0)"
kill -TERM "$sup_pid"
wait "$sup_pid" || { echo "supervisor exited $?" >&2; status=1; }
sup_pid=""

echo
echo "== merged timeline ($work/state/timeline.log)"
cat "$work/state/timeline.log"
echo
echo "== waterfall"
"$CUZK" waterfall "$work/state/timeline.log"
exit $status
