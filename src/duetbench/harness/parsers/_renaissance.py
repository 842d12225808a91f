"""What the Renaissance JSON and CSV parsers share: turning (uptime_ns, duration_ns) into absolute times.

``uptime_ns`` is ``startNanos − vmStartNanos``, where ``vmStartNanos`` is the ``System.nanoTime()`` value of the
VM start. Since format 6 (v0.16.1) the output also holds that value (``vm.start_ns`` / ``vm_start_ns``), so
``vm_start_ns + uptime_ns`` is the very ``System.nanoTime()`` read when the operation started — on Linux
HotSpot that is CLOCK_MONOTONIC, the clock of our hooks. Older outputs only have the VM start in epoch ms,
which gives epoch timestamps with a 1 ms anchor error.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from .._common import Options as _Base
from .._common import require
from ..model import Clock, Iteration, ParseResult


class Options(_Base):
    file: str | None = None
    """Name of the declared result file; default: the only declared file."""
    clock: Literal["auto", "monotonic", "epoch"] = "auto"
    """auto: monotonic when the output has the VM start in nanoTime (v0.16.1+), else epoch. Pin it to one
    domain when A and B run different Renaissance versions."""


@dataclass(frozen=True)
class Operation:
    benchmark: str
    duration_ns: int
    uptime_ns: int
    vm_start_unix_ms: int
    vm_start_ns: int | None


def build(ops: list[Operation], path: Path, options: Options, metadata: dict[str, str | int | float]) -> ParseResult:
    has_ns = all(op.vm_start_ns is not None for op in ops)
    clock: Clock
    if options.clock == "monotonic":
        require(has_ns, path, "option clock: monotonic needs the VM start in nanoTime (vm_start_ns), which "
                "Renaissance writes since v0.16.1", hint="use clock: epoch, or a newer Renaissance")
        clock = "monotonic"
    elif options.clock == "epoch":
        clock = "epoch"
    else:
        clock = "monotonic" if has_ns else "epoch"
    timed: list[tuple[int, Iteration]] = []
    per_bench: dict[str, int] = {}
    for op in ops:
        require(op.duration_ns >= 0 and op.uptime_ns >= 0, path,
                f"benchmark {op.benchmark!r}: negative duration_ns or uptime_ns")
        if clock == "monotonic":
            assert op.vm_start_ns is not None
            start = op.vm_start_ns + op.uptime_ns
        else:
            start = op.vm_start_unix_ms * 1_000_000 + op.uptime_ns
        index = per_bench.get(op.benchmark, 0)
        per_bench[op.benchmark] = index + 1
        it = Iteration(index=index, value_s=op.duration_ns / 1e9, start_ns=start, end_ns=start + op.duration_ns,
                       name=op.benchmark)
        timed.append((start, it))
    # Renaissance writes benchmarks in hash-map order; the timestamps give the order they actually ran in.
    timed.sort(key=lambda pair: pair[0])
    metadata = {"harness": "Renaissance", "source": str(path), **metadata}
    if clock == "epoch":
        metadata["anchor_resolution_s"] = 0.001
    return ParseResult([it for _, it in timed], clock=clock, metadata=metadata)
