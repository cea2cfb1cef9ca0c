#!/usr/bin/env bash
# Greedy clients against a real daemon. Connections over limits.max_connections get 503 and are
# closed at once (counted in /metrics, logged once per burst), so the supervisor's descriptors stay
# bounded; held idle connections are closed after limits.idle_timeout_ms, and a submission on a
# fresh connection afterwards is served. Bodies over limits.max_upload_bytes get 413 (a declared
# Content-Length before any of the body is read, a chunked body at the limit) without the
# supervisor's memory growing with the size attempted. A client that pipelines requests and reads
# none of the answers is no longer read once 1 MiB of answers waits for it, and is closed. TCP
# connections that have not presented the token have a small limit of their own and 5 s to send a
# request, so idle ones cannot take the places of socket clients (the one idle longest is closed
# for a new one, so a client with the token gets through); a body trickling in slower than
# 64 KiB/s (after limits.header_timeout_ms) gets 408.
source "$(dirname "$0")/lib.sh"
require_tools
RAW=(node "$CUZK_SRC/tests/daemon/raw_client.js")
write_config 1 1 "max_connections = 8
header_timeout_ms = 2000
idle_timeout_ms = 3000
max_upload_bytes = \"16MiB\""
PORT=$((20000 + $$ % 20000))
TOKEN="limits-token-$$"
sed -i "/^\[daemon\]/a tcp = \"127.0.0.1:$PORT\"\ntoken = \"$TOKEN\"" "$CONFIG"
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

# 5. 30 idle TCP connections without the token: 16 held, the oldest closed for each newer one;
# socket clients and a TCP client with the token are served meanwhile; the held ones are closed at
# limits.idle_timeout_ms (3 s here; 408 at 5 s where that is longer).
node -e '
const net = require("net");
const [port] = process.argv.slice(1);
let refused = 0, timed_out = 0, silent = 0, closed = 0;
const t0 = Date.now(), times = [];
for (let i = 0; i < 30; i++) {
  const s = net.connect(+port, "127.0.0.1");
  let got = "";
  s.on("data", d => got += d);
  s.on("error", () => {});
  s.on("close", () => {
    if (/^HTTP\/1\.1 503/.test(got)) refused++;
    else if (/^HTTP\/1\.1 408/.test(got)) timed_out++;
    else if (got === "") silent++;
    times.push(Date.now() - t0);
    if (++closed === 30) { console.log(JSON.stringify({refused, timed_out, silent, max_ms: Math.max(...times, 0)})); process.exit(0); }
  });
}
setTimeout(() => { console.log(JSON.stringify({refused, timed_out, still_open: 30 - closed})); process.exit(0); }, 15000);
' "$PORT" >"$WORK/tcp_idle.json" &
tcp_pid=$!
sleep 1
for i in 1 2 3; do status >/dev/null || die "a socket client was refused while idle TCP connections were held"; done
"$CUZK_BIN" status --tcp "127.0.0.1:$PORT" --token "$TOKEN" >/dev/null || die "a TCP client with the token was refused"
wait $tcp_pid
log "30 idle TCP connections without the token: $(cat "$WORK/tcp_idle.json")"
[ "$(jget refused <"$WORK/tcp_idle.json")" -eq 0 ] || die "idle connections were answered 503 instead of making room"
[ $(($(jget silent <"$WORK/tcp_idle.json") + $(jget timed_out <"$WORK/tcp_idle.json"))) -eq 30 ] ||
  die "unauthenticated TCP connections ended otherwise than closed or 408"
[ "$(jget max_ms <"$WORK/tcp_idle.json")" -lt 6000 ] || die "idle unauthenticated TCP connections were held too long"

# 6. A body trickling in, one byte every 200 ms: 408 once it falls behind 64 KiB/s after the 2 s grace.
node -e '
const net = require("net");
const s = net.connect(process.argv[1]);
const t0 = Date.now();
let got = "", n = 0;
s.on("data", d => got += d);
s.on("error", () => {});
s.on("close", () => { console.log(JSON.stringify({status: +(/^HTTP\/1\.1 (\d+)/.exec(got) || [0, 0])[1], ms: Date.now() - t0, sent: n})); process.exit(0); });
s.write("POST /v1/proofs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n");
const t = setInterval(() => { if (n++ < 200) s.write(" "); else clearInterval(t); }, 200);
' "$SOCK" >"$WORK/trickle.json"
log "a body at 5 bytes a second: $(cat "$WORK/trickle.json")"
[ "$(jget status <"$WORK/trickle.json")" -eq 408 ] || die "a trickled body was not cut off with 408"
[ "$(jget ms <"$WORK/trickle.json")" -lt 5000 ] || die "a trickled body held its connection too long"
job=$(submit mult "$W_MULT")
await_ok "$job" "$WORK/out4" "$VK_MULT" 1
log "ok"
