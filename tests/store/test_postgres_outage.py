"""A PostgreSQL server in trouble in the middle of a measurement: one that goes away for a few seconds (a
restart, a failover, a network blip) costs nothing measured, the store waits for it and goes on; a lock
another session holds on duet's tables ends the wait in one line, not in a measurement hung for good."""
from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pg_server import PgServer


class Outage:
    """A TCP relay to the test server, whose way through can be cut (open connections reset, new ones
    refused, as while a server restarts) and restored on the same port."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        probe = socket.create_server(("127.0.0.1", 0))
        self.port = probe.getsockname()[1]
        probe.close()
        self._listener: socket.socket | None = None
        self._acceptor: threading.Thread | None = None
        self._open: list[socket.socket] = []
        self._threads: list[threading.Thread] = []

    def restore(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", self.port))  # SO_REUSEADDR: the same port again
        self._listener.settimeout(0.1)
        self._acceptor = threading.Thread(target=self._accept, args=(self._listener,), daemon=True)
        self._acceptor.start()

    def cut(self) -> None:
        listener, self._listener = self._listener, None
        assert listener is not None
        assert self._acceptor is not None
        self._acceptor.join()  # it ends on seeing no listener
        listener.close()
        for s in self._open:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()
        for t in self._threads:
            t.join()
        self._open.clear()
        self._threads.clear()

    def _accept(self, listener: socket.socket) -> None:
        while self._listener is listener:
            try:
                client, _ = listener.accept()
            except TimeoutError:
                continue
            server = socket.create_connection(("127.0.0.1", self.target_port))
            self._open += [client, server]
            for a, b in ((client, server), (server, client)):
                pump = threading.Thread(target=self._pump, args=(a, b), daemon=True)
                self._threads.append(pump)
                pump.start()

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        try:
            sink.shutdown(socket.SHUT_WR)
        except OSError:
            pass


@pytest.fixture()
def outage(pg_url: str) -> Iterator[Outage]:
    from sqlalchemy.engine import make_url

    relay = Outage(int(make_url(pg_url).port or 5432))
    relay.restore()
    yield relay
    if relay._listener is not None:
        relay.cut()


def test_a_compare_waits_for_a_server_that_went_away(pg_server: PgServer, pg_url: str, outage: Outage,
                                                     tmp_path: Path, duet_env: dict[str, str]) -> None:
    from sqlalchemy.engine import make_url

    url = make_url(pg_url).set(port=outage.port).render_as_string(hide_password=False)
    compare = subprocess.Popen(
        [sys.executable, "-m", "duetbench", "compare", "sleep 0.05", "sleep 0.05", "--method", "sequential",
         "--runs", "20", "--no-progress", "--db", url], cwd=tmp_path, env=duet_env, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not _measured(pg_server, pg_url):
            assert compare.poll() is None and time.monotonic() < deadline, compare.communicate()
            time.sleep(0.05)
        outage.cut()  # the compare's next pair finds no server
        time.sleep(3)
        outage.restore()
        out, err = compare.communicate(timeout=120)
    finally:
        if compare.poll() is None:
            compare.kill()
            compare.communicate()
    assert compare.returncode == 0, err
    assert "cannot be reached" in err and "is back after" in err and "Traceback" not in err, err
    assert pg_server.query(pg_url, "SELECT status FROM comparisons") == [("complete",)]
    assert pg_server.query(pg_url, "SELECT COUNT(*) FROM invocations WHERE NOT warmup") == [(40,)]


def test_stopping_a_compare_that_waits_for_the_server_waits_no_more(pg_server: PgServer, pg_url: str,
                                                                     outage: Outage, tmp_path: Path,
                                                                     duet_env: dict[str, str]) -> None:
    """SIGTERM (or Ctrl-C) while the store waits for its server: the last writes (the comparison's end) do
    not wait again, the command ends at once in one line."""
    import signal

    from sqlalchemy.engine import make_url

    url = make_url(pg_url).set(port=outage.port).render_as_string(hide_password=False)
    err_path = tmp_path / "stderr.txt"
    with err_path.open("w") as err:
        compare = subprocess.Popen(
            [sys.executable, "-m", "duetbench", "compare", "sleep 0.05", "sleep 0.05", "--method", "sequential",
             "--runs", "20", "--no-progress", "--db", url], cwd=tmp_path, env=duet_env, stdout=subprocess.DEVNULL,
            stderr=err)
        try:
            deadline = time.monotonic() + 60
            while not _measured(pg_server, pg_url):
                assert compare.poll() is None and time.monotonic() < deadline
                time.sleep(0.05)
            outage.cut()
            while "cannot be reached" not in err_path.read_text():
                assert compare.poll() is None and time.monotonic() < deadline, err_path.read_text()
                time.sleep(0.05)
            compare.send_signal(signal.SIGTERM)
            compare.wait(timeout=120)
        finally:
            if compare.poll() is None:
                compare.kill()
                compare.wait()
    said = err_path.read_text()
    assert compare.returncode == 2 and said.count("cannot be reached") == 1, said
    assert [line for line in said.splitlines() if line.startswith("error:")] == [said.splitlines()[-1]], said


def _measured(server: PgServer, url: str) -> bool:
    import psycopg

    try:
        return bool(server.query(url, "SELECT 1 FROM invocations WHERE NOT warmup LIMIT 1"))
    except psycopg.errors.UndefinedTable:  # the compare has not made its tables yet
        return False


def test_a_wrong_url_still_fails_at_once(pg_server: PgServer, tmp_path: Path, duet_env: dict[str, str]) -> None:
    """Only a store that was connected waits: a first connection that fails is the one-line error, in seconds."""
    refused = subprocess.run([sys.executable, "-m", "duetbench", "show", "--db", "postgresql://duet:pw@127.0.0.1:1/x"],
                             cwd=tmp_path, env=duet_env, capture_output=True, text=True, timeout=30)
    assert refused.returncode == 2 and len(refused.stderr.splitlines()) == 1 and "waiting" not in refused.stderr


def test_a_lock_held_elsewhere_ends_in_one_line_not_in_a_hang(pg_url: str, tmp_path: Path,
                                                              duet_env: dict[str, str]) -> None:
    import psycopg

    from duetbench.store.db import Store

    store = Store(pg_url)  # makes the tables
    try:
        with store.engine.connect() as conn:  # as long as a SQLite store waits for a busy file
            assert conn.exec_driver_sql("SHOW lock_timeout").scalar() == "1min"
    finally:
        store.close()
    with psycopg.connect(pg_url) as holder:  # a psql left in a transaction
        holder.execute("LOCK TABLE invocations IN ACCESS EXCLUSIVE MODE")
        short = pg_url + "?options=-c%20lock_timeout%3D1000"  # the URL's own lock_timeout is kept
        r = subprocess.run([sys.executable, "-m", "duetbench", "compare", "true", "true", "--runs", "2",
                            "--no-progress", "--db", short], cwd=tmp_path, env=duet_env, capture_output=True,
                           text=True, timeout=60)
        holder.rollback()
    lines = r.stderr.splitlines()
    assert r.returncode == 2 and len(lines) == 1 and "lock timeout" in lines[0], r.stderr
    assert "another session holds a lock" in lines[0]


@pytest.mark.parametrize("query, env, expected", [
    ("", {}, {"connect_timeout": "10", "tcp_user_timeout": "60000", "keepalives_idle": "30"}),
    ("?connect_timeout=3&tcp_user_timeout=5000", {}, {"connect_timeout": "3", "tcp_user_timeout": "5000"}),
    ("", {"PGCONNECT_TIMEOUT": "4"}, {"connect_timeout": "4"})])
def test_a_dead_server_is_noticed_unless_the_url_says_otherwise(pg_url: str, monkeypatch: pytest.MonkeyPatch,
                                                                query: str, env: dict[str, str],
                                                                expected: dict[str, str]) -> None:
    """A server host that died, or a network that dropped the connection without a word, is noticed within a
    minute (TCP's retransmissions took ~15 minutes, its first keepalive 2 hours, while the measurement hung);
    duet's values stand in only where the URL (or PGCONNECT_TIMEOUT) says nothing: they are the user's."""
    from duetbench.store.db import Store

    for name, value in env.items():
        monkeypatch.setenv(name, value)
    store = Store(pg_url + query)
    try:
        with store.engine.connect() as conn:
            used = conn.connection.dbapi_connection.info.get_parameters()
        assert {name: used.get(name) for name in expected} == expected
    finally:
        store.close()
