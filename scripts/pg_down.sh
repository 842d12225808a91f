#!/usr/bin/env bash
# Stop a server made by pg_up.sh and remove its directory, leaving nothing running. The server is found
# through its own data directory (postmaster.pid), never by process name.
# usage: scripts/pg_down.sh DIR   (or DUET_PG_DIR=DIR scripts/pg_down.sh)
set -uo pipefail
D=${1:-${DUET_PG_DIR:?give the directory printed by pg_up.sh, or set DUET_PG_DIR}}
[ -d "$D" ] || exit 0
case "$(basename "$D")" in
  duetbench-pg.*) ;;
  *) echo "pg_down.sh: $D was not made by pg_up.sh (expected a duetbench-pg.* directory)" >&2; exit 1 ;;
esac
PG_BIN=${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)}

pid=""
[ -s "$D/data/postmaster.pid" ] && pid=$(head -n 1 "$D/data/postmaster.pid")
if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
  if [ -n "$PG_BIN" ] && [ -x "$PG_BIN/pg_ctl" ]; then
    if [ "$(id -u)" = 0 ]; then
      runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$D/data" -m fast -w -t 30 stop >/dev/null 2>&1
    else
      "$PG_BIN/pg_ctl" -D "$D/data" -m fast -w -t 30 stop >/dev/null 2>&1
    fi
  fi
  # pg_ctl failed or is missing: stop the postmaster directly (SIGQUIT = immediate shutdown, which
  # also ends its backends), then make sure.
  kill -0 "$pid" 2>/dev/null && kill -QUIT "$pid" 2>/dev/null
  for _ in $(seq 1 40); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.25
  done
  kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null
fi
# Backends exit once their postmaster is gone; wait for any that still hold the directory.
for _ in $(seq 1 40); do
  busy=$(find /proc/[0-9]*/cwd -maxdepth 0 -lname "$D/data*" 2>/dev/null | head -n 1)
  [ -z "$busy" ] && break
  sleep 0.25
done
rm -rf "$D"
