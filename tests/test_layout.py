"""The random environment size of every invocation (plan/layout.py): deterministic, shared by A's and
B's k-th invocation, spread over a page — checked in the real commands' environment."""
from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from duetbench.plan.layout import ENV_OFFSET_VAR, PAGE, env_offset


def test_offset_is_a_function_of_the_key_and_spreads_over_a_page() -> None:
    assert env_offset("7:3") == env_offset("7:3")
    lengths = [len(env_offset(f"7:{k}")[ENV_OFFSET_VAR]) for k in range(4000)]
    assert min(lengths) >= 0 and max(lengths) < PAGE
    assert min(lengths) < 50 and max(lengths) > PAGE - 50
    # Uniform on [0, 4096): mean 2047.5, SD of the mean of 4000 draws ≈ 18.7.
    assert abs(statistics.fmean(lengths) - (PAGE - 1) / 2) < 4 * 18.7
    assert len(set(lengths)) > 2000


@pytest.mark.parametrize("method", ["sequential", "duet"])
def test_a_and_b_invocations_get_the_same_size_and_it_changes_between_them(duet, tmp_path: Path, method: str) -> None:
    import os

    if method == "duet" and len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs two CPUs to run a duet")
    result = duet("compare", "--shell", "sh", f"echo ${{#{ENV_OFFSET_VAR}}} >> a.log", f"echo ${{#{ENV_OFFSET_VAR}}} >> b.log",
                  "--method", method, "--runs", "6", "--warmup", "1", "--seed", "5", "--no-progress")
    assert result.returncode == 0, result.stderr
    a = [int(x) for x in (tmp_path / "a.log").read_text().split()]
    b = [int(x) for x in (tmp_path / "b.log").read_text().split()]
    assert a == b and len(a) == 7
    assert len(set(a)) >= 5
    assert a == [len(env_offset(f"5:{k}")[ENV_OFFSET_VAR]) for k in range(7)]
