"""The example campaigns in examples/ load, and the quickstart's harness really produces what it parses."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from duetbench.config.campaign import load_campaign

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CAMPAIGNS = sorted(EXAMPLES.glob("**/*.yml")) + sorted(EXAMPLES.glob("**/*.yaml"))


def test_there_are_examples() -> None:
    assert {p.parent.name for p in CAMPAIGNS} >= {"quickstart", "jmh"}


@pytest.mark.parametrize("path", CAMPAIGNS, ids=[str(p.relative_to(EXAMPLES)) for p in CAMPAIGNS])
def test_example_campaign_loads(path: Path) -> None:
    campaign = load_campaign(path)
    assert campaign.benchmarks
    assert any(b.aa for b in campaign.benchmarks), "every example should show an A/A benchmark"


def test_quickstart_harness_output_matches_its_parser(tmp_path: Path) -> None:
    from duetbench.harness.model import ParserInput
    from duetbench.harness.registry import parse

    campaign = load_campaign(EXAMPLES / "quickstart" / "campaign.yml")
    bench = campaign.benchmark("more-work")
    side = bench.sides["B"]
    argv = side.command.split()
    assert argv[:2] == ["python3", "bench.py"]
    out = subprocess.run([sys.executable, *argv[1:], "--iterations", "4", "--work", "1000"], cwd=side.cwd,
                         capture_output=True, text=True, timeout=60, check=True)
    result = parse(bench.parser.name, dict(bench.parser.options), ParserInput(stdout=out.stdout, side="B"))
    assert len(result.iterations) == 4
    assert all(0 < it.value_s < 1 for it in result.iterations)


def test_quickstart_harness_refuses_a_duet_without_duetbench(tmp_path: Path) -> None:
    # -S -I: an interpreter that cannot import duetbench (no site-packages, no PYTHONPATH)
    out = subprocess.run([sys.executable, "-S", "-I", str(EXAMPLES / "quickstart" / "bench.py"), "--iterations", "1"],
                         env={"DUET_BARRIER": "/dev/shm/none", "DUET_SIDE": "A"}, capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 2 and "cannot import duetbench" in out.stderr
