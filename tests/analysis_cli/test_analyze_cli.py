"""`duet analyze` on a real stored campaign: options, filters, exports, the CI gate, clear errors."""
from __future__ import annotations

import csv
import json
import shutil
import sys
from pathlib import Path

import pytest

HARNESS = Path(__file__).resolve().parents[1] / "campaign" / "harness.py"


@pytest.fixture(scope="module")
def campaign_dir(tmp_path_factory: pytest.TempPathFactory, native_dir: Path) -> Path:
    """One small campaign, measured once for all the tests here: B does 4x the work of A (2x for aduet,
    whose pairs need iterations of similar lengths to overlap). 2x was not enough for the verdicts on every
    host: on an AMD EPYC VM this loop ran ~1.65x faster in some CPython processes than in others over
    whole runs (4.0 vs 6.5 ms, alone and pinned, changing from minute to minute), so 5 runs of a 2x
    difference sometimes gave a 99 % CI holding 1."""
    d = tmp_path_factory.mktemp("analyze")
    shutil.copy(HARNESS, d / "harness.py")
    py = sys.executable
    (d / "campaign.yml").write_text(f"""campaign: an
seed: 9
methods: {{sequential: 5, duet: 5}}
parser: {{name: regex, pattern: 'iteration \\d+: (?P<value>[0-9.]+) s'}}
timeout: 60
benchmarks:
  slow-b:
    A: {py} harness.py --iterations 12 --work 300000
    B: {py} harness.py --iterations 12 --work 1200000
  slow-b-async:
    A: {py} harness.py --iterations 12 --work 300000
    B: {py} harness.py --iterations 12 --work 600000
    methods: {{aduet: 5}}
  same:
    command: {py} harness.py --iterations 12 --work 300000
    methods: {{duet: 2}}
""")
    return d


@pytest.fixture(scope="module")
def measured(campaign_dir: Path, native_dir: Path) -> Path:
    import os
    import subprocess

    import duetbench

    env = dict(os.environ, DUETBENCH_NATIVE_DIR=str(native_dir), COLUMNS="200")
    env["PYTHONPATH"] = str(Path(duetbench.__file__).resolve().parent.parent) + os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, "-m", "duetbench", "run", "campaign.yml", "--no-progress"], cwd=campaign_dir,
                       env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return campaign_dir


def analyze(duet_env: dict[str, str], cwd: Path, *args: str):  # type: ignore[no-untyped-def]
    import subprocess

    r = subprocess.run([sys.executable, "-m", "duetbench", "analyze", *args], cwd=cwd, env=duet_env,
                       capture_output=True, text=True, timeout=120)
    assert "Traceback" not in r.stderr, r.stderr
    return r


def test_default_analysis_of_the_latest_campaign(measured: Path, duet_env: dict[str, str]) -> None:
    r = analyze(duet_env, measured, "--export-json", "a.json", "--export-csv", "a.csv")
    assert r.returncode == 0, r.stderr
    data = json.loads((measured / "a.json").read_text())
    rows = {(x["benchmark"], x["method"]): x for x in data["rows"]}
    assert set(rows) == {("slow-b", "sequential"), ("slow-b", "duet"), ("slow-b-async", "aduet"),
                         ("same", "duet")}
    assert rows[("slow-b", "duet")]["verdict"] == "slower" and rows[("slow-b", "duet")]["ratio"] > 1.2
    assert rows[("slow-b", "duet")]["runs"] == 5 and rows[("slow-b", "duet")]["iterations_a"] == 60
    for x in rows.values():
        assert x["problem"] == "" and x["ci_low"] <= x["ratio"] <= x["ci_high"], x
        assert x["confidence_level"] == 0.99
    with (measured / "a.csv").open() as f:
        assert len(list(csv.DictReader(f))) == 4
    assert "slow-b" in r.stdout and "aduet" in r.stdout


def test_filters_and_options(measured: Path, duet_env: dict[str, str]) -> None:
    r = analyze(duet_env, measured, "--benchmark", "slow*", "--method", "duet", "--warmup", "25%", "--winsorize",
                "--estimator", "merged", "--confidence", "0.95", "--resamples", "2000", "--export-json", "b.json")
    assert r.returncode == 0, r.stderr
    rows = json.loads((measured / "b.json").read_text())["rows"]
    assert [(x["benchmark"], x["method"]) for x in rows] == [("slow-b", "duet")]
    assert rows[0]["iterations_a"] == 5 * 9  # 12 per run, the first 25% (3) dropped
    assert rows[0]["confidence_level"] == 0.95


def test_cpu_metric_uses_each_runs_process_time(measured: Path, duet_env: dict[str, str]) -> None:
    r = analyze(duet_env, measured, "--metric", "cpu", "--benchmark", "slow-b*", "--export-json", "c.json")
    assert r.returncode == 0, r.stderr
    rows = {x["method"]: x for x in json.loads((measured / "c.json").read_text())["rows"]}
    assert rows["aduet"]["iterations_a"] == 5  # one value per run
    # diluted by interpreter start-up, which is the same for both
    assert rows["aduet"]["ratio"] > 1.02 and rows["sequential"]["ratio"] > 1.02
    # the faster side of a sync duet spins at the barrier: its CPU time is not its work
    assert rows["duet"]["ratio"] is None and "spins at the barrier" in rows["duet"]["problem"]


def test_fail_if_slower_gates_and_writes_markdown(measured: Path, duet_env: dict[str, str]) -> None:
    md = measured / "summary.md"
    gate = analyze(duet_env, measured, "--method", "duet", "--fail-if-slower", "10", "--export-markdown", str(md))
    assert gate.returncode == 3 and "slow-b" in gate.stdout
    text = md.read_text()
    assert "| slow-b | duet |" in text and "slower" in text and "slower by more than 10%" in text
    ok = analyze(duet_env, measured, "--method", "duet", "--fail-if-slower", "500")
    assert ok.returncode == 0, ok.stderr


@pytest.mark.parametrize("args, message", [
    (("--campaign", "99"), "no campaign #99"),
    (("--warmup", "lots"), "--warmup 'lots'"),
    (("--benchmark", "nothing*"), "nothing to analyse"),
    (("--confidence", "1.5"), "--confidence must be"),
    (("--db", "missing.db"), "no results database"),
])
def test_bad_input_is_one_clear_line(measured: Path, duet_env: dict[str, str], args: tuple[str, ...],
                                     message: str) -> None:
    r = analyze(duet_env, measured, *args)
    assert r.returncode == 2 and message in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) <= 2


def test_report_writes_one_offline_html_file(measured: Path, duet_env: dict[str, str]) -> None:
    import subprocess

    r = subprocess.run([sys.executable, "-m", "duetbench", "report", "-o", "r.html", "--resamples", "1000"],
                       cwd=measured, env=duet_env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    html = (measured / "r.html").read_text()
    assert "campaign an" in html and "slow-b" in html and "same" in html
    assert "https://" not in html and "<script src" not in html


def test_studies_on_a_stored_campaign(measured: Path, duet_env: dict[str, str]) -> None:
    r = analyze(duet_env, measured, "--studies", "--aa", "--resamples", "1000", "--export-json", "s.json",
                "--export-csv", "s.csv")
    assert r.returncode == 0, r.stderr
    assert "Method studies" in r.stdout and "machine time saved" in r.stdout
    studies = json.loads((measured / "s.json").read_text())["studies"]
    # duet and aduet run A and B at once: they save machine time against running them one after the other
    # Ideally 1 - 4/5 here (B does 4x the work); only plausible, not positive: 5 runs of each method on a host
    # whose per-process speed changes ~1.65x (see campaign_dir) gave -0.004 once, and below -0.3 beside other
    # test suites: a share of the machine time, below 1, is what holds on any host under any load.
    assert -1 < studies["runtime_saving"]["duet"] < 0.8
    assert set(studies["mds"]) >= {"duet", "sequential"} and set(studies["aa_false_positive_rate"]) >= {"duet"}
    assert all(0 <= share <= 1 for _, share in studies["mds"]["duet"])
    with (measured / "s.studies.csv").open() as f:
        studies_rows = list(csv.DictReader(f))
    assert {r["study"] for r in studies_rows} >= {"runtime", "ci_width", "shuffle", "aa", "mds"}


def test_cpu_metric_of_an_imported_campaign_says_there_is_none(tmp_path: Path, duet) -> None:
    # The import stores CPU time 0 for every run (the source had none): analysis said "A (baseline) contains 0
    # at index 0; times must be > 0", as if the measurements were broken.
    (tmp_path / "hf.json").write_text(json.dumps({"results": [
        {"command": "a", "times": [0.010, 0.011, 0.012]}, {"command": "b", "times": [0.020, 0.021, 0.022]}]}))
    assert duet("import", "hyperfine", "hf.json", "--db", "r.db").returncode == 0
    r = duet("analyze", "--db", "r.db", "--metric", "cpu")
    assert r.returncode == 2, r.stdout
    assert "campaign #1 hyperfine:hf.json was imported from hyperfine, which records no process CPU time" in r.stderr
    assert "--metric wall" in r.stderr and "contains 0" not in r.stdout + r.stderr
