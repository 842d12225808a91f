"""Everything a report shows, gathered once; the renderers only format it."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from duetbench.execute.invocation import Invocation

if TYPE_CHECKING:
    # numpy: imported by whoever makes the results, not by whoever only names the type
    from duetbench.analyze.comparison import ComparisonResult
    from duetbench.analyze.single import Benchmark


@dataclass
class ComparisonReport:
    id: int
    status: str  # "complete" | "interrupted" | "failed" | "running"
    method: str
    names: dict[str, str]
    commands: dict[str, str]
    seed: int
    options: dict[str, Any]
    host: dict[str, Any]
    tool_version: str
    primary_metric: str
    results: dict[str, ComparisonResult]
    invocations: list[Invocation]
    warnings: list[str] = field(default_factory=list)
    analysis_error: str | None = None
    #: One command benchmarked on its own (method "single"): its statistics; then `results` is empty.
    benchmark: Benchmark | None = None

    @property
    def primary(self) -> ComparisonResult | None:
        return self.results.get(self.primary_metric)
