"""What rows of a campaign's table (`duet analyze`, `duet run`'s summary) take from the stored runs rather than from
the analysis: benchmarks whose runs all failed, and how many runs finished and failed."""
from __future__ import annotations

import fnmatch

from duetbench.analyze.api import AnalysisRow
from duetbench.store.campaigns import RunRecord


def failed_only(runs: list[RunRecord], rows: list[AnalysisRow], benchmarks: tuple[str, ...],
                methods: tuple[str, ...]) -> list[AnalysisRow]:
    """A row for each benchmark and method whose runs all failed: left out, a benchmark that never ran (a JMH
    lock, a missing file) would vanish from the table and from a CI gate's summary."""
    have = {(r.benchmark.split("/")[0], r.method) for r in rows}
    failed: dict[tuple[str, str], list[RunRecord]] = {}
    for run in runs:
        if run.status == "failed" and (run.benchmark, run.method) not in have:
            failed.setdefault((run.benchmark, run.method), []).append(run)
    out = []
    for (bench, method), bad in failed.items():
        if (benchmarks and not any(fnmatch.fnmatchcase(bench, g) for g in benchmarks)) or \
                (methods and method not in methods):
            continue
        first = bad[0].error.strip().splitlines()[0] if bad[0].error.strip() else "no error output"
        # counted as everywhere else: a sequential run is one repetition of A and of B
        count = len({run.repetition for run in bad})
        out.append(AnalysisRow(bench, method, 0, 0, 0, None,
                               problem=f"all {count} run(s) failed; the first: {first}"))
    return out


def run_counts(runs: list[RunRecord], benchmark: str, method: str) -> tuple[int, int]:
    """The runs of `benchmark` (or of the harness run holding it, "<run>/<inner>") and `method` that finished
    and that failed. One number per concept: a run measures A and B once — a duet run both at once, a
    sequential repetition as an A run and a B run — so sequential counts repetitions; a failed run measured
    again (--retry-failed) is kept, and counted no more."""
    by_rep: dict[int, list[str]] = {}
    for r in runs:
        if r.method == method and r.status != "retried" and (
                r.benchmark == benchmark or benchmark.startswith(r.benchmark + "/")):
            by_rep.setdefault(r.repetition, []).append(r.status)
    whole = 1 if method != "sequential" else 2
    return (sum(1 for st in by_rep.values() if st.count("ok") >= whole),
            sum(1 for st in by_rep.values() if "failed" in st))
