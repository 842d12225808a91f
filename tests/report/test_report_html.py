"""The HTML report as a file: sections, escaping, offline, the data behind each plot, size."""
from __future__ import annotations

import html as htmllib
import json
import re
import time
from pathlib import Path

import msgspec
import numpy as np
import pytest

from duetbench.errors import DuetError
from duetbench.report import distribution
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
                   'id="campaign"', 'id="environment"'):
        assert anchor in page
    assert page.count('<tr data-benchmark="alpha">') == 3 and page.count('<tr data-benchmark="beta">') == 3
    assert "test cpu" in page and "host.cpus" in page
    assert [b["name"] for b in data["benchmarks"]] == ["alpha", "beta"]
    by_method = {m["method"]: m for m in data["benchmarks"][0]["methods"]}
    assert set(by_method) == {"sequential", "duet", "aduet"}
    assert by_method["sequential"]["pairs"] is None and by_method["sequential"]["timeline"] is None
    for method in ("duet", "aduet"):
        assert by_method[method]["pairs"]["total"] > 0
        timelines = by_method[method]["timeline"]["runs"]
        assert [tl["run"] for tl in timelines] == [0, 1, 2, 3, 4] and all(tl["A"] and tl["o"] for tl in timelines)
    for m in by_method.values():
        assert [p[0] for p in m["narrowing"]] == [2, 3, 4, 5]
        assert sum(m["hist"]["A"]) == m["hist"]["nA"] == 5 * 28  # 30 iterations, 2 warmup, all binned
        assert [r["run"] for r in m["series"]["runs"]] == [r["run"] for r in m["ratios"]["runs"]] == [0, 1, 2, 3, 4]


def test_each_side_time_per_iteration_with_its_unit_beside_the_ratio(make_table, make_results) -> None:
    table = make_table(["alpha"], methods=("duet",), runs=4, iterations=12)
    results = make_results(table)
    page = render_html_report(title="t", table=table, results=results, environment={})
    r = results[0][2]
    assert r is not None
    row = re.search(r'<tr data-benchmark="alpha">(.*?)</tr>', page, re.S)
    assert row
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row.group(1), re.S)
    # benchmark, method, A / iteration, B / iteration, ratio B/A: A's and B's median with its unit
    assert cells[2] == f"{r.a.median * 1e3:.3g} ms" and cells[3] == f"{r.b.median * 1e3:.3g} ms"
    assert cells[4] == f"{r.ratio.estimate:.4f}"
    row_data = _data_block(page)["rows"][0]
    assert row_data["a_median"] == pytest.approx(r.a.median) and "%" in row_data["change"]
    # runs as the terminal counts them (the CI's units: 4 run means), the duet's iteration pairs on hover
    assert r.ratio.n == 4 and r.runs > 4
    assert re.search(rf'<td class="num" data-v="4" title="{r.runs} iteration pairs">4</td>', row.group(1))


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
    assert duet["unit"] == 1e-3  # the values are milliseconds
    assert duet["a"][2] * 1e-3 == pytest.approx(a.value[(a.run == 0) & (a.index == 4)][0], rel=1e-3)
    assert duet["b"][2] * 1e-3 == pytest.approx(b.value[(b.run == 0) & (b.index == 4)][0], rel=1e-3)
    aduet = by_method["aduet"]["pairs"]
    assert 0 < aduet["total"] <= 2 * 8 * 2
    # Duet timelines: the barrier starts A's and B's iteration i together, so overlaps start with them.
    # Every run has its timeline, each on its own clock (ms from the run's first iteration).
    timelines = by_method["duet"]["timeline"]["runs"]
    assert [tl["run"] for tl in timelines] == [0, 1]
    for tl in timelines:
        assert [bar[0] for bar in tl["A"]] == [bar[0] for bar in tl["B"]] and tl["A"][0][0] == 0
        assert len(tl["o"]) == len(tl["A"]) == tl["n"] == 10  # warmup included, drawn pale
        assert [bar[2] for bar in tl["A"]][:3] == [1, 1, 0]
        rows = table.where((table.method == "duet") & (table.run == tl["run"]) & (table.side == "A"))
        rows = rows.where(np.argsort(np.argsort(rows.start_ns)) == 3)  # the fourth iteration of A in time
        assert tl["A"][3][1] - tl["A"][3][0] == pytest.approx((rows.end_ns[0] - rows.start_ns[0]) / 1e6, rel=1e-3)


def test_series_show_every_run_and_iteration_of_each_side(make_table) -> None:
    table = make_table(["x"], methods=("duet", "sequential"), runs=3, iterations=10, warmup=2)
    data = report_data(table, [])
    for m in data["benchmarks"][0]["methods"]:
        series = m["series"]
        assert series["shown"] == series["total"] == 3 * 2 * 10
        for entry in series["runs"]:
            for side in ("A", "B"):
                rows = table.where((table.method == m["method"]) & (table.run == entry["run"]) & (table.side == side))
                expected = rows.value[np.argsort(rows.index)]
                assert (np.array(entry[side]["v"]) * series["unit"]) == pytest.approx(expected.tolist(), rel=1e-3)
                assert entry[side]["w"] == 2 and entry[side]["n"] == 10  # warm-ups first, nothing left out


def test_pair_ratios_over_the_runs(make_table) -> None:
    table = make_table(["x"], methods=("duet", "sequential"), runs=3, iterations=10, warmup=2)
    data = report_data(table, [])
    by_method = {m["method"]: m["ratios"] for m in data["benchmarks"][0]["methods"]}
    measured = table.measured()
    for run in by_method["duet"]["runs"]:
        a, b = (measured.where((measured.method == "duet") & (measured.run == run["run"]) & (measured.side == s))
                for s in ("A", "B"))
        ratios = b.value[np.argsort(b.index)] / a.value[np.argsort(a.index)]  # iteration k with k
        assert run["n"] == 8 and run["v"] == pytest.approx(ratios.tolist(), rel=1e-3)
        assert run["gm"] == pytest.approx(float(np.exp(np.log(ratios).mean())), rel=1e-4)
    for run in by_method["sequential"]["runs"]:  # no pairs: one ratio of means per run
        a, b = (measured.where((measured.method == "sequential") & (measured.run == run["run"]) & (measured.side == s))
                for s in ("A", "B"))
        assert run["v"] == [pytest.approx(b.value.mean() / a.value.mean(), rel=1e-4)] and run["n"] == 1


def test_a_five_percent_shift_is_visible_in_the_distributions(make_table) -> None:
    # B = 1.05·A under 5% run-to-run and a few percent of iteration noise, 5 runs of 13 measured iterations
    # per side: the medians lie at least two bins apart, and so do the distributions' centres of mass.
    for seed in range(1, 9):
        data = report_data(make_table(["x"], methods=("duet",), runs=5, iterations=15, seed=seed), [])
        h = data["benchmarks"][0]["methods"][0]["hist"]
        edges = np.array(h["edges"])
        width = edges[1] - edges[0]
        assert distribution.MIN_ITERATION_BINS <= len(h["A"]) <= distribution.MAX_BINS
        assert (h["medianB"] - h["medianA"]) / width >= 2, (seed, len(h["A"]))
        centre = {s: np.average(np.arange(len(h[s])), weights=h[s]) for s in ("A", "B")}
        assert centre["B"] - centre["A"] >= 2, (seed, h["A"], h["B"])


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
        timeline = m["timeline"]
        per_run = report_html.TIMELINE_ITERATIONS // 4
        assert timeline["per_run"] == per_run and [len(r["A"]) for r in timeline["runs"]] == [per_run] * 4
        assert timeline["shown"] == 4 * per_run and timeline["total"] == 4 * 200
        assert distribution.MIN_ITERATION_BINS <= len(m["hist"]["A"]) <= distribution.MAX_BINS
        series = m["series"]
        assert series["total"] == 4 * 2 * 200 and series["shown"] == 2 * report_html.MAX_SERIES_POINTS
        for entry in series["runs"]:
            # evenly spaced, the run's first and last iteration among them, in the order measured
            x = report_html._spread(entry["A"]["n"], len(entry["A"]["v"]))
            assert len(x) == 60 and x[0] == 0 and x[-1] == 199 and np.all(np.diff(x) >= 3)
            rows = table.where((table.method == m["method"]) & (table.run == entry["run"]) & (table.side == "A"))
            assert (np.array(entry["A"]["v"]) * series["unit"]) == pytest.approx(
                rows.value[np.argsort(rows.index)][x].tolist(), rel=1e-3)
        for run in m["ratios"]["runs"]:
            assert len(run["v"]) <= report_html.MAX_SERIES_POINTS // 4 < run["n"]


def test_problem_rows_and_missing_timestamps(make_table, make_results) -> None:
    table = make_table(["x"], methods=("aduet",), runs=3, iterations=8)
    no_time = msgspec.structs.replace(table, start_ns=np.full(len(table), -1), end_ns=np.full(len(table), -1))
    results = [("x", "aduet", None, "the async duet pairs iterations by time, but 3 run(s) have no timestamps")]
    page = render_html_report(title="t", table=no_time, results=results, environment={})
    data = _data_block(page)
    m = data["benchmarks"][0]["methods"][0]
    assert m["pairs"] is None and m["timeline"] is None and m["narrowing"] == []
    assert m["hist"]["nA"] == 3 * 6
    assert "have no timestamps" in page and 'class="problem"' in page


def test_studies_are_in_words_with_units_and_charted() -> None:
    from duetbench.model.table import IterationTable

    empty = IterationTable.from_columns(benchmark=[], method=[], run=[], side=[], value=[])
    studies = {"mds": {"duet": [(0.0, 1.0), (0.02, 0.4), (0.05, 0.0)], "sequential": [(0.0, 1.0), (0.05, 0.8)]},
               "aa_false_positive_rate": {"sequential": 0.04, "duet": 0.011},
               "runtime_saving": {"duet": 0.45, "aduet": float("nan")},
               "runtime_speedup": {"duet": 1.82},
               "runtime_seconds": {"duet": {"benchmarks": 3, "sequential_s": 250.0, "method_s": 137.5}},
               "ci_width_reduction": {"duet": 4.2, "aduet": 0.8},
               "shuffle_width_ratio": {"duet": 294.33, "aduet": 1.05},
               "relative_overlap_time": {"x": {"0.4": 0.62}, "y": {"0.4": 0.7}, "z": {"0.4": 0.5}},
               "skipped": [{"benchmark": "w", "method": "aduet", "reason": "all pairs in one run"}],
               "shuffle": {"duet": {"advantage": 0.3}}}
    page = render_html_report(title="t", table=empty, results=[], environment={}, studies=studies)
    st = _data_block(page)["studies"]
    assert st["mds"][0] == {"method": "duet", "points": [[0.0, 1.0], [0.02, 0.4], [0.05, 0.0]]}
    assert st["aa_false_positive_rate"] == [{"label": "sequential", "value": 0.04}, {"label": "duet", "value": 0.011}]
    assert st["runtime"] == [{"method": "duet", "sequential": 250.0, "paired": 137.5, "benchmarks": 3}]
    findings = [htmllib.unescape(" ".join(re.sub(r"<[^>]+>", "", li).split()))
                for li in re.findall(r"<li>(.*?)</li>", page, re.S)]
    assert findings == [
        "Machine time. duet: one run of each of the 3 benchmarks measured both ways took 2.29 min of machine time "
        "with A and B in parallel, against 4.17 min for A then B (sequential): 112 s less, 45% saved (median "
        "over benchmarks 45%, 1.8× as fast).",
        "CI width. duet's confidence intervals are 4.2× narrower than sequential's (relative CI width, geometric "
        "mean over the benchmarks measured with both).",
        "CI width. aduet's confidence intervals are 1.25× wider than sequential's (relative CI width, geometric "
        "mean over the benchmarks measured with both).",
        "Shuffled pairs. duet: with each A iteration paired with a random B iteration instead of its partner, the CI "
        "would be 294× as wide — pairing A's and B's iterations cancels interference that hits both at once.",
        "Shuffled pairs. aduet: with each A iteration paired with a random B iteration instead of its partner, the "
        "CI would be 1.05× as wide — there was little interference hitting A and B at once for the pairing to "
        "cancel.",
        "Overlap. aduet: a median 62% of A's and B's iteration time ran in pairs overlapping by more than 40% (over 3 "
        "benchmarks).",
        "A/A false alarms. Share of A/A benchmarks judged different, CI test: sequential 4.0%, duet 1.1% (nominal "
        "1%).",
        "Minimal detectable slowdown. Half of the benchmarks detect an injected slowdown of 2% with duet, more than "
        "5% with sequential.",
        "Left out. w · aduet: all pairs in one run",
        "shuffle. duet (advantage = 0.3)",
    ]
    assert "<pre" not in page.split("</header>", 1)[1].split('id="environment"')[0]  # no JSON dumps
    assert "294.33" not in page and "shuffle_width_ratio" not in page


def test_studies_of_a_real_analysis_are_all_in_words(make_table) -> None:
    from duetbench.analyze.studies import run_studies
    from duetbench.report.studies import studies_dict

    table = make_table(["x", "y"], runs=4, iterations=10)
    studies = studies_dict(run_studies(table.measured(), aa=True, n_resamples=200, n_shuffles=3))
    page = render_html_report(title="t", table=table, results=[], environment={}, studies=studies)
    findings = [" ".join(re.sub(r"<[^>]+>", "", li).split()) for li in re.findall(r"<li>(.*?)</li>", page, re.S)]
    topics = [f.split(".")[0] for f in findings]
    assert {"Machine time", "CI width", "Shuffled pairs", "Overlap", "A/A false alarms",
            "Minimal detectable slowdown"} <= set(topics), findings
    machine = next(f for f in findings if f.startswith("Machine time. duet"))
    assert re.search(r"took [0-9.]+ s of machine time .* against [0-9.]+ s .* [0-9]+% saved", machine), machine
    assert all(not re.search(r"[{}\[\]]", f) for f in findings), findings  # nothing reads as JSON


def test_commands_facts_and_environment_are_shown_as_text(make_table, make_results) -> None:
    table = make_table(["alpha"], methods=("duet",), runs=2, iterations=5)
    page = render_html_report(
        title="t", table=table, results=make_results(table),
        environment={"hostname": "box", "usable_cpus": [0, 1], "virtualized": False, "artifact: uname": "Linux"},
        facts={"seed": "42", "host": "box", "CPU": "Test CPU, 2 CPUs", "kernel": "6.1 x86_64", "duetbench": "9.9"},
        commands={"alpha": {"A": "run --old </pre><script>alert(1)</script>", "B": "run --new"}},
        source="campaign: c\nbenchmarks: {}\n")
    text = htmllib.unescape(page)
    assert "<tr><th>seed</th><td>42</td></tr>" in page and "usable_cpus</th><td><pre>0, 1</pre>" in page
    assert "virtualized</th><td><pre>no</pre>" in page
    assert "host: box · CPU: Test CPU, 2 CPUs · kernel: 6.1 x86_64 · duetbench: 9.9" in text
    assert "<pre>run --new</pre>" in page and "&lt;/pre&gt;&lt;script&gt;alert(1)" in page
    assert page.count("<script") == 2
    assert "campaign: c\nbenchmarks: {}" in page
    assert _data_block(page)["commands"] == {"alpha": {"A": "run --old </pre><script>alert(1)</script>",
                                                       "B": "run --new"}}


def test_write_reports_unwritable_path_as_one_line(make_table, tmp_path: Path) -> None:
    table = make_table(["x"], methods=("duet",), runs=2, iterations=5)
    (tmp_path / "a-file").write_text("")
    with pytest.raises(DuetError, match=r"cannot write the HTML report to .*a-file/r\.html"):
        write_html_report(tmp_path / "a-file" / "r.html", title="t", table=table, results=[], environment={})
    write_html_report(tmp_path / "r.html", title="t", table=table, results=[], environment={})
    assert htmllib.unescape((tmp_path / "r.html").read_text()).startswith("<!DOCTYPE html>")


def test_hundred_benchmarks_stay_small_and_fast(make_table) -> None:
    names = [f"bench-{i:03d}" for i in range(100)]
    table = make_table(names, runs=10, iterations=40, seed=3)  # 240,000 iterations
    results = [(b, m, None, "not analysed in this test") for b, m, _ in table.groups()]
    # The renderer's own CPU time (time off the CPU, another process's, does not count), against a budget
    # that allows this host's slow phases and slow processes: 7.5 s here quiet and 10.4 s beside another test
    # run, and the same work runs up to ~1.6x slower from one process to the next (17 s, where the budget was
    # 20 s of wall time). What it catches is a renderer that grows worse than linearly.
    start = time.process_time()
    page = render_html_report(title="t", table=table, results=results, environment={})
    elapsed = time.process_time() - start
    size = len(page.encode())
    # 2.4 MB before the iteration times and pair ratios of every run joined the page (about 0.9 MB of them)
    assert size < 3_500_000, size
    assert elapsed < 40, elapsed
    assert len(_data_block(page)["benchmarks"]) == 100


def test_ten_thousand_runs_draw_evenly_spaced_runs_in_a_small_page(make_table) -> None:
    """A campaign of 10,000 short runs (`duet run` with `methods: {duet: 10000}`): every run went into the
    timeline (a 300,000-pixel-tall plot), and two points per run into the plots over the runs: a 5.5 MB page
    of 300,000 SVG elements that took the browser 12 s to open, after 40 s in a per-run scan of all rows
    (the sequential CI-narrowing curve). Now those plots show evenly spaced runs and say how many of all."""
    runs = 10_000
    table = make_table(["big"], methods=("duet", "sequential"), runs=runs, iterations=3, warmup=1)
    page = render_html_report(title="big", table=table, results=[], environment={})
    assert len(page.encode()) < 300_000
    for m in _data_block(page)["benchmarks"][0]["methods"]:
        plots = [m["series"], m["ratios"]] + ([m["timeline"]] if m["method"] == "duet" else [])
        for plot, limit in zip(plots, (report_html.MAX_PLOTTED_RUNS, report_html.MAX_PLOTTED_RUNS,
                                       report_html.MAX_TIMELINE_RUNS), strict=False):
            shown = [r["run"] for r in plot["runs"]]
            assert len(shown) == limit and shown[0] == 0 and shown[-1] == runs - 1 and plot["runs_total"] == runs
        assert m["series"]["total"] == 2 * 3 * runs  # every iteration counted, the shown ones of all
        assert [p[0] for p in m["narrowing"]][-1] == runs


def test_a_comparison_page_shows_each_side_mean_time_per_metric(make_table, make_results) -> None:
    """`duet compare A B --export-html`: the terminal and the Markdown export show A's and B's mean wall and CPU
    time; the page showed B/A of the wall time and plots, so neither side's time could be read off it, nor
    the CPU time's comparison at all."""
    from tests.exports.test_hostile_exports import _failed, _invocation

    from duetbench.report.comparisons_html import render_comparisons_html
    from duetbench.report.units import fmt_time

    table = make_table(["x"], methods=("duet",), runs=3, iterations=10)
    wall = make_results(table)[0][2]
    assert wall is not None
    cpu = msgspec.structs.replace(wall, metric="cpu", a=msgspec.structs.replace(wall.a, mean=wall.a.mean / 2))
    comparison = _failed(names=("old", "new"), invocations=[_invocation(s, i, 0.01) for s in "AB" for i in range(3)])
    comparison.status, comparison.analysis_error, comparison.method = "complete", None, "duet"
    comparison.results = {"wall": wall, "cpu": cpu}
    comparison.options = {"auto": {"reason": "pair ratios of the duet varied 2.79%"}}
    text = " ".join(htmllib.unescape(re.sub(r"<[^>]+>", " ", render_comparisons_html("t", [(comparison, {})]))).split())
    assert "metric old mean new mean B/A 99% CI verdict U-test p" in text
    assert f"wall {fmt_time(wall.a.mean)} {fmt_time(wall.b.mean)} {wall.ratio.estimate:.4f}" in text
    assert f"cpu {fmt_time(cpu.a.mean)} {fmt_time(cpu.b.mean)} {cpu.ratio.estimate:.4f}" in text
    assert "Method chosen by --method auto: pair ratios of the duet varied 2.79%." in text


def test_the_report_of_an_interrupted_campaign_says_so_at_the_top(duet, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """`duet run` stopped by Ctrl-C, then `duet report`: the terminal heads its table "campaign #1 ab
    (interrupted)", the page's title and heading read as for a finished campaign (the state was only in
    the facts at the bottom), so a colleague took a part of the runs for the whole campaign."""
    from duetbench.store.campaigns import CampaignStore
    from duetbench.store.db import Store

    times = {"command": "x", "times": [0.01, 0.011, 0.012, 0.01], "exit_codes": [0] * 4}
    (tmp_path / "hf.json").write_text(json.dumps({"results": [times, {**times, "command": "y"}]}))
    assert duet("import", "hyperfine", "hf.json", "--db", "r.db", "--name", "ab").returncode == 0
    store = Store(tmp_path / "r.db")
    try:
        CampaignStore(store).set_status(1, "interrupted")
    finally:
        store.close()
    for args in (("report", "-o", "report.html"), ("analyze", "--export-html", "report.html")):
        result = duet(*args, "--db", "r.db")
        assert result.returncode == 0, result.stderr
        page = (tmp_path / "report.html").read_text()
        assert "<h1>duetbench · campaign ab (#1, interrupted)</h1>" in page, args


def test_a_comparison_page_counts_the_runs_measured_not_those_left_after_the_outlier_filter(make_table,
                                                                                         make_results) -> None:
    """`duet compare A B --runs 15 --method duet --export-html`, one pair set aside by the robust filter: the
    terminal and Markdown say "15 runs (1 outlier pair set aside)", the page said "14 runs", a run lost."""
    from tests.exports.test_hostile_exports import _failed, _invocation

    from duetbench.report.comparisons_html import render_comparisons_html

    table = make_table(["x"], methods=("duet",), runs=3, iterations=10)
    result = make_results(table)[0][2]
    assert result is not None
    measured = result.a.n
    filtered = msgspec.structs.replace(result, runs=measured - 1, outliers_removed=1)
    comparison = _failed(invocations=[_invocation(s, i, 0.01) for s in "AB" for i in range(3)])
    comparison.status, comparison.analysis_error, comparison.method = "complete", None, "duet"
    comparison.results = {"wall": filtered}
    page = render_comparisons_html("t", [(comparison, {})])
    text = " ".join(htmllib.unescape(re.sub(r"<[^>]+>", " ", page)).split())
    assert f" {measured} runs (1 outlier pair set aside), U-test p" in text
    assert f'<td class="num">{measured}</td>' in page and f'<td class="num">{measured - 1}</td>' not in page


def test_a_report_to_standard_output_is_the_page_alone(duet, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """`duet report -o - > r.html`: "wrote -" followed </html> in the file (and showed at the bottom of the page);
    `-o '[b]r.html'` said "wrote r.html"."""
    times = {"command": "x", "times": [0.01, 0.011, 0.012, 0.01], "exit_codes": [0] * 4}
    (tmp_path / "hf.json").write_text(json.dumps({"results": [times, {**times, "command": "y"}]}))
    assert duet("import", "hyperfine", "hf.json", "--db", "r.db").returncode == 0
    result = duet("report", "--db", "r.db", "-o", "-")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("<!DOCTYPE html>") and result.stdout.endswith("</html>\n"), result.stdout[-200:]
    result = duet("report", "--db", "r.db", "-o", "[b]r.html")  # said as typed, not read as rich markup
    assert result.stdout == "wrote [b]r.html\n" and (tmp_path / "[b]r.html").read_text().endswith("</html>")


def test_several_commands_against_a_reference_are_not_called_a_parameter_scan() -> None:
    """`duet compare base x y --export-html`: the page was titled "parameter scan: x vs base, scanning command"
    (y not named) with a made-up parameter column "command" repeating B's; the Markdown export says
    "x, y against base"."""
    from tests.exports.test_hostile_exports import _failed

    from duetbench.report.exporters.html import scan_html
    from duetbench.report.model import ScanEntry, ScanReport

    scan = ScanReport([ScanEntry({"command": name}, _failed(names=("base", name))) for name in ("x", "y")])
    page = scan_html(scan)
    assert "<title>duetbench · x, y against base</title>" in page and "scanning" not in page
    assert "<th>command</th>" not in page


def test_failed_runs_of_a_campaign_are_said_in_its_page(make_table, make_results) -> None:
    """`duet run campaign.yml --export-html r.html` where B exits 3: the terminal's runs column says "0 +2
    failed" and a line says their exit codes and stderr are stored; the page said only "got 10 A and 0 B"."""
    from duetbench.analyze.api import AnalysisRow
    from duetbench.report.exporters.html import campaign_html
    from duetbench.report.model import CampaignReport

    table = make_table(["ok", "bad"], methods=("sequential",), runs=3, iterations=10)
    result = make_results(table)[0][2]
    rows = [AnalysisRow("ok", "sequential", 3, 24, 24, result, notes=["a note"], runs_ok=3, runs_failed=1),
            AnalysisRow("bad", "sequential", 0, 10, 0, None, problem="needs at least 2 measured iterations per "
                        "side, got 10 A and 0 B", runs_ok=0, runs_failed=2)]
    page = campaign_html(CampaignReport(campaign_id=1, name="c", rows=rows, meta={}, table=table))
    text = " ".join(htmllib.unescape(re.sub(r"<[^>]+>", " ", page.split('<script type="application/json"')[0])).split())
    assert "got 10 A and 0 B; 2 runs failed (their exit codes and stderr are stored)" in text
    assert "a note 1 run failed (their exit codes and stderr are stored)" in text
