#!/usr/bin/env bash
# Bad input of every kind gets a clear error, and the daemon stays up and loses nothing.
source "$(dirname "$0")/lib.sh"
require_tools

# 1. Bad configs: exit 78, the key named.
bad_config() {
  local want="$1"; shift
  write_config 1 1 "$@"
  set +e
  "$SUP_BIN" --config "$CONFIG" >"$WORK/bad.log" 2>&1
  local rc=$?
  set -e
  [ $rc -eq 78 ] || die "bad config ($want) exited $rc, want 78: $(cat "$WORK/bad.log")"
  grep -qF "$want" "$WORK/bad.log" || die "bad config error does not name $want: $(cat "$WORK/bad.log")"
}
bad_config "limits.restart_intensityy" "restart_intensityy = 3"
bad_config "timeline.format" "[timeline]
format = \"xml\""
write_config 1 1
sed -i 's/^workers = 1/workers = 0/' "$CONFIG"
set +e; "$SUP_BIN" --config "$CONFIG" >"$WORK/bad.log" 2>&1; rc=$?; set -e
[ $rc -eq 78 ] && grep -q "synthesis.workers" "$WORK/bad.log" || die "workers = 0: rc $rc: $(cat "$WORK/bad.log")"
write_config 1 1
sed -i "s#$CIRC/multiplier/circuit.zkey#$WORK/missing.zkey#" "$CONFIG"
set +e; "$SUP_BIN" --config "$CONFIG" >"$WORK/bad.log" 2>&1; rc=$?; set -e
[ $rc -eq 78 ] && grep -q "circuits\[2\].zkey" "$WORK/bad.log" || die "missing zkey: rc $rc: $(cat "$WORK/bad.log")"
log "bad configs: exit 78 naming the key"

write_config 1 2
start_daemon
expect_fail() {  # expect_fail WANT_RC WANT_TEXT cmd...
  local want_rc="$1" want="$2"; shift 2
  set +e
  "$@" >"$WORK/out.log" 2>&1
  local rc=$?
  set -e
  [ $rc -eq "$want_rc" ] || die "$* exited $rc, want $want_rc: $(cat "$WORK/out.log")"
  grep -qF "$want" "$WORK/out.log" || die "$*: message lacks '$want': $(cat "$WORK/out.log")"
}
# 2. A missing witness file, a witness of another circuit, an unknown circuit, a bad priority.
expect_fail 2 "witnesses[1]" cz submit --socket "$SOCK" --circuit mult --witness "$W_MULT" --witness "$WORK/nope.wtns"
expect_fail 2 "expects nVars" cz submit --socket "$SOCK" --circuit mult --witness "$W_POSEIDON"
expect_fail 2 "unknown circuit" cz submit --socket "$SOCK" --circuit nosuch --witness "$W_MULT"
expect_fail 64 "priority" cz submit --socket "$SOCK" --circuit mult --witness "$W_MULT" --priority urgent
head -c 100 "$W_MULT" >"$WORK/trunc.wtns"
expect_fail 2 "trunc.wtns" cz submit --socket "$SOCK" --circuit mult --witness "$WORK/trunc.wtns"

# 3. A witness that does not satisfy the constraints: found in synthesis, before any GPU work.
node -e '
const fs = require("fs");
const b = fs.readFileSync(process.argv[1]);
// wtns v2: magic(4) version(4) nSections(4); section 1 header: type(4) size(8) n8(4) prime(n8) count(4);
// section 2 header: type(4) size(8), then the values. Bump the low byte of the last value.
const n8 = b.readUInt32LE(24), off = 12 + 12 + 4 + n8 + 4 + 12;
const count = b.readUInt32LE(28 + n8);
b[off + (count - 1) * n8] ^= 1;
fs.writeFileSync(process.argv[2], b);
' "$W_POSEIDON" "$WORK/unsat.wtns"
job=$(submit poseidon "$W_POSEIDON" "$WORK/unsat.wtns")
set +e
cz await --socket "$SOCK" --out "$WORK/outu" --timeout 60 "$job" >"$WORK/awaitu.log" 2>&1
rc=$?
set -e
[ $rc -eq 1 ] || die "await of an unsatisfied witness exited $rc: $(cat "$WORK/awaitu.log")"
grep -q "does not satisfy constraint" "$WORK/awaitu.log" || die "no constraint error: $(cat "$WORK/awaitu.log")"
grep -q "unsat.wtns" "$WORK/awaitu.log" || die "the error does not name the witness file"
sleep 0.6
grep ",GPU_START,$job," "$WORK/state/timeline.log" | grep -q "partition=1" && die "the unsatisfied partition reached the GPU"

# 4. Malformed HTTP and bad JSON: 4xx with a JSON error, and the daemon stays up.
node -e '
const net = require("net");
const sock = process.argv[1];
function raw(bytes) {
  return new Promise(res => { const c = net.createConnection(sock); let out = "";
    c.on("data", d => out += d); c.on("end", () => res(out)); c.on("error", () => res(out)); c.write(bytes); c.end(); });
}
(async () => {
  const post = body => "POST /v1/proofs HTTP/1.1\r\nHost: x\r\nContent-Length: " + Buffer.byteLength(body) + "\r\n\r\n" + body;
  const checks = [
    ["garbage", "\x00\x01 NOT HTTP AT ALL\r\n\r\n", /^HTTP\/1\.1 400/],
    ["bad json", post("{oops"), /^HTTP\/1\.1 400[\s\S]*"error"/],
    ["unknown field", post(`{"circuitt":1}`), /^HTTP\/1\.1 400[\s\S]*circuitt/],
    ["bad base64", post(`{"circuit":"mult","witnesses":[{"base64":"@@@@"}]}`), /^HTTP\/1\.1 400[\s\S]*base64/],
    ["bad priority", post(`{"circuit":"mult","priority":"x"}`), /^HTTP\/1\.1 400[\s\S]*priority/],
    ["no witnesses", post(`{"circuit":"mult"}`), /^HTTP\/1\.1 400[\s\S]*witnesses/],
    ["unknown job", "GET /v1/proofs/999999 HTTP/1.1\r\nHost: x\r\n\r\n", /^HTTP\/1\.1 404/],
    ["unknown path", "GET /nope HTTP/1.1\r\nHost: x\r\n\r\n", /^HTTP\/1\.1 404/],
  ];
  for (const [name, req, want] of checks) {
    const out = await raw(req);
    if (!want.test(out)) { console.error(name + ": " + JSON.stringify(out.slice(0, 300))); process.exit(1); }
  }
})();
' "$SOCK" || die "malformed HTTP handling"

# 5. Uploaded witness bytes work, and the daemon is still up and proving.
b64=$(base64 -w0 "$W_MULT")
node -e '
const http = require("http");
const body = JSON.stringify({circuit: "mult", witnesses: [{base64: process.argv[2]}], request_id: "upload-1"});
const r = http.request({socketPath: process.argv[1], path: "/v1/proofs", method: "POST",
  headers: {"Content-Type": "application/json", "Content-Length": Buffer.byteLength(body)}}, res => {
  let b = ""; res.on("data", d => b += d); res.on("end", () => { if (res.statusCode !== 201) { console.error(b); process.exit(1); } console.log(JSON.parse(b).id); });
});
r.end(body);
' "$SOCK" "$b64" >"$WORK/upload_id" || die "upload submit failed"
await_ok "$(cat "$WORK/upload_id")" "$WORK/outup" "$VK_MULT" 1
kill -0 "$SUP_PID" || die "the supervisor died"
[ "$(jstat "s.workers.reduce((a,w)=>a+w.restarts,0)")" -eq 0 ] || die "a worker restarted on bad input"
log "ok"
