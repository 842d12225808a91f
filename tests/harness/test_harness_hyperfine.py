from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from harness_fixtures import fixture, inp

from duetbench.errors import DuetError
from duetbench.harness import ParserInput, parse

FIRST = [0.011177788000000001, 0.011206671000000001, 0.011222625]
SECOND = [0.021173373000000002, 0.021287212, 0.021232201000000003]


def test_choose_a_command_by_index_or_by_name() -> None:
    assert [it.value_s for it in parse("hyperfine", {"command": 0}, inp("hyperfine.json")).iterations] == FIRST
    r = parse("hyperfine", {"command": "sleep 0.02"}, inp("hyperfine.json"))
    assert [it.value_s for it in r.iterations] == SECOND and [it.index for it in r.iterations] == [0, 1, 2]
    assert r.clock == "none" and r.metadata["command"] == "sleep 0.02"


def test_several_commands_need_the_option() -> None:
    with pytest.raises(DuetError, match=r"hyperfine\.json: holds 2 commands \(0: 'sleep 0.01', 1: 'sleep 0.02'\)"):
        parse("hyperfine", {}, inp("hyperfine.json"))
    with pytest.raises(DuetError, match="option command: 5 is out of range"):
        parse("hyperfine", {"command": 5}, inp("hyperfine.json"))
    with pytest.raises(DuetError, match="option command: 'sleep 9' matches 0 results"):
        parse("hyperfine", {"command": "sleep 9"}, inp("hyperfine.json"))


def test_parameter_scan_results_carry_their_parameters() -> None:
    r = parse("hyperfine", {"command": 1}, inp("hyperfine_params.json"))
    assert r.metadata["command"] == "sleep 0.02 [n=2]" and len(r.iterations) == 2


def test_single_command_and_failed_runs(tmp_path: Path) -> None:
    doc = json.loads(fixture("hyperfine.json").read_text())
    doc["results"] = doc["results"][1:]
    doc["results"][0]["exit_codes"] = [0, 1, 0]
    (tmp_path / "h.json").write_text(json.dumps(doc))
    r = parse("hyperfine", {}, ParserInput(files={"h.json": tmp_path / "h.json"}))
    assert [it.value_s for it in r.iterations] == SECOND and r.metadata["nonzero_exit_codes"] == 1


def test_fresh_hyperfine_export_parses(tmp_path: Path) -> None:
    if shutil.which("hyperfine") is None:
        pytest.skip("hyperfine (Debian package) is not installed")
    out = tmp_path / "h.json"
    subprocess.run(["hyperfine", "--runs", "3", "-N", "--export-json", str(out), "true"], check=True,
                   capture_output=True, timeout=60)
    r = parse("hyperfine", {}, ParserInput(files={"h.json": out}))
    assert len(r.iterations) == 3 and all(0 < it.value_s < 1 for it in r.iterations)


@pytest.mark.parametrize("results, message", [
    ([], r"h\.json: holds no results \(its 'results' list is empty\)"),
    ([{"command": "a", "times": [0.1]}, {"command": "b", "times": []}],
     r"h\.json: results\[1\] \('b'\) has no times \(empty 'times' list\)"),
])
def test_empty_results_or_times_say_which(tmp_path: Path, results: list[object], message: str) -> None:
    (tmp_path / "h.json").write_text(json.dumps({"results": results}))
    with pytest.raises(DuetError, match=message):
        parse("hyperfine", {"command": len(results) - 1 if results else None},
              ParserInput(files={"h.json": tmp_path / "h.json"}))
