#!/usr/bin/env bash
# PostgreSQL stops for 10 s mid-stream and starts again. Meanwhile the nodes keep proving what they
# hold, keep answering the API (503 for what needs the database) and reading their workers'
# heartbeats; their results wait and reach the database once it is back. Nothing is lost, nothing is
# reported twice, and every proof verifies.
source "$(dirname "$0")/lib.sh"
require_tools
source "$(dirname "$0")/nodes.sh"
for i in 1 2; do node_config "$i" 1 2 30000; done
export CUZK_TEST_PROVE_DELAY_MS=400
start_node 1
start_node 2
NODES_UP=(1 2)
jobs=()
for k in $(seq 0 19); do jobs+=("$(submit_to $((k % 2 + 1)) mult "$W_MULT" "$W_MULT")"); done
wait_until 30 "a few proofs" "[ \"\$(sql \"SELECT count(*) FROM cuzk_partitions WHERE state = 4\")\" -ge 4 ]"
log "stopping PostgreSQL for 10 s"
bash "$PG_SERVER" stop "$PG_DIR"
t0=$(date +%s)
wait_until 10 "node 1 to notice" "[ \"\$(nstat 1 's.store.connected')\" = false ]"
for i in 1 2; do
  timeout 5 "$CUZK_BIN" status --socket "$(nsock "$i")" >/dev/null || die "node $i does not answer while the database is down"
done
if out=$(submit_to 1 mult "$W_MULT" 2>&1); then die "a submission was accepted with the database down: $out"; fi
echo "$out" | grep -q "cannot be reached" || die "a submission with the database down: $out"
sleep $((10 - ($(date +%s) - t0)))
waiting=$(( $(nmetric 1 cuzk_store_reports_waiting) + $(nmetric 2 cuzk_store_reports_waiting) ))
[ "$(nmetric 1 cuzk_store_up)" = 0 ] || die "cuzk_store_up is not 0 with the database down"
log "results waiting for the database: $waiting"
[ "$waiting" -gt 0 ] || die "no result was made while the database was down"
bash "$PG_SERVER" start "$PG_DIR" >/dev/null || die "PostgreSQL did not start again"
log "PostgreSQL is back after $(($(date +%s) - t0)) s"
wait_until 60 "every job final" "[ \"\$(jobs_left)\" = 0 ]"
check_all_done
verify_jobs "$VK_MULT" 2 "${jobs[@]}"
for i in 1 2; do
  [ "$(nmetric "$i" cuzk_store_reconnects_total)" -ge 1 ] || die "node $i: cuzk_store_reconnects_total did not count the return"
  r=$(nstat "$i" "s.workers.reduce((a,w)=>a+w.restarts,0)")
  [ "$r" = 0 ] || die "node $i restarted $r workers: its loop stalled while the database was down"
done
for i in 1 2; do stop_node "$i"; done
check_proved_once 1 2
[ "$(sql "SELECT count(*) FROM cuzk_partitions WHERE proved_by <> ''")" = 40 ] || die "not all 40 partitions recorded"
log "ok"
