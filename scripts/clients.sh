#!/usr/bin/env bash
# Many clients at once: the API's responsiveness while it serves them.
#
#   bash scripts/clients.sh [N]      (default 500)
#
# Starts a daemon on the cpu backend (two synthesis workers, the e2e `multiplier` circuit) and N
# clients on its unix socket, each submitting a one-partition job and long-polling it until it is
# final, while a probe times GET /v1/status on a fresh connection every 20 ms (tests/daemon/clients.sh,
# which ctest runs as daemon.clients without the latency bound). Prints one line and exits 0 when
# every job is done, nothing failed, and the status latency's 99th percentile is under 50 ms
# (CLIENTS_P99_MS changes the bound):
#
#   clients: 500 jobs done, 0 errors, GET /v1/status p50 3.1 ms, p99 21.0 ms, max 40.2 ms (812 probes, 18.3 s)
#
# Builds what it needs first (scripts/setup.sh, the e2e fixtures in BUILD_DIR, default build).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
N="${1:-500}"
BOUND="${CLIENTS_P99_MS:-50}"
BUILD_DIR="${BUILD_DIR:-build}"
if [ -z "${CLIENTS_NO_SETUP:-}" ]; then
  bash scripts/setup.sh >/dev/null
  ctest --test-dir "$BUILD_DIR" --output-on-failure -R \
    '^e2e\.setup\.(ptau|circuit\.(poseidon_merkle|chain_pow2|multiplier)|case\.(poseidon_merkle|chain_pow2|chain_zero|multiplier))$' >/dev/null
fi
case "$BUILD_DIR" in /*) ;; *) BUILD_DIR="$ROOT/$BUILD_DIR" ;; esac
RESULT="$(mktemp /tmp/cuzk-clients.XXXXXX)"
trap 'rm -f "$RESULT"' EXIT
CUZK_SRC="$ROOT" CUZK_BIN="$BUILD_DIR/bin/cuzk" SUP_BIN="$BUILD_DIR/bin/cuzk-supervisor" E2E_WORK="$BUILD_DIR/e2e" \
  CLIENTS="$N" CLIENTS_RESULT="$RESULT" bash tests/daemon/clients.sh >"$RESULT.log" 2>&1 ||
  { cat "$RESULT.log" >&2; rm -f "$RESULT.log"; exit 1; }
rm -f "$RESULT.log"
line=$(node -e '
  const o = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  console.log(`clients: ${o.done} jobs done, ${o.errors} errors, GET /v1/status p50 ${o.p50_ms} ms, p99 ${o.p99_ms} ms, ` +
              `max ${o.max_ms} ms (${o.probes} probes, ${o.seconds} s)`);' "$RESULT")
echo "$line"
node -e 'process.exit(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).p99_ms < +process.argv[2] ? 0 : 1)' \
  "$RESULT" "$BOUND" || { echo "clients: status p99 is not under $BOUND ms" >&2; exit 1; }
