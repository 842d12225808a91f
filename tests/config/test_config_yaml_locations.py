"""YAML -> data with the position of every key and value."""
from __future__ import annotations

import pytest

from duetbench.config.placeholders import problems as placeholder_problems
from duetbench.config.yaml_locations import Mark, YamlSyntaxError, last_line, locate

TEXT = """\
a: 1
on: yes
list:
  - x
  - {k: v}
base: &b {p: 1, q: 2}
merged:
  <<: *b
  q: 3
a: 2
"""


def test_data_and_positions() -> None:
    located = locate(TEXT)
    assert located is not None
    # keys are the text as written (YAML 1.1 would read 'on' as true); duplicate: the last value is kept
    assert located.data == {"a": 2, "on": True, "list": ["x", {"k": "v"}], "base": {"p": 1, "q": 2},
                            "merged": {"p": 1, "q": 3}}
    assert located.key_marks[("a",)] == Mark(10, 1)
    assert located.value_marks[("on",)] == Mark(2, 5)
    assert located.plain_text[("on",)] == "yes"
    assert located.value_marks[("list", 1, "k")] == Mark(5, 9)
    assert located.key_marks[("merged", "q")] == Mark(9, 3)   # its own key wins over the merged one
    assert located.key_marks[("merged", "p")] == Mark(6, 11)  # a merged key is shown where it is written
    assert [(p.path, p.mark, p.message) for p in located.problems] == [
        (("a",), Mark(10, 1), "duplicate key 'a' (first at line 1)")]


def test_nearest_enclosing_position_for_paths_that_do_not_exist() -> None:
    located = locate(TEXT)
    assert located is not None
    assert located.value_mark(("list", 1, "nope", "deeper")) == Mark(5, 5)
    assert located.key_mark(("merged", "nope")) == Mark(7, 1)
    assert located.key_mark(()) == Mark(1, 1)


def test_empty_documents() -> None:
    assert locate("") is None and locate("# c\n") is None and locate("---\n...\n") is None and locate("~") is None


def test_syntax_error_position() -> None:
    with pytest.raises(YamlSyntaxError) as info:
        locate("a: 'unclosed\n")
    assert info.value.mark.line in (1, 2) and "quoted scalar" in info.value.message


@pytest.mark.parametrize("text, expected", [
    ("", Mark(1, 1)), ("abc", Mark(1, 4)), ("abc\n", Mark(1, 4)), ("a\nbc\n\n\n", Mark(2, 3)), ("a\r\nb", Mark(2, 2)),
])
def test_last_line(text: str, expected: Mark) -> None:
    assert last_line(text) == expected


@pytest.mark.parametrize("template, messages", [
    ("plain", []), ("{outdir}/{side}/{benchmark}/{method}/{run}", []), ("{{literal}} }}", []),
    ("{outdr}", ["unknown placeholder {outdr}"]), ("{}", ["unknown placeholder {}"]),
    ("a { b", ["unmatched '{' at character 3"]), ("a } b", ["unmatched '}' at character 3"]),
    ("{run:03d}", ["unknown placeholder {run:03d}"]), ("{{{side}}}", []),
])
def test_placeholder_problems(template: str, messages: list[str]) -> None:
    assert [m for m, _ in placeholder_problems(template)] == messages
