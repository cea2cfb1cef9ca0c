#!/usr/bin/env bash
# More keys than gpu.key_memory holds (the cpu backend, where it counts host memory): three
# circuits whose keys do not fit together. A round-robin stream over them proves every partition
# (snarkjs accepts each proof); a switch to a key that does not fit gives resident keys back
# (KEY_EVICT) and loads it (KEY_LOAD), with no worker restarted, and /v1/status shows the resident
# keys within the budget. With a backlog, the resident key's partitions go first and each other key
# is loaded once, not once per job. With gpu.key_host_memory the keys given back stay parsed and
# load from host memory. A budget smaller than one key is a config error at start (exit 78) naming the circuit.
source "$(dirname "$0")/lib.sh"
require_tools

# Each key's size where it proves, as the daemon counts it, from a daemon with no budget.
write_config 1 3
start_daemon
bytes_of() { jstat "s.devices[0].keys.find(k => k.circuit === '$1').bytes"; }
[ "$(jstat "s.devices[0].keys.every(k => k.resident && k.loads === 1)")" = true ] ||
  die "without a budget every key is not resident once: $(jstat 's.devices[0].keys')"
B_POSEIDON=$(bytes_of poseidon) B_CHAIN=$(bytes_of chain) B_MULT=$(bytes_of mult)
stop_daemon
largest=$(printf '%s\n' "$B_POSEIDON" "$B_CHAIN" "$B_MULT" | sort -n | tail -1)
log "keys: poseidon $B_POSEIDON, chain $B_CHAIN, mult $B_MULT bytes"
[ "$B_POSEIDON" = "$largest" ] || die "expected poseidon's key to be the largest"

with_budget() {  # with_budget KEY_MEMORY [KEY_HOST_MEMORY]
  write_config 2 4
  sed -i "s/^threads = 1\$/threads = 1\nkey_memory = $1\nkey_host_memory = ${2:-0}\nkey_wait_ms = 0/" "$CONFIG"
}

# One byte short of the largest key: exit 78 at start, naming it.
with_budget $((largest - 1))
refused_at_start "a key larger than gpu.key_memory" "gpu.key_memory" "circuit 'poseidon'"

# Room for the largest key alone (or the two small ones): the largest comes and goes.
round_robin() {
  local jobs=() r  # (await_ok counts with i)
  for r in 1 2 3; do
    jobs+=("$(submit poseidon "$W_POSEIDON")" "$(submit chain "$W_CHAIN")" "$(submit mult "$W_MULT")")
  done
  for ((r = 0; r < ${#jobs[@]}; r += 3)); do
    await_ok "${jobs[$r]}" "$WORK/out_p${jobs[$r]}" "$VK_POSEIDON" 1
    await_ok "${jobs[$((r + 1))]}" "$WORK/out_c${jobs[$r]}" "$VK_CHAIN" 1
    await_ok "${jobs[$((r + 2))]}" "$WORK/out_m${jobs[$r]}" "$VK_MULT" 1
  done
}
with_budget "$largest"
start_daemon
[ "$(jstat "s.devices[0].keys.filter(k => k.resident).length")" = 1 ] ||
  die "with room for one key, not exactly one resident at start: $(jstat 's.devices[0].keys')"
round_robin
no_restarts "proving over the budget"
loads=$(timeline | grep -c ',KEY_LOAD,') evicts=$(timeline | grep -c ',KEY_EVICT,')
[ "$loads" -ge 4 ] && [ "$evicts" -ge 3 ] || die "expected keys to be reloaded: $loads loads, $evicts evictions"
[ "$(jstat "s.devices[0].keys.filter(k => k.resident).reduce((n, k) => n + k.bytes, 0) <= $largest")" = true ] ||
  die "the resident keys take more than the budget ($largest): $(jstat 's.devices[0].keys')"
[ "$(jstat "s.devices[0].keys.reduce((n, k) => n + k.evictions, 0)")" = "$evicts" ] ||
  die "/v1/status counts other evictions than the timeline ($evicts): $(jstat 's.devices[0].keys')"
! timeline | grep ',KEY_LOAD,' | grep -q 'source=host' || die "a key loaded from host memory with key_host_memory = 0"
timeline | grep ',KEY_EVICT,' | grep -q 'host=dropped' || die "KEY_EVICT does not say the host copy was dropped"
log "one key at a time: $loads loads, $evicts evictions, every proof verified"
stop_daemon

# A backlog over the budget, synthesis slower than the submissions: the scheduler serves the
# resident key's partitions first and loads each other key once, instead of once per job.
rm -rf "$WORK/state"
with_budget "$largest"
sed -i 's/^key_wait_ms = 0$/key_wait_ms = 60000/' "$CONFIG"
CUZK_TEST_SYNTH_DELAY_MS=300 start_daemon
round_robin
no_restarts "a backlog over the budget"
on_demand=$(timeline | grep ',KEY_LOAD,' | grep -c 'partition=')
[ "$on_demand" -le 2 ] || die "a backlog of three rounds over three circuits loaded keys $on_demand times, not at most twice:
$(timeline | grep -E ',(KEY_LOAD|KEY_EVICT|GPU_START),' | cut -d, -f2-6)"
log "a backlog: $on_demand keys loaded on demand for 9 jobs over 3 circuits"
stop_daemon

# With host memory for the others: a switch is an upload from the parsed copy, not a file read.
rm -rf "$WORK/state"
with_budget "$largest" $((B_POSEIDON + B_CHAIN + B_MULT))
start_daemon
round_robin
no_restarts "proving over the budget with host copies"
timeline | grep ',KEY_LOAD,' | grep -q 'source=host' || die "no key was loaded from its host copy"
timeline | grep ',KEY_EVICT,' | grep -q 'host=kept' || die "KEY_EVICT does not say the host copy was kept"
log "host copies: $(timeline | grep ',KEY_LOAD,' | grep -c 'source=host') loads from host memory"
stop_daemon
log "ok"
