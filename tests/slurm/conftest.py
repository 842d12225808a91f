"""A real two-node Slurm cluster and a real PostgreSQL server on this machine, for the session.

Both are brought up once (scripts/slurm_up.sh; initdb + pg_ctl) and torn down by a finalizer. Each
records the test process as its owner, so a cluster or server left behind by a killed test run is
found by the next bring-up (its owner is gone) and stopped — by its own PID files, never by name.
"""
from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "scripts"
PG_PASSWORD = "s3cret-pw-7f4e2a"  # looked for later in everything the backend writes or shows
PG_PREFIX = "duetbench-slurmtests-pg."  # our own throw-away servers, told apart from anyone else's


@dataclass(frozen=True)
class Cluster:
    dir: Path
    env: dict[str, str]


@pytest.fixture(scope="session")
def slurm_cluster() -> Iterator[Cluster]:
    if os.geteuid() != 0:
        pytest.skip("a test Slurm cluster needs root (its daemons run as root, munged as munge)")
    if shutil.which("slurmctld") is None and shutil.which("apt-get") is None:
        pytest.skip("Slurm is not installed and apt-get is not available (Debian: slurmctld slurmd slurm-client "
                    "munge)")
    env = dict(os.environ, SLURM_OWNER_PID=str(os.getpid()))
    up = subprocess.run(["bash", str(SCRIPTS / "slurm_up.sh"), "2", "2"], env=env, capture_output=True, text=True,
                        timeout=300)
    assert up.returncode == 0, f"slurm_up.sh failed:\n{up.stdout}\n{up.stderr}"
    directory = Path(up.stdout.strip().splitlines()[-1])
    cluster_env = dict(os.environ, SLURM_CONF=str(directory / "slurm.conf"))
    try:
        yield Cluster(directory, cluster_env)
    finally:
        subprocess.run(["bash", str(SCRIPTS / "slurm_down.sh")], env=dict(os.environ, SLURM_TEST_DIR=str(directory)),
                       capture_output=True, timeout=180)


def _pg_bin() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(found[-1]).parent if found else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _stop_stale_postgres(pg_bin: Path) -> None:
    for old in glob.glob(os.path.join(tempfile.gettempdir(), f"{PG_PREFIX}*")):
        try:
            owner = int(Path(old, "owner.pid").read_text())
        except (OSError, ValueError):
            continue  # not one of ours, or being set up right now
        try:
            os.kill(owner, 0)
            continue  # its test run is still going
        except OSError:
            pass
        if Path(old, "data", "postmaster.pid").exists():
            subprocess.run(["runuser", "-u", "postgres", "--", str(pg_bin / "pg_ctl"), "-D", f"{old}/data", "-m",
                            "immediate", "-w", "stop"], capture_output=True, timeout=60)
        shutil.rmtree(old, ignore_errors=True)


@dataclass(frozen=True)
class Postgres:
    url: str  # with the password, as a user would give it to --db
    password: str
    port: int
    socket_dir: Path

    def psql(self, sql: str) -> str:
        out = subprocess.run(["runuser", "-u", "postgres", "--", "psql", "-h", str(self.socket_dir), "-p",
                              str(self.port), "-d", "duet", "-At", "-c", sql], capture_output=True, text=True,
                             timeout=60, check=True)
        return out.stdout


@pytest.fixture(scope="session")
def postgres() -> Iterator[Postgres]:
    pg_bin = _pg_bin()
    if pg_bin is None:
        pytest.skip("the PostgreSQL server is not installed (Debian: apt-get install postgresql)")
    if os.geteuid() != 0:
        pytest.skip("the throw-away PostgreSQL server is started as user postgres, which needs root")
    try:
        import psycopg
    except ImportError:
        pytest.skip("the psycopg driver is not installed (pip install 'psycopg[binary]')")
    _stop_stale_postgres(pg_bin)
    base = Path(tempfile.mkdtemp(prefix=PG_PREFIX))
    base.chmod(0o711)  # initdb and postgres run as postgres and must reach their directories
    (base / "owner.pid").write_text(str(os.getpid()))
    data, sock = base / "data", base / "sock"
    as_pg = ["runuser", "-u", "postgres", "--"]
    try:
        for d in (data, sock):
            d.mkdir()
            shutil.chown(d, "postgres", "postgres")
        port = _free_port()
        subprocess.run([*as_pg, str(pg_bin / "initdb"), "-D", str(data), "-A", "trust", "--auth-host=scram-sha-256",
                        "-U", "postgres"], check=True, capture_output=True, timeout=120)
        start = subprocess.run([*as_pg, str(pg_bin / "pg_ctl"), "-D", str(data), "-l", str(sock / "log"), "-w", "-o",
                                f"-p {port} -k {sock} -c listen_addresses=127.0.0.1 -c fsync=off", "start"],
                               capture_output=True, text=True, timeout=120)
        assert start.returncode == 0, start.stdout + start.stderr
        for sql in (f"CREATE ROLE duet LOGIN PASSWORD '{PG_PASSWORD}'", "CREATE DATABASE duet OWNER duet"):
            subprocess.run([*as_pg, "psql", "-h", str(sock), "-p", str(port), "-d", "postgres", "-c", sql],
                           check=True, capture_output=True, timeout=60)
        yield Postgres(f"postgresql://duet:{PG_PASSWORD}@127.0.0.1:{port}/duet", PG_PASSWORD, port, sock)
    finally:
        if (data / "postmaster.pid").exists():
            subprocess.run([*as_pg, str(pg_bin / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"],
                           capture_output=True, timeout=120)
        shutil.rmtree(base, ignore_errors=True)
