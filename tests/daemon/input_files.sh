#!/usr/bin/env bash
# Circuit inputs files named by path: read and parsed on a helper thread, so that a large one does
# not hold the API (GET /v1/status answers at once meanwhile), and one over limits.max_input_bytes
# (16 MiB by default) refused with 413 naming the file and the limit before it is read.
source "$(dirname "$0")/lib.sh"
require_tools
command -v curl >/dev/null || { log "curl is missing: skipped"; exit $SKIP; }

write_inputs_config 1 2
# The daemon compiles the generator at its first start.
"$SUP_BIN" --config "$CONFIG" >>"$WORK/sup.log" 2>&1 &
SUP_PID=$!
wait_until 600 "all workers idle" "{ kill -0 $SUP_PID 2>/dev/null || die 'the supervisor exited at start'; } &&
  jstat \"s.workers.every(w=>w.state==='idle')\" 2>/dev/null | grep -qx true"

# post_inputs FILE OUT: POST /v1/proofs naming FILE; the answer's body into OUT, its status printed.
post_inputs() {
  curl -sS --unix-socket "$SOCK" -o "$2" -w '%{http_code}' -H 'Content-Type: application/json' \
    --data "{\"circuit\": \"mult_in\", \"inputs\": [{\"path\": \"$1\"}]}" http://localhost/v1/proofs
}
# A JSON object of about MIB MiB that is slow to parse: a signal the circuit lacks, holding
# millions of empty arrays (the file is refused for that signal, after it is parsed).
big_inputs() {  # big_inputs FILE MIB
  node -e 'const n = Math.floor((process.argv[2] * 1048576 - 64) / 3);
    require("fs").writeFileSync(process.argv[1], "{\"a\": 3, \"b\": 11, \"pad\": [" + "[],".repeat(n - 1) + "[]]}");' "$1" "$2"
}

# 1. Within the limit: while the file is parsed the API answers at once.
big_inputs "$IN/big.json" 15
[ "$(stat -c %s "$IN/big.json")" -lt $((16 << 20)) ] || die "big.json is not within the default limit"
post_inputs "$IN/big.json" "$WORK/big.out" >"$WORK/big.code" &
post=$!
polls=0 slowest=0
while kill -0 $post 2>/dev/null; do
  t=$(curl -sS --unix-socket "$SOCK" -o /dev/null -w '%{time_total}' http://localhost/v1/status)
  polls=$((polls + 1))
  slowest=$(node -e 'console.log(Math.max(+process.argv[1], +process.argv[2]))' "$slowest" "$t")
done
wait $post
log "15 MiB inputs file: $polls status requests meanwhile, the slowest ${slowest}s"
[ "$(cat "$WORK/big.code")" = 400 ] && grep -q "inputs\[0\]: $IN/big.json: .*pad" "$WORK/big.out" ||
  die "the large inputs file got $(cat "$WORK/big.code"): $(head -c 300 "$WORK/big.out")"
[ "$polls" -ge 2 ] || die "the submission was answered before the API could be asked ($polls requests)"
node -e 'process.exit(+process.argv[1] < 0.25 ? 0 : 1)' "$slowest" ||
  die "GET /v1/status took ${slowest}s while an inputs file was parsed: the parse holds the event loop"

# 2. Over the limit: 413 naming the file and the key, at once.
head -c $(((16 << 20) + 1)) /dev/zero | tr '\0' ' ' >"$IN/over.json"
start=$(date +%s%N)
code=$(post_inputs "$IN/over.json" "$WORK/over.out")
ms=$((($(date +%s%N) - start) / 1000000))
[ "$code" = 413 ] || die "an inputs file over the limit got $code: $(head -c 300 "$WORK/over.out")"
grep -qF "inputs[0]: $IN/over.json is $(((16 << 20) + 1)) bytes, larger than limits.max_input_bytes (16777216 bytes)" \
  "$WORK/over.out" || die "413 without the file and the limit: $(cat "$WORK/over.out")"
[ "$ms" -lt 2000 ] || die "the refusal took ${ms} ms"
log "inputs file over limits.max_input_bytes: 413 in ${ms} ms: $(cat "$WORK/over.out")"

# 3. A small inputs file still proves.
printf '{"a": 3, "b": "11"}\n' >"$IN/m.json"
j=$(cz submit --socket "$SOCK" --circuit mult_in --input "$IN/m.json")
await_ok "$j" "$WORK/out" "$VK_MULT" 1
stop_daemon
log "ok"
