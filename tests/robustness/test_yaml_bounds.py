"""Issue 16 item 2: a campaign file's aliases cannot expand without bound ("billion laughs"): loading is
bounded in time and memory and refused with one line naming the file and line."""
from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

from duetbench.config.campaign import CampaignError, parse_campaign


def _bomb(levels: int = 9) -> str:
    names = "abcdefghijklmnop"[:levels]
    lines = [f'{names[0]}: &{names[0]} ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, name in zip(names, names[1:]):
        lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    lines += ["campaign: bomb", f"benchmarks: {{x: {{command: 'echo 1', env: {{X: *{names[-1]}}}}}}}"]
    return "\n".join(lines) + "\n"


def test_nested_aliases_are_refused_quickly_with_file_and_line(tmp_path: Path) -> None:
    t0 = time.monotonic()
    with pytest.raises(CampaignError) as info:
        parse_campaign(_bomb(), tmp_path / "bomb.yml")
    assert time.monotonic() - t0 < 5
    text = str(info.value)
    assert "bomb.yml:1:" in text and "expands to more than" in text and "\n" not in text.strip()


def test_too_many_aliases_are_refused(tmp_path: Path) -> None:
    lines = ["d: &d {warmup: 1}", "campaign: many", "benchmarks:"]
    lines += [f"  b{i}: {{<<: *d, command: 'echo 1'}}" for i in range(1500)]
    with pytest.raises(CampaignError) as info:
        parse_campaign("\n".join(lines) + "\n", tmp_path / "many.yml")
    assert "many.yml:" in str(info.value) and "aliases" in str(info.value)


def test_a_few_merge_keys_still_load(tmp_path: Path) -> None:
    lines = ["d: &d {warmup: 1}", "campaign: few", "benchmarks:"]
    lines += [f"  b{i}: {{<<: *d, command: 'echo 1'}}" for i in range(20)]
    with pytest.raises(CampaignError) as info:  # 'd' is not a campaign key: proves loading got to validation
        parse_campaign("\n".join(lines) + "\n", tmp_path / "few.yml")
    assert "unknown campaign key 'd'" in str(info.value)


def test_duet_run_on_a_bomb_stays_small(duet_env, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "bomb.yml").write_text(_bomb(10))
    t0 = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "duetbench", "run", "bomb.yml", "--dry-run"], cwd=tmp_path,
                            env=duet_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # This child's own peak (wait4), not RUSAGE_CHILDREN's: that is the largest of every child this test
    # process ever reaped, which another test's may set.
    _, status, usage = os.wait4(proc.pid, 0)
    stderr = proc.stderr.read() if proc.stderr else ""
    elapsed = time.monotonic() - t0
    assert os.waitstatus_to_exitcode(status) == 2 and "Traceback" not in stderr
    assert stderr.strip().count("\n") == 0 and "bomb.yml:" in stderr
    assert elapsed < 20
    assert usage.ru_maxrss < 400_000  # KiB: well under 400 MB (the bomb took 3.2 GB)
