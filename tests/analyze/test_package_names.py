"""`duetbench.analyze` loads its names on first use (PEP 562): every name it exports has a module to come
from, every such name is exported, and each resolves to the object its module defines."""
from __future__ import annotations

import importlib
from pathlib import Path

import duetbench.analyze as analyze


def test_every_exported_name_has_one_home_and_resolves() -> None:
    where = analyze._WHERE
    assert sorted(analyze.__all__) == sorted(where)
    assert len(set(analyze.__all__)) == len(analyze.__all__)
    # A name that is also a submodule's would be that module once anything imports it (`verdict` was).
    modules = {p.stem for p in Path(analyze.__file__).parent.iterdir() if p.suffix == ".py" or p.is_dir()}
    assert not set(where) & modules
    for name, module in where.items():
        importlib.import_module(f"duetbench.analyze.{module}")
        assert getattr(analyze, name) is getattr(importlib.import_module(f"duetbench.analyze.{module}"), name)


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        analyze.no_such_estimator  # noqa: B018
    except AttributeError as exc:
        assert "no_such_estimator" in str(exc)
    else:
        raise AssertionError("no AttributeError")
