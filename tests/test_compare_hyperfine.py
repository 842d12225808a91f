"""``duet compare`` as hyperfine users use it (issue 15): one command, three commands, -n, --reference,
--show-output labelled, --output, --input, -u, --style, and exit codes. Real processes, real store."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from cli_output import one_line_error

from duetbench.analyze.single import aa_resolution, mean_interval, precise_enough, summarize
from duetbench.config.compare import detect_shell_syntax

SEQ = ["--no-progress", "--warmup", "0", "--method", "sequential"]
ONE = ["--no-progress", "--warmup", "0"]




# -- pure functions ----------------------------------------------------------------------------------

@pytest.mark.parametrize("command, found", [
    ("seq 1000 | sort -r", "pipe"), ("echo $HOME > /dev/null", "variable"), ("a && b", "&&"), ("a; b", ";"),
    ("cat < in.txt", "redirection"), ("ls *.py", "glob"), ("echo `date`", "substitution"), ("cd /tmp", "shell word"),
    ("FOO=1 env", "assignment"), ('echo "$HOME"', "double quotes"), ("ls ~/x", "home"),
    ("sleep 0.1", None), ("python -c 'print(1)'", None), ("awk '{print $1}' f.txt", None), ('echo "a|b"', None),
    ("git log --format=%h", None), (r"echo a\|b", None),
])
def test_shell_syntax_detection(command: str, found: str | None) -> None:
    feature = detect_shell_syntax(command)
    assert (feature is None) if found is None else (feature is not None and found in feature), feature


def test_one_command_statistics() -> None:
    x = np.array([0.10, 0.11, 0.09, 0.10, 0.105, 0.095])
    mean, low, high = mean_interval(x, 0.99)
    assert low < mean < high and mean == pytest.approx(x.mean())
    b = summarize("wall", x, [0.01] * 6, [0.002] * 6, 0.99)
    assert (b.min, b.max, b.runs) == (0.09, 0.11, 6) and b.user == pytest.approx(0.01)
    # t_{10} at 99% ≈ 3.169; CV·√(2/6)
    assert b.aa_resolution == pytest.approx(3.1693 * b.cv * math.sqrt(2 / 6), rel=1e-3)
    assert math.isnan(aa_resolution(b.cv, 1, 0.99))
    assert not precise_enough(x, 0.01, 0.99) and precise_enough(x, 0.5, 0.99)
    # Three very noisy runs: the t interval of the mean reaches below zero; a time's interval stops at zero.
    noisy = np.array([0.01, 0.30, 0.02])
    assert mean_interval(noisy, 0.99)[1] < 0
    assert summarize("wall", noisy, [0.0] * 3, [0.0] * 3, 0.99).low == 0.0


# -- one command --------------------------------------------------------------------------------------

def test_one_command_is_benchmarked_stored_and_exported(duet, tmp_path: Path) -> None:
    result = duet("compare", "sleep 0.01", "--runs", "5", "--export-json", "o.json", "--export-hyperfine", "h.json",
                  "--export-csv", "o.csv", *ONE)
    assert result.returncode == 0, result.stderr
    for text in ("Time (mean ± σ)", "Range (min … max)", "User:", "System:", "99% CI", "resolve about"):
        assert text in result.stdout, text
    doc = json.loads((tmp_path / "o.json").read_text())
    assert doc["method"] == "single" and doc["comparisons"] == []
    bench = doc["benchmark"]
    assert bench["runs"] == 5 and 0.009 < bench["min"] <= bench["mean"] <= bench["max"] < 0.5
    assert bench["low"] < bench["mean"] < bench["high"]
    hf = json.loads((tmp_path / "h.json").read_text())["results"]
    assert len(hf) == 1 and hf[0]["command"] == "sleep 0.01" and len(hf[0]["times"]) == 5
    assert len((tmp_path / "o.csv").read_text().strip().splitlines()) == 1 + 5
    shown = duet("show")
    assert "one command" in shown.stdout and "sleep 0.01" in shown.stdout
    again = duet("show", "1")
    assert "Range (min … max)" in again.stdout


def test_one_command_stops_adaptively_on_its_means_precision(duet, tmp_path: Path) -> None:
    result = duet("compare", "sleep 0.02", "--min-runs", "3", "--target-width", "0.5", "--export-json", "o.json",
                  *ONE)
    assert result.returncode == 0, result.stderr
    doc = json.loads((tmp_path / "o.json").read_text())
    # a 50%-wide interval of a sleep's mean is reached long before --max-runs (300)
    assert 3 <= doc["benchmark"]["runs"] < 50 and doc["options"]["stopped_by"] == "precision"


def test_one_command_refuses_what_needs_two(duet) -> None:
    assert "two commands" in one_line_error(duet("compare", "true", "--method", "duet", *ONE[:-2]))
    assert "second command" in one_line_error(duet("compare", "true", "--fail-if-slower", "5", *ONE))


def test_one_command_parameter_scan(duet, tmp_path: Path) -> None:
    result = duet("compare", "sleep 0.0{n}", "-P", "n", "1", "2", "--runs", "3", "--export-json", "s.json",
                  "--export-markdown", "s.md", *ONE)
    assert result.returncode == 0, result.stderr
    assert "benchmarks of one command" in result.stdout and "mean ± σ" in result.stdout
    scan = json.loads((tmp_path / "s.json").read_text())["scan"]
    means = [e["benchmark"]["mean"] for e in scan]
    assert [e["parameters"]["n"] for e in scan] == ["1", "2"] and means[0] < means[1]
    assert [e["benchmark"]["command"] for e in scan] == ["sleep 0.01", "sleep 0.02"]
    rows = [line for line in (tmp_path / "s.md").read_text().splitlines() if line.startswith("|")]
    assert rows[0] == "| n | Command | Mean [ms] | Min [ms] | Max [ms] | Runs |"
    assert rows[2].startswith("| 1 | sleep 0.01 | ") and rows[3].startswith("| 2 | sleep 0.02 | ")


# -- several commands ---------------------------------------------------------------------------------

def test_three_commands_each_against_the_first(duet, tmp_path: Path) -> None:
    # slow sleeps 4x as long as mid: 5 runs of a 2x pair on a busy machine can leave the interval near 1
    result = duet("compare", "sleep 0.02", "sleep 0.08", "sleep 0.005", "-n", "mid", "-n", "slow", "-n", "quick",
                  "--runs", "5", "--export-json", "m.json", *SEQ)
    assert result.returncode == 0, result.stderr
    doc = json.loads((tmp_path / "m.json").read_text())
    verdicts = {e["parameters"]["command"]: e["comparisons"][0]["verdict"] for e in doc["scan"]}
    assert verdicts == {"slow": "slower", "quick": "faster"}
    assert all(e["method"] == "sequential" and e["comparisons"][0]["a"]["name"] == "mid" for e in doc["scan"])
    out = result.stdout
    # hyperfine's summary without --reference: about the fastest (tests/test_compare_series.py has the rest)
    assert "Summary" in out and "quick was the fastest" in out and "quick ran" in out
    assert "times faster than mid" in out and "times faster than slow" in out
    assert "#1" in duet("show").stdout and "#2" in duet("show").stdout


def test_reference_by_index_and_by_command(duet, tmp_path: Path) -> None:
    result = duet("compare", "sleep 0.01", "sleep 0.03", "sleep 0.02", "--reference", "3", "--runs", "4",
                  "--export-json", "r.json", *SEQ)
    assert result.returncode == 0, result.stderr
    scan = json.loads((tmp_path / "r.json").read_text())["scan"]
    assert [(e["comparisons"][0]["a"]["command"], e["comparisons"][0]["b"]["command"]) for e in scan] == [
        ("sleep 0.02", "sleep 0.01"), ("sleep 0.02", "sleep 0.03")]
    # a reference command of its own, as hyperfine's: with one command given, a comparison of two
    # 4x the reference's sleep, so that 4 runs say "slower" on a busy machine too (at 2x: intervals from 1.13)
    result = duet("compare", "sleep 0.04", "--reference", "sleep 0.01", "--runs", "4", "--export-json", "o.json",
                  *SEQ)
    assert result.returncode == 0, result.stderr
    wall = next(c for c in json.loads((tmp_path / "o.json").read_text())["comparisons"] if c["metric"] == "wall")
    assert wall["a"]["command"] == "sleep 0.01" and wall["verdict"] == "slower", wall
    assert "from 1 to 3" in one_line_error(duet("compare", "true", "true", "true", "--reference", "7", *SEQ))


def test_names_aliases_and_too_many_names(duet, tmp_path: Path) -> None:
    result = duet("compare", "true", "true", "--name-a", "old", "-n", "x", *SEQ, "--runs", "2")
    assert "both name" in one_line_error(result)
    result = duet("compare", "true", "true", "--name-a", "old", "--name-b", "new", "--runs", "2",
                  "--export-json", "n.json", *SEQ)
    assert result.returncode == 0, result.stderr
    wall = json.loads((tmp_path / "n.json").read_text())["comparisons"][0]
    assert (wall["a"]["name"], wall["b"]["name"]) == ("old", "new")
    assert "3 names" in one_line_error(duet("compare", "true", "true", "-n", "a", "-n", "b", "-n", "c", *SEQ))
    assert "both named" in one_line_error(duet("compare", "true", "true", "true", "-n", "a", "-n", "a", *SEQ))


def test_a_failing_command_and_a_tripped_threshold_exit_differently(duet) -> None:
    failed = duet("compare", "sleep 0.01", "false", "sleep 0.02", "--runs", "3", *SEQ)
    assert failed.returncode == 1 and "failed" in one_line_error(failed)
    slower = duet("compare", "sleep 0.01", "sleep 0.01", "sleep 0.05", "--runs", "6", "--fail-if-slower", "20", *SEQ)
    assert slower.returncode == 3, slower.stderr
    assert "more than 20% slower" in slower.stdout


# -- output, input, units, style ----------------------------------------------------------------------

def test_show_output_is_labelled_per_command(duet) -> None:
    result = duet("compare", "echo from-a", "sh -c 'echo from-b; echo oops >&2'", "-n", "alpha", "-n", "beta",
                  "--show-output", "--runs", "2", *SEQ)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "alpha | from-a" in lines and "beta | from-b" in lines
    assert not any(line.strip() in ("from-a", "from-b") for line in lines)  # never unlabelled
    assert "beta | oops" in result.stderr.splitlines()


def test_output_to_files_pipe_and_input_file(duet, tmp_path: Path) -> None:
    (tmp_path / "in.txt").write_text("first\nsecond\n")
    result = duet("compare", "cat", "sort -r", "--input", "in.txt", "--output", "a.txt", "--output", "b.txt",
                  "--runs", "2", *ONE)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "a.txt").read_text() == "first\nsecond\n"
    assert (tmp_path / "b.txt").read_text() == "second\nfirst\n"
    # pipe: the command writes into a pipe that is read to the end (a 2 MB write would block otherwise)
    result = duet("compare", "head -c 2000000 /dev/zero", "--output", "pipe", "--runs", "2", "--timeout", "20",
                  *ONE)
    assert result.returncode == 0, result.stderr
    assert "same time" in one_line_error(duet("compare", "true", "true", "--output", "o.txt", "--runs", "2",
                                              "--no-progress"))
    assert "readable file" in one_line_error(duet("compare", "cat", "--input", "missing.txt", *ONE))
    assert "--show-output" in one_line_error(duet("compare", "true", "--output", "pipe", "--show-output", *ONE))


def test_each_invocation_sees_its_number_as_hyperfine_names_it(duet, tmp_path: Path) -> None:
    # hyperfine's own example for keeping every iteration's output: `my-command > output-${HYPERFINE_ITERATION}.log`
    result = duet("compare", "echo $HYPERFINE_ITERATION $DUET_ITERATION >> a.txt",
                  "echo $HYPERFINE_ITERATION >> b.txt", "--warmup", "1", "--runs", "3", "--method", "sequential",
                  "--no-progress")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "a.txt").read_text().split("\n")[:4] == ["warmup-0 0", "1 1", "2 2", "3 3"]
    assert (tmp_path / "b.txt").read_text().split() == ["warmup-0", "1", "2", "3"]


def test_ignore_failure_with_a_list_of_exit_codes(duet, tmp_path: Path) -> None:
    # hyperfine 1.20: --ignore-failure=2 times the runs that exit 2 and stops at any other code; -i alone
    # (and =all-non-zero) every non-zero one; the value only attached with "=", so `-i CMD` stays the flag.
    exits_2 = "sh -c 'exit 2'"
    for how in (["--ignore-failure=2"], ["-i=1,2"], ["-i"], ["--ignore-failure=all-non-zero"]):
        r = duet("compare", "true", exits_2, "--runs", "3", *ONE, *how)
        assert r.returncode == 0, (how, r.stderr)
        assert "3 runs" in r.stdout.splitlines()[0], (how, r.stdout)
    other = duet("compare", "true", exits_2, "--runs", "3", *ONE, "--ignore-failure=1")
    assert other.returncode == 1 and "failed with exit code 2" in other.stderr, other.stderr
    # pairs queued to the launchers (not halted by them when failures are ignored): nothing is stored after
    # the first pair that exits with another code
    late = duet("compare", "true", "sh -c 'test $DUET_ITERATION -lt 5 && exit 2 || exit 3'", "--method", "duet",
                "--runs", "8", *ONE, "--ignore-failure=2", "--export-json", "late.json")
    assert late.returncode == 1 and "failed with exit code 3 (invocation 5)" in late.stderr, late.stderr
    stored = json.loads((tmp_path / "late.json").read_text())["invocations"]
    assert [(i["side"], i["exit_code"]) for i in stored][-2:] == [("A", 0), ("B", 3)] and len(stored) == 12
    for bad in ("--ignore-failure=x", "--ignore-failure=0", "-i=256", "--ignore-failure="):
        refused = duet("compare", "true", exits_2, "--runs", "3", *ONE, bad)
        assert refused.returncode == 2 and "not a list of exit codes" in refused.stderr, (bad, refused.stderr)
    # after `--` it is a command's word, not the option
    word = duet("compare", "--runs", "2", *ONE, "--", "true", "--ignore-failure=2")
    assert word.returncode == 2 and "command B not found: '--ignore-failure=2'" in word.stderr, word.stderr


def test_hyperfines_short_hook_flags(duet, tmp_path: Path) -> None:
    # -s/-p/-C/-c: hyperfine's --setup, --prepare, --conclude (1.19 on) and --cleanup
    result = duet("compare", "true", "true", "--method", "sequential", "--runs", "2", *ONE,
                  "-s", "echo s >> hooks.txt", "-p", "echo p >> hooks.txt", "-C", "echo C >> hooks.txt",
                  "-c", "echo c >> hooks.txt")
    assert result.returncode == 0, result.stderr
    seen = (tmp_path / "hooks.txt").read_text().split()
    assert seen[0] == "s" and seen[-1] == "c" and seen.count("p") == seen.count("C") == 4, seen


def test_time_unit_and_style(duet) -> None:
    result = duet("compare", "sleep 0.01", "--runs", "3", "-u", "microsecond", *ONE)
    assert result.returncode == 0 and " µs" in result.stdout and " ms" not in result.stdout
    result = duet("compare", "sleep 0.01", "--runs", "3", "--time-unit", "second", *ONE)
    assert result.returncode == 0 and " s " in result.stdout
    quiet = duet("compare", "sleep 0.01", "--runs", "3", "--style", "none", *ONE)
    assert quiet.returncode == 0 and quiet.stdout == ""
    basic = duet("compare", "sleep 0.01", "--runs", "3", "--style", "basic", *ONE)
    assert "Range (min … max)" in basic.stdout and "\x1b[" not in basic.stdout
    full = duet("compare", "sleep 0.01", "--runs", "3", "--style", "color", *ONE)
    assert "\x1b[" in full.stdout  # colours even though stdout is not a terminal


def test_help_documents_the_exit_codes(duet) -> None:
    text = duet("compare", "--help").stdout
    assert "3 --fail-if-slower tripped" in " ".join(text.split()) and "-n, --command-name" in text


def test_a_shell_commands_missing_program_is_reported_before_measuring(duet, tmp_path: Path) -> None:
    result = duet("compare", "no-such-program-xyz 1 | sort", *ONE)
    assert result.returncode == 2 and "not found" in one_line_error(result)
    assert not (tmp_path / ".duet" / "results.db").exists()


def test_shell_option_also_runs_setup_prepare_and_cleanup(duet, tmp_path: Path) -> None:
    """-S/--shell applies to --setup/--prepare/--conclude/--cleanup too, as hyperfine runs them in its shell:
    `shopt` exists in bash only, so with /bin/sh (dash on Debian) these hooks would fail."""
    r = duet("compare", "true", "true", "-S", "bash", "--runs", "3", "--no-progress", "--warmup", "0",
             "--setup", f"shopt -s extglob && echo s >> {tmp_path}/log",
             "--prepare", f"shopt -q extglob; echo p >> {tmp_path}/log",
             "--cleanup", f"shopt -u extglob && echo c >> {tmp_path}/log")
    assert r.returncode == 0, r.stderr
    log = (tmp_path / "log").read_text().split()
    assert log[0] == "s" and log[-1] == "c" and log.count("p") >= 6
