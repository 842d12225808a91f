"""Everything a report shows, gathered once; the renderers only format it."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from duetbench.analyze.comparison import ComparisonResult
from duetbench.execute.invocation import Invocation


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

    @property
    def primary(self) -> ComparisonResult | None:
        return self.results.get(self.primary_metric)
