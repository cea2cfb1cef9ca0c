#!/usr/bin/env bash
# Greedy clients against a real daemon. Connections over limits.max_connections get 503 and are
# closed at once (counted in /metrics, logged once per burst), so the supervisor's descriptors stay
# bounded; held idle connections are closed after limits.idle_timeout_ms, and a submission on a
# fresh connection afterwards is served. Bodies over limits.max_upload_bytes get 413 (a declared
# Content-Length before any of the body is read, a chunked body at the limit) without the
# supervisor's memory growing with the size attempted. A client that pipelines requests and reads
# none of the answers is no longer read once 1 MiB of answers waits for it, and is closed.
source "$(dirname "$0")/lib.sh"
require_tools
RAW=(node "$CUZK_SRC/tests/daemon/raw_client.js")
write_config 1 1 "max_connections = 8
header_timeout_ms = 2000
idle_timeout_ms = 3000
max_upload_bytes = \"16MiB\""
start_daemon
jget() { node -e "const o=JSON.parse(require('fs').readFileSync(0,'utf8')); console.log(o.$1)"; }
fds() { ls "/proc/$SUP_PID/fd" | wc -l; }
kib() { awk -v k="$1:" '$1==k {print $2}' "/proc/$SUP_PID/status"; }

# 1. 40 idle connections at once: 8 held until the idle timeout, 32 refused with 503 at once.
base_fds=$(fds)
"${RAW[@]}" hold "$SOCK" 40 60 >"$WORK/hold.json" &
hold_pid=$!
max_fds=0
while kill -0 $hold_pid 2>/dev/null; do
  n=$(fds); [ "$n" -gt "$max_fds" ] && max_fds=$n
  sleep 0.05
done
wait $hold_pid
log "40 idle connections: $(cat "$WORK/hold.json"); supervisor descriptors $base_fds before, at most $max_fds while held"
[ "$(jget refused_503 <"$WORK/hold.json")" -eq 32 ] || die "want 32 connections refused with 503"
[ "$(jget refused_fast <"$WORK/hold.json")" -eq 32 ] || die "refused connections were not closed at once"
[ "$(jget closed_silently <"$WORK/hold.json")" -eq 8 ] || die "want the 8 held connections closed by the idle timeout"
[ "$(jget still_open <"$WORK/hold.json")" -eq 0 ] || die "connections outlived limits.idle_timeout_ms"
grep -qF "limits.max_connections" <(jget message <"$WORK/hold.json") || die "the 503 does not name limits.max_connections"
[ "$max_fds" -le $((base_fds + 8 + 4)) ] || die "descriptors grew to $max_fds (from $base_fds) with 8 connections allowed"
"${RAW[@]}" get "$SOCK" /metrics >"$WORK/metrics.json"
jget body <"$WORK/metrics.json" | grep -qx "cuzk_http_connections_refused_total 32" ||
  die "metrics do not count the refusals: $(jget body <"$WORK/metrics.json" | grep http_)"
[ "$(grep -c "connection limit reached" "$WORK/sup.log")" -eq 1 ] || die "the burst was not logged exactly once"
grep -q "32 were refused" "$WORK/sup.log" || die "the end of the burst was not logged with its count"
job=$(submit mult "$W_MULT")
await_ok "$job" "$WORK/out1" "$VK_MULT" 1

# 2. A half-sent request: 408 at the header deadline.
"${RAW[@]}" send "$SOCK" '"GET /v1/status HTTP/1.1\r\nHost: x\r\n"' >"$WORK/half.json"
[ "$(jget status <"$WORK/half.json")" -eq 408 ] || die "a half-sent request: $(cat "$WORK/half.json")"

# 3. Bodies over the limit. VmHWM is the supervisor's peak resident memory.
hwm0=$(kib VmHWM)
"${RAW[@]}" body "$SOCK" 1073741824 256 >"$WORK/cl.json"
hwm1=$(kib VmHWM)
log "Content-Length 1 GiB (limit 16 MiB): $(cat "$WORK/cl.json"); peak RSS ${hwm0} -> ${hwm1} KiB"
[ "$(jget status <"$WORK/cl.json")" -eq 413 ] || die "a 1 GiB Content-Length was not refused with 413"
[ $((hwm1 - hwm0)) -lt 8192 ] || die "the supervisor's peak memory grew by $((hwm1 - hwm0)) KiB for a refused body"
"${RAW[@]}" body "$SOCK" 0 256 chunked >"$WORK/chunked.json"
hwm2=$(kib VmHWM)
log "chunked, 256 MiB attempted (limit 16 MiB): $(cat "$WORK/chunked.json"); peak RSS ${hwm1} -> ${hwm2} KiB"
[ "$(jget status <"$WORK/chunked.json")" -eq 413 ] || die "a chunked body over the limit was not refused with 413"
[ "$(jget sent_mib <"$WORK/chunked.json")" -lt 200 ] || die "the chunked body was not cut off at the limit"
[ $((hwm2 - hwm1)) -lt 65536 ] || die "the supervisor's peak memory grew by $((hwm2 - hwm1)) KiB for a 16 MiB limit"
job=$(submit mult "$W_MULT")
await_ok "$job" "$WORK/out2" "$VK_MULT" 1

# 4. 20000 pipelined requests whose answers are never read: the supervisor stops reading the
# connection once 1 MiB of answers wait for it, and closes it after the idle timeout.
hwm3=$(kib VmHWM)
"${RAW[@]}" pipeline "$SOCK" 20000 5 >"$WORK/pipeline.json" &
client=$!
sleep 1.5
queued=$("${RAW[@]}" get "$SOCK" /metrics | jget body | awk '$1=="cuzk_http_write_queue_bytes" {print $2}')
wait $client
hwm4=$(kib VmHWM)
log "20000 pipelined status requests, answers unread for 5 s: $(cat "$WORK/pipeline.json"); $queued bytes queued after 1.5 s; peak RSS ${hwm3} -> ${hwm4} KiB"
[ "$queued" -gt 0 ] && [ "$queued" -le $(((1 << 20) + 65536)) ] || die "$queued bytes of answers queued for a client that reads none"
[ "$(jget closed <"$WORK/pipeline.json")" = true ] || die "the connection was not closed after limits.idle_timeout_ms"
[ $((hwm4 - hwm3)) -lt 8192 ] || die "the supervisor's peak memory grew by $((hwm4 - hwm3)) KiB for unread answers"
job=$(submit mult "$W_MULT")
await_ok "$job" "$WORK/out3" "$VK_MULT" 1
log "ok"
