"""The HTML report in a real browser: headless Chromium loads it offline, with no console output, draws
every plot, keeps injected names inert, and its table sorting, row selection and tooltips work."""
from __future__ import annotations

import html as htmllib
import os
import re
import shutil
import subprocess
from pathlib import Path
from urllib.parse import quote

import pytest

from duetbench.report.html import report_data, write_html_report

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# Names that would mark the page if the browser ever ran them as markup.
PWN_SCRIPT = "<script>document.body.dataset.pwned='script'</script>"
PWN_IMG = "<img src=x onerror=\"document.body.dataset.pwned='img'\">"
STUDIES = {"mds": {"duet": [(0.0, 1.0), (0.01, 0.5), (0.03, 0.0)], "sequential": [(0.0, 1.0), (0.05, 0.2), (0.1, 0.0)]},
           "aa_false_positive_rate": {"sequential": 0.03, "duet": 0.008, "aduet": 0.01},
           "runtime_saving": {"duet": 0.48, "aduet": 0.5}}

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed "
                                 "(Debian package 'chromium'; CI installs it)")


def chromium(tmp_path: Path, url: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run headless Chromium on `url` with the network unreachable (any request would fail)."""
    assert CHROMIUM is not None
    cmd = [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
           "--disable-dev-shm-usage", f"--user-data-dir={tmp_path / 'chromium-profile'}", "--enable-logging=stderr",
           "--v=0", "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9", *args, url]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr[-2000:]
    return result


def console_lines(stderr: str) -> list[str]:
    """Everything the page wrote to the console (log, warning, error, uncaught exceptions): ours writes nothing."""
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


def body_data(dom: str) -> dict[str, str]:
    body = re.search(r"<body([^>]*)>", dom)
    assert body, dom[:500]
    return {k: htmllib.unescape(v) for k, v in re.findall(r'data-([\w-]+)="([^"]*)"', body.group(1))}


def expected_plots(data: dict, benchmark: int) -> int:
    """Plots the page should draw: forest, CI widths, one per study chart, and the benchmark's own."""
    studies = sum(1 for k in ("mds", "aa_false_positive_rate", "runtime_saving") if k in data["studies"])
    own = sum(bool(m["pairs"]) + bool(m["hist"]) + bool(m["narrowing"]) + bool(m["timeline"])
              for m in data["benchmarks"][benchmark]["methods"])
    return 2 + studies + own


@pytest.fixture()
def report(tmp_path: Path, make_table, make_results) -> tuple[Path, dict]:
    table = make_table(["alpha", PWN_SCRIPT, PWN_IMG, "beta"], runs=6, iterations=25)
    results = make_results(table)
    path = tmp_path / "report.html"
    write_html_report(path, title=f"report {PWN_SCRIPT}", table=table, results=results,
                      environment={"host": {"hostname": PWN_IMG, "cpus": [0, 1]}}, studies=STUDIES)
    return path, report_data(table, results, STUDIES)


def test_console_check_catches_a_broken_page(tmp_path: Path) -> None:
    page = tmp_path / "broken.html"
    page.write_text("<!DOCTYPE html><body><script>document.body.dataset.rendered = '1'; null.x;</script></body>")
    result = chromium(tmp_path, page.as_uri(), "--dump-dom")
    assert body_data(result.stdout)["rendered"] == "1"
    assert any("Uncaught TypeError" in line for line in console_lines(result.stderr))


def test_report_renders_every_plot_without_errors_and_takes_a_screenshot(tmp_path: Path, report) -> None:
    path, data = report
    result = chromium(tmp_path, path.as_uri(), "--dump-dom", "--window-size=1400,2000")
    assert console_lines(result.stderr) == []
    attrs = body_data(result.stdout)
    assert "pwned" not in attrs
    assert int(attrs["rendered"]) == expected_plots(data, 0) >= 2 + 3 + 8
    assert result.stdout.count('class="chart"') == int(attrs["rendered"])

    shot = tmp_path / "report.png"
    result = chromium(tmp_path, path.as_uri(), f"--screenshot={shot}", "--window-size=1400,2000", "--hide-scrollbars")
    assert console_lines(result.stderr) == []
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 50_000  # a blank 1400x2000 page is a few KB
    if os.environ.get("DUETBENCH_UPDATE_SCREENSHOT"):
        shutil.copyfile(shot, ROOT / "docs" / "report-screenshot.png")


def test_address_selects_a_benchmark_whose_name_stays_text(tmp_path: Path, report) -> None:
    path, data = report
    result = chromium(tmp_path, path.as_uri() + "#benchmark=" + quote(PWN_IMG, safe=""), "--dump-dom")
    assert console_lines(result.stderr) == []
    attrs = body_data(result.stdout)
    assert "pwned" not in attrs
    assert int(attrs["rendered"]) == expected_plots(data, 2)
    headings = [htmllib.unescape(h) for h in re.findall(r"<h3>(.*?)</h3>", result.stdout)]
    assert f"{PWN_IMG} — duet" in headings


def test_sorting_row_selection_and_tooltip(tmp_path: Path, report) -> None:
    path, _ = report
    driver = """<script>
    (function () {
      var th = document.querySelectorAll("#summary-table thead th")[2];
      function ratios() {
        return Array.prototype.map.call(document.querySelectorAll("#summary-table tbody tr"),
                                        function (tr) { return tr.cells[2].dataset.v; }).join(" ");
      }
      th.click(); document.body.dataset.asc = ratios();
      th.click(); document.body.dataset.desc = ratios();
      var row = Array.prototype.find.call(document.querySelectorAll("#summary-table tbody tr"),
                                          function (tr) { return tr.dataset.benchmark === "beta"; });
      row.click();
      document.body.dataset.shown = document.querySelector("#benchmark-plots h3").textContent;
      var mark = document.querySelector("#forest g.mark");
      mark.dispatchEvent(new MouseEvent("mousemove", { bubbles: true, clientX: 50, clientY: 50 }));
      var tip = document.getElementById("tooltip");
      document.body.dataset.tip = tip.hidden ? "" : tip.textContent;
    })();
    </script></body>"""
    driven = tmp_path / "driven.html"
    driven.write_text(path.read_text().replace("</body>", driver))
    result = chromium(tmp_path, driven.as_uri(), "--dump-dom")
    assert console_lines(result.stderr) == []
    attrs = body_data(result.stdout)
    asc = [float(v) for v in attrs["asc"].split()]
    assert len(asc) == 12 and asc == sorted(asc)
    assert [float(v) for v in attrs["desc"].split()] == sorted(asc, reverse=True)
    assert attrs["shown"] == "beta — sequential"
    assert attrs["tip"].startswith("alpha · ") and "B/A" in attrs["tip"]
