#!/usr/bin/env bash
# Results are answered only to the class of client that submitted the job: a unix socket client by
# its uid, TCP clients (all holders of the token) together; root and the daemon's own user see
# every job. Another client's job is a 404 with the same text as a job that does not exist, for
# GET, long polls and DELETE. Request ids are per client: another client's id names nothing of it
# (the same id makes that client a job of its own), and a client's own id with another body is a
# 409. The rule survives a restart (the submitter is in the job store). Runs clients as two other users: needs root.
# ACCESS_STORE=postgresql runs the same over a shared PostgreSQL store, where the daemon reads the
# submitter from the database on its store thread.
source "$(dirname "$0")/lib.sh"
require_tools
[ "$(id -u)" -eq 0 ] || { log "skipped: needs root to connect as other users"; exit $SKIP; }
STORE_TOML=""
if [ "${ACCESS_STORE:-sqlite}" = postgresql ]; then
  source "$(dirname "$0")/nodes.sh"
  STORE_TOML="[store]
url = \"$PG_URL\"
node_id = \"access\"
lease_ms = 10000
poll_ms = 100"
fi
RAW=(node "$CUZK_SRC/tests/daemon/raw_client.js")
PORT=$((20000 + $$ % 20000))
TOKEN="access-test-token-$$"
write_config 1 2 "$STORE_TOML"
sed -i "/^\[daemon\]/a socket_mode = \"0666\"\ntcp = \"127.0.0.1:$PORT\"\ntoken = \"$TOKEN\"" "$CONFIG"
chmod 755 "$WORK"
install -m 644 "$W_MULT" "$WORK/w.wtns"
start_daemon
if [ -n "$STORE_TOML" ]; then
  "$CUZK_BIN" status --socket "$SOCK" | grep -q "^store postgresql" || die "the daemon is not on the shared store"
fi
A=65534 B=65533
as() { local u="$1"; shift; setpriv --reuid="$u" --regid="$u" --clear-groups "$@"; }
sub() { as "$1" "$CUZK_BIN" submit --socket "$SOCK" --circuit mult --upload --witness "$WORK/w.wtns" "${@:2}"; }
tcp() { "$CUZK_BIN" "$1" --tcp "127.0.0.1:$PORT" --token "$TOKEN" "${@:2}"; }
# get UID PATH: status and body of a GET over the socket as that user
get() { as "$1" node "$CUZK_SRC/tests/daemon/raw_client.js" get "$SOCK" "$2"; }
jget() { node -e "const o=JSON.parse(require('fs').readFileSync(0,'utf8')); console.log(o.$1)"; }

job_a=$(sub $A --request-id shared-key)
job_b=$(sub $B)
job_t=$(tcp submit --circuit mult --upload --witness "$WORK/w.wtns")
log "jobs: $job_a by uid $A, $job_b by uid $B, $job_t over TCP"
# root sees them all, and they are proved
for j in "$job_a" "$job_b" "$job_t"; do await_ok "$j" "$WORK/out_$j" "$VK_MULT" 1; done

check() {
  local who="$1" job="$2" want="$3" got
  got=$(get "$who" "/v1/proofs/$job" | jget status)
  [ "$got" -eq "$want" ] || die "uid $who, job $job: HTTP $got, want $want"
}
check_all() {
  check $A "$job_a" 200; check $A "$job_b" 404; check $A "$job_t" 404
  check $B "$job_b" 200; check $B "$job_a" 404
  tcp await --timeout 5 --out "$WORK/tcp_own" "$job_t" >/dev/null || die "the TCP client cannot read its own job"
  if tcp await --timeout 5 --out "$WORK/tcp_other" "$job_a" >"$WORK/tcp_other.log" 2>&1; then
    die "a TCP client read job $job_a of uid $A"
  fi
  grep -q "no job $job_a" "$WORK/tcp_other.log" || die "TCP, job $job_a: $(cat "$WORK/tcp_other.log")"
}
check_all

# Another client's job reads exactly like one that does not exist.
missing=$((job_b + 1000))
other=$(get $A "/v1/proofs/$job_b" | jget body | sed "s/$job_b/N/g")
none=$(get $A "/v1/proofs/$missing" | jget body | sed "s/$missing/N/g")
[ "$other" = "$none" ] || die "another client's job answers '$other', a missing one '$none'"
[ "$(get $A "/v1/proofs/$job_b?wait=2" | jget status)" -eq 404 ] || die "a long poll reached another client's job"
if as $A "$CUZK_BIN" cancel --socket "$SOCK" "$job_b" >"$WORK/cancel.log" 2>&1; then die "uid $A cancelled job $job_b"; fi
grep -q "no job $job_b" "$WORK/cancel.log" || die "cancel of another client's job: $(cat "$WORK/cancel.log")"

# Request ids: the same client gets its job back; another one's same id is its own new job.
[ "$(sub $A --request-id shared-key)" = "$job_a" ] || die "resubmitting with the same request id made a new job"
job_b2=$(sub $B --request-id shared-key) || die "uid $B could not use an id uid $A uses"
[ "$job_b2" != "$job_a" ] || die "uid $B got job $job_a by its request id"
[ "$(sub $B --request-id shared-key)" = "$job_b2" ] || die "uid $B's own request id does not name its job"
check $B "$job_b2" 200; check $A "$job_b2" 404
if sub $A --request-id shared-key --priority high >"$WORK/clash.log" 2>&1; then die "the same id with another body was accepted"; fi
grep -q "already used by this client for another request" "$WORK/clash.log" ||
  die "the same id with another body: $(cat "$WORK/clash.log")"
grep -q "$job_a" "$WORK/clash.log" && die "the 409 names the job"

# The submitters are stored: the same answers after a restart.
kill -TERM "$SUP_PID"
wait "$SUP_PID" 2>/dev/null || true
start_daemon
check_all
log "ok"
