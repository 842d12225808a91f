"""Fixtures for the store on both backends: a SQLite file, and a real throw-away PostgreSQL server
(scripts/pg_up.sh, torn down by scripts/pg_down.sh when the session ends) with a fresh database per test."""
from __future__ import annotations

import glob
import os
import re
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from pg_server import PgServer

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    if not glob.glob("/usr/lib/postgresql/*/bin/initdb") and not os.environ.get("PG_BIN"):
        pytest.skip("the PostgreSQL server binaries are not installed (Debian: apt-get install postgresql)")
    env = dict(os.environ, DUET_PG_OWNER_PID=str(os.getpid()))
    up = subprocess.run(["bash", str(SCRIPTS / "pg_up.sh")], env=env, capture_output=True, text=True, timeout=180)
    assert up.returncode == 0, f"pg_up.sh failed:\n{up.stderr}"
    exported = dict(re.findall(r"^export (\w+)=(.*)$", up.stdout, re.M))
    server = PgServer(exported["DUET_PG_URL"], Path(exported["DUET_PG_DIR"]))
    try:
        yield server
    finally:
        subprocess.run(["bash", str(SCRIPTS / "pg_down.sh"), str(server.directory)], capture_output=True, timeout=180)


@pytest.fixture()
def pg_url(pg_server: PgServer) -> Iterator[str]:
    """A new, empty database on the test server (with the password in the URL)."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    pg_server.admin(f"CREATE DATABASE {name}")
    try:
        yield pg_server.database_url(name)
    finally:
        pg_server.admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture(params=["sqlite", "postgresql"])
def db_location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh results database on each backend: a SQLite file path, or a PostgreSQL URL."""
    if request.param == "sqlite":
        return str(tmp_path / "results.db")
    return str(request.getfixturevalue("pg_url"))
