# Helpers for tests of several daemons ("nodes") sharing one PostgreSQL job store on this machine:
# a throwaway server (tests/pg/server.sh), one config, socket, state folder and instance per node,
# and checks over the database and the nodes' timelines. Sourced after lib.sh; skips the test
# (exit 77, saying why) where no PostgreSQL server can start.
PG_DIR="$(mktemp -d /tmp/cuzk-pg.XXXXXX)"
PG_SERVER="$CUZK_SRC/tests/pg/server.sh"
declare -A NODE_PID=()

nodes_cleanup() {
  local rc=$?
  for i in "${!NODE_PID[@]}"; do
    local p="${NODE_PID[$i]}"
    [ -n "$p" ] && kill -9 "$p" 2>/dev/null || true
  done
  sleep 0.2
  for i in "${!NODE_PID[@]}"; do
    pkill -9 -f "cuzk-.*-worker --config $WORK/node$i.toml" 2>/dev/null || true
    rm -f /dev/shm/cuzk."${INSTANCE}n$i".* 2>/dev/null || true
  done
  if [ $rc -ne 0 ] && [ -f "$PG_DIR/data/server.log" ]; then
    echo "--- postgresql log (last 20 lines)" >&2
    tail -n 20 "$PG_DIR/data/server.log" >&2
  fi
  bash "$PG_SERVER" remove "$PG_DIR" >/dev/null 2>&1 || true
  (exit $rc)
  cleanup
}
trap nodes_cleanup EXIT

rc=0
PG_URL="$(bash "$PG_SERVER" start "$PG_DIR")" || rc=$?
if [ $rc -eq 77 ]; then log "skipped: no PostgreSQL server can start here (see above)"; exit $SKIP; fi
[ $rc -eq 0 ] || die "tests/pg/server.sh start failed ($rc)"
PSQL="$(ls /usr/lib/postgresql/*/bin/psql | tail -n 1)"
sql() { "$PSQL" "$PG_URL" -tAqc "$1"; }

nsock() { echo "$WORK/n$1.sock"; }
nconf() { echo "$WORK/node$1.toml"; }

# node_config I SYNTH_WORKERS SLOTS LEASE_MS [extra TOML]: node I's config, sharing the database.
node_config() {
  local i="$1"
  CONFIG="$(nconf "$i")" INSTANCE="${INSTANCE}n$i" SOCK="$(nsock "$i")" write_config "$2" "$3" "${5:-}
[store]
url = \"$PG_URL\"
node_id = \"node$i\"
lease_ms = $4
poll_ms = 100"
  sed -i "s|^state_dir = .*|state_dir = \"$WORK/state$i\"|" "$(nconf "$i")"
}

# start_node I: starts node I in the background and waits until its workers are idle.
start_node() {
  local i="$1"
  "$SUP_BIN" --config "$(nconf "$i")" >>"$WORK/node$i.log" 2>&1 &
  NODE_PID[$i]=$!
  wait_until 60 "node $i: all workers idle" \
    "\"$CUZK_BIN\" status --socket $(nsock "$i") --json 2>/dev/null | node -e \"let s=JSON.parse(require('fs').readFileSync(0,'utf8'));process.exit(s.workers.every(w=>w.state==='idle')?0:1)\" 2>/dev/null"
}

# stop_node I: SIGTERM, and the node exits 0 after draining.
stop_node() {
  local i="$1" p="${NODE_PID[$1]}"
  kill -TERM "$p"
  wait "$p" || die "node $i: exit status $? after SIGTERM (log: $(tail -n 5 "$WORK/node$i.log"))"
  NODE_PID[$i]=""
}

# nstat I EXPR: a value from node I's status JSON (EXPR over s).
nstat() {
  "$CUZK_BIN" status --socket "$(nsock "$1")" --json |
    node -e "let s=JSON.parse(require('fs').readFileSync(0,'utf8')); const v=($2); console.log(typeof v==='object'?JSON.stringify(v):v)"
}
# nmetric I NAME: one sample of node I's /metrics.
nmetric() {
  node "$CUZK_SRC/tests/daemon/raw_client.js" get "$(nsock "$1")" /metrics | node -e "
    const b = JSON.parse(require('fs').readFileSync(0, 'utf8')).body;
    const l = b.split('\n').find((x) => x.startsWith(process.argv[1] + ' '));
    console.log(l ? l.split(' ')[1] : 'absent');" "$2"
}

# submit_to I CIRCUIT WITNESS...: a job through node I; prints its id.
submit_to() {
  local i="$1" circuit="$2"; shift 2
  local args=()
  for w in "$@"; do args+=(--witness "$w"); done
  cz submit --socket "$(nsock "$i")" --circuit "$circuit" "${args[@]}"
}

# all_done: every job in the database is final, and done.
jobs_left() { sql "SELECT count(*) FROM cuzk_jobs WHERE state < 2"; }
check_all_done() {
  local total done_
  total=$(sql "SELECT count(*) FROM cuzk_jobs")
  done_=$(sql "SELECT count(*) FROM cuzk_jobs WHERE state = 2")
  [ "$total" = "$done_" ] || die "$done_ of $total jobs done: $(sql "SELECT id, state, error FROM cuzk_jobs WHERE state <> 2 LIMIT 5")"
  [ "$(sql "SELECT count(*) FROM cuzk_partitions WHERE state <> 4 OR proof = ''")" = 0 ] ||
    die "partitions without a proof in a done job"
}

# check_proved_once NODES...: across the nodes' timelines, no partition has two PROOF_DONE (a result
# is recorded only from the lease holder), and every PROOF_DONE names the node the database says
# proved it. Prints how many partitions each node proved.
check_proved_once() {
  local lines="$WORK/proof_done.txt"
  : >"$lines"
  for i in "$@"; do
    { grep ',PROOF_DONE,' "$WORK/state$i/timeline.log" 2>/dev/null || true; } |
      awk -F, -v n="node$i" '{ for (k = 5; k <= NF; k++) if ($k ~ /^partition=/) { split($k, a, "="); print $4, a[2], n } }' >>"$lines"
  done
  local dup
  dup=$(awk '{ print $1, $2 }' "$lines" | sort | uniq -d | head -n 3)
  [ -z "$dup" ] || die "proved and reported twice (job partition): $dup"
  sql "SELECT job_id, idx, proved_by FROM cuzk_partitions" | tr '|' ' ' | sort >"$WORK/db_proved.txt"
  sort "$lines" >"$WORK/tl_proved.txt"
  # Every timeline PROOF_DONE is the database's record (a node killed by -9 may not have written
  # its last lines, so the timelines may hold fewer).
  local extra
  extra=$(comm -23 "$WORK/tl_proved.txt" "$WORK/db_proved.txt" | head -n 3)
  [ -z "$extra" ] || die "a node logged PROOF_DONE for a partition the database says another node proved: $extra"
  for i in "$@"; do log "node$i proved $(sql "SELECT count(*) FROM cuzk_partitions WHERE proved_by = 'node$i'") partitions"; done
}

# verify_jobs VK N JOB...: awaits each job through some node (round robin over NODES_UP), then
# snarkjs verifies all their proofs in one process.
verify_jobs() {
  local vk="$1" n="$2"; shift 2
  local dirs=() k=0
  for job in "$@"; do
    local i="${NODES_UP[$((k % ${#NODES_UP[@]}))]}"
    k=$((k + 1))
    cz await --socket "$(nsock "$i")" --out "$WORK/out/$job" --timeout 60 "$job" >"$WORK/await.log" 2>&1 ||
      die "job $job through node $i: $(cat "$WORK/await.log")"
    dirs+=("$WORK/out/$job")
  done
  node "$CUZK_SRC/tests/daemon/verify_all.js" "$CUZK_SRC/node_modules/snarkjs" "$vk" "$n" "${dirs[@]}" >"$WORK/verify.log" 2>&1 ||
    die "snarkjs: $(head -n 5 "$WORK/verify.log")"
  log "$(tail -n 1 "$WORK/verify.log")"
}
