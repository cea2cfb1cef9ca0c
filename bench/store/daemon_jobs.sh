#!/usr/bin/env bash
# A daemon on the cpu backend (the multiplier circuit of the e2e fixtures, one synthesis worker)
# under CLIENTS clients submitting JOBS single-partition jobs through the HTTP API
# (bench/store/http_jobs.js); prints their line and the supervisor's CPU time per job.
#   bash bench/store/daemon_jobs.sh [CLIENTS] [JOBS]      (BUILD_DIR: default build)
set -euo pipefail
src="$(cd "$(dirname "$0")/../.." && pwd)"
build="${BUILD_DIR:-$src/build}"
clients="${1:-16}" jobs="${2:-2000}"
circ="$build/e2e/circuits/multiplier" wtns="$build/e2e/cases/multiplier/witness.wtns"
work="$(mktemp -d /tmp/cuzk-jobs-bench.XXXXXX)"
sup=""
trap '[ -z "$sup" ] || kill "$sup" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
cat >"$work/cuzk.toml" <<TOML
[daemon]
instance = "jb$$"
state_dir = "$work/state"
socket = "$work/cuzk.sock"
[synthesis]
workers = 1
[gpu]
backend = "cpu"
devices = [0]
slots = 4
threads = 1
[[circuits]]
name = "mult"
zkey = "$circ/circuit.zkey"
[limits]
max_connections = 256
TOML
"$build/bin/cuzk-supervisor" --config "$work/cuzk.toml" >"$work/sup.log" 2>&1 &
sup=$!
for _ in $(seq 600); do
  "$build/bin/cuzk" status --socket "$work/cuzk.sock" --json 2>/dev/null |
    node -e 'const s=JSON.parse(require("fs").readFileSync(0,"utf8")); process.exit(s.workers.every(w=>w.state==="idle")?0:1)' 2>/dev/null &&
    break
  sleep 0.1
done
ticks() { awk '{print $14 + $15}' "/proc/$sup/stat"; }
hz=$(getconf CLK_TCK)
before=$(ticks)
node "$src/bench/store/http_jobs.js" "$work/cuzk.sock" mult "$wtns" "$clients" "$jobs"
after=$(ticks)
echo "supervisor cpu: $(( (after - before) * 1000000 / hz / jobs )) us/job ($(( after - before )) ticks of 1/$hz s)"
