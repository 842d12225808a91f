"""The real commands with ``--db postgresql://…`` against the test server: duet compare / show, a small
duet run campaign, duet analyze and duet import on it; credentials never printed nor stored; connection
failures are one clear line."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pg_server import PgServer

HARNESS = Path(__file__).resolve().parents[1] / "campaign" / "harness.py"
CSV = Path(__file__).resolve().parents[1] / "importers" / "data"


def duet_cmd(env: dict[str, str], cwd: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([sys.executable, "-m", "duetbench", *args], cwd=cwd, env=env, capture_output=True,
                            text=True, timeout=timeout)
    assert "Traceback" not in result.stderr, result.stderr
    return result


def assert_no_password(server: PgServer, *texts: str) -> None:
    for text in texts:
        assert server.password not in text


def test_compare_then_show(pg_server: PgServer, pg_url: str, tmp_path: Path, duet_env: dict[str, str]) -> None:
    r = duet_cmd(duet_env, tmp_path, "compare", "sleep 0.01", "sleep 0.02", "--runs", "6", "--warmup", "0",
                 "--no-progress", "--db", pg_url, "--export-json", "out.json")
    assert r.returncode == 0, r.stderr
    assert json.loads((tmp_path / "out.json").read_text())["comparisons"][0]["ratio"]["estimate"] > 1.1
    listing = duet_cmd(duet_env, tmp_path, "show", "--db", pg_url)
    assert listing.returncode == 0 and "sleep 0.02" in listing.stdout, listing.stderr
    one = duet_cmd(duet_env, tmp_path, "show", "1", "--db", pg_url)
    assert one.returncode == 0 and "sleep 0.02" in one.stdout, one.stderr
    assert not (tmp_path / ".duet" / "results.db").exists()  # nothing went to the default SQLite file
    rows = pg_server.query(pg_url, "SELECT options, host, uid FROM comparisons")
    assert len(rows) == 1 and rows[0][2]
    (n,) = pg_server.query(pg_url, "SELECT COUNT(*) FROM invocations WHERE NOT warmup")[0]
    assert n == 12  # 6 pairs
    assert_no_password(pg_server, r.stdout, r.stderr, listing.stdout, one.stdout, json.dumps(rows),
                       (tmp_path / "out.json").read_text())


def test_campaign_run_and_analyze(pg_server: PgServer, pg_url: str, tmp_path: Path,
                                  duet_env: dict[str, str]) -> None:
    shutil.copy(HARNESS, tmp_path / "harness.py")
    py = sys.executable
    (tmp_path / "campaign.yml").write_text(f"""campaign: pg
seed: 5
methods: {{sequential: 2, duet: 2}}
parser: {{name: regex, pattern: 'iteration \\d+: (?P<value>[0-9.]+) s'}}
timeout: 60
benchmarks:
  loop:
    A: {py} harness.py --iterations 5 --work 50000
    B: {py} harness.py --iterations 5 --work 200000
""")
    # B does 4x the work: each iteration's time is its wall time, and a process busy on one CPU through one
    # of the 2 runs slows the side pinned there by up to 2x (a 2x ratio then reads ~1.4, near the bound below).
    r = duet_cmd(duet_env, tmp_path, "run", "campaign.yml", "--no-progress", "--db", pg_url)
    assert r.returncode == 0, r.stderr
    runs = pg_server.query(pg_url, "SELECT key, status, run_dir FROM runs ORDER BY position")
    assert sorted(k for k, _, _ in runs) == ["loop/duet/0", "loop/duet/1", "loop/sequential/0/A",
                                             "loop/sequential/0/B", "loop/sequential/1/A", "loop/sequential/1/B"]
    assert all(status == "ok" for _, status, _ in runs), runs
    # raw outputs: beside the results in the working directory's .duet (a server has no directory)
    run_dir = Path(dict((k, d) for k, _, d in runs)["loop/duet/0"])
    assert run_dir.is_relative_to(tmp_path / ".duet" / "campaigns") and (run_dir / "A" / "stdout.txt").exists()
    (with_iterations,) = pg_server.query(pg_url, "SELECT COUNT(DISTINCT run_id) FROM iterations")[0]
    assert with_iterations == 6
    campaign = pg_server.query(pg_url, "SELECT options, host, uid, run_dir FROM campaigns")
    assert len(campaign) == 1 and campaign[0][2]

    a = duet_cmd(duet_env, tmp_path, "analyze", "--db", pg_url, "--export-json", "a.json")
    assert a.returncode == 0, a.stderr
    rows = {(x["benchmark"], x["method"]): x for x in json.loads((tmp_path / "a.json").read_text())["rows"]}
    assert set(rows) == {("loop", "sequential"), ("loop", "duet")}
    assert rows[("loop", "duet")]["ratio"] > 1.2 and rows[("loop", "duet")]["runs"] == 2
    resumed = duet_cmd(duet_env, tmp_path, "run", "campaign.yml", "--no-progress", "--resume", "--db", pg_url)
    # --resume finds the campaign in PostgreSQL (and, as it finished, says so)
    assert resumed.returncode == 2 and "'pg' (#1) already finished" in resumed.stderr, resumed.stderr
    assert_no_password(pg_server, r.stdout, r.stderr, a.stdout, a.stderr, resumed.stdout, json.dumps(campaign),
                       (tmp_path / "a.json").read_text())


def test_import_into_postgres(pg_server: PgServer, pg_url: str, tmp_path: Path, duet_env: dict[str, str]) -> None:
    data = CSV / "asynchronous-duet" / "duetprocess_chi-square_5096d7d.csv"
    r = duet_cmd(duet_env, tmp_path, "import", "duetprocess", str(data), "--db", pg_url)
    assert r.returncode == 0, r.stderr
    a = duet_cmd(duet_env, tmp_path, "analyze", "--db", pg_url)
    assert a.returncode == 0, a.stderr
    assert_no_password(pg_server, r.stdout, r.stderr, a.stdout)


@pytest.mark.parametrize("problem", ["password", "port", "database"])
def test_connection_failures_are_one_masked_line(pg_server: PgServer, tmp_path: Path, duet_env: dict[str, str],
                                                 problem: str) -> None:
    url = pg_server.url
    if problem == "password":
        url = url.replace(pg_server.password, "wrong-password-123")
    elif problem == "port":
        url = url.replace("@127.0.0.1:", "@127.0.0.1:1#").split("#")[0] + "/duet"
    else:
        url = pg_server.database_url("no_such_db")
    hints = {"password": "PGPASSWORD", "port": "server is running", "database": "createdb no_such_db"}
    for args in (("show",), ("analyze",), ("compare", "true", "true", "--runs", "2", "--no-progress")):
        r = duet_cmd(duet_env, tmp_path, *args, "--db", url, timeout=60)
        lines = [line for line in r.stderr.splitlines() if line.strip()]
        assert r.returncode == 2 and len(lines) == 1, r.stderr
        assert "cannot use the results database postgresql://duet:***@127.0.0.1" in lines[0]
        assert hints[problem] in lines[0]
        assert "wrong-password-123" not in r.stderr + r.stdout
        assert_no_password(pg_server, r.stderr, r.stdout)


def test_password_from_the_environment(pg_server: PgServer, pg_url: str, tmp_path: Path,
                                       duet_env: dict[str, str]) -> None:
    bare = pg_url.replace(f":{pg_server.password}@", "@")
    without = duet_cmd(duet_env, tmp_path, "show", "--db", bare)
    assert without.returncode == 2 and "no password supplied" in without.stderr
    env = dict(duet_env, PGPASSWORD=pg_server.password)
    assert duet_cmd(env, tmp_path, "show", "--db", bare).returncode == 0
    pgpass = tmp_path / "pgpass"
    pgpass.write_text(f"127.0.0.1:*:*:duet:{pg_server.password}\n")
    pgpass.chmod(0o600)
    env = dict(duet_env, PGPASSFILE=str(pgpass))
    shown = duet_cmd(env, tmp_path, "show", "--db", bare)
    assert shown.returncode == 0 and "no comparisons in postgresql://duet@127.0.0.1" in shown.stdout


def test_a_duet_stored_in_a_server_database_is_released_pair_by_pair(
        pg_server: PgServer, pg_url: str, tmp_path: Path, native_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Queued pairs' journal would have to name the store on disk, password and all (execute/journal.py):
    with a URL the duet releases pair by pair, every pair stored as it ends."""
    from click.testing import CliRunner

    from duetbench.cli.main import main
    from duetbench.execute.runner import Runner

    def queued(*args: object) -> None:
        raise AssertionError("pairs were queued for a server database")

    monkeypatch.setattr(Runner, "_run_queued", queued)
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, ["compare", "sleep 0.01", "sleep 0.01", "--method", "duet", "--runs", "30",
                                  "--no-progress", "--db", pg_url])
    assert r.exit_code == 0, r.output
    (n,) = pg_server.query(pg_url, "SELECT COUNT(*) FROM invocations WHERE NOT warmup")[0]
    assert n == 60


def test_a_nul_character_is_stored_and_merged_once(pg_server: PgServer, pg_url: str, tmp_path: Path,
                                                   duet_env: dict[str, str]) -> None:
    """PostgreSQL's text cannot hold the NUL that a command may print into its stderr tail (SQLite's can): it is
    stored as U+FFFD, the run's error stays one line, and merging a SQLite file holding one stays idempotent."""
    failing = 'printf "x\\0y" >&2; exit 1'
    r = duet_cmd(duet_env, tmp_path, "compare", failing, "true", "--runs", "2", "--no-progress", "--db", pg_url)
    assert r.returncode == 1 and "command A" in r.stderr and len(r.stderr.splitlines()) == 1, r.stderr
    assert ("x\ufffdy",) in pg_server.query(pg_url, "SELECT stderr_tail FROM invocations")
    local = duet_cmd(duet_env, tmp_path, "compare", failing, "true", "--runs", "2", "-i", "--no-progress",
                     "--db", "local.db")
    assert local.returncode == 0, local.stderr
    first = duet_cmd(duet_env, tmp_path, "merge", "local.db", "--db", pg_url)
    again = duet_cmd(duet_env, tmp_path, "merge", "local.db", "--db", pg_url)
    said = " ".join(again.stdout.split())  # wrapped to the terminal
    assert first.returncode == 0 and "1 comparison(s) added" in " ".join(first.stdout.split()), first.stderr
    assert again.returncode == 0 and "1 duplicate comparison(s) skipped" in said and "conflict" not in said, said


@pytest.mark.parametrize("tables", [["CREATE TABLE users (id int, name text)"],
                                    ["CREATE TABLE comparisons (id int PRIMARY KEY, title text)"],
                                    ["CREATE TABLE schema_migrations (version varchar PRIMARY KEY)",
                                     "INSERT INTO schema_migrations VALUES ('20240101120000')"]])
def test_another_programs_database_is_refused_untouched(pg_server: PgServer, pg_url: str, tmp_path: Path,
                                                        duet_env: dict[str, str], tables: list[str]) -> None:
    """As a SQLite file of another program: duet's tables are not added to it, and a table of the same name
    (comparisons; a Rails or golang-migrate schema_migrations) is neither a traceback nor a 'newer schema'."""
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as conn:
        for sql in tables:
            conn.execute(sql)  # type: ignore[arg-type]
    listed = "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1"
    before = pg_server.query(pg_url, listed)
    for args in (("show",), ("compare", "true", "true", "--runs", "2", "--no-progress")):
        r = duet_cmd(duet_env, tmp_path, *args, "--db", pg_url, timeout=60)
        lines = r.stderr.splitlines()
        assert r.returncode == 2 and len(lines) == 1 and "a database of another program" in lines[0], r.stderr
        assert_no_password(pg_server, r.stderr)
    assert pg_server.query(pg_url, listed) == before


def test_a_user_that_may_only_read(pg_server: PgServer, pg_url: str, tmp_path: Path, duet_env: dict[str, str]) -> None:
    """A user granted SELECT alone reads the results; what it may not write is one line saying what to grant."""
    import uuid

    import psycopg

    assert duet_cmd(duet_env, tmp_path, "compare", "true", "true", "--runs", "2", "--no-progress",
                    "--db", pg_url).returncode == 0
    role = f"reader_{uuid.uuid4().hex[:8]}"
    pg_server.admin(f"CREATE ROLE {role} LOGIN PASSWORD 'readpw'")
    try:
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}")  # type: ignore[arg-type]
        url = pg_url.replace(f"duet:{pg_server.password}@", f"{role}:readpw@")
        shown = duet_cmd(duet_env, tmp_path, "show", "1", "--db", url)
        assert shown.returncode == 0 and "true" in shown.stdout, shown.stderr
        r = duet_cmd(duet_env, tmp_path, "compare", "true", "true", "--runs", "2", "--no-progress", "--db", url)
        lines = r.stderr.splitlines()
        assert r.returncode == 2 and len(lines) == 1, r.stderr
        assert "permission denied for table comparisons" in lines[0] and "GRANT" in lines[0]
        assert "readpw" not in lines[0]
    finally:
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute(f"DROP OWNED BY {role}")  # type: ignore[arg-type]
        pg_server.admin(f"DROP ROLE {role}")


def test_an_imported_name_with_a_nul_is_stored_and_merged_once(pg_server: PgServer, pg_url: str, tmp_path: Path,
                                                               duet_env: dict[str, str]) -> None:
    """A name from another tool's file may hold a NUL: its runs' keys are stored with U+FFFD on PostgreSQL, and
    found again under the names they were given (the import, a second merge of the SQLite file holding them)."""
    times = [0.1, 0.11, 0.09, 0.1]
    (tmp_path / "hf.json").write_text(json.dumps({"results": [
        {"command": name, "mean": 0.1, "stddev": 0.01, "median": 0.1, "user": 0.0, "system": 0.0, "min": 0.09,
         "max": 0.11, "times": times} for name in ("a\0b", "c")]}))
    r = duet_cmd(duet_env, tmp_path, "import", "hyperfine", "hf.json", "--db", pg_url)
    assert r.returncode == 0, r.stderr
    assert ("a\ufffdb vs c",) in pg_server.query(pg_url, "SELECT DISTINCT benchmark FROM runs")
    assert duet_cmd(duet_env, tmp_path, "import", "hyperfine", "hf.json", "--db", "local.db").returncode == 0
    merged = [" ".join(duet_cmd(duet_env, tmp_path, "merge", "local.db", "--db", pg_url).stdout.split())
              for _ in range(2)]
    assert "8 run(s) added" in merged[0] and "8 duplicate run(s) skipped" in merged[1], merged
    assert "conflict" not in merged[1]


def test_a_number_beyond_a_postgresql_integer_is_one_line(pg_server: PgServer, pg_url: str, tmp_path: Path,
                                                          duet_env: dict[str, str]) -> None:
    """A SQLite file takes an imported iteration index beyond 2**31, a PostgreSQL INTEGER does not: the import
    is one line saying so, and leaves nothing of itself behind."""
    (tmp_path / "big.csv").write_text("bench,run,side,value,idx\n" + "".join(
        f"b,{run},{side},0.1,{idx}\n" for run, idx in ((1, 1), (2, 2**33), (3, 1)) for side in "AB"))
    r = duet_cmd(duet_env, tmp_path, "import", "csv", "big.csv", "--col", "benchmark=bench", "--col", "run=run",
                 "--col", "side=side", "--col", "value=value", "--col", "index=idx", "--set", "method=sequential",
                 "--db", pg_url)
    lines = r.stderr.splitlines()
    assert r.returncode == 2 and len(lines) == 1 and "integer out of range" in lines[0], r.stderr
    assert "2147483647" in lines[0]
    assert pg_server.query(pg_url, "SELECT COUNT(*) FROM campaigns") == [(0,)]
