#!/usr/bin/env bash
# gpu.key_wait_ms bounds how long work waits for its key. With room for one key only (the cpu
# backend counts host memory), two jobs of 12 partitions of chain, whose key is resident, are
# followed by one partition of poseidon: once poseidon has waited key_wait_ms (1 s) it goes next,
# before the rest of the older chain jobs, instead of after all of them; then chain gets its key
# back. Every proof verifies.
source "$(dirname "$0")/lib.sh"
require_tools

# Each key's size where it proves, from a daemon with no budget: room for poseidon's alone.
write_config 1 3
start_daemon
largest=$(jstat "Math.max(...s.devices[0].keys.map(k => k.bytes))")
stop_daemon
rm -rf "$WORK/state"
write_config 2 4
sed -i "s/^threads = 1\$/threads = 1\nkey_memory = $largest\nkey_wait_ms = 1000/" "$CONFIG"
# Proofs take 250 ms: the chain jobs alone take 6 s.
export CUZK_TEST_PROVE_DELAY_MS=250
start_daemon
W12=()
for i in $(seq 12); do W12+=("$W_CHAIN"); done
jc=$(submit chain "${W12[@]}")
jc2=$(submit chain "${W12[@]}")
wait_until 30 "a proof of job $jc" "grep -q ',PROOF_DONE,$jc,' '$WORK/state/timeline.log'"
jp=$(submit poseidon "$W_POSEIDON")
t_sub=$(date +%s%N)
await_ok "$jp" "$WORK/out_p" "$VK_POSEIDON" 1
waited_ms=$((($(date +%s%N) - t_sub) / 1000000))
await_ok "$jc" "$WORK/out_c" "$VK_CHAIN" 12
await_ok "$jc2" "$WORK/out_c2" "$VK_CHAIN" 12
no_restarts "waiting for a key"
stop_daemon  # the timeline written out
# The order the proofs were done in: poseidon's before the last third of chain's.
order=$(grep ',PROOF_DONE,' "$WORK/state/timeline.log" | sort -t, -k2 -g | cut -d, -f4 | tr '\n' ' ')
after=$(echo "$order" | tr ' ' '\n' | sed -n "/^$jp\$/,\$p" | grep -cE "^($jc|$jc2)\$" || true)
[ "$after" -ge 8 ] ||
  die "poseidon waited for its key behind the older chain jobs (${waited_ms} ms; only $after chain proofs after it): $order"
log "poseidon proved after ${waited_ms} ms with key_wait_ms = 1000, $after chain proofs after it"
log "ok"
