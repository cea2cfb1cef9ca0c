#!/usr/bin/env bash
# A full /dev/shm at start (a small tmpfs in a private mount namespace): the supervisor waits for
# room, saying so, instead of exiting into a restart loop, and starts and proves once room is back;
# a slot ring larger than all of /dev/shm is a configuration error (exit 78, never respawned).
if [ -z "${SHM_NS:-}" ] && [ "$(id -u)" -eq 0 ] && unshare --mount --propagation private true 2>/dev/null; then
  exec env SHM_NS=1 unshare --mount --propagation private bash "$0" "$@"
fi
source "$(dirname "$0")/lib.sh"
require_tools
if [ -z "${SHM_NS:-}" ] || ! mount -t tmpfs -o size=8m cuzk-test-shm /dev/shm 2>/dev/null; then
  log "skipped: a private /dev/shm needs root and a mount namespace"
  exit $SKIP
fi
write_config 1 2
fill() { dd if=/dev/zero of=/dev/shm/fill bs=64k >/dev/null 2>&1 || true; }

# 1. /dev/shm full at the first start: the supervisor waits, then starts once room is freed.
fill
"$SUP_BIN" --config "$CONFIG" >>"$WORK/sup.log" 2>&1 &
SUP_PID=$!
wait_until 30 "waiting for room" "grep -q 'waiting for room in /dev/shm before starting' '$WORK/sup.log'"
sleep 3
kill -0 "$SUP_PID" 2>/dev/null || die "the supervisor exited on a full /dev/shm"
grep -q "free of 8.0 MiB, the slot ring cuzk\.$INSTANCE\.[0-9a-f]*\.dev0 needs" "$WORK/sup.log" ||
  die "the log does not say what the ring needs and what is free"
rm -f /dev/shm/fill
wait_until 60 "the daemon started once room was back" "jstat \"s.workers.every(w=>w.state==='idle')\" 2>/dev/null | grep -qx true"
grep -q "room in /dev/shm is back" "$WORK/sup.log" || die "the return of room was not logged"
job=$(submit mult "$W_MULT")
await_ok "$job" "$WORK/out1" "$VK_MULT" 1
kill -TERM "$SUP_PID"
wait "$SUP_PID" || die "supervisor exited $? after SIGTERM"
SUP_PID=""

# 2. A ring that can never fit: exit 78 naming gpu.slots, at once.
mount -o remount,size=64k /dev/shm || die "cannot shrink the test's /dev/shm"
write_config 1 1024
set +e
timeout 30 "$SUP_BIN" --config "$CONFIG" >"$WORK/big.log" 2>&1
rc=$?
set -e
[ $rc -eq 78 ] || die "a ring larger than /dev/shm: exit $rc, want 78: $(tail -3 "$WORK/big.log")"
grep -q "gpu.slots" "$WORK/big.log" && grep -q "/dev/shm is smaller than the ring" "$WORK/big.log" ||
  die "the error does not name gpu.slots and the size: $(tail -3 "$WORK/big.log")"
[ -z "$(ls /dev/shm)" ] || die "segments left in /dev/shm: $(ls /dev/shm)"
log "ok"
