"""Argument handling: whatever a user types, one clear line and exit 2 — never a traceback."""
from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from duetbench.cli.main import main

NUMERIC_OPTIONS = ["--runs", "--min-runs", "--max-runs", "--warmup", "--time-budget", "--confidence", "--timeout",
                   "--seed", "--target-width", "--fail-if-slower", "--min-overlap"]

junk = st.one_of(st.text(min_size=0, max_size=8), st.integers(-10**6, 10**6).map(str),
                 st.floats(allow_nan=True, allow_infinity=True).map(str))


def _as_int(value: str) -> int:
    try:
        return int(value)
    except ValueError:
        return 0


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(option=st.sampled_from(NUMERIC_OPTIONS), value=junk)
def test_bad_option_values_never_crash(native_dir: Path, tmp_path: Path, option: str, value: str) -> None:
    # A valid but large --warmup or --runs is obeyed (as hyperfine does), which would only make the test slow.
    assume(not (option in ("--warmup", "--runs") and _as_int(value) > 3))
    runner = CliRunner()
    args = ["compare", "true", "true", option, value, "--runs", "2", "--warmup", "0", "--no-progress",
            "--db", str(tmp_path / "r.db")]
    if option == "--runs":
        args = args[:5] + args[7:]  # keep the value under test as the only --runs
    result = runner.invoke(main, args)
    # SystemExit is how click and we end; anything else would be a traceback for the user.
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code in (0, 1, 2), (args, result.exit_code, result.output)
    if result.exit_code == 2:
        assert "Traceback" not in result.output


@pytest.mark.parametrize("args, expected", [
    (["compare", "true", "true", "--runs", "0"], "--runs"),
    (["compare", "true", "true", "--confidence", "0"], "--confidence"),
    (["compare", "true", "true", "--metric", "rss"], "rss"),
    (["compare", "true", "true", "--name-a", "x", "--name-b", "x"], "different names"),
    (["compare", "true", "true", "--prepare", "a", "--prepare", "b", "--prepare", "c"], "--prepare"),
    (["compare", "", "true"], "empty"),
    # The error names the flag the user typed, not the option's field (target_rciw, min_overlap_rate).
    (["compare", "true", "true", "--target-width", "-0.1"], "invalid option --target-width: must be > 0"),
    (["compare", "true", "true", "--target-width", "inf"], "invalid option --target-width: must be a finite"),
    (["compare", "true", "true", "--min-overlap", "2", "--method", "aduet"], "invalid option --min-overlap: must be <"),
])
def test_specific_usage_errors(native_dir: Path, tmp_path: Path, args: list[str], expected: str) -> None:
    result = CliRunner().invoke(main, [*args, "--db", str(tmp_path / "r.db"), "--no-progress"])
    assert result.exit_code == 2, result.output
    assert expected in result.output


@pytest.mark.parametrize("level", ["0.3", "1", "1.5"])
def test_every_command_takes_the_same_confidence_range(duet, tmp_path: Path, level: str) -> None:
    """Issue 14: --confidence was (0, 1) in compare, [0.5, 1) in analyze and run, [0.5, 0.999] in calibrate."""
    (tmp_path / "c.yml").write_text("campaign: c\nbenchmarks:\n  b: 'true'\n")
    for args in (["compare", "true", "true"], ["run", "c.yml"], ["analyze"], ["calibrate", "--quick"]):
        r = duet(*args, "--confidence", level)
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        assert f"--confidence must be in [0.5, 1), got {float(level)}" in r.stderr, (args, r.stderr)


def test_max_runs_alone_lowers_the_default_minimum_as_in_hyperfine(duet, tmp_path: Path) -> None:
    # hyperfine --max-runs 3 measures 3 runs; duet refused it ("--min-runs (10) is larger than --max-runs (3)")
    # until the minimum was lowered the same way. An explicit --min-runs above it is still refused.
    r = duet("compare", "true", "true", "--max-runs", "3", "--method", "sequential", "--warmup", "0")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0].split(" · ")[2] == "3 runs", r.stdout
    refused = duet("compare", "true", "true", "--min-runs", "5", "--max-runs", "3")
    assert refused.returncode == 2 and "--min-runs (5) is larger than --max-runs (3)" in refused.stderr


def test_short_options_take_a_value_after_an_equals_sign_as_in_hyperfine(duet, tmp_path: Path) -> None:
    # hyperfine -r=2 -w=0 true runs it twice; click read "=2" as the value ("'=2' is not a valid integer")
    r = duet("compare", "-r=3", "-w=0", "-n=first", "true", "true", "--method", "sequential")
    assert r.returncode == 0, r.stderr
    head = r.stdout.splitlines()
    assert head[0].split(" · ")[2] == "3 runs" and "A (first): true" in r.stdout, r.stdout
    # after --, or as a command, nothing is rewritten: "-r=3" there is a command's text
    kept = duet("compare", "--runs", "2", "--method", "sequential", "--", "true", "echo -r=3")
    assert kept.returncode == 0 and "echo -r=3" in kept.stdout, kept.stderr


@pytest.mark.parametrize("command", [["compare", "true"], ["run", "campaign.yml"]])
def test_lock_wait_nan_is_refused(duet, tmp_path: Path, command: list[str]) -> None:
    # click's FloatRange lets nan through (every comparison with it is false): a nan wait ran as some other one
    r = duet(*command, "--lock-wait", "nan")
    assert r.returncode == 2 and "'nan' is not a finite number" in r.stderr, r.stderr
