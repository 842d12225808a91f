"""Importers of tool outputs, on files the real tools wrote (hyperfine, pyperf) or in their exact format (JMH)."""
from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from duetbench.errors import DuetError
from duetbench.importers import CsvMapping, read_csv, read_duetprocess, read_hyperfine, read_jmh, read_pyperf

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def hyperfine_json(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("hyperfine") is None:
        pytest.skip("hyperfine is not installed (Debian package 'hyperfine')")
    out = tmp_path_factory.mktemp("hf") / "hf.json"
    subprocess.run(["hyperfine", "-N", "--runs", "6", "--warmup", "1", "--export-json", str(out), "true",
                    "sleep 0.05"], check=True, capture_output=True)
    return out


def test_hyperfine_two_commands_are_a_and_b(hyperfine_json: Path) -> None:
    doc = json.loads(hyperfine_json.read_text())
    imp = read_hyperfine(hyperfine_json)
    t = imp.table
    assert len(t) == 12 and set(t.method) == {"sequential"}
    assert np.allclose(t.value[t.side == "A"], doc["results"][0]["times"])
    assert np.allclose(t.value[t.side == "B"], doc["results"][1]["times"])
    # each timing is its own run of one iteration, numbered per side
    assert t.run[t.side == "B"].tolist() == list(range(6)) and set(t.index) == {0}
    assert np.median(t.value[t.side == "B"]) > 0.04 > np.median(t.value[t.side == "A"])
    assert t.benchmark[0] == "true vs sleep 0.05"


def test_hyperfine_choose_commands_and_two_files(hyperfine_json: Path, tmp_path: Path) -> None:
    t = read_hyperfine(hyperfine_json, command_a="sleep 0.05", command_b=0).table
    assert np.median(t.value[t.side == "A"]) > 0.04
    with pytest.raises(DuetError, match="out of range"):
        read_hyperfine(hyperfine_json, command_b=5)
    doc = json.loads(hyperfine_json.read_text())
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps({"results": doc["results"][:1]}))
    b.write_text(json.dumps({"results": doc["results"][1:]}))
    assert np.array_equal(read_hyperfine(a, b).table.value, read_hyperfine(hyperfine_json).table.value)


def test_hyperfine_a_command_named_by_a_non_ascii_digit_is_a_name_not_an_index(hyperfine_json: Path) -> None:
    # "¹" passes str.isdigit but not int(): it was a traceback (found by tests/robustness/test_fuzz.py)
    from duetbench.cli.importing import read

    with pytest.raises(DuetError, match="¹"):
        read("hyperfine", (hyperfine_json,), command_a="0", command_b="¹")


@pytest.fixture(scope="module")
def pyperf_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    pytest.importorskip("pyperf", reason="pyperf is a test dependency (pip install '.[test]')")
    d = tmp_path_factory.mktemp("pyperf")
    out = []
    for name, stmt in (("a", "sum(range(50))"), ("b", "sum(range(500))")):
        path = d / f"{name}.json"
        subprocess.run([sys.executable, "-m", "pyperf", "timeit", "--name", "summing", "-p", "2", "-n", "3", "-w",
                        "1", "--loops", "100", "-o", str(path), "-q", stmt], check=True, capture_output=True)
        out.append(path)
    return out[0], out[1]


def test_pyperf_two_files(pyperf_files: tuple[Path, Path]) -> None:
    a, b = pyperf_files
    t = read_pyperf(a, b).table
    doc = json.loads(a.read_text())
    runs = [r for r in doc["benchmarks"][0]["runs"] if r.get("values")]
    assert len(runs) == 2
    assert set(t.benchmark) == {"summing"} and set(t.method) == {"sequential"}
    side_a = t.where(t.side == "A")
    assert side_a.run.tolist() == [0] * 4 + [1] * 4 and side_a.index.tolist() == [0, 1, 2, 3] * 2
    assert side_a.warmup.tolist() == [True, False, False, False] * 2
    assert np.allclose(side_a.value[~side_a.warmup], [v for r in runs for v in r["values"]])
    measured = t.measured()
    # B sums 10x as many numbers: its median time, which one value slowed by other work (a 40 us outlier
    # among A's 0.5 us, beside a test suite) does not move, is well above A's
    assert np.median(measured.value[measured.side == "B"]) > 3 * np.median(measured.value[measured.side == "A"])


def test_pyperf_one_file_with_two_benchmarks(pyperf_files: tuple[Path, Path], tmp_path: Path) -> None:
    a, b = (json.loads(p.read_text()) for p in pyperf_files)
    b["benchmarks"][0]["metadata"] = {"name": "summing-more"}
    both = tmp_path / "both.json"
    both.write_text(json.dumps({**a, "benchmarks": a["benchmarks"] + b["benchmarks"]}))
    t = read_pyperf(both).table
    assert set(t.benchmark) == {"summing vs summing-more"} and len(t) == 16
    a["benchmarks"] = [{**a["benchmarks"][0], "metadata": {"name": f"n{i}"}} for i in range(3)]
    three = tmp_path / "three.json"
    three.write_text(json.dumps(a))
    with pytest.raises(DuetError, match="holds 3 pyperf benchmark"):
        read_pyperf(three)


def _pyperf(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "pyperf", *args], check=True, capture_output=True, timeout=120)


@pytest.fixture(scope="module")
def pyperf_calibration_only(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What pyperf writes for a worker that only calibrates the loop count: a benchmark with no values."""
    pytest.importorskip("pyperf", reason="pyperf is a test dependency (pip install '.[test]')")
    path = tmp_path_factory.mktemp("pyperf-calibration") / "calib.json"
    _pyperf("timeit", "--name", "calib", "--worker", "--calibrate-loops", "-o", str(path), "-q", "sum(range(50))")
    doc = json.loads(path.read_text())
    assert not any(run.get("values") for run in doc["benchmarks"][0]["runs"])
    return path


def _import_error(duet, *args: str) -> str:
    result = duet("import", "pyperf", *args, "--db", "p.db")  # the fixture checks: no Traceback
    assert result.returncode == 2, result.stdout + result.stderr
    err = result.stderr.strip()
    assert "\n" not in err and " — " in err, err  # one line, with how to fix it
    return err


def test_pyperf_benchmarks_sharing_a_name_are_refused(pyperf_files: tuple[Path, Path], duet, tmp_path: Path) -> None:
    # Two benchmark lists joined by hand: pyperf itself refuses the file. Alone it was "holds 1 pyperf
    # benchmark(s)"; as A it was imported with both benchmarks' runs mixed into one (runs 0 and 1 of each).
    a, b = pyperf_files
    doc = json.loads(a.read_text())
    (tmp_path / "twice.json").write_text(json.dumps({**doc, "benchmarks": doc["benchmarks"] * 2}))
    said = "twice.json: benchmarks[0] and benchmarks[1] are both named 'summing'"
    assert said in _import_error(duet, "twice.json")
    assert said in _import_error(duet, "twice.json", str(b))
    assert said in _import_error(duet, str(b), "twice.json")
    assert not (tmp_path / "p.db").exists() or not sqlite3.connect(tmp_path / "p.db").execute(
        "SELECT COUNT(*) FROM campaigns").fetchone()[0]


def test_pyperf_benchmark_without_values(pyperf_files: tuple[Path, Path], pyperf_calibration_only: Path, duet,
                                         tmp_path: Path) -> None:
    # pyperf's own suite of a measured benchmark and a calibration-only one: it was "holds 1 pyperf
    # benchmark(s) ('summing')", the second benchmark not counted.
    a, b = pyperf_files
    _pyperf("convert", str(a), "--add", str(pyperf_calibration_only), "-o", str(tmp_path / "suite.json"))
    err = _import_error(duet, "suite.json")
    assert "suite.json: pyperf benchmark 'calib' (B) has no values, only calibration runs" in err, err
    assert "--calibrate-loops" in err, err
    # A file where nothing has values names the benchmark, not only the parser.
    err = _import_error(duet, str(pyperf_calibration_only), str(b))
    assert "calib.json: no pyperf benchmark in it has values ('calib'" in err, err
    # Two files: a benchmark both have, measured in one only, is left out with a note saying so; it was "in one
    # file only".
    doc = json.loads(b.read_text())
    measured = {**doc["benchmarks"][0], "metadata": {"name": "calib"}}
    (tmp_path / "b.json").write_text(json.dumps({**doc, "benchmarks": [doc["benchmarks"][0], measured]}))
    imported = read_pyperf(tmp_path / "suite.json", tmp_path / "b.json")
    assert set(imported.table.benchmark) == {"summing"}
    assert imported.notes == (f"left out (no values in {tmp_path / 'suite.json'}): calib",)
    result = duet("import", "pyperf", "suite.json", "b.json", "--db", "p.db")
    assert result.returncode == 0 and "no values in suite.json" in result.stderr, result.stdout + result.stderr
    # Measured nowhere in common: an error, not an empty import.
    (tmp_path / "calib-measured.json").write_text(json.dumps({**doc, "benchmarks": [measured]}))
    err = _import_error(duet, "suite.json", "calib-measured.json")
    assert "no pyperf benchmark has values in both files (without values in suite.json: 'calib')" in err, err


def _jmh(path: Path, benchmarks: dict[str, list[list[float]]], mode: str = "avgt", unit: str = "us/op") -> Path:
    path.write_text(json.dumps([{"jmhVersion": "1.37", "benchmark": name, "mode": mode, "threads": 1, "forks": len(raw),
                                 "jdkVersion": "17", "params": {}, "primaryMetric": {
                                     "score": 1.0, "scoreUnit": unit, "rawData": raw}}
                                for name, raw in benchmarks.items()]))
    return path


def test_jmh_forks_are_runs(tmp_path: Path) -> None:
    a = _jmh(tmp_path / "a.json", {"x.Bench.run": [[10.0, 11.0, 12.0], [13.0, 14.0, 15.0]],
                                   "x.Bench.onlyA": [[1.0]]})
    b = _jmh(tmp_path / "b.json", {"x.Bench.run": [[20.0, 21.0, 22.0], [23.0, 24.0, 25.0]]})
    imp = read_jmh(a, b)
    t = imp.table
    assert set(t.benchmark) == {"x.Bench.run"} and any("onlyA" in n for n in imp.notes)
    side_b = t.where(t.side == "B")
    assert side_b.run.tolist() == [0, 0, 0, 1, 1, 1] and side_b.index.tolist() == [0, 1, 2] * 2
    assert np.allclose(side_b.value, np.arange(20, 26) * 1e-6)
    thr = read_jmh(_jmh(tmp_path / "t.json", {"b": [[2.0]]}, "thrpt", "ops/s"), _jmh(tmp_path / "u.json",
                                                                                      {"b": [[4.0]]}, "thrpt", "ops/s"))
    assert thr.table.value.tolist() == [0.5, 0.25]


def test_jmh_errors_name_the_file(tmp_path: Path) -> None:
    a = _jmh(tmp_path / "a.json", {"p.A": [[1.0]]})
    b = _jmh(tmp_path / "b.json", {"p.B": [[1.0]]})
    with pytest.raises(DuetError, match="no JMH benchmark appears in both files"):
        read_jmh(a, b)
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(DuetError, match=r"bad\.json: not valid JSON"):
        read_jmh(bad, b)
    with pytest.raises(DuetError, match="file not found"):
        read_jmh(tmp_path / "missing.json", b)


def test_a_negative_time_names_the_file_it_is_in(tmp_path: Path) -> None:
    # The harness parsers' shared check of every value said "parser 'jmh': iteration 1 'p.A' has value
    # -1e-06 s": of two files, not which one.
    good = _jmh(tmp_path / "good.json", {"p.A": [[1.0, 2.0]]})
    bad = _jmh(tmp_path / "bad.json", {"p.A": [[1.0, -1.0]]})
    with pytest.raises(DuetError, match=r"^.*bad\.json: benchmark 'p\.A' rawData\[0\]\[1\] is -1\.0, negative"):
        read_jmh(good, bad)
    hf = tmp_path / "hf.json"
    hf.write_text(json.dumps({"results": [{"command": "a", "times": [1.0, 2.0]},
                                          {"command": "b", "times": [1.0, -1.0]}]}))
    with pytest.raises(DuetError, match=r"hf\.json: results\[1\]\.times\[1\] is -1\.0, negative"):
        read_hyperfine(hf)


def test_a_time_of_zero_is_refused_where_it_is_in_the_file(tmp_path: Path) -> None:
    # hyperfine clamps a run shorter than its shell's start-up (which it subtracts) to 0; the table's check
    # said "row 1: value 0.0 s ... check the value column and its unit": a row of no file, a column of none.
    hf = tmp_path / "hf.json"
    hf.write_text(json.dumps({"results": [{"command": "a", "times": [1.0, 2.0], "exit_codes": [0, 0]},
                                          {"command": "true", "times": [1e-5, 0.0], "exit_codes": [0, 0]}]}))
    with pytest.raises(DuetError, match=r"hf\.json: results\[1\]\.times\[1\] \('true', side B\) is 0 s") as e:
        read_hyperfine(hf)
    assert "-N" in str(e.value.hint)
    good = _jmh(tmp_path / "good.json", {"p.A": [[1.0, 2.0]]})
    bad = _jmh(tmp_path / "bad.json", {"p.A": [[1.0], [2.0, 0.0]]})
    with pytest.raises(DuetError, match=r"^[^ ]*bad\.json: jmh benchmark 'p\.A' \(side B\) has a time of 0 s in "
                                        r"fork 1, iteration 1"):
        read_jmh(good, bad)


def test_a_number_too_large_for_a_float_is_one_line_naming_where(tmp_path: Path) -> None:
    hf = tmp_path / "hf.json"
    hf.write_text('{"results": [{"command": "a", "times": [1.0, 1' + "0" * 400 + "]}]}")
    with pytest.raises(DuetError, match=r"hf\.json: results\[0\]\.times\[1\] is a 401-digit number"):
        read_hyperfine(hf, hf)


def test_duetprocess_csv_of_the_thesis_tool() -> None:
    t = read_duetprocess(DATA / "asynchronous-duet" / "duetprocess_chi-square_5096d7d.csv").table
    assert len(t) == 32 and set(t.benchmark) == {"renaissance/chi-square"}
    # the tool's "duet" is the asynchronous one; 2 runs × 4 iterations per side and method
    assert set(t.method) == {"sequential", "aduet"}
    for method in ("sequential", "aduet"):
        rows = t.where((t.method == method) & (t.side == "A"))
        assert sorted(rows.run.tolist()) == [0] * 4 + [1] * 4
    assert t.has_timestamps() and bool(np.all(t.end_ns - t.start_ns == np.round(t.value * 1e9)))


def test_duetprocess_errors(tmp_path: Path) -> None:
    header = "suite,benchmark,type,runid,pair,iteration,iteration_start_ns,iteration_end_ns,iteration_time_ns,order\n"
    f = tmp_path / "x.csv"
    f.write_text(header + "s,b,weird,0,A,0,1,2,1,AB\n")
    with pytest.raises(DuetError, match="unknown type"):
        read_duetprocess(f)
    f.write_text(header + "s,b,seqn,0,C,0,1,2,1,AB\n")
    with pytest.raises(DuetError, match=r"x\.csv: row 2: side 'C' is not A or B"):
        read_duetprocess(f)
    f.write_text(header + "s,b,seqn,0,A,0,1,2,1,AB\ns,b,seqn,0,A,0,1,2,1,AB\n")
    with pytest.raises(DuetError, match="appears more than once"):
        read_duetprocess(f)
    f.write_text(header + "s,b,seqn,0,A,0,1,2,-5,AB\n")
    with pytest.raises(DuetError, match="not a positive finite time"):
        read_duetprocess(f)
    f.write_text("a,b\n1,2\n")
    with pytest.raises(DuetError, match="missing column"):
        read_duetprocess(f)


def test_generic_csv_iso_times_and_errors(tmp_path: Path) -> None:
    # the thesis's DaCapo timeline: ISO start/end, no run id (a run restarts at iteration 1)
    path = DATA / "asynchronous-duet" / "verification_timeline_dacapo_2022-06-26.csv"
    mapping = CsvMapping(columns={"benchmark": ("suite", "benchmark"), "method": ("type",), "side": ("pair",),
                                  "value": ("duration_ms",), "start": ("iteration_start",),
                                  "end": ("iteration_end",), "index": ("iteration",)},
                         values={"method": {"seqn": "sequential", "duet": "aduet", "syncduet": "duet"}},
                         unit="ms", time_unit="iso", where={"benchmark": ("tradesoap",), "type": ("syncduet",)})
    t = read_csv(path, mapping).table
    assert len(t) > 10 and set(t.method) == {"duet"}
    assert np.allclose((t.end_ns - t.start_ns) / 1e9, t.value, atol=1e-9)
    f = tmp_path / "g.csv"
    f.write_text("name,v,who\nx,1.5,A\nx,oops,B\n")
    m = CsvMapping(columns={"benchmark": ("name",), "value": ("v",), "side": ("who",)},
                   constants={"method": "sequential"})
    with pytest.raises(DuetError, match=r"g\.csv: row 3: value 'oops' is not a number"):
        read_csv(f, m)
    with pytest.raises(DuetError, match="no column 'nope'"):
        read_csv(f, CsvMapping(columns={**m.columns, "run": ("nope",)}, constants=m.constants))
    with pytest.raises(DuetError, match="has no method"):
        read_csv(f, CsvMapping(columns=m.columns))
    f.write_text("name,v,who\nx,1,A\nx,2\n")
    with pytest.raises(DuetError, match=r"g\.csv:3: has 2 fields"):
        read_csv(f, m)
    # a name given twice: the mapping chose the last column of that name, without a word
    f.write_text("name,v,who,name\nx,1,A,y\nx,2,B,y\n")
    with pytest.raises(DuetError, match=r"g\.csv:1: column 'name' appears 2 times in the header \(columns 1, 4\)"):
        read_csv(f, m)


def test_hyperfine_failed_runs_kept_with_ignore_failure_are_noted(tmp_path: Path) -> None:
    if shutil.which("hyperfine") is None:
        pytest.skip("hyperfine is not installed (Debian package 'hyperfine')")
    out = tmp_path / "hf.json"
    subprocess.run(["hyperfine", "-N", "-i", "--runs", "3", "--export-json", str(out), "true", "false"],
                   check=True, capture_output=True)
    imp = read_hyperfine(out)
    assert len(imp.table) == 6
    assert imp.notes == ("B ('false'): 3 of 3 timed runs exited with a non-zero code (hyperfine -i); "
                         "their times are kept",)


def test_hyperfine_two_files_of_several_commands_hint_at_the_import_options(hyperfine_json: Path, duet) -> None:
    r = duet("import", "hyperfine", str(hyperfine_json), str(hyperfine_json), "--db", "h.db")
    assert r.returncode == 2 and "hf.json: holds 2 commands" in r.stderr
    assert "--command-a and --command-b" in r.stderr and "option command" not in r.stderr


def test_hyperfine_a_bad_command_choice_names_the_flag(tmp_path: Path, duet) -> None:
    # The parser's message spoke of its campaign option ("option command: 1 is out of range"), which
    # `duet import` has not.
    one = tmp_path / "one.json"
    one.write_text(json.dumps({"results": [{"command": "sleep 0.01", "times": [0.01, 0.011]}]}))
    r = duet("import", "hyperfine", str(one), "--db", "h.db")
    assert r.returncode == 2 and "one.json: --command-b 1 is out of range (0: 'sleep 0.01')" in r.stderr
    assert "give A's and B's files" in r.stderr and "option command" not in r.stderr
    r = duet("import", "hyperfine", str(one), "--command-a", "sleep 1", "--db", "h.db")
    assert "--command-a 'sleep 1' matches 0 results" in r.stderr and "when commands repeat" not in r.stderr


def _with_params(path: Path, params: list[dict[str, str]]) -> Path:
    doc = json.loads(path.read_text())
    path.write_text(json.dumps([{**doc[0], "params": p} for p in params]))
    return path


def test_jmh_a_and_b_differing_only_in_params_are_matched_by_method(tmp_path: Path) -> None:
    # `-p size=1000` for A and `-p size=2000` for B: nothing had the same name, and the hint spoke of pyperf.
    a = _with_params(_jmh(tmp_path / "a.json", {"x.Bench.run": [[10.0, 11.0], [12.0, 13.0]]}), [{"size": "1000"}])
    b = _with_params(_jmh(tmp_path / "b.json", {"x.Bench.run": [[20.0, 21.0], [22.0, 23.0]]}), [{"size": "2000"}])
    imp = read_jmh(a, b)
    assert set(imp.table.benchmark) == {"x.Bench.run"} and len(imp.table) == 8
    assert imp.notes[0] == ("matched by benchmark method, the @Params differ: A x.Bench.run:size=1000; "
                            "B x.Bench.run:size=2000")
    # Several -p values in one file cannot be told apart without their params: still no match.
    both = _with_params(_jmh(tmp_path / "c.json", {"x.Bench.run": [[1.0]]}), [{"size": "1"}, {"size": "2"}])
    with pytest.raises(DuetError, match="no JMH benchmark appears in both files") as e:
        read_jmh(both, b)
    assert "pyperf" not in str(e.value)


def test_a_pipe_or_device_is_not_called_missing(tmp_path: Path) -> None:
    # `duet import hyperfine <(...)` or /dev/null said "file not found — check the path".
    with pytest.raises(DuetError, match=r"^/dev/null: not a regular file \(a pipe, device or directory\)"):
        read_hyperfine(Path("/dev/null"))
    with pytest.raises(DuetError, match=r"/dev/null: not a regular file"):
        read_jmh(Path("/dev/null"), Path("/dev/null"))
    with pytest.raises(DuetError, match=r"nope\.json: file not found"):
        read_hyperfine(tmp_path / "nope.json")
