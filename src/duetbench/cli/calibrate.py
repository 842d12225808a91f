"""``duet calibrate``: this machine's noise floor in a few minutes, and which method resolves 1 %.

Measures, with the compare machinery (``execute.runner.Runner``: the native launcher, wait4 process
time, pinning, barrier):
1. INC (EMP's nested increment loop, Suh et al. (EMP) §4) at several task lengths, run back to back on one CPU:
   relative std of process time (PT, user+sys from wait4) and elapsed time (ET);
2. A/A comparisons of the four artificial workloads (integer, float, cache, memory; Bulej et al. 2020 §4.4),
   sequential (RMIT) and duet: the CI half-width of B/A at the chosen confidence, and the duet's
   pair-ratio CV. Since A and B are the same command, the half-width is the smallest difference the
   method can tell from noise with the time spent; scaled by 1/sqrt(n) it says how long 1 % takes.
"""
from __future__ import annotations

import json
import math
import random
import statistics
import subprocess
import time
from dataclasses import asdict, dataclass

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from duetbench.errors import DuetError

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
    runs_to_1pct: int


def _ops_for(kind: str, ms: float) -> int:
    from duetbench.execute.native import native_binary

    path = str(native_binary("duet-workload"))
    done = subprocess.run([path, kind, "--calibrate", repr(ms)], check=False, capture_output=True, text=True, timeout=120)
    try:
        return int(done.stdout.strip())
    except ValueError:
        raise DuetError(f"duet-workload {kind} --calibrate {ms:g} failed: {done.stderr.strip()[-200:]}",
                        hint="check the native programs: duet workload --which") from None


def _measure(method: str, argv: list[str], cpus: tuple[int, int], seed: int, plan: Plan, stage_s: float
             ) -> tuple[list, float]:
    """An A/A run of ``argv`` by ``method`` through the compare runner, stopped on time after min_runs."""
    from duetbench.analyze.invocations import measured_runs
    from duetbench.execute.runner import Runner, RunSettings

    def should_continue(measured: list, elapsed: float) -> bool:
        n = measured_runs(method, measured)
        return n < plan.min_runs or (n < plan.max_runs and elapsed < stage_s)

    settings = RunSettings(method=method, argv={"A": argv, "B": argv}, cpus=cpus, seed=seed, warmup=1)
    outcome = Runner(settings, should_continue, lambda inv: None).run()
    if outcome.status != "complete":
        failure = outcome.failure
        detail = f"{failure.status} (exit {failure.exit_code}) {failure.stderr_tail.strip()[-200:]}" if failure else ""
        raise DuetError(f"calibration run {' '.join(argv)} ({method}) did not complete: {outcome.status} {detail}",
                        hint="run it by hand to see why", exit_code=1)
    return outcome.measured, outcome.elapsed_s


def run_calibration(plan: Plan, *, seed: int, confidence: float, progress: Console | None = None) -> dict[str, object]:
    from duetbench.analyze.invocations import evaluate, usable
    from duetbench.execute.lock import MeasurementLock
    from duetbench.execute.native import native_binary
    from duetbench.host.doctor.noise_floor import (
        ci_half_width,
        relative_std,
        runs_to_resolve,
        time_to_resolve,
    )
    from duetbench.host.host import host_facts, usable_cpus
    from duetbench.plan.schedule import choose_cpus

    cpus_available = usable_cpus()
    pair = choose_cpus(cpus_available)
    cpus = pair if pair is not None else (cpus_available[0], cpus_available[0])
    methods = METHODS if pair is not None else ("sequential",)
    workload = str(native_binary("duet-workload"))
    started = time.monotonic()

    def say(text: str) -> None:
        if progress is not None:
            progress.print(f"[dim]{escape(text)}[/dim]")

    lock = MeasurementLock("duet calibrate")
    lock.acquire()
    try:
        inc_rows: list[IncRow] = []
        for ms in plan.inc_ms:
            ops = _ops_for("inc", ms)
            say(f"INC {ms:g} ms ({ops} ops): sequential, {plan.inc_stage_s:.0f} s")
            measured, _ = _measure("sequential", [workload, "inc", "--ops", str(ops)], cpus, seed, plan,
                                   plan.inc_stage_s)
            good = usable(measured)
            inc_rows.append(IncRow(ms, ops, len(good), 1000 * statistics.fmean(i.wall_s for i in good),
                                   relative_std([i.cpu_s for i in good]), relative_std([i.wall_s for i in good])))
        rows: list[WorkloadRow] = []
        for kind in WORKLOADS:
            ops = _ops_for(kind, plan.workload_ms)
            for method in methods:
                say(f"{kind} {plan.workload_ms:g} ms: A/A {method}, {plan.workload_stage_s:.0f} s")
                measured, machine_s = _measure(method, [workload, kind, "--ops", str(ops)], cpus, seed, plan,
                                               plan.workload_stage_s)
                for metric in ("wall", "cpu"):
                    r = evaluate(method, measured, metric, confidence_level=confidence, n_resamples=5000, seed=seed,
                                 u_test=False)
                    half = ci_half_width(r.ratio.low, r.ratio.high, r.ratio.estimate)
                    rows.append(WorkloadRow(kind, method, metric, r.runs, machine_s, r.ratio.estimate, r.ratio.low,
                                            r.ratio.high, half, r.ratio_cv, r.ratio.low <= 1.0 <= r.ratio.high,
                                            time_to_resolve(half, machine_s), runs_to_resolve(half, r.runs)))
    finally:
        lock.release()
    return summarize(plan, inc_rows, rows, confidence=confidence, seed=seed, host=host_facts(),
                     elapsed_s=time.monotonic() - started)


def summarize(plan: Plan, inc_rows: list[IncRow], rows: list[WorkloadRow], *, confidence: float, seed: int,
              host: dict[str, object], elapsed_s: float) -> dict[str, object]:
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
                           "median_runs_to_1pct": int(statistics.median(r.runs_to_1pct for r in mine)),
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
            "pair_ratio_cv": duet_cv, "summary": _finite(summary),
            "answer": answer(summary, confidence)}


def _median_or_none(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None and math.isfinite(v)]
    return statistics.median(present) if present else None


def _finite(d: dict) -> dict:
    """JSON has no infinity: a time that cannot be reached is null."""
    return {k: (_finite(v) if isinstance(v, dict) else (None if isinstance(v, float) and not math.isfinite(v) else v))
            for k, v in d.items()}


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def answer(summary: dict[str, dict[str, object]], confidence: float) -> str:
    """The plain answer: smallest difference resolved per method, and which method to use for 1 %."""
    lines = []
    for metric, label in (("wall", "elapsed time (wall)"), ("cpu", "process time (cpu)")):
        per = summary[metric]
        parts = []
        for method in ("duet", "sequential"):
            m = per.get(method)
            if not isinstance(m, dict):
                continue
            t = m["worst_time_to_1pct_s"]
            reach = ("already" if t == 0 else
                     f"~{_duration(t)} of measuring per benchmark ({m['worst_runs_to_1pct']} runs, for {m['worst_workload']})"
                     if math.isfinite(t) else "not reachable")
            parts.append(f"{method} resolves ±{m['median_half_width']:.2%} in the time spent (median; worst "
                         f"±{m['worst_half_width']:.2%}, {m['worst_workload']}), 1 % on every workload: {reach}")
        best = per.get("best")
        lines.append(f"{label}: " + "; ".join(parts) + (f" → use {best}." if best else "."))
    alarms = sum(int(m["aa_false_alarms"]) for per in summary.values() for k, m in per.items()  # type: ignore[union-attr]
                 if isinstance(m, dict))
    if alarms:
        lines.append(f"{alarms} A/A comparison(s) excluded 1 from the {confidence:.0%} CI: a method is biased here "
                     "or the noise is not stationary; re-run calibrate, and use duet doctor to find the cause.")
    return "\n".join(lines)


@click.command()
@click.option("--budget", type=click.FloatRange(min=5, max=3600), metavar="SECONDS",
              help="Roughly how long to measure (default 180, or 30 with --quick).")
@click.option("--quick", is_flag=True, help="Shorter tasks (INC 10/50 ms, workloads 20 ms) and a 30 s budget.")
@click.option("--confidence", type=click.FloatRange(min=0.5, max=0.999), default=0.99, show_default=True,
              help="Confidence level of the CIs whose half-width is the resolution.")
@click.option("--seed", type=click.IntRange(0, 2**63 - 1), help="Seed of the schedule and the bootstrap (default: random, reported).")
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
def calibrate(budget: float | None, quick: bool, confidence: float, seed: int | None, as_json: bool) -> None:
    """This machine's noise floor: can it resolve a 1 % difference, and with which method?

    \b
    Runs the built-in workloads (duet workload) through the same launcher as duet compare:
      INC at several task lengths → relative std of process time (PT) and elapsed time (ET)
      A/A sequential and duet on integer, float, cache, memory → CI half-width, pair-ratio CV
    and answers with the smallest difference each method resolves, and the time 1 % would take.
    """
    plan = plan_for(budget if budget is not None else (30.0 if quick else 180.0), quick)
    seed = seed if seed is not None else random.SystemRandom().randrange(2**31)
    console = Console(highlight=False)
    result = run_calibration(plan, seed=seed, confidence=confidence,
                             progress=None if as_json else Console(stderr=True, highlight=False))
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    _render(console, result)


def _pct(v: object) -> str:
    return f"{v:.2%}" if isinstance(v, float) and math.isfinite(v) else "–"


def _render(console: Console, result: dict) -> None:
    inc = Table(title="INC: variation of process time (PT) and elapsed time (ET), sequential on one CPU")
    for col in ("task", "runs", "mean ET", "PT rel. std", "ET rel. std"):
        inc.add_column(col, justify="right")
    for r in result["inc"]:
        inc.add_row(f"{r['task_ms']:g} ms", str(r["invocations"]), f"{r['mean_et_ms']:.1f} ms", _pct(r["pt_rel_std"]),
                    _pct(r["et_rel_std"]))
    console.print(inc)
    conf = result["confidence"]
    wl = Table(title=f"A/A on the artificial workloads: {conf:.0%} CI half-width of B/A (= smallest difference resolved)")
    for col in ("workload", "method", "runs", "time", "wall ±", "cpu ±", "pair-ratio CV wall/cpu", "A/A ok"):
        wl.add_column(col, justify="right" if col not in ("workload", "method") else "left")
    rows = result["workloads"]
    for kind in WORKLOADS:
        for method in METHODS:
            pair = {r["metric"]: r for r in rows if r["kind"] == kind and r["method"] == method}
            if not pair:
                continue
            w, c = pair["wall"], pair["cpu"]
            cv = f"{_pct(w['ratio_cv'])} / {_pct(c['ratio_cv'])}" if method == "duet" else "–"
            ok = "yes" if w["aa_ok"] and c["aa_ok"] else "[red]no[/red]"
            wl.add_row(kind, method, str(w["runs"]), f"{w['machine_s']:.1f} s", _pct(w["half_width"]),
                       _pct(c["half_width"]), cv, ok)
    console.print(wl)
    console.print(f"[bold]Can this machine resolve a 1 % difference?[/bold]  (seed {result['seed']}, "
                  f"{result['elapsed_s']:.0f} s)")
    console.print(escape(result["answer"]))
