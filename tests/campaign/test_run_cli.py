"""`duet run` end to end, as a user runs it: a real campaign file, real processes through the native
launcher, the Python hook and its barrier, the store, resume, the machine lock."""
from __future__ import annotations

import re

import json
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest


HERE = Path(__file__).resolve().parent
PATTERN = r"iteration \d+: (?P<value>[0-9.]+) s"


def write_campaign(tmp_path: Path, body: str, *, methods: str = "{sequential: 1, duet: 2, aduet: 1}",
                   extra: str = "") -> Path:
    shutil.copy(HERE / "harness.py", tmp_path / "harness.py")
    text = f"""campaign: t
seed: 3
methods: {methods}
parser: {{name: regex, pattern: '{PATTERN}'}}
timeout: 60
{extra}
benchmarks:
{body}
"""
    path = tmp_path / "campaign.yml"
    path.write_text(text)
    return path


def harness(*args: str) -> str:
    return f"{sys.executable} harness.py " + " ".join(args)


def db_rows(tmp_path: Path, query: str, *params: object) -> list[tuple]:
    with sqlite3.connect(tmp_path / ".duet" / "results.db") as conn:
        return conn.execute(query, params).fetchall()


def test_full_campaign_all_methods(duet, tmp_path: Path) -> None:
    write_campaign(tmp_path, f"""  loop:
    command: {harness('--iterations 6 --work 60000')}
    B: {{command: {harness('--iterations 6 --work 90000')}}}
""")
    result = duet("run", "campaign.yml", "--no-progress")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "[5/5]" in out
    for method in ("sequential", "duet", "aduet"):
        assert method in out
    runs = db_rows(tmp_path, "SELECT key, status, clock, method FROM runs ORDER BY position")
    assert sorted(r[0] for r in runs) == sorted(["loop/sequential/0/A", "loop/sequential/0/B", "loop/duet/0",
                                                 "loop/duet/1", "loop/aduet/0"])
    assert all(r[1] == "ok" and r[2] == "monotonic" for r in runs), runs
    # every side of every run: 6 measured iterations with hook timestamps, end after start
    counts = db_rows(tmp_path, "SELECT run_id, side, COUNT(*), MIN(end_ns > start_ns) FROM iterations GROUP BY "
                               "run_id, side")
    assert len(counts) == 2 * 2 + 2 * 1 + 2 and all(c[2] == 6 and c[3] == 1 for c in counts), counts
    # sync duet: the k-th iterations of A and B started together through the barrier. B does 1.5x the
    # work of A, so without the barrier their starts drift apart by milliseconds per iteration. With it
    # they start within ~0.1 us; allow for preemption right after the release on a loaded machine.
    skews = []
    for (run_id,) in db_rows(tmp_path, "SELECT id FROM runs WHERE method='duet'"):
        a = [r[0] for r in db_rows(tmp_path, "SELECT start_ns FROM iterations WHERE run_id=? AND side='A' "
                                             "ORDER BY seq", run_id)]
        b = [r[0] for r in db_rows(tmp_path, "SELECT start_ns FROM iterations WHERE run_id=? AND side='B' "
                                             "ORDER BY seq", run_id)]
        skews += list(np.abs(np.array(a) - np.array(b)) / 1e3)
    assert np.mean(np.array(skews) < 100) >= 0.3, skews
    # raw outputs are kept per run and side
    run_dir = Path(db_rows(tmp_path, "SELECT run_dir FROM runs WHERE key='loop/duet/0'")[0][0])
    for side in "AB":
        assert "iteration 6:" in (run_dir / side / "stdout.txt").read_text()
        assert len((run_dir / side / "iterations.log").read_text().splitlines()) == 7  # 1 warmup + 6
    # each side pinned to its own CPU
    sides = db_rows(tmp_path, "SELECT s.cpu_requested, s.cpu_seen FROM run_sides s JOIN runs r ON r.id=s.run_id "
                              "WHERE r.method='duet'")
    assert all(req == seen for req, seen in sides)
    campaign = db_rows(tmp_path, "SELECT status, seed, plan, source_text FROM campaigns")[0]
    assert campaign[0] == "finished" and campaign[1] == 3 and len(json.loads(campaign[2])) == 5
    assert "campaign: t" in campaign[3]


def test_dry_run_prints_plan_and_measures_nothing(duet, tmp_path: Path) -> None:
    write_campaign(tmp_path, f"  loop: {harness()}\n", methods="{duet: 3, sequential: 2}")
    result = duet("run", "campaign.yml", "--dry-run")
    assert result.returncode == 0, result.stderr
    assert "7 runs" in result.stdout and "seed 3" in result.stdout and "harness.py" in result.stdout
    assert not (tmp_path / ".duet" / "results.db").exists()
    # A command's words are shown quoted, as run: joined bare they read as another command.
    write_campaign(tmp_path, "  sh: sh -c 'echo \"a  b\"; exit 0'\n")
    result = duet("run", "campaign.yml", "--dry-run")
    assert """sh A: sh -c 'echo "a  b"; exit 0'""" in result.stdout, result.stdout


def test_failing_benchmark_is_recorded_and_campaign_goes_on(duet, tmp_path: Path) -> None:
    write_campaign(tmp_path, f"""  good: {harness('--iterations 3')}
  bad:
    command: {harness('--iterations 3')}
    B: {{command: {harness('--iterations 3 --exit 3')}}}
""", methods="{duet: 2}")
    result = duet("run", "campaign.yml", "--no-progress")
    assert result.returncode == 1, result.stderr  # the campaign went on, and its exit code says a run failed
    assert "failed" in result.stdout
    rows = db_rows(tmp_path, "SELECT benchmark, status, error FROM runs")
    assert {(b, s) for b, s, _ in rows} == {("good", "ok"), ("bad", "failed")}
    errors = [e for b, s, e in rows if b == "bad"]
    assert all("B exit code 3" in e and "side B done" in e for e in errors), errors
    exit_codes = db_rows(tmp_path, "SELECT s.side, s.exit_code, s.stderr_tail FROM run_sides s JOIN runs r "
                                   "ON r.id = s.run_id WHERE r.benchmark='bad'")
    assert {(side, code) for side, code, _ in exit_codes} == {("A", 0), ("B", 3)}


def test_a_result_file_the_harness_did_not_write_is_named_as_not_written(duet, tmp_path: Path) -> None:
    # It was reported as "option file '{outdir}/out.csv' is not a declared result file (declared: none)",
    # pointing at stdout.txt: as if the campaign file were wrong, when the harness did not write the file.
    write_campaign(tmp_path, """  quiet:
    command: "true"
    parser: {name: csv, file: "{outdir}/out.csv", value: t}
    results: ["{outdir}/out.csv"]
""", methods="{sequential: 1}")
    result = duet("run", "campaign.yml", "--no-progress")
    assert result.returncode == 1, result.stderr
    errors = [e for (e,) in db_rows(tmp_path, "SELECT error FROM runs")]
    assert len(errors) == 2 and all("out.csv: result file not found (the harness did not write it?)" in e
                                    and "not a declared" not in e and "stdout.txt" not in e for e in errors), errors


def test_an_artifact_printing_bytes_that_are_not_utf8_is_recorded(duet, tmp_path: Path) -> None:
    # `cat` of a binary, a locale's Latin-1 output: the campaign ended in a UnicodeDecodeError traceback.
    write_campaign(tmp_path, f"  x: {harness('--iterations 3')}\n", methods="{sequential: 1}",
                   extra="artifacts: {raw: \"printf 'a\\\\377b'\", err: \"printf '\\\\376' >&2; exit 4\"}")
    result = duet("run", "campaign.yml", "--no-progress")
    assert result.returncode == 0, result.stderr
    assert json.loads(db_rows(tmp_path, "SELECT artifacts FROM campaigns")[0][0]) == {
        "raw": "a\ufffdb", "err": "[exit 4] \ufffd"}


def test_outdir_with_a_space_stays_one_argument(duet, tmp_path: Path) -> None:
    # The command was split after {outdir} was filled in: under "my runs/" the harness got "…/my" and "runs/…".
    (tmp_path / "campaign.yml").write_text("""campaign: t
methods: {sequential: 1}
parser: {name: csv, file: "{outdir}/o.csv", value: t}
results: ["{outdir}/o.csv"]
benchmarks:
  x: sh -c 'printf "t\\n1\\n2\\n" > "$1/o.csv"' sh {outdir}
""")
    result = duet("run", "campaign.yml", "--no-progress", "--db", "my runs/r.db")
    assert result.returncode == 0, result.stdout + result.stderr
    with sqlite3.connect(tmp_path / "my runs" / "r.db") as conn:
        assert sorted(conn.execute("SELECT status FROM runs").fetchall()) == [("ok",), ("ok",)]


def test_result_files_with_the_same_name_in_two_directories_are_both_kept(duet, tmp_path: Path) -> None:
    # Both were copied to results/o.csv: the parser, told to read x/o.csv, read y/o.csv's times instead.
    (tmp_path / "x").mkdir()
    (tmp_path / "y").mkdir()
    (tmp_path / "campaign.yml").write_text("""campaign: t
methods: {sequential: 1}
parser: {name: csv, file: "x/o-{side}.csv", value: t}
results: ["x/o-{side}.csv", "y/o-{side}.csv"]
benchmarks:
  b: sh -c 'printf "t\\n1\\n1\\n" > x/o-$0.csv; printf "t\\n9\\n9\\n" > y/o-$0.csv' {side}
""")
    result = duet("run", "campaign.yml", "--no-progress")
    assert result.returncode == 0, result.stdout + result.stderr
    assert db_rows(tmp_path, "SELECT DISTINCT value_s FROM iterations") == [(1.0,)]


def test_analyze_keeps_the_warmup_after_the_campaigns_directory_is_gone(duet, tmp_path: Path) -> None:
    # The warmup rule is read back from the stored file, which no longer loaded once its cwd was deleted:
    # `duet analyze` then silently kept the warmup iterations (here A's 50 ms ones) and turned "no difference"
    # into "faster". A check added to the loader since a campaign ran must not do the same.
    (tmp_path / "sub").mkdir()
    (tmp_path / "campaign.yml").write_text("""campaign: t
methods: {sequential: 3}
warmup: 3
cwd: sub
parser: {name: regex, pattern: 'v=(?P<value>[0-9.]+)', unit: ms}
benchmarks:
  x:
    A: sh -c 'echo v=50; echo v=50; echo v=50; echo v=1; echo v=1.1; echo v=1'
    B: sh -c 'echo v=1; echo v=1; echo v=1; echo v=1; echo v=1.1; echo v=1'
""")
    assert duet("run", "campaign.yml", "--no-progress").returncode == 0
    before = duet("analyze", "--export-json", "-").stdout
    (tmp_path / "sub").rmdir()
    after = duet("analyze", "--export-json", "-").stdout
    assert '"no difference"' in before and after == before


def test_duet_sides_with_unequal_iteration_counts_do_not_hang(duet, tmp_path: Path) -> None:
    # A stops after 2 iterations; B must not wait out the barrier timeout (60 s) for each of its other 6.
    write_campaign(tmp_path, f"""  uneven:
    A: {harness('--iterations 2')}
    B: {harness('--iterations 8')}
""", methods="{duet: 1}", extra="barrier_timeout: 30")
    t0 = time.monotonic()
    result = duet("run", "campaign.yml", "--no-progress")
    assert time.monotonic() - t0 < 25
    assert result.returncode == 0, result.stderr
    counts = dict(db_rows(tmp_path, "SELECT side, COUNT(*) FROM iterations GROUP BY side"))
    assert counts == {"A": 2, "B": 8}


def test_timeout_kills_the_run_and_is_recorded(duet, tmp_path: Path) -> None:
    write_campaign(tmp_path, f"  slow: {harness('--sleep 30')}\n", methods="{duet: 1}",
                   extra="").write_text((tmp_path / "campaign.yml").read_text().replace("timeout: 60", "timeout: 1"))
    t0 = time.monotonic()
    result = duet("run", "campaign.yml", "--no-progress")
    assert time.monotonic() - t0 < 20
    assert result.returncode == 1, result.stderr
    (status, error), = db_rows(tmp_path, "SELECT status, error FROM runs")
    assert status == "failed" and "timed out" in error
    leftover = subprocess.run(["pgrep", "-f", f"{tmp_path}"], capture_output=True, text=True)
    assert leftover.stdout.strip() == ""


def test_aduet_without_timestamps_is_refused_with_reason(duet, tmp_path: Path) -> None:
    write_campaign(tmp_path, f"  nohook: {harness('--iterations 4 --no-hook')}\n", methods="{aduet: 2, duet: 2}")
    result = duet("run", "campaign.yml", "--no-progress")
    assert result.returncode == 0, result.stderr
    assert "timestamps" in result.stdout
    # without the hook the sync duet is not paired by index either: it says why it has no result
    assert "nohook" in result.stdout and "runs unsynchronized (no hook iteration log)" in result.stdout


def test_interrupt_then_resume_repeats_nothing(duet_env: dict[str, str], tmp_path: Path) -> None:
    write_campaign(tmp_path, f"  loop: {harness('--iterations 4 --work 200000')}\n",
                   methods="{duet: 6, sequential: 3}")
    env = duet_env
    proc = subprocess.Popen([sys.executable, "-m", "duetbench", "run", "campaign.yml", "--no-progress"],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # wait for 3 stored runs, then interrupt as a user would (Ctrl-C goes to the process group)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if len(db_rows(tmp_path, "SELECT id FROM runs")) >= 3:
                break
        except sqlite3.Error:
            pass
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "--resume" in out and "Traceback" not in err
    before = {r[0] for r in db_rows(tmp_path, "SELECT key FROM runs")}
    assert 3 <= len(before) < 12
    assert db_rows(tmp_path, "SELECT status FROM campaigns")[0][0] == "interrupted"
    resumed = subprocess.run([sys.executable, "-m", "duetbench", "run", "campaign.yml", "--resume", "--no-progress"],
                             cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    keys = [r[0] for r in db_rows(tmp_path, "SELECT key FROM runs")]
    assert len(keys) == len(set(keys)) == 12
    assert len(db_rows(tmp_path, "SELECT id FROM campaigns")) == 1
    assert db_rows(tmp_path, "SELECT status FROM campaigns")[0][0] == "finished"
    # the resumed part ran in the planned order, after the runs kept from before
    positions = db_rows(tmp_path, "SELECT position, id FROM runs WHERE key NOT IN (%s) ORDER BY id"
                        % ",".join("?" * len(before)), *before)
    assert [p for p, _ in positions] == sorted(p for p, _ in positions)
    again = subprocess.run([sys.executable, "-m", "duetbench", "run", "campaign.yml", "--resume"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert again.returncode == 2 and "already finished" in again.stderr


def test_second_campaign_is_refused_while_one_measures(native_dir, duet, tmp_path: Path) -> None:
    from duetbench.execute.lock import MeasurementLock

    write_campaign(tmp_path, f"  loop: {harness()}\n")
    with MeasurementLock("duet run other.yml (pid test)"):
        result = duet("run", "campaign.yml")
    assert result.returncode == 2
    assert "another measurement is running on this machine: duet run other.yml (pid test)" in result.stderr
    assert len(result.stderr.strip().splitlines()) <= 2


def test_invalid_campaign_reports_location_without_traceback(duet, tmp_path: Path) -> None:
    (tmp_path / "campaign.yml").write_text("campaign: t\nmethds: {duet: 2}\nbenchmarks:\n  x: {A: 'true'}\n")
    result = duet("run", "campaign.yml")
    assert result.returncode == 2
    assert "campaign.yml:2:1" in result.stderr and "methods" in result.stderr


def test_kill_9_then_resume_keeps_the_killed_runs_outputs_aside(duet_env: dict[str, str], tmp_path: Path) -> None:
    write_campaign(tmp_path, f"  loop: {harness('--iterations 6 --work 300000')}\n", methods="{duet: 8}")
    proc = subprocess.Popen([sys.executable, "-m", "duetbench", "run", "campaign.yml", "--no-progress"],
                            cwd=tmp_path, env=duet_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if len(db_rows(tmp_path, "SELECT id FROM runs")) >= 2:
                break
        except sqlite3.Error:
            pass
        time.sleep(0.02)
    time.sleep(0.1)  # most likely in the middle of the next run
    proc.kill()
    proc.wait()
    stored = len(db_rows(tmp_path, "SELECT id FROM runs"))
    # the launchers die with the orchestrator (PDEATHSIG) and take their harnesses with them
    time.sleep(2)
    leftover = subprocess.run(["pgrep", "-f", "harness.py"], capture_output=True, text=True).stdout.split()
    assert not [pid for pid in leftover if str(tmp_path) in Path(f"/proc/{pid}/cwd").resolve().as_posix()]
    resumed = subprocess.run([sys.executable, "-m", "duetbench", "run", "campaign.yml", "--resume", "--no-progress"],
                             cwd=tmp_path, env=duet_env, capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    rows = db_rows(tmp_path, "SELECT key, status FROM runs")
    assert len(rows) == len({k for k, _ in rows}) == 8 and all(s == "ok" for _, s in rows), rows
    assert stored < 8
    runs_dir = next((tmp_path / ".duet" / "campaigns").iterdir()) / "runs" / "loop"
    killed = [d.name for d in runs_dir.iterdir() if ".killed-" in d.name]
    assert len(killed) <= 1  # the run the kill interrupted, if it had started, is kept aside


def test_runs_get_a_random_environment_size_shared_by_a_and_b(duet, tmp_path: Path) -> None:
    """plan/layout.py in campaigns: A's and B's run of one repetition share the size; repetitions differ."""
    write_campaign(tmp_path, f"  loop: {harness('--iterations 2 --work 1000')}\n", methods="{duet: 4, sequential: 2}")
    result = duet("run", "campaign.yml", "--no-progress")
    assert result.returncode == 0, result.stderr
    sizes: dict[str, dict[str, int]] = {}
    runs_dir = next((tmp_path / ".duet" / "campaigns").iterdir()) / "runs" / "loop"
    for stderr in runs_dir.glob("*/*/stderr.txt"):
        match = re.search(r"side (\w) done, env offset (\d+)", stderr.read_text())
        assert match, stderr
        run = stderr.parent.parent.name.removesuffix("-A").removesuffix("-B")  # sequential runs are per side
        sizes.setdefault(run, {})[match.group(1)] = int(match.group(2))
    assert len(sizes) == 6, sizes
    assert all(set(s) == {"A", "B"} and s["A"] == s["B"] for s in sizes.values()), sizes
    assert len({s["A"] for s in sizes.values()}) >= 3


def test_target_width_stops_a_precise_method_early(duet, tmp_path: Path) -> None:
    # C-like steady work, a loose target: it stops at the minimum of 5 runs, before its plan. (The t
    # interval over runs is honest about few runs, and the precision stop judges it at α/2: at 5 runs its
    # quantile is 6.6, so a 95 % target still tolerates runs that differ by 15 % on a busy machine.)
    # 20 planned: normally it stops at the minimum; runs disturbed by the machine (seen in CI) take more, and
    # on a host where CPython's speed changes ~1.65x from process to process (an AMD EPYC VM, 2026-11-27)
    # 9 of 10 planned were needed once, all of 12 twice in 10 tries. What is checked: it stops before its plan.
    write_campaign(tmp_path, f"  loop: {harness('--iterations 10 --work 200000')}\n", methods="{duet: 20}")
    result = duet("run", "campaign.yml", "--no-progress", "--target-width", "0.95", "--min-runs", "5")
    assert result.returncode == 0, result.stderr
    statuses = [s for (s,) in db_rows(tmp_path, "SELECT status FROM runs ORDER BY position")]
    ok = statuses.count("ok")
    assert 5 <= ok <= 19 and statuses.count("skipped") == 20 - ok, statuses
    assert "stopped early" in result.stdout and f"{20 - ok} planned runs skipped" in result.stdout
    reasons = {e for (e,) in db_rows(tmp_path, "SELECT error FROM runs WHERE status='skipped'")}
    assert len(reasons) == 1 and "target 95.00%" in reasons.pop()


def test_time_budget_stops_and_resume_continues(duet, tmp_path: Path) -> None:
    write_campaign(tmp_path, f"  loop: {harness('--iterations 3 --sleep 0.3')}\n", methods="{duet: 6}")
    first = duet("run", "campaign.yml", "--no-progress", "--time-budget", "0.5")
    assert first.returncode == 0, first.stderr
    assert "time budget" in first.stdout and "--resume" in first.stdout
    done = len(db_rows(tmp_path, "SELECT id FROM runs"))
    assert 1 <= done < 6
    assert db_rows(tmp_path, "SELECT status FROM campaigns")[0][0] == "stopped"
    # Another seed cannot apply to a plan drawn from the first: it was ignored without a word.
    other = duet("run", "campaign.yml", "--no-progress", "--resume", "--seed", "4")
    assert other.returncode == 2 and "was planned with seed 3, not 4" in other.stderr, other.stderr
    assert len(db_rows(tmp_path, "SELECT id FROM runs")) == done
    second = duet("run", "campaign.yml", "--no-progress", "--resume", "--seed", "3")
    assert second.returncode == 0, second.stderr
    assert len(db_rows(tmp_path, "SELECT id FROM runs")) == 6


def test_adaptive_warmup_ends_runs_once_warm_and_measured(duet, tmp_path: Path) -> None:
    # 400 iterations planned, warming up like a JIT: warmup ends when CV settles, then 15 more, then stop.
    write_campaign(tmp_path, f"  warming: {harness('--iterations 400 --warmups 0 --work 40000 --warm 3')}\n",
                   methods="{duet: 2, sequential: 1}")
    t0 = time.monotonic()
    result = duet("run", "campaign.yml", "--no-progress", "--adaptive-warmup", "cv", "--mi", "15", "--wi-max", "60")
    assert result.returncode == 0, result.stderr
    rows = db_rows(tmp_path, "SELECT r.key, r.status, r.notes, i.side, COUNT(*), SUM(i.warmup) FROM runs r "
                             "JOIN iterations i ON i.run_id = r.id GROUP BY r.key, i.side")
    assert len(rows) == 2 * 2 + 2
    for key, status, notes, side, count, warm in rows:
        assert status == "ok", (key, notes)
        assert "adaptive warmup (cv)" in notes
        assert 5 <= warm <= 60 and count - warm >= 15 - 1  # warmup flagged, then about mi measured
        assert count < 200, (key, side, count)  # the run was ended long before its 400 iterations
    assert time.monotonic() - t0 < 60
    assert "warmup ended by the criterion in" in result.stdout  # which rule ended each phase is reported
    # How warmup ended is stored as fields (the summary counts them), matching each run's note.
    for notes, outcome in db_rows(tmp_path, "SELECT notes, adaptive_warmup FROM runs"):
        warmup = json.loads(outcome)
        assert warmup["criterion"] == "cv" and warmup["outcome"] in ("stable", "max", "undecided")
        if warmup["outcome"] == "stable":
            assert f"stable after {warmup['iteration']} warmup iterations" in notes


def test_run_criterion_stops_launching_stable_runs(duet, tmp_path: Path) -> None:
    # Steady integer work: with RCIW over runs (threshold 3%), planned duet runs stop well before the last.
    # (20 planned, so that a run disturbed by the machine — seen in CI — leaves room to become stable again)
    write_campaign(tmp_path, f"  steady: {harness('--iterations 30 --work 300000')}\n", methods="{duet: 20}")
    result = duet("run", "campaign.yml", "--no-progress", "--run-criterion", "rciw", "--f-min", "3")
    assert result.returncode == 0, result.stderr
    statuses = [s for (s,) in db_rows(tmp_path, "SELECT status FROM runs")]
    assert len(statuses) == 20 and 3 <= statuses.count("ok") < 20, statuses
    assert "stable by rciw" in result.stdout


def test_stopping_settings_in_the_campaign_file(duet, tmp_path: Path) -> None:
    write_campaign(tmp_path, f"""  warming:
    command: {harness('--iterations 300 --warmups 0 --work 40000 --warm 3')}
    stopping: {{mi: 12}}
""", methods="{duet: 8}", extra="stopping: {warmup: cv, mi: 40, runs: cv, f_min: 3, wi_max: 60}")
    result = duet("run", "campaign.yml", "--no-progress")
    assert result.returncode == 0, result.stderr
    notes = [n for (n,) in db_rows(tmp_path, "SELECT notes FROM runs WHERE status='ok'")]
    assert notes and all("adaptive warmup (cv)" in n for n in notes)
    # The decision used the benchmark's mi (12), not the campaign's (40): the run was to end 12 iterations
    # after warmup. How many more a side ran before the stop reached it depends on scheduling.
    for note in notes:
        stable = re.search(r"after (\d+) warmup iterations; run ended after (\d+) iterations", note)
        capped = re.search(r"max reached without stability; run ended after (\d+) iterations", note)
        assert (stable and int(stable.group(2)) - int(stable.group(1)) == 12) or \
            (capped and int(capped.group(1)) == 60 + 12), note  # warmup ended at wi_max (60) on a noisy run
    counts = [c - w for c, w in db_rows(tmp_path, "SELECT COUNT(*), SUM(warmup) FROM iterations GROUP BY run_id, side")]
    assert all(12 - 1 <= c < 300 for c in counts), counts  # at least mi measured, and ended before the harness did
    bad = write_campaign(tmp_path, f"  x: {harness()}\n", extra="stopping: {warmup: cv, wi_min: 9, wi_max: 6}")
    r = duet("run", bad.name, "--no-progress")
    # refused when the file is loaded, at the line of wi_max
    assert r.returncode == 2 and "stopping.wi_max: wi_max=6 is below" in r.stderr, r.stderr


def test_a_stopping_parameter_without_its_criterion_is_refused(duet, tmp_path: Path) -> None:
    # `--mi 30` alone was accepted and ignored: the campaign file's own stopping settings stayed in force.
    write_campaign(tmp_path, f"  x: {harness()}\n", extra="stopping: {warmup: cv, runs: cv}")
    for option, needs in (("--mi", "--adaptive-warmup"), ("--wi-max", "--adaptive-warmup"),
                          ("--f-min", "--run-criterion")):
        r = duet("run", "campaign.yml", "--dry-run", option, "30")
        assert r.returncode == 2 and f"{option} applies only with {needs}" in r.stderr, r.stderr
    assert duet("run", "campaign.yml", "--dry-run", "--adaptive-warmup", "cv", "--mi", "30").returncode == 0


def test_retry_failed_runs_only_the_failed_runs_again_and_keeps_their_records(duet, tmp_path: Path) -> None:
    # A benchmark that fails until a file exists (a flaky lock, a missing build step): the campaign finishes
    # with exit 1; --retry-failed measures only its failed runs again, and `duet analyze` then has a result.
    flaky = f"sh -c 'test -e ready || (echo not ready >&2; exit 3) && {harness('--iterations 4 --work 20000')}'"
    write_campaign(tmp_path, f"  steady: {harness('--iterations 4 --work 20000')}\n  flaky: {flaky}\n",
                   methods="{duet: 2}")
    first = duet("run", "campaign.yml", "--no-progress")
    assert first.returncode == 1 and "run(s) failed" in first.stdout, first.stdout + first.stderr
    before = db_rows(tmp_path, "SELECT key, status FROM runs ORDER BY id")
    assert sorted(st for _, st in before) == ["failed", "failed", "ok", "ok"]
    again = duet("run", "campaign.yml", "--no-progress", "--resume")
    assert again.returncode != 0 and "--retry-failed" in again.stderr  # finished: the hint names the option
    (tmp_path / "ready").write_text("")
    dry = duet("run", "campaign.yml", "--retry-failed", "--dry-run")
    assert dry.returncode == 0 and "2 of 4 runs left" in dry.stdout, dry.stdout + dry.stderr
    retry = duet("run", "campaign.yml", "--no-progress", "--retry-failed")
    assert retry.returncode == 0, retry.stdout + retry.stderr
    after = db_rows(tmp_path, "SELECT key, status, error FROM runs ORDER BY id")
    # The two steady runs were not repeated; the failed ones are kept (with their error), marked retried.
    assert [st for _, st, _ in after].count("ok") == 4 and len(after) == 6
    retried = [(k, e) for k, st, e in after if st == "retried"]
    assert len(retried) == 2 and all("#retried-" in k and "not ready" in e for k, e in retried)
    analysed = duet("analyze")
    assert analysed.returncode == 0 and "all 2 run(s) failed" not in analysed.stdout, analysed.stdout
    flaky_row = next(line for line in analysed.stdout.splitlines() if "flaky" in line)
    assert re.search(r"\d\.\d{3}", flaky_row) and "no result" not in flaky_row, analysed.stdout
    nothing = duet("run", "campaign.yml", "--no-progress", "--retry-failed")
    assert nothing.returncode != 0 and "no failed run" in nothing.stderr


def test_two_databases_in_one_directory_keep_their_own_raw_outputs(duet, tmp_path: Path) -> None:
    # Raw outputs go to DIR/campaigns/<id>-<name>; a second database there (or results.db deleted and made
    # anew) numbers its campaigns from 1 again. Its runs must not take over the first one's directories:
    # they were renamed '.killed-…' (as if killed) and the first database's records then named the
    # second's files.
    write_campaign(tmp_path, f"  loop: {harness('--iterations 3')}\n", methods="{sequential: 1}")
    first = duet("run", "campaign.yml", "--no-progress", "--db", "first.db")
    assert first.returncode == 0, first.stdout + first.stderr
    second = duet("run", "campaign.yml", "--no-progress", "--db", "second.db")
    assert second.returncode == 0, second.stdout + second.stderr

    def run_dirs(db: str) -> set[str]:
        with sqlite3.connect(tmp_path / db) as conn:
            return {d for (d,) in conn.execute("SELECT run_dir FROM runs")}

    mine, theirs = run_dirs("first.db"), run_dirs("second.db")
    assert len(mine) == len(theirs) == 2 and not mine & theirs, (mine, theirs)
    assert all(Path(d).is_dir() for d in mine | theirs)
    assert not [p for p in (tmp_path / "campaigns").rglob("*") if ".killed-" in p.name]


def test_sigterm_while_artifacts_are_recorded_stops_like_ctrl_c(duet_env: dict[str, str], tmp_path: Path) -> None:
    # An artifact command (a slow `java -version`, a hung `nvidia-smi`) runs before the first run. SIGTERM (a CI
    # timeout) there killed duet outright: the campaign stayed 'running', nothing said how to resume, the
    # artifact's own child was left running, and the resumed campaign never recorded its artifacts.
    slow = "sh -c 'test -e ready && echo v1 || { sleep 30 & echo $! > artifact.pid; wait; }'"
    write_campaign(tmp_path, f"  loop: {harness('--iterations 3')}\n", methods="{sequential: 1}",
                   extra=f"artifacts: {{version: \"{slow}\"}}")
    proc = subprocess.Popen([sys.executable, "-m", "duetbench", "run", "campaign.yml", "--no-progress"],
                            cwd=tmp_path, env=duet_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not (tmp_path / "artifact.pid").exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.2)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, out + err
    assert "--resume" in out and "Traceback" not in err, out + err
    assert db_rows(tmp_path, "SELECT status FROM campaigns")[0][0] == "interrupted"
    sleeper = int((tmp_path / "artifact.pid").read_text())
    deadline = time.monotonic() + 5
    while Path(f"/proc/{sleeper}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    alive = Path(f"/proc/{sleeper}/stat").exists() and Path(f"/proc/{sleeper}/stat").read_text().split()[2] != "Z"
    if alive:
        subprocess.run(["kill", str(sleeper)], check=False)
    assert not alive, "the artifact command's child outlived duet"
    (tmp_path / "ready").write_text("")
    resumed = subprocess.run([sys.executable, "-m", "duetbench", "run", "campaign.yml", "--resume", "--no-progress"],
                             cwd=tmp_path, env=duet_env, capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert json.loads(db_rows(tmp_path, "SELECT artifacts FROM campaigns")[0][0]) == {"version": "v1\n"}


# A signal right after the campaign is recorded (or claimed again on --resume), before duet handles SIGTERM
# and SIGHUP like Ctrl-C: the probe sends it to its own process at that very point, no timing involved.
SIGNAL_AFTER = """import signal
import duetbench.usecases.campaign as _campaign
from duetbench.store.campaigns import CampaignStore
def _then_signal(real):
    def call(*args, **kwargs):
        result = real(*args, **kwargs)
        os.kill(os.getpid(), signal.{signal})
        return result
    return call
{patch}
"""
NEW_RECORD = "CampaignStore.begin = _then_signal(CampaignStore.begin)"
CLAIMED = "_campaign.claim = _then_signal(_campaign.claim)"


@pytest.mark.parametrize("signum", ["SIGTERM", "SIGHUP", "SIGINT"])
def test_signal_just_after_the_campaign_is_recorded_stops_like_ctrl_c(duet_probe, duet, tmp_path: Path,
                                                                      signum: str) -> None:
    # SIGTERM or SIGHUP there killed duet outright (143, 129), Ctrl-C ended it with the campaign left
    # 'running' (until the next command found its owner dead): the same ending as during the runs is wanted.
    write_campaign(tmp_path, f"  loop: {harness('--iterations 3')}\n", methods="{sequential: 1}")
    result = duet_probe(SIGNAL_AFTER.format(signal=signum, patch=NEW_RECORD), ["run", "campaign.yml", "--no-progress"],
                        then="sys.exit(e.code)\n")
    assert result.returncode == 130, result.stdout + result.stderr
    assert "interrupted" in result.stdout and "--resume" in result.stdout, result.stdout + result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    assert db_rows(tmp_path, "SELECT status FROM campaigns") == [("interrupted",)]
    assert db_rows(tmp_path, "SELECT COUNT(*) FROM runs") == [(0,)]
    resumed = duet("run", "campaign.yml", "--resume", "--no-progress")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert db_rows(tmp_path, "SELECT status FROM campaigns") == [("finished",)]
    assert sorted(db_rows(tmp_path, "SELECT status FROM runs")) == [("ok",), ("ok",)]


def test_sigterm_just_after_resume_claims_the_campaign_stops_like_ctrl_c(duet_probe, duet, tmp_path: Path) -> None:
    # The same window on --resume: between making the campaign 'running' again and handling SIGTERM.
    write_campaign(tmp_path, f"  loop: {harness('--iterations 3')}\n", methods="{sequential: 2}")
    first = duet("run", "campaign.yml", "--no-progress", "--time-budget", "0.001")
    assert first.returncode == 0 and "stopped at the time budget" in first.stdout, first.stdout + first.stderr
    stored = db_rows(tmp_path, "SELECT COUNT(*) FROM runs")[0][0]
    assert 0 < stored < 4, stored
    result = duet_probe(SIGNAL_AFTER.format(signal="SIGTERM", patch=CLAIMED),
                        ["run", "campaign.yml", "--resume", "--no-progress"], then="sys.exit(e.code)\n")
    assert result.returncode == 130, result.stdout + result.stderr
    assert "interrupted" in result.stdout and "Traceback" not in result.stderr, result.stdout + result.stderr
    assert db_rows(tmp_path, "SELECT status FROM campaigns") == [("interrupted",)]
    assert db_rows(tmp_path, "SELECT COUNT(*) FROM runs")[0][0] == stored
    resumed = duet("run", "campaign.yml", "--resume", "--no-progress")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert db_rows(tmp_path, "SELECT status FROM campaigns") == [("finished",)]
    assert db_rows(tmp_path, "SELECT COUNT(*) FROM runs WHERE status = 'ok'") == [(4,)]


def test_time_budget_not_a_number_is_refused(duet, tmp_path: Path) -> None:
    # 'nan' passed the `<= 0` check and then never compared greater than the time spent: the whole campaign
    # ran with no budget at all.
    write_campaign(tmp_path, f"  loop: {harness('--iterations 3')}\n", methods="{sequential: 1}")
    result = duet("run", "campaign.yml", "--no-progress", "--time-budget", "nan")
    assert result.returncode == 2 and "--time-budget must be positive, got nan" in result.stderr, result.stderr
    assert not (tmp_path / ".duet" / "results.db").exists()


def test_a_harness_that_stops_its_launcher_times_out_as_a_slow_one_does(duet, tmp_path: Path) -> None:
    """`kill -STOP $PPID` stops the launcher, which enforces the campaign's timeout: its timer then fires
    unseen, and `duet run` waited for ever. It gives up on the launcher after the timeout, the barrier's and
    some slack, ends it and its command, and records the run as timed out, as for a harness that is slow."""
    marker = tmp_path / "duetbench-stopped-sleep"  # a `sleep` by a name of its own, to look for afterwards
    marker.symlink_to(shutil.which("sleep") or "/bin/sleep")
    write_campaign(tmp_path, f"  stopper: sh -c 'kill -STOP $PPID; exec {marker} 30'\n", methods="{duet: 1}",
                   extra="barrier_timeout: 2").write_text(
        (tmp_path / "campaign.yml").read_text().replace("timeout: 60", "timeout: 1"))
    result = duet("run", "campaign.yml", "--no-progress", timeout=90)
    assert result.returncode == 1, result.stdout + result.stderr
    (status, error), = db_rows(tmp_path, "SELECT status, error FROM runs")
    assert status == "failed" and "timed out" in error, error
    leftover = subprocess.run(["pgrep", "-f", str(marker)], capture_output=True, text=True)
    assert leftover.stdout.strip() == ""


def test_runs_that_failed_are_counted_by_duet_analyze_and_in_the_markdown(duet, tmp_path: Path) -> None:
    """`duet run`'s summary said "3 +1 failed"; `duet analyze` of the same campaign and its Markdown export
    (a pull request's table) showed "3", as if every run had finished."""
    write_campaign(tmp_path, f"""  flaky:
    shell: true
    command: {harness('--iterations 4')}
    B: {{command: "case {{run}} in *-1) exit 3;; esac; exec {harness('--iterations 4')}"}}
""", methods="{duet: 4}")
    ran = duet("run", "campaign.yml", "--no-progress")
    assert ran.returncode == 1 and "3 +1 failed" in ran.stdout, ran.stdout + ran.stderr
    analysed = duet("analyze", "--export-markdown", "-")
    assert analysed.returncode == 0, analysed.stdout + analysed.stderr
    lines = [line for line in analysed.stdout.splitlines() if "flaky" in line and "duet" in line]
    assert any("3 +1 failed" in line for line in lines if "│" in line), analysed.stdout  # the terminal's table
    assert any("| 3 +1 failed |" in line for line in lines), analysed.stdout  # the Markdown's


def test_a_harness_without_the_hook_is_told_where_its_iterations_were_looked_for(duet, tmp_path: Path) -> None:
    """parser iteration-log and a command that never calls the hook: the error named stdout.txt and told to
    check the harness's output, although the hook's log is what was read."""
    write_campaign(tmp_path, "  plain: 'true'\n", methods="{duet: 1}")
    text = (tmp_path / "campaign.yml").read_text().replace(f"parser: {{name: regex, pattern: '{PATTERN}'}}",
                                                           "parser: iteration-log")
    (tmp_path / "campaign.yml").write_text(text)
    result = duet("run", "campaign.yml", "--no-progress")
    assert result.returncode == 1, result.stdout + result.stderr
    (error,) = [e for (e,) in db_rows(tmp_path, "SELECT error FROM runs")]
    assert "A/iterations.log) could not be parsed" in error and "stdout.txt" not in error, error
    assert "the harness never told the duet hook of an iteration" in error, error
