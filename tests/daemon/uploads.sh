#!/usr/bin/env bash
# Large uploads against a real daemon. A submission of max_partitions base64 witnesses (16 x 2 MiB,
# a 43 MiB body) is spooled to <state_dir>/spool/ and decoded off the loop into the job's upload
# folder: the supervisor's peak resident memory (VmHWM) grows by less than limits.upload_memory. A
# spooled submission is proved like any other; its spool file is gone once it is answered, and so
# is everything of a body whose client leaves halfway, of a refused body, and of a body in flight
# when the supervisor is killed (removed at the next start).
source "$(dirname "$0")/lib.sh"
require_tools
RAW=(node "$CUZK_SRC/tests/daemon/raw_client.js")
BIG="$WORK/big"
cz gen-circuit 16 "$BIG.r1cs" "$BIG.wtns" >/dev/null 2>&1
cz setup "$BIG.r1cs" "$BIG.zkey" >/dev/null 2>&1
write_config 1 2 "upload_memory = \"4MiB\"
max_upload_bytes = \"64MiB\"
[[circuits]]
name = \"big\"
zkey = \"$BIG.zkey\"
max_partitions = 16"
start_daemon
jget() { node -e "const o=JSON.parse(require('fs').readFileSync(0,'utf8')); console.log(o.$1)"; }
kib() { awk -v k="$1:" '$1==k {print $2}' "/proc/$SUP_PID/status"; }
idof() { node -e "console.log(JSON.parse(JSON.parse(require('fs').readFileSync('$1','utf8')).body).id)"; }
entries() { find "$WORK/state/$1" -mindepth 1 | wc -l; }
metric() { "${RAW[@]}" get "$SOCK" /metrics | jget body | awk -v m="$1" '$1==m {print $2}'; }

# 1. max_partitions large witnesses in one body.
hwm0=$(kib VmHWM)
"${RAW[@]}" upload "$SOCK" big "$BIG.wtns" 16 0 >"$WORK/big.json"
hwm1=$(kib VmHWM)
log "16 x $(($(stat -c %s "$BIG.wtns") >> 10)) KiB witnesses as base64: $(head -c 200 "$WORK/big.json"); peak RSS ${hwm0} -> ${hwm1} KiB"
[ "$(jget status <"$WORK/big.json")" -eq 201 ] || die "the upload was not accepted"
[ $((hwm1 - hwm0)) -lt 4096 ] || die "the supervisor's peak memory grew by $((hwm1 - hwm0)) KiB (limits.upload_memory = 4 MiB)"
[ "$(entries spool)" -eq 0 ] || die "spool file left after the answer: $(ls "$WORK/state/spool")"
[ "$(metric cuzk_http_bodies_spooled_total)" -ge 1 ] || die "the body was not spooled"
folder=$(ls -d "$WORK/state/uploads"/*)
[ "$(ls "$folder" | wc -l)" -eq 16 ] || die "want 16 decoded witnesses in $folder: $(ls "$folder")"
for f in "$folder"/*; do cmp -s "$f" "$BIG.wtns" || die "$f differs from the uploaded witness"; done
job=$(idof "$WORK/big.json")
cz cancel --socket "$SOCK" "$job" >/dev/null
wait_until 10 "the cancelled job's uploads removed" '[ "$(entries uploads)" -eq 0 ]'

# 2. A spooled submission (padded past 1 MiB) is proved and the proof verified.
"${RAW[@]}" upload "$SOCK" mult "$W_MULT" 1 $((2 << 20)) >"$WORK/mult.json"
[ "$(jget status <"$WORK/mult.json")" -eq 201 ] || die "spooled submission: $(cat "$WORK/mult.json")"
job=$(idof "$WORK/mult.json")
await_ok "$job" "$WORK/out_mult" "$VK_MULT" 1
[ "$(metric cuzk_http_bodies_spooled_total)" -ge 2 ] || die "the padded body was not spooled"

# 3. A witness of another circuit, and bad base64, in spooled bodies: refused, nothing left.
"${RAW[@]}" upload "$SOCK" mult "$W_CHAIN" 1 $((2 << 20)) >"$WORK/wrong.json"
[ "$(jget status <"$WORK/wrong.json")" -eq 400 ] || die "a witness of another circuit: $(cat "$WORK/wrong.json")"
grep -q 'witnesses\[0\] (uploaded): has' "$WORK/wrong.json" || die "the refusal does not name the entry: $(cat "$WORK/wrong.json")"
printf 'not base64!' >"$WORK/junk"
"${RAW[@]}" upload "$SOCK" mult "$WORK/junk" 1 $((2 << 20)) >"$WORK/junk.json"
[ "$(jget status <"$WORK/junk.json")" -eq 201 ] && die "junk was accepted"
[ "$(entries spool)" -eq 0 ] && [ "$(entries uploads)" -eq 0 ] || die "a refused upload left files: $(find "$WORK/state/spool" "$WORK/state/uploads")"

# 4. A client that leaves halfway through its body, and a body over max_upload_bytes.
"${RAW[@]}" upload "$SOCK" big "$BIG.wtns" 16 0 cut $((10 << 20)) >/dev/null
wait_until 10 "the abandoned body's spool file removed" '[ "$(entries spool)" -eq 0 ]'
"${RAW[@]}" body "$SOCK" 0 80 chunked >"$WORK/over.json"
[ "$(jget status <"$WORK/over.json")" -eq 413 ] || die "a chunked body over the limit: $(cat "$WORK/over.json")"
wait_until 10 "the refused body's spool file removed" '[ "$(entries spool)" -eq 0 ]'

# 5. A body in flight when the supervisor is killed: removed at the next start.
"${RAW[@]}" upload "$SOCK" big "$BIG.wtns" 16 0 hold $((10 << 20)) >"$WORK/hold.json" &
client=$!
wait_until 10 "a spool file being written" '[ "$(entries spool)" -eq 1 ]'
kill -9 "$SUP_PID"
wait "$SUP_PID" 2>/dev/null || true
kill "$client" 2>/dev/null || true
[ "$(entries spool)" -eq 1 ] || die "no spool file to clean up after the kill"
mkdir -p "$WORK/state/uploads/999-1" && : >"$WORK/state/uploads/999-1/upload-0.wtns"  # a decode cut short
start_daemon
[ "$(entries spool)" -eq 0 ] || die "the new supervisor left the old spool file"
[ "$(entries uploads)" -eq 0 ] || die "the new supervisor left an orphan upload folder"
grep -q "left by an earlier run" "$WORK/sup.log" || die "the clean-up was not logged"
job=$(submit mult "$W_MULT")
await_ok "$job" "$WORK/out_after" "$VK_MULT" 1
log "ok"
