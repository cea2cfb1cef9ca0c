#!/usr/bin/env bash
# Circuits added and removed while the daemon runs (`cuzk circuit add|list|remove`). A circuit
# added while a job of another is in flight is served at once (its proofs verify), and the job in
# flight finishes undisturbed: no drain, no worker restarted. Only operators may add or remove:
# root on the socket, or daemon.admin_token over TCP; the clients' token and other users get 403.
# Files must lie inside daemon.key_dirs (a symlink out is refused), names are unique, a key larger
# than the slot rings is refused saying why. A removed circuit takes no new jobs and its running
# jobs finish. Runtime circuits survive a restart; one whose files are gone is listed as
# unavailable and the daemon starts without it. CIRCUITS_STORE=postgresql runs a second part over
# a shared store: a circuit added on one node is served by another. Runs a client as another user:
# needs root.
source "$(dirname "$0")/lib.sh"
require_tools
[ "$(id -u)" -eq 0 ] || { log "skipped: needs root to connect as another user"; exit $SKIP; }
if [ "${CIRCUITS_STORE:-sqlite}" = postgresql ]; then source "$(dirname "$0")/nodes.sh"; fi

KEYS="$WORK/keys"
chmod 755 "$WORK"  # the other user reaches the socket
mkdir -p "$KEYS"
cp "$CIRC/chain_pow2/circuit.zkey" "$KEYS/chain.zkey"
cp "$CIRC/multiplier/circuit.zkey" "$KEYS/mult.zkey"
cp "$CIRC/poseidon_merkle/circuit.zkey" "$KEYS/poseidon.zkey"
ln -s "$CIRC/multiplier/circuit.zkey" "$KEYS/outside.zkey"
PORT=$((20000 + $$ % 20000))
TOKEN="circuits-client-$$" ADMIN="circuits-admin-$$"

# only_circuits NAME...: drops the other [[circuits]] entries of $CONFIG.
only_circuits() {
  CONFIG="$CONFIG" node -e '
    const fs = require("fs"), f = process.env.CONFIG, keep = process.argv.slice(1);
    const blocks = fs.readFileSync(f, "utf8").split(/(?=^\[)/m);
    fs.writeFileSync(f, blocks.filter((b) => !b.startsWith("[[circuits]]") ||
      keep.some((k) => b.includes(`name = "${k}"`))).join(""));' "$@"
}
# circuits_config NAME...: one synthesis worker, those circuits, key_dirs, TCP with both tokens.
circuits_config() {
  write_config 1 3 "${STORE_TOML:-}"
  only_circuits "$@"
  sed -i "/^\[daemon\]/a socket_mode = \"0666\"\nkey_dirs = [\"$KEYS\"]\ntcp = \"127.0.0.1:$PORT\"\ntoken = \"$TOKEN\"\nadmin_token = \"$ADMIN\"" "$CONFIG"
}
add() { cz circuit add --socket "$SOCK" "$@"; }
tcp() { "$CUZK_BIN" "${@:2}" --tcp "127.0.0.1:$PORT" --token "$1"; }  # tcp TOKEN ARGS...
# refused WHY RC TEXT COMMAND...: the command fails with exit RC, saying TEXT.
refused() {
  local why="$1" want="$2" text="$3" rc=0
  shift 3
  "$@" >"$WORK/refused.out" 2>&1 || rc=$?
  [ "$rc" -eq "$want" ] || die "$why: exit $rc, not $want: $(cat "$WORK/refused.out")"
  grep -qF -- "$text" "$WORK/refused.out" || die "$why: the error does not say '$text': $(cat "$WORK/refused.out")"
}
listed() { cz circuit list --socket "$SOCK" --json | node -e "
  const l = JSON.parse(require('fs').readFileSync(0, 'utf8')).circuits; const v = ($1);
  console.log(typeof v === 'object' ? JSON.stringify(v) : v)"; }

if [ "${CIRCUITS_STORE:-sqlite}" = sqlite ]; then
  # A key larger than the slot rings (sized for mult alone) is refused, saying what it needs; with
  # gpu.slot_vars and gpu.slot_domain at that, the rings have room for it.
  circuits_config mult
  start_daemon
  refused "a key larger than the rings" 2 "raise gpu.slot_vars and gpu.slot_domain" \
    add --name poseidon --zkey "$KEYS/poseidon.zkey"
  read -r vars domain < <(sed -n 's/.*needs slots for \([0-9]*\) variables and a domain of \([0-9]*\);.*/\1 \2/p' "$WORK/refused.out")
  [ -n "$vars" ] && [ -n "$domain" ] || die "the refusal does not say what poseidon needs: $(cat "$WORK/refused.out")"
  stop_daemon
  rm -rf "$WORK/state"
  sed -i "s/^threads = 1\$/threads = 1\nslot_vars = $vars\nslot_domain = $domain/" "$CONFIG"
  start_daemon
  add --name poseidon --zkey "$KEYS/poseidon.zkey" >/dev/null || die "poseidon did not fit rings with room for it"
  await_ok "$(submit poseidon "$W_POSEIDON")" "$WORK/out_room" "$VK_POSEIDON" 1
  stop_daemon
  rm -rf "$WORK/state"
  log "the slot rings: a larger key refused, then served with gpu.slot_vars and gpu.slot_domain"

  circuits_config poseidon
  CUZK_TEST_SYNTH_DELAY_MS=1000 start_daemon
  log_from=$(($(wc -l <"$WORK/sup.log") + 1))
  # In flight: a poseidon job of 4 partitions, one synthesis worker, 1 s each.
  job_p=$(submit poseidon "$W_POSEIDON" "$W_POSEIDON" "$W_POSEIDON" "$W_POSEIDON")
  add --name chain --zkey "$KEYS/chain.zkey" >"$WORK/add.out" || die "add chain: $(cat "$WORK/add.out")"
  grep -q "circuit chain added: " "$WORK/add.out" || die "add chain said: $(cat "$WORK/add.out")"
  job_c=$(submit chain "$W_CHAIN")
  await_ok "$job_c" "$WORK/out_c" "$VK_CHAIN" 1
  await_ok "$job_p" "$WORK/out_p" "$VK_POSEIDON" 4
  no_restarts "adding a circuit"
  ! tail -n +"$log_from" "$WORK/sup.log" | grep -q "draining" || die "adding a circuit drained the daemon"
  added_at=$(timeline | grep -n ',CIRCUIT_ADD,' | head -1 | cut -d: -f1)
  done_at=$(timeline | grep -n ",JOB_DONE,$job_p," | cut -d: -f1)
  [ -n "$added_at" ] && [ -n "$done_at" ] && [ "$added_at" -lt "$done_at" ] ||
    die "chain was not added while job $job_p was in flight (CIRCUIT_ADD at line ${added_at:-none}, its JOB_DONE at ${done_at:-none})"
  log "chain added while job $job_p was in flight; both proved"

  # Who may, and what.
  refused "a second chain" 2 "exists already" add --name chain --zkey "$KEYS/chain.zkey"
  refused "a configured name" 2 "exists already" add --name poseidon --zkey "$KEYS/poseidon.zkey"
  refused "a key outside key_dirs" 77 "is not inside daemon.key_dirs" add --name m2 --zkey "$CIRC/multiplier/circuit.zkey"
  refused "a symlink out of key_dirs" 77 "is not inside daemon.key_dirs" add --name m2 --zkey "$KEYS/outside.zkey"
  echo "not a key" >"$KEYS/bad.zkey"
  refused "a file that is not a key" 2 "is not a zkey file" add --name m2 --zkey "$KEYS/bad.zkey"
  refused "another user" 77 "for operators" \
    setpriv --reuid=65534 --regid=65534 --clear-groups "$CUZK_BIN" circuit add --socket "$SOCK" --name m2 --zkey "$KEYS/mult.zkey"
  refused "the clients' token" 77 "for operators" tcp "$TOKEN" circuit add --name m2 --zkey "$KEYS/mult.zkey"
  refused "a configured circuit removed" 2 "is in the config file" cz circuit remove --socket "$SOCK" poseidon
  refused "an unknown circuit removed" 2 "no circuit 'nope'" cz circuit remove --socket "$SOCK" nope
  [ "$(listed "l.map((c) => c.name + ':' + c.source + ':' + c.state).join(',')")" = "poseidon:config:serving,chain:runtime:serving" ] ||
    die "circuit list: $(listed l)"
  [ "$(tcp "$TOKEN" circuit list --json | node -e "console.log(JSON.parse(require('fs').readFileSync(0,'utf8')).circuits.some(c => c.files))")" = false ] ||
    die "a client that is not an operator sees the circuits' files"

  # The admin token over TCP adds; a removed circuit takes no new jobs and lets its running ones finish.
  tcp "$ADMIN" circuit add --name mult --zkey "$KEYS/mult.zkey" >/dev/null || die "the admin token could not add mult"
  job_m=$(submit mult "$W_MULT" "$W_MULT")
  cz circuit remove --socket "$SOCK" mult >"$WORK/remove.out" || die "remove mult: $(cat "$WORK/remove.out")"
  grep -q "circuit mult removed" "$WORK/remove.out" || die "remove said: $(cat "$WORK/remove.out")"
  refused "a job of a removed circuit" 2 "unknown circuit 'mult'" submit mult "$W_MULT"
  refused "a name whose removed circuit has jobs" 2 "jobs of the removed circuit 'mult' are unfinished" \
    add --name mult --zkey "$KEYS/chain.zkey"
  await_ok "$job_m" "$WORK/out_m" "$VK_MULT" 2
  timeline | grep -q ',CIRCUIT_REMOVE,.*circuit=mult' || die "no CIRCUIT_REMOVE on the timeline"
  no_restarts "adding and removing circuits"
  log "mult added over TCP with the admin token, removed with a job in flight, which finished"

  # A restart keeps chain, not mult; added again, mult comes back at a new index.
  stop_daemon
  start_daemon
  [ "$(listed "l.map((c) => c.name).join(',')")" = "poseidon,chain" ] || die "after a restart: $(listed l)"
  job_c=$(submit chain "$W_CHAIN")
  await_ok "$job_c" "$WORK/out_c2" "$VK_CHAIN" 1
  add --name mult --zkey "$KEYS/mult.zkey" >/dev/null || die "mult could not be added again"
  job_m=$(submit mult "$W_MULT")
  await_ok "$job_m" "$WORK/out_m2" "$VK_MULT" 1
  log "chain kept over a restart; mult added again"

  # chain's key gone: after a restart it is listed unavailable, saying why, and can be removed.
  stop_daemon
  rm "$KEYS/chain.zkey"
  start_daemon
  [ "$(listed "l.find((c) => c.name === 'chain').state")" = unavailable ] || die "chain without its key: $(listed l)"
  listed "l.find((c) => c.name === 'chain').error" | grep -q "chain.zkey" || die "chain's error: $(listed l)"
  ! tcp "$TOKEN" circuit list --json | grep -q "chain.zkey" || die "a client that is not an operator sees chain's files"
  refused "a job of an unavailable circuit" 2 "unknown circuit 'chain'" submit chain "$W_CHAIN"
  cz circuit remove --socket "$SOCK" chain >/dev/null || die "an unavailable circuit could not be removed"
  [ "$(listed "l.map((c) => c.name).join(',')")" = "poseidon,mult" ] || die "after removing chain: $(listed l)"
  stop_daemon
  log "ok"
  exit 0
fi

# A shared store: added on node 1, served by node 2 too once its key_dirs hold the files (node 2
# starts while they are away, lists the circuit unavailable, and takes it up when they come back),
# and a job submitted through node 1 is proved by both; removed on node 2, node 1 stops taking
# jobs for it.
for i in 1 2; do
  node_config "$i" 1 3 10000
  CONFIG="$(nconf "$i")" only_circuits poseidon
  sed -i "/^\[daemon\]/a key_dirs = [\"$KEYS\"]" "$(nconf "$i")"
done
CUZK_TEST_SYNTH_DELAY_MS=300 start_node 1  # slow enough that both nodes claim
cz circuit add --socket "$(nsock 1)" --name mult --zkey "$KEYS/mult.zkey" >/dev/null || die "node 1 could not add mult"
mv "$KEYS/mult.zkey" "$KEYS/mult.away"
CUZK_TEST_SYNTH_DELAY_MS=300 start_node 2
cz circuit list --socket "$(nsock 2)" >"$WORK/list2.txt"
grep -q "^mult .*unavailable" "$WORK/list2.txt" || die "node 2 without mult's key: $(cat "$WORK/list2.txt")"
mv "$KEYS/mult.away" "$KEYS/mult.zkey"
wait_until 30 "node 2 serves mult once its key is back" "cz circuit list --socket $(nsock 2) | grep -q '^mult .*serving'"
jobs=()
for k in 1 2 3 4 5 6; do jobs+=("$(SOCK="$(nsock 1)" submit mult "$W_MULT" "$W_MULT")"); done
for j in "${jobs[@]}"; do SOCK="$(nsock 1)" await_ok "$j" "$WORK/out_n$j" "$VK_MULT" 2; done
[ "$(sql "SELECT count(DISTINCT proved_by) FROM cuzk_partitions p JOIN cuzk_jobs j ON j.id = p.job_id WHERE j.circuit = 'mult'")" = 2 ] ||
  die "mult's partitions were not proved by both nodes: $(sql "SELECT proved_by, count(*) FROM cuzk_partitions GROUP BY 1")"
# A refused submission on a shared store is answered and the node stays up (the refusal used to
# be answered through a responder already handed on: a crash).
refused "an unknown circuit on a shared store" 2 "unknown circuit 'nope'" \
  cz submit --socket "$(nsock 1)" --circuit nope --witness "$W_MULT"
kill -0 "${NODE_PID[1]}" || die "node 1 died answering a refused submission"
# Removed and added again with another key on node 2, between two of node 1's looks: node 1
# notices by when the store got the entry, not by its name, and serves the new key.
serving_vars() {
  cz circuit list --socket "$(nsock "$1")" --json | node -e "
    const l = JSON.parse(require('fs').readFileSync(0, 'utf8')).circuits;
    console.log((l.find((c) => c.name === 'mult' && c.state === 'serving') || {}).n_vars)"
}
old_vars=$(serving_vars 1)
cz circuit remove --socket "$(nsock 2)" mult >/dev/null || die "node 2 could not remove mult"
cz circuit add --socket "$(nsock 2)" --name mult --zkey "$KEYS/chain.zkey" >/dev/null || die "node 2 could not add mult again"
new_vars=$(serving_vars 2)
[ "$new_vars" != "$old_vars" ] || die "mult's new key has the old one's size ($new_vars): the test proves nothing"
wait_until 20 "node 1 serves mult's new key" "[ \"\$(serving_vars 1)\" = $new_vars ]"
cz circuit remove --socket "$(nsock 2)" mult >/dev/null || die "node 2 could not remove mult"
wait_until 20 "node 1 takes no mult jobs" "! SOCK=$(nsock 1) submit mult $W_CHAIN >/dev/null 2>&1"
for i in 1 2; do stop_node "$i"; done
log "ok"
