"""A busy process running beside a campaign is named by `duet run`'s summary and by `duet analyze`
(EMP noise attribution, Suh et al. (EMP) §3.3): the activity stored with every run, read back per benchmark."""
from __future__ import annotations

import os
import shutil
import signal
import sys
from pathlib import Path

from noisy_daemon import start_detached

HARNESS = Path(__file__).resolve().parent.parent / "campaign" / "harness.py"


def test_busy_daemon_is_named_in_the_campaign_summary(duet, tmp_path: Path) -> None:
    shutil.copy(HARNESS, tmp_path / "harness.py")
    (tmp_path / "campaign.yml").write_text(f"""campaign: noisy
seed: 4
methods: {{sequential: 3}}
parser: {{name: regex, pattern: 'iteration \\d+: (?P<value>[0-9.]+) s'}}
timeout: 60
benchmarks:
  loop: {sys.executable} harness.py --iterations 15 --work 60000
""")
    # On the CPU the sequential runs use, burning 30 ms of every 70: well over 5% of any run's time.
    cpu = sorted(os.sched_getaffinity(0))[0]
    pid, _ = start_detached("emp-busyd", cpu, burn_ms=30, period_ms=70, pidfile=tmp_path / "pid", lifetime_s=90)
    try:
        result = duet("run", "campaign.yml", "--no-progress", timeout=120)
    finally:
        os.kill(pid, signal.SIGTERM)
    assert result.returncode == 0, result.stdout + result.stderr
    summary = " ".join(result.stdout.split())
    assert "other processes busy during the slowest runs" in summary and "emp-busyd" in summary, result.stdout
    analysed = duet("analyze")
    assert analysed.returncode == 0, analysed.stderr
    assert "emp-busyd" in " ".join(analysed.stdout.split()), analysed.stdout
