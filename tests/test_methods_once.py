"""The three methods are named once, in model/method.py, and every layer imports them (issue 14)."""
from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import get_args

from duetbench.model.method import COMPARE_METHODS, METHODS, CompareMethod, Method

SRC = Path(__file__).resolve().parents[1] / "src" / "duetbench"


def test_the_literals_match_the_tuples() -> None:
    assert get_args(Method) == METHODS
    assert get_args(CompareMethod) == COMPARE_METHODS


def test_no_module_spells_the_three_methods_out_again() -> None:
    quoted = [f'["\']{m}["\']' for m in METHODS]
    spelled = re.compile("|".join(r"\s*,\s*".join(p) for p in itertools.permutations(quoted)))
    found = [str(path.relative_to(SRC)) for path in SRC.rglob("*.py")
             if path.name != "method.py" and spelled.search(path.read_text())]
    assert found == [], f"import METHODS from duetbench.model.method instead: {found}"


def test_the_command_line_offers_them() -> None:
    from duetbench.cli.analyze import analysis_options
    from duetbench.cli.main import main

    compare = main.get_command(None, "compare")  # type: ignore[arg-type]
    [method] = [p for p in compare.params if p.name == "method"]
    assert tuple(method.type.choices) == COMPARE_METHODS  # type: ignore[attr-defined]
    command = analysis_options(lambda **_: None)
    assert any(tuple(getattr(p.type, "choices", ())) == METHODS for p in getattr(command, "__click_params__", []))
