"""Where results go: paths and URLs, the --db option type, and passwords never shown."""
from __future__ import annotations

from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from duetbench.errors import DuetError
from duetbench.store.db import Store
from duetbench.store.location import SERVER_LOCAL_DIR, StoreLocation, is_url, mask_credentials, scrub_credentials
from duetbench.store.option import DB_PATH_OR_URL


def test_paths_are_sqlite_files(tmp_path: Path) -> None:
    for where in (tmp_path / "r.db", str(tmp_path / "r.db"), f"sqlite:///{tmp_path}/r.db"):
        loc = StoreLocation.parse(where)
        assert loc.kind == "sqlite" and loc.path == tmp_path / "r.db" and not loc.is_server
        assert loc.parent == tmp_path and str(loc) == str(tmp_path / "r.db") and not loc.exists()
    assert StoreLocation.parse("relative/r.db").parent == Path("relative")


@pytest.mark.parametrize("url", ["postgresql://me:pa%40ss@db.example:5433/results", "postgres://me:pa%40ss@db.example:5433/results",
                                 "postgresql+psycopg://me:pa%40ss@db.example:5433/results"])
def test_postgresql_urls(url: str) -> None:
    loc = StoreLocation.parse(url)
    assert loc.kind == "postgresql" and loc.is_server and loc.path is None
    assert loc.url.drivername == "postgresql+psycopg" and loc.password == "pa@ss"
    assert loc.url.host == "db.example" and loc.url.port == 5433 and loc.url.database == "results"
    assert "pa@ss" not in str(loc) and "pa%40ss" not in str(loc) and "***" in str(loc)
    assert "pa@ss" not in repr(loc) and "pa%40ss" not in repr(loc)
    assert str(loc).startswith(url.split("://")[0] + "://me:***@db.example:5433/results")
    assert loc.parent == SERVER_LOCAL_DIR and loc.exists()
    assert StoreLocation.parse(loc) is loc


def test_urls_without_password_use_libpq_defaults() -> None:
    loc = StoreLocation.parse("postgresql://")
    assert loc.password is None and str(loc) == "postgresql://"
    assert StoreLocation.parse("postgresql://me@/results").url.host is None


@pytest.mark.parametrize("bad, message", [("mysql://u:secret@h/db", "unsupported database 'mysql'"),
                                          ("sqlite://", "need a file"), ("postgresql://u:secret@h:notaport/db", "not a valid")])
def test_bad_urls_are_clear_and_masked(bad: str, message: str) -> None:
    with pytest.raises(DuetError, match=message) as info:
        StoreLocation.parse(bad)
    assert "secret" not in str(info.value)


def test_is_url() -> None:
    assert is_url("postgresql://x") and is_url(StoreLocation.parse("postgresql://x"))
    assert not is_url("results.db") and not is_url(Path("/a/b.db")) and not is_url("C:/x.db")


def test_masking_and_scrubbing() -> None:
    assert mask_credentials("see postgresql://u:p4ss@h/db and redis://:x@h") == "see postgresql://u:***@h/db and redis://:***@h"
    assert mask_credentials("postgresql://u@h/db, https://example.org/a:b@c") == "postgresql://u@h/db, https://example.org/a:b@c"
    for glued in ("3postgresql://u:pw@h/db", "A_postgresql://u:pw@h/db", "x=postgres://u:pw@h"):
        assert "pw@" not in mask_credentials(glued) and ":***@h" in mask_credentials(glued), glued
    value = {"db": "postgresql://u:p@h/d", "n": 3, "l": ["x", "postgresql://u:p@h/d"], "loc": StoreLocation.parse(
        "postgresql://u:p@h/d")}
    assert scrub_credentials(value) == {"db": "postgresql://u:***@h/d", "n": 3, "l": ["x", "postgresql://u:***@h/d"],
                                        "loc": "postgresql://u:***@h/d"}


def test_the_db_option_type(tmp_path: Path) -> None:
    seen: list[object] = []

    @click.command()
    @click.option("--db", type=DB_PATH_OR_URL, default=Path(".duet/results.db"))
    def cmd(db: object) -> None:
        seen.append(db)

    runner = CliRunner()
    assert runner.invoke(cmd, []).exit_code == 0 and seen[-1] == Path(".duet/results.db")
    assert runner.invoke(cmd, ["--db", "x.db"]).exit_code == 0 and seen[-1] == Path("x.db")
    assert runner.invoke(cmd, ["--db", "sqlite:///y.db"]).exit_code == 0 and seen[-1] == Path("y.db")
    assert runner.invoke(cmd, ["--db", "postgresql://u:secret@h/d"]).exit_code == 0
    assert isinstance(seen[-1], StoreLocation) and str(seen[-1]) == "postgresql://u:***@h/d"
    for bad in (str(tmp_path), "mysql://u:secret@h/d"):
        result = runner.invoke(cmd, ["--db", bad])
        assert result.exit_code == 2 and "secret" not in result.output and "Invalid value for '--db'" in result.output


def test_a_store_shows_no_password() -> None:
    with pytest.raises(DuetError) as info:  # nothing listens on port 1
        Store("postgresql://me:hunter2@127.0.0.1:1/results")
    assert "hunter2" not in str(info.value) and "postgresql://me:***@127.0.0.1:1/results" in str(info.value)
    assert "server is running" in (info.value.hint or "")


@pytest.mark.parametrize("url, secret", [
    ("postgresql://bench:Zq/Xy+Wv=@db.example:notaport/results", "Zq/Xy"),  # a generated password with a slash
    ("postgresql:///results?host=db.example&port=x&user=bench&password=hunter2", "hunter2"),  # libpq's query form
    ("postgresql://bench:sec@ret2@db.example/results", "ret2"),  # an '@' not written as %40
])
def test_every_way_of_writing_a_password_is_masked(url: str, secret: str) -> None:
    @click.command()
    @click.option("--db", type=DB_PATH_OR_URL)
    def cmd(db: object) -> None:
        click.echo(f"no comparisons in {db}")

    result = CliRunner().invoke(cmd, ["--db", url])
    assert secret not in result.output and "***" in result.output, result.output
    assert secret not in mask_credentials(f"stored: {url}")
    if "@ret2" in url:
        assert result.exit_code == 2 and "%40" in result.output


def test_a_query_password_is_masked_when_shown() -> None:
    loc = StoreLocation.parse("postgresql:///results?host=db.example&user=bench&password=hunter2")
    assert loc.password is None and "hunter2" not in str(loc) and "hunter2" not in repr(loc)
    assert "password=***" in str(loc)


def test_a_short_password_is_masked_only_where_it_stands_alone() -> None:
    """Replacing a one-letter password inside words ("***ort 5432 failed: ... res***onse") garbled the
    message and showed which letter the password is."""
    from duetbench.store.connect import describe

    failure = OSError('connection to server at "h", port 5432 failed: received invalid response; tried p')
    reason, _ = describe(failure, StoreLocation.parse("postgresql://u:p@h:5432/db"))
    assert reason == 'connection to server at "h", port 5432 failed: received invalid response; tried ***'


@pytest.mark.parametrize("text, masked", [("a" * 200_000 + " @", None), ("a://b:c" * 20_000 + " @", None),
                                          ("a://h?x=1&" * 20_000 + " password=", None),
                                          ("a" * 200_000 + "://u:pw@h", "a://u:***@h")])
def test_masking_a_long_value_does_not_hang(text: str, masked: str | None) -> None:
    """Every error line and stored option goes through the masking: its patterns scanned the rest of the text
    from each start position (a scheme's letters), 84 s for 200 kB of letters."""
    import signal

    def hung(*_: object) -> None:
        raise AssertionError("mask_credentials hung")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(30)  # a watchdog, not a timing: it takes milliseconds
    try:
        result = mask_credentials(text)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert result == text if masked is None else result.endswith(masked)
