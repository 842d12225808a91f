"""Issue 16 item 7: every message says what, where and how to fix it, and a printed command works when
run as printed."""
from __future__ import annotations

import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

PARSER = "parser: {name: regex, pattern: 'iteration \\d+: (?P<value>[0-9.]+) s'}"


def _interrupt_after(args: list[str], cwd: Path, env: dict[str, str], marker: Path | None, delay: float
                     ) -> subprocess.CompletedProcess[str]:
    proc = subprocess.Popen([sys.executable, "-m", "duetbench", *args], cwd=cwd, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while marker is not None and not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(delay)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def _hint(text: str, start: str, also: str = "") -> list[str]:
    line = next(line for line in text.splitlines() if start in line and also in line)
    command = line[line.index(start):].rstrip(").").rstrip()
    return shlex.split(command)


def test_compare_interrupted_hint_keeps_db_and_works(duet, duet_env, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "sub").mkdir()
    proc = _interrupt_after(["compare", "sleep 0.02", "sleep 0.02", "--runs", "2000", "--db", "sub/r.db",
                             "--no-progress"], tmp_path, duet_env, tmp_path / "sub" / "r.db", 1.5)
    assert proc.returncode == 130, proc.stderr
    argv = _hint(proc.stdout, "duet show")
    assert argv[:2] == ["duet", "show"] and "--db" in argv and "sub/r.db" in argv
    again = duet(*argv[1:])
    assert again.returncode == 0, again.stderr
    assert "interrupted" in again.stdout


def test_campaign_interrupted_hint_keeps_db_and_analyze_says_what_to_do(duet, duet_env, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "c.yml").write_text(f"campaign: slow\nmethods: {{sequential: 2}}\n{PARSER}\n"
                                    "benchmarks:\n  slow: {command: 'sleep 30'}\n")
    (tmp_path / "sub").mkdir()
    proc = _interrupt_after(["run", "c.yml", "--db", "sub/r.db", "--no-progress"], tmp_path, duet_env,
                            tmp_path / "sub" / "r.db", 1.0)
    assert proc.returncode == 130, proc.stderr
    argv = _hint(proc.stdout, "duet run", "--resume")
    assert argv[1:] == ["run", "c.yml", "--resume", "--db", "sub/r.db"]
    analyzed = duet("analyze", "--db", "sub/r.db")
    assert analyzed.returncode == 2
    assert "with these filters" not in analyzed.stderr
    assert "interrupted" in analyzed.stderr and "--resume --db sub/r.db" in analyzed.stderr
    filtered = duet("analyze", "--db", "sub/r.db", "--method", "duet")
    assert "with these filters" in filtered.stderr
    # The hint, run as printed, finds the campaign in that database (a dry run: nothing is measured).
    resumed = duet(*argv[1:], "--dry-run")
    assert resumed.returncode == 0, resumed.stderr
    assert "4 of 4 runs left to measure" in resumed.stdout


def test_a_file_that_is_not_executable_is_not_called_missing(duet, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    script = tmp_path / "bench.sh"
    script.write_text("#!/bin/sh\ntrue\n")
    proc = duet("compare", str(script), "true", "--db", "r.db")
    assert proc.returncode == 2
    assert "exists but is not executable" in proc.stderr and "chmod +x" in proc.stderr
    assert "not found" not in proc.stderr


def test_import_value_message_shows_the_value_as_written(duet, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "z.csv").write_text("bench,method,run,side,value\nx,duet,1,A,0\n")
    proc = duet("import", "csv", "z.csv", "--col", "benchmark=bench", "--col", "method=method", "--col", "run=run",
                "--col", "side=side", "--col", "value=value", "--db", "r.db")
    assert proc.returncode == 2
    assert "z.csv: row 2: value 0.0 s is not a positive finite time" in proc.stderr
    assert "np." not in proc.stderr


def test_a_parse_error_names_the_output_file(duet, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "c.yml").write_text("campaign: bad\nmethods: {sequential: 1}\n"
                                    "parser: {name: regex, pattern: 'iteration (?P<value>\\w+)'}\n"
                                    "benchmarks:\n  bad: {command: 'echo iteration abc'}\n")
    proc = duet("run", "c.yml", "--db", "r.db", "--no-progress")
    assert "Traceback" not in proc.stderr
    from duetbench.store.campaigns import CampaignStore
    from duetbench.store.db import Store

    store = Store(tmp_path / "r.db")
    try:
        runs = CampaignStore(store).runs(1, with_iterations=False)
    finally:
        store.close()
    assert runs and all(r.status == "failed" for r in runs)
    assert all("stdout.txt" in r.error and "stdout line 1" in r.error for r in runs), [r.error for r in runs]



def test_an_argument_that_is_not_utf8_is_refused_in_one_line(duet, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A byte that is not UTF-8 in a command or a name (a Latin-1 file name): it reached the store as a
    lone surrogate and ended in a UnicodeEncodeError traceback (found by tests/robustness/test_fuzz.py)."""
    (tmp_path / "d.csv").write_text("x\n")
    for args, position in ((["compare", "--runs", "2", "--method", "sequential", "true \udc80", "true"], 6),
                           (["import", "duetprocess", "d.csv", "--name", "caf\udce9"], 5)):
        result = duet(*args)
        assert result.returncode == 2, result.stderr
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"error: argument {position} is not UTF-8 text: "), lines
        assert "\\x80'" in lines[0] or "caf\\xe9'" in lines[0], lines
        assert not (tmp_path / ".duet").exists()  # refused before anything was measured or stored


def test_a_lone_surrogate_from_python_is_refused_too() -> None:
    from click.testing import CliRunner

    from duetbench.cli.main import main

    result = CliRunner().invoke(main, ["compare", "-n", "\ud800", "true", "true"])
    assert result.exit_code == 2 and "argument 3 is not UTF-8 text: '\\ud800'" in result.output, result.output
    # Beside characters beyond ASCII (CI's fuzz run: 'a\u202eb=\ud800' ended in a UnicodeDecodeError).
    result = CliRunner().invoke(main, ["import", "csv", "d.csv", "--map", "benchmark:a\u202eb=\ud800"])
    assert result.exit_code == 2 and "argument 5 is not UTF-8 text: " in result.output, result.output
    assert "\\ud800" in result.output and "Traceback" not in result.output, result.output


def test_a_command_is_shown_as_given_not_as_emoji(duet, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # rich replaces :smile: with its emoji unless told not to: `echo :smile:` was reported as `echo 😄`.
    result = duet("compare", "echo :smile:", "echo :x:", "--runs", "2", "--method", "sequential", "--no-progress")
    assert result.returncode == 0, result.stderr
    assert "A: echo :smile:" in result.stdout and "B: echo :x:" in result.stdout, result.stdout
    bad = duet("compare", "true", "true", "--runs", "2", "--name", ":smile:", "--confidence", "7")
    assert bad.returncode == 2 and "😄" not in bad.stderr, bad.stderr
