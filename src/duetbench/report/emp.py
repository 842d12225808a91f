"""EMP results for one program: the seed's tables in the terminal, as JSON, and the dual-execution plot as SVG.

Only presentation: every number comes from ``analyze.emp`` (Suh et al. (EMP) §4.5–4.6).
"""
from __future__ import annotations

from collections.abc import Sequence
from html import escape as html_escape
from typing import Any

import numpy as np
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from duetbench.analyze.emp import CENTRAL_Z, EmpResult, SampleSizeChoice, Stats


def _ms(x: float) -> str:
    return "—" if x != x else f"{x * 1e3:,.3f}"


def _rel(x: float) -> str:
    return "—" if x != x else f"{x:.1e}"


def removal_reasons(result: EmpResult) -> dict[int, list[str]]:
    """Why each removed sample was removed: the daemons over their cutoff, then ±2σ per metric."""
    out: dict[int, list[str]] = {}
    for k, hits in result.daemon_removed.items():
        out.setdefault(k, []).extend(f"{name} {t * 1e3:.1f} ms > cutoff {result.cutoffs[name].cutoff * 1e3:.1f} ms"
                                     for name, t in hits)
    for metric, r in (("PT", result.pt), ("ET", result.et)):
        for k in r.removed_by_sigma:
            out.setdefault(k, []).append(f"{metric} outside ±2σ")
    return out


def print_emp(console: Console, title: str, result: EmpResult, indices: Sequence[int], pt: np.ndarray,
              et: np.ndarray, choice: SampleSizeChoice | None, top_noise: Sequence[tuple[str, float, int]]) -> None:
    """``indices`` maps the analysed samples (0..n-1) back to the sample numbers in the samples file."""
    console.print(f"[bold]{escape(title)}[/bold]: {result.n} samples analysed")
    console.print(_stats_table("Before removal (EMPv4)", result.pt.before, result.et.before, None, None))
    s = result.split
    shape = "L-shape (infrequent long-running daemons)" if s.l_shape else (
        "no L-samples" if not (s.pairs_first_long + s.pairs_second_long + s.pairs_both_long) else "not an L-shape")
    console.print(f"Dual-execution pairs: {s.pairs_central} central, {s.pairs_first_long} first long, "
                  f"{s.pairs_second_long} second long, {s.pairs_both_long} both long → {shape}; "
                  f"L-samples: ET > {_ms(s.threshold)} ms (median {_ms(s.center)} + {CENTRAL_Z:g}×{_ms(s.scale)} ms)")
    if result.long_running or result.cutoffs:
        t = Table(title="Infrequent long-running daemons and cutoffs (§4.5 steps 4–8)", title_justify="left")
        for col in ("daemon", "central: n", "central max ms", "central sd ms", "L-samples", "L min ms",
                    "period (samples)", "cutoff ms"):
            t.add_column(col, justify="left" if col in ("daemon", "L-samples") else "right")
        by_name = {d.name: d for d in result.long_running}
        for name, c in sorted(result.cutoffs.items()):
            d = by_name.get(name)
            cen = d.central if d else result.central.get(name)
            t.add_row(escape(name), str(cen.count) if cen else "0", _ms(cen.maximum) if cen else "—",
                      _ms(cen.std) if cen else "—",
                      ", ".join(str(indices[k]) for k in d.samples) if d else "(given)",
                      _ms(d.minimum) if d else "—",
                      (f"{d.period_samples:g}" + ("" if d.regular else "?")) if d and d.period_samples else "—",
                      _ms(c.cutoff))
        console.print(t)
    reasons = removal_reasons(result)
    if reasons:
        t = Table(title="Removed samples", title_justify="left")
        for col in ("sample", "PT ms", "ET ms", "why"):
            t.add_column(col, justify="left" if col == "why" else "right")
        for k in sorted(reasons):
            t.add_row(str(indices[k]), _ms(pt[k]), _ms(et[k]), escape("; ".join(reasons[k])))
        console.print(t)
    console.print(_stats_table("After removal (EMPv5: daemon cutoffs, then ±2σ)", result.pt.after, result.et.after,
                               result.pt, result.et))
    if top_noise:
        console.print("Busiest other processes (all samples): " + ", ".join(
            f"{escape(name)} {ms:.1f} ms in {n}" for name, ms, n in top_noise))
    for note in result.notes:
        console.print(f"[yellow]note:[/yellow] {escape(note)}")
    if choice is not None:
        t = Table(title="Sample size by halving (EMPv6, §4.6): outliers (=cutoff+2σ) and std per first-n subset",
                  title_justify="left")
        t.add_column("")
        for r in [*choice.rows, choice.whole]:
            t.add_column(str(r.size) + (" *" if r.size == choice.chosen else ""), justify="right")
        rows = [*choice.rows, choice.whole]
        t.add_row("PT outliers", *(f"{r.pt_outliers} (={r.pt_outliers_daemon}+{r.pt_outliers - r.pt_outliers_daemon})"
                                   for r in rows))
        t.add_row("ET outliers", *(f"{r.et_outliers} (={r.et_outliers_daemon}+{r.et_outliers - r.et_outliers_daemon})"
                                   for r in rows))
        t.add_row("PT std ms", *(_ms(r.pt_std) for r in rows))
        t.add_row("ET std ms", *(_ms(r.et_std) for r in rows))
        console.print(t)
        console.print(f"Suggested sample size: [bold]{choice.chosen}[/bold] ({escape(choice.rule)})")


def _stats_table(title: str, pt: Stats, et: Stats, pt_r: Any, et_r: Any) -> Table:
    t = Table(title=title, title_justify="left")
    cols = ["", "samples", "min ms", "max ms", "mean ms", "std ms", "rel. error"]
    if pt_r is not None:
        cols.insert(1, "outliers (=I+II)")
    for col in cols:
        t.add_column(col, justify="right")
    for name, s, r in (("PT", pt, pt_r), ("ET", et, et_r)):
        row = [name, str(s.n), _ms(s.minimum), _ms(s.maximum), _ms(s.mean), _ms(s.std), _rel(s.relative_error)]
        if r is not None:
            row.insert(1, f"{r.outliers} (={r.removed_by_daemon}+{len(r.removed_by_sigma)})")
        t.add_row(*row)
    return t


def _stats_dict(s: Stats) -> dict[str, Any]:
    return {"n": s.n, "min_s": s.minimum, "max_s": s.maximum, "mean_s": s.mean, "std_s": s.std,
            "relative_error": s.relative_error}


def emp_to_dict(result: EmpResult, indices: Sequence[int], choice: SampleSizeChoice | None) -> dict[str, Any]:
    s = result.split
    reasons = removal_reasons(result)
    out: dict[str, Any] = {
        "samples_analysed": result.n,
        "central_cluster": {"median_et_s": s.center, "robust_sd_s": s.scale, "l_threshold_et_s": s.threshold,
                            "l_samples": [indices[k] for k in np.flatnonzero(s.l_sample).tolist()],
                            "pairs": {"central": s.pairs_central, "first_long": s.pairs_first_long,
                                      "second_long": s.pairs_second_long, "both_long": s.pairs_both_long},
                            "l_shape": s.l_shape},
        "central_daemons": {n: c.__dict__ for n, c in sorted(result.central.items())},
        "long_running_daemons": [{"name": d.name, "samples": [indices[k] for k in d.samples],
                                  "pt_s": list(d.times), "period_samples": d.period_samples, "regular": d.regular}
                                 for d in result.long_running],
        "cutoffs": {n: {"cutoff_s": c.cutoff, "low_s": c.low, "high_s": c.high} for n, c in result.cutoffs.items()},
        "removed": {str(indices[k]): why for k, why in sorted(reasons.items())},
        "pt": {"before": _stats_dict(result.pt.before), "after": _stats_dict(result.pt.after),
               "removed_by_daemon": result.pt.removed_by_daemon,
               "removed_by_sigma": [indices[k] for k in result.pt.removed_by_sigma]},
        "et": {"before": _stats_dict(result.et.before), "after": _stats_dict(result.et.after),
               "removed_by_daemon": result.et.removed_by_daemon,
               "removed_by_sigma": [indices[k] for k in result.et.removed_by_sigma]},
        "notes": result.notes,
    }
    if choice is not None:
        out["sample_size"] = {"chosen": choice.chosen, "rule": choice.rule,
                              "subsets": [r.__dict__ for r in [*choice.rows, choice.whole]]}
    return out


def scatter_svg(et: np.ndarray, result: EmpResult, title: str, width: int = 560, height: int = 560) -> str:
    """The dual-execution scatter plot (§4.5.1 step 2, Figure 14): x = ET of the first sample of each
    consecutive pair, y = ET of the second; the L-sample threshold drawn on both axes."""
    m = et.size // 2
    x, y = et[0:2 * m:2] * 1e3, et[1:2 * m:2] * 1e3
    long_ = result.split.l_sample[: 2 * m].reshape(-1, 2) if m else np.zeros((0, 2), bool)
    pad, left = 40, 70
    lo = float(min(x.min(), y.min())) if m else 0.0
    hi = float(max(x.max(), y.max())) if m else 1.0
    if hi <= lo:
        hi = lo + 1.0
    span = hi - lo
    lo, hi = lo - 0.03 * span, hi + 0.03 * span
    pw, ph = width - left - pad, height - 2 * pad - 20

    def sx(v: float) -> float:
        return left + (v - lo) / (hi - lo) * pw

    def sy(v: float) -> float:
        return pad + 20 + ph - (v - lo) / (hi - lo) * ph

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
             '<rect width="100%" height="100%" fill="white"/>',
             f'<text x="{width / 2}" y="18" text-anchor="middle" font-size="13">{html_escape(title)}</text>',
             f'<rect x="{left}" y="{pad + 20}" width="{pw}" height="{ph}" fill="none" stroke="#888"/>']
    for i in range(5):
        v = lo + (hi - lo) * i / 4
        parts.append(f'<text x="{sx(v):.1f}" y="{pad + 20 + ph + 14}" text-anchor="middle">{v:,.2f}</text>')
        parts.append(f'<text x="{left - 4}" y="{sy(v) + 4:.1f}" text-anchor="end">{v:,.2f}</text>')
    parts.append(f'<text x="{left + pw / 2}" y="{height - 6}" text-anchor="middle">ET of the first sample of '
                 'the pair (ms)</text>')
    parts.append(f'<text transform="translate(14 {pad + 20 + ph / 2}) rotate(-90)" text-anchor="middle">ET of '
                 'the second sample (ms)</text>')
    thr = result.split.threshold * 1e3
    if lo < thr < hi:
        parts.append(f'<line x1="{sx(thr):.1f}" y1="{pad + 20}" x2="{sx(thr):.1f}" y2="{pad + 20 + ph}" '
                     'stroke="#c60" stroke-dasharray="4 3"/>')
        parts.append(f'<line x1="{left}" y1="{sy(thr):.1f}" x2="{left + pw}" y2="{sy(thr):.1f}" '
                     'stroke="#c60" stroke-dasharray="4 3"/>')
        parts.append(f'<text x="{left + pw - 4}" y="{sy(thr) - 4:.1f}" text-anchor="end" fill="#c60">'
                     'central cluster / L-samples</text>')
    for i in range(m):
        colour = "#1f77b4" if not long_[i].any() else "#d62728"
        parts.append(f'<circle cx="{sx(x[i]):.1f}" cy="{sy(y[i]):.1f}" r="3" fill="none" stroke="{colour}">'
                     f'<title>samples {2 * i}, {2 * i + 1}: {x[i]:.3f} ms, {y[i]:.3f} ms</title></circle>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
