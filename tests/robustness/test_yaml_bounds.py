"""Issue 16 item 2: a campaign file's aliases cannot expand without bound ("billion laughs"): loading is
bounded in time and memory and refused with one line naming the file and line."""
from __future__ import annotations

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


def test_a_file_large_without_aliases_is_told_so_not_blamed_on_aliases(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from duetbench.config import yaml_locations

    monkeypatch.setattr(yaml_locations, "MAX_VALUES", 1000)  # the limit's logic, on a file 100x smaller
    lines = ["d: &d {warmup: 1}", "campaign: large", "benchmarks:"]
    lines += [f"  b{i}: {{command: 'echo {i}', methods: {{sequential: 1}}{', <<: *d' if i < 3 else ''}}}"
              for i in range(400)]
    with pytest.raises(CampaignError) as info:
        parse_campaign("\n".join(lines) + "\n", tmp_path / "large.yml")
    text = str(info.value)
    assert "large.yml:" in text and "the file holds more than 1000 values" in text, text
    assert "alias" not in text and "hint: split its benchmarks into several campaign files" in text, text
    with pytest.raises(CampaignError) as info:
        parse_campaign(_bomb(4), tmp_path / "bomb.yml")
    assert "expands to more than 1000 values (aliases nested inside aliases?)" in str(info.value)


def test_a_few_merge_keys_still_load(tmp_path: Path) -> None:
    lines = ["d: &d {warmup: 1}", "campaign: few", "benchmarks:"]
    lines += [f"  b{i}: {{<<: *d, command: 'echo 1'}}" for i in range(20)]
    with pytest.raises(CampaignError) as info:  # 'd' is not a campaign key: proves loading got to validation
        parse_campaign("\n".join(lines) + "\n", tmp_path / "few.yml")
    assert "unknown campaign key 'd'" in str(info.value)


def test_duet_run_on_a_bomb_stays_small(duet_env, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "bomb.yml").write_text(_bomb(10))
    # The peak is measured by a small wrapper process: Linux counts in a child's ru_maxrss the memory of the
    # process it was forked from before exec (this test runner, hundreds of MB), and RUSAGE_CHILDREN is
    # the largest of every child ever reaped. The wrapper's own child starts from the wrapper's few MB.
    wrapper = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
               "sys.stderr.write(r.stderr); print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", wrapper, sys.executable, "-m", "duetbench", "run", "bomb.yml",
                           "--dry-run"], cwd=tmp_path, env=duet_env, capture_output=True, text=True, timeout=60)
    elapsed = time.monotonic() - t0
    code, peak_kb = (int(x) for x in proc.stdout.split())
    assert code == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().count("\n") == 0 and "bomb.yml:" in proc.stderr
    assert elapsed < 20
    assert peak_kb < 400_000  # KiB: well under 400 MB (the bomb took 3.2 GB)
