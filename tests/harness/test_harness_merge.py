from __future__ import annotations

from duetbench.harness import Iteration, LogLine, ParseResult, attach_log


def result(warmups: int, measured: int, clock: str = "none") -> ParseResult:
    its = [Iteration(i, 1.0, warmup=i < warmups) for i in range(warmups + measured)]
    if clock != "none":
        its = [Iteration(it.index, it.value_s, 7 + it.index, 8 + it.index, it.warmup) for it in its]
    return ParseResult(its, clock=clock, timestamp_note="JMH JSON has no timestamps",  # type: ignore[arg-type]
                       metadata={"harness": "JMH"})


def kinded(w: int, m: int) -> list[LogLine]:
    return [LogLine("A", i, 100 * i, 100 * i + 10, "w" if i < w else "m") for i in range(w + m)]


def test_measurements_match_m_lines_when_harness_reports_no_warmups() -> None:
    r = attach_log(result(0, 3), kinded(2, 3))
    assert r.clock == "monotonic" and r.timestamp_note == ""
    assert [(it.start_ns, it.end_ns) for it in r.iterations] == [(200, 210), (300, 310), (400, 410)]


def test_warmups_match_w_lines_when_the_harness_reports_them() -> None:
    r = attach_log(result(2, 3), kinded(2, 3))
    assert [it.start_ns for it in r.iterations] == [0, 100, 200, 300, 400]


def test_count_mismatch_says_exactly_what_did_not_match() -> None:
    r = attach_log(result(0, 10), kinded(2, 8))
    assert r.clock == "none" and all(it.start_ns is None for it in r.iterations)
    assert r.timestamp_note == "no timestamps: JMH reported 10 measurement iterations but the hook logged 8"
    r = attach_log(result(2, 3), kinded(1, 3))
    assert r.timestamp_note == "no timestamps: JMH reported 2 warmup iterations but the hook logged 1"


def test_unkinded_log_must_cover_every_iteration() -> None:
    plain = [LogLine("A", i, 10 * i, 10 * i + 5) for i in range(4)]
    assert attach_log(result(1, 3), plain).clock == "monotonic"
    r = attach_log(result(0, 3), plain)
    assert r.clock == "none" and "JMH reported 3 iterations but the hook logged 4" in r.timestamp_note


def test_a_partly_kinded_log_is_treated_as_unkinded() -> None:
    mixed = kinded(1, 2)[:2] + [LogLine("A", 2, 200, 210)]
    assert attach_log(result(1, 2), mixed).clock == "monotonic"
    assert attach_log(result(0, 2), mixed).clock == "none"


def test_own_timestamps_are_kept_on_mismatch_and_replaced_on_match() -> None:
    r = attach_log(result(0, 3, clock="epoch"), kinded(0, 2))
    assert r.clock == "epoch" and r.iterations[0].start_ns == 7
    assert r.timestamp_note.startswith("kept JMH's own timestamps: JMH reported 3 measurement")
    r = attach_log(result(0, 3, clock="epoch"), kinded(0, 3))
    assert r.clock == "monotonic" and r.iterations[0].start_ns == 0


def test_empty_log_changes_nothing() -> None:
    res = result(0, 3)
    assert attach_log(res, []) is res


def test_unflagged_harness_output_matches_all_kinded_lines_and_takes_their_warmups() -> None:
    # A regex over stdout sees every iteration, warmups included, without knowing which were warmups.
    from duetbench.harness.merge import attach_log
    from duetbench.harness.model import Iteration, LogLine, ParseResult

    result = ParseResult([Iteration(i, 0.01 * (i + 1)) for i in range(3)], clock="none", timestamp_note="x",
                         metadata={"harness": "regex"})
    log = [LogLine("A", 0, 100, 200, "w"), LogLine("A", 1, 300, 400, "m"), LogLine("A", 2, 500, 600, "m")]
    merged = attach_log(result, log)
    assert merged.clock == "monotonic" and merged.timestamp_note == ""
    assert [(it.start_ns, it.end_ns, it.warmup) for it in merged.iterations] == [
        (100, 200, True), (300, 400, False), (500, 600, False)]
