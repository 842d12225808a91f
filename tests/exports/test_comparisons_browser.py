"""`duet report` on a database of comparisons, in a real browser: headless Chromium loads the page offline
with no console output, draws every plot (per comparison: times over runs, pair ratios, distributions of
A and B; one forest of all), and names from outside stay inert text."""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from tests.report.test_report_browser import CHROMIUM, PWN_IMG, body_data, chromium, console_lines

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed "
                                 "(Debian package 'chromium'; CI installs it)")


def expected_plots(data: dict) -> int:
    comparisons = data["comparisons"]
    forest = any(c.get("estimate") is not None for c in comparisons)
    own = sum(bool(c["times"]["A"] or c["times"]["B"]) + bool(c["ratios"] and c["ratios"]["values"]) + bool(c["hist"])
              for c in comparisons)
    return int(forest) + own


def test_report_of_comparisons_renders_every_plot_without_errors(duet, tmp_path: Path) -> None:
    methods = ["sequential"] + (["duet", "aduet"] if len(os.sched_getaffinity(0)) >= 2 else [])
    for method in methods:
        result = duet("compare", "sleep 0.01", "sleep 0.012", "--method", method, "--runs", "8", "--no-progress",
                      "--warmup", "0", "--name-a", PWN_IMG, "--name-b", "<script>document.body.dataset.pwned=1</script>")
        assert result.returncode == 0, result.stderr
    scan = duet("compare", "sleep 0.0{n}", "sleep 0.0{n}", "-L", "n", "1,2", "--method", "sequential", "--runs", "5",
                "--no-progress", "--warmup", "0")
    assert scan.returncode == 0, scan.stderr
    report = duet("report", "-o", "r.html")
    assert report.returncode == 0, report.stderr

    page = (tmp_path / "r.html").read_text()
    data = json.loads(re.search(r'<script type="application/json" id="duet-data">(.*?)</script>', page, re.S)
                      .group(1))  # type: ignore[union-attr]
    assert len(data["comparisons"]) == len(methods) + 2
    for c in data["comparisons"]:
        assert len(c["times"]["A"]) >= 5 and c["ratios"]["values"] and c["hist"]
        assert len(c["hist"]["edges"]) - 1 >= 12  # enough bins to show a shape, even from a few runs
    result = chromium(tmp_path, (tmp_path / "r.html").as_uri(), "--dump-dom", "--window-size=1400,2000")
    assert console_lines(result.stderr) == []
    attrs = body_data(result.stdout)
    assert "pwned" not in attrs
    assert int(attrs["rendered"]) == expected_plots(data) == 1 + 3 * len(data["comparisons"])
    assert result.stdout.count('class="chart"') == int(attrs["rendered"])
