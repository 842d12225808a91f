"""The gbench parser: Google Benchmark's JSON and CSV (files a real program wrote, in fixtures/), on stdout,
and from a program built here."""
from __future__ import annotations

import csv
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from harness_fixtures import FIXTURES, fixture, inp

from duetbench.errors import DuetError
from duetbench.harness import ParserInput, parse


def test_repetitions_in_seconds_and_aggregates_ignored() -> None:
    r = parse("gbench", {}, inp("gbench.json"))
    doc = json.loads(fixture("gbench.json").read_text())
    reps = [b for b in doc["benchmarks"] if b["run_type"] == "iteration"]
    assert len(reps) == 6 and len(doc["benchmarks"]) == 14  # 2 × (3 repetitions + 4 aggregates)
    # time_unit is "us" in the fixture: 1 us = 1e-6 s.
    assert [it.value_s for it in r.iterations] == pytest.approx([b["real_time"] * 1e-6 for b in reps], rel=1e-15)
    assert [(it.name, it.index) for it in r.iterations] == [
        ("BM_Accumulate/64", 0), ("BM_Accumulate/64", 1), ("BM_Accumulate/64", 2),
        ("BM_Accumulate/512", 0), ("BM_Accumulate/512", 1), ("BM_Accumulate/512", 2)]
    cpu = parse("gbench", {"metric": "cpu_time"}, inp("gbench.json"))
    assert [it.value_s for it in cpu.iterations] == pytest.approx([b["cpu_time"] * 1e-6 for b in reps], rel=1e-15)
    assert r.clock == "none" and r.metadata["metric"] == "real_time"


def test_errored_repetitions_fail_unless_skipped() -> None:
    with pytest.raises(DuetError, match=r"gbench_error\.json: benchmark 'BM_Skipped' reported an error: "
                                        "deliberately failing — .*skip_errors: true"):
        parse("gbench", {}, inp("gbench_error.json"))
    # Skipping every repetition leaves nothing to compare, which is its own clear error.
    with pytest.raises(DuetError, match="found no iterations"):
        parse("gbench", {"skip_errors": True}, inp("gbench_error.json"))


def test_skip_errors_keeps_the_good_ones(tmp_path: Path) -> None:
    good = json.loads(fixture("gbench.json").read_text())
    bad = json.loads(fixture("gbench_error.json").read_text())
    good["benchmarks"] += bad["benchmarks"]
    (tmp_path / "g.json").write_text(json.dumps(good))
    r = parse("gbench", {"skip_errors": True}, ParserInput(files={"g.json": tmp_path / "g.json"}))
    assert len(r.iterations) == 6 and r.metadata["skipped_errors"] == 2


def test_bad_metric_option_is_a_validation_error() -> None:
    with pytest.raises(DuetError, match="parser 'gbench' option 'metric': Input should be 'real_time' or 'cpu_time'"):
        parse("gbench", {"metric": "wall"}, inp("gbench.json"))


def test_fresh_google_benchmark_output_parses(gbench_tiny: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    subprocess.run([str(gbench_tiny), "--benchmark_filter=BM_Accumulate/64", "--benchmark_repetitions=2",
                    "--benchmark_min_time=0.01", f"--benchmark_out={out}", "--benchmark_out_format=json"],
                   check=True, timeout=60, capture_output=True)
    r = parse("gbench", {}, ParserInput(files={"out.json": out}))
    assert len(r.iterations) == 2 and all(0 < it.value_s < 1e-3 for it in r.iterations)


# -- CSV (--benchmark_out_format=csv, --benchmark_format=csv on stdout) --------------------------------

REPETITIONS = [("BM_Accumulate/64", 0), ("BM_Accumulate/64", 1), ("BM_Accumulate/64", 2),
               ("BM_Accumulate/512", 0), ("BM_Accumulate/512", 1), ("BM_Accumulate/512", 2)]


def _csv_rows(name: str) -> list[dict[str, str]]:
    """The rows of a committed CSV below its header, as Python's csv module reads them."""
    lines = fixture(name).read_text().splitlines()
    header = next(n for n, line in enumerate(lines) if line.startswith("name,iterations,"))
    return list(csv.DictReader(lines[header:]))


def test_csv_file_reads_as_the_json_does() -> None:
    """gbench.csv: the program and flags of gbench.json, written as CSV (context lines above the header)."""
    r = parse("gbench", {}, inp("gbench.csv"))
    assert [(it.name, it.index) for it in r.iterations] == REPETITIONS
    assert not fixture("gbench.csv").read_text().startswith("name,")
    reps = [row for row in _csv_rows("gbench.csv") if (row["name"], 0) in REPETITIONS]
    assert len(reps) == 6 and len(_csv_rows("gbench.csv")) == 14  # 2 × (3 repetitions + 4 aggregates)
    assert [it.value_s for it in r.iterations] == pytest.approx([float(x["real_time"]) * 1e-6 for x in reps],
                                                                rel=1e-15)
    cpu = parse("gbench", {"metric": "cpu_time", "format": "csv"}, inp("gbench.csv"))
    assert [it.value_s for it in cpu.iterations] == pytest.approx([float(x["cpu_time"]) * 1e-6 for x in reps],
                                                                  rel=1e-15)
    assert r.clock == "none" and r.metadata["format"] == "csv" and r.metadata["metric"] == "real_time"
    assert r.metadata["num_cpus"] == 2 and "Running ./gbench_tiny" in str(r.metadata["context"])
    assert parse("gbench", {}, inp("gbench.json")).metadata["format"] == "json"


def test_csv_on_stdout_when_no_file_is_declared() -> None:
    text = fixture("gbench_stdout.csv").read_text()
    assert text.startswith("name,iterations,")  # on stdout Google Benchmark writes the context to stderr
    r = parse("gbench", {}, ParserInput(stdout=text))
    assert [(it.name, it.index) for it in r.iterations] == [(n, k) for n in ("BM_Accumulate/64", "BM_Accumulate/512")
                                                           for k in range(2)]
    assert r.metadata["source"] == "stdout" and "context" not in r.metadata
    with pytest.raises(DuetError, match=r"^stdout: not a Google Benchmark result: .*--benchmark_format=json"):
        parse("gbench", {}, ParserInput(stdout="BM_Accumulate/64   1 us   1 us   1000\n"))


def test_format_option_insists_on_one() -> None:
    with pytest.raises(DuetError, match=r"gbench\.json: is JSON, but the gbench option format is csv — set format"):
        parse("gbench", {"format": "csv"}, inp("gbench.json"))
    with pytest.raises(DuetError, match=r"gbench\.csv: not valid JSON \(line 1, .* format: csv"):
        parse("gbench", {"format": "json"}, inp("gbench.csv"))
    with pytest.raises(DuetError, match="option 'format': Input should be 'json', 'csv' or 'auto'"):
        parse("gbench", {"format": "xml"}, inp("gbench.csv"))


def test_csv_errored_repetitions_fail_unless_skipped(tmp_path: Path) -> None:
    """gbench_error.csv: real; BM_Skipped calls SkipWithError in each of its 2 repetitions."""
    with pytest.raises(DuetError, match=r"gbench_error\.csv:\d+: benchmark 'BM_Skipped' reported an error: "
                                        "deliberately failing — .*skip_errors: true"):
        parse("gbench", {}, inp("gbench_error.csv"))
    with pytest.raises(DuetError, match="found no iterations"):
        parse("gbench", {"skip_errors": True}, inp("gbench_error.csv"))
    # The errored rows appended to a good file: skip_errors keeps the good repetitions and counts the others.
    errored = [line for line in fixture("gbench_error.csv").read_text().splitlines() if line.startswith('"BM_')]
    (tmp_path / "g.csv").write_text(fixture("gbench.csv").read_text() + "\n".join(errored) + "\n")
    r = parse("gbench", {"skip_errors": True}, ParserInput(files={"g.csv": tmp_path / "g.csv"}))
    assert [(it.name, it.index) for it in r.iterations] == REPETITIONS and r.metadata["skipped_errors"] == 2
    with pytest.raises(DuetError, match=rf"g\.csv:{len(fixture('gbench.csv').read_text().splitlines()) + 1}: "):
        parse("gbench", {}, ParserInput(files={"g.csv": tmp_path / "g.csv"}))


def test_csv_repetitions_skipped_on_purpose_are_dropped() -> None:
    """gbench_skipped.csv: hand-made in Google Benchmark 1.8's CSV (error_occurred false: SkipWithMessage)."""
    r = parse("gbench", {}, inp("gbench_skipped.csv"))
    assert [(it.name, it.index) for it in r.iterations] == [("BM_Fast", 0), ("BM_Fast", 1)]
    assert r.metadata["skipped"] == 1 and "skipped_errors" not in r.metadata


def test_csv_aggregates_and_complexity_fits_are_ignored(tmp_path: Path) -> None:
    fit = parse("gbench", {}, inp("gbench_complexity.csv"))
    assert [it.name for it in fit.iterations] == ["BM_Linear/64", "BM_Linear/512", "BM_Linear/4096"]
    assert {row["name"] for row in _csv_rows("gbench_complexity.csv")} >= {"BM_Linear_BigO", "BM_Linear_RMS"}
    with pytest.raises(DuetError, match=r"gbench_aggregates_only\.csv: holds only aggregates .* rerun without "
                                        "--benchmark_report_aggregates_only"):
        parse("gbench", {}, inp("gbench_aggregates_only.csv"))
    # A benchmark whose name extends another's is no statistic of it: it has as many rows.
    header = "name,iterations,real_time,cpu_time,time_unit\n"
    (tmp_path / "s.csv").write_text(header + '"BM_Sort",9,5,5,ns\n"BM_Sort",9,6,6,ns\n"BM_Sort_fast",9,3,3,ns\n'
                                    '"BM_Sort_fast",9,4,4,ns\n"BM_Sort_mean",2,5.5,5.5,ns\n')
    r = parse("gbench", {}, ParserInput(files={"s.csv": tmp_path / "s.csv"}))
    assert [it.name for it in r.iterations] == ["BM_Sort", "BM_Sort", "BM_Sort_fast", "BM_Sort_fast"]


def test_csv_bad_input_is_one_line_with_a_hint(tmp_path: Path) -> None:
    lines = fixture("gbench.csv").read_text().splitlines()
    h = next(n for n, line in enumerate(lines) if line.startswith("name,iterations,"))  # the header: line h + 1
    first = lines[h + 1].split(",")  # BM_Accumulate/64's first repetition: name, iterations, real, cpu, unit, ...
    assert first[0] == '"BM_Accumulate/64"' and first[4] == "us"

    def with_first(index: int, value: str) -> str:
        row = ",".join(first[:index] + [value] + first[index + 1:])
        return "\n".join([*lines[:h + 1], row, *lines[h + 2:]]) + "\n"

    cases = [
        (with_first(4, "fortnights"), f"bad.csv:{h + 2}: time_unit has unknown time unit 'fortnights' (known: ns, us"),
        (with_first(3, "n/a"), f"bad.csv:{h + 2}: cpu_time 'n/a' of 'BM_Accumulate/64' is not a number"),
        (with_first(3, "nan"), f"bad.csv:{h + 2}: cpu_time 'nan' of 'BM_Accumulate/64' is not a number"),
        ("\n".join(lines).replace(",cpu_time,", ",cpu,") + "\n", f"bad.csv:{h + 1}: the header has no column cpu_time"),
        ("\n".join(lines[:h]) + "\nBM_Accumulate/64     1.00 us     1.00 us   700000\n",
         "bad.csv: not a Google Benchmark result: neither JSON nor a CSV"),
        ("\n".join(lines[:h + 1]) + "\n", f"bad.csv: no rows below the header at line {h + 1}"),
        # A quote opened and never closed swallowed the following rows into one benchmark's name.
        (with_first(0, '"BM_Accumulate/64'), f"bad.csv:{h + 2}: not CSV: ',' expected after '\"'"),
        (with_first(0, '"BM_Accumulate/64"x'), f"bad.csv:{h + 2}: not CSV: ',' expected after '\"'"),
        ("\n".join([*lines[:h + 1], ",".join(first[:3])]) + "\n",
         f"bad.csv:{h + 2}: 3 field(s) where the header at line {h + 1} has 10"),
        (with_first(0, "BM_Accumulate/64,extra"),
         f"bad.csv:{h + 2}: 11 field(s) where the header at line {h + 1} has 10"),
        (with_first(0, '""'), f"bad.csv:{h + 2}: a row without a benchmark name"),
        (with_first(3, "-0.5"), f"bad.csv:{h + 2}: cpu_time '-0.5' of 'BM_Accumulate/64' is negative"),
    ]
    for text, message in cases:
        (tmp_path / "bad.csv").write_text(text)
        with pytest.raises(DuetError) as err:
            parse("gbench", {"metric": "cpu_time"}, ParserInput(files={"bad.csv": tmp_path / "bad.csv"}))
        assert message in str(err.value), str(err.value)
        assert err.value.hint and "\n" not in str(err.value)


def test_format_auto_goes_by_content_not_by_name(tmp_path: Path) -> None:
    """format: auto (the default) reads a CSV named .json as CSV and a JSON named .csv as JSON."""
    (tmp_path / "really-csv.json").write_text(fixture("gbench.csv").read_text())
    (tmp_path / "really-json.csv").write_text(fixture("gbench.json").read_text())
    as_csv = parse("gbench", {}, ParserInput(files={"r": tmp_path / "really-csv.json"}))
    as_json = parse("gbench", {}, ParserInput(files={"r": tmp_path / "really-json.csv"}))
    assert as_csv.metadata["format"] == "csv" and as_json.metadata["format"] == "json"
    assert [(it.name, it.index) for it in as_csv.iterations] == REPETITIONS
    assert [(it.name, it.index) for it in as_json.iterations] == REPETITIONS
    # stdout too, whichever --benchmark_format wrote it
    out = parse("gbench", {}, ParserInput(stdout=fixture("gbench.json").read_text()))
    assert out.metadata["format"] == "json" and len(out.iterations) == 6


# -- a real Google Benchmark program --------------------------------------------------------------------

@pytest.fixture(scope="module")
def gbench_tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """fixtures/src/gbench_tiny.cc built against the system's Google Benchmark."""
    cxx = shutil.which("g++") or shutil.which("c++")
    if cxx is None:
        pytest.skip("no C++ compiler")
    if not Path("/usr/include/benchmark/benchmark.h").exists():
        pytest.skip("Google Benchmark is not installed (Debian/Ubuntu: apt-get install libbenchmark-dev)")
    exe = tmp_path_factory.mktemp("gbench") / "gbench_tiny"
    subprocess.run([cxx, "-O2", "-o", str(exe), str(FIXTURES / "src" / "gbench_tiny.cc"), "-lbenchmark",
                    "-lpthread"], check=True, timeout=180)
    return exe


def test_fresh_google_benchmark_csv_file_and_stdout(gbench_tiny: Path, tmp_path: Path) -> None:
    """The CSV of a real program, as a file and on stdout, and its JSON on stdout."""
    flags = ["--benchmark_filter=BM_Accumulate/64", "--benchmark_repetitions=2", "--benchmark_min_time=0.01"]
    out = tmp_path / "out.csv"
    subprocess.run([str(gbench_tiny), *flags, f"--benchmark_out={out}", "--benchmark_out_format=csv"],
                   check=True, timeout=60, capture_output=True)
    from_file = parse("gbench", {}, ParserInput(files={"out.csv": out}))
    assert [(it.name, it.index) for it in from_file.iterations] == [("BM_Accumulate/64", 0), ("BM_Accumulate/64", 1)]
    assert all(0 < it.value_s < 1e-3 for it in from_file.iterations) and "context" in from_file.metadata
    for fmt in ("csv", "json"):
        run = subprocess.run([str(gbench_tiny), *flags, f"--benchmark_format={fmt}"], check=True, timeout=60,
                             capture_output=True, text=True)
        r = parse("gbench", {}, ParserInput(stdout=run.stdout, stderr=run.stderr))
        assert [it.name for it in r.iterations] == ["BM_Accumulate/64"] * 2, fmt
        assert r.metadata["format"] == fmt and r.metadata["source"] == "stdout"
    errored = subprocess.run([str(gbench_tiny), "--benchmark_filter=BM_Skipped", "--benchmark_format=csv"],
                             check=True, timeout=60, capture_output=True, text=True)
    with pytest.raises(DuetError, match=r"^stdout:\d+: benchmark 'BM_Skipped' reported an error: deliberately"):
        parse("gbench", {}, ParserInput(stdout=errored.stdout))


def test_campaign_reads_google_benchmark_csv_from_a_file_and_from_stdout(gbench_tiny: Path, duet,
                                                                         tmp_path: Path) -> None:
    """`duet run` with parser gbench: one benchmark writes its CSV to a declared file, the other prints it
    (no file declared); both give their repetitions as iterations."""
    import json

    exe, flags = gbench_tiny, "--benchmark_filter=BM_Accumulate/64 --benchmark_repetitions=4 --benchmark_min_time=0.01"
    (tmp_path / "campaign.yml").write_text(f"""campaign: gbench-csv
seed: 3
methods: {{sequential: 2}}
parser: {{name: gbench, format: csv, metric: cpu_time}}
timeout: 120
benchmarks:
  to-file:
    command: {exe} {flags} --benchmark_out={{outdir}}/gb.csv --benchmark_out_format=csv
    results: ["{{outdir}}/gb.csv"]
  on-stdout:
    command: {exe} {flags} --benchmark_format=csv
""")
    result = duet("run", "campaign.yml", "--no-progress", "--export-json", "r.json", timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    rows = {r["benchmark"]: r for r in json.loads((tmp_path / "r.json").read_text())["rows"]}
    assert set(rows) == {"to-file", "on-stdout"}, rows
    assert all(r["runs"] == 2 and r["method"] == "sequential" for r in rows.values()), rows


def test_fresh_csv_with_a_user_counter_and_an_errored_benchmark(gbench_tiny: Path, tmp_path: Path) -> None:
    """An errored row has no fields for the user counters' columns (Google Benchmark 1.7 and 1.8 alike): it is
    an error row, not a row cut short."""
    out = tmp_path / "out.csv"
    subprocess.run([str(gbench_tiny), "--benchmark_filter=BM_Counted|BM_Skipped", "--benchmark_repetitions=2",
                    "--benchmark_min_time=0.01", f"--benchmark_out={out}", "--benchmark_out_format=csv"],
                   check=True, timeout=60, capture_output=True)
    assert "items" in out.read_text()
    with pytest.raises(DuetError, match=r"out\.csv:\d+: benchmark 'BM_Skipped' reported an error: deliberately"):
        parse("gbench", {}, ParserInput(files={"out.csv": out}))
    r = parse("gbench", {"skip_errors": True}, ParserInput(files={"out.csv": out}))
    assert [(it.name, it.index) for it in r.iterations] == [("BM_Counted", 0), ("BM_Counted", 1)]
    assert r.metadata["skipped_errors"] == 2


@pytest.mark.parametrize("run_type", [None, "Iteration", "repetition"])
def test_json_run_type_neither_iteration_nor_aggregate_is_refused(tmp_path: Path, run_type: object) -> None:
    # It was taken for an aggregate: a repetition left out without a word.
    doc = json.loads(fixture("gbench.json").read_text())
    doc["benchmarks"][1]["run_type"] = run_type
    (tmp_path / "g.json").write_text(json.dumps(doc))
    with pytest.raises(DuetError, match=rf"g\.json: benchmarks\[1\] \(BM_Accumulate/64\) has run_type {run_type!r}"):
        parse("gbench", {}, ParserInput(files={"g.json": tmp_path / "g.json"}))


def test_json_negative_time_names_the_entry(tmp_path: Path) -> None:
    doc = json.loads(fixture("gbench.json").read_text())
    doc["benchmarks"][2]["real_time"] = -3.5
    (tmp_path / "g.json").write_text(json.dumps(doc))
    with pytest.raises(DuetError, match=r"g\.json: benchmarks\[2\] \(BM_Accumulate/64\) real_time is -3\.5, negative"):
        parse("gbench", {}, ParserInput(files={"g.json": tmp_path / "g.json"}))
