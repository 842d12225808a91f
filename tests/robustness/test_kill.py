"""Issue 16 item 3: `kill -9` of the orchestrator at random moments of a duet compare and of a campaign;
then the next command runs. Nothing finished is lost, nothing is left in /dev/shm or the temporary
directory, no cgroup, no process, and the status says what happened."""
from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

#: Random moments, one from each band: before the database exists, while it fills, late.
BANDS = [(0.2, 1.5), (1.5, 4.0), (4.0, 8.0)]
PARSER = "parser: {name: regex, pattern: 'iteration \\d+: (?P<value>[0-9.]+) s'}"


def _count(db: Path, sql: str) -> int:
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30) as conn:
            return int(conn.execute(sql).fetchone()[0])
    except sqlite3.OperationalError:  # killed before the schema was made
        return 0


def _status(db: Path, table: str) -> list[str]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30) as conn:
        return [row[0] for row in conn.execute(f"SELECT status FROM {table}")]


def _processes_with(marker: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline:
            found.append(int(entry))
    return found


def _pages() -> set[str]:
    return {n for n in os.listdir("/dev/shm") if n.startswith("duetbench-barrier-")}


def _mapped() -> str:
    text = []
    for entry in os.listdir("/proc"):
        try:
            text.append(Path(f"/proc/{entry}/maps").read_text())
        except OSError:
            continue
    return "".join(text)


def _leftovers(pid: int, pages_before: set[str]) -> list[str]:
    # A page made during the test that no live process maps is a leftover, whatever its name (other
    # duets on the machine keep theirs mapped while they run).
    new = _pages() - pages_before
    maps = _mapped() if new else ""
    pages = [n for n in new if f"/dev/shm/{n}" not in maps]
    groups = [str(p) for root in [Path("/sys/fs/cgroup"), *Path("/sys/fs/cgroup").iterdir()] if root.is_dir()
              for p in root.glob(f"duetbench-{pid}-*")]
    return pages + groups


def _kill_and_check(args: list[str], cwd: Path, env: dict[str, str], db: Path, marker: str, delay: float,
                    finished_sql: str, table: str, next_command: list[str]) -> None:
    pages_before = _pages()
    scratch = cwd / "scratch"  # its own temporary directory: whatever is left in it after the next command leaked
    scratch.mkdir()
    env = {**env, "TMPDIR": str(scratch)}
    proc = subprocess.Popen([sys.executable, "-m", "duetbench", *args], cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    time.sleep(delay)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    finished = _count(db, finished_sql)
    left_running = _count(db, f"SELECT count(*) FROM {table} WHERE status = 'running'")
    nxt = subprocess.run([sys.executable, "-m", "duetbench", *next_command], cwd=cwd, env=env, capture_output=True,
                         text=True, timeout=120)
    assert "Traceback" not in nxt.stderr, nxt.stderr
    assert _leftovers(proc.pid, pages_before) == [], f"killed after {delay:.2f} s"
    assert list(scratch.iterdir()) == [], f"killed after {delay:.2f} s"
    deadline = time.monotonic() + 10  # the launchers end their commands on their parent's death (SIGTERM)
    while _processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _processes_with(marker) == [], f"killed after {delay:.2f} s"
    assert _count(db, finished_sql) >= finished  # nothing finished before the kill is lost
    if left_running:  # killed while measuring (not after it had ended): the next command tells
        assert _status(db, table)[-1] == "orchestrator died", delay
        assert "orchestrator died" in nxt.stdout + nxt.stderr


@pytest.mark.parametrize("round_", range(3))
def test_kill_9_during_a_compare(duet_env, tmp_path: Path, round_: int) -> None:  # type: ignore[no-untyped-def]
    marker = f"0.02{random.randint(10**6, 10**7)}"  # a sleep length no other process has
    delay = random.uniform(*BANDS[round_])
    _kill_and_check(["compare", f"sleep {marker}", f"sleep {marker}", "--runs", "500", "--db", "r.db", "--no-progress"],
                    tmp_path, duet_env, tmp_path / "r.db", marker, delay,
                    "SELECT count(*) FROM invocations", "comparisons", ["show", "--db", "r.db"])


@pytest.mark.parametrize("round_", range(3))
def test_kill_9_during_a_campaign(duet_env, tmp_path: Path, round_: int) -> None:  # type: ignore[no-untyped-def]
    marker = uuid.uuid4().hex
    (tmp_path / "loop.py").write_text("import time\nfor i in range(8):\n    print(f'iteration {i}: 0.03 s', "
                                      "flush=True)\n    time.sleep(0.03)\n")
    (tmp_path / "c.yml").write_text(f"campaign: killed\nmethods: {{duet: 10, sequential: 5}}\n{PARSER}\n"
                                    f"benchmarks:\n  k: {{command: '{sys.executable} loop.py {marker}'}}\n")
    check = subprocess.run([sys.executable, "-m", "duetbench", "run", "c.yml", "--dry-run"], cwd=tmp_path, env=duet_env,
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    delay = random.uniform(*BANDS[round_]) + 1.0  # a campaign takes longer to start its first run
    _kill_and_check(["run", "c.yml", "--db", "r.db", "--no-progress"], tmp_path, duet_env, tmp_path / "r.db", marker,
                    delay, "SELECT count(*) FROM runs", "campaigns", ["analyze", "--db", "r.db"])
    # The killed campaign goes on where it stopped: its finished runs are not measured again.
    if (tmp_path / "r.db").exists() and _status(tmp_path / "r.db", "campaigns") == ["orchestrator died"]:
        resumed = subprocess.run([sys.executable, "-m", "duetbench", "run", "c.yml", "--db", "r.db", "--resume",
                                  "--no-progress"], cwd=tmp_path, env=duet_env, capture_output=True, text=True,
                                 timeout=300)
        assert resumed.returncode == 0, resumed.stderr
        assert _count(tmp_path / "r.db", "SELECT count(*) FROM runs") == 20
        assert _status(tmp_path / "r.db", "campaigns") == ["finished"]


@pytest.mark.parametrize("method", ["duet", "sequential"])
def test_kill_9_in_the_middle_of_queued_pairs_loses_none_that_ended(duet_env, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                    method: str) -> None:
    """Queued duet pairs (sequential rounds) are stored when their batch ends (execute/runner.py); the
    launchers journal each answer meanwhile, and the next command — here in another directory, with a
    database of the same relative name and a comparison of the same number — stores the pairs a `kill -9`
    caught in a batch, whole, where they belong and nowhere else."""
    marker = f"0.02{random.randint(10**6, 10**7)}"
    here, elsewhere = tmp_path / "here", tmp_path / "elsewhere"
    here.mkdir()
    elsewhere.mkdir()
    db = here / "r.db"
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env = {**duet_env, "TMPDIR": str(scratch)}
    other = subprocess.run([sys.executable, "-m", "duetbench", "compare", "true", "true", "--method", "duet",
                            "--runs", "3", "--db", "r.db", "--no-progress"], cwd=elsewhere, env=env,
                           capture_output=True, text=True, timeout=120)
    assert other.returncode == 0, other.stderr
    others = _count(elsewhere / "r.db", "SELECT count(*) FROM invocations")
    proc = subprocess.Popen([sys.executable, "-m", "duetbench", "compare", f"sleep {marker}", f"sleep {marker}",
                             "--method", method, "--runs", "400", "--db", "r.db", "--no-progress"],
                            cwd=here, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while _count(db, "SELECT count(*) FROM invocations") <= 2 * 2 and time.monotonic() < deadline:
            time.sleep(0.02)  # the warm-up pair, then the first batch (~1 s of pairs) stored at once
        time.sleep(0.4)  # well into the second batch
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    before = _count(db, "SELECT count(*) FROM invocations")
    assert 2 * 2 < before < 2 * 400
    nxt = subprocess.run([sys.executable, "-m", "duetbench", "show", "--db", "r.db"], cwd=elsewhere, env=env,
                         capture_output=True, text=True, timeout=120)
    assert "Traceback" not in nxt.stderr, nxt.stderr
    assert list(scratch.iterdir()) == []
    assert _count(elsewhere / "r.db", "SELECT count(*) FROM invocations") == others
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        rows = conn.execute("SELECT pair, side, status FROM invocations ORDER BY pair, side").fetchall()
    assert len(rows) > before + 2 * 5  # ~0.4 s of 20 ms pairs (10 ms rounds) ended in the batch the kill caught
    pairs: dict[int, list[str]] = {}
    for pair, side, status in rows:
        assert status == "ok"
        pairs.setdefault(pair, []).append(side)
    assert sorted(pairs) == list(range(len(pairs))) and all(sides == ["A", "B"] for sides in pairs.values())
    assert _status(db, "comparisons") == ["orchestrator died"]


def _stopped_launchers() -> list[int]:
    found = []
    for pid in _processes_with("duet-launch"):
        try:
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "T":
                found.append(pid)
        except OSError:
            pass
    return found


def test_kill_9_while_a_command_holds_its_launcher_stopped(duet_env, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A launcher its command stopped (`kill -STOP $PPID`) when duet was killed holds the SIGTERM of its
    parent's death pending for good: it and its command outlived duet, stopped, for ever. The next command
    continues it, and it ends its command as the other launchers do."""
    marker = tmp_path / f"duetbench-held-{uuid.uuid4().hex[:8]}"  # a `sleep` by a name of its own
    marker.symlink_to("/bin/sleep")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env = {**duet_env, "TMPDIR": str(scratch)}
    before = set(_stopped_launchers())
    proc = subprocess.Popen([sys.executable, "-m", "duetbench", "compare", f"sh -c 'kill -STOP $PPID; exec {marker} 60'",
                             "true", "--runs", "3", "--warmup", "0", "--no-progress"], cwd=tmp_path, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not set(_stopped_launchers()) - before and time.monotonic() < deadline:
            time.sleep(0.05)
        held = set(_stopped_launchers()) - before
        assert held, "no launcher was stopped by its command"
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    time.sleep(0.5)
    assert set(_stopped_launchers()) & held, "the launcher did not stay stopped: nothing to test"
    nxt = subprocess.run([sys.executable, "-m", "duetbench", "show"], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=120)
    assert "Traceback" not in nxt.stderr, nxt.stderr
    deadline = time.monotonic() + 15
    while (set(_stopped_launchers()) & held or _processes_with(str(marker))) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not set(_stopped_launchers()) & held and _processes_with(str(marker)) == []
