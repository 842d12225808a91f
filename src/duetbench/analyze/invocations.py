"""From stored invocations to statistics: what enters the analysis, and the adapter into `analyze.api`.

Kept apart from the array statistics and from the runner, because the live progress, the final report and
``duet show`` must all judge the same invocations the same way.
"""
from __future__ import annotations

import json
import math

import msgspec
import numpy as np

from duetbench.analyze.api import AnalysisOptions, analyze
from duetbench.analyze.comparison import ComparisonResult
from duetbench.analyze.interference import NOTE_MARK, one_sided_pairs, too_few_clean
from duetbench.analyze.verdicts import verdict
from duetbench.model.invocation import Invocation, usable
from duetbench.model.method import check_method
from duetbench.model.table import IterationTable

METRICS = ("wall", "cpu")


class Samples(msgspec.Struct, frozen=True):
    a: np.ndarray
    b: np.ndarray
    a_start: np.ndarray | None = None
    a_end: np.ndarray | None = None
    b_start: np.ndarray | None = None
    b_end: np.ndarray | None = None


def _value(inv: Invocation, metric: str) -> float:
    return inv.wall_s if metric == "wall" else inv.cpu_s


def _complete_pairs(good: list[Invocation]) -> list[dict[str, Invocation]]:
    by_pair: dict[int, dict[str, Invocation]] = {}
    for inv in good:
        by_pair.setdefault(inv.pair, {})[inv.side] = inv
    return [p for _, p in sorted(by_pair.items()) if "A" in p and "B" in p]


def samples(method: str, invocations: list[Invocation], metric: str) -> Samples:
    """The values the live CI and the pilot look at, as arrays (complete pairs only for the duet)."""
    good = usable(invocations)
    if method == "duet":
        pairs = _complete_pairs(good)
        return Samples(np.array([_value(p["A"], metric) for p in pairs]),
                       np.array([_value(p["B"], metric) for p in pairs]))
    a = [i for i in good if i.side == "A"]
    b = [i for i in good if i.side == "B"]
    if method == "aduet":
        return Samples(np.array([_value(i, metric) for i in a]), np.array([_value(i, metric) for i in b]),
                       np.array([i.start_ns for i in a], dtype=np.int64),
                       np.array([i.end_ns for i in a], dtype=np.int64),
                       np.array([i.start_ns for i in b], dtype=np.int64),
                       np.array([i.end_ns for i in b], dtype=np.int64))
    return Samples(np.array([_value(i, metric) for i in a]), np.array([_value(i, metric) for i in b]))


def as_table(method: str, invocations: list[Invocation], metric: str, benchmark: str = "compare") -> IterationTable:
    """The usable invocations as the iteration table of one benchmark, the way a campaign stores its runs
    (model/table.py): a duet's complete pair p is run p, one iteration per side; the sequential method's k-th
    A and k-th B invocation are run k (each its own launch, as a campaign's sequential runs); an async duet is
    one run whose iterations are its invocations, with their timestamps, since its sides ran continuously
    side by side and pair by overlap."""
    check_method(method)
    good = usable(invocations)
    if method == "duet":
        pairs = _complete_pairs(good)
        chosen = [p[side] for p in pairs for side in ("A", "B")]
        run = [k for k in range(len(pairs)) for _ in ("A", "B")]
        index = [0] * len(chosen)
    else:
        sides = {s: [i for i in good if i.side == s] for s in ("A", "B")}
        chosen = sides["A"] + sides["B"]
        if method == "aduet":
            run = [0] * len(chosen)
            index = list(range(len(sides["A"]))) + list(range(len(sides["B"])))
        else:
            run = list(range(len(sides["A"]))) + list(range(len(sides["B"])))
            index = [0] * len(chosen)
    n = len(chosen)
    return IterationTable.from_columns(
        benchmark=np.full(n, benchmark, dtype=object), method=np.full(n, method, dtype=object), run=run,
        side=[i.side for i in chosen], index=index, value=[_value(i, metric) for i in chosen],
        start_ns=[i.start_ns for i in chosen], end_ns=[i.end_ns for i in chosen])


def measured_runs(method: str, invocations: list[Invocation]) -> int:
    """Completed runs so far: pairs for a duet, the smaller side's count otherwise."""
    s = samples(method, invocations, "wall")
    return int(min(len(s.a), len(s.b)))


def evaluate(method: str, invocations: list[Invocation], metric: str, *, confidence_level: float,
             n_resamples: int, seed: int, min_overlap_rate: float = 0.4,
             robust: bool = True, u_test: bool = True, interval: str = "t",
             judge_one_sided: bool = False) -> ComparisonResult:
    """`analyze.api.analyze` of a comparison's invocations (`as_table`). `judge_one_sided`: a short duet's
    pairs in which one side alone was held off its CPU by another process (`analyze.interference`) are
    counted; the wall-time ratio is left unbounded when too few pairs were clean, else kept as it is, with
    a note either way. The pairs are never dropped (why: `interference.too_few_clean`)."""
    opts = AnalysisOptions(confidence_level=confidence_level, n_resamples=n_resamples, seed=seed,
                           min_overlap_rate=min_overlap_rate, robust=robust, u_test=u_test, interval=interval,
                           metric=metric)
    result = analyze(method, as_table(method, invocations, metric), opts)
    if not (judge_one_sided and method == "duet" and metric == "wall"):
        return result
    pairs = _complete_pairs(usable(invocations))
    records = _pair_records(pairs)
    hit = one_sided_pairs(*records)
    if not hit.any():
        return result
    what = (f"{int(hit.sum())} of {len(pairs)} pairs {NOTE_MARK} while another process ran (more time off the "
            "CPU than its partner, and other processes' CPU time to match): interference a duet does not cancel")
    if np.isnan(records[5]).all() or np.isnan(records[6]).all():
        # Said here, where it costs: an ordinary user's duet has no cgroups unless one was delegated to it.
        what += (" — or sleeping and I/O, which count as time off the CPU too, since no side's run-queue wait was "
                 "recorded (that needs a cgroup of duet's own with cpu.pressure; `duet doctor` says why there is "
                 "none here)")
    if not too_few_clean(hit):
        return msgspec.structs.replace(result, notes=(*result.notes, f"{what}; few enough to keep"))
    ratio = msgspec.structs.replace(result.ratio, low=0.0, high=math.inf)
    return msgspec.structs.replace(
        result, ratio=ratio, verdict=verdict(ratio.low, ratio.high), relative_ci_width=math.inf,
        notes=(*result.notes, f"{what}; with so few clean pairs the wall-time ratio is not bounded at all — "
               "measure with --method sequential (or auto), more pairs, or --metric cpu for CPU-bound commands"))


def _pair_records(pairs: list[dict[str, Invocation]]) -> tuple[np.ndarray, ...]:
    """Per complete pair: A's and B's wall and CPU time, the CPU time other processes used meanwhile (the
    pair's activity record), and A's and B's run-queue wait (`one_sided_pairs`' arguments; nan where not
    recorded)."""
    def column(side: str, attr: str) -> np.ndarray:
        return np.array([math.nan if (v := getattr(p[side], attr)) is None else float(v) for p in pairs])

    others = np.array([_others_s(p["A"].activity) for p in pairs])
    return (column("A", "wall_s"), column("A", "cpu_s"), column("B", "wall_s"), column("B", "cpu_s"), others,
            column("A", "cgroup_wait_s"), column("B", "cgroup_wait_s"))


def _others_s(activity: str | None) -> float:
    if not activity:
        return math.nan
    try:
        return sum(float(proc["cpu_ms"]) for proc in json.loads(activity)) / 1000.0
    except (ValueError, KeyError, TypeError):
        return math.nan
