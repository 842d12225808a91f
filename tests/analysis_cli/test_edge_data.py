"""Data a user can produce and a statistician would worry about, through the real CLI: every value chosen by
hand (`duet import csv`, hand-made `duet measure` samples), so that each edge case is hit exactly. Each run
must end without a traceback, print no NaN, and write valid JSON (no NaN or Infinity tokens)."""
from __future__ import annotations

import csv
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def strict_json(path: Path) -> Any:
    def refuse(token: str) -> None:
        raise AssertionError(f"{path.name} holds {token}, which is not JSON")

    return json.loads(path.read_text(), parse_constant=refuse)


def write_runs(path: Path, a: Sequence[Sequence[float]], b: Sequence[Sequence[float]]) -> None:
    """A CSV of one row per iteration: A's runs and B's runs, as lists of iteration times in seconds."""
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["run", "side", "index", "value"])
        for side, runs in (("A", a), ("B", b)):
            for r, values in enumerate(runs):
                w.writerows([r, side, i, v] for i, v in enumerate(values))


def import_csv(duet, method: str) -> None:  # type: ignore[no-untyped-def]
    r = duet("import", "csv", "t.csv", "--db", "r.db", "--set", f"method={method}", "--set", "benchmark=b",
             "--col", "run=run", "--col", "side=side", "--col", "index=index", "--col", "value=value")
    assert r.returncode == 0, r.stderr


def test_a_duet_interval_beyond_the_float_range_is_unbounded(tmp_path: Path, duet) -> None:
    # Two duet runs whose pair ratios are 1.0 and 1.2, judged at 99.999 %: the t quantile of one degree of
    # freedom (63 662) times the log ratios' standard error puts the upper bound at e^5800. math.exp raised
    # OverflowError, a traceback; such an interval has no upper end, and says so.
    write_runs(tmp_path / "t.csv", [[0.010], [0.010]], [[0.010], [0.012]])
    import_csv(duet, "duet")
    r = duet("analyze", "--db", "r.db", "--confidence", "0.99999", "--export-json", "a.json")
    assert r.returncode == 0, r.stderr
    assert "unbounded" in r.stdout and "nan" not in r.stdout.lower()
    row = strict_json(tmp_path / "a.json")["rows"][0]
    assert row["verdict"] == "no difference" and row["ci_high"] is None and row["problem"] == ""


def measure_samples(path: Path, pt_s: float, et_s: Sequence[float]) -> None:
    """A samples file as `duet measure` writes it, with the given process and elapsed times."""
    header = {"format": "duetbench-measure", "version": 1, "command": "true", "argv": ["true"], "cpu": 0,
              "runs": len(et_s), "warmup": 0, "started": 1795891840.0, "host": {}}
    samples = [{"index": k, "warmup": False, "status": "ok", "exit_code": 0, "et_s": et, "pt_s": pt_s,
                "user_s": pt_s, "sys_s": 0.0, "start_ns": 10**12 + k * 10**9, "end_ns": 10**12 + k * 10**9 + 10**6,
                "cpu": 0, "cpu_seen": 0, "nivcsw": 0, "window_s": 0.01, "snapshot_cost_ms": 1.0, "activity": []}
               for k, et in enumerate(et_s)]
    path.write_text("".join(json.dumps(x) + "\n" for x in [header, *samples]))


def test_measure_export_of_a_zero_process_time_is_valid_json(tmp_path: Path, duet) -> None:
    # A command whose process time reads 0 in every sample has no relative error (std/mean): the table
    # shows "—", but the JSON export wrote the bare token NaN, which JSON parsers refuse.
    measure_samples(tmp_path / "s.jsonl", 0.0, [0.0010, 0.0011, 0.0012, 0.0010, 0.0011])
    r = duet("measure", "--load", "s.jsonl", "--export-json", "emp.json")
    assert r.returncode == 0, r.stderr
    data = strict_json(tmp_path / "emp.json")
    assert data["pt"]["before"]["relative_error"] is None
    assert data["et"]["before"]["relative_error"] > 0


def test_one_commands_plus_minus_is_the_half_width_of_the_interval_shown(tmp_path: Path, duet) -> None:
    # Three runs, the second 0.3 s longer: the mean's t interval reaches below zero and is cut there. The
    # "±" was half the cut interval's width, so mean ± it matched neither end printed beside it.
    slow_second = 'n=$(cat count 2>/dev/null || echo 0); echo $((n+1)) > count; if [ $n -eq 1 ]; then sleep 0.3; fi'
    r = duet("compare", slow_second, "--runs", "3", "--warmup", "0", "--db", "r.db", "--export-json", "c.json",
             "--export-markdown", "c.md")
    assert r.returncode == 0, r.stderr
    b = strict_json(tmp_path / "c.json")["benchmark"]
    assert b["low"] == 0.0 < b["mean"] < b["high"]
    plus_minus = f"(± {(b['high'] - b['mean']) / b['mean']:.2%})"
    assert plus_minus in r.stdout and plus_minus in (tmp_path / "c.md").read_text()


def test_a_warmup_that_takes_every_iteration_is_named(tmp_path: Path, duet) -> None:
    # Runs of 2 iterations and --warmup 5: nothing is left to analyse. The reason said only "got 0 A and 0 B",
    # though `analyze` words the warm-up's share; duet analyze handed it the rows without their warm-up.
    write_runs(tmp_path / "t.csv", [[0.010, 0.011]] * 3, [[0.012, 0.011]] * 3)
    import_csv(duet, "sequential")
    r = duet("analyze", "--db", "r.db", "--warmup", "5")
    assert r.returncode == 0, r.stderr
    assert "got 0 A and 0 B (the warm-up took 6 A and 6 B: lower it)" in r.stdout


def test_one_sequential_run_per_side_is_said_in_runs_by_every_estimator(tmp_path: Path, duet) -> None:
    # One run of 5 iterations per side: run-means said "A (baseline) has only 1 value; at least 2 values
    # are needed" of a side with 5 values (its units are run means); the others say "1 run".
    write_runs(tmp_path / "t.csv", [[0.010, 0.011, 0.012, 0.010, 0.011]], [[0.020, 0.021, 0.022, 0.020, 0.021]])
    import_csv(duet, "sequential")
    for estimator in ("auto", "hierarchical", "run-means"):
        r = duet("analyze", "--db", "r.db", "--estimator", estimator)
        assert r.returncode == 0, r.stderr
        assert "A (baseline) has 1 run; at least 2 runs are needed" in r.stdout, (estimator, r.stdout)


def test_a_bound_of_a_huge_ratio_is_written_with_an_exponent(tmp_path: Path, duet) -> None:
    # The same two duet runs at 99.99 %: the upper bound is e^580, finite. Fixed-point wrote it out in 250
    # digits, in the table ("[0.0000, 120593…0.0000]"), the verdict line and the CI width.
    write_runs(tmp_path / "t.csv", [[0.010], [0.010]], [[0.010], [0.012]])
    import_csv(duet, "duet")
    r = duet("analyze", "--db", "r.db", "--confidence", "0.9999", "--export-markdown", "a.md")
    assert r.returncode == 0, r.stderr
    text = r.stdout + (tmp_path / "a.md").read_text()
    assert "e+25" in text and not re.search(r"\d{20}", text), text


def test_a_level_of_99_9_percent_is_not_called_100_percent(tmp_path: Path, duet) -> None:
    # JMH's default level is 99.9 %: "{:.0%}" printed it as "Mean, 100% CI" (a certainty no interval has),
    # as did the campaign table's header and the hyperfine-like summary.
    r = duet("compare", "true", "--runs", "3", "--warmup", "0", "--confidence", "0.999", "--db", "r.db")
    assert r.returncode == 0, r.stderr
    (line,) = [x for x in r.stdout.splitlines() if x.lstrip().startswith("Mean,")]
    assert "Mean, 99.9% CI" in line


def test_the_summary_of_several_commands_words_huge_bounds(tmp_path: Path, duet) -> None:
    # Two duet pairs per command at 99.999 %: the bounds reach e^500. The summary ("A ran ... as fast as B")
    # printed them in 200 digits under the heading "Summary (wall time, 100% CI)".
    r = duet("compare", "true", "true", "true", "--runs", "2", "--warmup", "0", "--method", "duet",
             "--confidence", "0.99999", "--db", "r.db")
    assert r.returncode == 0, r.stderr
    summary = r.stdout[r.stdout.index("Summary"):].split("\n\n")[0].split("warning:")[0]
    assert "99.999% CI" in summary and "100%" not in summary and not re.search(r"\d{20}", summary), summary


def test_a_time_too_large_to_square_is_one_clear_reason(tmp_path: Path, duet) -> None:
    # hyperfine JSON accepts any finite number: a run of 1e308 s made every variance inf and the row's reason
    # "degrees of freedom must be positive (got nan)".
    (tmp_path / "hf.json").write_text(json.dumps({"results": [
        {"command": "a", "times": [0.010, 1e308, 0.011]}, {"command": "b", "times": [0.020, 0.021, 0.022]}]}))
    assert duet("import", "hyperfine", "hf.json", "--db", "r.db").returncode == 0
    r = duet("analyze", "--db", "r.db", "--export-json", "a.json")
    assert r.returncode == 0, r.stderr
    assert "A has a time of 1e+308 s, too large to compute with" in r.stdout and "nan" not in r.stdout.lower()
    assert "too large" in strict_json(tmp_path / "a.json")["rows"][0]["problem"]


def test_a_p_value_below_the_float_range_is_not_zero(tmp_path: Path, duet) -> None:
    # 1200 runs per side, every B run slower than every A run: the U test's normal tail is ~1e-390, which
    # underflows; the table printed "U p 0", a certainty no test gives.
    times_a = [0.010 + 1e-7 * i for i in range(1200)]
    times_b = [0.020 + 1e-7 * i for i in range(1200)]
    (tmp_path / "hf.json").write_text(json.dumps({"results": [
        {"command": "a", "times": times_a}, {"command": "b", "times": times_b}]}))
    assert duet("import", "hyperfine", "hf.json", "--db", "r.db").returncode == 0
    r = duet("analyze", "--db", "r.db", "--export-json", "a.json")
    assert r.returncode == 0, r.stderr
    (row,) = [line for line in r.stdout.splitlines() if "a vs b" in line]
    assert "<1e-300" in row and " 0 " not in row
    assert strict_json(tmp_path / "a.json")["rows"][0]["u_test_p"] == 0.0  # the number as computed
