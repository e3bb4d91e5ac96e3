#!/usr/bin/env bash
# A throwaway PostgreSQL 15 (Debian's packages) for tests and demos: initdb into a temporary
# folder, run as the `postgres` user, listening on 127.0.0.1 only on a free port, fsync on.
#
#   scripts/pg.sh                 start, print the URL, wait for Ctrl-C, then stop and remove it
#   scripts/pg.sh CMD ARGS...     start, run CMD with RAPID_TEST_PG_URL (and PG_URL) exported,
#                                 stop and remove it, exit with CMD's status
#   source scripts/pg.sh          defines pg_start (exports PG_URL, RAPID_TEST_PG_URL) and pg_stop;
#                                 the caller sets `trap pg_stop EXIT` (scripts/test.sh does)
#
# Installs the `postgresql` package with apt when its binaries are missing (needs root).
PG_BIN="${PG_BIN:-/usr/lib/postgresql/15/bin}"

pg_log() { echo "pg.sh: $*" >&2; }

# Runs a command as the postgres user (root can switch; anyone else runs it as themself).
pg_as_owner() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

pg_install() {
  [ -x "$PG_BIN/initdb" ] && return 0
  if [ "$(id -u)" != 0 ]; then
    pg_log "no PostgreSQL 15 in $PG_BIN and not root: apt-get install postgresql-15 first"
    return 1
  fi
  pg_log "installing postgresql with apt"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql >&2 || {
    DEBIAN_FRONTEND=noninteractive apt-get update -q >&2 &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql >&2
  }
}

pg_free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Starts the server; sets PG_DIR, PG_PORT and exports PG_URL and RAPID_TEST_PG_URL.
pg_start() {
  pg_install || return 1
  PG_DIR="$(mktemp -d /tmp/rapid-pg.XXXXXX)"
  chmod 755 "$PG_DIR"
  if [ "$(id -u)" = 0 ]; then chown postgres: "$PG_DIR"; fi
  pg_as_owner "$PG_BIN/initdb" -D "$PG_DIR/data" -U postgres --auth=trust -E UTF8 \
    --locale=C.UTF-8 >"$PG_DIR/initdb.log" 2>&1 || {
    pg_log "initdb failed:"; cat "$PG_DIR/initdb.log" >&2; return 1
  }
  local tries
  for tries in 1 2 3; do
    PG_PORT="$(pg_free_port)"
    # Loopback only, no Unix socket outside the folder; fsync and full page writes stay on.
    if pg_as_owner "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w -t 30 \
      -o "-c listen_addresses=127.0.0.1 -p $PG_PORT -c unix_socket_directories=$PG_DIR -c fsync=on -c max_connections=200" \
      start >/dev/null; then
      export PG_URL="postgres://postgres@127.0.0.1:$PG_PORT/postgres"
      export RAPID_TEST_PG_URL="$PG_URL"
      pg_log "PostgreSQL 15 at $PG_URL (data in $PG_DIR)"
      return 0
    fi
    pg_log "start on port $PG_PORT failed (try $tries):"; tail -5 "$PG_DIR/server.log" >&2
  done
  return 1
}

# Stops the server and removes its folder; safe to call twice.
pg_stop() {
  if [ -n "${PG_DIR:-}" ] && [ -d "$PG_DIR" ]; then
    pg_as_owner "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m fast -w stop >/dev/null 2>&1 || true
    rm -rf "$PG_DIR"
    pg_log "stopped and removed"
  fi
  PG_DIR=""
}

# Run (not sourced): start, then run the command or wait.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  trap pg_stop EXIT
  trap 'exit 130' INT TERM
  pg_start
  if [ "$#" -gt 0 ]; then
    set +e
    "$@"
    status=$?
    exit "$status"
  fi
  echo "$PG_URL"
  pg_log "Ctrl-C stops it"
  while true; do sleep 3600; done
fi
