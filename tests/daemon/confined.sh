#!/usr/bin/env bash
# Files a client names are confined and opened once, and a witness is checked as input:
# 1. a path swapped for a symlink (to a file outside daemon.input_dirs) after its job was accepted
#    changes nothing: the job proves the file that was checked, from the daemon's private copy;
# 2. a file the client may not read itself (root's 0600 file, one in a 0700 folder) is a 403 that
#    quotes nothing of it, while a file it may read is proved (runs the client as nobody: needs root);
# 3. a witness whose w[0] is not 1 is refused at submission (path and upload), and one that turns
#    bad after submission fails its job in synthesis as the client's error: no retry, no restart.
source "$(dirname "$0")/lib.sh"
require_tools
write_inputs_config 1 2
sed -i '/^\[daemon\]/a socket_mode = "0666"' "$CONFIG"
# Test hook: each synthesis takes 2 s, so that a job can wait behind another one.
export CUZK_TEST_SYNTH_DELAY_MS=2000
"$SUP_BIN" --config "$CONFIG" >>"$WORK/sup.log" 2>&1 &
SUP_PID=$!
wait_until 300 "all workers idle" "jstat \"s.workers.every(w=>w.state==='idle')\" 2>/dev/null | grep -qx true"

# 1. Swapped after submission, before synthesis.
mkdir -p "$WORK/outside"
cp "$W_CHAIN" "$IN/swap.wtns"
cp "$W_ZERO" "$WORK/outside/zero.wtns"
busy=$(submit chain "$W_CHAIN")
wait_until 10 "the synthesis worker busy" "[ \"\$(state_of synth0)\" = busy ]"
job=$(submit chain "$IN/swap.wtns")
rm "$IN/swap.wtns"
ln -s "$WORK/outside/zero.wtns" "$IN/swap.wtns"
await_ok "$busy" "$WORK/out_busy" "$VK_CHAIN" 1
await_ok "$job" "$WORK/out_swap" "$VK_CHAIN" 1
cmp -s "$WORK/out_busy/public_0.json" "$WORK/out_swap/public_0.json" ||
  die "job $job proved the file swapped in after submission: $(cat "$WORK/out_swap/public_0.json")"
log "a path swapped for a symlink after submission: the checked file was proved"

# post UID BODY: POST /v1/proofs over the socket as that user; prints {"status":..,"body":..}.
post() {
  setpriv --reuid="$1" --regid="$1" --clear-groups node -e '
    const req = require("http").request({socketPath: process.argv[1], path: "/v1/proofs", method: "POST",
      headers: {"content-type": "application/json"}}, res => {
      let b = ""; res.on("data", d => b += d); res.on("end", () => console.log(JSON.stringify({status: res.statusCode, body: b})));
    });
    req.end(process.argv[2]);' "$SOCK" "$2"
}
field() { node -e "const o=JSON.parse(require('fs').readFileSync(0,'utf8')); console.log(o.$1)"; }

# 2. What the client may read itself.
if [ "$(id -u)" -eq 0 ]; then
  chmod 755 "$WORK" "$IN"
  NOBODY=65534
  printf '{"a": "TOPSECRET-abc123", "b": ["hidden-element"]}\n' >"$IN/secret.json"
  install -m 600 "$W_MULT" "$IN/secret.wtns"
  mkdir -m 700 "$IN/closed"
  install -m 644 "$W_MULT" "$IN/closed/open.wtns"
  printf '{"a": "3", "b": "11"}\n' >"$IN/world.json"
  chmod 600 "$IN/secret.json"
  chmod 644 "$IN/world.json"
  for body in "{\"circuit\":\"mult_in\",\"inputs\":[{\"path\":\"$IN/secret.json\"}]}" \
              "{\"circuit\":\"mult\",\"witnesses\":[\"$IN/secret.wtns\"]}" \
              "{\"circuit\":\"mult\",\"witnesses\":[\"$IN/closed/open.wtns\"]}" \
              "{\"circuit\":\"mult\",\"witnesses\":[\"$IN/missing.wtns\"]}"; do
    post $NOBODY "$body" >"$WORK/post.json"
    [ "$(field status <"$WORK/post.json")" = 403 ] || die "nobody: $body: $(cat "$WORK/post.json")"
    grep -q "may not read" "$WORK/post.json" || die "nobody: $body: the refusal does not say why: $(cat "$WORK/post.json")"
    grep -qE "TOPSECRET|hidden-element" "$WORK/post.json" && die "a refusal quotes a file nobody may not read: $(cat "$WORK/post.json")"
  done
  post $NOBODY "{\"circuit\":\"mult_in\",\"inputs\":[{\"path\":\"$IN/world.json\"}]}" >"$WORK/post.json"
  [ "$(field status <"$WORK/post.json")" = 201 ] || die "nobody cannot submit a file it may read: $(cat "$WORK/post.json")"
  mine=$(field body <"$WORK/post.json" | field id)
  await_ok "$mine" "$WORK/out_world" "$VK_MULT" 1
  grep -q '"33"' "$WORK/out_world/public_0.json" || die "public output is not 3*11: $(cat "$WORK/out_world/public_0.json")"
  log "files a client may not read: 403 quoting nothing; one it may read: proved"
else
  log "part 2 skipped: needs root to run a client as nobody"
fi

# 3. w[0] = 2: refused at submission, by path and uploaded.
cp "$W_MULT" "$IN/w0.wtns"
printf '\x02' | dd of="$IN/w0.wtns" bs=1 seek=76 conv=notrunc status=none
cmp -s "$IN/w0.wtns" "$W_MULT" && die "the witness was not changed"
for up in "" --upload; do
  if cz submit --socket "$SOCK" --circuit mult --witness "$IN/w0.wtns" $up >"$WORK/w0.log" 2>&1; then
    die "a witness with w[0] = 2 was accepted ${up:-by path}"
  fi
  grep -q "witnesses\[0\].*its first value w\[0\], the constant wire, is not 1" "$WORK/w0.log" ||
    die "w[0] = 2 ${up:-by path}: $(cat "$WORK/w0.log")"
done
# The daemon's copy turned bad after submission (only root can do that): the job fails in synthesis,
# as the client's error, at once, and no worker restarts.
blocker=$(submit chain "$W_CHAIN")
wait_until 10 "the synthesis worker busy" "[ \"\$(state_of synth0)\" = busy ]"
bad=$(submit mult "$W_MULT")
copy=$(ls "$WORK"/state/uploads/*/0-*.wtns | while read -r f; do cmp -s "$f" "$W_MULT" && echo "$f"; done | head -n 1)
[ -n "$copy" ] || die "no private copy of the witness under state/uploads: $(ls -R "$WORK/state/uploads")"
printf '\x02' | dd of="$copy" bs=1 seek=76 conv=notrunc status=none
if cz await --socket "$SOCK" --out "$WORK/out_bad" --timeout 60 "$bad" >"$WORK/bad.log" 2>&1; then
  die "a witness with w[0] = 2 was proved"
fi
grep -q "w\[0\], the constant wire, is not 1" "$WORK/bad.log" || die "the failure does not name w[0]: $(cat "$WORK/bad.log")"
await_ok "$blocker" "$WORK/out_blocker" "$VK_CHAIN" 1
sleep 0.5  # the timeline is flushed every 300 ms
[ "$(grep -c "GPU_PICKUP,$bad," "$WORK/state/timeline.log" || true)" -eq 0 ] || die "the bad witness reached a prover"
[ "$(grep -c "SYNTH_START,$bad," "$WORK/state/timeline.log" || true)" -eq 1 ] || die "the bad witness was tried again"
no_restarts "a bad witness"
log "w[0] != 1: refused at submission; turned bad later: failed in synthesis as the client's error"

stop_daemon
log "ok"
