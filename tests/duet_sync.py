"""Shared by the hook tests (C and Python): reading iteration logs and checking two sides' synchronization."""
from __future__ import annotations

import re
import statistics
from pathlib import Path

LINE = re.compile(r"^([AB]) (\d+) (\d+) (\d+)(?: ([wm]))?$")
Row = tuple[str, int, int, int, "str | None"]  # side, index, start_ns, end_ns, kind


def parse_log(path: Path) -> list[Row]:
    rows = []
    for line in path.read_text().splitlines():
        m = LINE.match(line)
        assert m, f"malformed log line {line!r}"
        rows.append((m[1], int(m[2]), int(m[3]), int(m[4]), m[5]))
    return rows


def skews_us(a: list[Row], b: list[Row]) -> list[float]:
    return [abs(x[2] - y[2]) / 1000 for x, y in zip(a, b)]


def assert_synchronized(a: list[Row], b: list[Row], label: str) -> None:
    """The barrier's guarantee, whatever the load: the k-th iteration of either side starts after both
    sides ended iteration k-1. And the quality: on a quiet machine every start is within ~0.1 us; a
    busy one (other jobs preempting our pinned processes) still leaves many within tens of us, while
    unsynchronized sides drift apart by milliseconds."""
    for k in range(1, min(len(a), len(b))):
        assert min(a[k][2], b[k][2]) >= max(a[k - 1][3], b[k - 1][3]), f"{k} started before {k - 1} ended"
    skew = skews_us(a, b)
    print(f"\n{label}: start skew median {statistics.median(skew):.3f} us, max {max(skew):.3f} us, n={len(skew)}")
    assert sum(s < 50 for s in skew) >= len(skew) / 4, sorted(skew)
