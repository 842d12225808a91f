from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from duetbench.errors import DuetError
from duetbench.harness import (
    LogLine,
    ParserInput,
    get_parser,
    parse,
    parser_names,
    validate_parser_options,
)
from duetbench.harness.registry import BUILTINS

USER_MODULE = '''
from pydantic import BaseModel, ConfigDict
from duetbench.harness import Iteration, ParseResult


def lines(inp, options):
    """One iteration per line of stdout holding a number; options: {'scale': factor}."""
    scale = float(options.get("scale", 1.0))
    values = [float(t) * scale for t in inp.stdout.split()]
    return ParseResult([Iteration(i, v) for i, v in enumerate(values)], clock="none", metadata={"harness": "lines"})


class TimesOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    factor: int = 1


class Times:
    name = "times"
    options_model = TimesOptions

    def parse(self, inp, options):
        values = [float(t) * options.factor for t in inp.stdout.split()]
        return ParseResult([Iteration(i, v) for i, v in enumerate(values)], clock="none")


times = Times()


def broken(inp, options):
    return [1, 2, 3]


def negative(inp, options):
    return ParseResult([Iteration(0, -1.0)], clock="none")


not_callable = 42
'''


@pytest.fixture()
def user_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory on sys.path holding a user module and an installed distribution declaring entry points."""
    mod = f"userparsers_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{mod}.py").write_text(USER_MODULE)
    dist = tmp_path / "userparsers-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: userparsers\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(textwrap.dedent(f"""\
        [duetbench.parsers]
        lines = {mod}:lines
        times = {mod}:times
        jmh = {mod}:lines
        broken-import = no_such_module_xyz:parse
        """))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    return tmp_path


def module_of(site: Path) -> str:
    return next(p.stem for p in site.glob("userparsers_*.py"))


def test_builtin_names_come_first_and_every_builtin_loads() -> None:
    names = parser_names()
    assert names[: len(BUILTINS)] == list(BUILTINS)
    for name in BUILTINS:
        p = get_parser(name)
        assert p.name == name and p.options_model.model_config.get("extra") == "forbid"


def test_entry_point_function_and_object(user_site: Path) -> None:
    assert {"lines", "times", "broken-import"} <= set(parser_names())
    assert parser_names().count("jmh") == 1  # a built-in is never shadowed
    r = parse("lines", {"scale": 0.001}, ParserInput(stdout="1 2 3"))
    assert [it.value_s for it in r.iterations] == pytest.approx([0.001, 0.002, 0.003])
    assert [it.value_s for it in parse("times", {"factor": 2}, ParserInput(stdout="1 2")).iterations] == [2.0, 4.0]
    assert validate_parser_options("times", {"factor": "x"})[0][0] == ("factor",)
    assert validate_parser_options("times", {"nope": 1}) == [(("nope",), "unknown option 'nope' (known: factor)")]
    assert validate_parser_options("lines", {"anything": [1, 2]}) == []


def test_broken_entry_point_is_one_clear_line(user_site: Path) -> None:
    problems = validate_parser_options("broken-import", {})
    assert len(problems) == 1 and problems[0][0] == ()
    assert "parser 'broken-import': cannot load entry point no_such_module_xyz:parse: ModuleNotFoundError" in \
        problems[0][1]


def test_module_function_spec(user_site: Path) -> None:
    mod = module_of(user_site)
    r = parse(f"{mod}:lines", {}, ParserInput(stdout="4 5"))
    assert [it.value_s for it in r.iterations] == [4.0, 5.0]
    assert parse(f"{mod}:times", {"factor": 3}, ParserInput(stdout="1")).iterations[0].value_s == 3.0
    assert "has no attribute 'nothing'" in validate_parser_options(f"{mod}:nothing", {})[0][1]
    assert "cannot import module 'no_such_mod_q'" in validate_parser_options("no_such_mod_q:f", {})[0][1]
    assert "is neither a function" in validate_parser_options(f"{mod}:not_callable", {})[0][1]


def test_user_parser_results_are_checked(user_site: Path) -> None:
    mod = module_of(user_site)
    with pytest.raises(DuetError, match=f"parser '{mod}:broken' returned list, expected a ParseResult"):
        parse(f"{mod}:broken", {}, ParserInput())
    with pytest.raises(DuetError, match="has value -1.0 s, expected a finite non-negative number"):
        parse(f"{mod}:negative", {}, ParserInput())


def test_unknown_parser_and_bad_options() -> None:
    (loc, msg), = validate_parser_options("jhm", {})
    assert loc == () and msg.startswith("unknown parser 'jhm'; known: jmh, dacapo, renaissance-json")
    with pytest.raises(DuetError, match="unknown parser 'jhm'"):
        parse("jhm", {}, ParserInput())
    assert validate_parser_options("jmh", {"fiel": "x"}) == [(("fiel",), "unknown option 'fiel' (known: file, params_in_name)")]
    assert validate_parser_options("jmh", None) == []
    assert validate_parser_options("jmh", ["file"]) == [((), "parser options must be a mapping, not list")]
    assert validate_parser_options("regex", {}) == [(("pattern",), "required option 'pattern' is missing")]
    assert validate_parser_options("hyperfine", {"command": 1}) == []


def test_iteration_log_parser() -> None:
    log = [LogLine("A", 0, 100, 300, "w"), LogLine("A", 1, 400, 1400, "m"), LogLine("B", 0, 1, 2),
           LogLine("A", 0, 2000, 2500, "m")]
    r = parse("iteration-log", {}, ParserInput(iteration_log=log, side="A"))
    assert [(it.value_s, it.start_ns, it.end_ns, it.warmup, it.fork, it.index) for it in r.iterations] == [
        (2e-7, 100, 300, True, 0, 0), (1e-6, 400, 1400, False, 0, 1), (5e-7, 2000, 2500, False, 1, 2)]
    assert r.clock == "monotonic"
    with pytest.raises(DuetError, match="the hook's iteration log of side B: parser 'iteration-log' found no"):
        parse("iteration-log", {}, ParserInput(iteration_log=log[:2], side="B"))


def test_the_worked_example_in_docs_parsers_md_works(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "parsers.md").read_text()
    start = doc.index("```python\n# mybench_parsers.py") + len("```python\n")
    (tmp_path / "mybench_parsers.py").write_text(doc[start: doc.index("```", start)])
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "mybench_parsers", raising=False)
    out = "hello\nop=get took=12.5us\nop=put took=30us\nop=get took=10us\n"
    r = parse("mybench_parsers:took", {"skip_first": 1}, ParserInput(stdout=out))
    assert [(it.name, it.index, it.value_s, it.warmup) for it in r.iterations] == [
        ("get", 0, pytest.approx(12.5e-6), True), ("put", 0, pytest.approx(30e-6), True),
        ("get", 1, pytest.approx(10e-6), False)]
    assert validate_parser_options("mybench_parsers:took", {"skip": 1})[0][0] == ("skip",)
    with pytest.raises(DuetError, match="stdout line 1: cannot read 'op=x took=fast'"):
        parse("mybench_parsers:took", {}, ParserInput(stdout="op=x took=fast\n"))
    monkeypatch.delitem(sys.modules, "mybench_parsers", raising=False)
