"""The method studies of `duet analyze --studies` (analyze/studies.py): terminal text, JSON, the shape
`duet report` draws, and the same findings in words for the HTML report."""
from __future__ import annotations

import csv
import io
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from rich.console import Console
from rich.markup import escape

from duetbench.analyze.studies import CampaignStudies, RuntimeSaving
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
    seconds = {m: _runtime_seconds(st.runtime, m) for m in methods}
    out["runtime_seconds"] = {m: v for m, v in seconds.items() if v is not None}
    if st.false_positives is not None:
        out["aa_false_positive_rate"] = {m: fp.ci_rate for m, fp in st.false_positives.items()}
        out["aa_false_positive_rate_u_test"] = {m: fp.u_rate for m, fp in st.false_positives.items()}
    if st.skipped:
        out["skipped"] = [{"benchmark": b, "method": m, "reason": why} for b, m, why in st.skipped]
    if st.slowdown_curves:
        out["mds"] = {m: [(float(s), float(share)) for s, share in zip(c.slowdowns, c.share_equal_ci, strict=True)]
                      for m, c in st.slowdown_curves.items()}
    return out


def _runtime_seconds(rt: RuntimeSaving, method: str) -> dict[str, float] | None:
    """Machine time of one run of every benchmark that has both `method` and sequential runs: what the
    median saving means in seconds."""
    seq, paired = rt.sequential_s, rt.duet_s if method == "duet" else rt.aduet_s
    both = np.isfinite(seq) & np.isfinite(paired)
    if not both.any():
        return None
    return {"benchmarks": int(both.sum()), "sequential_s": float(seq[both].sum()),
            "method_s": float(paired[both].sum())}


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


# -- in words (the HTML report) ----------------------------------------------------------------------------
#: The keys `study_findings` puts in words; anything else a study adds is listed as plain name = value lines.
_WORDED = {"runtime_saving", "runtime_speedup", "runtime_seconds", "ci_width_reduction", "shuffle_width_ratio",
           "relative_overlap_time", "aa_false_positive_rate", "aa_false_positive_rate_u_test", "mds", "skipped"}


def machine_time(seconds: float) -> str:
    """A machine time with its unit: seconds up to two minutes, then minutes, then hours."""
    if abs(seconds) < 120:
        return f"{seconds:.3g} s"
    if abs(seconds) < 7200:
        return f"{seconds / 60:.3g} min"
    return f"{seconds / 3600:.3g} h"


def _numbers(value: Any) -> dict[str, float]:
    """The finite numbers of a {name: number} study result (anything else in it is left out)."""
    if not isinstance(value, Mapping):
        return {}
    return {str(k): float(v) for k, v in value.items()
            if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)}


def _runtime_words(studies: Mapping[str, Any]) -> list[str]:
    saving, speedup = _numbers(studies.get("runtime_saving")), _numbers(studies.get("runtime_speedup"))
    given = studies.get("runtime_seconds")
    seconds: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
    out = []
    for method in dict.fromkeys([*saving, *seconds]):
        told = _numbers(seconds.get(method))
        median = (f"median over benchmarks {saving[method]:.0%}" if method in saving else "") + (
            f", {speedup[method]:.2g}× as fast" if method in speedup else "")
        if {"sequential_s", "method_s", "benchmarks"} <= told.keys() and told["sequential_s"] > 0:
            seq, paired, n = told["sequential_s"], told["method_s"], int(told["benchmarks"])
            diff = seq - paired
            which = "the benchmark" if n == 1 else f"each of the {n} benchmarks"
            out.append(f"{method}: one run of {which} measured both ways "
                       f"took {machine_time(paired)} of machine time with A and B in parallel, against "
                       f"{machine_time(seq)} for A then B (sequential): {machine_time(abs(diff))} "
                       f"{'less' if diff >= 0 else 'more'}, {abs(diff) / seq:.0%} {'saved' if diff >= 0 else 'added'}"
                       + (f" ({median})." if median else "."))
        elif method in saving:
            s = saving[method]
            out.append(f"{method}: {abs(s):.0%} {'less' if s >= 0 else 'more'} machine time than running A then B "
                       f"(sequential), {median}.")
    return out


def _first_detected(points: Any) -> str | None:
    """The smallest injected slowdown that at least half of the benchmarks detect, in words."""
    try:
        curve = [(float(s), float(share)) for s, share in points]
    except (TypeError, ValueError):
        return None
    if not curve:
        return None
    detected = [s for s, share in curve if share <= 0.5]
    return f"{detected[0]:.0%}" if detected else f"more than {curve[-1][0]:.0%}"


def _plain(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, Mapping):
        return ", ".join(f"{k} ({_plain(v)})" if isinstance(v, Mapping) else f"{k} = {_plain(v)}"
                         for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return "; ".join(_plain(v) for v in value)
    return str(value)


def study_findings(studies: Mapping[str, Any] | None, confidence_level: float) -> list[dict[str, str]]:
    """The method studies (the `studies_dict` shape) as sentences with their units: [{study, text}], in the
    order a reader asks — what the duet costs, how much it narrows the CI and why, how well it detects."""
    if not studies:
        return []
    found: list[dict[str, str]] = [{"study": "Machine time", "text": t} for t in _runtime_words(studies)]
    for method, r in _numbers(studies.get("ci_width_reduction")).items():
        if r > 0:
            how = f"{r:.3g}× narrower than" if r >= 1 else f"{1 / r:.3g}× wider than"
            found.append({"study": "CI width", "text": f"{method}'s confidence intervals are {how} sequential's "
                          "(relative CI width, geometric mean over the benchmarks measured with both)."})
    for method, r in _numbers(studies.get("shuffle_width_ratio")).items():
        cause = ("pairing A's and B's iterations cancels interference that hits both at once" if r >= 1.2 else
                 "there was little interference hitting A and B at once for the pairing to cancel")
        found.append({"study": "Shuffled pairs", "text": f"{method}: with each A iteration paired with a random B "
                      f"iteration instead of its partner, the CI would be {r:.3g}× as wide — {cause}."})
    overlaps = studies.get("relative_overlap_time")
    if isinstance(overlaps, Mapping):
        at40 = sorted(_numbers(per)["0.4"] for per in overlaps.values() if "0.4" in _numbers(per))
        if at40:
            found.append({"study": "Overlap", "text": f"aduet: a median {at40[(len(at40) - 1) // 2]:.0%} of A's and "
                          "B's iteration time ran in pairs overlapping by more than 40% (over "
                          f"{len(at40)} benchmark{'s' if len(at40) != 1 else ''})."})
    fp_ci = _numbers(studies.get("aa_false_positive_rate"))
    fp_u = _numbers(studies.get("aa_false_positive_rate_u_test"))
    if fp_ci:
        u = f"; U test: {', '.join(f'{m} {v:.1%}' for m, v in fp_u.items())}" if fp_u else ""
        found.append({"study": "A/A false alarms", "text": "Share of A/A benchmarks judged different, CI test: "
                      f"{', '.join(f'{m} {v:.1%}' for m, v in fp_ci.items())} "
                      f"(nominal {(1 - confidence_level) * 100:.3g}%){u}."})
    mds = studies.get("mds")
    if isinstance(mds, Mapping):
        detected = {str(m): _first_detected(points) for m, points in mds.items()}
        shown = [f"{where} with {m}" for m, where in detected.items() if where]
        if shown:
            found.append({"study": "Minimal detectable slowdown", "text": "Half of the benchmarks detect an injected "
                          f"slowdown of {', '.join(shown)}."})
    skipped = studies.get("skipped")
    for item in skipped if isinstance(skipped, list) else []:
        if isinstance(item, Mapping):
            found.append({"study": "Left out", "text": f"{item.get('benchmark', '?')} · {item.get('method', '?')}: "
                          f"{item.get('reason', '')}"})
    for key, value in studies.items():
        if key not in _WORDED:
            found.append({"study": str(key), "text": _plain(value)})
    return found
