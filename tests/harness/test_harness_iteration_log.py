from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from duetbench.errors import DuetError
from duetbench.harness import LogLine, read_iteration_log
from duetbench.harness.iteration_log import parse_iteration_log


def test_reads_lines_kinds_comments_and_blank_lines(tmp_path: Path) -> None:
    f = tmp_path / "A.log"
    f.write_text("# written by the JMH hook\nA 0 1234567890123 1234567990456 w\n\nA 1 1234567991000 1234568091200 m\n"
                 "A 0 5 9\n")
    log = read_iteration_log(f)
    assert log.lines == [LogLine("A", 0, 1234567890123, 1234567990456, "w"),
                         LogLine("A", 1, 1234567991000, 1234568091200, "m"), LogLine("A", 0, 5, 9, None)]
    assert log.notes == []


def test_torn_last_line_is_a_note_not_an_error(tmp_path: Path) -> None:
    f = tmp_path / "A.log"
    f.write_bytes(b"A 0 10 20 m\nA 1 30 4")
    log = read_iteration_log(f)
    assert log.lines == [LogLine("A", 0, 10, 20, "m")]
    assert len(log.notes) == 1 and f"{f}:2: ignored the unterminated last line 'A 1 30 4'" in log.notes[0]


@pytest.mark.parametrize("bad", ["C 0 1 2", "A x 1 2", "A 0 1", "A 0 1 2 m extra", "A 0 5 4", "A 0 1 2 q",
                                 "A -1 1 2", "A 0 +1 2", "A 0 1 2 ", "A\t0 1 2", "A 0 1 2 é",
                                 # beyond the 64-bit integers the store keeps (was a traceback after the run)
                                 f"A 0 1 {2**63}", f"A {2**63} 1 2"])
def test_malformed_line_is_an_error_naming_file_and_line(tmp_path: Path, bad: str) -> None:
    f = tmp_path / "B.log"
    f.write_bytes(("A 0 1 2\n" + bad + "\nA 2 5 6\n").encode())
    with pytest.raises(DuetError) as e:
        read_iteration_log(f)
    assert str(e.value).startswith(f"{f}:2: malformed iteration-log line")
    assert "\n" not in str(e.value)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(DuetError, match="iteration log not found"):
        read_iteration_log(tmp_path / "nope.log")
    assert read_iteration_log(tmp_path / "nope.log", missing_ok=True).lines == []


def test_for_side(tmp_path: Path) -> None:
    log = parse_iteration_log("A 0 1 2\nB 0 3 4\n", tmp_path / "x")
    assert log.for_side("B") == [LogLine("B", 0, 3, 4)]


_line = st.builds(
    lambda side, index, start, dur, kind: LogLine(side, index, start, start + dur, kind),
    st.sampled_from(["A", "B"]), st.integers(0, 10**6), st.integers(0, 2**63 - 1 - 10**12), st.integers(0, 10**12),
    st.sampled_from([None, "w", "m"]))


def _text(line: LogLine) -> str:
    return " ".join([line.side, str(line.index), str(line.start_ns), str(line.end_ns)] +
                    ([line.kind] if line.kind else []))


@settings(max_examples=200, deadline=None)
@given(lines=st.lists(_line, max_size=30), torn=st.text(alphabet="AB 0123456789wm", max_size=20),
       comments=st.lists(st.integers(0, 30), max_size=3))
def test_property_written_lines_read_back_and_torn_tail_is_noted(lines: list[LogLine], torn: str,
                                                                 comments: list[int]) -> None:
    texts = [_text(line) for line in lines]
    for at in sorted(comments, reverse=True):
        texts.insert(min(at, len(texts)), "# comment")
    content = "".join(t + "\n" for t in texts) + torn
    log = parse_iteration_log(content, Path("x.log"))
    assert log.lines == lines
    assert len(log.notes) == (1 if torn.strip() else 0)
