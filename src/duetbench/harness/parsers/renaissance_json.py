"""Renaissance ``--json FILE`` (format_version 5 and 6): one iteration per valid operation, with timestamps."""
from __future__ import annotations

from typing import Any

from ...errors import DuetError
from .._common import load_json, pick_file, require
from ..model import ParseResult, ParserInput
from ._renaissance import Operation, Options, build

__all__ = ["Options", "parse"]


def _int(value: Any, path: Any, what: str) -> int:
    require(isinstance(value, int) and not isinstance(value, bool), path, f"{what} is {value!r}, expected an integer")
    return int(value)


def parse(inp: ParserInput, options: Options) -> ParseResult:
    path = pick_file(inp, options.file, "renaissance-json")
    doc = load_json(path)
    require(isinstance(doc, dict) and isinstance(doc.get("data"), dict), path,
            "not a Renaissance JSON result (no 'data' object)", hint="run Renaissance with --json FILE")
    version = doc.get("format_version")
    require(isinstance(version, int) and version >= 5, path,
            f"Renaissance JSON format_version {version!r} is not supported (5 and later are)")
    env = doc.get("environment")
    vm: Any = env.get("vm") if isinstance(env, dict) else None
    require(isinstance(vm, dict), path, "environment.vm is missing")
    assert isinstance(vm, dict)
    start_ms = _int(vm.get("start_unix_ms"), path, "environment.vm.start_unix_ms")
    start_ns = _int(vm["start_ns"], path, "environment.vm.start_ns") if vm.get("start_ns") is not None else None
    ops: list[Operation] = []
    for bench, tree in doc["data"].items():
        require(isinstance(tree, dict) and isinstance(tree.get("results"), list), path,
                f"data.{bench}: no 'results' list")
        if tree.get("termination") == "failure":
            raise DuetError(f"{path}: Renaissance reports that benchmark {bench!r} failed",
                            hint="see the harness's stderr")
        for i, result in enumerate(tree["results"]):
            where = f"data.{bench}.results[{i}]"
            require(isinstance(result, dict), path, f"{where} is not an object")
            ops.append(Operation(bench, _int(result.get("duration_ns"), path, f"{where}.duration_ns"),
                                 _int(result.get("uptime_ns"), path, f"{where}.uptime_ns"), start_ms, start_ns))
    metadata: dict[str, str | int | float] = {"format_version": version}
    suite = doc.get("suite") or {}
    if isinstance(suite.get("version"), str):
        metadata["renaissance_version"] = suite["version"]
    for key in ("name", "version"):
        if isinstance(vm.get(key), str):
            metadata[f"vm_{key}"] = vm[key]
    return build(ops, path, options, metadata)
