"""``duet calibrate``: parses the options and prints the results of `usecases.calibrate`."""
from __future__ import annotations

import json
import math
import sys

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from duetbench.cli.finite import FiniteFloatRange
from duetbench.config.compare import check_confidence
from duetbench.usecases.calibrate import METHODS, WORKLOADS, choose_seed, plan_for, run_calibration


@click.command()
@click.option("--budget", type=FiniteFloatRange(min=5, max=3600), metavar="SECONDS",
              help="Roughly how long to measure (default 180, or 30 with --quick).")
@click.option("--quick", is_flag=True, help="Shorter tasks (INC 10/50 ms, workloads 20 ms) and a 30 s budget.")
@click.option("--confidence", type=float, default=0.99, show_default=True,
              help="Confidence level of the CIs whose half-width is the resolution.")
@click.option("--seed", type=click.IntRange(0, 2**63 - 1),
              help="Seed of the schedule and the bootstrap (default: random, reported).")
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
def calibrate(budget: float | None, quick: bool, confidence: float, seed: int | None, as_json: bool) -> None:
    """This machine's noise floor: can it resolve a 1 % difference, and with which method?

    \b
    Runs the built-in workloads (duet workload) through the same launcher as duet compare:
      INC at several task lengths → relative std of process time (PT) and elapsed time (ET)
      A/A sequential and duet on integer, float, cache, memory → CI half-width, pair-ratio CV
    and answers with the smallest difference each method resolves, and the time 1 % would take.
    """
    check_confidence(confidence)
    plan = plan_for(budget if budget is not None else (30.0 if quick else 180.0), quick)
    seed = choose_seed(seed)
    console = Console(highlight=False, emoji=False)
    result = run_calibration(plan, seed=seed, confidence=confidence,
                             progress=None if as_json else Console(stderr=True, highlight=False, emoji=False))
    if as_json:
        click.echo(json.dumps(result, indent=2))
    else:
        _render(console, result)
    if result["interrupted"]:
        sys.exit(130)  # as duet compare: interrupted, and what was measured is shown


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
    wl = Table(title=f"A/A on the artificial workloads: {conf:.0%} CI half-width of B/A "
                     "(= smallest difference resolved)")
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
