#!/usr/bin/env bash
# Tear down a cluster made by slurm_up.sh: cancel its jobs, stop its daemons by their PID files, remove
# its directory. Processes are found through this cluster's own files, never by name alone.
# usage: SLURM_TEST_DIR=DIR scripts/slurm_down.sh
set -uo pipefail
D=${SLURM_TEST_DIR:?set SLURM_TEST_DIR to the directory printed by slurm_up.sh}
[ -d "$D" ] || exit 0
export SLURM_CONF=$D/slurm.conf

alive() { local out=""; for p in "$@"; do kill -0 "$p" 2>/dev/null && out="$out $p"; done; echo "$out"; }

pids=$(cat "$D"/slurmctld.pid "$D"/slurmd-*.pid 2>/dev/null || true)
if [ -n "$(alive $pids)" ]; then
  # Running jobs outlive 'scontrol shutdown' (their slurmstepd keeps retrying): cancel them first.
  timeout 10 scancel --full --quiet "$(timeout 10 squeue -h -o %A 2>/dev/null | sort -u)" 2>/dev/null || true
  for _ in $(seq 1 40); do
    [ -z "$(timeout 5 squeue -h -t PD,R,CG,CF,S 2>/dev/null)" ] && break
    sleep 0.25
  done
  timeout 10 scontrol shutdown >/dev/null 2>&1 || kill $pids 2>/dev/null || true
fi
for _ in $(seq 1 40); do
  [ -z "$(alive $pids)" ] && break
  sleep 0.25
done
left=$(alive $pids)
[ -n "$left" ] && kill -9 $left 2>/dev/null

if [ -s "$D/munge/munged.pid" ]; then
  mp=$(cat "$D/munge/munged.pid")
  kill "$mp" 2>/dev/null
  for _ in $(seq 1 40); do kill -0 "$mp" 2>/dev/null || break; sleep 0.25; done
  kill -9 "$mp" 2>/dev/null
fi
# A job step that outlived its slurmd: only those whose working directory or open files are in $D.
for p in $(pgrep -x slurmstepd 2>/dev/null); do
  ls -l "/proc/$p/cwd" "/proc/$p/fd" 2>/dev/null | grep -q -- "$D" && kill -9 "$p" 2>/dev/null
done
rm -rf "$D"
exit 0
