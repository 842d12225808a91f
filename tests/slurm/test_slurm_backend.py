"""`duet run --backend slurm` for real: a two-node Slurm cluster on this machine (scripts/slurm_up.sh),
real campaigns through the native launcher and the barrier, results in per-task SQLite files merged
into --db, or in a real PostgreSQL server; a task killed mid-run and `--resume`."""
from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from duetbench.execute.backends.slurm.client import parse_scontrol, parse_squeue
from duetbench.execute.backends.slurm.split import split_plan
from duetbench.plan.campaign import RunRequest, make_plan

HERE = Path(__file__).resolve().parent
HARNESS = HERE.parent / "campaign" / "harness.py"
PATTERN = r"iteration \d+: (?P<value>[0-9.]+) s"
needs_merge = pytest.mark.skipif(importlib.util.find_spec("duetbench.store.merge") is None,
                                 reason="duetbench.store.merge (duet merge) is not in this tree")


# -- pure parts -----------------------------------------------------------------------------------

def _plan(seed: int = 5):  # type: ignore[no-untyped-def]
    return make_plan([RunRequest("a", {"sequential": 3, "duet": 4}), RunRequest("b", {"duet": 2, "aduet": 3})],
                     schedule="rmit", seed=seed, cpus=(0, 1))


@pytest.mark.parametrize("tasks", [1, 2, 3, 7, 40])
def test_slices_cover_the_plan_once_in_order(tasks: int) -> None:
    plan = _plan()
    shares = split_plan(plan, tasks)
    flat = [r for share in shares for r in share]
    assert [r.key for r in flat] == [r.key for r in plan]  # every run once, in the planned (RMIT) order
    sizes = [len(s) for s in shares]
    assert len(shares) == min(tasks, len(plan)) and max(sizes) - min(sizes) <= 1 and min(sizes) >= 1


def test_benchmark_split_keeps_each_benchmark_on_one_task() -> None:
    plan = _plan()
    shares = split_plan(plan, 99, "benchmark")
    assert sorted({r.benchmark for r in s}.pop() for s in shares) == ["a", "b"]
    assert all(len({r.benchmark for r in s}) == 1 for s in shares)
    for share in shares:
        assert [r.position for r in share] == sorted(r.position for r in share)
    assert sum(len(s) for s in shares) == len(plan)
    with pytest.raises(ValueError):
        split_plan(plan, 2, "nodes")


def test_squeue_and_scontrol_output_parsing() -> None:
    # As printed by Slurm 22.05 for `squeue -h -r -t all -j 1 -o '%i|%T|%N|%r'` and `scontrol show job -o`.
    text = "1_0|COMPLETED|n1|None\n1_1|FAILED|n2|NonZeroExitCode\n1_3|RUNNING|n2|None\n1_2|PENDING||Resources\n" \
           "12_0|RUNNING|n1|None\n"
    tasks = parse_squeue(text, "1")
    assert sorted(tasks) == [0, 1, 2, 3]
    assert (tasks[1].state, tasks[1].node, tasks[1].reason, tasks[1].terminal) == ("FAILED", "n2", "NonZeroExitCode",
                                                                                   True)
    assert not tasks[2].terminal and tasks[2].reason == "Resources" and tasks[0].reason == ""
    details = parse_scontrol("JobId=3 ArrayJobId=1 ArrayTaskId=1 JobName=t.sh JobState=FAILED "
                             "Reason=NonZeroExitCode ExitCode=3:0 NodeList=n2")
    assert (details["ExitCode"], details["NodeList"], details["ArrayTaskId"]) == ("3:0", "n2", "1")


# -- the command line, without a cluster ------------------------------------------------------------

def write_campaign(directory: Path, methods: str, benchmarks: str) -> Path:
    shutil.copy(HARNESS, directory / "harness.py")
    path = directory / "campaign.yml"
    path.write_text(f"campaign: sl\nseed: 11\nmethods: {methods}\nparser: {{name: regex, pattern: '{PATTERN}'}}\n"
                    f"timeout: 60\nbenchmarks:\n{benchmarks}")
    return path


def harness(*args: str) -> str:
    return f"{sys.executable} harness.py " + " ".join(args)


TWO_BENCHMARKS = f"""  loop:
    command: {harness('--iterations 4 --work 40000')}
    B: {{command: {harness('--iterations 4 --work 50000')}}}
  other:
    command: {harness('--iterations 4 --work 30000')}
"""


def duet_cli(env: dict[str, str], cwd: Path, *args: str, timeout: float = 150) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([sys.executable, "-m", "duetbench", *args], cwd=cwd, env=env, capture_output=True,
                            text=True, timeout=timeout)
    assert "Traceback" not in result.stderr + result.stdout, result.stderr + result.stdout
    return result


def test_dry_run_shows_the_tasks_and_submits_nothing(duet_env: dict[str, str], tmp_path: Path) -> None:
    write_campaign(tmp_path, "{sequential: 2, duet: 2}", TWO_BENCHMARKS)
    result = duet_cli(duet_env, tmp_path, "run", "campaign.yml", "--backend", "slurm", "--nodes", "3", "--dry-run")
    assert result.returncode == 0, result.stderr
    assert "12 runs planned in 3 Slurm task(s) of 4, 4, 4 runs" in " ".join(result.stdout.split())
    assert not (tmp_path / ".duet").exists()


def test_a_benchmark_given_more_cpus_than_this_host_has_is_left_to_the_nodes(duet_env: dict[str, str],
                                                                          tmp_path: Path) -> None:
    # The submitting host may be small (a login node): cpus_per_command is checked where each run executes.
    write_campaign(tmp_path, "{duet: 2}", TWO_BENCHMARKS.replace("  other:\n", "  other:\n    cpus_per_command: 512\n"))
    result = duet_cli(duet_env, tmp_path, "run", "campaign.yml", "--backend", "slurm", "--nodes", "2", "--dry-run")
    assert result.returncode == 0, result.stderr
    said = " ".join(result.stdout.split())
    assert "other: 512 CPUs per command (cpus_per_command): more than this machine has; each node checks its own" in said
    local = duet_cli(duet_env, tmp_path, "run", "campaign.yml", "--dry-run")
    assert local.returncode == 2 and "benchmarks.other.cpus_per_command: 512 CPUs per command" in local.stderr, local.stderr


def test_without_slurm_tools_one_clear_line(duet_env: dict[str, str], tmp_path: Path) -> None:
    write_campaign(tmp_path, "{duet: 1}", TWO_BENCHMARKS)
    empty = tmp_path / "bin"
    empty.mkdir()
    result = duet_cli(dict(duet_env, PATH=str(empty)), tmp_path, "run", "campaign.yml", "--backend", "slurm")
    assert result.returncode == 2
    assert "sbatch, squeue, scontrol, scancel not found on PATH" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_slurm_options_need_the_slurm_backend(duet_env: dict[str, str], tmp_path: Path) -> None:
    write_campaign(tmp_path, "{duet: 1}", TWO_BENCHMARKS)
    result = duet_cli(duet_env, tmp_path, "run", "campaign.yml", "--nodes", "2")
    assert result.returncode == 2 and "--nodes applies only to --backend slurm" in result.stderr


# -- on a real two-node cluster ----------------------------------------------------------------------

def _planned_keys(db: Path) -> list[str]:
    with sqlite3.connect(db) as conn:
        (plan,) = conn.execute("SELECT plan FROM campaigns").fetchone()
    return [_key(p) for p in json.loads(plan)]


def _key(p: dict) -> str:  # type: ignore[type-arg]
    side = f"/{p['sides'][0]}" if p["method"] == "sequential" else ""
    return f"{p['benchmark']}/{p['method']}/{p['repetition']}{side}"


def _stored(db: Path) -> list[tuple[str, str, str]]:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT key, status, notes FROM runs").fetchall()


@pytest.fixture()
def cluster_env(slurm_cluster, duet_env: dict[str, str]) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return dict(duet_env, SLURM_CONF=slurm_cluster.env["SLURM_CONF"])


@pytest.mark.slow
@needs_merge
def test_campaign_on_two_nodes_with_task_databases_merged(cluster_env: dict[str, str], tmp_path: Path) -> None:
    write_campaign(tmp_path, "{sequential: 2, duet: 2}", TWO_BENCHMARKS)
    result = duet_cli(cluster_env, tmp_path, "run", "campaign.yml", "--backend", "slurm", "--nodes", "2",
                      "--no-progress", "--export-json", "sl.json")
    assert result.returncode == 0, result.stdout + result.stderr
    out = " ".join(result.stdout.split())
    assert "submitted array job" in out and "2 task(s)" in out and "[12/12]" in out
    # The closing table is exported where the campaign was submitted, as `duet run` does on this machine.
    exported = json.loads((tmp_path / "sl.json").read_text())["rows"]
    assert {(r["benchmark"], r["method"]) for r in exported} == {(b, m) for b in ("loop", "other")
                                                                  for m in ("sequential", "duet")}
    db = tmp_path / ".duet" / "results.db"
    planned = _planned_keys(db)
    stored = _stored(db)
    assert len(planned) == 12 and sorted(k for k, _, _ in stored) == sorted(planned)  # each exactly once
    assert all(status == "ok" for _, status, _ in stored), stored
    nodes = {n.split(" on node ")[1] for _, _, notes in stored for n in json.loads(notes) if n.startswith("slurm:")}
    assert nodes == {"n1", "n2"}
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT status FROM campaigns").fetchone() == ("finished",)
        iterations = conn.execute("SELECT COUNT(*) FROM iterations").fetchone()[0]
    # sequential runs have one side, duets two; 4 iterations per side (the harness's warmup lines do not
    # match the parser's pattern)
    assert iterations == (8 * 1 + 4 * 2) * 4
    assert "ratio B/A" in out and "loop" in out
    # The tasks' databases hold the same runs under the same campaign uid: merging them again adds nothing.
    attempt = next((tmp_path / ".duet" / "campaigns").glob("slurm-*-sl")) / "slurm" / "attempt-1"
    merge = duet_cli(cluster_env, tmp_path, "merge", *map(str, sorted((attempt / "tasks").glob("*.db"))),
                     "--db", str(db))
    assert merge.returncode == 0, merge.stderr
    assert sorted(k for k, _, _ in _stored(db)) == sorted(planned)
    # raw outputs of every run are on the shared filesystem, one directory per run
    raw = attempt.parent.parent / "runs"
    assert len([p for p in raw.glob("*/*") if p.is_dir()]) == 12


@pytest.mark.slow
def test_campaign_into_postgresql_keeps_the_password_out_of_sight(cluster_env: dict[str, str], postgres,  # type: ignore[no-untyped-def]
                                                                 slurm_cluster, tmp_path: Path) -> None:
    password = postgres.password
    write_campaign(tmp_path, "{sequential: 1, duet: 2}", TWO_BENCHMARKS)
    result = duet_cli(cluster_env, tmp_path, "run", "campaign.yml", "--backend", "slurm", "--nodes", "2",
                      "--db", postgres.url, "--no-progress")
    assert result.returncode == 0, result.stdout + result.stderr
    (campaign_id, plan, uid) = postgres.psql("SELECT id, plan, uid FROM campaigns WHERE name='sl' "
                                             "ORDER BY id DESC LIMIT 1").strip().split("|")
    planned = sorted(_key(p) for p in json.loads(plan))
    stored = postgres.psql(f"SELECT key, status, notes FROM runs WHERE campaign_id={campaign_id}").splitlines()
    assert len(planned) == 8 and sorted(line.split("|")[0] for line in stored) == planned
    assert all(line.split("|")[1] == "ok" for line in stored)
    assert {"n1", "n2"} <= {n for line in stored for n in ("n1", "n2") if f"on node {n}" in line}
    assert postgres.psql(f"SELECT status FROM campaigns WHERE id={campaign_id}").strip() == "finished"
    # The URL's password reached the tasks through the job's environment only: not in any file written
    # for the job, not in what Slurm shows about it, not on the terminal, not in the results.
    run_dir = next((tmp_path / ".duet" / "campaigns").glob(f"slurm-{uid[:8]}-sl"))
    texts = [p.read_text(errors="replace") for p in run_dir.rglob("*") if p.is_file()]
    spec = json.loads((run_dir / "slurm" / "attempt-1" / "job.json").read_text())
    shown = subprocess.run(["scontrol", "show", "job", "-o", spec["job_id"]], env=cluster_env, capture_output=True,
                           text=True).stdout
    queue = subprocess.run(["squeue", "-h", "-t", "all", "-j", spec["job_id"], "-o", "%o %k %Z"], env=cluster_env,
                           capture_output=True, text=True).stdout
    assert spec["store"] == "postgresql" and spec["job_id"] in shown
    stored_options = postgres.psql(f"SELECT options, host, run_dir FROM campaigns WHERE id={campaign_id}")
    for text in [*texts, shown, queue, result.stdout, result.stderr, stored_options]:
        assert password not in text


def _runs_in(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as conn:
            return int(conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0])
    except sqlite3.OperationalError:
        return 0


@pytest.mark.slow
@pytest.mark.parametrize("store", [pytest.param("sqlite", marks=needs_merge), "postgresql"])
def test_killed_task_is_rerun_by_resume(store: str, cluster_env: dict[str, str], tmp_path: Path,
                                        request: pytest.FixtureRequest) -> None:
    pg = request.getfixturevalue("postgres") if store == "postgresql" else None
    db_args = ["--db", pg.url] if pg else []
    name = f"kill{store[:2]}"
    # Runs of ~0.5 s (the harness sleeps before its iterations) leave time to kill a task mid-run.
    path = write_campaign(tmp_path, "{sequential: 3, duet: 3}", f"""  slow:
    command: {harness('--iterations 3 --work 20000 --sleep 0.4')}
""")
    path.write_text(path.read_text().replace("campaign: sl", f"campaign: {name}"))

    def stored_by(attempt: Path, task: int, job: str) -> int:
        if pg is None:
            return _runs_in(attempt / "tasks" / f"{task}.db")
        return int(pg.psql(f"SELECT COUNT(*) FROM runs WHERE notes LIKE '%job {job}_{task} on%'").strip())

    proc = subprocess.Popen([sys.executable, "-m", "duetbench", "run", "campaign.yml", "--backend", "slurm",
                             "--nodes", "2", "--no-progress", *db_args], cwd=tmp_path, env=cluster_env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 90
        victim = None
        while victim is None and time.monotonic() < deadline:
            for attempt in (tmp_path / ".duet" / "campaigns").glob(f"slurm-*-{name}/slurm/attempt-1"):
                job = json.loads((attempt / "job.json").read_text()).get("job_id", "")
                for task in (0, 1):
                    status_file = attempt / "tasks" / f"{task}.json"
                    status = json.loads(status_file.read_text()) if status_file.exists() else {}
                    if job and status.get("state") == "running" and stored_by(attempt, task, job) >= 1:
                        victim = (attempt, task, int(status["pid"]))
            time.sleep(0.1)
        assert victim is not None, "no task got to store a run"
        attempt, task, pid = victim
        time.sleep(0.2)  # into its next run
        os.kill(pid, signal.SIGKILL)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 1, out + err
    text = " ".join(out.split())
    assert f"task {task}" in text and "FAILED" in text and "--resume" in text
    assert pg is None or pg.password not in out + err  # the command printed to resume does not show it

    def stored_keys() -> tuple[list[str], list[str]]:
        if pg is None:
            db = tmp_path / ".duet" / "results.db"
            return _planned_keys(db), [k for k, _, _ in _stored(db)]
        cid, plan = pg.psql(f"SELECT id, plan FROM campaigns WHERE name='{name}'").strip().split("|")
        return ([_key(p) for p in json.loads(plan)],
                pg.psql(f"SELECT key FROM runs WHERE campaign_id={cid}").split())

    planned, first = stored_keys()
    assert 1 <= len(set(first)) < len(planned) == 9

    resumed = duet_cli(cluster_env, tmp_path, "run", "campaign.yml", "--backend", "slurm", "--nodes", "2",
                       "--resume", "--no-progress", *db_args)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    second = json.loads((attempt.parent / "attempt-2" / "job.json").read_text())
    resubmitted = [k for share in second["shares"] for k in share]
    assert sorted(resubmitted) == sorted(set(planned) - set(first))  # only what was missing
    planned, stored = stored_keys()
    assert sorted(stored) == sorted(planned)  # every planned run exactly once
    # the killed run's outputs were kept aside, not overwritten
    assert list((attempt.parent.parent / "runs").glob("*/*.killed-*"))


def test_a_rejected_submission_is_one_clear_line(cluster_env: dict[str, str], tmp_path: Path) -> None:
    write_campaign(tmp_path, "{duet: 1}", TWO_BENCHMARKS)
    result = duet_cli(cluster_env, tmp_path, "run", "campaign.yml", "--backend", "slurm", "--partition", "nosuch")
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.startswith("error: sbatch failed (exit 1):") and "Invalid partition" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    with sqlite3.connect(tmp_path / ".duet" / "results.db") as conn:
        assert conn.execute("SELECT status FROM campaigns").fetchone() == ("interrupted",)  # --resume can submit it


def _pids(directory: Path) -> list[int]:
    files = [directory / "slurmctld.pid", *directory.glob("slurmd-*.pid"), directory / "munge" / "munged.pid"]
    return [int(f.read_text()) for f in files if f.exists()]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie (exited, not yet reaped by its parent) is not running
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"


def test_bring_up_tears_down_a_stale_cluster(slurm_cluster) -> None:  # type: ignore[no-untyped-def]
    scripts = HERE.parents[1] / "scripts"
    gone = subprocess.Popen(["true"])
    gone.wait()  # its pid now names no live process: the owner of a killed test run
    up = subprocess.run(["bash", str(scripts / "slurm_up.sh"), "1", "1"], capture_output=True, text=True,
                        env=dict(os.environ, SLURM_OWNER_PID=str(gone.pid)), timeout=120)
    assert up.returncode == 0, up.stderr
    stale = Path(up.stdout.split()[-1])
    stale_pids = _pids(stale)
    assert len(stale_pids) == 3 and all(_alive(p) for p in stale_pids)
    again = subprocess.run(["bash", str(scripts / "slurm_up.sh"), "1", "1"], capture_output=True, text=True,
                           env=dict(os.environ, SLURM_OWNER_PID=str(os.getpid())), timeout=120)
    try:
        assert again.returncode == 0, again.stderr
        assert f"tearing down a stale cluster in {stale}" in again.stderr
        assert not stale.exists() and not any(_alive(p) for p in stale_pids)
        # the session's cluster belongs to a live owner (this test run): left alone
        assert slurm_cluster.dir.exists() and all(_alive(p) for p in _pids(slurm_cluster.dir))
    finally:
        fresh = Path(again.stdout.split()[-1]) if again.returncode == 0 else None
        if fresh is not None:
            subprocess.run(["bash", str(scripts / "slurm_down.sh")], env=dict(os.environ, SLURM_TEST_DIR=str(fresh)),
                           capture_output=True, timeout=120)
    assert fresh is not None and not fresh.exists()


# -- what an HPC user runs into -----------------------------------------------------------------------

def test_an_sbatch_arg_with_unbalanced_quotes_is_refused_before_anything_is_recorded(duet_env: dict[str, str],
                                                                                   tmp_path: Path) -> None:
    write_campaign(tmp_path, "{duet: 1}", TWO_BENCHMARKS)
    result = duet_cli(duet_env, tmp_path, "run", "campaign.yml", "--backend", "slurm", "--sbatch-arg=--comment=it's")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "--sbatch-arg \"--comment=it's\": no closing quotation" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert not (tmp_path / ".duet").exists()  # no campaign left "running" behind


@pytest.mark.slow
@needs_merge
def test_a_directory_with_a_space_and_a_percent_sign(cluster_env: dict[str, str], tmp_path: Path) -> None:
    # sbatch expands %-patterns in --output: "%j" in a directory name must not become the job id there.
    where = tmp_path / "my runs %j"
    where.mkdir()
    write_campaign(where, "{duet: 1}", TWO_BENCHMARKS)
    result = duet_cli(cluster_env, where, "run", "campaign.yml", "--backend", "slurm", "--nodes", "2",
                      "--no-progress")
    assert result.returncode == 0, result.stdout + result.stderr
    attempt = next((where / ".duet" / "campaigns").glob("slurm-*-sl")) / "slurm" / "attempt-1"
    assert sorted(p.name for p in (attempt / "logs").iterdir()) == ["0.out", "1.out"]
    assert len(_stored(where / ".duet" / "results.db")) == 2


@pytest.mark.slow
def test_the_benchmarks_do_not_get_the_database_password(cluster_env: dict[str, str], postgres,  # type: ignore[no-untyped-def]
                                                         tmp_path: Path) -> None:
    # The URL reaches the task through the job's environment; the commands it starts must not inherit it.
    write_campaign(tmp_path, "{duet: 1}", f"""  env:
    command: sh -c 'env; exec {harness("--iterations 2 --work 1000")}'
""")
    result = duet_cli(cluster_env, tmp_path, "run", "campaign.yml", "--backend", "slurm", "--db", postgres.url,
                      "--no-progress")
    assert result.returncode == 0, result.stdout + result.stderr
    uid = postgres.psql("SELECT uid FROM campaigns WHERE name='sl' ORDER BY id DESC LIMIT 1").strip()
    outputs = [p for p in next((tmp_path / ".duet" / "campaigns").glob(f"slurm-{uid[:8]}-sl")).rglob("*")
               if p.is_file()]
    printed = "".join(p.read_text(errors="replace") for p in outputs)
    assert "SLURM_JOB_ID=" in printed  # the benchmark's environment is there: it ran inside the job
    assert postgres.password not in printed and "DUETBENCH_SLURM_DB" not in printed


def _run_until(env: dict[str, str], cwd: Path, args: list[str], seen: str,
               then: Callable[[subprocess.Popen[str], list[str]], None]) -> tuple[int, str, str]:
    """`duet ARGS` until its output shows `seen` (or 90 s passed), then `then(process, its output lines so far)`;
    waits for it to end.
    Returns its exit code, its stdout with whitespace runs made single spaces, its stderr."""
    proc = subprocess.Popen([sys.executable, "-m", "duetbench", *args], cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stdout or ()), daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and proc.poll() is None and not any(seen in line for line in lines):
            time.sleep(0.2)
        then(proc, lines)  # seen or not: what the test checks must happen either way
        proc.wait(timeout=120)
        reader.join(timeout=10)
        err = proc.stderr.read() if proc.stderr else ""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return proc.returncode, " ".join("".join(lines).split()), err


@pytest.mark.slow
def test_a_job_slurm_will_not_start_is_said_and_ctrl_c_cancels_it(cluster_env: dict[str, str], tmp_path: Path) -> None:
    # A held job (like one whose --time is above the partition's limit) stays pending for ever: the user
    # must be told why, not left watching nothing; Ctrl-C then cancels it.
    write_campaign(tmp_path, "{duet: 1}", TWO_BENCHMARKS)
    code, text, err = _run_until(cluster_env, tmp_path, ["run", "campaign.yml", "--backend", "slurm", "--nodes", "2",
                                                         "--no-progress", "--sbatch-arg=--hold"],
                                 "pending (JobHeldUser)", lambda proc, _: proc.send_signal(signal.SIGINT))
    assert code == 130, text + err
    assert "tasks 0–1: pending (JobHeldUser): it is held" in text
    # The command that resumes it submits the same way: the Slurm options are not lost.
    assert "continue with duet run campaign.yml --resume --backend slurm --nodes 2 --sbatch-arg=--hold" in text
    # Neither task ran: no exit code nor a log file that was never written is shown for them.
    assert "task 0: CANCELLED before it started (it was pending: JobHeldUser)" in text and "log:" not in text
    job = json.loads(next((tmp_path / ".duet" / "campaigns").glob("slurm-*-sl/slurm/attempt-1/job.json")).read_text())
    queue = subprocess.run(["squeue", "-h", "-r", "-t", "all", "-j", job["job_id"], "-o", "%T"], env=cluster_env,
                           capture_output=True, text=True).stdout.split()
    assert queue == ["CANCELLED", "CANCELLED"]


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("unshare") is None, reason="needs unshare (util-linux)")
def test_a_shared_dir_the_nodes_do_not_see_is_named(cluster_env: dict[str, str], tmp_path: Path) -> None:
    # --shared-dir on a filesystem only the submitting host has (here: a tmpfs in its own mount namespace;
    # the nodes see the empty directory under it): the tasks cannot even open their logs.
    write_campaign(tmp_path, "{duet: 1}", TWO_BENCHMARKS)
    private = tmp_path / "private"
    private.mkdir()
    duet = shlex.join([sys.executable, "-m", "duetbench", "run", "campaign.yml", "--backend", "slurm", "--nodes", "2",
                       "--no-progress", "--shared-dir", str(private)])
    result = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c",
                             f"mount -t tmpfs none {shlex.quote(str(private))} && exec {duet}"],
                            cwd=tmp_path, env=cluster_env, capture_output=True, text=True, timeout=150)
    text = " ".join(result.stdout.split())
    assert result.returncode == 1, text + result.stderr
    assert "task 0 on n" in text and "FAILED" in text
    assert "logs/0.out: do the nodes share that directory? (--shared-dir)" in text
    assert "log: " not in text  # no pointer to a log this host cannot show


@pytest.mark.slow
@needs_merge
def test_squeue_failing_for_a_while_does_not_abandon_the_job(cluster_env: dict[str, str], tmp_path: Path) -> None:
    # A busy or restarting slurmctld makes squeue time out for a while; the job goes on, so must duet.
    write_campaign(tmp_path, "{duet: 2}", TWO_BENCHMARKS)
    wrappers, failing = tmp_path / "bin", tmp_path / "squeue-fails"
    wrappers.mkdir()
    real = shutil.which("squeue", path=cluster_env["PATH"])
    (wrappers / "squeue").write_text(f"#!/bin/sh\nif [ -e {shlex.quote(str(failing))} ]; then\n"
                                     "  echo 'squeue: error: slurm_load_jobs error: Socket timed out on send/recv "
                                     f"operation' >&2; exit 1\nfi\nexec {shlex.quote(str(real))} \"$@\"\n")
    (wrappers / "squeue").chmod(0o755)

    def fail_for_a_while(proc: subprocess.Popen[str], lines: list[str]) -> None:
        failing.touch()
        time.sleep(3)
        failing.unlink()

    code, text, err = _run_until(dict(cluster_env, PATH=f"{wrappers}:{cluster_env['PATH']}"), tmp_path,
                                 ["run", "campaign.yml", "--backend", "slurm", "--nodes", "2", "--no-progress"],
                                 ": running (", fail_for_a_while)
    assert code == 0, text + err
    assert "Socket timed out on send/recv operation; trying again" in text and "squeue answers again" in text
    db = tmp_path / ".duet" / "results.db"
    assert sorted(k for k, _, _ in _stored(db)) == sorted(_planned_keys(db))


@pytest.mark.slow
@needs_merge
def test_a_dropped_ssh_session_leaves_the_job_running_for_resume(cluster_env: dict[str, str], tmp_path: Path) -> None:
    # SIGHUP (the terminal went away) stops the following only; Ctrl-C and SIGTERM are what cancel.
    write_campaign(tmp_path, "{duet: 2, sequential: 1}", f"""  slow:
    command: {harness('--iterations 3 --work 20000 --sleep 1')}
""")
    code, text, err = _run_until(cluster_env, tmp_path, ["run", "campaign.yml", "--backend", "slurm", "--nodes", "2",
                                                         "--no-progress"],
                                 ": running (", lambda proc, _: proc.send_signal(signal.SIGHUP))
    assert code == 130, text + err
    assert "stopped following job" in text and "which goes on" in text
    resumed = duet_cli(cluster_env, tmp_path, "run", "campaign.yml", "--resume", "--backend", "slurm", "--nodes", "2",
                       "--no-progress")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    run_dir = next((tmp_path / ".duet" / "campaigns").glob("slurm-*-sl"))
    assert [p.name for p in (run_dir / "slurm").iterdir()] == ["attempt-1"]  # followed or collected, not resubmitted
    db = tmp_path / ".duet" / "results.db"
    assert sorted(k for k, _, _ in _stored(db)) == sorted(_planned_keys(db))
    assert not list((run_dir / "runs").glob("*/*.interrupted-*"))  # no run was cut short


@pytest.mark.slow
@needs_merge
def test_a_second_ctrl_c_still_brings_what_finished_into_the_database(cluster_env: dict[str, str],
                                                                      tmp_path: Path) -> None:
    write_campaign(tmp_path, "{duet: 3, sequential: 2}", f"""  slow:
    command: {harness('--iterations 3 --work 20000 --sleep 1')}
""")

    def twice(proc: subprocess.Popen[str], lines: list[str]) -> None:
        proc.send_signal(signal.SIGINT)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not any("cancelling job" in line for line in lines):
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)  # while the cancelled tasks are still being waited for

    code, text, err = _run_until(cluster_env, tmp_path, ["run", "campaign.yml", "--backend", "slurm", "--nodes", "2",
                                                         "--no-progress", "--export-json", "what.json"], "[2/", twice)
    assert code == 130, text + err
    shown = set(re.findall(r"\[\d+/\d+\] (\S+): ok", text))
    assert len(shown) >= 2, text
    stored = {k for k, status, _ in _stored(tmp_path / ".duet" / "results.db") if status == "ok"}
    assert shown <= stored  # every run shown finished is in --db, not only in the tasks' files
    assert json.loads((tmp_path / "what.json").read_text())["rows"]  # and in the export of what finished


@pytest.mark.slow
def test_a_requeued_task_is_said_to_be_back_in_the_queue(cluster_env: dict[str, str], tmp_path: Path) -> None:
    # Slurm requeues a task whose node failed (or was preempted; here: scontrol requeue): it waits again,
    # which must not look like a job that went quiet.
    write_campaign(tmp_path, "{duet: 4, sequential: 2}", f"""  slow:
    command: {harness('--iterations 3 --work 20000 --sleep 1')}
""")

    def requeue(proc: subprocess.Popen[str], lines: list[str]) -> None:
        job = json.loads(next((tmp_path / ".duet" / "campaigns").glob("slurm-*-sl/slurm/attempt-1/job.json"))
                         .read_text())["job_id"]
        subprocess.run(["scontrol", "requeue", f"{job}_0"], env=cluster_env, capture_output=True, timeout=60)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not any("back in the queue" in line for line in lines):
            time.sleep(0.1)
        proc.send_signal(signal.SIGINT)

    code, text, err = _run_until(cluster_env, tmp_path, ["run", "campaign.yml", "--backend", "slurm",
                                                         "--no-progress"], "[1/", requeue)
    assert code == 130, text + err
    assert "task 0: back in the queue: Slurm requeued it (its node failed, or it was preempted)" in text


@pytest.mark.slow
def test_ctrl_c_while_sbatch_submits_cancels_the_job_it_submitted(cluster_env: dict[str, str], tmp_path: Path) -> None:
    # A slow sbatch (a busy slurmctld) that has submitted but not yet answered: Ctrl-C must not leave a job
    # running that no job.json names (the next --resume would submit the same runs again).
    write_campaign(tmp_path, "{duet: 1}", TWO_BENCHMARKS)
    wrappers = tmp_path / "bin"
    wrappers.mkdir()
    real = shutil.which("sbatch", path=cluster_env["PATH"])
    (wrappers / "sbatch").write_text(f'#!/bin/sh\nout=$({shlex.quote(str(real))} "$@") || exit $?\nsleep 3\n'
                                     'echo "$out"\n')
    (wrappers / "sbatch").chmod(0o755)

    def interrupt_the_submission(proc: subprocess.Popen[str], lines: list[str]) -> None:
        time.sleep(1)
        proc.send_signal(signal.SIGINT)

    code, text, err = _run_until(dict(cluster_env, PATH=f"{wrappers}:{cluster_env['PATH']}"), tmp_path,
                                 ["run", "campaign.yml", "--backend", "slurm", "--nodes", "2", "--no-progress",
                                  "--sbatch-arg=--hold"],  # held: no task can finish before it is cancelled
                                 "duet run campaign", interrupt_the_submission)
    assert code == 130, text + err
    job = json.loads(next((tmp_path / ".duet" / "campaigns").glob("slurm-*-sl/slurm/attempt-1/job.json"))
                     .read_text())["job_id"]
    assert job and f"cancelling job {job}" in text
    queue = subprocess.run(["squeue", "-h", "-r", "-t", "all", "-j", job, "-o", "%T"], env=cluster_env,
                           capture_output=True, text=True).stdout.split()
    assert queue == ["CANCELLED", "CANCELLED"]


@pytest.mark.slow
@needs_merge
def test_a_failed_scancel_is_said_and_the_job_followed(cluster_env: dict[str, str], tmp_path: Path) -> None:
    # Ctrl-C, but scancel cannot reach slurmctld: the job goes on, and the user must know it.
    write_campaign(tmp_path, "{duet: 2, sequential: 2}", f"""  slow:
    command: {harness('--iterations 3 --work 20000 --sleep 1')}
""")
    wrappers = tmp_path / "bin"
    wrappers.mkdir()
    (wrappers / "scancel").write_text("#!/bin/sh\necho 'scancel: error: Kill job error on job id '$1': Unable to "
                                      "contact slurm controller (connect failure)' >&2\nexit 1\n")
    (wrappers / "scancel").chmod(0o755)
    code, text, err = _run_until(dict(cluster_env, PATH=f"{wrappers}:{cluster_env['PATH']}"), tmp_path,
                                 ["run", "campaign.yml", "--backend", "slurm", "--nodes", "2", "--no-progress"],
                                 ": running (", lambda proc, _: proc.send_signal(signal.SIGINT))
    assert code == 130, text + err
    assert "Unable to contact slurm controller (connect failure): job" in text
    assert "goes on, followed until it ends" in text
    db = tmp_path / ".duet" / "results.db"
    assert sorted(k for k, _, _ in _stored(db)) == sorted(_planned_keys(db))  # it went on, and all was collected
