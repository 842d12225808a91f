"""Iterations purely from our hooks' iteration log: value = end − start, clock CLOCK_MONOTONIC, or the
harness's own value where the hook logged one (JMH's score per operation: its iterations last a fixed time).

For harnesses whose own output we do not read. ``Iteration.fork`` counts the processes: the hook's index
restarts in every process (docs/hooks.md), so a non-increasing index starts a new one.
"""
from __future__ import annotations

from .._common import Options as _Base
from ..model import Iteration, ParseResult, ParserInput


class Options(_Base):
    pass


def parse(inp: ParserInput, options: Options) -> ParseResult:
    iterations: list[Iteration] = []
    fork = 0
    previous = -1
    for line in inp.iteration_log:
        if line.side != inp.side:
            continue
        if line.index <= previous:
            fork += 1
        previous = line.index
        value = line.value_s if line.value_s is not None else (line.end_ns - line.start_ns) / 1e9
        iterations.append(Iteration(len(iterations), value, line.start_ns,
                                    line.end_ns, warmup=line.kind == "w", fork=fork))
    return ParseResult(iterations, clock="monotonic", metadata={"harness": "iteration log",
                       "source": f"the hook's iteration log of side {inp.side}"})
