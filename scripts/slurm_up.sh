#!/usr/bin/env bash
# Bring up a throw-away Slurm cluster of N virtual nodes on this one machine, for tests and demos
# (Debian 12 packages, root, no systemd needed). Every daemon runs from one private directory with its
# own munge key and socket, so an existing Slurm or munge on the machine is not touched.
#
# usage: scripts/slurm_up.sh [NODES] [CPUS_PER_NODE]
#   prints the cluster directory on stdout (its slurm.conf is DIR/slurm.conf: export SLURM_CONF=...);
#   tear it down with: SLURM_TEST_DIR=DIR scripts/slurm_down.sh
# env: SLURM_TEST_DIR (default: a new ${TMPDIR:-/tmp}/duetbench-slurm.XXXXXX), SLURM_OWNER_PID (a process
#   whose death marks the cluster as stale: default the caller), SLURMCTLD_PORT / SLURMD_PORT_BASE (default: free).
#
# Clusters left behind by a killed test run (their owner process is gone) are torn down first: only
# those, found through their own directories and PID files, never by process name.
set -euo pipefail
NODES=${1:-2}
CPUS=${2:-2}
HERE=$(cd "$(dirname "$0")" && pwd)
PARENT=${TMPDIR:-/tmp}

if [ "$(id -u)" != 0 ]; then echo "slurm_up.sh: needs root (daemons run as root, munged as munge)" >&2; exit 1; fi
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v munged >/dev/null \
   || ! command -v sbatch >/dev/null; then
  echo "slurm_up.sh: installing slurmctld slurmd slurm-client munge (Debian packages)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends slurmctld slurmd slurm-client munge >&2
fi

# Stale clusters: a directory of ours whose owner has died.
for old in "$PARENT"/duetbench-slurm.*; do
  [ -f "$old/owner.pid" ] || continue   # not made by this script
  owner=$(cat "$old/owner.pid" 2>/dev/null || echo 0)
  if [ -z "$owner" ] || [ "$owner" = 0 ] || ! kill -0 "$owner" 2>/dev/null; then
    echo "slurm_up.sh: tearing down a stale cluster in $old (owner $owner is gone)" >&2
    SLURM_TEST_DIR=$old bash "$HERE/slurm_down.sh" >&2 || true
  fi
done

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
CTLD_PORT=${SLURMCTLD_PORT:-$(free_port)}

D=${SLURM_TEST_DIR:-$(mktemp -d "$PARENT/duetbench-slurm.XXXXXX")}
mkdir -p "$D/state" "$D/log" "$D/munge"
echo "${SLURM_OWNER_PID:-$PPID}" > "$D/owner.pid"
chmod 711 "$D"   # munged runs as munge and must traverse it (a mktemp directory is 0700)
H=$(hostname -s)

# munge: a private key and socket. Its directory needs o+x for clients to reach the socket.
[ -s "$D/munge/munge.key" ] || dd if=/dev/urandom bs=1 count=1024 of="$D/munge/munge.key" status=none
chown -R munge:munge "$D/munge"
chmod 711 "$D/munge"
chmod 400 "$D/munge/munge.key"
runuser -u munge -- /usr/sbin/munged --key-file="$D/munge/munge.key" --socket="$D/munge/munge.sock" \
  --pid-file="$D/munge/munged.pid" --log-file="$D/munge/munged.log" --seed-file="$D/munge/munged.seed" \
  || { echo "slurm_up.sh: munged failed to start (see $D/munge/munged.log)" >&2; exit 1; }

cat > "$D/slurm.conf" <<CONF
ClusterName=duettest
SlurmctldHost=$H(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$D/munge/munge.sock
CredType=cred/munge
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool-%n
SlurmctldPidFile=$D/slurmctld.pid
SlurmdPidFile=$D/slurmd-%n.pid
SlurmctldLogFile=$D/log/slurmctld.log
SlurmdLogFile=$D/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$D/log/jobcomp.txt
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MinJobAge=3600
KillWait=5
SlurmdParameters=config_overrides
CONF
for i in $(seq 1 "$NODES"); do
  port=${SLURMD_PORT_BASE:+$((SLURMD_PORT_BASE + i))}
  port=${port:-$(free_port)}
  echo "NodeName=n$i NodeHostname=$H NodeAddr=127.0.0.1 Port=$port CPUs=$CPUS State=UNKNOWN" >> "$D/slurm.conf"
done
echo "PartitionName=bench Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=EXCLUSIVE" >> "$D/slurm.conf"

export SLURM_CONF=$D/slurm.conf
slurmctld -c   # -c: clean state, job ids start afresh
for i in $(seq 1 "$NODES"); do slurmd -N "n$i"; done
for _ in $(seq 1 60); do
  [ "$(sinfo -h -o %t 2>/dev/null | sort -u)" = "idle" ] && break
  sleep 0.5
done
if [ "$(sinfo -h -o %t 2>/dev/null | sort -u)" != "idle" ]; then
  echo "slurm_up.sh: the nodes did not become idle; logs:" >&2
  tail -n 20 "$D"/log/*.log >&2 || true
  SLURM_TEST_DIR=$D bash "$HERE/slurm_down.sh" >&2 || true
  exit 1
fi
echo "$D"
