from __future__ import annotations

import pytest
from harness_fixtures import fixture

from duetbench.errors import DuetError
from duetbench.harness import LogLine, ParserInput, parse

STDERR_912 = fixture("dacapo_9.12_stderr.txt").read_text()
STDOUT_23 = fixture("dacapo_23.11_stdout.txt").read_text()


def test_912_banners_on_stderr_with_warmups() -> None:
    r = parse("dacapo", {}, ParserInput(stdout="fop output\n", stderr=STDERR_912))
    assert [(it.value_s, it.warmup, it.index, it.name) for it in r.iterations] == [
        (1.234, True, 0, "fop"), (0.987, True, 1, "fop"), (0.876, False, 2, "fop")]
    assert r.clock == "none" and "callback" in r.timestamp_note
    assert r.metadata["dacapo_version"] == "9.12" and r.metadata["source"] == "stderr"


def test_23x_banners_on_stdout_ignore_request_and_latency_lines_and_keep_benchmarks_apart() -> None:
    r = parse("dacapo", {"stream": "stdout"}, ParserInput(stdout=STDOUT_23))
    assert [(it.name, it.index, it.value_s, it.warmup) for it in r.iterations] == [
        ("cassandra", 0, 7.745, True), ("cassandra", 1, 6.012, False), ("fop", 0, 0.321, False)]
    assert r.metadata["dacapo_version"] == "23.11-MR2-chopin"


def test_banners_on_both_streams_are_ambiguous_unless_a_stream_is_chosen() -> None:
    both = ParserInput(stdout=STDOUT_23, stderr=STDERR_912)
    with pytest.raises(DuetError, match="both stdout and stderr.*stream: stdout or stream: stderr"):
        parse("dacapo", {}, both)
    assert len(parse("dacapo", {"stream": "stderr"}, both).iterations) == 3


def test_failed_iteration_is_an_error_naming_the_line() -> None:
    text = STDERR_912.replace("===== DaCapo 9.12 fop PASSED in 876 msec =====", "===== DaCapo 9.12 fop FAILED =====")
    with pytest.raises(DuetError, match=r"^stderr line 7: DaCapo reports fop FAILED"):
        parse("dacapo", {}, ParserInput(stderr=text))


def test_no_banner_is_an_error() -> None:
    with pytest.raises(DuetError, match="parser 'dacapo' found no iterations"):
        parse("dacapo", {}, ParserInput(stdout="hello\n"))


def test_callback_log_with_unknown_kinds_gives_all_iterations_timestamps() -> None:
    log = [LogLine("A", i, 10_000 * i, 10_000 * i + 5_000) for i in range(3)]
    r = parse("dacapo", {}, ParserInput(stderr=STDERR_912, iteration_log=log))
    assert r.clock == "monotonic"
    assert [(it.start_ns, it.end_ns, it.warmup) for it in r.iterations] == [
        (0, 5_000, True), (10_000, 15_000, True), (20_000, 25_000, False)]


def test_callback_log_of_the_other_side_is_ignored() -> None:
    log = [LogLine("B", i, 10 * i, 10 * i + 5) for i in range(3)]
    r = parse("dacapo", {}, ParserInput(stderr=STDERR_912, iteration_log=log, side="A"))
    assert r.clock == "none"
