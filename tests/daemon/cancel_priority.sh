#!/usr/bin/env bash
# Priorities: with one synthesis worker and one slot, a critical job submitted last overtakes the
# queued normal ones; a client that is not an operator may not ask for more than
# daemon.max_client_priority. Cancel: a queued job and a running job are both really cancelled,
# their slots come back, and the daemon goes on proving the rest.
source "$(dirname "$0")/lib.sh"
require_tools
PORT=$((20000 + $$ % 20000))
TOKEN="prio-client-$$" ADMIN="prio-admin-$$"
write_config 1 1
sed -i "/^\[daemon\]/a tcp = \"127.0.0.1:$PORT\"\ntoken = \"$TOKEN\"\nadmin_token = \"$ADMIN\"" "$CONFIG"
tcp() { "$CUZK_BIN" "${@:2}" --tcp "127.0.0.1:$PORT" --token "$1"; }  # tcp TOKEN ARGS...
export CUZK_TEST_SYNTH_DELAY_MS=400
start_daemon

a=$(submit chain "$W_CHAIN" "$W_ZERO")
b=$(submit chain "$W_CHAIN" "$W_ZERO")
c=$(submit chain "$W_CHAIN" "$W_ZERO")
d=$(submit mult "$W_MULT" -- --priority critical)
await_ok "$d" "$WORK/outd" "$VK_MULT" 1
await_ok "$b" "$WORK/outb" "$VK_CHAIN" 2
tl="$WORK/state/timeline.log"
sleep 0.6
# The critical job's synthesis started before any partition of b and c.
first_d=$(grep -n ",SYNTH_START,$d," "$tl" | head -1 | cut -d: -f1)
first_c=$(grep -n ",SYNTH_START,$c," "$tl" | head -1 | cut -d: -f1 || true)
first_b=$(grep -n ",SYNTH_START,$b," "$tl" | head -1 | cut -d: -f1)
[ -n "$first_d" ] && [ "$first_d" -lt "$first_b" ] || die "critical job $d did not overtake normal job $b"
[ -z "$first_c" ] || [ "$first_d" -lt "$first_c" ] || die "critical job $d did not overtake normal job $c"
await_ok "$c" "$WORK/outc" "$VK_CHAIN" 2
await_ok "$a" "$WORK/outa" "$VK_CHAIN" 2

# Cancel a queued job (behind a long one) and the running one.
export_delay_job=$(submit poseidon "$W_POSEIDON" "$W_POSEIDON" "$W_POSEIDON")
queued=$(submit chain "$W_CHAIN")
wait_until 30 "synth0 busy on $export_delay_job" "[ \"\$(jstat 's.workers[0].job')\" = $export_delay_job ]"
cz cancel --socket "$SOCK" "$queued" || die "cancel of queued job $queued failed"
cz cancel --socket "$SOCK" "$export_delay_job" || die "cancel of running job $export_delay_job failed"
if cz cancel --socket "$SOCK" "$queued" 2>"$WORK/cancel2.log"; then die "cancelling twice succeeded"; fi
set +e
cz await --socket "$SOCK" --out "$WORK/outx" --timeout 30 "$export_delay_job" >"$WORK/awaitx.log" 2>&1
rc=$?
set -e
[ $rc -ne 0 ] || die "await of a cancelled job exited 0"
grep -qi cancel "$WORK/awaitx.log" || die "await does not say the job was cancelled: $(cat "$WORK/awaitx.log")"
# Everything it held is released, and the daemon still proves.
wait_until 20 "slots free and workers idle" "jstat \"s.devices[0].free===1 && s.workers.every(w=>w.state==='idle')\" | grep -qx true"
e=$(submit mult "$W_MULT")
await_ok "$e" "$WORK/oute" "$VK_MULT" 1
! grep -q ",GPU_START,$queued," "$tl" || die "the cancelled queued job was proved"

# critical is the operators' (daemon.max_client_priority = "high" by default): the daemon's own
# user on the socket was one above; a TCP client with the clients' token is refused naming the
# field, and may ask for high; the admin token may ask for critical.
set +e
tcp "$TOKEN" submit --circuit mult --witness "$W_MULT" --upload --priority critical >"$WORK/prio.log" 2>&1
rc=$?
set -e
[ $rc -eq 77 ] || die "critical from a client that is not an operator: exit $rc, not 77: $(cat "$WORK/prio.log")"
grep -qF "priority: 'critical' is for operators; other clients may ask for at most 'high' (daemon.max_client_priority)" "$WORK/prio.log" ||
  die "critical from a client: the refusal does not name the field: $(cat "$WORK/prio.log")"
h=$(tcp "$TOKEN" submit --circuit mult --witness "$W_MULT" --upload --priority high) || die "high from a client was refused"
k=$(tcp "$ADMIN" submit --circuit mult --witness "$W_MULT" --upload --priority critical) ||
  die "critical with the admin token was refused"
await_ok "$h" "$WORK/outh" "$VK_MULT" 1
await_ok "$k" "$WORK/outk" "$VK_MULT" 1
log "ok"
