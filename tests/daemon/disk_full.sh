#!/usr/bin/env bash
# A full disk under state_dir (a small tmpfs): submissions get 503 naming it, the daemon stays up,
# a job accepted before finishes once space is back, and a supervisor restarted while the disk is
# still full comes up (no exit, so no restart loop) and takes jobs again when space returns; a
# first start on a full disk waits for space and then starts.
source "$(dirname "$0")/lib.sh"
require_tools
STATE="$WORK/state"
mkdir -p "$STATE"
if [ "$(id -u)" -ne 0 ] || ! mount -t tmpfs -o size=6m tmpfs "$STATE" 2>/dev/null; then
  log "skipped: mounting a tmpfs needs root (CAP_SYS_ADMIN)"
  exit $SKIP
fi
trap 'rc=$?; [ -z "$SUP_PID" ] || kill -9 "$SUP_PID" 2>/dev/null; sleep 0.3; umount -l "$STATE" 2>/dev/null; (exit $rc); cleanup' EXIT
write_config 1 1
export CUZK_TEST_PROVE_DELAY_MS=2000
start_daemon
fill() { dd if=/dev/zero of="$STATE/fill" bs=64k >/dev/null 2>&1 || true; sync; }
expect_503() {
  set +e; cz submit --socket "$SOCK" --circuit mult --witness "$W_MULT" --upload >"$WORK/full.log" 2>&1; local rc=$?; set -e
  [ $rc -eq 75 ] && grep -qF "the disk under daemon.state_dir ($STATE) is full" "$WORK/full.log" ||
    die "submission on a full disk: rc $rc, want 75 (503) naming state_dir: $(cat "$WORK/full.log")"
}

# 1. A job in flight when the disk fills: its proof's files cannot be written, it waits, and it
# finishes with a valid proof once space is back.
job=$(submit mult "$W_MULT")
wait_until 30 "gpu0 busy" "[ \"\$(state_of gpu0)\" = busy ]"
fill
expect_503
sleep 3
kill -0 "$SUP_PID" || die "the supervisor died on a full disk"
[ "$(jstat "s.state")" = running ] || die "the daemon is not running"
grep -q "is full" "$WORK/sup.log" || die "the full disk was not logged"
rm -f "$STATE/fill"
await_ok "$job" "$WORK/out1" "$VK_MULT" 1
wait_until 10 "space noticed" "grep -q 'is back' '$WORK/sup.log'"
job=$(submit mult "$W_MULT" -- --upload)
await_ok "$job" "$WORK/out2" "$VK_MULT" 1

# 2. kill -9 while the disk is full, and start again as systemd would: the supervisor comes up,
# refuses jobs with 503, and takes them again once space is back; nothing accepted is lost.
job=$(submit mult "$W_MULT")
fill
kill -9 "$SUP_PID"
wait "$SUP_PID" 2>/dev/null || true
SUP_PID=""
"$SUP_BIN" --config "$CONFIG" >>"$WORK/sup.log" 2>&1 &
SUP_PID=$!
wait_until 60 "the restarted daemon answers" "status >/dev/null 2>&1"
expect_503
sleep 2
kill -0 "$SUP_PID" || die "the supervisor restarted on a full disk exited"
rm -f "$STATE/fill"
await_ok "$job" "$WORK/out3" "$VK_MULT" 1
job=$(submit mult "$W_MULT" -- --upload)
await_ok "$job" "$WORK/out4" "$VK_MULT" 1

# 3. A first start on a full disk (no job store yet, so nothing to open without space): the
# supervisor waits for space, saying so, instead of exiting; it starts once space is freed.
kill -TERM "$SUP_PID"
wait "$SUP_PID" || die "supervisor exited $? after SIGTERM"
sed -i "s#^state_dir = .*#state_dir = \"$STATE/fresh\"#" "$CONFIG"
fill
"$SUP_BIN" --config "$CONFIG" >>"$WORK/sup.log" 2>&1 &
SUP_PID=$!
wait_until 30 "waiting for space" "grep -q 'waiting for space before starting' '$WORK/sup.log'"
sleep 3
kill -0 "$SUP_PID" 2>/dev/null || die "the supervisor exited on a full disk at its first start"
rm -f "$STATE/fill"
wait_until 60 "the daemon started once space was back" "status >/dev/null 2>&1"
job=$(submit mult "$W_MULT" -- --upload)
await_ok "$job" "$WORK/out5" "$VK_MULT" 1
log "ok"
