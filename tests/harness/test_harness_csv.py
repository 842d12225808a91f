from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from duetbench.errors import DuetError
from duetbench.harness import ParserInput, parse, validate_parser_options


def run(tmp_path: Path, text: str, **options: object):
    f = tmp_path / "t.csv"
    f.write_text(text)
    return parse("csv", dict(options), ParserInput(files={"t.csv": f}))


def test_values_units_names_and_warmups(tmp_path: Path) -> None:
    r = run(tmp_path, "bench,ms,phase\nx,1.5,w\nx,2,m\ny,0.25,measurement\n", value="ms", unit="ms",
            name="bench", warmup="phase")
    assert [(it.name, it.index, it.value_s, it.warmup) for it in r.iterations] == [
        ("x", 0, 0.0015, True), ("x", 1, 0.002, False), ("y", 0, 0.00025, False)]
    assert r.clock == "none" and "no 'start' column" in r.timestamp_note


def test_start_and_end_in_epoch_seconds_keep_nanosecond_precision(tmp_path: Path) -> None:
    r = run(tmp_path, "t;s;e\n0.5;1700000000.123456789;1700000000.623456789\n", value="t", start="s", end="e",
            clock="epoch", timestamp_unit="s", delimiter=";")
    it = r.iterations[0]
    assert r.clock == "epoch" and it.start_ns == 1_700_000_000_123_456_789 and it.end_ns == 1_700_000_000_623_456_789


def test_start_without_end_lasts_value(tmp_path: Path) -> None:
    r = run(tmp_path, "us,t0\n250,1000\n", value="us", unit="us", start="t0", timestamp_unit="us")
    assert r.clock == "monotonic" and (r.iterations[0].start_ns, r.iterations[0].end_ns) == (1_000_000, 1_250_000)


@pytest.mark.parametrize("text, options, message", [
    ("a,b\n1,2\n", {"value": "c"}, "t.csv: no column 'c' (option value); the header has: a, b"),
    ("a\nfast\n", {"value": "a"}, "t.csv:2: column 'a' is 'fast', not a non-negative number"),
    ("a\n-1\n", {"value": "a"}, "t.csv:2: column 'a' is '-1', not a non-negative number"),
    ("a\nnan\n", {"value": "a"}, "not a non-negative number"),
    ("a,s,e\n1,5,4\n", {"value": "a", "start": "s", "end": "e"}, "t.csv:2: end 4 is before start 5"),
    ("a,s\n1,yesterday\n", {"value": "a", "start": "s"}, "t.csv:2: column 's' is 'yesterday', not a number"),
    ("a,w\n1,maybe\n", {"value": "a", "warmup": "w"}, "t.csv:2: column 'w' is 'maybe', not a warmup flag"),
    ("a,b\n1\n", {"value": "b"}, "t.csv:2: 1 fields, the header has 2"),
    ("", {"value": "a"}, "empty file"),
    # ms read as ns-since-epoch in s: beyond the store's 64-bit integers, a traceback after the run
    ("a,s\n1,1700000000123\n", {"value": "a", "start": "s", "timestamp_unit": "s"},
     "has timestamp 1700000000123000000000 ns, beyond 64 bits"),
])
def test_errors_name_file_line_and_column(tmp_path: Path, text: str, options: dict, message: str) -> None:
    with pytest.raises(DuetError) as e:
        run(tmp_path, text, **options)
    assert message in str(e.value)


def test_option_validation() -> None:
    assert validate_parser_options("csv", {"value": "t"}) == []
    assert validate_parser_options("csv", {"value": "t", "end": "e"}) == [((), "option 'end' needs option 'start'")]
    assert validate_parser_options("csv", {"value": "t", "delimiter": "::"}) == [
        (("delimiter",), "delimiter must be exactly one character")]
    assert validate_parser_options("csv", {"value": "t", "unit": "h"})[0][0] == ("unit",)


@settings(max_examples=100, deadline=None)
@given(rows=st.lists(st.tuples(st.sampled_from(["a", "b,c", 'q"t']), st.floats(0, 1e6, allow_nan=False),
                               st.integers(0, 2**62), st.integers(0, 10**12), st.booleans()), min_size=1,
                     max_size=20),
       delimiter=st.sampled_from([",", ";", "\t"]))
def test_property_written_table_reads_back(tmp_path_factory: pytest.TempPathFactory, rows: list, delimiter: str) -> None:
    buf = io.StringIO()
    w = csv.writer(buf, delimiter=delimiter)
    w.writerow(["name", "value", "start", "end", "warm"])
    for name, value, start, dur, warm in rows:
        w.writerow([name, repr(value), start, start + dur, "true" if warm else "false"])
    f = tmp_path_factory.mktemp("csv") / "t.csv"
    f.write_text(buf.getvalue())
    r = parse("csv", {"value": "value", "start": "start", "end": "end", "name": "name", "warmup": "warm",
                      "delimiter": delimiter}, ParserInput(files={"t.csv": f}))
    assert [(it.name, it.value_s, it.start_ns, it.end_ns, it.warmup) for it in r.iterations] == [
        (n, v, s, s + d, w) for n, v, s, d, w in rows]
