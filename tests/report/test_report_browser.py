"""The HTML report in a real browser: headless Chromium loads it offline, with no console output, draws
every plot with a size and marks, keeps injected names inert, and its table sorting, row selection and
tooltips work; on a real small campaign it takes the screenshot of docs/report.md."""
from __future__ import annotations

import html as htmllib
import json
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import pytest
from tests.report.screenshot_stamp import SCREENSHOT, fingerprint, stamp_of, stamped

from duetbench.report.distribution import MIN_ITERATION_BINS
from duetbench.report.html import report_data, write_html_report

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# Names that would mark the page if the browser ever ran them as markup.
PWN_SCRIPT = "<script>document.body.dataset.pwned='script'</script>"
PWN_IMG = "<img src=x onerror=\"document.body.dataset.pwned='img'\">"
STUDIES = {"mds": {"duet": [(0.0, 1.0), (0.01, 0.5), (0.03, 0.0)], "sequential": [(0.0, 1.0), (0.05, 0.2), (0.1, 0.0)]},
           "aa_false_positive_rate": {"sequential": 0.03, "duet": 0.008, "aduet": 0.01},
           "runtime_saving": {"duet": 0.48, "aduet": 0.5},
           "runtime_seconds": {"duet": {"benchmarks": 4, "sequential_s": 8.2, "method_s": 4.3},
                               "aduet": {"benchmarks": 4, "sequential_s": 8.2, "method_s": 4.1}},
           "shuffle_width_ratio": {"duet": 294.33}}
HARNESS = ROOT / "tests" / "campaign" / "harness.py"
# Appended to a report: after its script drew the page, count the plots that have a size and marks, and
# the marks that tell the plots apart (each side's iterations, each side's distribution, the CI band).
MEASURE = """<script>
(function () {
  var charts = document.querySelectorAll("svg.chart"), sized = 0, outside = 0;
  charts.forEach(function (svg) {
    var box = svg.getBoundingClientRect();
    if (box.width > 100 && box.height > 100 && svg.querySelector("circle, rect, path, polyline")) sized++;
    svg.querySelectorAll("circle, rect, path, polyline, polygon, line").forEach(function (mark) {
      var m = mark.getBoundingClientRect();
      if (m.top < box.top - 1 || m.bottom > box.bottom + 1 || m.left < box.left - 1 || m.right > box.right + 1) {
        outside++;
      }
    });
  });
  var d = document.body.dataset;
  d.sized = String(sized);
  d.outside = String(outside);
  ["circle.it-A", "circle.it-B", "path.dist-A", "path.dist-B", "rect.ci-band", "rect.tl-bar"].forEach(function (q) {
    d["n" + q.replace(/[^A-Za-z]/g, "").toLowerCase()] = String(document.querySelectorAll(q).length);
  });
})();
</script></body>"""

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
    studies = sum(1 for k in ("mds", "aa_false_positive_rate", "runtime") if data["studies"].get(k))
    own = sum(bool(m["series"]) + bool(m["ratios"] and m["ratios"]["runs"]) + bool(m["pairs"]) + bool(m["hist"])
              + bool(m["narrowing"]) + bool(m["timeline"]) for m in data["benchmarks"][benchmark]["methods"])
    return 2 + studies + own


def data_block(page: str) -> dict:
    m = re.search(r'<script type="application/json" id="duet-data">(.*?)</script>', page, re.S)
    assert m, "the data block is missing"
    return json.loads(m.group(1))


def measured_page(tmp_path: Path, path: Path, *args: str) -> dict[str, str]:
    """Load `path` with MEASURE appended; the body's data attributes (fails on any console output)."""
    driven = tmp_path / f"measured-{path.name}"
    driven.write_text(path.read_text().replace("</body>", MEASURE))
    result = chromium(tmp_path, driven.as_uri() + "".join(args), "--dump-dom", "--window-size=1400,2000")
    assert console_lines(result.stderr) == []
    return body_data(result.stdout)


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


def test_report_renders_every_plot_without_errors(tmp_path: Path, report) -> None:
    path, data = report
    result = chromium(tmp_path, path.as_uri(), "--dump-dom", "--window-size=1400,2000")
    assert console_lines(result.stderr) == []
    attrs = body_data(result.stdout)
    assert "pwned" not in attrs
    assert int(attrs["rendered"]) == expected_plots(data, 0) >= 2 + 3 + 3 * 4 + 2 * 2
    assert result.stdout.count('class="chart"') == int(attrs["rendered"])
    measured = measured_page(tmp_path, path)
    assert int(measured["sized"]) == int(measured["rendered"]) and measured["outside"] == "0"
    # alpha: three methods, 6 runs of 25 iterations per side, each drawn; one CI band per method
    assert int(measured["ncircleita"]) == int(measured["ncircleitb"]) == 3 * 6 * 25
    assert measured["npathdista"] == measured["npathdistb"] == measured["nrectciband"] == "3"
    assert int(measured["nrecttlbar"]) == timeline_bars(data, 0) > 0


def timeline_bars(data: dict, benchmark: int) -> int:
    """Bars of the side-by-side timelines of a benchmark: A, B and both running, in every run."""
    return sum(len(r["A"]) + len(r["B"]) + len(r["o"]) for m in data["benchmarks"][benchmark]["methods"]
               if m["timeline"] for r in m["timeline"]["runs"])


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
      var th = document.querySelectorAll("#summary-table thead th")[4];
      function ratios() {
        return Array.prototype.map.call(document.querySelectorAll("#summary-table tbody tr"),
                                        function (tr) { return tr.cells[4].dataset.v; }).join(" ");
      }
      document.body.dataset.column = th.textContent;
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
    assert attrs["column"] == "ratio B/A"
    asc = [float(v) for v in attrs["asc"].split()]
    assert len(asc) == 12 and asc == sorted(asc)
    assert [float(v) for v in attrs["desc"].split()] == sorted(asc, reverse=True)
    assert attrs["shown"] == "beta — sequential"
    assert attrs["tip"].startswith("alpha · ") and "B/A" in attrs["tip"]


def test_real_campaign_report_renders_every_plot_and_takes_the_docs_screenshot(duet, tmp_path: Path) -> None:
    """`duet run` on a small campaign (B does 5% more work; an A/A benchmark), then `duet report`: every plot
    drawn with a size, the studies in words, the commands; the screenshot of docs/report.md comes from here."""
    paired = len(os.sched_getaffinity(0)) >= 2
    shutil.copy(HARNESS, tmp_path / "harness.py")
    py = sys.executable
    run = f"{py} harness.py --warmups 0 --warm 0.5 --iterations 16"
    (tmp_path / "campaign.yml").write_text(f"""campaign: example
seed: 7
methods: {{sequential: 5{", duet: 5, aduet: 5" if paired else ""}}}
parser: {{name: regex, pattern: 'iteration \\d+: (?P<value>[0-9.]+) s'}}
warmup: 3
timeout: 120
benchmarks:
  more-work:
    A: {run} --work 200000
    B: {run} --work 210000
  noise-floor:
    command: {run} --work 200000
    methods: {{{"duet" if paired else "sequential"}: 5}}
""")
    result = duet("run", "campaign.yml", "--no-progress", timeout=900)
    assert result.returncode == 0, result.stderr
    result = duet("report", "-o", "report.html", "--resamples", "2000", timeout=300)
    assert result.returncode == 0, result.stderr
    path = tmp_path / "report.html"
    page = path.read_text()
    data = data_block(page)
    text = " ".join(htmllib.unescape(re.sub(r"<[^>]+>", " ", page.split('<script type="application/json"')[0])).split())
    # Each side's time per iteration with its unit beside every ratio; the commands as run; studies in words.
    assert len(re.findall(r'<td class="num side-[ab]" data-v="[0-9.e-]+">[0-9.]+ (ms|µs|s)</td>', page)) \
        == 2 * len(data["rows"])
    assert f"{py} harness.py --warmups 0 --warm 0.5 --iterations 16 --work 210000" in text
    assert "same as A (an A/A benchmark)" in text and "seed" in text and "kernel" in text
    assert "shuffle_width_ratio" not in page and "runtime_saving" not in text
    if paired:
        assert re.search(r"Machine time\. duet: one run of the benchmark measured both ways took [0-9.]+ (s|min) of "
                         r"machine time .* [0-9]+% saved", text), text
        assert re.search(r"Shuffled pairs\. duet: .* the CI would be [0-9.]+× as wide", text)
    for m in (m for b in data["benchmarks"] for m in b["methods"]):
        assert [r["run"] for r in m["series"]["runs"]] == list(range(5))  # every run, not the first only
        assert len(m["hist"]["A"]) >= MIN_ITERATION_BINS

    measured = measured_page(tmp_path, path, "#benchmark=more-work")
    shown = [b["name"] for b in data["benchmarks"]].index("more-work")
    assert int(measured["rendered"]) == int(measured["sized"]) == expected_plots(data, shown)
    assert measured["outside"] == "0"  # no mark drawn beyond its plot (a wide early CI is cut at the axis)
    methods = len(data["benchmarks"][shown]["methods"])
    assert measured["npathdista"] == measured["npathdistb"] == measured["nrectciband"] == str(methods)
    assert int(measured["ncircleita"]) == int(measured["ncircleitb"]) == methods * 5 * 16
    if paired:  # every run's timeline, not the first only
        assert all([r["run"] for r in m["timeline"]["runs"]] == list(range(5))
                   for m in data["benchmarks"][shown]["methods"] if m["method"] != "sequential")
        assert int(measured["nrecttlbar"]) == timeline_bars(data, shown) > 0

    shot = tmp_path / "report.png"
    result = chromium(tmp_path, path.as_uri() + "#benchmark=more-work", f"--screenshot={shot}",
                      "--window-size=1400,2800", "--hide-scrollbars")
    assert console_lines(result.stderr) == []
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 100_000  # a blank 1400x2800 page is a few KB
    if os.environ.get("DUETBENCH_UPDATE_SCREENSHOT"):
        SCREENSHOT.write_bytes(stamped(png, fingerprint()))
        assert stamp_of(SCREENSHOT.read_bytes()) == fingerprint()


def test_an_interval_reaching_zero_draws_without_errors(tmp_path: Path, make_table, make_results) -> None:
    """Fieller's interval from two or three runs can start at 0 (or be unbounded): the log axes of the
    summary plots must still draw it, not write NaN coordinates (42 console errors before)."""
    import msgspec

    table = make_table(["alpha", "beta"], runs=3, iterations=10)
    results = make_results(table)
    bench, method, result, problem = results[0]
    assert result is not None
    wide = msgspec.structs.replace(result, ratio=msgspec.structs.replace(result.ratio, low=0.0, high=3.7),
                               verdict="no difference")
    results = [(bench, method, wide, problem), *results[1:]]
    path = tmp_path / "report.html"
    write_html_report(path, title="wide", table=table, results=results, environment={}, studies={})
    result_page = chromium(tmp_path, path.as_uri(), "--dump-dom", "--window-size=1400,2000")
    assert console_lines(result_page.stderr) == []
    assert "NaN" not in result_page.stdout
    measured = measured_page(tmp_path, path)
    assert int(measured["sized"]) == int(measured["rendered"]) > 0


def test_an_unbounded_interval_reads_unbounded_as_the_terminal_says_it(tmp_path: Path, make_table,
                                                                       make_results) -> None:
    """A campaign of three runs whose A varies run to run (`duet run` then `duet report`): Fieller's interval is
    [0, inf), which the terminal calls "unbounded"; the page said "0.0000 … —", a CI width of "—%" and a
    headline "B/A 1.025 [0, —]". A comparison's page (`duet report` of stored comparisons) said "0.0000 … —"."""
    import msgspec
    from tests.exports.test_hostile_exports import _failed, _invocation

    from duetbench.report.comparisons_html import render_comparisons_html

    table = make_table(["wild"], methods=("sequential",), runs=3, iterations=10)
    bench, method, result, problem = make_results(table)[0]
    assert result is not None
    unbounded = msgspec.structs.replace(result, ratio=msgspec.structs.replace(result.ratio, low=0.0, high=math.inf),
                                        relative_ci_width=math.inf, verdict="no difference")
    path = tmp_path / "report.html"
    write_html_report(path, title="unbounded", table=table, results=[(bench, method, unbounded, problem)],
                      environment={}, studies={})
    page = chromium(tmp_path, path.as_uri(), "--dump-dom", "--window-size=1400,2000")
    assert console_lines(page.stderr) == []
    text = " ".join(htmllib.unescape(re.sub(r"<[^>]+>", " ", page.stdout)).split())
    assert "1.0" in text and " unbounded no difference " in text and " unbounded — 3 " in text  # CI, CI width
    assert "99% CI unbounded) · A " in text  # the headline, in the verdict line's words
    assert "—%" not in text and "[0, —]" not in text and "NaN" not in page.stdout

    comparison = _failed(invocations=[_invocation(s, i, 0.01) for s in "AB" for i in range(3)])
    comparison.status, comparison.analysis_error, comparison.results = "complete", None, {"wall": unbounded}
    html = render_comparisons_html("unbounded", [(comparison, {})])
    cells = re.findall(r'<td class="num">([^<]*)</td>', html)
    assert "unbounded" in cells and not any("—" in c for c in cells)
    assert "99% CI unbounded (" in " ".join(htmllib.unescape(html).split())


def test_a_narrow_window_gets_the_page_without_scrolling_sideways(tmp_path: Path, make_table, make_results) -> None:
    """A report opened on a phone (or printed): the forest plots were 1100 px wide and the summary tables
    wider than the window, so the whole page scrolled sideways, past every heading. Now each chart fits the
    window and a wide table scrolls on its own; a long name without spaces wraps."""
    from tests.exports.test_hostile_exports import _failed, _invocation

    from duetbench.report.comparisons_html import render_comparisons_html

    long_name = "a-benchmark-whose-name-has-no-spaces-" * 6
    table = make_table(["alpha", long_name], runs=3, iterations=10)
    results = make_results(table)
    campaign = tmp_path / "campaign.html"
    write_html_report(campaign, title=long_name, table=table, results=results, environment={}, studies=STUDIES)
    comparison = _failed(names=(long_name, "B"), invocations=[_invocation(s, i, 0.01) for s in "AB" for i in range(3)])
    comparison.status, comparison.analysis_error = "complete", None
    comparison.results = {"wall": next(r for _, _, r, _ in results if r is not None)}
    comparisons = tmp_path / "comparisons.html"
    comparisons.write_text(render_comparisons_html(long_name, [(comparison, {"n": long_name})]))
    probe = ("<script>document.body.dataset.wide = String(document.documentElement.scrollWidth > "
             "document.documentElement.clientWidth);</script></body>")
    for page in (campaign, comparisons):
        narrow = tmp_path / f"narrow-{page.name}"
        narrow.write_text(page.read_text().replace("</body>", probe))
        result = chromium(tmp_path, narrow.as_uri(), "--dump-dom", "--window-size=420,1200")
        assert console_lines(result.stderr) == []
        attrs = body_data(result.stdout)
        assert int(attrs["rendered"]) > 0 and attrs["wide"] == "false", page.name


def test_a_page_whose_script_is_blocked_says_why_it_has_no_plots(tmp_path: Path, make_table, make_results) -> None:
    """A report published by a CI server whose Content-Security-Policy blocks inline scripts (Jenkins's default
    for published HTML): JavaScript is on, so the <noscript> note stayed hidden, and the page showed empty plot
    sections without a word. Now a note says why, and the script removes it once it has drawn."""
    from tests.exports.test_hostile_exports import _failed, _invocation

    from duetbench.report.comparisons_html import render_comparisons_html

    table = make_table(["alpha"], methods=("duet",), runs=3, iterations=10)
    results = make_results(table)
    campaign = tmp_path / "campaign.html"
    write_html_report(campaign, title="t", table=table, results=results, environment={})
    comparison = _failed(invocations=[_invocation(s, i, 0.01) for s in "AB" for i in range(3)])
    comparisons = tmp_path / "comparisons.html"
    comparisons.write_text(render_comparisons_html("t", [(comparison, {})]))
    csp = ('<meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
           'img-src \'self\'; style-src \'self\';">')
    for page in (campaign, comparisons):
        drawn = chromium(tmp_path, page.as_uri(), "--dump-dom")
        assert console_lines(drawn.stderr) == [] and 'id="needs-script"' not in drawn.stdout
        blocked = tmp_path / f"blocked-{page.name}"
        blocked.write_text(page.read_text().replace('<meta charset="utf-8">', csp, 1))
        dom = chromium(tmp_path, blocked.as_uri(), "--dump-dom").stdout
        assert "rendered" not in body_data(dom)  # the script did not run
        note = re.search(r'<p [^>]*id="needs-script">(.*?)</p>', dom, re.S)
        assert note and "Content-Security-Policy blocks inline scripts" in " ".join(note.group(1).split())
