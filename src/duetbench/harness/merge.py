"""Giving harness iterations the timestamps our hooks logged for them."""
from __future__ import annotations

from dataclasses import replace

from .model import Iteration, LogLine, ParseResult

#: Parsers that report every iteration as printed, without knowing which were warmups.
GENERIC = ("regex", "csv")


def _harness(result: ParseResult) -> str:
    return str(result.metadata.get("harness", "the harness"))


def _pairs(result: ParseResult, log: list[LogLine]) -> tuple[list[tuple[int, LogLine]], str]:
    """Which log line belongs to which iteration (by position), or why they cannot be matched."""
    its = result.iterations
    who = _harness(result)
    # Kinds are only trusted when every line has one: a log mixing hooks that know and hooks that do not
    # cannot say which unkinded line was a warmup.
    if all(line.kind is not None for line in log):
        measured = [i for i, it in enumerate(its) if not it.warmup]
        warm = [i for i, it in enumerate(its) if it.warmup]
        m_lines = [line for line in log if line.kind == "m"]
        w_lines = [line for line in log if line.kind == "w"]
        problems = []
        if len(measured) != len(m_lines):
            problems.append(f"{who} reported {len(measured)} measurement iterations "
                            f"but the hook logged {len(m_lines)}")
        # Harnesses that do not report warmups (JMH JSON) leave the hook's warmup lines unused.
        if warm and len(warm) != len(w_lines):
            problems.append(f"{who} reported {len(warm)} warmup iterations but the hook logged {len(w_lines)}")
        if problems and not warm and len(its) == len(log) and result.metadata.get("harness") in GENERIC:
            # A generic parser (a regex over stdout, a CSV) sees every iteration the harness printed,
            # warmups included, without knowing which were warmups: one iteration per hook line, so
            # match them all and let the log say which were warmups (attach_log marks them). Not for
            # JMH and the like, whose outputs leave warmups out: equal counts there are a coincidence.
            return list(zip(range(len(its)), log, strict=True)), ""
        if problems:
            return [], "; ".join(problems)
        return list(zip(measured, m_lines, strict=True)) + list(zip(warm, w_lines, strict=False)), ""
    if len(its) != len(log):
        return [], (f"{who} reported {len(its)} iterations but the hook logged {len(log)} "
                    "(the log has no warmup/measurement kinds to tell them apart)")
    return list(zip(range(len(its)), log, strict=True)), ""


def attach_log(result: ParseResult, log: list[LogLine]) -> ParseResult:
    """Give each iteration the CLOCK_MONOTONIC start/end of its hook log line, matched in order.

    With kinds in the log, measurement iterations match ``m`` lines and, when the harness reports warmups,
    warmup iterations match ``w`` lines; without kinds, all iterations match all lines. Counts must agree.
    On a match the hook's timestamps replace any the harness gave (they share one clock with the other
    side's hook and have ns resolution). On a mismatch the result keeps its own timestamps, if any, and
    ``timestamp_note`` says what did not match.
    """
    if not log or not result.iterations:
        return result
    pairs, problem = _pairs(result, log)
    if problem:
        if result.clock != "none":
            return replace(result, timestamp_note=f"kept {_harness(result)}'s own timestamps: {problem}")
        return replace(result, timestamp_note=f"no timestamps: {problem}")
    its: list[Iteration] = list(result.iterations)
    for i, line in pairs:
        # The hook knows warmups the harness did not flag; a harness's own warmup flag always stands.
        warmup = its[i].warmup or line.kind == "w"
        its[i] = replace(its[i], start_ns=line.start_ns, end_ns=line.end_ns, warmup=warmup)
    return replace(result, iterations=its, clock="monotonic", timestamp_note="")
