#!/usr/bin/env bash
# A state folder that cannot be written for another reason than space (here uploads/ or results/
# made read-only by a bind mount in a private mount namespace) is the daemon's fault, as a full disk
# is: a submission gets 503 saying the folder cannot be written, without the system's message (that
# is in the log); an accepted job whose results cannot be written keeps its attempts and is proved
# once the folder can be written again. Needs root and unshare(1).
if [ -z "${CUZK_IN_MOUNT_NS:-}" ]; then
  if [ "$(id -u)" -ne 0 ] || ! unshare -m true 2>/dev/null; then
    echo "[daemon] skipped: needs root and a private mount namespace"
    exit 77
  fi
  exec unshare -m env CUZK_IN_MOUNT_NS=1 bash "$0" "$@"
fi
source "$(dirname "$0")/lib.sh"
require_tools
mount --make-rprivate /
write_config 1 2
start_daemon
ro() { mount --bind "$1" "$1" && mount -o remount,bind,ro "$1"; }
unwritable_logged() { grep -c "daemon.state_dir (.*) cannot be written: .*Read-only file system" "$WORK/sup.log" || true; }
writable_logged() { grep -c "can be written again" "$WORK/sup.log" || true; }

# 1. uploads/ read-only: an upload is refused with 503, the reason only in the log.
ro "$WORK/state/uploads"
rc=0; cz submit --socket "$SOCK" --circuit mult --upload --witness "$W_MULT" >"$WORK/up.log" 2>&1 || rc=$?
[ "$rc" -eq 75 ] || die "an upload into a read-only uploads/: exit $rc, want 75 (503): $(cat "$WORK/up.log")"
grep -q "cannot be written (the daemon's log says why)" "$WORK/up.log" || die "the 503 does not say why: $(cat "$WORK/up.log")"
grep -qi "read-only\|errno\|$WORK/state/uploads/" "$WORK/up.log" && die "the 503 quotes the filesystem: $(cat "$WORK/up.log")"
[ "$(unwritable_logged)" -ge 1 ] || die "the read-only folder was not logged with its reason"
umount "$WORK/state/uploads"
wait_until 10 "writes noticed again" "[ \$(writable_logged) -ge 1 ]"
job=$(submit mult "$W_MULT")
await_ok "$job" "$WORK/out1" "$VK_MULT" 1
log "read-only uploads/: 503 without the system's message; accepted again once writable"

# 2. results/ read-only: an accepted job is held with its attempts, and proved afterwards.
ro "$WORK/state/results"
job=$(submit mult "$W_MULT" "$W_MULT")
wait_until 20 "the unwritable results logged" "[ \$(unwritable_logged) -ge 2 ]"
sleep 2
jstat "s" >/dev/null
state=$(cz await --socket "$SOCK" --out "$WORK/early" --timeout 1 "$job" >/dev/null 2>&1; echo $?)
[ "$state" -eq 124 ] || die "the job did not wait while results/ was read-only (await exited $state)"
umount "$WORK/state/results"
await_ok "$job" "$WORK/out2" "$VK_MULT" 2
grep -q "job $job.*failed" "$WORK/sup.log" && die "job $job had a failure logged while results/ was read-only"
no_restarts "an unwritable folder"
log "read-only results/: the job was held and proved once writable, no attempt spent"

stop_daemon
log "ok"
