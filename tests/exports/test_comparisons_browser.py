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


def test_one_command_page_has_no_b_and_draws_its_plots(duet, tmp_path: Path) -> None:
    """`duet compare CMD --export-html`: the command's times and distribution, no empty B anywhere; beside a
    comparison in `duet report` it fills the columns that apply to it."""
    result = duet("compare", "sleep 0.01", "-n", PWN_IMG, "--runs", "6", "--no-progress", "--warmup", "0",
                  "--export-html", "one.html")
    assert result.returncode == 0, result.stderr
    page = (tmp_path / "one.html").read_text()
    data = json.loads(re.search(r'<script type="application/json" id="duet-data">(.*?)</script>', page, re.S)
                      .group(1))  # type: ignore[union-attr]
    (one,) = data["comparisons"]
    assert one["method"] == "single" and one["benchmark"]["runs"] == 6 and one["ratios"] is None
    assert "<th>B" not in page and "<th>mean ± σ</th>" in page and "one command #1" in page
    rendered = chromium(tmp_path, (tmp_path / "one.html").as_uri(), "--dump-dom", "--window-size=1400,1200")
    assert console_lines(rendered.stderr) == []
    attrs = body_data(rendered.stdout)
    assert "pwned" not in attrs and int(attrs["rendered"]) == expected_plots(data) == 2
    assert 'class="plot-title">Distribution of &lt;img' in rendered.stdout  # named by the command's -n name
    assert 'class="plot-note">6 runs, ' in rendered.stdout  # not "6 runs of A, 0 of B"
    both = duet("compare", "sleep 0.01", "sleep 0.012", "--method", "sequential", "--runs", "5", "--no-progress",
                "--warmup", "0")
    assert both.returncode == 0, both.stderr
    assert duet("report", "-o", "r.html").returncode == 0
    mixed = (tmp_path / "r.html").read_text()
    assert "<th>A</th><th>B</th>" in mixed and "<td>—</td><td>single</td>" in mixed
