# Shared helpers for the daemon's process tests: a real cuzk-supervisor with real workers (cpu
# backend), driven through the exact `cuzk submit|await|status|cancel` forms, proofs checked by
# snarkjs. Sourced by every script in this folder. ctest passes CUZK_SRC, CUZK_BIN (cuzk),
# SUP_BIN (cuzk-supervisor) and E2E_WORK (the e2e fixtures: circom circuits with snarkjs keys).
set -euo pipefail
: "${CUZK_SRC:?}" "${CUZK_BIN:?}" "${SUP_BIN:?}" "${E2E_WORK:?}"

SNARKJS_CLI="$CUZK_SRC/node_modules/snarkjs/build/cli.cjs"
SKIP=77
log() { echo "[daemon] $*"; }
die() {
  echo "[daemon] FAIL: $*" >&2
  if [ -f "${WORK:-/nonexistent}/sup.log" ]; then echo "--- supervisor log (last 60 lines)" >&2; tail -n 60 "$WORK/sup.log" >&2; fi
  exit 1
}

require_tools() {
  command -v node >/dev/null 2>&1 || { [ -n "${CI:-}" ] && die "node is not installed"; log "skipped: no node"; exit $SKIP; }
  [ -f "$SNARKJS_CLI" ] || { [ -n "${CI:-}" ] && die "snarkjs missing (npm ci)"; log "skipped: no snarkjs"; exit $SKIP; }
  [ -x "$SUP_BIN" ] || die "cuzk-supervisor not found at $SUP_BIN"
}
snarkjs() { node "$SNARKJS_CLI" "$@"; }

# The circom circuits of the e2e fixtures: poseidon_merkle (r1cs configured, so unsatisfied
# witnesses are caught in synthesis), chain_pow2 (two different witnesses) and multiplier.
CIRC="$E2E_WORK/circuits"
CASES="$E2E_WORK/cases"
for f in "$CIRC/poseidon_merkle/circuit.zkey" "$CASES/poseidon_merkle/witness.wtns" "$CIRC/chain_pow2/circuit.zkey" \
         "$CASES/chain_pow2/witness.wtns" "$CASES/chain_zero/witness.wtns" "$CIRC/multiplier/circuit.zkey" \
         "$CASES/multiplier/witness.wtns"; do
  [ -f "$f" ] || die "e2e fixture missing: $f"
done
W_POSEIDON="$CASES/poseidon_merkle/witness.wtns"
W_CHAIN="$CASES/chain_pow2/witness.wtns"
W_ZERO="$CASES/chain_zero/witness.wtns"
W_MULT="$CASES/multiplier/witness.wtns"

# A short path: unix socket paths are limited to 107 bytes.
WORK="$(mktemp -d /tmp/cuzk-dt.XXXXXX)"
INSTANCE="t$$"
SOCK="$WORK/cuzk.sock"
CONFIG="$WORK/cuzk.toml"
SUP_PID=""

cleanup() {
  local rc=$?
  if [ -n "$SUP_PID" ] && kill -0 "$SUP_PID" 2>/dev/null; then kill -9 "$SUP_PID" 2>/dev/null || true; fi
  sleep 0.2
  pkill -9 -f "cuzk-.*-worker --config $CONFIG" 2>/dev/null || true
  rm -f /dev/shm/cuzk."$INSTANCE".* 2>/dev/null || true
  if [ $rc -eq 0 ] && [ -z "${KEEP_WORK:-}" ]; then rm -rf "$WORK"; else echo "[daemon] work folder kept: $WORK" >&2; fi
}
trap cleanup EXIT

# Requests may name files by path only inside daemon.input_dirs: the fixtures' witnesses, and
# $IN for files a test makes. Set INPUT_DIRS before write_config to change the list ("" = none).
IN="$WORK/in"
mkdir -p "$IN"
INPUT_DIRS="\"$CASES\", \"$IN\""

# write_config SYNTH_WORKERS SLOTS [extra TOML appended]
write_config() {
  cat >"$CONFIG" <<TOML
[daemon]
instance = "$INSTANCE"
state_dir = "$WORK/state"
socket = "$SOCK"
heartbeat_interval_ms = 200
heartbeat_timeout_ms = 5000
shutdown_grace_ms = 20000
input_dirs = [$INPUT_DIRS]
[synthesis]
workers = $1
[gpu]
backend = "cpu"
devices = [0]
slots = $2
threads = 1
[[circuits]]
name = "poseidon"
zkey = "$CIRC/poseidon_merkle/circuit.zkey"
r1cs = "$CIRC/poseidon_merkle/circuit.r1cs"
[[circuits]]
name = "chain"
zkey = "$CIRC/chain_pow2/circuit.zkey"
[[circuits]]
name = "mult"
zkey = "$CIRC/multiplier/circuit.zkey"
[limits]
restart_backoff_initial_ms = 300
restart_backoff_max_ms = 2000
restart_intensity = 10
restart_period_s = 60
${3:-}
TOML
}

# share_witness_runtime: the daemon's compiled runtime objects are the e2e tests' shared ones, linked
# as tests/e2e/lib.sh's own_cache links them (it says why any cache may); the circuit's own code is
# still compiled in the state folder. Tests that time or kill a generator's build keep their own.
share_witness_runtime() {
  mkdir -p "$E2E_WORK/cache/witness/runtime" "$WORK/state/witness"
  ln -sfn "$E2E_WORK/cache/witness/runtime" "$WORK/state/witness/runtime"
}

# write_inputs_config SYNTH_WORKERS SLOTS: write_config with one more circuit, "mult_in", the
# multiplier with circom's generator (G_MULT) for submissions of inputs.
write_inputs_config() {
  G_MULT="$CIRC/multiplier/multiplier_cpp"
  [ -d "$G_MULT" ] || die "the circuit fixtures lack circom's --c output"
  write_config "$1" "$2" "
[[circuits]]
name = \"mult_in\"
zkey = \"$CIRC/multiplier/circuit.zkey\"
witness_generator = \"$G_MULT\""
  share_witness_runtime
}

cz() { "$CUZK_BIN" "$@"; }
status() { "$CUZK_BIN" status --socket "$SOCK" --json; }
# A value from the status JSON: jstat '<js expression over s>'.
jstat() { status | node -e "let s=JSON.parse(require('fs').readFileSync(0,'utf8')); const v=($1); console.log(typeof v==='object'?JSON.stringify(v):v)"; }
pid_of() { jstat "s.workers.find(w=>w.name==='$1').pid"; }
restarts_of() { jstat "s.workers.find(w=>w.name==='$1').restarts"; }
state_of() { jstat "s.workers.find(w=>w.name==='$1').state"; }

# refused_at_start WHAT TEXT...: the supervisor with $CONFIG exits 78 at start (a configuration
# error), its log saying each TEXT (fixed strings).
refused_at_start() {
  local what="$1" rc=0 t
  shift
  "$SUP_BIN" --config "$CONFIG" >"$WORK/refused.log" 2>&1 || rc=$?
  [ "$rc" -eq 78 ] || die "$what: expected exit 78, got $rc: $(tail -n 5 "$WORK/refused.log")"
  for t in "$@"; do
    grep -qF -- "$t" "$WORK/refused.log" || die "$what: the config error does not say '$t': $(tail -n 5 "$WORK/refused.log")"
  done
  log "$what is a config error (exit 78)"
}

# Starts the supervisor in the background and waits until every worker is idle.
start_daemon() {
  "$SUP_BIN" --config "$CONFIG" >>"$WORK/sup.log" 2>&1 &
  SUP_PID=$!
  wait_until 60 "all workers idle" "{ kill -0 $SUP_PID 2>/dev/null || die 'the supervisor exited at start'; } &&
    jstat \"s.workers.every(w=>w.state==='idle')\" 2>/dev/null | grep -qx true"
}

# wait_until SECONDS WHAT COMMAND: polls COMMAND every 0.1 s.
wait_until() {
  local limit="$1" what="$2" cmd="$3" i=0
  while ! eval "$cmd"; do
    i=$((i + 1))
    [ $i -le $((limit * 10)) ] || die "timed out after ${limit}s waiting for: $what"
    sleep 0.1
  done
}

# submit CIRCUIT WITNESS... [-- extra flags]: prints the job id.
submit() {
  local circuit="$1"; shift
  local args=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do args+=(--witness "$1"); shift; done
  [ $# -gt 0 ] && shift
  cz submit --socket "$SOCK" --circuit "$circuit" "${args[@]}" "$@"
}

# await_ok JOB OUTDIR VK N: the job finishes, and snarkjs accepts each of its N proofs.
await_ok() {
  local job="$1" out="$2" vk="$3" n="$4"
  cz await --socket "$SOCK" --out "$out" --timeout 240 "$job" >"$WORK/await_$job.log" 2>&1 ||
    die "job $job did not succeed: $(cat "$WORK/await_$job.log")"
  for ((i = 0; i < n; i++)); do
    [ -f "$out/proof_$i.json" ] || die "job $job: $out/proof_$i.json missing"
    snarkjs groth16 verify "$vk" "$out/public_$i.json" "$out/proof_$i.json" >"$WORK/verify.log" 2>&1 ||
      die "job $job partition $i: snarkjs rejects the proof: $(cat "$WORK/verify.log")"
    grep -q "OK" "$WORK/verify.log" || die "job $job partition $i: snarkjs did not say OK"
  done
  [ ! -f "$out/proof_$n.json" ] || die "job $job: more proofs than partitions"
  log "job $job: $n proofs verified by snarkjs"
}
# inputs_job CIRCUIT FILE...: submits the circuit inputs of each FILE, one partition each; prints
# the job id.
inputs_job() {
  local circuit="$1" args=(); shift
  for f in "$@"; do args+=(--input "$f"); done
  cz submit --socket "$SOCK" --circuit "$circuit" "${args[@]}"
}
# job_field JOB PATH: a field of the job's JSON (PATH as in JavaScript: state, partitions[0].attempts).
job_field() { node -e '
  const http = require("http");
  const req = http.request({socketPath: process.argv[1], path: "/v1/proofs/" + process.argv[2]}, res => {
    let b = ""; res.on("data", d => b += d); res.on("end", () => {
      const j = JSON.parse(b); const v = eval("j." + process.argv[3]); console.log(typeof v === "object" ? JSON.stringify(v) : v); });
  });
  req.end();' "$SOCK" "$1" "$2"; }
metrics() { node -e '
  const http = require("http");
  http.get({socketPath: process.argv[1], path: "/metrics"}, r => { let b = ""; r.on("data", d => b += d); r.on("end", () => console.log(b)); });' "$SOCK"; }
# until_program CIRCUIT INPUT VK: jobs of INPUT until a partition runs on the compiled witness program
# (each worker takes it up at its next input once it is built; at most 20 jobs), each proof
# verified; that partition must be counted in the metrics.
until_program() {
  local n=0 job
  while :; do
    n=$((n + 1))
    job=$(inputs_job "$1" "$2")
    await_ok "$job" "$WORK/out_program_$job" "$3" 1
    sleep 0.6  # the merger holds the newest events briefly
    grep -q "SYNTH_END,$job,.*witness_engine=program" "$WORK/state/timeline.log" && break
    [ $n -lt 20 ] || die "no partition of $1 ran on the compiled program: $(metrics | grep witness_partitions)"
  done
  metrics | grep -q '^cuzk_witness_partitions_total{engine="program"} [1-9]' ||
    die "the program's partitions are not counted: $(metrics | grep witness_partitions)"
}
VK_POSEIDON="$CIRC/poseidon_merkle/vk.json"
VK_CHAIN="$CIRC/chain_pow2/vk.json"
VK_MULT="$CIRC/multiplier/vk.json"

timeline() { cat "$WORK/state/timeline.log"; }

# make_unsat SRC DST: DST is SRC with the low byte of its last value flipped.
make_unsat() {
  node -e '
const fs = require("fs");
const b = fs.readFileSync(process.argv[1]);
// wtns v2: magic(4) version(4) nSections(4); section 1 header: type(4) size(8) n8(4) prime(n8) count(4);
// section 2 header: type(4) size(8), then the values. Bump the low byte of the last value.
const n8 = b.readUInt32LE(24), off = 12 + 12 + 4 + n8 + 4 + 12;
const count = b.readUInt32LE(28 + n8);
b[off + (count - 1) * n8] ^= 1;
fs.writeFileSync(process.argv[2], b);
' "$1" "$2"
}

# no_restarts WHAT: no worker of the daemon has restarted; else fail saying WHAT restarted one.
no_restarts() { [ "$(jstat "s.workers.reduce((n,w)=>n+w.restarts,0)")" -eq 0 ] || die "$1 restarted a worker"; }
# stop_daemon: SIGTERM, and the supervisor drains and exits 0.
stop_daemon() {
  kill -TERM "$SUP_PID"
  wait "$SUP_PID" || die "supervisor exited $? after SIGTERM"
  SUP_PID=""
}
