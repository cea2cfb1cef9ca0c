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
saved_dirs="$INPUT_DIRS"
INPUT_DIRS="\"$WORK/no_such_dir\""
write_config 1 1
set +e; "$SUP_BIN" --config "$CONFIG" >"$WORK/bad.log" 2>&1; rc=$?; set -e
[ $rc -eq 78 ] && grep -qF "daemon.input_dirs[0]" "$WORK/bad.log" || die "missing input dir: rc $rc: $(cat "$WORK/bad.log")"
INPUT_DIRS="$saved_dirs"
# A witness generator that is missing (config check), or that cannot be built (at start-up).
write_config 1 1
sed -i "s#^zkey = \"$CIRC/multiplier/circuit.zkey\"#&\nwitness_generator = \"$WORK/nogen_cpp\"#" "$CONFIG"
set +e; "$SUP_BIN" --config "$CONFIG" >"$WORK/bad.log" 2>&1; rc=$?; set -e
[ $rc -eq 78 ] && grep -qF "circuits[2].witness_generator" "$WORK/bad.log" || die "missing generator: rc $rc: $(cat "$WORK/bad.log")"
mkdir -p "$WORK/nogen_cpp"
set +e; "$SUP_BIN" --config "$CONFIG" >"$WORK/bad.log" 2>&1; rc=$?; set -e
[ $rc -eq 78 ] && grep -qF "circuits[2].witness_generator" "$WORK/bad.log" || die "unbuildable generator: rc $rc: $(cat "$WORK/bad.log")"
# Paths that can never work and a damaged key: exit 78 (never restarted), naming the key and the path.
start_fails_78() {  # start_fails_78 KEY PATH [--check-config]
  set +e; "$SUP_BIN" --config "$CONFIG" ${3:-} >"$WORK/bad.log" 2>&1; local rc=$?; set -e
  [ $rc -eq 78 ] && grep -qF "$1" "$WORK/bad.log" && grep -qF "$2" "$WORK/bad.log" ||
    die "$1 ($2${3:+, $3}): rc $rc, want 78 naming both: $(cat "$WORK/bad.log")"
}
touch "$WORK/afile"
write_config 1 1
sed -i "s#^state_dir = .*#state_dir = \"$WORK/afile/state\"#" "$CONFIG"
start_fails_78 "daemon.state_dir" "$WORK/afile/state"
mkdir -p "$WORK/sockdir"
write_config 1 1
sed -i "s#^socket = .*#socket = \"$WORK/sockdir\"#" "$CONFIG"
start_fails_78 "daemon.socket" "$WORK/sockdir"
head -c $(($(stat -c %s "$CIRC/multiplier/circuit.zkey") / 2)) "$CIRC/multiplier/circuit.zkey" >"$WORK/trunc.zkey"
write_config 1 1
sed -i "s#$CIRC/multiplier/circuit.zkey#$WORK/trunc.zkey#" "$CONFIG"
start_fails_78 "circuits[2].zkey" "$WORK/trunc.zkey" --check-config
start_fails_78 "circuits[2].zkey" "$WORK/trunc.zkey"
# A descriptor limit (LimitNOFILE=) too small for limits.max_connections: refused at start rather
# than "Too many open files" for some later client.
write_config 1 1 "max_connections = 512"
set +e; (ulimit -n 200; "$SUP_BIN" --config "$CONFIG") >"$WORK/bad.log" 2>&1; rc=$?; set -e
[ $rc -eq 78 ] && grep -qF "limits.max_connections" "$WORK/bad.log" && grep -qF "LimitNOFILE" "$WORK/bad.log" ||
  die "a descriptor limit of 200 for 512 connections: rc $rc: $(cat "$WORK/bad.log")"
rm -rf "$WORK/state"
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
  grep -qF -- "$want" "$WORK/out.log" || die "$*: message lacks '$want': $(cat "$WORK/out.log")"
}
# 2. A missing witness file, a witness of another circuit, an unknown circuit, a bad priority.
expect_fail 2 "witnesses[1]" cz submit --socket "$SOCK" --circuit mult --witness "$W_MULT" --witness "$IN/nope.wtns"
expect_fail 2 "expects nVars" cz submit --socket "$SOCK" --circuit mult --witness "$W_POSEIDON"
expect_fail 2 "unknown circuit" cz submit --socket "$SOCK" --circuit nosuch --witness "$W_MULT"
expect_fail 64 "priority" cz submit --socket "$SOCK" --circuit mult --witness "$W_MULT" --priority urgent
head -c 100 "$W_MULT" >"$IN/trunc.wtns"
expect_fail 2 "trunc.wtns" cz submit --socket "$SOCK" --circuit mult --witness "$IN/trunc.wtns"

# 2b. Paths: only files that resolve inside daemon.input_dirs, and no byte of any other file in an
# answer. A stand-in for /etc/shadow that the daemon can read:
mkdir -p "$WORK/secret"
printf 'root:$6$s3cretsalt$hash:19000:0:99999:7:::\n' >"$WORK/secret/shadow"
chmod 600 "$WORK/secret/shadow"
no_echo() { ! grep -qE 'root|s3cret|19000' "$WORK/out.log" || die "$1: the answer quotes the file: $(cat "$WORK/out.log")"; }
expect_fail 77 "outside daemon.input_dirs" cz submit --socket "$SOCK" --circuit mult --witness "$WORK/secret/shadow"
no_echo "outside"
expect_fail 77 "outside daemon.input_dirs" cz submit --socket "$SOCK" --circuit mult --witness /etc/shadow
no_echo "/etc/shadow"
ln -s "$WORK/secret/shadow" "$IN/innocent.wtns"
expect_fail 77 "resolves outside daemon.input_dirs" cz submit --socket "$SOCK" --circuit mult --witness "$IN/innocent.wtns"
no_echo "symlink"
cp "$WORK/secret/shadow" "$IN/shadow_copy.wtns"
expect_fail 2 "is not a .wtns file (bad magic)" cz submit --socket "$SOCK" --circuit mult --witness "$IN/shadow_copy.wtns"
no_echo "inside"
mkdir -p "$IN/adir"
expect_fail 2 "is a directory" cz submit --socket "$SOCK" --circuit mult --witness "$IN/adir"
mkfifo "$IN/fifo.wtns"
expect_fail 2 "is not a regular file" cz submit --socket "$SOCK" --circuit mult --witness "$IN/fifo.wtns"
log "paths: outside, through a symlink, directory and FIFO refused; no file content in any answer"

# 3. A witness that does not satisfy the constraints: found in synthesis, before any GPU work.
# await_failed JOB TAG WANT: the job ends failed (await exits 1, output in $WORK/await_TAG.log,
# proofs in $WORK/out_TAG) with WANT in its error.
await_failed() {
  local job="$1" tag="$2" want="$3" rc
  set +e
  cz await --socket "$SOCK" --out "$WORK/out_$tag" --timeout 60 "$job" >"$WORK/await_$tag.log" 2>&1
  rc=$?
  set -e
  [ $rc -eq 1 ] || die "$tag: await exited $rc: $(cat "$WORK/await_$tag.log")"
  grep -qF -- "$want" "$WORK/await_$tag.log" || die "$tag: the error lacks '$want': $(cat "$WORK/await_$tag.log")"
}
make_unsat "$W_POSEIDON" "$IN/unsat.wtns"
job=$(submit poseidon "$W_POSEIDON" "$IN/unsat.wtns")
await_failed "$job" unsat "does not satisfy constraint"
grep -q "unsat.wtns" "$WORK/await_unsat.log" || die "the error does not name the witness file"
sleep 0.6
grep ",GPU_START,$job," "$WORK/state/timeline.log" | grep -q "partition=1" && die "the unsatisfied partition reached the GPU"

# 3b. Without an r1cs (circuit mult), only the proof's verification (gpu.verify, on by default)
# catches such a witness: the job fails with that reason, never done, and the worker stays up.
make_unsat "$W_MULT" "$IN/mult_unsat.wtns"
job=$(submit mult "$W_MULT" "$IN/mult_unsat.wtns")
await_failed "$job" unverified "partition 1: the proof does not verify"
node -e '
const http = require("http");
http.get({socketPath: process.argv[1], path: "/v1/proofs/" + process.argv[2]}, r => { let b = ""; r.on("data", d => b += d);
  r.on("end", () => { const j = JSON.parse(b);
    if (j.state !== "failed" || j.input_kind !== "witnesses") { console.error(b); process.exit(1); }
    if (j.partitions[1].state !== "failed" || "proof" in j.partitions[1]) { console.error(b); process.exit(1); } }); });
' "$SOCK" "$job" || die "the unverified job is not failed (or carries a proof)"
[ ! -e "$WORK/out_unverified/proof_1.json" ] || die "await wrote a proof that does not verify"
sleep 0.6
[ "$(grep -c ",PROOF_UNVERIFIED,$job," "$WORK/state/timeline.log")" -eq 1 ] || die "expected one PROOF_UNVERIFIED event"
# `cuzk prove` verifies by default too: exit 1, a clear message, nothing written; --no-verify writes.
set +e
cz prove "$CIRC/multiplier/circuit.zkey" "$IN/mult_unsat.wtns" "$WORK/p.json" "$WORK/pub.json" >"$WORK/prove.log" 2>&1
rc=$?
set -e
[ $rc -eq 1 ] || die "cuzk prove of an unsatisfied witness exited $rc: $(cat "$WORK/prove.log")"
grep -q "does not verify" "$WORK/prove.log" || die "cuzk prove: no verification message: $(cat "$WORK/prove.log")"
[ ! -e "$WORK/p.json" ] || die "cuzk prove wrote a proof that does not verify"
cz prove "$CIRC/multiplier/circuit.zkey" "$IN/mult_unsat.wtns" "$WORK/p.json" "$WORK/pub.json" --no-verify >"$WORK/prove.log" 2>&1 ||
  die "cuzk prove --no-verify failed: $(cat "$WORK/prove.log")"
cz prove "$CIRC/multiplier/circuit.zkey" "$W_MULT" "$WORK/p.json" "$WORK/pub.json" --verify >"$WORK/prove.log" 2>&1 ||
  die "cuzk prove --verify (kept for older scripts) failed: $(cat "$WORK/prove.log")"
log "verification: unsatisfied witness fails the job and cuzk prove; --no-verify and --verify accepted"

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
    ["no witnesses", post(`{"circuit":"mult"}`), /^HTTP\/1\.1 400[\s\S]*witnesses or inputs/],
    ["both kinds", post(`{"circuit":"mult","witnesses":[{"base64":"AAAA"}],"inputs":[{"a":"1"}]}`),
     /^HTTP\/1\.1 400[\s\S]*not both/],
    ["inputs without a generator", post(`{"circuit":"mult","inputs":[{"a":"3","b":"11"}]}`),
     /^HTTP\/1\.1 400[\s\S]*circuit \x27mult\x27 has no witness generator/],
    ["unknown job", "GET /v1/proofs/999999 HTTP/1.1\r\nHost: x\r\n\r\n", /^HTTP\/1\.1 404/],
    ["NUL in a path", post(JSON.stringify({circuit: "mult", witnesses: [process.argv[2] + "\u0000/x"]})),
     /^HTTP\/1\.1 400[\s\S]*witnesses\[0\]: the path contains a NUL/],
    ["HTTP/9.9", "GET /v1/status HTTP/9.9\r\nHost: x\r\n\r\n", /^HTTP\/1\.1 505/],
    ["HTTP/2.0", "GET /v1/status HTTP/2.0\r\nHost: x\r\n\r\n", /^HTTP\/1\.1 505/],
    ["no version", "GET /v1/status\r\nHost: x\r\n\r\n", /^HTTP\/1\.1 (400|505)/],
    ["space in a header name", "GET /v1/status HTTP/1.1\r\nHost: x\r\nX Y: z\r\n\r\n", /^HTTP\/1\.1 400/],
    ["unknown path", "GET /nope HTTP/1.1\r\nHost: x\r\n\r\n", /^HTTP\/1\.1 404/],
  ];
  for (const [name, req, want] of checks) {
    const out = await raw(req);
    if (!want.test(out)) { console.error(name + ": " + JSON.stringify(out.slice(0, 300))); process.exit(1); }
  }
})();
' "$SOCK" "$W_MULT" || die "malformed HTTP handling"

# 4b. A client-chosen file name cannot forge a line of the supervisor's log: the daemon's copy of the
# file, which the failure names, keeps only the name's letters, digits, '.', '_' and '-'.
evil="$IN/evil"$'\n'"2026-12-01T00:00:00.000 critical supervisor: forged.wtns"
make_unsat "$W_POSEIDON" "$evil"
job=$(submit poseidon "$evil")
await_failed "$job" evil "does not satisfy constraint"
wait_until 10 "the failure logged" "grep -qF '0-evil2026-12-01T000000.000criticalsupervisorforged.wtns does not satisfy' '$WORK/sup.log'"
! grep -q "^2026-12-01T00:00:00.000 critical" "$WORK/sup.log" || die "a file name forged a line of the log"
log "HTTP versions, NUL in a path, control characters in the log"

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

# 6. The client's --input: JSON files sent inline; a file that is not JSON is named; exclusive
# with --witness; refused for a circuit without a witness generator.
echo '{"a": "3", "b": "11"}' >"$WORK/mult_in.json"
echo 'a: 3' >"$WORK/not_json.json"
expect_fail 2 "not_json.json: not a JSON file" cz submit --socket "$SOCK" --circuit mult --input "$WORK/not_json.json"
expect_fail 64 "excludes" cz submit --socket "$SOCK" --circuit mult --input "$WORK/mult_in.json" --witness "$W_MULT"
expect_fail 64 "--witness FILE or --input FILE" cz submit --socket "$SOCK" --circuit mult
expect_fail 2 "circuit 'mult' has no witness generator" cz submit --socket "$SOCK" --circuit mult --input "$WORK/mult_in.json"

# 7. With daemon.input_dirs empty, every path is refused and uploads still work.
kill -TERM "$SUP_PID"
wait "$SUP_PID" || die "supervisor exited $? after SIGTERM"
SUP_PID=""
INPUT_DIRS=""
write_config 1 2
start_daemon
expect_fail 77 "daemon.input_dirs is empty" cz submit --socket "$SOCK" --circuit mult --witness "$W_MULT"
job=$(submit mult "$W_MULT" -- --upload)
await_ok "$job" "$WORK/outempty" "$VK_MULT" 1
log "ok"
