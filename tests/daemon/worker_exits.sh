#!/usr/bin/env bash
# The supervisor collects the exit of every worker that dies, whatever else it is doing: here a
# circuit added at run time whose witness generator (circom's C++ folder) it compiles. The compile
# waits for its own compiler processes only; a synthesis worker killed meanwhile is seen to exit,
# restarted, and proves again. (A compile that waited for any child took the worker's exit: the
# status showed a dead pid, its slot was never used again, and its jobs never finished.)
source "$(dirname "$0")/lib.sh"
require_tools

KEYS="$WORK/keys"
mkdir -p "$KEYS"
cp "$CIRC/multiplier/circuit.zkey" "$KEYS/mult.zkey"
cp -r "$CIRC/multiplier/multiplier_cpp" "$KEYS/"
[ -f "$CIRC/multiplier/multiplier.sym" ] && cp "$CIRC/multiplier/multiplier.sym" "$KEYS/"
PORT=$((20000 + $$ % 20000))
ADMIN="exits-admin-$$"
write_config 1 2
sed -i "/^\[daemon\]/a key_dirs = [\"$KEYS\"]\ntcp = \"127.0.0.1:$PORT\"\ntoken = \"exits-client-$$\"\nadmin_token = \"$ADMIN\"" "$CONFIG"
start_daemon
old_pid=$(pid_of synth0)

"$CUZK_BIN" circuit add --tcp "127.0.0.1:$PORT" --token "$ADMIN" --name gen --zkey "$KEYS/mult.zkey" \
  --witness-generator "$KEYS/multiplier_cpp" >"$WORK/add.out" 2>&1 &
add_pid=$!
# A compile's tools run under keepers, the supervisor's children (witness/tool.hpp).
compiling() {
  local keepers
  keepers=$(pgrep -d, -P "$SUP_PID") && pgrep -P "$keepers" -f '^(g\+\+ .* -c |nasm -felf64)' >/dev/null
}
wait_until 120 "the supervisor compiling the generator" compiling
kill -9 "$old_pid"
log "killed synth0 (pid $old_pid) while the supervisor compiles"
wait "$add_pid" || die "circuit add failed: $(cat "$WORK/add.out")"
grep -q "circuit gen added" "$WORK/add.out" || die "circuit add said: $(cat "$WORK/add.out")"
wait_until 30 "synth0 restarted after its exit" \
  "[ \"\$(restarts_of synth0)\" -ge 1 ] && [ \"\$(pid_of synth0)\" != $old_pid ] && [ \"\$(state_of synth0)\" = idle ]"
grep -q "synth0: pid $old_pid exited" "$WORK/sup.log" || die "the supervisor did not log synth0's exit"
job=$(submit mult "$W_MULT" "$W_MULT")
await_ok "$job" "$WORK/out" "$VK_MULT" 2
echo '{"a": "3", "b": "11"}' >"$IN/gen_in.json"
job=$(cz submit --socket "$SOCK" --circuit gen --input "$IN/gen_in.json")
await_ok "$job" "$WORK/out_gen" "$VK_MULT" 1
stop_daemon
log "ok"
