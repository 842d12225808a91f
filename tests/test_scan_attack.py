"""``duet compare``'s hyperfine flags where hyperfine users would trip: -L's escaped commas, -P's numbers,
a repeated -P/-D, --runs beside --min-runs/--max-runs, --min-runs alone, --input from a device, options
given once per command, one --output file for both sides of a duet. Real processes, real store."""
from __future__ import annotations

import json
from pathlib import Path

from cli_output import one_line_error

SEQ = ["--no-progress", "--warmup", "0", "--method", "sequential"]


def test_an_escaped_comma_stays_in_the_list_value(duet, tmp_path: Path) -> None:
    # hyperfine: -L x 'a\,b,c' gives the values "a,b" and "c"
    result = duet("compare", "echo {x}", "-L", "x", r"a\,b,c", "--output", "out.txt", "--runs", "2", *SEQ)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "out.txt").read_text() == "c\n"  # the last invocation's output: the last value
    assert "a,b" in result.stdout and "a\\" not in result.stdout


def test_a_scan_of_absurd_numbers_is_one_line(duet) -> None:
    line = one_line_error(duet("compare", "echo {x}", "-P", "x", "1e500", "1e500", *SEQ))
    assert "1e500" in line and "digits" in line


def test_runs_contradicted_by_min_or_max_runs_is_refused(duet) -> None:
    # hyperfine refuses --runs beside --min-runs/--max-runs; silently measuring 2 runs after -m 50 was asked
    # for would be a surprise.
    for args, flag in ((["-r", "2", "-m", "50"], "--min-runs"), (["--runs", "5", "--max-runs", "3"], "--max-runs")):
        result = duet("compare", "true", *args, *SEQ)
        assert result.returncode == 2 and flag in one_line_error(result), result.stderr
    assert duet("compare", "true", "--runs", "3", "--min-runs", "3", "--max-runs", "3", *SEQ).returncode == 0


def test_input_may_be_a_device(duet, tmp_path: Path) -> None:
    # hyperfine's --input opens what it is given: /dev/zero feeds bytes, /dev/null nothing.
    result = duet("compare", "head -c 5", "--input", "/dev/zero", "--output", "out.txt", "--runs", "2", *SEQ)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "out.txt").read_bytes() == b"\0" * 5
    assert duet("compare", "cat", "--input", "/dev/null", "--runs", "2", *SEQ).returncode == 0
    assert "readable file" in one_line_error(duet("compare", "cat", "--input", str(tmp_path), *SEQ))


def test_per_command_options_follow_their_command(duet) -> None:
    # hyperfine: --prepare (--setup, --cleanup, --conclude, --output) once for all, or once per command in
    # their order. Each command here checks that its own prepare ran just before it.
    checks = ["grep -q p1 cur", "grep -q p2 cur", "grep -q p3 cur"]
    prepares = ["-p", "echo p1 > cur", "-p", "echo p2 > cur", "-p", "echo p3 > cur"]
    result = duet("compare", *checks, *prepares, "--runs", "2", *SEQ)
    assert result.returncode == 0, result.stderr
    # --reference 2 makes the second command A: its prepare goes with it
    result = duet("compare", *checks[:2], *prepares[:4], "--reference", "2", "--runs", "2", *SEQ)
    assert result.returncode == 0, result.stderr
    # two for three commands: the third would silently get the second's
    line = one_line_error(duet("compare", *checks, *prepares[:4], "--runs", "2", *SEQ))
    assert "--prepare is given 2 times for 3 command(s)" in line
    assert "--output" in one_line_error(duet("compare", "true", "--output", "a.txt", "--output", "b.txt", *SEQ))


def test_a_second_scan_or_step_is_refused_not_silently_replacing_the_first(duet, tmp_path: Path) -> None:
    # click keeps the last of a repeated option: -P x .. -P y .. scanned y alone and ran `echo {x} 1` literally
    line = one_line_error(duet("compare", "echo {x} {y}", "-P", "x", "1", "2", "-P", "y", "1", "2", *SEQ))
    assert "-P/--parameter-scan is given 2 times" in line
    line = one_line_error(duet("compare", "echo {x}", "-P", "x", "1", "4", "-D", "1", "-D", "2", *SEQ))
    assert "-D/--parameter-step-size is given 2 times" in line
    assert not (tmp_path / ".duet").exists()  # refused before anything was measured or stored


def test_one_output_file_named_twice_is_refused_for_a_duet(duet, tmp_path: Path) -> None:
    # Side by side, both commands writing o.txt (given as o.txt and ./o.txt) interleaved their output in it.
    line = one_line_error(duet("compare", "echo aaaa", "echo bbbbbbbb", "--output", "o.txt", "--output", "./o.txt",
                               "--method", "duet", "--runs", "2", "--no-progress"))
    assert "same time" in line
    assert not (tmp_path / "o.txt").exists()


def test_min_runs_alone_above_the_default_maximum_raises_it(duet, tmp_path: Path) -> None:
    # hyperfine has no maximum by default, so `-m 301` is plain; it was refused as "larger than --max-runs
    # (300)", a flag the user never gave (as --max-runs alone below the default minimum lowers the minimum).
    result = duet("compare", "true", "-m", "301", "--method", "sequential", "--warmup", "0", "--no-progress",
                  "--style", "none", "--export-json", "r.json")
    assert result.returncode == 0, result.stderr
    invocations = json.loads((tmp_path / "r.json").read_text())["invocations"]
    assert len([i for i in invocations if not i["warmup"]]) == 301
    assert "--max-runs (3)" in one_line_error(duet("compare", "true", "-m", "5", "-M", "3", *SEQ))


def test_a_name_clashing_with_a_default_letter_says_so(duet) -> None:
    # -n B names the first command B, and the second is B by default: "give each -n once" (given once) misled
    line = one_line_error(duet("compare", "true", "true", "true", "-n", "B", *SEQ))
    assert "both named 'B'" in line and "unnamed ones are A, B, C" in line


def test_sh_built_ins_without_a_program_run_in_sh(duet, tmp_path: Path) -> None:
    # hyperfine runs `:` or `command -v sh` in its shell; they were refused as "command A not found".
    for command in (": nothing", "command -v sh"):
        result = duet("compare", command, "--runs", "2", *SEQ)
        assert result.returncode == 0 and "sh -c" in result.stderr + result.stdout, result.stderr
