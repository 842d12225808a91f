from __future__ import annotations

import json
from pathlib import Path

import pytest
from harness_fixtures import fixture, inp

from duetbench.errors import DuetError
from duetbench.harness import LogLine, ParserInput, parse
from duetbench.importers import read_jmh


def test_thrpt_and_avgt_become_seconds_per_op_fork_major() -> None:
    r = parse("jmh", {}, inp("jmh_thrpt_avgt.json"))
    assert r.clock == "none" and "-prof" in r.timestamp_note
    concat = [it for it in r.iterations if it.name.startswith("org.example.Bench.concat")]
    parse_ = [it for it in r.iterations if it.name == "org.example.Bench.parse"]
    # ops/s -> s/op is 1/score: 2e6 ops/s is 0.5 us per op.
    assert [it.value_s for it in concat] == pytest.approx([5e-7, 4e-7, 2.5e-7, 1e-6, 2e-7, 1.25e-7])
    assert [it.fork for it in concat] == [0, 0, 0, 1, 1, 1]
    assert [it.index for it in concat] == [0, 1, 2, 3, 4, 5]
    assert concat[0].name == "org.example.Bench.concat:size=10,kind=fast"
    assert [it.value_s for it in parse_] == pytest.approx([1.5e-6, 2e-6, 2.5e-6, 3e-6, 0.5e-6, 1.25e-6])
    assert not any(it.warmup for it in r.iterations)
    assert r.metadata["jmhVersion"] == "1.37" and r.metadata["harness"] == "JMH"


def test_sample_mode_takes_the_weighted_mean_of_each_iteration_histogram() -> None:
    r = parse("jmh", {}, inp("jmh_sample.json"))
    # fork 0: (1·2 + 4·1)/3 = 2 ms, then 2 ms; fork 1: (3·3 + 5·1)/4 = 3.5 ms, then 0.5 ms.
    assert [it.value_s for it in r.iterations] == pytest.approx([2e-3, 2e-3, 3.5e-3, 0.5e-3])
    assert [it.fork for it in r.iterations] == [0, 0, 1, 1]


@pytest.mark.parametrize("unit, score, expected", [
    ("ops/ms", 4.0, 0.25e-3), ("ops/us", 2.0, 0.5e-6), ("ops/ns", 0.5, 2e-9), ("ops/min", 60.0, 1.0)])
def test_throughput_units(tmp_path: Path, unit: str, score: float, expected: float) -> None:
    doc = json.loads(fixture("jmh_thrpt_avgt.json").read_text())[:1]
    doc[0]["primaryMetric"].update(scoreUnit=unit, rawData=[[score]])
    (tmp_path / "r.json").write_text(json.dumps(doc))
    r = parse("jmh", {}, ParserInput(files={"r.json": tmp_path / "r.json"}))
    assert r.iterations[0].value_s == pytest.approx(expected)


@pytest.mark.parametrize("mode, unit, expected", [
    ("avgt", "ns/op", 3e-9), ("ss", "s/op", 3.0), ("ss", "ms/op", 3e-3), ("avgt", "us/op", 3e-6)])
def test_time_units(tmp_path: Path, mode: str, unit: str, expected: float) -> None:
    doc = json.loads(fixture("jmh_thrpt_avgt.json").read_text())[1:]
    doc[0]["mode"] = mode
    doc[0]["primaryMetric"].update(scoreUnit=unit, rawData=[[3.0]])
    (tmp_path / "r.json").write_text(json.dumps(doc))
    assert parse("jmh", {}, ParserInput(files={"r.json": tmp_path / "r.json"})).iterations[0].value_s == \
        pytest.approx(expected)


def test_the_hook_log_gives_timestamps_to_measurement_iterations_only() -> None:
    # 2 forks × (2 warmup + 3 measurement) per benchmark, two benchmarks: the JSON has no warmups.
    log: list[LogLine] = []
    t = 1000
    for _bench in range(2):
        for _fork in range(2):
            for i in range(5):
                log.append(LogLine("A", i, t, t + 10, "w" if i < 2 else "m"))
                t += 100
    r = parse("jmh", {}, inp("jmh_thrpt_avgt.json", log=log))
    assert r.clock == "monotonic" and r.timestamp_note == ""
    m_lines = [line for line in log if line.kind == "m"]
    assert [(it.start_ns, it.end_ns) for it in r.iterations] == [(ln.start_ns, ln.end_ns) for ln in m_lines]


def test_rawdata_suppressed_is_a_clear_error(tmp_path: Path) -> None:
    doc = json.loads(fixture("jmh_thrpt_avgt.json").read_text())
    del doc[0]["primaryMetric"]["rawData"]
    (tmp_path / "r.json").write_text(json.dumps(doc))
    with pytest.raises(DuetError, match=r"r\.json: benchmark 'org.example.Bench.concat': primaryMetric has no "
                                        r"rawData — do not run JMH with -Djmh.json.rawData=false"):
        parse("jmh", {}, ParserInput(files={"r.json": tmp_path / "r.json"}))


@pytest.mark.parametrize("raw, says", [
    ([[1.0, 2.0], []], "fork 2 of 2 has no measurement iterations (its rawData[1] is empty)"),
    ([[], []], "fork 1 of 2 has no measurement iterations (its rawData[0] is empty)"),
    ([], "no forks (its rawData is empty)")])
def test_a_fork_without_iterations_is_named_with_its_benchmark_and_file(tmp_path: Path, raw: list[list[float]],
                                                                        says: str) -> None:
    """Else a fork vanished unnoticed, or `duet import jmh` called the benchmark missing from this file."""
    doc = json.loads(fixture("jmh_real.json").read_text())
    doc[0]["primaryMetric"]["rawData"] = raw
    (tmp_path / "r.json").write_text(json.dumps(doc))
    with pytest.raises(DuetError) as err:
        read_jmh(fixture("jmh_real.json"), tmp_path / "r.json")
    assert str(err.value).startswith(f"{tmp_path / 'r.json'}: benchmark 'org.example.JmhTiny.sumThrpt:size=16': "
                                     f"{says}"), str(err.value)
    assert "-i 1" in (err.value.hint or "")


@pytest.mark.parametrize("content, message", [
    ("[{\"benchmark\": ", "not valid JSON"),
    ("{\"a\": 1}", "expected a top-level array"),
    ("[{\"benchmark\": \"x\"}]", "needs benchmark, mode, primaryMetric"),
    (("[{\"benchmark\": \"x\", \"mode\": \"thrpt\", \"primaryMetric\": {\"scoreUnit\": \"ops/fortnight\", "
      "\"rawData\": [[1]]}}]"), "unknown time unit 'fortnight'"),
    (("[{\"benchmark\": \"x\", \"mode\": \"bogus\", \"primaryMetric\": {\"scoreUnit\": \"s/op\", "
      "\"rawData\": [[1]]}}]"), "unknown mode 'bogus'"),
    (("[{\"benchmark\": \"x\", \"mode\": \"avgt\", \"primaryMetric\": {\"scoreUnit\": \"s/op\", "
      "\"rawData\": [[\"NaN\"]]}}]"), "expected a finite number"),
])
def test_broken_files_name_the_file_and_the_problem(tmp_path: Path, content: str, message: str) -> None:
    (tmp_path / "r.json").write_text(content)
    with pytest.raises(DuetError) as e:
        parse("jmh", {}, ParserInput(files={"r.json": tmp_path / "r.json"}))
    assert str(tmp_path / "r.json") in str(e.value) and message in str(e.value)
    assert "\n" not in str(e.value)


def test_file_selection_errors(tmp_path: Path) -> None:
    with pytest.raises(DuetError, match="no result file was declared"):
        parse("jmh", {}, ParserInput())
    two = inp("jmh_thrpt_avgt.json", "jmh_sample.json")
    with pytest.raises(DuetError, match=r"several result files are declared .* say which one with the parser "
                                        "option 'file'"):
        parse("jmh", {}, two)
    assert len(parse("jmh", {"file": "jmh_sample.json"}, two).iterations) == 4
    with pytest.raises(DuetError, match="option file 'nope.json' is not a declared result file"):
        parse("jmh", {"file": "nope.json"}, two)
    with pytest.raises(DuetError, match=r"missing\.json: result file not found"):
        parse("jmh", {}, ParserInput(files={"r.json": tmp_path / "missing.json"}))


def test_real_jmh_137_output_agrees_with_jmhs_own_scores() -> None:
    # fixtures/jmh_real.json was written by JMH 1.37 itself (see fixtures/README.md): 2 forks × 2 iterations.
    doc = json.loads(fixture("jmh_real.json").read_text())
    r = parse("jmh", {}, inp("jmh_real.json"))
    by_name: dict[str, list[float]] = {}
    for it in r.iterations:
        by_name.setdefault(it.name, []).append(it.value_s)
    assert list(by_name) == ["org.example.JmhTiny.sumThrpt:size=16", "org.example.JmhTiny.sumAvgt:size=16",
                             "org.example.JmhTiny.sample:size=16"]
    thrpt, avgt, sample = (e["primaryMetric"]["score"] for e in doc)
    # JMH's score is the mean of the iterations' scores: ops/s for thrpt, ns/op for avgt.
    assert sum(1 / v for v in by_name["org.example.JmhTiny.sumThrpt:size=16"]) / 4 == pytest.approx(thrpt, rel=1e-9)
    assert sum(by_name["org.example.JmhTiny.sumAvgt:size=16"]) / 4 / 1e-9 == pytest.approx(avgt, rel=1e-9)
    # For sample mode JMH's score is the mean of all samples; weight our per-iteration means by sample counts.
    counts = [sum(c for _, c in it) for fork in doc[2]["primaryMetric"]["rawDataHistogram"] for it in fork]
    means = by_name["org.example.JmhTiny.sample:size=16"]
    assert sum(m * c for m, c in zip(means, counts)) / sum(counts) / 1e-6 == pytest.approx(sample, rel=1e-9)
    assert r.metadata["jmhVersion"] == "1.37"


def test_one_benchmark_in_several_modes_is_one_benchmark_per_mode(tmp_path: Path) -> None:
    # `-bm avgt,ss` writes the same benchmark and @Params twice: a 5 ns average time and a 2 µs single shot
    # are not iterations of one benchmark, so the mode joins the name; other benchmarks keep theirs.
    avgt, ss, other = (json.loads(fixture("jmh_thrpt_avgt.json").read_text())[i] for i in (1, 1, 0))
    ss = {**ss, "mode": "ss", "primaryMetric": {**ss["primaryMetric"], "scoreUnit": "us/op", "rawData": [[2.0]]}}
    (tmp_path / "r.json").write_text(json.dumps([avgt, ss, other]))
    r = parse("jmh", {}, ParserInput(files={"r.json": tmp_path / "r.json"}))
    names = list(dict.fromkeys(it.name for it in r.iterations))
    assert names == ["org.example.Bench.parse [avgt]", "org.example.Bench.parse [ss]",
                     "org.example.Bench.concat:size=10,kind=fast"]
    assert [it.value_s for it in r.iterations if it.name.endswith("[ss]")] == pytest.approx([2e-6])


def test_the_same_benchmark_twice_in_one_mode_is_refused(tmp_path: Path) -> None:
    entry = json.loads(fixture("jmh_thrpt_avgt.json").read_text())[1]
    (tmp_path / "r.json").write_text(json.dumps([entry, entry]))
    with pytest.raises(DuetError, match=r"r\.json: benchmark 'org\.example\.Bench\.parse': "
                                        r"'org\.example\.Bench\.parse' appears twice in mode avgt"):
        parse("jmh", {}, ParserInput(files={"r.json": tmp_path / "r.json"}))


def test_a_throughput_too_small_to_invert_is_refused_where_it_is(tmp_path: Path) -> None:
    # 1/1e-320 is inf: the shared check said "iteration 0 '...' has value inf s", without the benchmark or file.
    doc = json.loads(fixture("jmh_thrpt_avgt.json").read_text())[:1]
    doc[0]["primaryMetric"].update(scoreUnit="ops/us", rawData=[[1e-320]])
    (tmp_path / "r.json").write_text(json.dumps(doc))
    with pytest.raises(DuetError, match=r"r\.json: benchmark 'org\.example\.Bench\.concat': throughput 1e-320 ops/us "
                                        "cannot be turned into time per op"):
        parse("jmh", {}, ParserInput(files={"r.json": tmp_path / "r.json"}))
