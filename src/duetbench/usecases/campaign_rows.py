"""Rows of `duet analyze`'s table that the analysis itself cannot give: benchmarks whose runs all failed."""
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
