"""Column mappings of the three outside data sets (../shared/data, tests/importers/data/README.md),
so `duet import csv` and the tests read them the same way. The equivalent command lines are in
docs/import.md."""
from __future__ import annotations

from .csv_mapping import CsvMapping

#: cloud-benchmark-conductor (Japke et al. 2023), RMIT sequential: a benchmark is one experiment (issue,
#: severity) of one Go benchmark; a run is one `go test -count=5` trial (VM, suite run); v1 = A, v2 = B.
CONDUCTOR = CsvMapping(
    columns={"benchmark": ("perf_issue", "severity", "benchmark"), "run": ("run", "suite_run"),
             "side": ("version",), "value": ("ns_per_op",), "index": ("count_index",)},
    constants={"method": "sequential"}, values={"side": {"1": "A", "2": "B"}}, unit="ns")

#: faasterBench (Grambow et al. 2023): mode A runs f1 then f2 three times in one invocation, a duet-like
#: pairing (a run is an invocation, iterations its pairs); modes B and C run f1 or f2 alone (sequential).
FAASTERBENCH = CsvMapping(
    columns={"benchmark": ("platform", "regression_pct", "wrapper_count", "calls_per_function"),
             "method": ("mode",), "run": ("wrapper", "invocation_id"), "side": ("version",),
             "value": ("duration_ms",), "index": ("iteration",)},
    values={"side": {"f1": "A", "f2": "B"}, "method": {"A": "duet", "B": "sequential", "C": "sequential"}},
    unit="ms")

#: The thesis's per-run run times (Drozdík 2023, rq1): one row per run, value = run time per iteration.
#: The source does not say which side a run was, so every row is side A; thesis "duet" = async duet.
THESIS_RQ1 = CsvMapping(
    columns={"benchmark": ("environment", "suite", "benchmark"), "method": ("type",),
             "value": ("run_time_per_iteration_s",)},
    constants={"side": "A"}, values={"method": {"seqn": "sequential", "duet": "aduet", "syncduet": "duet"}})
