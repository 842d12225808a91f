"""The HTML report as a file: sections, escaping, offline, the data behind each plot, size."""
from __future__ import annotations

import html as htmllib
import json
import re
import time
from pathlib import Path

import numpy as np
import pytest

from duetbench.errors import DuetError
from duetbench.report import html as report_html
from duetbench.report.html import render_html_report, report_data, write_html_report

EVIL = "<script>alert(1)</script>"
SVG_NS = "http://www.w3.org/2000/svg"


def _data_block(page: str) -> dict:
    m = re.search(r'<script type="application/json" id="duet-data">(.*?)</script>', page, re.DOTALL)
    assert m, "the data block is missing"
    return json.loads(m.group(1))


def _render(make_table, make_results, names=("alpha", "beta"), **kw) -> tuple[str, dict]:
    table = make_table(list(names), **kw)
    page = render_html_report(title="campaign", table=table, results=make_results(table),
                              environment={"host": {"cpu_model": "test cpu", "cpus": [0, 1]}, "tool": "0.1"})
    return page, _data_block(page)


def test_sections_tables_and_plot_data_present(make_table, make_results) -> None:
    page, data = _render(make_table, make_results, runs=5)
    for anchor in ('id="summary-table"', 'id="forest"', 'id="ci-widths"', 'id="benchmark-select"',
                   'id="environment"'):
        assert anchor in page
    assert page.count('<tr data-benchmark="alpha">') == 3 and page.count('<tr data-benchmark="beta">') == 3
    assert "test cpu" in page and "host.cpus" in page
    assert [b["name"] for b in data["benchmarks"]] == ["alpha", "beta"]
    by_method = {m["method"]: m for m in data["benchmarks"][0]["methods"]}
    assert set(by_method) == {"sequential", "duet", "aduet"}
    assert by_method["sequential"]["pairs"] is None and by_method["sequential"]["timeline"] is None
    for method in ("duet", "aduet"):
        assert by_method[method]["pairs"]["total"] > 0
        assert by_method[method]["timeline"]["A"] and by_method[method]["timeline"]["overlaps"]
    for m in by_method.values():
        assert [p[0] for p in m["narrowing"]] == [2, 3, 4, 5]
        assert sum(m["hist"]["A"]) == m["hist"]["nA"] == 5 * 28  # 30 iterations, 2 warmup, all binned


def test_benchmark_names_and_every_text_are_escaped(make_table, make_results) -> None:
    table = make_table([EVIL, 'q"uote\'s & <b>bold</b>'], runs=3, iterations=8)
    results = make_results(table)
    results.append(("<img src=x onerror=alert(2)>", "duet", None, "no runs <i>finished</i>"))
    page = render_html_report(title="</title><script>alert(3)</script>", table=table, results=results,
                              environment={"uname": "</pre><script>alert(4)</script>"},
                              studies={"<svg onload=alert(5)>": {"x": "</pre><script>alert(6)</script>"}})
    # Exactly our two script elements (data and code); every injected tag arrives as text.
    assert page.count("<script") == 2
    for raw in (EVIL, "<img src=x", "<svg onload", "<b>bold</b>", "<i>finished</i>", "</title><script>"):
        assert raw not in page.split('<script type="application/json"')[0]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=alert(2)&gt;" in page
    # The data block cannot close its element, and still carries the exact names.
    block = page.split('id="duet-data">', 1)[1].split("</script>", 1)[0]
    assert "<" not in block and ">" not in block
    names = [b["name"] for b in _data_block(page)["benchmarks"]]
    assert EVIL in names and 'q"uote\'s & <b>bold</b>' in names


def test_offline_no_network_references(make_table, make_results) -> None:
    page, _ = _render(make_table, make_results, runs=3, iterations=8)
    # The only URL in the file is the SVG namespace (an identifier, never fetched).
    assert set(re.findall(r"https?://[^\s\"'<>)]*", page)) == {SVG_NS}
    assert not re.search(r"<(link|img|iframe|object|embed)\b", page, re.IGNORECASE)
    assert not re.search(r"\bsrc\s*=", page, re.IGNORECASE)
    assert "@import" not in page and "url(" not in page
    assert not re.search(r"\b(fetch|XMLHttpRequest|import)\s*\(", page)


def test_duet_pairs_are_iteration_k_with_k_and_aduet_pairs_overlap(make_table) -> None:
    table = make_table(["x"], methods=("duet", "aduet"), runs=2, iterations=10, warmup=2)
    data = report_data(table, [])
    by_method = {m["method"]: m for m in data["benchmarks"][0]["methods"]}
    duet = by_method["duet"]["pairs"]
    measured = table.measured()
    a = measured.where((measured.method == "duet") & (measured.side == "A"))
    b = measured.where((measured.method == "duet") & (measured.side == "B"))
    assert duet["total"] == 16
    # The third pair of run 0 is measured iteration 2 (index 4) of A with the same of B.
    assert duet["a"][2] == pytest.approx(a.value[(a.run == 0) & (a.index == 4)][0], rel=1e-3)
    assert duet["b"][2] == pytest.approx(b.value[(b.run == 0) & (b.index == 4)][0], rel=1e-3)
    aduet = by_method["aduet"]["pairs"]
    assert 0 < aduet["total"] <= 2 * 8 * 2
    # Duet timelines: the barrier starts A's and B's iteration i together, so overlaps start with them.
    tl = by_method["duet"]["timeline"]
    assert [bar[0] for bar in tl["A"]] == [bar[0] for bar in tl["B"]]
    assert len(tl["overlaps"]) == len(tl["A"]) == 10  # warmup included, drawn pale
    assert [bar[3] for bar in tl["A"]][:3] == [True, True, False]


def test_ci_narrows_as_runs_accumulate(make_table, make_results) -> None:
    from duetbench.analyze.comparison import compare

    table = make_table(["x"], methods=("duet", "sequential"), runs=24, iterations=12)
    data = report_data(table, make_results(table))
    measured = table.measured()
    for m in data["benchmarks"][0]["methods"]:
        curve = m["narrowing"]
        assert curve[0][0] == 2 and curve[-1][0] == 24 and len(curve) == report_html.MAX_NARROWING_POINTS
        rows = measured.where(measured.method == m["method"])
        for k, estimate, low, high in curve:
            # Each point is computed on the first k runs only (estimates do not depend on the bootstrap).
            first = rows.where(rows.run < k)
            a, b = first.runs_of("A"), first.runs_of("B")
            if m["method"] == "sequential":  # on run means, see _narrowing
                expected = np.mean([r.mean() for r in b]) / np.mean([r.mean() for r in a])
            else:
                expected = compare("duet", a, b, n_resamples=100, u_test=False).ratio.estimate
            assert estimate == pytest.approx(expected, rel=1e-4) and low < estimate < high


def test_ci_width_falls_as_runs_accumulate(make_table) -> None:
    # From 4 runs on (with fewer the percentile bootstrap is degenerately narrow) the width falls about
    # as 1/sqrt(k) (duet a little slower), so the last points should be clearly narrower than at 4..8
    # runs; averaged over several campaigns because one campaign's first runs can agree by chance.
    ratios: dict[str, list[float]] = {"duet": [], "sequential": []}
    for seed in range(1, 11):
        data = report_data(make_table(["x"], methods=("duet", "sequential"), runs=24, iterations=8, seed=seed), [])
        for m in data["benchmarks"][0]["methods"]:
            width = {k: (hi - lo) / est for k, est, lo, hi in m["narrowing"]}
            early = np.mean([w for k, w in width.items() if 4 <= k <= 8])
            ratios[m["method"]].append(np.mean([width[k] for k in sorted(width)[-3:]]) / early)
    for method, r in ratios.items():
        assert np.mean(r) < 0.85, (method, r)


def test_large_campaign_is_downsampled(make_table) -> None:
    table = make_table(["big"], methods=("duet", "aduet"), runs=4, iterations=200, warmup=0)
    data = report_data(table, [])
    for m in data["benchmarks"][0]["methods"]:
        pairs = m["pairs"]
        assert pairs["shown"] == len(pairs["a"]) == report_html.MAX_SCATTER_POINTS < pairs["total"]
        assert m["timeline"]["shown"] == len(m["timeline"]["A"]) == report_html.MAX_TIMELINE_ITERATIONS
        assert m["timeline"]["total"] == 200
        assert len(m["hist"]["A"]) == report_html.MAX_BINS


def test_problem_rows_and_missing_timestamps(make_table, make_results) -> None:
    table = make_table(["x"], methods=("aduet",), runs=3, iterations=8)
    no_time = type(table)(**{**table.__dict__, "start_ns": np.full(len(table), -1), "end_ns": np.full(len(table), -1)})
    results = [("x", "aduet", None, "the async duet pairs iterations by time, but 3 run(s) have no timestamps")]
    page = render_html_report(title="t", table=no_time, results=results, environment={})
    data = _data_block(page)
    m = data["benchmarks"][0]["methods"][0]
    assert m["pairs"] is None and m["timeline"] is None and m["narrowing"] == []
    assert m["hist"]["nA"] == 3 * 6
    assert "have no timestamps" in page and 'class="problem"' in page


def test_studies_are_charted_or_listed() -> None:
    from duetbench.model.table import IterationTable

    empty = IterationTable.from_columns(benchmark=[], method=[], run=[], side=[], value=[])
    studies = {"mds": {"duet": [(0.0, 1.0), (0.02, 0.4), (0.05, 0.0)]},
               "aa_false_positive_rate": {"sequential": 0.04, "duet": 0.011},
               "runtime_saving": {"duet": 0.45, "aduet": float("nan")},
               "shuffle": {"duet": {"advantage": 0.3}}}
    page = render_html_report(title="t", table=empty, results=[], environment={}, studies=studies)
    st = _data_block(page)["studies"]
    assert st["mds"] == [{"method": "duet", "points": [[0.0, 1.0], [0.02, 0.4], [0.05, 0.0]]}]
    assert st["aa_false_positive_rate"] == [{"label": "sequential", "value": 0.04}, {"label": "duet", "value": 0.011}]
    assert st["runtime_saving"][1] == {"label": "aduet", "value": None}  # NaN is not JSON
    assert "<h3>shuffle</h3>" in page and "&#34;advantage&#34;: 0.3" in page
    assert "<h3>mds</h3>" not in page


def test_write_reports_unwritable_path_as_one_line(make_table, tmp_path: Path) -> None:
    table = make_table(["x"], methods=("duet",), runs=2, iterations=5)
    with pytest.raises(DuetError, match=r"cannot write the HTML report to .*missing/r\.html"):
        write_html_report(tmp_path / "missing" / "r.html", title="t", table=table, results=[], environment={})
    write_html_report(tmp_path / "r.html", title="t", table=table, results=[], environment={})
    assert htmllib.unescape((tmp_path / "r.html").read_text()).startswith("<!DOCTYPE html>")


def test_hundred_benchmarks_stay_small_and_fast(make_table) -> None:
    names = [f"bench-{i:03d}" for i in range(100)]
    table = make_table(names, runs=10, iterations=40, seed=3)  # 240,000 iterations
    results = [(b, m, None, "not analysed in this test") for b, m, _ in table.groups()]
    start = time.perf_counter()
    page = render_html_report(title="t", table=table, results=results, environment={})
    elapsed = time.perf_counter() - start
    size = len(page.encode())
    assert size < 3_000_000, size
    assert elapsed < 20, elapsed
    assert len(_data_block(page)["benchmarks"]) == 100
