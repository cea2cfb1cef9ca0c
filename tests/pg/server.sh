#!/usr/bin/env bash
# A throwaway PostgreSQL server for the tests: initdb and pg_ctl in a folder, a unix socket in that
# folder and no TCP, trust authentication, no fsync. PostgreSQL refuses to run as root, so as root
# the server runs as `nobody`.
#   server.sh start DIR   prints the connection URI; exits 77 (skip) with the reason on stderr when
#                         no server can be started here
#   server.sh stop DIR    stops it (fast), keeping its files: `start DIR` again brings it back
#   server.sh remove DIR  stops it and removes DIR
set -euo pipefail
cmd="${1:?usage: server.sh start|stop|remove DIR}" dir="${2:?usage: server.sh start|stop|remove DIR}"
skip() { echo "[pg] skipped: $*" >&2; exit 77; }

bindir=""
for d in /usr/lib/postgresql/*/bin; do [ -x "$d/initdb" ] && bindir="$d"; done
as_owner() {
  if [ "$(id -u)" -eq 0 ]; then setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"; else "$@"; fi
}

case "$cmd" in
start)
  [ -n "$bindir" ] || skip "PostgreSQL is not installed (scripts/setup.sh installs Debian's postgresql)"
  if [ "$(id -u)" -eq 0 ]; then
    command -v setpriv >/dev/null 2>&1 || skip "running as root without setpriv to start PostgreSQL as nobody"
    id nobody >/dev/null 2>&1 || skip "running as root and there is no user nobody to start PostgreSQL as"
  fi
  mkdir -p "$dir"
  chmod 755 "$dir"
  if [ ! -f "$dir/data/PG_VERSION" ]; then
    mkdir -p "$dir/data"
    [ "$(id -u)" -eq 0 ] && chown nobody:nogroup "$dir" "$dir/data"
    as_owner "$bindir/initdb" -D "$dir/data" -U cuzk --auth=trust -E UTF8 --no-sync >"$dir/initdb.log" 2>&1 ||
      skip "initdb failed: $(tail -n 3 "$dir/initdb.log" | tr '\n' ' ')"
  fi
  as_owner "$bindir/pg_ctl" -D "$dir/data" -l "$dir/data/server.log" -w -t 30 \
    -o "-c listen_addresses='' -k $dir -c fsync=off -c synchronous_commit=off -c full_page_writes=off" start \
    >"$dir/pg_ctl.log" 2>&1 || skip "the server did not start: $(tail -n 5 "$dir/data/server.log" | tr '\n' ' ')"
  if ! "$bindir/psql" -h "$dir" -U cuzk -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname='cuzk'" | grep -q 1; then
    "$bindir/createdb" -h "$dir" -U cuzk cuzk || skip "createdb failed"
  fi
  echo "postgresql://cuzk@/cuzk?host=$dir"
  ;;
stop)
  [ -f "$dir/data/postmaster.pid" ] && as_owner "$bindir/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
  ;;
remove)
  [ -f "$dir/data/postmaster.pid" ] && as_owner "$bindir/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
  rm -rf "$dir"
  ;;
*) echo "usage: server.sh start|stop|remove DIR" >&2; exit 2 ;;
esac
