"""Issue 16 item 4: out-of-range values are refused when loaded, in one line naming the place and the fix,
instead of passing validation and crashing (or measuring forever) later."""
from __future__ import annotations

from pathlib import Path

import pytest

PARSER = "parser: {name: regex, pattern: '(?P<value>[0-9.]+)'}"


def _one_error_line(stderr: str) -> str:
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    assert "Traceback" not in stderr
    errors = [line for line in lines if line.lower().startswith("error")]
    assert len(errors) == 1, stderr
    return errors[0]


@pytest.mark.parametrize("body, expected", [
    (f"campaign: a\nmethods: {{duet: 99999999999999999999}}\n{PARSER}\nbenchmarks:\n  x: {{command: 'echo 1'}}\n",
     "c.yml:2:17: methods.duet: must be a number of runs, an integer from 0 to"),
    (f"campaign: a\nseed: 9223372036854775808\n{PARSER}\nbenchmarks:\n  x: {{command: 'echo 1'}}\n",
     "c.yml:2:7: seed: must be an integer from 0 to 2**63-1"),
    (f"campaign: a\n{PARSER}\nbenchmarks:\n  ? {'n' * 5000}\n  : {{command: 'echo 1'}}\n",
     "benchmark name is 5000 characters long, more than 100"),
    ("campaign: a\nparser: os:system\nbenchmarks:\n  x: {command: 'echo 1'}\n",
     "c.yml:2:9: parser: parser 'os:system' is system(command), not a parser function f(inp, options)"),
    (f'campaign: "\\ud800"\n{PARSER}\nbenchmarks:\n  x: {{command: "echo 1"}}\n',
     "c.yml:1:11: campaign:"),
])
def test_campaign_values_out_of_range_are_one_line_at_load(duet, tmp_path: Path, body: str, expected: str) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "c.yml").write_text(body)
    for args in (("--dry-run",), ()):
        proc = duet("run", "c.yml", "--db", "r.db", *args)
        assert proc.returncode == 2
        assert expected in _one_error_line(proc.stderr)
    assert not (tmp_path / "r.db").exists()  # refused before anything was begun (nothing left 'running')


@pytest.mark.parametrize("args", [
    ("compare", "true", "true", "--seed", "99999999999999999999999"),
    ("compare", "true", "true", "--seed", str(2**63)),
    ("compare", "true", "true", "--runs", str(10**23)),
    ("analyze", "--seed", str(2**64)),
])
def test_command_line_numbers_out_of_range(duet, args: tuple[str, ...]) -> None:  # type: ignore[no-untyped-def]
    proc = duet(*args, "--db", "r.db")
    assert proc.returncode == 2
    line = _one_error_line(proc.stderr)
    assert "--seed" in line or "--runs" in line


def test_run_seed_out_of_range_fails_before_the_dry_run(duet, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "c.yml").write_text(f"campaign: a\n{PARSER}\nbenchmarks:\n  x: {{command: 'echo 1'}}\n")
    proc = duet("run", "c.yml", "--dry-run", "--seed", str(2**63))
    assert proc.returncode == 2 and "--seed" in _one_error_line(proc.stderr)


def test_deeply_nested_json_import_is_one_line(duet, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    proc = duet("import", "hyperfine", "deep.json", "--db", "r.db")
    assert proc.returncode == 2
    assert "deep.json: JSON nested too deeply" in _one_error_line(proc.stderr)


def test_a_user_parser_that_raises_is_the_runs_failure_not_a_traceback() -> None:
    from duetbench.errors import DuetError
    from duetbench.harness.model import ParserInput
    from duetbench.harness.registry import parse

    with pytest.raises(DuetError, match="parser .operator:truediv. raised TypeError"):
        parse("operator:truediv", {}, ParserInput(stdout="x", stderr="", files={}, iteration_log=[], side="A"))
