from __future__ import annotations

import json
from pathlib import Path

import pytest
from harness_fixtures import fixture, inp

from duetbench.errors import DuetError
from duetbench.harness import ParserInput, parse

# (benchmark, duration_ns, uptime_ns) in the order they ran; the fixtures list dotty first.
OPS = [("scrabble", 500_000_000, 1_000_000_000), ("scrabble", 450_000_000, 1_600_000_000),
       ("scrabble", 420_000_000, 2_100_000_000), ("dotty", 700_000_000, 3_000_000_000),
       ("dotty", 650_000_000, 3_800_000_000)]
EPOCH_MS = 1_700_000_000_123
NANOTIME_AT_VM_START = 5_000_000_000


def expected(anchor: int) -> list[tuple[str, int, float, int, int]]:
    idx = {"scrabble": [0, 1, 2], "dotty": [0, 1]}
    out = []
    for name, d, u in OPS:
        out.append((name, idx[name].pop(0), d / 1e9, anchor + u, anchor + u + d))
    return out


def rows(r) -> list[tuple[str, int, float, int, int]]:
    return [(it.name, it.index, it.value_s, it.start_ns, it.end_ns) for it in r.iterations]


@pytest.mark.parametrize("parser, name", [("renaissance-json", "renaissance_v5.json"),
                                          ("renaissance-csv", "renaissance_v0160.csv")])
def test_without_nanotime_anchor_timestamps_are_epoch_from_the_vm_start(parser: str, name: str) -> None:
    r = parse(parser, {}, inp(name))
    assert r.clock == "epoch"
    assert rows(r) == expected(EPOCH_MS * 1_000_000)
    assert r.metadata["anchor_resolution_s"] == 0.001


@pytest.mark.parametrize("parser, name", [("renaissance-json", "renaissance_v6.json"),
                                          ("renaissance-csv", "renaissance_v0161.csv")])
def test_with_nanotime_anchor_timestamps_are_the_jvm_nanotime(parser: str, name: str) -> None:
    r = parse(parser, {}, inp(name))
    assert r.clock == "monotonic"
    assert rows(r) == expected(NANOTIME_AT_VM_START)
    epoch = parse(parser, {"clock": "epoch"}, inp(name))
    assert epoch.clock == "epoch" and rows(epoch) == expected(EPOCH_MS * 1_000_000)


def test_monotonic_requires_the_nanotime_anchor() -> None:
    with pytest.raises(DuetError, match=r"renaissance_v5\.json: option clock: monotonic needs"):
        parse("renaissance-json", {"clock": "monotonic"}, inp("renaissance_v5.json"))


def test_metadata_from_json() -> None:
    r = parse("renaissance-json", {}, inp("renaissance_v6.json"))
    assert r.metadata["format_version"] == 6 and r.metadata["renaissance_version"] == "0.16.1"


def test_failed_benchmark_and_bad_schema(tmp_path: Path) -> None:
    doc = json.loads(fixture("renaissance_v6.json").read_text())
    doc["data"]["dotty"]["termination"] = "failure"
    (tmp_path / "r.json").write_text(json.dumps(doc))
    with pytest.raises(DuetError, match="r.json: Renaissance reports that benchmark 'dotty' failed"):
        parse("renaissance-json", {}, ParserInput(files={"r.json": tmp_path / "r.json"}))
    doc["data"]["dotty"] = {"results": [{"duration_ns": 5}], "termination": "normal"}
    (tmp_path / "r.json").write_text(json.dumps(doc))
    with pytest.raises(DuetError, match=r"r.json: data.dotty.results\[0\].uptime_ns is None, expected an integer"):
        parse("renaissance-json", {}, ParserInput(files={"r.json": tmp_path / "r.json"}))
    (tmp_path / "r.json").write_text('{"format_version": 4, "data": {}}')
    with pytest.raises(DuetError, match="format_version 4 is not supported"):
        parse("renaissance-json", {}, ParserInput(files={"r.json": tmp_path / "r.json"}))


def test_csv_errors(tmp_path: Path) -> None:
    f = tmp_path / "r.csv"
    f.write_text("benchmark,duration_ns,vm_start_unix_ms\nx,1,2\n")
    with pytest.raises(DuetError, match="r.csv: not a Renaissance CSV result: missing column.s. uptime_ns"):
        parse("renaissance-csv", {}, ParserInput(files={"r.csv": f}))
    f.write_text("benchmark,duration_ns,uptime_ns,vm_start_unix_ms\nx,NA,5,2\n")
    with pytest.raises(DuetError, match="r.csv: line 2: duration_ns is 'NA', expected an integer"):
        parse("renaissance-csv", {}, ParserInput(files={"r.csv": f}))
    f.write_text("benchmark,duration_ns,uptime_ns,vm_start_unix_ms\nx,1,5\n")
    with pytest.raises(DuetError, match="r.csv: line 2: 3 fields, the header has 4"):
        parse("renaissance-csv", {}, ParserInput(files={"r.csv": f}))
