#!/usr/bin/env bash
# One daemon per state: a second supervisor given the running one's state_dir, instance or socket
# (any one of them) exits 78 naming the key and the holder's pid, before it touches anything: the
# running daemon's slot ring, job store and socket stay the same files, its jobs carry on and are
# proved. A start that fails after creating its ring (the socket path cannot be bound) leaves no
# segment in /dev/shm.
source "$(dirname "$0")/lib.sh"
require_tools
write_config 1 2
# Test hook: proofs take a while, so that the second starts find partitions in flight.
export CUZK_TEST_PROVE_DELAY_MS=400
start_daemon
ring="/dev/shm/$(cat "$WORK/state/rings").dev0"
ident() { stat -c '%d:%i' "$ring" "$WORK/state/jobs.sqlite" "$SOCK" | tr '\n' ' '; }
before=$(ident)
job=$(submit mult "$W_MULT" "$W_MULT" "$W_MULT" "$W_MULT")

# second NAME SED: a copy of the config changed by SED starts, and must exit 78 naming the key.
second() {
  local name="$1" edit="$2" key="$3" rc=0
  sed "$edit" "$CONFIG" >"$WORK/$name.toml"
  timeout 30 "$SUP_BIN" --config "$WORK/$name.toml" >"$WORK/$name.log" 2>&1 || rc=$?
  [ "$rc" -eq 78 ] || die "$name: the second supervisor exited $rc, want 78: $(cat "$WORK/$name.log")"
  grep -q "$key: .*in use by another cuzk-supervisor (pid $SUP_PID)" "$WORK/$name.log" ||
    die "$name: the refusal does not name $key and pid $SUP_PID: $(cat "$WORK/$name.log")"
  [ "$(ident)" = "$before" ] || die "$name: the running daemon's ring, store or socket was replaced"
  status >/dev/null || die "$name: the running daemon does not answer any more"
  log "$name: refused with exit 78, nothing changed"
}
second same "" "daemon.state_dir"
second state "s|^instance = .*|instance = \"${INSTANCE}b\"|; s|^socket = .*|socket = \"$WORK/b.sock\"|" \
  "daemon.state_dir"
second instance "s|^state_dir = .*|state_dir = \"$WORK/stateb\"|; s|^socket = .*|socket = \"$WORK/b.sock\"|" \
  "daemon.instance"
second socket "s|^state_dir = .*|state_dir = \"$WORK/stateb\"|; s|^instance = .*|instance = \"${INSTANCE}b\"|" \
  "daemon.socket"
[ ! -e "$WORK/stateb/jobs.sqlite" ] || die "a refused start created a job store"
ls /dev/shm | grep -q "^cuzk.${INSTANCE}b\." && die "a refused start left a slot ring"

await_ok "$job" "$WORK/out" "$VK_MULT" 4
no_restarts "a refused second start"

# A start that fails at the socket, after its ring was made: the ring goes with it.
mkdir -p "$WORK/sockdir/taken.sock"
sed "s|^state_dir = .*|state_dir = \"$WORK/statec\"|; s|^instance = .*|instance = \"${INSTANCE}c\"|; \
  s|^socket = .*|socket = \"$WORK/sockdir/taken.sock\"|" "$CONFIG" >"$WORK/c.toml"
rc=0; timeout 30 "$SUP_BIN" --config "$WORK/c.toml" >"$WORK/c.log" 2>&1 || rc=$?
[ "$rc" -eq 78 ] || die "a socket path that is a folder: exit $rc, want 78: $(cat "$WORK/c.log")"
ls /dev/shm | grep -q "^cuzk.${INSTANCE}c\." && die "a failed start left $(ls /dev/shm | grep "^cuzk.${INSTANCE}c\.")"
rm -f /dev/shm/cuzk."${INSTANCE}"b.* /dev/shm/cuzk."${INSTANCE}"c.*

stop_daemon
[ -z "$(ls /dev/shm | grep "cuzk.$INSTANCE\." || true)" ] || die "left in /dev/shm: $(ls /dev/shm | grep "cuzk.$INSTANCE\.")"
log "ok"
