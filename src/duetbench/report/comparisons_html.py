"""The HTML report of stored comparisons (``duet report`` on a database of ``duet compare`` results,
``--export-html`` of ``duet compare`` and ``duet show``): one self-contained page, readable offline.

Per comparison: its commands, the verdict with the CI of B/A, each side's times over its runs, the
ratio of every pair over the runs (with the CI as a band), and A's and B's distributions in two colours
over shared bins. A forest plot puts every comparison's B/A and CI side by side (a parameter scan's
combinations one under the other).

As the campaign report (report/html.py): Python derives each plot's data and embeds it as one JSON
block (escaped by `tojson`); static/charts.js and static/comparisons.js draw it as SVG, inserting text
only with textContent/setAttribute; every string from outside passes through `visible`.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from importlib import resources
from typing import Any

import jinja2
import numpy as np

from duetbench.analyze.invocations import samples, usable
from duetbench.analyze.overlap import overlap_pairs
from duetbench.analyze.verdicts import describe_change
from duetbench.model.method import METHODS
from duetbench.report.distribution import shared_histogram
from duetbench.report.exporters.json import clean_json
from duetbench.report.model import ComparisonReport, measured_count, stopped_by
from duetbench.report.safe_text import visible, visible_deep
from duetbench.report.units import fmt_time, ratio_interval, time_scale


def _sig(x: float, digits: int = 6) -> float | None:
    return float(f"{x:.{digits}g}") if math.isfinite(x) else None


def _sig_list(values: Sequence[float] | np.ndarray, digits: int = 6) -> list[float | None]:
    return [_sig(float(v), digits) for v in values]


def _value(inv: Any, metric: str) -> float:
    return float(inv.wall_s if metric == "wall" else inv.cpu_s)


def _times(report: ComparisonReport, metric: str) -> dict[str, list[float | None]]:
    """Each side's measured times in the order they ran."""
    good = usable(report.invocations)
    return {side: _sig_list([_value(i, metric) for i in sorted((i for i in good if i.side == side),
                                                             key=lambda i: (i.pair, i.index))])
            for side in ("A", "B")}


def _ratios(report: ComparisonReport, metric: str) -> dict[str, Any] | None:
    """B/A of every pair in the order measured: the duet's pairs, the aduet's overlapping invocations,
    or sequential's k-th run of A with its k-th of B (a round)."""
    method = report.method
    if method not in METHODS:
        return None  # ended during --method auto's pilot: nothing is paired yet
    s = samples(method, report.invocations, metric)
    if method == "aduet":
        if s.a_start is None or s.a_end is None or s.b_start is None or s.b_end is None \
                or not s.a.size or not s.b.size:  # the four are stamped together
            return None
        try:
            p = overlap_pairs(s.a_start, s.a_end, s.b_start, s.b_end,
                              min_overlap_rate=float(report.options.get("min_overlap_rate", 0.4)))
        except ValueError:
            return None
        a, b = s.a[p.a_index], s.b[p.b_index]
        kind = "invocations of A and B that overlapped, in the order they ran"
    else:
        n = min(s.a.size, s.b.size)
        a, b = s.a[:n], s.b[:n]
        kind = ("the pairs, released together by the barrier" if method == "duet" else
                "the k-th run of B over the k-th run of A (one round)")
    if not a.size:
        return None
    with np.errstate(divide="ignore", invalid="ignore"):
        return {"values": _sig_list(b / a), "kind": kind}


def _histogram(times: Mapping[str, list[float | None]]) -> dict[str, Any] | None:
    """A's and B's times over shared bins (report/distribution.py)."""
    a, b = (np.array([v for v in times[side] if v is not None], dtype=float) for side in ("A", "B"))
    return shared_histogram(a, b)


def comparison_data(report: ComparisonReport, parameters: Mapping[str, str]) -> dict[str, Any]:
    """Everything the page shows of one comparison, JSON-ready."""
    metric = report.primary_metric
    p = report.primary
    times = _times(report, metric)
    label = ", ".join(f"{k} = {v}" for k, v in parameters.items())
    out: dict[str, Any] = {
        "id": report.id, "names": dict(report.names), "commands": dict(report.commands), "method": report.method,
        "status": report.status, "metric": metric, "parameters": dict(parameters),
        "subject": report.subject, "label": f"#{report.id} " + (label or report.subject),
        "times": times, "ratios": _ratios(report, metric), "hist": _histogram(times),
        "warnings": list(report.warnings),
        "problem": "; ".join(filter(None, (report.analysis_error, stopped_by(report)))),
        "seed": report.seed, "tool_version": report.tool_version,
        "host": f"{report.host.get('hostname', '?')} ({report.host.get('cpu_model', '?')})",
    }
    b = report.benchmark
    if b is not None:
        t = lambda seconds: fmt_time(seconds, report.time_unit)  # noqa: E731
        out["benchmark"] = {"mean": t(b.mean), "sd": t(b.stdev) if b.stdev == b.stdev else "–", "min": t(b.min),
                            "max": t(b.max), "runs": b.runs, "confidence": b.confidence,
                            "ci": f"{t(b.low)} … {t(b.high)}" if b.low == b.low else "–"}
    if p is not None:
        out.update({
            "estimate": p.ratio.estimate, "low": p.ratio.low, "high": p.ratio.high,
            "confidence": p.ratio.confidence_level, "interval": p.ratio.interval, "verdict": p.verdict,
            "ci": ratio_interval(p.ratio.low, p.ratio.high), "unbounded": p.ratio.high == math.inf,
            # The runs measured, as the terminal and Markdown count them ("14 runs" after --runs 15 read as
            # a run lost), with the outlier pairs the robust filter set aside beside them.
            "summary": describe_change(p.ratio, report.names["A"], report.names["B"]), "runs": measured_count(p),
            "aside": p.outliers_removed,
            "p": p.u_test_p, "rcw": p.relative_ci_width, "notes": list(p.notes),
            "verdict_class": {"slower": "slower", "faster": "faster"}.get(p.verdict, "same"),
            "metrics": _metrics(report, p),
        })
    auto = report.options.get("auto")
    if isinstance(auto, dict) and auto.get("reason"):
        out["auto"] = str(auto["reason"])
    return out


def _metrics(report: ComparisonReport, primary: Any) -> list[dict[str, Any]]:
    """Each metric's mean time of A and B with B/A, as the terminal and the Markdown export show them: the
    plots alone left a reader of the page without either side's time."""
    scale, symbol, decimals = time_scale(primary.a.mean, report.time_unit)  # one unit for the column

    def mean(seconds: float) -> str:
        return f"{seconds / scale:.{decimals}f} {symbol}" if math.isfinite(seconds) else "—"

    return [{"metric": metric, "a": mean(r.a.mean), "b": mean(r.b.mean), "ratio": r.ratio.estimate,
             "ci": ratio_interval(r.ratio.low, r.ratio.high), "verdict": r.verdict, "p": r.u_test_p}
            for metric, r in report.results.items()]


def _fmt(value: Any, spec: str) -> str:
    return "—" if not isinstance(value, (int, float)) or not math.isfinite(value) else format(value, spec)


def render_comparisons_html(title: str, entries: Sequence[tuple[ComparisonReport, Mapping[str, str]]]) -> str:
    """The page of `entries`: (report, its parameter values — empty outside a scan), in the order given."""
    comparisons = visible_deep(clean_json([comparison_data(r, params) for r, params in entries]))
    env = jinja2.Environment(loader=jinja2.PackageLoader("duetbench.report", "templates"),
                             autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["fmt"] = _fmt
    parameter_names = list(dict.fromkeys(k for c in comparisons for k in c["parameters"]))
    static = resources.files("duetbench.report") / "static"
    return env.get_template("comparisons.html.j2").render(
        title=visible(title), comparisons=comparisons, parameter_names=parameter_names,
        only_single=bool(comparisons) and all(c["method"] == "single" for c in comparisons),
        data={"comparisons": comparisons},
        style=(static / "report.css").read_text(encoding="utf-8"),
        charts=(static / "charts.js").read_text(encoding="utf-8"),
        script=(static / "comparisons.js").read_text(encoding="utf-8"))
