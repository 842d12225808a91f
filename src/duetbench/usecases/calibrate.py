"""``duet calibrate``: this machine's noise floor in a few minutes, and which method resolves 1 %.

Measures, with the compare machinery (every stage is an A/A ``duet compare`` run by
`usecases.compare.run_compare`: the native launcher, wait4 process time, pinning, barrier, the
machine lock, the stop rule with a time budget):
1. INC (EMP's nested increment loop, Suh et al. (EMP) §4) at several task lengths, run back to back on one CPU:
   relative std of process time (PT, user+sys from wait4) and elapsed time (ET);
2. A/A comparisons of the four artificial workloads (integer, float, cache, memory; Bulej et al. 2020 §4.4),
   sequential (RMIT) and duet: the CI half-width of B/A at the chosen confidence, and the duet's
   pair-ratio CV. Since A and B are the same command, the half-width is the smallest difference the
   method can tell from noise with the time spent; scaled by 1/sqrt(n) it says how long 1 % takes.
"""
from __future__ import annotations

import io
import math
import random
import shlex
import statistics
import subprocess
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape

from duetbench.errors import DuetError
from duetbench.execute.scratch import scratch_directory
from duetbench.model.invocation import Invocation

if TYPE_CHECKING:  # imported with the comparison it reports
    from duetbench.report.model import ComparisonReport

WORKLOADS = ("integer", "float", "cache", "memory")
METHODS = ("sequential", "duet")


@dataclass(frozen=True)
class Plan:
    inc_ms: tuple[float, ...]
    workload_ms: float
    inc_stage_s: float
    workload_stage_s: float
    min_runs: int
    max_runs: int


def plan_for(budget_s: float, quick: bool) -> Plan:
    """Split the budget: 40 % for INC (equally per task length), 60 % for the 4 workloads × 2 methods.
    Stages stop on time after ``min_runs``, so short tasks get many runs and long ones few."""
    inc_ms = (10.0, 50.0) if quick else (10.0, 100.0, 1000.0)
    workload_ms = 20.0 if quick else 100.0
    return Plan(inc_ms=inc_ms, workload_ms=workload_ms, inc_stage_s=0.4 * budget_s / len(inc_ms),
                workload_stage_s=0.6 * budget_s / (len(WORKLOADS) * len(METHODS)), min_runs=5 if quick else 10,
                max_runs=200)


@dataclass
class IncRow:
    task_ms: float
    ops: int
    invocations: int
    mean_et_ms: float
    pt_rel_std: float
    et_rel_std: float


@dataclass
class WorkloadRow:
    kind: str
    method: str
    metric: str
    runs: int
    machine_s: float
    ratio: float
    ci_low: float
    ci_high: float
    half_width: float
    ratio_cv: float | None
    aa_ok: bool  # the A/A CI contains 1, as it should
    time_to_1pct_s: float
    runs_to_1pct: int | None  # None: the interval was unbounded


def _ops_for(kind: str, ms: float) -> int:
    from duetbench.execute.native import native_binary

    path = str(native_binary("duet-workload"))
    done = subprocess.run([path, kind, "--calibrate", repr(ms)], check=False, capture_output=True, text=True,
                          timeout=120)
    try:
        return int(done.stdout.strip())
    except ValueError:
        raise DuetError(f"duet-workload {kind} --calibrate {ms:g} failed: {done.stderr.strip()[-200:]}",
                        hint="check the native programs: duet workload --which") from None


#: The stages measure for their time budget: a target this narrow is never the reason they stop.
_NEVER_PRECISE = 1e-12


def _measure(method: str, argv: list[str], seed: int, plan: Plan, stage_s: float, db: Path, *,
             confidence: float) -> tuple[list[Invocation], float]:
    """An A/A comparison of ``argv`` by ``method`` through `run_compare` (stored in `db`), ended by its
    time budget after ``plan.min_runs`` runs (at most ``plan.max_runs``). Returns the measured
    invocations and the seconds the stage took, warmup included."""
    from duetbench.config.compare import validated
    from duetbench.report.exporters import Exports
    from duetbench.usecases.compare import run_compare

    command = shlex.join(argv)
    opts = validated(command_a=command, command_b=command, method=method, warmup=1, min_runs=plan.min_runs,
                     max_runs=plan.max_runs, time_budget=stage_s, target_rciw=_NEVER_PRECISE, stop_on_evidence=False,
                     seed=seed, confidence=confidence)
    reports: list[ComparisonReport] = []
    code = run_compare(opts, db_path=db, exports=Exports(), console=Console(file=io.StringIO(), emoji=False),
                       show_progress=False, on_report=reports.append)
    if code == 130:
        raise Interrupted("calibration interrupted", hint="run duet calibrate again (--quick takes 30 s)",
                          exit_code=130)
    invocations = reports[0].invocations
    if not invocations:
        raise DuetError(f"calibration run {command} ({method}) measured nothing", hint="run it by hand to see why",
                        exit_code=1)
    seconds = (max(i.end_ns for i in invocations) - min(i.start_ns for i in invocations)) / 1e9
    return [i for i in invocations if not i.warmup], seconds


class Interrupted(DuetError):
    """Ctrl-C (or SIGTERM) during a stage: the stages that finished are still summarized and shown."""


def choose_seed(seed: int | None) -> int:
    return seed if seed is not None else random.SystemRandom().randrange(2**31)


def run_calibration(plan: Plan, *, seed: int, confidence: float, progress: Console | None = None) -> dict[str, object]:
    """Every stage of the calibration (INC, then the workloads by each method), judged and summarized."""
    from duetbench.execute.native import native_binary
    from duetbench.host.host import host_facts, usable_cpus
    from duetbench.plan.schedule import choose_cpus

    methods = METHODS if choose_cpus(usable_cpus()) is not None else ("sequential",)
    workload = str(native_binary("duet-workload"))
    started = time.monotonic()

    def say(text: str) -> None:
        if progress is not None:
            progress.print(f"[dim]{escape(text)}[/dim]")

    inc_rows: list[IncRow] = []
    rows: list[WorkloadRow] = []
    interrupted = False
    # The stages' comparisons are the means, not the result: kept only while calibrating.
    with scratch_directory("calibrate") as scratch:
        try:
            _stages(plan, methods, workload, seed, Path(scratch) / "calibrate.db", confidence, say, inc_rows, rows)
        except (Interrupted, KeyboardInterrupt):  # in a stage, or between two (finding a workload's N)
            interrupted = True  # what the finished stages measured is answered from, not thrown away
    return summarize(plan, inc_rows, rows, confidence=confidence, seed=seed, host=host_facts(),
                     elapsed_s=time.monotonic() - started, interrupted=interrupted)


def _stages(plan: Plan, methods: tuple[str, ...], workload: str, seed: int, db: Path, confidence: float,
            say: Callable[[str], None], inc_rows: list[IncRow], rows: list[WorkloadRow]) -> None:
    """Measure every stage, appending each one's row(s) as it finishes."""
    from duetbench.analyze.invocations import evaluate, usable
    from duetbench.host.doctor.noise_floor import (
        ci_half_width,
        relative_std,
        runs_to_resolve,
        time_to_resolve,
    )

    for ms in plan.inc_ms:
        ops = _ops_for("inc", ms)
        say(f"INC {ms:g} ms ({ops} ops): sequential, {_duration(plan.inc_stage_s)}")
        measured, _ = _measure("sequential", [workload, "inc", "--ops", str(ops)], seed, plan, plan.inc_stage_s,
                               db, confidence=confidence)
        good = usable(measured)
        inc_rows.append(IncRow(ms, ops, len(good), 1000 * statistics.fmean(i.wall_s for i in good),
                               relative_std([i.cpu_s for i in good]), relative_std([i.wall_s for i in good])))
    for kind in WORKLOADS:
        ops = _ops_for(kind, plan.workload_ms)
        for method in methods:
            say(f"{kind} {plan.workload_ms:g} ms: A/A {method}, {_duration(plan.workload_stage_s)}")
            measured, machine_s = _measure(method, [workload, kind, "--ops", str(ops)], seed, plan,
                                           plan.workload_stage_s, db, confidence=confidence)
            for metric in ("wall", "cpu"):
                r = evaluate(method, measured, metric, confidence_level=confidence, n_resamples=5000, seed=seed,
                             u_test=False)
                half = ci_half_width(r.ratio.low, r.ratio.high, r.ratio.estimate)
                rows.append(WorkloadRow(kind, method, metric, r.runs, machine_s, r.ratio.estimate, r.ratio.low,
                                        r.ratio.high, half, r.ratio_cv, r.ratio.low <= 1.0 <= r.ratio.high,
                                        time_to_resolve(half, machine_s), runs_to_resolve(half, r.runs)))


def summarize(plan: Plan, inc_rows: list[IncRow], rows: list[WorkloadRow], *, confidence: float, seed: int,
              host: dict[str, object], elapsed_s: float, interrupted: bool = False) -> dict[str, object]:
    from duetbench.host.doctor.noise_floor import best_method

    summary: dict[str, dict[str, object]] = {}
    for metric in ("wall", "cpu"):
        per: dict[str, object] = {}
        times: dict[str, float] = {}
        for method in {r.method for r in rows}:
            mine = [r for r in rows if r.metric == metric and r.method == method]
            # A median of "already" (0 s) and minutes says nothing about either; the answer is for the
            # hardest workload, since a user's benchmark may be like any of them.
            worst = max(mine, key=lambda r: (r.time_to_1pct_s, r.half_width))
            times[method] = worst.time_to_1pct_s
            per[method] = {"median_half_width": statistics.median(r.half_width for r in mine),
                           "median_time_to_1pct_s": statistics.median(r.time_to_1pct_s for r in mine),
                           "median_runs_to_1pct": _median_runs([r.runs_to_1pct for r in mine]),
                           "worst_workload": worst.kind, "worst_half_width": worst.half_width,
                           "worst_time_to_1pct_s": worst.time_to_1pct_s, "worst_runs_to_1pct": worst.runs_to_1pct,
                           "aa_false_alarms": sum(1 for r in mine if not r.aa_ok), "workloads": len(mine)}
        per["best"] = best_method(times)
        summary[metric] = per
    duet_cv = {m: _median_or_none([r.ratio_cv for r in rows if r.method == "duet" and r.metric == m])
               for m in ("wall", "cpu")}
    return {"confidence": confidence, "seed": seed, "elapsed_s": round(elapsed_s, 1), "plan": asdict(plan),
            "machine": {k: host.get(k) for k in ("hostname", "kernel", "cpu_model", "cpu_count", "virtualized",
                                                  "clocksource", "cpu_governor")},
            "inc": [asdict(r) for r in inc_rows], "workloads": [_finite(asdict(r)) for r in rows],
            "pair_ratio_cv": duet_cv, "summary": _finite(summary), "interrupted": interrupted,
            "answer": answer(summary, confidence, interrupted=interrupted)}


def _median_runs(values: list[int | None]) -> int | None:
    """The median of the run counts that are known (an unbounded interval gives none)."""
    known = [v for v in values if v is not None]
    return int(statistics.median(known)) if known else None


def _median_or_none(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None and math.isfinite(v)]
    return statistics.median(present) if present else None


def _finite(d: dict) -> dict:
    """JSON has no infinity: a time that cannot be reached is null."""
    return {k: (_finite(v) if isinstance(v, dict) else (None if isinstance(v, float) and not math.isfinite(v) else v))
            for k, v in d.items()}


def _duration(seconds: float) -> str:
    if seconds < 9.95:  # a stage of --budget 5, or a time already nearly enough: "0 s" would say nothing
        return f"{seconds:.1f} s"
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def _pm(half_width: object) -> str:
    """A half-width as the answer says it; an unbounded interval (null in the summary) resolves nothing."""
    finite = isinstance(half_width, float) and math.isfinite(half_width)
    return f"±{half_width:.2%}" if finite else "nothing (unbounded)"


def answer(summary: dict[str, dict[str, object]], confidence: float, *, interrupted: bool = False) -> str:
    """The plain answer: smallest difference resolved per method, and which method to use for 1 %."""
    lines = ["Interrupted: this answers from the stages that finished only."] if interrupted else []
    for metric, label in (("wall", "elapsed time (wall)"), ("cpu", "process time (cpu)")):
        per = summary[metric]
        parts = []
        for method in ("duet", "sequential"):
            m = per.get(method)
            if not isinstance(m, dict):
                continue
            t = m["worst_time_to_1pct_s"]
            reach = ("already" if t == 0 else
                     f"~{_duration(t)} of measuring per benchmark "
                     f"({m['worst_runs_to_1pct']} runs, for {m['worst_workload']})"
                     if math.isfinite(t) else "not reachable")
            parts.append(f"{method} resolves {_pm(m['median_half_width'])} in the time spent (median; worst "
                         f"{_pm(m['worst_half_width'])}, {m['worst_workload']}), 1 % on every workload: {reach}")
        best = per.get("best")
        lines.append(f"{label}: " + ("; ".join(parts) or "no workload was measured")
                     + (f" → use {best}." if best else "."))
    alarms = sum(int(m["aa_false_alarms"]) for per in summary.values() for k, m in per.items()
                 if isinstance(m, dict))
    if alarms:
        lines.append(f"{alarms} A/A comparison(s) excluded 1 from the {confidence * 100:g}% CI: a method is biased "
                     "here or the noise is not stationary; re-run calibrate, and use duet doctor to find the cause.")
    return "\n".join(lines)


