#!/usr/bin/env bash
# kill -9 of one node mid-stream: the partitions it held stay leased to it until the lease expires
# (2 s here), then the other nodes claim them, prove them and report them. Every job ends done,
# every proof verifies, and no partition is reported twice.
source "$(dirname "$0")/lib.sh"
require_tools
source "$(dirname "$0")/nodes.sh"
for i in 1 2 3; do node_config "$i" 1 2 2000; done
# Node 1 proves slowly (1.5 s a partition) and runs alone until it is killed, so that it holds work
# then: until its 8 partitions are done it always holds the one it proves or the next it claimed.
# (With all three up, the fast nodes claimed each job within milliseconds of its submission, and
# node 1, which looks at the queue every poll_ms, could find it empty every time.)
export CUZK_TEST_PROVE_DELAY_MS=1500
start_node 1
unset CUZK_TEST_PROVE_DELAY_MS
jobs=()
for k in $(seq 0 3); do jobs+=("$(submit_to 1 mult "$W_MULT" "$W_MULT")"); done
wait_until 30 "node 1 proving" "[ \"\$(nstat 1 \"s.workers.find(w=>w.name==='gpu0').state\")\" = busy ]"
log "kill -9 node 1 (pid ${NODE_PID[1]})"
kill -9 "${NODE_PID[1]}"
wait "${NODE_PID[1]}" 2>/dev/null || true
NODE_PID[1]=""
held=$(sql "SELECT job_id || ':' || idx FROM cuzk_partitions WHERE lease_node = 'node1' AND state < 4")
[ -n "$held" ] || die "node 1 held nothing when it was killed"
log "node 1 held $(echo "$held" | wc -l) partitions: $(echo $held)"
# The others come up, take node 1's partitions once its leases expire, and take new jobs.
start_node 2
start_node 3
NODES_UP=(2 3)
for k in $(seq 4 23); do jobs+=("$(submit_to $((k % 2 + 2)) mult "$W_MULT" "$W_MULT")"); done
wait_until 60 "every job final" "[ \"\$(jobs_left)\" = 0 ]"
check_all_done
for h in $held; do
  by=$(sql "SELECT proved_by FROM cuzk_partitions WHERE job_id = ${h%%:*} AND idx = ${h##*:}")
  [ "$by" = node2 ] || [ "$by" = node3 ] || die "partition $h that node 1 held was proved by '$by'"
done
expired=$(( $(nmetric 2 cuzk_store_lease_expiries_total) + $(nmetric 3 cuzk_store_lease_expiries_total) ))
[ "$expired" -ge "$(echo "$held" | wc -l)" ] || die "cuzk_store_lease_expiries_total counts $expired"
verify_jobs "$VK_MULT" 2 "${jobs[@]}"
for i in 2 3; do stop_node "$i"; done
for h in $held; do
  grep -q ",PARTITION_CLAIMED,${h%%:*},partition=${h##*:},.*taken_over=1" "$WORK/state2/timeline.log" "$WORK/state3/timeline.log" ||
    die "partition $h: no node claimed it as taken over from an expired lease"
done
check_proved_once 1 2 3
log "ok"
