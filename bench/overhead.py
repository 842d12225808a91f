"""bench/overhead: what a comparison costs beyond the commands it measures (issue 17).

`duet compare CMD CMD --runs N` against `hyperfine -N --runs N CMD CMD`, whole-process wall time, on
`true` and on built-in CPU-bound commands of about 1, 10, 20 and 100 ms (`duet-workload integer`),
at equal run counts; plus what the orchestrator itself costs:

  wall          median over --repeats of each tool's whole-process wall time; ratio duet/hyperfine
                (a duet runs A and B at the same time: ideally ~0.5x for long commands, ~1x for `true`);
  gap           per pair, from the slower side's end to the next pair's release (orchestration
                beyond the slower side): median, and mean without the first gap (where the store is
                opened, a one-time start-up cost);
  own CPU       CPU time of duet's process tree minus the measured commands' (orchestrator and
                launchers; the launcher children's spin at the start barrier is counted apart), as a
                share of the commands' CPU; and of it the orchestrator process's own
                (getrusage(RUSAGE_SELF) as it exits, plus its reporter process's, usecases/apart.py);
                and what one more pair costs: the slope of both between 50 and 150 pairs of the 20 ms
                command (the start-up and report, the same at both counts, left out);
  floor         the CPU of a bare `python -c "import click, msgspec, numpy, rich.console, rich.table,
                sqlite3"` (the libraries a compare stands on, numpy with one BLAS thread as duet imports it),
                and of `python -c pass`: what any build on these libraries pays before doing anything, as a
                share of the 20 ms case's commands' CPU, beside the goal's 5 %;
  start-up      `duet --version`, `duet --help`, and from the moment `duet compare` is started to its
                first invocation's start (both CLOCK_MONOTONIC);
  campaign      `duet run` of a campaign of 1-ms runs: per-run cost beyond the commands, and where it
                goes (one run under cProfile: launch and wait, parsing, storing, the rest);
  default       `duet compare CMD CMD` as users run it (--method auto, the adaptive stop), on the 20 ms
                command: how much of its wall time is not spent in a pair (between pairs: the live
                statistics, the pilot's switches; start-up and report), and the gap per pair.

Several source trees can be measured in one session (`--src before=/path/to/old/checkout`), each
with its own native programs built from its tree, interleaved so that they see the same machine;
every measurement records the load average. Writes bench/results/overhead.json and overhead.md.

    python bench/overhead.py [--repeats 5] [--src LABEL=DIR ...] [--quick]
"""
from __future__ import annotations

import argparse
import json
import os
import pstats
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from duetbench.errors import DuetError
from duetbench.execute.lock import MeasurementLock

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results"

#: (name, target ms per invocation or None for `true`, runs); runs chosen so each cell takes seconds.
CASES: list[tuple[str, float | None, int]] = [
    ("true", None, 200),
    ("1 ms", 1.0, 200),
    ("10 ms", 10.0, 100),
    ("20 ms", 20.0, 50),
    ("100 ms", 100.0, 20),
]

#: The case measured a second time with LONGER_FACTOR times its runs: what one more pair costs in CPU (the
#: slope between the two counts), apart from the fixed start-up and report that the goal's share includes.
LONGER_CASE, LONGER_FACTOR = "20 ms", 3

#: The case whose command the default `duet compare` (run_default) measures.
DEFAULT_CASE = "20 ms"

GOALS = {
    "gap_ms": 1.0,            # orchestration per pair beyond the slower side
    "ratio_20ms": 0.6,        # duet wall / hyperfine wall, 20 ms command
    "ratio_true": 1.5,        # duet wall / hyperfine wall, `true`
    "own_cpu_share_20ms": 0.05,  # orchestrator CPU / commands' CPU, 20 ms command
    "first_invocation_ms": 150.0,
    "version_ms": 100.0,
    "help_ms": 100.0,
}


#: Seconds to wait for someone else's measurement before measuring anyway (--lock-wait).
LOCK_WAIT = {"seconds": 120.0}
#: Who held the machine lock when we measured without it (recorded in the results).
UNLOCKED: list[str] = []


@contextmanager
def machine(what: str) -> Iterator[None]:
    """Hold the machine-wide measurement lock for one measurement, waiting while someone else measures
    (theirs would be our noise, and ours theirs); the measured `duet` itself is given a private lock.
    After --lock-wait seconds it measures anyway and records whom it measured beside."""
    lock = MeasurementLock(f"bench/overhead.py: {what}")
    deadline = time.monotonic() + LOCK_WAIT["seconds"]
    held = False
    while True:
        try:
            lock.acquire()
            held = True
            break
        except DuetError as exc:
            if time.monotonic() > deadline:
                UNLOCKED.append(exc.message)
                print(f"measuring beside {exc.message}", file=sys.stderr)
                break
            time.sleep(0.5)
    try:
        yield
    finally:
        if held:
            lock.release()


def load() -> float:
    return round(os.getloadavg()[0], 2)


def build_native(src: Path, out: Path) -> Path:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        raise SystemExit("bench/overhead needs a C compiler for the native programs")
    out.mkdir(parents=True, exist_ok=True)
    for name, source in (("duet-launch", "launcher.c"), ("duet-workload", "workload.c")):
        subprocess.run([cc, "-O2", "-std=gnu11", "-I", str(src / "native"), "-o", str(out / name),
                        str(src / "native" / source), "-lm"], check=True)
    return out


class Tree:
    """One source tree under test: its Python sources on PYTHONPATH, its native programs."""

    def __init__(self, label: str, src: Path, build: Path) -> None:
        self.label = label
        self.src = src
        self.native = build_native(src, build / label)
        # Byte-compiled as an install leaves it (pip compiles every module): without this, a shell with
        # PYTHONDONTWRITEBYTECODE=1 (this project's sandboxes have it) makes every measured `duet` compile
        # its ~50 start-up modules from source, ~40 ms that no installed duetbench pays.
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(src / "src")], check=True,
                       stdout=subprocess.DEVNULL)
        self.env = dict(os.environ)
        self.env["PYTHONPATH"] = str(src / "src")
        self.env["DUETBENCH_NATIVE_DIR"] = str(self.native)
        self.env["DUETBENCH_LOCK"] = str(build / "bench-private.lock")
        self.env.pop("COLUMNS", None)
        self.has_auto = '"auto"' in (src / "src" / "duetbench" / "config" / "compare.py").read_text()

    def argv(self, *args: str) -> list[str]:
        """`duet ARGS...` as the installed `duet` script runs it (its name is `duet`, which the kept help
        page needs, and no runpy)."""
        return [sys.executable, "-c", SCRIPT, *args]

    def argv_self_cpu(self, out: Path, *args: str) -> list[str]:
        """`argv`, with the orchestrator's own CPU (getrusage(RUSAGE_SELF): without the launchers and the
        commands, its children; with its reporter process, if it forked one) written to `out` as it exits."""
        return [sys.executable, "-c", SELF_CPU, str(out), *args]


#: What pip's `duet` console script does (trees from before cli/program.py have cli.main's entry).
SCRIPT = """import sys
sys.argv[0] = "duet"
try:
    from duetbench.cli.program import entry
except ImportError:
    from duetbench.cli.main import entry
sys.exit(entry())
"""

#: `python -c SELF_CPU OUT ARGS...` runs `duet ARGS...` and writes its own user and system CPU to OUT at exit.
SELF_CPU = """import atexit, resource, runpy, sys
out = sys.argv.pop(1)
def _write():
    r = resource.getrusage(resource.RUSAGE_SELF)
    # The reporter process a compare may fork (usecases/apart.py) is the orchestrator's too.
    apart = sys.modules.get("duetbench.usecases.apart")
    reporter = getattr(apart, "reporter_cpu_s", 0.0)
    with open(out, "w") as f:
        f.write(f"{r.ru_utime + reporter} {r.ru_stime}")
atexit.register(_write)
runpy.run_module("duetbench", run_name="__main__", alter_sys=True)
"""


def timed(argv: list[str], env: dict[str, str] | None = None, cwd: Path | None = None) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds of the whole process tree (wait4), and the start (monotonic ns)."""
    t0 = time.monotonic_ns()
    proc = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = (time.monotonic_ns() - t0) / 1e9
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.stderr:
        proc.stderr.close()
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed with {proc.returncode}: {err[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime, t0


#: What `duet compare` imports beyond the standard library (the orchestrator: click, msgspec, sqlite3; its
#: reporter: numpy, rich), imported the way duet does (numpy with one BLAS thread, src/duetbench/_blas.py).
LIBRARIES = "import click, msgspec, numpy, rich.console, rich.table, sqlite3"
#: The orchestrator's alone: the floor of a build whose report did without numpy and rich.
ORCHESTRATOR_LIBRARIES = "import click, msgspec, sqlite3"
ONE_BLAS_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def floor_cost(tmp: Path) -> dict[str, Any]:
    """CPU seconds of a bare interpreter and of one that imports the libraries a compare stands on: the
    floor under any build of duet that uses them (the goal's CPU share holds start-up and report)."""
    env = {**os.environ, **ONE_BLAS_THREAD}
    _, bare, _ = timed([sys.executable, "-c", "pass"], env=env, cwd=tmp)
    _, libraries, _ = timed([sys.executable, "-c", LIBRARIES], env=env, cwd=tmp)
    _, orchestrator, _ = timed([sys.executable, "-c", ORCHESTRATOR_LIBRARIES], env=env, cwd=tmp)
    return {"interpreter_cpu_s": bare, "libraries_cpu_s": libraries, "orchestrator_libraries_cpu_s": orchestrator,
            "load": load()}


def workload_command(native: Path, target_ms: float | None) -> str:
    if target_ms is None:
        return "true"
    ops = subprocess.run([str(native / "duet-workload"), "integer", "--calibrate", str(target_ms)],
                         capture_output=True, text=True, check=True).stdout.strip()
    return f"{native / 'duet-workload'} integer --ops {ops}"


def run_duet(tree: Tree, command: str, runs: int, tmp: Path) -> dict[str, Any]:
    db = tmp / f"{tree.label}-{random.randrange(10**9)}.db"
    # The duet's own cost is what this measures: --method duet, so --method auto's pilot (a choice, not
    # orchestration) does not enter it; trees from before auto existed ran the duet by default anyway.
    method = ["--method", "duet"] if tree.has_auto else []
    self_cpu = db.with_suffix(".cpu")
    wall, tree_cpu, t0 = timed(tree.argv_self_cpu(self_cpu, "compare", command, command, "--runs", str(runs),
                                                  "--no-progress", "--db", str(db), *method), env=tree.env, cwd=tmp)
    user, system = (float(x) for x in self_cpu.read_text().split())
    self_cpu.unlink()
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT pair, side, warmup, start_ns, end_ns, wall_s, cpu_s, user_s, sys_s "
                            "FROM invocations").fetchall()
    db.unlink()
    pairs: dict[int, list[tuple[Any, ...]]] = {}
    for row in rows:
        pairs.setdefault(row[0], []).append(row)
    ordered = [pairs[k] for k in sorted(pairs)]
    gaps = [(min(r[3] for r in nxt) - max(r[4] for r in cur)) / 1e6 for cur, nxt in zip(ordered, ordered[1:], strict=False)]
    # Steady state: from the first release to the last end, without the one-time pause after the first
    # pair (the store is opened there): what N more pairs cost, start-up and report left out.
    measuring = (max(r[4] for r in rows) - min(r[3] for r in rows)) / 1e9 - (gaps[0] / 1e3 if gaps else 0.0)
    commands_cpu = sum(r[6] for r in rows)
    spin = sum(max(0.0, r[7] + r[8] - r[6]) for r in rows)
    own = tree_cpu - commands_cpu - spin
    return {
        "wall_s": wall, "tree_cpu_s": tree_cpu, "commands_cpu_s": commands_cpu, "barrier_spin_cpu_s": spin,
        "own_cpu_s": own, "own_cpu_share": own / commands_cpu if commands_cpu > 0 else None,
        "orchestrator_cpu_s": user + system, "orchestrator_user_s": user, "orchestrator_sys_s": system,
        "first_invocation_ms": (min(r[3] for r in rows) - t0) / 1e6,
        "gap_median_ms": statistics.median(gaps) if gaps else None,
        "gap_mean_ms": statistics.fmean(gaps[1:]) if len(gaps) > 1 else None,
        "first_gap_ms": gaps[0] if gaps else None,
        "pairs": len(ordered), "measuring_s": measuring, "fixed_s": wall - measuring, "load": load(),
    }


def run_default(tree: Tree, command: str, tmp: Path, seed: int,
                extra: tuple[str, ...] = ()) -> dict[str, Any]:
    """`duet compare CMD CMD` with every default (the pilot, the adaptive stop): where its wall time goes.
    Its run count is the stop rule's, so it is compared with nothing but itself: the share of the wall
    time that no pair spans. (`extra`: more options, such as a fixed --min-runs/--max-runs, for comparing
    two builds at the same count.)"""
    db = tmp / f"{tree.label}-default-{random.randrange(10**9)}.db"
    wall, _, t0 = timed(tree.argv("compare", command, command, "--no-progress", "--db", str(db), "--seed", str(seed),
                                  *extra), env=tree.env, cwd=tmp)
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT pair, start_ns, end_ns, warmup FROM invocations").fetchall()
        stop = conn.execute("SELECT method, status FROM comparisons").fetchone()
    db.unlink()
    spans: dict[int, list[int]] = {}
    for pair, start, end, _ in rows:
        span = spans.setdefault(pair, [start, end])
        span[0], span[1] = min(span[0], start), max(span[1], end)
    ordered = [spans[k] for k in sorted(spans)]
    in_pairs = sum(end - start for start, end in ordered) / 1e9
    gaps = [(nxt[0] - cur[1]) / 1e6 for cur, nxt in zip(ordered, ordered[1:], strict=False)]
    between = sum(gaps[1:]) / 1e3  # the first gap (after the warm-up: the store, the imports) is start-up
    return {
        "wall_s": wall, "pairs": len(ordered), "measured_pairs": len({p for p, _, _, w in rows if not w}),
        "in_pairs_s": in_pairs, "between_pairs_s": between, "fixed_s": wall - in_pairs - between,
        "not_in_pairs_share": (wall - in_pairs) / wall,
        "gap_median_ms": statistics.median(gaps[1:]) if len(gaps) > 1 else None,
        "gap_mean_ms": statistics.fmean(gaps[1:]) if len(gaps) > 1 else None,
        "first_invocation_ms": (min(r[1] for r in rows) - t0) / 1e6, "method": stop[0], "status": stop[1],
        "load": load(),
    }


def run_hyperfine(command: str, runs: int, tmp: Path) -> dict[str, Any]:
    export = tmp / "hf.json"
    wall, tree_cpu, _ = timed(["hyperfine", "-N", "--runs", str(runs), "--export-json", str(export),
                               command, command])
    results = json.loads(export.read_text())["results"]
    commands_cpu = sum((r["user"] + r["system"]) * len(r["times"]) for r in results)
    return {"wall_s": wall, "tree_cpu_s": tree_cpu, "commands_cpu_s": commands_cpu,
            "own_cpu_s": tree_cpu - commands_cpu, "load": load()}


CAMPAIGN = """campaign: overhead
methods: {{sequential: {runs}, duet: {runs}}}
parser: {{name: regex, pattern: '^iteration \\d+: (?P<value>[0-9.]+) s$', unit: s}}
benchmarks:
  one-ms:
    A: {command_yaml}
"""


def campaign_cost(tree: Tree, command: str, runs: int, tmp: Path, profile: bool) -> dict[str, Any]:
    """`duet run` of a campaign whose side prints one iteration and exits: the per-run cost beyond it."""
    directory = tmp / f"campaign-{tree.label}-{random.randrange(10**9)}"
    directory.mkdir()
    (directory / "c.yml").write_text(CAMPAIGN.format(runs=runs, command_yaml=json.dumps(command)))
    dry, _, _ = timed(tree.argv("run", "c.yml", "--dry-run", "--no-progress", "--db", "d.db"), env=tree.env,
                      cwd=directory)
    wall, tree_cpu, _ = timed(tree.argv("run", "c.yml", "--no-progress", "--db", "r.db", "--seed", "1"),
                              env=tree.env, cwd=directory)
    with sqlite3.connect(directory / "r.db") as conn:
        total_runs = conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    out: dict[str, Any] = {"wall_s": wall, "dry_run_s": dry, "runs": total_runs,
                           "per_run_ms": (wall - dry) / total_runs * 1e3, "load": load()}
    if profile:
        out["profile"] = _campaign_profile(tree, directory)
    shutil.rmtree(directory, ignore_errors=True)
    return out


def _campaign_profile(tree: Tree, directory: Path) -> dict[str, float]:
    """One more `duet run`, in a child under cProfile: seconds in launching and waiting (the commands
    included), parsing, storing, and everything else of the run loop."""
    prof = directory / "p.out"
    subprocess.run([sys.executable, "-m", "cProfile", "-o", str(prof), "-m", "duetbench", "run", "c.yml",
                    "--no-progress", "--db", "p.db", "--seed", "2"], env=tree.env, cwd=directory, check=True,
                   stdout=subprocess.DEVNULL)
    stats = pstats.Stats(str(prof)).stats  # type: ignore[attr-defined]

    def cumulative(file_end: str, function: str) -> float:
        return sum(v[3] for (f, _, name), v in stats.items() if f.endswith(file_end) and name == function)

    loop = cumulative("usecases/campaign.py", "execute_plan")
    parts = {
        "launch_and_wait_s": cumulative("campaign_run.py", "execute_run"),
        "parse_s": cumulative("usecases/campaign.py", "to_record"),
        "store_s": cumulative("store/campaigns.py", "add_run"),
        "stop_rules_s": cumulative("usecases/campaign.py", "_stop_reason"),
    }
    parts["other_in_loop_s"] = max(0.0, loop - sum(parts.values()))
    parts["run_loop_s"] = loop
    parts["whole_process_s"] = cumulative("usecases/campaign.py", "run_campaign")
    return parts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--src", action="append", default=[], metavar="LABEL=DIR",
                    help="a source tree to measure (default: this checkout, as 'current'); repeatable")
    ap.add_argument("--quick", action="store_true", help="one repeat, fewer runs: a smoke test of the bench")
    ap.add_argument("--out", type=Path, default=RESULTS / "overhead")
    ap.add_argument("--lock-wait", type=float, default=120.0, metavar="SECONDS",
                    help="wait this long for another measurement to finish before measuring beside it")
    args = ap.parse_args()
    LOCK_WAIT["seconds"] = args.lock_wait
    if shutil.which("hyperfine") is None:
        raise SystemExit("bench/overhead needs hyperfine (apt-get install hyperfine)")
    if len(os.sched_getaffinity(0)) < 2:
        raise SystemExit("bench/overhead needs two CPUs (a duet runs A and B side by side)")
    specs = args.src or [f"current={ROOT}"]
    repeats = 1 if args.quick else args.repeats
    cases = [(n, ms, max(10, runs // 10) if args.quick else runs) for n, ms, runs in CASES]
    random.seed(17)
    with tempfile.TemporaryDirectory(prefix="duetbench-overhead-") as tmp_name:
        tmp = Path(tmp_name)
        trees = [Tree(label, Path(path).resolve(), tmp / "native") for label, _, path in
                 (s.partition("=") for s in specs)]
        # One set of commands for every tree, so that they measure the same work.
        commands = {name: workload_command(trees[0].native, ms) for name, ms, _ in cases}
        raw: dict[str, Any] = {"started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                               "load_at_start": list(os.getloadavg()), "cpus": os.cpu_count(),
                               "trees": {t.label: str(t.src) for t in trees}, "commands": commands,
                               "runs": {name: runs for name, _, runs in cases}, "repeats": repeats,
                               "measurements": []}
        for rep in range(repeats):
            # Every order is shuffled per repeat: a fixed one (the campaign's was, until 2026-11-27) lets a
            # drift of the host within a repeat count against the same tree every time.
            for tree in random.sample(trees, len(trees)):
                for what in ("--version", "--help"):
                    wall, _, _ = timed(tree.argv(what), env=tree.env, cwd=tmp)
                    raw["measurements"].append({"rep": rep, "tree": tree.label, "case": what, "tool": "duet",
                                                "wall_s": wall, "load": load()})
            for _ in range(3):
                m = floor_cost(tmp)
                m.update(rep=rep, tree=None, tool="python", case="floor")
                raw["measurements"].append(m)
            for name, _, runs in cases:
                order: list[Any] = [*trees, "hyperfine"]
                random.shuffle(order)
                for tool in order:
                    with machine(f"{name} x {runs}"):
                        if tool == "hyperfine":
                            m = run_hyperfine(commands[name], runs, tmp)
                            m.update(tree=None, tool="hyperfine")
                        else:
                            m = run_duet(tool, commands[name], runs, tmp)
                            m.update(tree=tool.label, tool="duet")
                    m.update(rep=rep, case=name, runs=runs)
                    raw["measurements"].append(m)
                    print(f"rep {rep} {name:>6} {m['tool']:9} {m.get('tree') or '':8} wall {m['wall_s']:.3f} s "
                          f"load {m['load']}", file=sys.stderr)
            longer = next(runs for name, _, runs in cases if name == LONGER_CASE) * LONGER_FACTOR
            for tree in random.sample(trees, len(trees)):
                with machine(f"{LONGER_CASE} x {longer}"):
                    m = run_duet(tree, commands[LONGER_CASE], longer, tmp)
                m.update(rep=rep, tree=tree.label, tool="duet", case="longer", runs=longer)
                raw["measurements"].append(m)
            for tree in random.sample(trees, len(trees)):
                with machine("default compare"):
                    m = run_default(tree, commands[DEFAULT_CASE], tmp, seed=1000 + rep)
                m.update(rep=rep, tree=tree.label, tool="duet default", case="default")
                raw["measurements"].append(m)
                print(f"rep {rep} default {tree.label:8} wall {m['wall_s']:.3f} s pairs {m['pairs']} "
                      f"load {m['load']}", file=sys.stderr)
            for tree in random.sample(trees, len(trees)):
                with machine("campaign"):
                    m = campaign_cost(tree, _campaign_command(), 5 if args.quick else 20, tmp, profile=rep == 0)
                m.update(rep=rep, tree=tree.label, tool="duet run", case="campaign")
                raw["measurements"].append(m)
        raw["load_at_end"] = list(os.getloadavg())
        raw["measured_beside"] = sorted(set(UNLOCKED))
    summary = summarize(raw, [t.label for t in trees])
    raw["summary"] = summary
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(json.dumps(raw, indent=1) + "\n")
    args.out.with_suffix(".md").write_text(markdown(raw, summary))
    print(args.out.with_suffix(".md").read_text())


def _campaign_command() -> str:
    # printf is a separate program (coreutils): one line, the regex parser's iteration, ~1 ms.
    return "printf 'iteration 1: 0.001 s\\n'"


def _median(values: list[float]) -> float | None:
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def summarize(raw: dict[str, Any], labels: list[str]) -> dict[str, Any]:
    ms = raw["measurements"]
    out: dict[str, Any] = {}
    for label in labels:
        mine = [m for m in ms if m["tree"] == label]
        per_case: dict[str, Any] = {}
        for name in raw["commands"]:
            duet = [m for m in mine if m["case"] == name and m["tool"] == "duet"]
            hf = [m for m in ms if m["case"] == name and m["tool"] == "hyperfine"]
            d_wall, h_wall = _median([m["wall_s"] for m in duet]), _median([m["wall_s"] for m in hf])
            per_case[name] = {
                "runs": raw["runs"][name],
                "duet_wall_s": d_wall, "hyperfine_wall_s": h_wall,
                "ratio": d_wall / h_wall if d_wall and h_wall else None,
                "measuring_s": _median([m["measuring_s"] for m in duet]),
                "fixed_s": _median([m["fixed_s"] for m in duet]),
                "steady_ratio": (_median([m["measuring_s"] for m in duet]) or 0) / h_wall if h_wall else None,
                "gap_median_ms": _median([m["gap_median_ms"] for m in duet]),
                "gap_mean_ms": _median([m["gap_mean_ms"] for m in duet]),
                "first_gap_ms": _median([m["first_gap_ms"] for m in duet]),
                "own_cpu_s": _median([m["own_cpu_s"] for m in duet]),
                "own_cpu_share": _median([m["own_cpu_share"] for m in duet]),
                "orchestrator_cpu_s": _median([m.get("orchestrator_cpu_s") for m in duet]),
                "barrier_spin_cpu_s": _median([m["barrier_spin_cpu_s"] for m in duet]),
                "hyperfine_own_cpu_s": _median([m["own_cpu_s"] for m in hf]),
                "commands_cpu_s": _median([m["commands_cpu_s"] for m in duet]),
                "first_invocation_ms": _median([m["first_invocation_ms"] for m in duet]),
                "load": [m["load"] for m in duet],
            }
        per_case[LONGER_CASE]["per_pair"] = _per_pair(
            [m for m in mine if m["case"] == LONGER_CASE and m["tool"] == "duet"],
            [m for m in mine if m["case"] == "longer"])
        dflt = [m for m in mine if m["case"] == "default"]
        default: dict[str, Any] = {key: _median([m[key] for m in dflt]) for key in
                                   ("wall_s", "pairs", "measured_pairs", "in_pairs_s", "between_pairs_s", "fixed_s",
                                    "not_in_pairs_share", "gap_median_ms", "gap_mean_ms")}
        default["methods"] = sorted({m["method"] for m in dflt})
        camp = [m for m in mine if m["case"] == "campaign"]
        startup = {
            "version_ms": 1e3 * (_median([m["wall_s"] for m in mine if m["case"] == "--version"]) or 0),
            "help_ms": 1e3 * (_median([m["wall_s"] for m in mine if m["case"] == "--help"]) or 0),
            "first_invocation_ms": _median([m["first_invocation_ms"] for m in mine if m["tool"] == "duet"
                                            and "first_invocation_ms" in m]),
        }
        campaign = {"per_run_ms": _median([m["per_run_ms"] for m in camp]),
                    "dry_run_s": _median([m["dry_run_s"] for m in camp]),
                    "runs": camp[0]["runs"] if camp else None,
                    "profile": next((m["profile"] for m in camp if "profile" in m), None)}
        c20, ctrue = per_case.get("20 ms", {}), per_case.get("true", {})
        worst_gap = max((c["gap_mean_ms"] or 0) for c in per_case.values())
        goals = {
            "gap_ms": (worst_gap, worst_gap <= GOALS["gap_ms"]),
            "ratio_20ms": (c20.get("ratio"), (c20.get("ratio") or 9) <= GOALS["ratio_20ms"]),
            "ratio_true": (ctrue.get("ratio"), (ctrue.get("ratio") or 9) <= GOALS["ratio_true"]),
            "own_cpu_share_20ms": (c20.get("own_cpu_share"), (c20.get("own_cpu_share") or 9) <= GOALS["own_cpu_share_20ms"]),
            "first_invocation_ms": (startup["first_invocation_ms"],
                                    (startup["first_invocation_ms"] or 1e9) <= GOALS["first_invocation_ms"]),
            "version_ms": (startup["version_ms"], startup["version_ms"] <= GOALS["version_ms"]),
            "help_ms": (startup["help_ms"], startup["help_ms"] <= GOALS["help_ms"]),
        }
        out[label] = {"cases": per_case, "startup": startup, "campaign": campaign, "default": default,
                      "goals": goals, "floor": _floor([m for m in ms if m["case"] == "floor"], c20)}
    return out


def _per_pair(short: list[dict[str, Any]], long: list[dict[str, Any]]) -> dict[str, Any] | None:
    """What one more pair costs, from the medians at two run counts: duet's own CPU and its orchestrator
    process's, per pair and as a share of the commands' CPU. (The start-up and the report cost the same at
    both counts, so the slope leaves them out: this is what the orchestration takes from the machine
    while it measures.)"""
    if not short or not long:
        return None

    def grows(key: str) -> float:
        return (_median([m[key] for m in long]) or 0.0) - (_median([m[key] for m in short]) or 0.0)

    pairs, commands = grows("pairs"), grows("commands_cpu_s")
    if pairs <= 0 or commands <= 0:
        return None
    return {"pairs": pairs, "own_cpu_ms": 1e3 * grows("own_cpu_s") / pairs,
            "orchestrator_cpu_ms": 1e3 * grows("orchestrator_cpu_s") / pairs,
            "own_cpu_share": grows("own_cpu_s") / commands}


def _floor(floor: list[dict[str, Any]], c20: dict[str, Any]) -> dict[str, Any] | None:
    """The libraries' import CPU beside the 20 ms case: its share of that case's commands' CPU, and with it
    what the measured pairs cost on top (the per-pair slope times the case's pairs): the share no build on
    these libraries can go below."""
    commands = c20.get("commands_cpu_s")
    libraries = _median([m["libraries_cpu_s"] for m in floor])
    if not floor or not commands or libraries is None:
        return None
    pp = c20.get("per_pair") or {}
    pairs_cpu = (pp.get("own_cpu_ms") or 0.0) / 1e3 * c20["runs"]
    orchestrator = _median([m["orchestrator_libraries_cpu_s"] for m in floor]) or 0.0
    return {"interpreter_cpu_s": _median([m["interpreter_cpu_s"] for m in floor]), "libraries_cpu_s": libraries,
            "libraries_share": libraries / commands, "pairs_cpu_s": pairs_cpu,
            "floor_share": (libraries + pairs_cpu) / commands, "budget_s": GOALS["own_cpu_share_20ms"] * commands,
            "orchestrator_libraries_cpu_s": orchestrator,
            # duet's own fixed work beyond its libraries: its modules, start-up, launchers' start, analysis, report
            "own_fixed_s": (c20.get("own_cpu_s") or 0.0) - pairs_cpu - libraries}


def _f(value: float | None, fmt: str) -> str:
    return "–" if value is None else format(value, fmt)


def markdown(raw: dict[str, Any], summary: dict[str, Any]) -> str:
    loads = [m["load"] for m in raw["measurements"]]
    lines = ["# Overhead of `duet compare` against hyperfine (bench/overhead.py)", "",
             f"Started {raw['started']} on {raw['cpus']} CPUs; median of {raw['repeats']} repeats per cell; "
             f"1-minute load average during the session {min(loads):.2f}–{max(loads):.2f} "
             f"(at start {raw['load_at_start'][0]:.2f}, at end {raw['load_at_end'][0]:.2f}). "
             "A load near or above the CPU count means other work shared the machine: compare the ratios "
             "within this file, not the absolute times with another session.", ""]
    if raw.get("measured_beside"):
        lines += ["Some measurements ran while another measurement held the machine lock (after --lock-wait): "
                  + "; ".join(raw["measured_beside"]), ""]
    for label, s in summary.items():
        lines += [f"## {label} (`{raw['trees'][label]}`)", "",
                  "| command | runs | hyperfine | duet | duet/hyperfine | duet measuring (ratio) | duet fixed | "
                  "gap per pair, median / mean | duet own CPU (share of commands') | of which the orchestrator "
                  "process | barrier spin CPU | hyperfine own CPU | first invocation |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for name, c in s["cases"].items():
            share = f"{_f(c['own_cpu_s'], '.3f')} s ({_f(100 * c['own_cpu_share'] if c['own_cpu_share'] else None, '.1f')}%)"
            lines.append(f"| {name} | {c['runs']} | {_f(c['hyperfine_wall_s'], '.3f')} s | {_f(c['duet_wall_s'], '.3f')} s "
                         f"| {_f(c['ratio'], '.2f')}× | {_f(c['measuring_s'], '.3f')} s ({_f(c['steady_ratio'], '.2f')}×) "
                         f"| {_f(c['fixed_s'], '.3f')} s "
                         f"| {_f(c['gap_median_ms'], '.2f')} / {_f(c['gap_mean_ms'], '.2f')} ms "
                         f"| {share} | {_f(c['orchestrator_cpu_s'], '.3f')} s "
                         f"| {_f(c['barrier_spin_cpu_s'], '.3f')} s | {_f(c['hyperfine_own_cpu_s'], '.3f')} s "
                         f"| {_f(c['first_invocation_ms'], '.0f')} ms |")
        pp = s["cases"].get(LONGER_CASE, {}).get("per_pair")
        if pp:
            runs = s["cases"][LONGER_CASE]["runs"]
            lines += ["", f"One more pair of the {LONGER_CASE} command (the slope from {runs} to {LONGER_FACTOR}× as "
                          f"many, medians): duet's own CPU {pp['own_cpu_ms']:.2f} ms per pair, "
                          f"{100 * pp['own_cpu_share']:.1f}% of the commands' (of which the orchestrator process "
                          f"{pp['orchestrator_cpu_ms']:.2f} ms): what the orchestration takes from the machine "
                          "while it measures. The goal's share above also holds the fixed start-up and report, "
                          "paid once."]
        st, camp = s["startup"], s["campaign"]
        lines += ["", "*duet measuring*: from the first release to the last end, without the one-time pause after "
                      "the first pair where the store is opened; its ratio to hyperfine's whole run is what more "
                      "pairs cost. *duet fixed*: the rest (start-up, opening the store, the final analysis and "
                      "report). *Of which the orchestrator process*: `duet`'s own user+system CPU "
                      "(getrusage(RUSAGE_SELF) as it exits, plus the reporter process it may fork), without the "
                      "launchers' (the rest of *duet own CPU*).", "", f"Start-up: `duet --version` {st['version_ms']:.0f} ms, `duet --help` {st['help_ms']:.0f} ms, "
                      f"first invocation of `duet compare` {_f(st['first_invocation_ms'], '.0f')} ms after it was started "
                      "(median over every compare above).", ""]
        if camp["per_run_ms"] is not None:
            lines += [f"Campaign (`duet run`, {camp['runs']} runs of a ~1 ms command printing one iteration, "
                      f"sequential and duet): {camp['per_run_ms']:.1f} ms per run beyond start-up "
                      f"(`--dry-run` {camp['dry_run_s']:.2f} s)."]
            p = camp["profile"]
            if p:
                lines += [f"Where the run loop's time goes (one campaign under cProfile, which inflates Python-heavy "
                          f"parts): launch and wait, commands included, {p['launch_and_wait_s']:.3f} s; parsing "
                          f"{p['parse_s']:.3f} s; storing {p['store_s']:.3f} s; stop rules {p['stop_rules_s']:.3f} s; "
                          f"other {p['other_in_loop_s']:.3f} s (run loop {p['run_loop_s']:.3f} s, whole "
                          f"{p['whole_process_s']:.3f} s)."]
            lines.append("")
        d = s.get("default", {})
        if d.get("wall_s") is not None:
            lines += [f"Default `duet compare` (--method auto, adaptive stop) of the {DEFAULT_CASE} command, "
                      f"median of the repeats: wall {d['wall_s']:.3f} s for {d['pairs']:.0f} pairs "
                      f"({d['measured_pairs']:.0f} measured, the rest the warm-up and the pilot; chose "
                      f"{', '.join(d['methods'])}); in pairs {d['in_pairs_s']:.3f} s, between pairs "
                      f"{d['between_pairs_s']:.3f} s (gap median {_f(d['gap_median_ms'], '.2f')} / mean "
                      f"{_f(d['gap_mean_ms'], '.2f')} ms), the rest {d['fixed_s']:.3f} s (start-up, report); "
                      f"not in a pair: {100 * d['not_in_pairs_share']:.1f}% of the wall time.", ""]
        fl = s.get("floor")
        if fl:
            lines += [f"Floor: a bare interpreter takes {1e3 * fl['interpreter_cpu_s']:.0f} ms of CPU; one that only "
                      f"imports what a compare stands on (`python -c \"{LIBRARIES}\"`, one BLAS thread) "
                      f"{1e3 * fl['libraries_cpu_s']:.0f} ms: {100 * fl['libraries_share']:.1f}% of the 20 ms "
                      f"case's commands' CPU, whose 5% is {1e3 * fl['budget_s']:.0f} ms. With its pairs' own cost "
                      f"({1e3 * fl['pairs_cpu_s']:.0f} ms, the slope above) {100 * fl['floor_share']:.1f}%: the least "
                      "any build of duet on these libraries can take at this run count, start-up and report "
                      f"included. Beyond them duet's own fixed work (its modules, the launchers' start, the analysis "
                      f"and the report) takes {1e3 * fl['own_fixed_s']:.0f} ms. A report without numpy and rich would "
                      f"leave the orchestrator's libraries (`{ORCHESTRATOR_LIBRARIES}`) "
                      f"{1e3 * fl['orchestrator_libraries_cpu_s']:.0f} ms, and "
                      f"{1e3 * (fl['budget_s'] - fl['orchestrator_libraries_cpu_s'] - fl['pairs_cpu_s']):.0f} ms "
                      "for all of duet's own fixed work.", ""]
        lines += ["| goal | value | met |", "|---|---:|---|"]
        names = {"gap_ms": "orchestration per pair beyond the slower side (worst case's mean) ≤ 1 ms",
                 "ratio_20ms": "duet/hyperfine wall, 20 ms command ≤ 0.6×",
                 "ratio_true": "duet/hyperfine wall, `true` ≤ 1.5×",
                 "own_cpu_share_20ms": "orchestrator CPU ≤ 5% of the commands', 20 ms command",
                 "first_invocation_ms": "first invocation ≤ 150 ms after start",
                 "version_ms": "`duet --version` ≤ 100 ms", "help_ms": "`duet --help` ≤ 100 ms"}
        for key, (value, met) in s["goals"].items():
            shown = "–" if value is None else (f"{100 * value:.1f}%" if key == "own_cpu_share_20ms"
                                               else f"{value:.2f}×" if key.startswith("ratio") else f"{value:.2f} ms")
            lines.append(f"| {names[key]} | {shown} | {'yes' if met else '**no**'} |")
        lines.append("")
    lines += ["Commands: " + "; ".join(f"{k}: `{v}`" for k, v in raw["commands"].items()) + ".", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
