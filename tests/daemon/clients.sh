#!/usr/bin/env bash
# 500 clients at once on the unix socket (default limits.max_connections = 512), each submitting a
# job and long-polling it until it is final, while a probe asks GET /v1/status every 20 ms on a
# fresh connection: every job is done, no request fails, and every status probe is answered. The
# latency is measured by scripts/clients.sh (a benchmark, with its bound); here it is only logged.
# CLIENTS (default 500) changes the number of clients.
source "$(dirname "$0")/lib.sh"
require_tools
N="${CLIENTS:-500}"
write_config 2 4
start_daemon
jget() { node -e "const o=JSON.parse(require('fs').readFileSync(0,'utf8')); console.log(o.$1)"; }
node "$CUZK_SRC/tests/daemon/raw_client.js" clients "$SOCK" "$N" mult "$W_MULT" >"$WORK/clients.json"
log "$(cat "$WORK/clients.json")"
[ "$(jget done <"$WORK/clients.json")" -eq "$N" ] || die "not every job finished done"
[ "$(jget errors <"$WORK/clients.json")" -eq 0 ] || die "client errors: $(jget first_error <"$WORK/clients.json")"
[ "$(jget probe_failures <"$WORK/clients.json")" -eq 0 ] || die "GET /v1/status failed while the clients waited"
[ "$(jget probes <"$WORK/clients.json")" -gt 0 ] || die "no status probe was answered while jobs were unfinished"
grep -q "connection limit reached" "$WORK/sup.log" && die "the connection limit was reached with $N clients"
[ "$(jstat "s.proofs_done")" -eq "$N" ] || die "proofs_done is not $N"
cp "$WORK/clients.json" "${CLIENTS_RESULT:-/dev/null}"
log "ok"
