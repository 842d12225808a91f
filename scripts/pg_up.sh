#!/usr/bin/env bash
# Start a throw-away PostgreSQL server for tests and demos: its own data directory under a new temp
# directory, listening on 127.0.0.1 only at a free port, password (SCRAM) authentication, one database.
# Nothing outside that directory is touched (an installed cluster such as Debian's "main" is left alone).
#
# usage: eval "$(scripts/pg_up.sh)"
#   prints   export DUET_PG_DIR=DIR      (everything of this server lives there)
#            export DUET_PG_URL=postgresql://duet:PASSWORD@127.0.0.1:PORT/duet
#   tear it down with: scripts/pg_down.sh DIR   (or with DUET_PG_DIR set)
# env: PG_BIN (default: the newest /usr/lib/postgresql/*/bin), DUET_PG_OWNER_PID (a process whose death
#   marks the server as stale: default the caller), DUET_PG_PORT (default: a free port).
#
# As root the server runs as the user "postgres" (PostgreSQL refuses to run as root); otherwise as the
# caller. Servers left behind by a killed test run (their owner process is gone) are torn down first:
# only those, found through their own directories, never by process name.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
PARENT=${TMPDIR:-/tmp}

PG_BIN=${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)}
if [ -z "$PG_BIN" ] || [ ! -x "$PG_BIN/initdb" ] || [ ! -x "$PG_BIN/pg_ctl" ]; then
  echo "pg_up.sh: PostgreSQL server binaries not found (Debian: apt-get install postgresql; or set PG_BIN)" >&2
  exit 1
fi
if [ "$(id -u)" = 0 ]; then
  id postgres >/dev/null 2>&1 || { echo "pg_up.sh: as root, the server runs as user 'postgres', which does not exist" \
                                         "(apt-get install postgresql creates it)" >&2; exit 1; }
  as_owner() { runuser -u postgres -- "$@"; }
else
  as_owner() { "$@"; }
fi

for old in "$PARENT"/duetbench-pg.*; do
  [ -d "$old" ] || continue
  owner=$(cat "$old/owner.pid" 2>/dev/null || echo 0)
  if [ "$owner" = 0 ] || ! kill -0 "$owner" 2>/dev/null; then
    echo "pg_up.sh: tearing down a stale server in $old (owner $owner is gone)" >&2
    bash "$HERE/pg_down.sh" "$old" >&2 || true
  fi
done

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
PORT=${DUET_PG_PORT:-$(free_port)}
PASSWORD=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')

D=$(mktemp -d "$PARENT/duetbench-pg.XXXXXX")
echo "${DUET_PG_OWNER_PID:-$PPID}" > "$D/owner.pid"
mkdir -p "$D/sock"
printf '%s\n' "$PASSWORD" > "$D/pwfile"
chmod 600 "$D/pwfile"
[ "$(id -u)" = 0 ] && chown -R postgres: "$D"

fail() { echo "pg_up.sh: $1 (log: $D/postgres.log)" >&2; tail -n 20 "$D/postgres.log" >&2 2>/dev/null || true
         bash "$HERE/pg_down.sh" "$D" >&2 || true; exit 1; }

as_owner "$PG_BIN/initdb" -D "$D/data" -U duet --pwfile="$D/pwfile" --auth=scram-sha-256 --no-locale -E UTF8 \
  --no-sync >"$D/initdb.log" 2>&1 || { cat "$D/initdb.log" >&2; fail "initdb failed"; }
rm -f "$D/pwfile"
# A throw-away server: fsync off makes commits cheap; it only has to survive its clients, not power loss.
as_owner "$PG_BIN/pg_ctl" -D "$D/data" -l "$D/postgres.log" -w -t 60 -o \
  "-c listen_addresses=127.0.0.1 -p $PORT -c unix_socket_directories=$D/sock -c fsync=off -c shared_buffers=32MB" \
  start >/dev/null || fail "the server did not start"
PGPASSWORD=$PASSWORD "$PG_BIN/createdb" -h 127.0.0.1 -p "$PORT" -U duet duet || fail "createdb failed"

URL="postgresql://duet:$PASSWORD@127.0.0.1:$PORT/duet"
printf '%s\n' "$URL" > "$D/url"
chmod 600 "$D/url"
echo "export DUET_PG_DIR=$D"
echo "export DUET_PG_URL=$URL"
