"""hyperfine ``--export-json FILE``: one iteration per timed run of one command (warmup runs are not exported)."""
from __future__ import annotations

from typing import Any

from .._common import Options as _Base
from .._common import duration, load_json, pick_file, require
from ..model import Iteration, ParseResult, ParserInput

TIMESTAMP_NOTE = ("hyperfine JSON has no timestamps; use 'duet compare' (each invocation one timed iteration) "
                  "when timestamps matter")


class Options(_Base):
    file: str | None = None
    """Name of the declared result file; default: the only declared file."""
    command: int | str | None = None
    """Which result: its 0-based index or its exact command string; required when the file holds several."""


def _label(result: dict[str, Any]) -> str:
    params = result.get("parameters") or {}
    return str(result.get("command", "")) + ("" if not params else " [" + ",".join(
        f"{k}={v}" for k, v in params.items()) + "]")


def parse(inp: ParserInput, options: Options) -> ParseResult:
    path = pick_file(inp, options.file, "hyperfine")
    doc = load_json(path)
    require(isinstance(doc, dict) and isinstance(doc.get("results"), list), path,
            "not a hyperfine JSON export (no 'results' list)", hint="run hyperfine with --export-json FILE")
    require(doc["results"] != [], path, "holds no results (its 'results' list is empty)",
            hint="export the results of a hyperfine run that timed at least one command")
    results = doc["results"]
    for n, r in enumerate(results):
        require(isinstance(r, dict) and isinstance(r.get("times"), list), path, f"results[{n}] has no 'times' list")
    commands = ", ".join(f"{n}: {r.get('command')!r}" for n, r in enumerate(results))
    if options.command is None:
        require(len(results) == 1, path, f"holds {len(results)} commands ({commands})",
                hint="choose one with the hyperfine option command: INDEX or command: 'COMMAND'")
        n = 0
    elif isinstance(options.command, int):
        require(0 <= options.command < len(results), path,
                f"option command: {options.command} is out of range ({commands})")
        n = options.command
    else:
        matches = [i for i, r in enumerate(results) if r.get("command") == options.command]
        require(len(matches) == 1, path,
                f"option command: {options.command!r} matches {len(matches)} results ({commands})",
                hint="use the result's index when commands repeat (parameter scans)" if matches
                else "give the command exactly as listed, or its index")
        n = matches[0]
    result = results[n]
    require(result["times"] != [], path, f"results[{n}] ({result.get('command')!r}) has no times (empty 'times' list)",
            hint="export the results of a hyperfine run that timed this command at least once")
    times = [duration(t, path, f"results[{n}].times[{i}]") for i, t in enumerate(result["times"])]
    metadata: dict[str, str | int | float] = {"harness": "hyperfine", "source": str(path), "command": _label(result),
                                              "result": n}
    codes = result.get("exit_codes") or []
    failed = sum(1 for c in codes if c not in (0, None))
    if failed:
        metadata["nonzero_exit_codes"] = failed
    return ParseResult([Iteration(i, t) for i, t in enumerate(times)], clock="none",
                       timestamp_note=TIMESTAMP_NOTE, metadata=metadata)
