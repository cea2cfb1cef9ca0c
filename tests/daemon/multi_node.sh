#!/usr/bin/env bash
# Three daemons on this machine, each its own node (instance, socket, state folder), share one
# PostgreSQL job store and drain 60 multi-partition jobs submitted through all of them. Every proof
# verifies (snarkjs), every node proves some, none is proved and reported twice, and any node
# answers for any job. `cuzk status` and /metrics show the node and its claims.
source "$(dirname "$0")/lib.sh"
require_tools
source "$(dirname "$0")/nodes.sh"
NODES_UP=(1 2 3)
for i in "${NODES_UP[@]}"; do node_config "$i" 1 2 10000; done
for i in "${NODES_UP[@]}"; do start_node "$i"; done
cz status --socket "$(nsock 2)" >"$WORK/status.txt"
grep -q "^store postgresql at .*, node node2, connected" "$WORK/status.txt" ||
  die "cuzk status does not show the store and node: $(head -n 3 "$WORK/status.txt")"

jobs2=() jobs3=()
for k in $(seq 0 59); do
  i=$((k % 3 + 1))
  if [ $((k % 2)) -eq 0 ]; then jobs2+=("$(submit_to "$i" mult "$W_MULT" "$W_MULT")")
  else jobs3+=("$(submit_to "$i" mult "$W_MULT" "$W_MULT" "$W_MULT")"); fi
done
log "60 jobs submitted through three nodes"
wait_until 90 "every job final" "[ \"\$(jobs_left)\" = 0 ]"
check_all_done
verify_jobs "$VK_MULT" 2 "${jobs2[@]}"
verify_jobs "$VK_MULT" 3 "${jobs3[@]}"
claims=0
for i in "${NODES_UP[@]}"; do
  c=$(nmetric "$i" cuzk_store_claims_total)
  [ "$c" != absent ] && [ "$c" -gt 0 ] || die "node $i claimed nothing (cuzk_store_claims_total $c)"
  claims=$((claims + c))
  [ "$(nmetric "$i" cuzk_store_conflicts_total)" = 0 ] || die "node $i had a report refused with no node lost"
done
[ "$claims" -eq 150 ] || die "$claims claims for 150 partitions: some were claimed twice"
for i in "${NODES_UP[@]}"; do stop_node "$i"; done
check_proved_once "${NODES_UP[@]}"
[ "$(sql "SELECT count(*) FROM cuzk_partitions WHERE lease_node IS NOT NULL")" = 0 ] || die "leases left after the nodes stopped"
log "ok"
