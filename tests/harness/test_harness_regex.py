from __future__ import annotations

import pytest

from duetbench.errors import DuetError
from duetbench.harness import ParserInput, parse, validate_parser_options

OUT = """starting
iter 0 warmup=1 took 12.5 ms at 1000 until 13500
iter 1 warmup=0 took 10 ms at 20000 until 30000
noise: took ms
iter 2 warmup=0 took 9.75 ms at 40000 until 49750
"""
PATTERN = r"^iter \d+ warmup=(?P<warmup>[01]) took (?P<value>[\d.]+) ms at (?P<start>\d+) until (?P<end>\d+)$"


def test_values_timestamps_and_warmups_from_stdout() -> None:
    r = parse("regex", {"pattern": PATTERN, "unit": "ms", "timestamp_unit": "us"}, ParserInput(stdout=OUT))
    assert [(it.value_s, it.start_ns, it.end_ns, it.warmup) for it in r.iterations] == [
        (0.0125, 1_000_000, 13_500_000, True), (0.010, 20_000_000, 30_000_000, False),
        (0.00975, 40_000_000, 49_750_000, False)]
    assert r.clock == "monotonic"


def test_stderr_names_and_no_timestamps() -> None:
    err = "bench=fib time=0.5\nbench=fib time=0.25\nbench=sort time=2\n"
    r = parse("regex", {"pattern": r"bench=(?P<name>\w+) time=(?P<value>\S+)", "stream": "stderr"},
              ParserInput(stdout="bench=zzz time=99\n", stderr=err))
    assert [(it.name, it.index, it.value_s) for it in r.iterations] == [("fib", 0, 0.5), ("fib", 1, 0.25),
                                                                       ("sort", 0, 2.0)]
    assert r.clock == "none" and "(?P<start>" in r.timestamp_note


def test_pattern_problems_are_found_at_validation_time() -> None:
    assert validate_parser_options("regex", {"pattern": r"took (?P<value>\d+"})[0][0] == ("pattern",)
    assert "invalid regular expression" in validate_parser_options("regex", {"pattern": "(?P<value>\\d+"})[0][1]
    assert validate_parser_options("regex", {"pattern": r"took (\d+)"}) == [
        (("pattern",), "the pattern needs a named group (?P<value>...) for the measured value")]
    assert validate_parser_options("regex", {"pattern": r"(?P<value>\d+) (?P<end>\d+)"})[0][1].startswith(
        "a group (?P<end>...) needs")
    with pytest.raises(DuetError, match=r"^parser 'regex' option 'pattern': invalid regular expression"):
        parse("regex", {"pattern": "(?P<value>"}, ParserInput(stdout="1"))


def test_bad_captured_value_names_the_line() -> None:
    with pytest.raises(DuetError, match=r"^stdout line 2: group 'value' is '1.2.3', not a non-negative number"):
        parse("regex", {"pattern": r"t=(?P<value>\S+)"}, ParserInput(stdout="x\nt=1.2.3\n"))


def test_nothing_matched_is_an_error() -> None:
    with pytest.raises(DuetError, match="^stdout: parser 'regex' found no iterations"):
        parse("regex", {"pattern": r"t=(?P<value>\S+)"}, ParserInput(stdout="nothing here\n"))
