#!/usr/bin/env bash
# Kill-soak: a daemon under a stream of jobs while its processes are killed at random instants.
#
#   bash scripts/soak.sh MINUTES [--backend cpu|cuda] [--seed N] [--circuits DIR]
#   bash scripts/soak.sh verify PROOFS.tgz
#
# --circuits DIR: the mix is every folder of DIR holding circuit.zkey, vk.json and witness.wtns (and
# circuit.r1cs, then configured so that synthesis checks every constraint), named after the folder;
# by default the three circom circuits of the e2e tests.
#
# For MINUTES, jobs of the mix's circuits (1 to 3 partitions each, random priorities) are
# submitted every fraction of a second, each with a request id, and meanwhile every 1 to 4 s one of:
# kill -9 of a random synthesis or GPU worker, SIGSTOP of a worker for up to 1.5 s (then SIGCONT),
# kill -9 of the supervisor followed by a start as systemd would do it (Restart=on-failure, after
# 0.2 to 1.5 s), filling /dev/shm, or filling the disk under state_dir (each fill is freed 2 to 6 s
# later, kills going on meanwhile). A supervisor that exits by itself is started again 1 s later,
# as systemd would. A submission that fails because the supervisor is down or the disk is full is
# sent again with the same request id, so it lands once. Then the chaos stops and the soak checks
# that every job is done exactly once, verifies every proof with snarkjs, and that nothing is left
# over: no slot busy, no upload, spool or result file, no shared-memory segment but the live
# daemon's, no worker whose supervisor is gone. It prints one line, and exits 0 only when nothing
# was lost:
#
#   soak: 212 jobs, 431 proofs verified by snarkjs, 57 kills (41 workers, 9 supervisor, 7 stops), 6 fills (3 /dev/shm, 3 disk), 0 lost, 0 leaked
#
# The fills need root: the soak runs itself again in a private mount namespace (unshare) with a
# tmpfs of SOAK_SHM_MB (256) MiB on /dev/shm and one of 48 MiB for state_dir, so that they touch
# nothing outside it. Without root, or where mounting is refused, it runs without fills and says so.
#
# Builds what it needs first (scripts/setup.sh, the e2e circuits and witnesses in build/e2e/).
# Environment: BUILD_DIR (default build), SOAK_KEEP=1 keeps the work folder, SOAK_NO_SETUP=1 skips
# the setup (ctest's daemon.soak_smoke, whose fixtures have built everything already), SOAK_SEED
# replays a run's random choices, SOAK_E2E names the circuits and witnesses (default
# BUILD_DIR/e2e).
#
# A GPU host has no node: there SOAK_PROOFS=FILE packs the proofs with their verification keys
# into FILE instead (the line then counts "proofs to verify"), and `soak.sh verify FILE` on a
# machine with node verifies them all with snarkjs (scripts/device.sh soak does both halves).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"

SNARKJS="$ROOT/node_modules/snarkjs"
# Verifies each "VK PUBLIC PROOF" line of LIST with snarkjs; prints how many verified, and the
# rejected or unreadable ones on stderr.
verify_list() {
  node -e '
const snarkjs = require(process.argv[1]), fs = require("fs");
const lines = fs.readFileSync(process.argv[2], "utf8").trim().split("\n").filter(Boolean);
(async () => {
  let ok = 0;
  for (const l of lines) {
    const [vk, pub, proof] = l.split(" ");
    try {
      if (await snarkjs.groth16.verify(JSON.parse(fs.readFileSync(vk)), JSON.parse(fs.readFileSync(pub)),
                                       JSON.parse(fs.readFileSync(proof)))) ok++;
      else console.error("[soak] REJECTED " + proof);
    } catch (e) { console.error("[soak] UNREADABLE " + proof + ": " + e.message); }
  }
  console.log(ok);
  process.exit(0);
})();' "$SNARKJS" "$1"
}

if [ "${1:-}" = verify ]; then  # the proofs of a soak run where node was missing
  [ -f "${2:-}" ] || { echo "usage: scripts/soak.sh verify PROOFS.tgz" >&2; exit 64; }
  tmp="$(mktemp -d /tmp/cuzk-soak-verify.XXXXXX)"
  trap 'rm -rf "$tmp"' EXIT
  tar -xzf "$2" -C "$tmp"
  expected=$(wc -l <"$tmp/verify.txt")
  verified=$(cd "$tmp" && verify_list verify.txt)
  echo "soak proofs: $verified of $expected verified by snarkjs ($(head -1 "$tmp/line.txt"))"
  [ "$verified" -eq "$expected" ]
  exit
fi

MINUTES="${1:-}"
shift || true
BACKEND=cpu
SEED="${SOAK_SEED:-$RANDOM$RANDOM}"
MIX=""
USAGE="usage: scripts/soak.sh MINUTES [--backend cpu|cuda] [--seed N] [--circuits DIR]   (MINUTES may be a fraction, e.g. 0.5)"
while [ $# -gt 0 ]; do
  case "$1" in
    --backend) BACKEND="$2"; shift 2 ;;
    --seed) SEED="$2"; shift 2 ;;
    --circuits) MIX="$(realpath -e "$2")" || { echo "soak: no folder $2" >&2; exit 64; }; shift 2 ;;
    *) echo "$USAGE" >&2; exit 64 ;;
  esac
done
if ! [[ "$MINUTES" =~ ^[0-9]+([.][0-9]+)?$ ]]; then
  echo "$USAGE" >&2
  exit 64
fi
SECONDS_TOTAL=$(awk -v m="$MINUTES" 'BEGIN { printf "%d", m * 60 }')
RANDOM=$SEED
say() { echo "[soak] $*"; }

if [ -z "${SOAK_NS:-}" ] && [ "$(id -u)" -eq 0 ] && unshare --mount --propagation private true 2>/dev/null; then
  exec env SOAK_NS=1 unshare --mount --propagation private bash "$ROOT/scripts/soak.sh" "$MINUTES" \
    --backend "$BACKEND" --seed "$SEED" ${MIX:+--circuits "$MIX"}
fi

BUILD_DIR="${BUILD_DIR:-build}"
if [ -z "${SOAK_NO_SETUP:-}" ]; then
  bash scripts/setup.sh >/dev/null
  ctest --test-dir "$BUILD_DIR" --output-on-failure -R \
    '^e2e\.setup\.(ptau|circuit\.(poseidon_merkle|chain_pow2|multiplier)|case\.(poseidon_merkle|chain_pow2|multiplier))$' >/dev/null
fi
case "$BUILD_DIR" in /*) ;; *) BUILD_DIR="$ROOT/$BUILD_DIR" ;; esac
CUZK="$BUILD_DIR/bin/cuzk"
SUP="$BUILD_DIR/bin/cuzk-supervisor"
E2E="${SOAK_E2E:-$BUILD_DIR/e2e}"
PROOFS="${SOAK_PROOFS:-}"
# The mix: name, key, r1cs (or empty), witness and verification key of each circuit.
CIRCUITS=() ZKEY=() R1CS=() WITNESS=() VK=()
add_circuit() {
  CIRCUITS+=("$1") ZKEY+=("$2") R1CS+=("$3") WITNESS+=("$4") VK+=("$5")
}
if [ -n "$MIX" ]; then
  for d in "$MIX"/*/; do
    d="${d%/}"
    [ -f "$d/circuit.zkey" ] && [ -f "$d/vk.json" ] && [ -f "$d/witness.wtns" ] || continue
    r1cs=""
    [ -f "$d/circuit.r1cs" ] && r1cs="$d/circuit.r1cs"
    add_circuit "$(basename "$d" | tr -c 'A-Za-z0-9_\n-' _)" "$d/circuit.zkey" "$r1cs" "$d/witness.wtns" "$d/vk.json"
  done
  [ ${#CIRCUITS[@]} -gt 0 ] || { echo "[soak] no folder of $MIX holds circuit.zkey, vk.json and witness.wtns" >&2; exit 64; }
  INPUTS="$MIX"
else
  add_circuit poseidon "$E2E/circuits/poseidon_merkle/circuit.zkey" "$E2E/circuits/poseidon_merkle/circuit.r1cs" \
    "$E2E/cases/poseidon_merkle/witness.wtns" "$E2E/circuits/poseidon_merkle/vk.json"
  add_circuit chain "$E2E/circuits/chain_pow2/circuit.zkey" "" "$E2E/cases/chain_pow2/witness.wtns" \
    "$E2E/circuits/chain_pow2/vk.json"
  add_circuit mult "$E2E/circuits/multiplier/circuit.zkey" "" "$E2E/cases/multiplier/witness.wtns" \
    "$E2E/circuits/multiplier/vk.json"
  INPUTS="$E2E/cases"
fi
NC=${#CIRCUITS[@]}
needed=("$CUZK" "$SUP" "${ZKEY[@]}" "${WITNESS[@]}" "${VK[@]}")
[ -n "$PROOFS" ] || needed+=("$SNARKJS")
for f in "${needed[@]}"; do
  [ -e "$f" ] || { echo "[soak] missing $f (run without SOAK_NO_SETUP)" >&2; exit 1; }
done

WORK="$(mktemp -d /tmp/cuzk-soak.XXXXXX)"
INSTANCE="soak$$"
SOCK="$WORK/cuzk.sock"
CONFIG="$WORK/cuzk.toml"
SUP_PID=""
cleanup() {
  local rc=$?
  [ -z "$SUP_PID" ] || kill -9 "$SUP_PID" 2>/dev/null || true
  rm -f /dev/shm/cuzk."$INSTANCE".* 2>/dev/null || true
  if mountpoint -q "$WORK/state" 2>/dev/null; then  # the tmpfs ends with the namespace: keep a copy
    { [ $rc -eq 0 ] && [ -z "${SOAK_KEEP:-}" ]; } || cp -a "$WORK/state" "$WORK/state.kept"
    umount -l "$WORK/state"
  fi
  if [ $rc -eq 0 ] && [ -z "${SOAK_KEEP:-}" ]; then rm -rf "$WORK"; else echo "[soak] work folder kept: $WORK" >&2; fi
}
trap cleanup EXIT
FILLS=0
if [ -n "${SOAK_NS:-}" ] && mkdir -p "$WORK/state" &&
   mount -t tmpfs -o "size=${SOAK_SHM_MB:-256}m" soak-shm /dev/shm 2>/dev/null &&
   mount -t tmpfs -o size=48m soak-state "$WORK/state" 2>/dev/null; then
  FILLS=1
else
  say "no /dev/shm or disk fills: they need root and a private mount namespace"
fi

# Short heartbeats and restart backoffs, so that kills are noticed and repaired within the run; a
# restart intensity no run reaches, so that no worker is marked failed.
{
  cat <<TOML
[daemon]
input_dirs = ["$INPUTS"]
instance = "$INSTANCE"
socket = "$SOCK"
state_dir = "$WORK/state"
heartbeat_interval_ms = 200
heartbeat_timeout_ms = 3000
shutdown_grace_ms = 5000
[synthesis]
workers = 2
threads = 1
[gpu]
backend = "$BACKEND"
devices = [0]
slots = 4
threads = 1
[limits]
restart_backoff_initial_ms = 100
restart_backoff_max_ms = 1000
restart_intensity = 1000000
restart_period_s = 60
TOML
  for ((c = 0; c < NC; c++)); do
    printf '[[circuits]]\nname = "%s"\nzkey = "%s"\nmax_partitions = 3\n' "${CIRCUITS[$c]}" "${ZKEY[$c]}"
    [ -z "${R1CS[$c]}" ] || printf 'r1cs = "%s"\n' "${R1CS[$c]}"
  done
} >"$CONFIG"
PRIO=(critical high normal low)

# Starts the supervisor in the background, as systemd would after a crash.
start_supervisor() {
  "$SUP" --config "$CONFIG" >>"$WORK/sup.log" 2>&1 &
  SUP_PID=$!
}
up() { "$CUZK" status --socket "$SOCK" --json >"$WORK/status.json" 2>/dev/null; }
# Reads the last status: node where there is one, else python3 (a GPU host).
status_eval() {  # status_eval JS PYTHON: each prints from the parsed status s
  if command -v node >/dev/null 2>&1; then
    node -e "const s=JSON.parse(require('fs').readFileSync(process.argv[1],'utf8')); console.log($1)" "$WORK/status.json"
  else
    python3 -c "import json,sys; s=json.load(open(sys.argv[1])); print($2)" "$WORK/status.json"
  fi
}
worker_pids() {
  status_eval 's.workers.filter(w=>w.pid).map(w=>w.pid).join(" ")' '" ".join(str(w["pid"]) for w in s["workers"] if w.get("pid"))'
}

say "seed $SEED, $MINUTES min, backend $BACKEND, circuits ${CIRCUITS[*]}, work folder $WORK"
start_supervisor
for _ in $(seq 600); do up && break; sleep 0.1; done
up || { tail -n 30 "$WORK/sup.log" >&2; echo "[soak] the daemon did not start" >&2; exit 1; }

# The job stream: one submission at a time, each retried with its request id until accepted.
: >"$WORK/jobs.txt"
submitter() {
  RANDOM=$((SEED + 1))
  local n=0
  while [ ! -e "$WORK/stop" ]; do
    n=$((n + 1))
    local c=$((RANDOM % NC)) parts=$((1 + RANDOM % 3)) args=() id
    for ((p = 0; p < parts; p++)); do args+=(--witness "${WITNESS[$c]}"); done
    [ $((RANDOM % 4)) -ne 0 ] || args+=(--upload)  # a quarter sent as bytes: uploads/ must be cleaned too
    while ! id=$("$CUZK" submit --socket "$SOCK" --circuit "${CIRCUITS[$c]}" "${args[@]}" \
                   --priority "${PRIO[$((RANDOM % 4))]}" --request-id "soak-$n" 2>>"$WORK/submit_errors.log"); do
      sleep 0.2  # the supervisor is down or restarting: the same request id again
    done
    echo "$id $c $parts" >>"$WORK/jobs.txt"
    sleep "0.$((RANDOM % 5))"
  done
}
submitter &
SUBMITTER=$!

# A fill takes every free byte of a tmpfs, until free_fills (or the next fill of the same one).
fill() { dd if=/dev/zero of="$1" bs=1M 2>/dev/null || true; }
SHM_FILL=/dev/shm/soak-fill DISK_FILL="$WORK/state/soak-fill"
shm_until=0 disk_until=0
free_fills() {
  if [ "$shm_until" -ne 0 ] && [ "${1:-$SECONDS}" -ge "$shm_until" ]; then rm -f "$SHM_FILL"; shm_until=0; fi
  if [ "$disk_until" -ne 0 ] && [ "${1:-$SECONDS}" -ge "$disk_until" ]; then rm -f "$DISK_FILL"; disk_until=0; fi
}

kills_w=0 kills_s=0 stops=0 fills_shm=0 fills_disk=0 exits=0
end=$((SECONDS + SECONDS_TOTAL))
while [ $SECONDS -lt $end ]; do
  sleep "$((1 + RANDOM % 3)).$((RANDOM % 10))"
  free_fills
  if ! kill -0 "$SUP_PID" 2>/dev/null; then  # it exited by itself (a start that found no room)
    wait "$SUP_PID" 2>/dev/null || true
    exits=$((exits + 1))
    sleep 1
    start_supervisor
    continue
  fi
  roll=$((RANDOM % (FILLS ? 12 : 10)))
  if [ $roll -eq 10 ] && [ "$shm_until" -eq 0 ]; then
    fill "$SHM_FILL"
    shm_until=$((SECONDS + 2 + RANDOM % 5)) fills_shm=$((fills_shm + 1))
    continue
  fi
  if [ $roll -eq 11 ] && [ "$disk_until" -eq 0 ]; then
    fill "$DISK_FILL"
    disk_until=$((SECONDS + 2 + RANDOM % 5)) fills_disk=$((fills_disk + 1))
    continue
  fi
  [ $roll -lt 10 ] || continue
  if [ $roll -lt 2 ]; then
    kill -9 "$SUP_PID" 2>/dev/null || true
    wait "$SUP_PID" 2>/dev/null || true
    kills_s=$((kills_s + 1))
    sleep "$((RANDOM % 2)).$((2 + RANDOM % 8))"  # RestartSec
    start_supervisor
    for _ in $(seq 300); do up && break; sleep 0.1; done
    continue
  fi
  up || continue
  pids=($(worker_pids))
  [ ${#pids[@]} -gt 0 ] || continue
  victim=${pids[$((RANDOM % ${#pids[@]}))]}
  if [ $roll -lt 8 ]; then
    kill -9 "$victim" 2>/dev/null && kills_w=$((kills_w + 1)) || true
  else
    kill -STOP "$victim" 2>/dev/null && stops=$((stops + 1)) || true
    sleep "$((RANDOM % 2)).$((RANDOM % 6))"
    kill -CONT "$victim" 2>/dev/null || true
  fi
done
free_fills 999999999
touch "$WORK/stop"
wait "$SUBMITTER"
kill -0 "$SUP_PID" 2>/dev/null || { wait "$SUP_PID" 2>/dev/null || true; start_supervisor; }
for _ in $(seq 300); do up && break; sleep 0.1; done
say "chaos over: $(wc -l <"$WORK/jobs.txt") jobs submitted; waiting for them to finish"

# Every job done exactly once, every proof verified by snarkjs.
lost=0 proofs=0
sort -u -k1,1 "$WORK/jobs.txt" >"$WORK/unique.txt"
[ "$(wc -l <"$WORK/unique.txt")" -eq "$(wc -l <"$WORK/jobs.txt")" ] ||
  { say "LOST: a request id was answered with an id that another request got"; lost=$((lost + 1)); }
: >"$WORK/verify.txt"
while read -r id c parts; do
  if ! "$CUZK" await --socket "$SOCK" --out "$WORK/out/$id" --timeout 600 "$id" >"$WORK/await.log" 2>&1; then
    say "LOST: job $id: $(tail -n 1 "$WORK/await.log")"
    lost=$((lost + 1))
    continue
  fi
  for ((p = 0; p < parts; p++)); do echo "${VK[$c]} $WORK/out/$id/public_$p.json $WORK/out/$id/proof_$p.json"; done >>"$WORK/verify.txt"
  [ ! -e "$WORK/out/$id/proof_$parts.json" ] || { say "LOST: job $id has more proofs than partitions"; lost=$((lost + 1)); }
done <"$WORK/jobs.txt"
if [ -z "$PROOFS" ]; then
  verified=$(verify_list "$WORK/verify.txt" 2>>"$WORK/verify_errors.log")
else
  verified=0
fi
expected=$(wc -l <"$WORK/verify.txt")
[ -n "$PROOFS" ] || [ "$verified" -eq "$expected" ] || { say "LOST: $((expected - verified)) proofs rejected: $(head -3 "$WORK/verify_errors.log")"; lost=$((lost + expected - verified)); }

# Nothing left over once every job is final.
leaked=0
up
busy=$(status_eval 's.slots.filter(x=>x.state!=="free").length + s.queues.jobs_queued + s.queues.jobs_running' \
  'sum(x["state"] != "free" for x in s["slots"]) + s["queues"]["jobs_queued"] + s["queues"]["jobs_running"]')
[ "$busy" -eq 0 ] || { say "LEAKED: $busy slots or jobs still busy"; leaked=$((leaked + busy)); }
left=$(find "$WORK/state/uploads" "$WORK/state/results" "$WORK/state/spool" -mindepth 1 2>/dev/null | wc -l)
[ "$left" -eq 0 ] || { say "LEAKED: $left files under uploads/, spool/ or results/"; leaked=$((leaked + left)); }
# The slot rings /dev/shm/cuzk.<instance>.<random>.dev<N>: a restart removes the killed run's.
segs=$(ls /dev/shm | grep -c "^cuzk\.$INSTANCE\.[0-9a-f]*\.dev" || true)
[ "$segs" -le 1 ] || { say "LEAKED: $segs shared-memory segments for one device"; leaked=$((leaked + segs - 1)); }
orphans=0
for p in $(pgrep -f "cuzk-(synth|gpu)-worker .*--config $CONFIG" || true); do
  [ "$(ps -o ppid= -p "$p" | tr -d ' ')" = "$SUP_PID" ] || orphans=$((orphans + 1))
done
[ "$orphans" -eq 0 ] || { say "LEAKED: $orphans workers outlived their supervisor"; leaked=$((leaked + orphans)); }
kill -TERM "$SUP_PID"
wait "$SUP_PID" || { say "the supervisor exited $? after SIGTERM"; leaked=$((leaked + 1)); }
SUP_PID=""
segs=$(ls /dev/shm | grep -c "^cuzk\.$INSTANCE\." || true)
[ "$segs" -eq 0 ] || { say "LEAKED: $segs shared-memory segments after the stop"; leaked=$((leaked + segs)); }

fills="$((fills_shm + fills_disk)) fills ($fills_shm /dev/shm, $fills_disk disk)"
[ "$FILLS" -eq 1 ] || fills="no fills (not root)"
[ "$exits" -eq 0 ] || fills="$fills, $exits supervisor exits restarted"
proofs="$verified proofs verified by snarkjs"
[ -z "$PROOFS" ] || proofs="$expected proofs to verify (soak.sh verify $(basename "$PROOFS"))"
line="soak: $(wc -l <"$WORK/jobs.txt") jobs, $proofs, $((kills_w + kills_s + stops)) kills"
line+=" ($kills_w workers, $kills_s supervisor, $stops stops), $fills, $lost lost, $leaked leaked (seed $SEED, backend $BACKEND)"
if [ -n "$PROOFS" ]; then  # the proofs and their keys, paths relative to the archive's root
  mkdir -p "$WORK/pack/vk"
  rewrite=()
  for ((c = 0; c < NC; c++)); do
    cp "${VK[$c]}" "$WORK/pack/vk/$c.json"
    rewrite+=(-e "s#${VK[$c]}#vk/$c.json#")
  done
  sed "${rewrite[@]}" -e "s#$WORK/out/#out/#g" "$WORK/verify.txt" >"$WORK/pack/verify.txt"
  echo "$line" >"$WORK/pack/line.txt"
  cp -r "$WORK/out" "$WORK/pack/out"
  tar -C "$WORK/pack" -czf "$PROOFS" .
fi
echo "$line"
[ "$lost" -eq 0 ] && [ "$leaked" -eq 0 ]
