"""`methods: {auto: N}` in `duet run`: the pilot (a duet run, a sequential repetition) first, the choice
recorded, the other method's runs skipped and its pilot set aside, the choice kept across --resume."""
from __future__ import annotations

import json
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from duetbench.plan.campaign import RunRequest, is_pilot, make_plan

HERE = Path(__file__).resolve().parent
PATTERN = r"iteration \d+: (?P<value>[0-9.]+) s"


def write_campaign(tmp_path: Path, methods: str, iterations: int = 12) -> None:
    shutil.copy(HERE / "harness.py", tmp_path / "harness.py")
    cmd = f"{sys.executable} harness.py --iterations {iterations}"
    (tmp_path / "campaign.yml").write_text(f"""campaign: t
seed: 5
methods: {methods}
parser: {{name: regex, pattern: '{PATTERN}'}}
timeout: 60
benchmarks:
  loop:
    command: {cmd} --work 60000
    B: {{command: {cmd} --work 63000}}
""")


def rows(tmp_path: Path, query: str) -> list[tuple]:
    with sqlite3.connect(tmp_path / ".duet" / "results.db") as conn:
        return conn.execute(query).fetchall()


def check_finished(tmp_path: Path, n: int) -> str:
    options = json.loads(rows(tmp_path, "SELECT options FROM campaigns")[0][0])
    choice = options["auto"]["loop"]
    winner = choice["method"]
    loser = "sequential" if winner == "duet" else "duet"
    assert choice["reason"].startswith(f"{winner}:")
    runs = rows(tmp_path, "SELECT key, method, repetition, status, error FROM runs")
    sides = 1 if winner == "duet" else 2
    assert sorted(s for _, m, _, s, _ in runs if m == winner) == ["ok"] * (n * sides)
    mine = [(k, r, s, e) for k, m, r, s, e in runs if m == loser]
    assert {s for _, r, s, _ in mine if r == 0} == {"pilot"}
    assert {(s, e) for _, r, s, e in mine if r > 0} == {("skipped", f"method auto chose {winner}")}
    return winner


def test_auto_chooses_after_the_pilot_and_runs_only_its_choice(duet, tmp_path: Path) -> None:
    write_campaign(tmp_path, "{auto: 4}")
    dry = duet("run", "campaign.yml", "--dry-run")
    assert dry.returncode == 0 and "runs 1, 2, 3 are its pilot" in dry.stdout
    result = duet("run", "campaign.yml", "--no-progress")
    assert result.returncode == 0, result.stderr
    winner = check_finished(tmp_path, 4)
    out = " ".join(result.stdout.split())
    assert f"loop: method auto → {winner}:" in out and f"method auto chose {winner}" in out
    first = rows(tmp_path, "SELECT method, repetition FROM runs ORDER BY position LIMIT 3")
    assert sorted(first) == [("duet", 0), ("sequential", 0), ("sequential", 0)]
    analysed = duet("analyze", "--export-json", "a.json")
    assert analysed.returncode == 0, analysed.stderr
    methods = {r["method"] for r in json.loads((tmp_path / "a.json").read_text())["rows"]}
    assert methods == {winner}  # the other method's pilot is kept but never analysed


def test_auto_does_not_choose_a_duet_whose_pilot_was_not_synchronized(duet, tmp_path: Path) -> None:
    # A harness without the duet hook: its duet pilot's index pairs never started together. The pilot's tiny
    # spread of those pairs chose the duet ("about inf x narrower"), whose runs then had no result at all.
    (tmp_path / "campaign.yml").write_text(f"""campaign: t
seed: 5
methods: {{auto: 3}}
parser: {{name: regex, pattern: '{PATTERN}'}}
benchmarks:
  loop: "sh -c 'for i in 1 2 3 4 5 6; do echo iteration $i: 0.00$i s; done'"
""")
    result = duet("run", "campaign.yml", "--no-progress")
    assert result.returncode == 0, result.stderr
    assert check_finished(tmp_path, 3) == "sequential"
    reason = json.loads(rows(tmp_path, "SELECT options FROM campaigns")[0][0])["auto"]["loop"]["reason"]
    assert "duet run was not synchronized (no hook iteration log)" in reason, reason


def test_auto_choice_survives_resume(duet_env: dict[str, str], tmp_path: Path) -> None:
    write_campaign(tmp_path, "{auto: 6}", iterations=30)
    proc = subprocess.Popen([sys.executable, "-m", "duetbench", "run", "campaign.yml", "--no-progress"],
                            cwd=tmp_path, env=duet_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:  # the pilot stored and judged, then one more run
        try:
            if len(rows(tmp_path, "SELECT id FROM runs WHERE status != 'skipped'")) >= 4:
                break
        except sqlite3.Error:
            pass
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    made = json.loads(rows(tmp_path, "SELECT options FROM campaigns")[0][0])["auto"]["loop"]
    resumed = subprocess.run([sys.executable, "-m", "duetbench", "run", "campaign.yml", "--resume", "--no-progress"],
                             cwd=tmp_path, env=duet_env, capture_output=True, text=True, timeout=180)
    assert resumed.returncode == 0, resumed.stderr
    assert check_finished(tmp_path, 6) == made["method"]


def test_auto_alone_and_not_on_slurm(duet, tmp_path: Path) -> None:
    write_campaign(tmp_path, "{auto: 4, duet: 2}")
    result = duet("run", "campaign.yml", "--dry-run")
    assert result.returncode != 0 and "auto chooses between duet and sequential by itself" in result.stderr


def test_plan_puts_the_pilot_first() -> None:
    for seed in range(20):
        plan = make_plan([RunRequest("x", {"auto": 5}), RunRequest("y", {"duet": 3})], schedule="rmit", seed=seed,
                         cpus=(0, 1))
        x = [p for p in plan if p.benchmark == "x"]
        assert len(x) == 5 + 10
        assert all(is_pilot(p, {"auto": 5}) for p in x[:3]) and not any(is_pilot(p, {"auto": 5}) for p in x[3:])
        assert sorted(p.position for p in plan) == list(range(len(plan)))


def test_a_failed_runs_cause_is_the_line_above_the_stack_frames() -> None:
    """Issue 15: a JMH failure showed `at org.openjdk.jmh.Main.main(Main.java:71)`, its cause only in a file."""
    from duetbench.usecases.campaign import cause_line

    jvm = ("Exception in thread \"main\" java.lang.RuntimeException: ERROR: Another JMH instance might be running. "
           "Unable to acquire the JMH lock (/tmp/jmh.lock), exiting. Use -Djmh.ignoreLock=true to forcefully "
           "continue.\n\tat org.openjdk.jmh.runner.Runner.run(Runner.java:213)\n"
           "\tat org.openjdk.jmh.Main.main(Main.java:71)\n")
    assert "Another JMH instance" in cause_line(jvm) and "-Djmh.ignoreLock=true" in cause_line(jvm)
    assert cause_line("Caused by: x\n\t... 3 more\n") == "Caused by: x"
    assert cause_line("Traceback (most recent call last):\n  File \"a.py\", line 1\nValueError: bad\n") == "ValueError: bad"
    assert cause_line("") == ""
