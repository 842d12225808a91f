"""DaCapo 9.12 / 23.x: the harness's own per-iteration banners on stderr (9.12) or stdout (some 23.x builds).

    ===== DaCapo 23.11-chopin fop completed warmup 1 in 1234 msec =====   -> warmup iteration
    ===== DaCapo 23.11-chopin fop PASSED in 1234 msec =====               -> measured iteration

Values have millisecond resolution (``System.currentTimeMillis``). A FAILED banner is an error: the
harness's validation of that iteration failed.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Literal

from ...errors import DuetError
from .._common import Options as _Base
from ..model import Iteration, ParseResult, ParserInput

TIMESTAMP_NOTE = ("DaCapo prints durations only; run it with our callback (-c io.duetbench.dacapo.DuetCallback) "
                  "so the hook logs every iteration")

# "mesc" is a typo printed by some DaCapo forks' callbacks; "===== DaCapo processed N requests ..." and the
# tail-latency lines of 23.x do not match because they lack "PASSED"/"completed warmup" after one name.
_DONE = re.compile(r"^===== DaCapo (?P<version>\S+) (?P<bench>\S+) "
                   r"(?:completed warmup (?P<warmup>\d+)|PASSED) in (?P<ms>\d+) m(?:sec|esc) =====\s*$")
_FAILED = re.compile(r"^===== DaCapo (?P<version>\S+) (?P<bench>\S+) FAILED (?:warmup )?=====\s*$")


class Options(_Base):
    stream: Literal["stdout", "stderr", "both"] = "both"
    """Where the banners are; "both" accepts either, but not banners in both."""


def _scan(lines: Iterable[str], where: str) -> tuple[list[Iteration], str]:
    iterations: list[Iteration] = []
    per_bench: dict[str, int] = {}
    version = ""
    for number, line in enumerate(lines, start=1):
        failed = _FAILED.match(line)
        if failed:
            raise DuetError(f"{where} line {number}: DaCapo reports {failed['bench']} FAILED "
                            "(the harness's validation of an iteration failed)",
                            hint="see the benchmark's output above that line")
        m = _DONE.match(line)
        if not m:
            continue
        version = m["version"]
        bench = m["bench"]
        index = per_bench.get(bench, 0)
        per_bench[bench] = index + 1
        iterations.append(Iteration(index=index, value_s=int(m["ms"]) / 1000.0, warmup=m["warmup"] is not None,
                                    name=bench))
    return iterations, version


def parse(inp: ParserInput, options: Options) -> ParseResult:
    found: dict[str, tuple[list[Iteration], str]] = {}
    for stream in ("stdout", "stderr"):
        if options.stream in (stream, "both"):
            found[stream] = _scan(inp.lines(stream), stream)
    with_banners = [s for s, (its, _) in found.items() if its]
    if len(with_banners) > 1:
        raise DuetError("dacapo: DaCapo banners appear on both stdout and stderr, so their order is unknown",
                        hint="set the parser option stream: stdout or stream: stderr")
    stream = with_banners[0] if with_banners else options.stream
    iterations, version = found.get(stream, ([], ""))
    metadata: dict[str, str | int | float] = {"harness": "DaCapo", "source": stream, "resolution_s": 0.001}
    if version:
        metadata["dacapo_version"] = version
    return ParseResult(iterations, clock="none", timestamp_note=TIMESTAMP_NOTE, metadata=metadata)
