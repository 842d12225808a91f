"""The method studies of `duet analyze --studies` (analyze/studies.py): terminal text, JSON, and the
shape `duet report` draws."""
from __future__ import annotations

import csv
import io
import math
from typing import Any

from rich.console import Console
from rich.markup import escape

from duetbench.analyze.studies import CampaignStudies
from duetbench.model.method import METHODS, PAIRED_METHODS
from duetbench.report.safe_text import csv_cell


def _finite(x: float) -> float | None:
    return float(x) if isinstance(x, (int, float)) and math.isfinite(x) else None


def studies_dict(st: CampaignStudies) -> dict[str, Any]:
    """Plain data: for JSON export and for the HTML report's study charts."""
    methods = PAIRED_METHODS
    out: dict[str, Any] = {
        "runtime_saving": {m: _finite(st.runtime.median_saving(m)) for m in methods},
        "runtime_speedup": {m: _finite(st.runtime.median_speedup(m)) for m in methods},
        "ci_width_reduction": {m: _finite(st.width_reduction.geomean_reduction(m)) for m in methods},
        "shuffle_width_ratio": {m: _finite(v) for m, v in st.shuffle_ratio.items()},
        "relative_overlap_time": {o.benchmark: {f"{m:g}": _finite(v)
                                                for m, v in zip(o.m, o.relative_overlap_time, strict=True)}
                                  for o in st.overlaps},
    }
    out["runtime_saving"] = {k: v for k, v in out["runtime_saving"].items() if v is not None}
    if st.false_positives is not None:
        out["aa_false_positive_rate"] = {m: fp.ci_rate for m, fp in st.false_positives.items()}
        out["aa_false_positive_rate_u_test"] = {m: fp.u_rate for m, fp in st.false_positives.items()}
    if st.skipped:
        out["skipped"] = [{"benchmark": b, "method": m, "reason": why} for b, m, why in st.skipped]
    if st.slowdown_curves:
        out["mds"] = {m: [(float(s), float(share)) for s, share in zip(c.slowdowns, c.share_equal_ci, strict=True)]
                      for m, c in st.slowdown_curves.items()}
    return out


def print_studies(console: Console, st: CampaignStudies) -> None:
    d = studies_dict(st)
    console.print("[bold]Method studies[/bold] (Bulej et al. 2020 §4.2 and Table 1; Drozdík 2023 §4.4, §5.2)")

    def line(label: str, values: dict[str, Any], fmt: str) -> None:
        shown = ", ".join(f"{m} {format(v, fmt)}" for m, v in values.items() if v is not None)
        if shown:
            console.print(f"  {label}: {shown}", highlight=False)

    line("machine time saved by running A and B together (median over benchmarks)", d["runtime_saving"], ".0%")
    line("CI width, sequential / method (geometric mean; > 1: narrower than sequential)", d["ci_width_reduction"],
         ".2f")
    line("CI width after shuffling the pairs / as measured (> 1: synchronized interference cancelled)",
         d["shuffle_width_ratio"], ".2f")
    overlap40 = [v.get("0.4") for v in d["relative_overlap_time"].values() if v.get("0.4") is not None]
    if overlap40:
        console.print(f"  aduet relative overlap time at m = 0.4: median {sorted(overlap40)[len(overlap40) // 2]:.0%} "
                      f"over {len(overlap40)} benchmark(s)", highlight=False)
    if "aa_false_positive_rate" in d:
        for m, fp in (st.false_positives or {}).items():
            console.print(f"  A/A false alarms, {m}: CI test {fp.ci_alarms}/{fp.benchmarks} ({fp.ci_rate:.0%}, "
                          f"95% CI {fp.ci_rate_low:.0%}–{fp.ci_rate_high:.0%}), U test {fp.u_alarms}/{fp.benchmarks}",
                          highlight=False)
    for m, curve in st.slowdown_curves.items():
        detected = [s for s, share in zip(curve.slowdowns, curve.share_equal_ci, strict=True) if share <= 0.5]
        where = f"{detected[0]:.0%}" if detected else f"> {curve.slowdowns[-1]:.0%}"
        console.print(f"  minimal detectable slowdown, {m}: half of the {curve.benchmarks} benchmark(s) detect an "
                      f"injected slowdown of {where}", highlight=False)
    for bench, method, why in st.skipped:
        console.print(f"  [yellow]left out of the studies[/yellow]: {escape(bench)} · {method}: {escape(why)}",
                      highlight=False, soft_wrap=True)


def studies_csv(st: CampaignStudies) -> str:
    """Every study's table in one long CSV: study, method, benchmark, quantity, value."""
    rows: list[tuple[str, str, str, str, float | None]] = []
    rt = st.runtime
    for i, bench in enumerate(rt.benchmarks):
        rows.append(("runtime", "sequential", bench, "seconds_per_run", _finite(float(rt.sequential_s[i]))))
        for m in PAIRED_METHODS:
            rows.append(("runtime", m, bench, "seconds_per_run", _finite(float(getattr(rt, f"{m}_s")[i]))))
            rows.append(("runtime", m, bench, "saving", _finite(float(rt.saving(m)[i]))))
    wr = st.width_reduction
    for i, bench in enumerate(wr.benchmarks):
        for m in METHODS:
            rows.append(("ci_width", m, bench, "relative_ci_width", _finite(float(getattr(wr, m)[i]))))
    for sh in st.shuffles:
        rows.append(("shuffle", sh.method, sh.benchmark, "width_ratio", _finite(sh.width_ratio)))
    for o in st.overlaps:
        for m, v in zip(o.m, o.relative_overlap_time, strict=True):
            rows.append(("overlap", "aduet", o.benchmark, f"relative_overlap_time@m={m:g}", _finite(float(v))))
    for m, fp in (st.false_positives or {}).items():
        rows += [("aa", m, "", "ci_false_positive_rate", fp.ci_rate), ("aa", m, "", "u_false_positive_rate", fp.u_rate)]
    for m, curve in st.slowdown_curves.items():
        for s, share in zip(curve.slowdowns, curve.share_equal_ci, strict=True):
            rows.append(("mds", m, "", f"share_equal@{s:g}", _finite(float(share))))
    out = io.StringIO(newline="")
    writer = csv.writer(out)
    writer.writerow(("study", "method", "benchmark", "quantity", "value"))
    writer.writerows([csv_cell(v) for v in row] for row in rows)
    return out.getvalue()
