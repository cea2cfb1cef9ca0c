#!/usr/bin/env bash
# No other local user can keep the daemon from starting by making its names first. As nobody, the
# test makes every name in /dev/shm a daemon of this instance could be expected to use: the lock
# file /dev/shm/cuzk.<instance>.lock (holding a flock on it and a forged pid), and slot rings
# /dev/shm/cuzk.<instance>.dev0 and .dev1 (one of them world-writable, for a daemon that would map it).
# The daemon starts anyway, proves a job, never maps, removes or changes those files, and its own
# ring is private (mode 0600) under a name with a random part kept in the state folder.
source "$(dirname "$0")/lib.sh"
require_tools
[ "$(id -u)" -eq 0 ] || { log "skipped: needs root to act as another user (nobody)"; exit $SKIP; }
command -v setpriv >/dev/null 2>&1 || { log "skipped: no setpriv"; exit $SKIP; }
as_nobody() { setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups "$@"; }

lock="/dev/shm/cuzk.$INSTANCE.lock"
squat=("$lock" "/dev/shm/cuzk.$INSTANCE.dev0" "/dev/shm/cuzk.$INSTANCE.dev1")
as_nobody sh -c "echo 1 >'$lock'; head -c 65536 /dev/zero >'${squat[1]}'; : >'${squat[2]}'; chmod 666 '${squat[1]}'" ||
  die "nobody cannot make files in /dev/shm"
# The flock is held by a process of nobody's for the whole test.
setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups sh -c "exec 9<>'$lock'; flock 9; exec sleep 300" \
  </dev/null >/dev/null 2>&1 &
HOLDER=$!
trap 'rc=$?; kill "$HOLDER" 2>/dev/null || true; set +e; (exit $rc); cleanup' EXIT
wait_until 10 "nobody's flock on $lock" "! flock -n '$lock' true"
sums() { for f in "${squat[@]}"; do stat -c '%U %a %s %Y' "$f"; md5sum <"$f"; done; }
before=$(sums)

write_config 1 2
start_daemon
job=$(submit mult "$W_MULT" "$W_MULT" "$W_MULT")
await_ok "$job" "$WORK/out" "$VK_MULT" 3

# The ring: named in the state folder, owned by the daemon's user, readable by no one else.
[ -f "$WORK/state/rings" ] || die "no record of the rings' names in the state folder"
prefix=$(cat "$WORK/state/rings")
[[ "$prefix" =~ ^cuzk\.$INSTANCE\.[0-9a-f]{16}$ ]] || die "the rings' name '$prefix' has no random part"
ring="/dev/shm/$prefix.dev0"
[ "$(stat -c '%U %a' "$ring")" = "root 600" ] || die "the ring $ring is $(stat -c '%U %a' "$ring"), want root 600"
[ "$(sums)" = "$before" ] || die "the daemon changed nobody's files in /dev/shm"

# A restart (kill -9, then start) removes the killed run's ring and makes one under a new name.
kill -9 "$SUP_PID"
wait "$SUP_PID" 2>/dev/null || true
sleep 0.3
start_daemon
prefix2=$(cat "$WORK/state/rings")
[ "$prefix2" != "$prefix" ] || die "a restart kept the ring's name $prefix"
[ ! -e "$ring" ] || die "the killed run's ring $ring was not removed"
job=$(submit mult "$W_MULT")
await_ok "$job" "$WORK/out2" "$VK_MULT" 1
stop_daemon
[ -z "$(ls /dev/shm | grep "^$prefix2\." || true)" ] || die "a clean stop left $(ls /dev/shm | grep "^$prefix2\.")"
[ "$(sums)" = "$before" ] || die "the daemon changed nobody's files in /dev/shm"
kill "$HOLDER" 2>/dev/null || true
log "ok"
