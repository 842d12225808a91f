"""`duet analyze` and `duet report`: the papers' analyses on any stored campaign (or imported data)."""
from __future__ import annotations

import functools
import os
import shlex
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from duetbench.analyze.estimators import ESTIMATOR_NAMES
from duetbench.cli.exports import export_options, writable_target
from duetbench.errors import DuetError
from duetbench.model.method import METHODS
from duetbench.report.console import OutputConsole
from duetbench.store.db import DEFAULT_DB
from duetbench.store.option import DB_PATH_OR_URL, RECORD_ID, db_argument

if TYPE_CHECKING:  # imported when a command runs
    from duetbench.analyze.api import AnalysisRow
    from duetbench.analyze.studies import CampaignStudies
    from duetbench.model.table import IterationTable
    from duetbench.report.model import ComparisonReport
    from duetbench.store.campaigns import CampaignRecord, CampaignStore
    from duetbench.store.db import Store

_db_option = click.option("--db", type=DB_PATH_OR_URL, default=DEFAULT_DB,
                          show_default=True, help="The results database.")


def _warmup(text: str | None) -> tuple[int, float]:
    if not text:
        return 0, 0.0
    try:
        if text.endswith("%"):
            fraction = float(text[:-1]) / 100
            if not 0 <= fraction < 1:
                raise ValueError
            return 0, fraction
        count = int(text)
        if not 0 <= count <= 10**9:
            raise ValueError
        return count, 0.0
    except ValueError:
        raise DuetError(f"--warmup {text!r}: expected a count (e.g. 5) or a percentage below 100 (e.g. 20%)") from None


def _open(db: Path, campaign: int | None) -> tuple[Store, CampaignStore, CampaignRecord]:
    from duetbench.store.campaigns import CampaignStore
    from duetbench.store.db import Store

    if not db.exists():
        raise DuetError(f"no results database at {db}", hint="run 'duet run CAMPAIGN.yml' first, or pass --db PATH")
    store = Store(db)
    campaigns = CampaignStore(store)
    if campaign is None:
        found = campaigns.campaigns(limit=1)
        if not found:
            raise DuetError(f"{db} holds no campaign", hint="run 'duet run CAMPAIGN.yml' or 'duet import' first")
        return store, campaigns, found[0]
    record = campaigns.campaign(campaign)
    if record is None:
        known = ", ".join(str(c.id) for c in campaigns.campaigns(limit=20))
        raise DuetError(f"no campaign #{campaign} in {db}", hint=f"known: {known or 'none'}")
    return store, campaigns, record


@dataclass(frozen=True)
class _Analysis:
    """What `analysis_options` asks for, as the one argument `analysis` of the command."""

    campaign: int | None
    benchmarks: tuple[str, ...]
    methods: tuple[str, ...]
    metric: str
    confidence: float
    resamples: int
    warmup: str | None
    winsorize: bool
    min_overlap: float
    estimator: str
    seed: int
    db: Path


def analysis_options(f: Callable[..., None]) -> Callable[..., None]:
    """The options every analysis command shares; `f` gets them as `analysis` (an `_Analysis`)."""

    @functools.wraps(f)
    def command(**kwargs: Any) -> None:  # click's values, typed by the options below
        names = [field.name for field in fields(_Analysis)]
        f(analysis=_Analysis(**{name: kwargs.pop(name) for name in names}), **kwargs)

    options = [
        click.option("--campaign", "campaign", type=RECORD_ID, help="Campaign id (default: the latest)."),
        click.option("--benchmark", "benchmarks", multiple=True, metavar="GLOB",
                     help="Only benchmarks matching this glob (repeatable)."),
        click.option("--method", "methods", multiple=True, type=click.Choice(METHODS),
                     help="Only this method (repeatable)."),
        click.option("--metric", type=click.Choice(["wall", "cpu"]), default="wall", show_default=True,
                     help="wall: the harness's iteration times; cpu: each run's process-tree CPU time."),
        click.option("--confidence", type=float, default=0.99, show_default=True, help="Confidence level of the CIs."),
        click.option("--resamples", type=int, default=10_000, show_default=True, help="Bootstrap replicates."),
        click.option("--warmup", metavar="N|PCT",
                     help="Also drop the first N (or PCT%) measured iterations of every run (after the campaign "
                          "file's own warmup)."),
        click.option("--winsorize/--no-winsorize", default=False, show_default=True,
                     help="Winsorize each run (Bulej et al. 2020 §4: one value per run, beyond 20% of the range)."),
        click.option("--min-overlap", type=float, default=0.4, show_default=True,
                     help="aduet: pair iterations overlapping by more than this share of each."),
        click.option("--estimator", type=click.Choice(ESTIMATOR_NAMES),
                     default="auto", show_default=True,
                     help="Bootstrap unit: auto = each method's own (duets: run means; sequential: hierarchical); "
                          "run-means; hierarchical (runs, then iterations within runs); merged (pooled pairs or "
                          "iterations)."),
        click.option("--seed", type=click.IntRange(0, 2**63 - 1), default=0, show_default=True,
                     help="Seed of the bootstrap."),
        _db_option,
    ]
    decorated: Callable[..., None] = command
    for option in reversed(options):
        decorated = option(decorated)
    return decorated


def _rows(analysis: _Analysis) -> tuple[CampaignRecord, IterationTable, list[AnalysisRow]]:
    from duetbench.analyze.api import AnalysisOptions
    from duetbench.analyze.tables import analyze_table
    from duetbench.config.compare import check_confidence
    from duetbench.store.campaigns import iteration_table, process_cpu_table

    confidence, resamples, min_overlap, db = analysis.confidence, analysis.resamples, analysis.min_overlap, analysis.db
    benchmarks, methods, metric = analysis.benchmarks, analysis.methods, analysis.metric
    check_confidence(confidence)
    if resamples < 100:
        raise DuetError(f"--resamples {resamples} is too few for a percentile CI", hint="use 1000 or more")
    if resamples > 1_000_000:
        raise DuetError(f"--resamples {resamples} is more than a CI can use (and than memory holds)",
                        hint="10000 (the default) is plenty; 100000 at most")
    if not 0 < min_overlap < 1:
        raise DuetError(f"--min-overlap must be between 0 and 1, got {min_overlap}", hint="the thesis uses 0.4")
    count, fraction = _warmup(analysis.warmup)
    store, campaigns, record = _open(db, analysis.campaign)
    if metric == "cpu" and record.schedule == "imported":
        store.close()
        # Its runs' CPU times are stored as 0 (the source had none), which would read as "A contains 0".
        fmt = record.options.get("imported", "another tool")
        raise DuetError(f"campaign #{record.id} {record.name} was imported from {fmt}, which records no process "
                        "CPU time, so --metric cpu has nothing to compare",
                        hint="use --metric wall" + (" (for Google Benchmark's CPU time, import it with "
                                                    "--gbench-time cpu_time)" if fmt == "gbench" else ""))
    try:
        table = iteration_table(campaigns, record.id) if metric == "wall" else process_cpu_table(campaigns, record.id)
        runs = campaigns.runs(record.id, with_iterations=False)
    finally:
        store.close()
    from duetbench.model.table import discard_per_benchmark
    from duetbench.report.campaign_context import campaign_warmups

    # The campaign file's own `warmup:` first, as `duet run`'s closing table applies it: one number per
    # concept, whichever command prints it; --warmup drops more on top.
    table = discard_per_benchmark(table, campaign_warmups(record))
    opts = AnalysisOptions(confidence_level=confidence, n_resamples=resamples, seed=analysis.seed,
                           warmup_count=count, warmup_fraction=fraction, winsorize=analysis.winsorize,
                           min_overlap_rate=min_overlap, estimator=analysis.estimator, benchmarks=benchmarks,
                           methods=methods, metric=metric)
    from duetbench.analyze.sync import run_sync_statuses

    rows = analyze_table(table, opts, sync=run_sync_statuses(runs))
    from duetbench.usecases.campaign_rows import failed_only, run_counts

    rows += failed_only(runs, rows, benchmarks, methods)
    for row in rows:  # said beside the runs that entered the analysis, as `duet run`'s summary says it
        row.runs_failed = run_counts(runs, row.benchmark, row.method)[1]
    if metric == "cpu":
        for row in rows:
            if row.method == "duet":
                # The side that finishes an iteration first spins at the barrier until its partner
                # arrives: its process CPU time includes that wait, so the ratio says nothing.
                row.result, row.notes = None, []
                row.problem = ("in a synchronous duet the faster side spins at the barrier, so process CPU time "
                               "includes waiting; use --metric wall (or the aduet/sequential runs) for CPU")
    if not rows:
        if benchmarks or methods:
            raise DuetError(f"campaign #{record.id} has nothing to analyse with these filters",
                            hint="check --benchmark/--method, or 'duet analyze' without them")
        state = "" if record.status == "finished" else f" (it is {record.status})"
        resume = f"duet run {shlex.quote(record.path)} --resume" + db_argument(db)
        raise DuetError(f"campaign #{record.id} {record.name}{state} has no finished run with measured iterations "
                        f"yet ({len(runs)} run(s) stored)",
                        hint=f"measure them with: {resume}" if record.status != "finished" and record.path
                        else "check the runs' errors with the raw outputs in the campaign's run directory")
    from duetbench.report.warnings import name_noise, name_parallel

    name_noise(rows, runs)
    listed = record.host.get("usable_cpus")
    usable = len(listed) if isinstance(listed, list) and listed else None
    name_parallel(rows, runs, _cpus_given(record, usable or 1), usable)
    return record, table, rows


def _cpus_given(record: CampaignRecord, usable: int) -> dict[str, int]:
    """Each benchmark's CPUs per command, from the campaign file stored with its results (1 for each where
    that text no longer reads: it was written for another version)."""
    from duetbench.config.campaign import parse_campaign
    from duetbench.config.campaign_model import cpus_given

    try:
        campaign = parse_campaign(record.source_text, Path(record.path or "campaign.yml"), stored=True)
    except Exception:  # noqa: BLE001 - any reason the old text does not read is the same answer: unknown
        return {}
    return {b.name: cpus_given(b, usable) for b in campaign.benchmarks}


@click.command()
@analysis_options
@export_options("campaign")
@click.option("--fail-if-slower", type=float, metavar="PCT",
              help="Exit with 3 when a benchmark is slower than A by more than PCT percent, "
                   "with the chosen confidence.")
@click.option("--studies", is_flag=True,
              help="Also the papers' method studies: runtime saving, CI-width reduction, shuffle analysis, overlaps "
                   "(and with --aa: A/A false-positive rates, minimal detectable slowdown).")
@click.option("--aa", is_flag=True, help="The campaign compares A with itself: run the A/A studies too.")
def analyze(analysis: _Analysis, fail_if_slower: float | None, studies: bool, aa: bool,
            **export_paths: Path | None) -> None:
    """Per benchmark and method: the ratio B/A with its CI, verdict, U-test, CV, CI width.

    \b
    Examples:
      duet analyze                                  # the latest campaign
      duet analyze --campaign 3 --benchmark 'jmh*' --method duet
      duet analyze --warmup 20% --winsorize --confidence 0.95
      duet analyze --export-markdown "$GITHUB_STEP_SUMMARY" --fail-if-slower 3
    """
    from duetbench.report import analysis as out
    from duetbench.report.exporters import Exports
    from duetbench.report.model import CampaignReport

    exports = Exports.from_options(export_paths)
    if fail_if_slower is not None and not (0 <= fail_if_slower < 1000):
        raise DuetError(f"--fail-if-slower must be a percentage between 0 and 1000, got {fail_if_slower}")
    record, table, rows = _rows(analysis)
    # Piped into a file or a CI log, rich would wrap the table at 80 columns; a wide one stays readable.
    console = OutputConsole(highlight=False, width=None if sys.stdout.isatty() else 160)
    state = "" if record.status == "finished" else f" ({record.status})"
    title = f"campaign #{record.id} {record.name}{state} · metric {analysis.metric} · B relative to A (> 1: B slower)"
    out.print_rows(console, rows, title=title)
    meta: dict[str, Any] = {"campaign": record.id, "name": record.name,
                            "options": {k: list(v) if isinstance(v, tuple) else v
                                        for k, v in asdict(analysis).items() if k != "db"}}
    result = None
    if studies or aa:
        from duetbench.report.studies import print_studies, studies_dict

        result = _studies(table, analysis, aa=aa)
        print_studies(console, result)
        meta["studies"] = studies_dict(result)
    exports.write(CampaignReport(campaign_id=record.id, name=record.name, rows=rows, meta=meta,
                                 threshold_pct=fail_if_slower, table=table, studies=meta.get("studies"),
                                 studies_result=result, **_context(record, html="html" in exports.paths)))
    if fail_if_slower is not None:
        over = out.slower_than(rows, fail_if_slower)
        if over:
            names = ", ".join(f"{r.benchmark} ({r.method})" for r in over)
            console.print(f"[red]slower by more than {fail_if_slower:g}%:[/red] {names}")
            from duetbench.errors import EXIT_SLOWER

            sys.exit(EXIT_SLOWER)


def _context(record: CampaignRecord, *, html: bool = True) -> dict[str, Any]:
    """The CampaignReport fields that say where the numbers come from (the commands only for HTML: reading
    them back parses the campaign file)."""
    from duetbench.report.campaign_context import campaign_commands, campaign_environment, campaign_facts

    return {"environment": campaign_environment(record), "facts": campaign_facts(record),
            "commands": campaign_commands(record) if html else {}, "source": record.source_text,
            "status": record.status}


def _studies(table: IterationTable, analysis: _Analysis, *, aa: bool) -> CampaignStudies:
    from duetbench.analyze.studies import run_studies

    try:
        return run_studies(table.measured(), aa=aa, confidence_level=analysis.confidence,
                           n_resamples=analysis.resamples, min_overlap_rate=analysis.min_overlap, seed=analysis.seed)
    except ValueError as exc:
        raise DuetError(f"the method studies cannot run on this campaign: {exc}") from None


@click.command()
@analysis_options
@click.option("--comparison", "comparison_ids", type=RECORD_ID, multiple=True, metavar="ID",
              help="Report these stored comparisons (repeatable) instead of a campaign. Default: the latest campaign; "
                   "in a database without campaigns, the latest --limit comparisons (parameter scans included).")
@click.option("--limit", type=click.IntRange(1, 10**4), default=30, show_default=True,
              help="Without --comparison or a campaign: how many of the latest comparisons to report.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=Path("report.html"),
              show_default=True, callback=writable_target, help="The HTML file to write.")
@click.option("--no-studies", is_flag=True, help="Leave out the method studies (faster on huge campaigns).")
@click.option("--aa", is_flag=True, help="The campaign compares A with itself: add the A/A studies.")
def report(analysis: _Analysis, output: Path, no_studies: bool, aa: bool, comparison_ids: tuple[int, ...],
           limit: int) -> None:
    """Write one self-contained HTML report (works offline) of a campaign, or of stored comparisons."""
    from duetbench.report.exporters import write_atomically

    db = analysis.db
    if comparison_ids and analysis.campaign is not None:
        raise DuetError("--comparison and --campaign each choose what to report", hint="give one of them")
    if comparison_ids or (analysis.campaign is None and not _holds_campaign(db)):
        from duetbench.report.comparisons_html import render_comparisons_html

        title, entries = _comparisons(db, comparison_ids, limit)
        write_atomically(output, render_comparisons_html(title, entries), "HTML report",
                         hint="choose a writable path with -o")
        plural = "s" if len(entries) != 1 else ""
        _wrote(output, f"wrote {output} ({len(entries)} comparison{plural})")
        return
    from duetbench.report.exporters.html import campaign_html
    from duetbench.report.model import CampaignReport

    record, table, rows = _rows(analysis)
    studies = None
    if not no_studies:
        from duetbench.report.studies import studies_dict

        studies = studies_dict(_studies(table, analysis, aa=aa))
    page = campaign_html(CampaignReport(campaign_id=record.id, name=record.name, rows=rows, meta={}, table=table,
                                        studies=studies, **_context(record)))
    write_atomically(output, page, "HTML report", hint="choose a writable path with -o")
    _wrote(output, f"wrote {output}")


def _wrote(output: Path, said: str) -> None:
    """Say where the page went, unless it went to standard output (-o -, -o /dev/stdout): there the line
    would follow </html> into the file a shell redirect makes, and show at the bottom of the page."""
    from duetbench.report.exporters import to_stdout

    try:
        page, stdout = os.stat(output), os.fstat(sys.stdout.fileno())
        same = (page.st_dev, page.st_ino) == (stdout.st_dev, stdout.st_ino)
    except (OSError, ValueError):  # no file there, or no file descriptor behind stdout
        same = False
    if not (to_stdout(output) or same):
        OutputConsole(highlight=False).print(said, markup=False)  # a path as typed: "[red]r.html" is no markup


def _holds_campaign(db: Path) -> bool:
    """Whether the database holds a campaign (then `duet report` reports the latest by default)."""
    from duetbench.store.campaigns import CampaignStore
    from duetbench.store.db import Store

    if not db.exists():
        raise DuetError(f"no results database at {db}", hint="run 'duet compare' or 'duet run CAMPAIGN.yml' first, "
                                                             "or pass --db PATH")
    store = Store(db)
    try:
        return bool(CampaignStore(store).campaigns(limit=1))
    finally:
        store.close()


def _comparisons(db: Path, ids: tuple[int, ...], limit: int
                 ) -> tuple[str, list[tuple[ComparisonReport, dict[str, Any]]]]:
    """(title, [(report, parameters)]) of comparisons `ids`, or of the latest `limit`, oldest first."""
    from duetbench.store.db import Store
    from duetbench.usecases.compare import build_report

    store = Store(db)
    try:
        if ids:
            records = []
            for comparison_id in dict.fromkeys(ids):
                record = store.comparison(comparison_id)
                if record is None:
                    known = ", ".join(str(r.id) for r in store.comparisons(20))
                    raise DuetError(f"no comparison #{comparison_id} in {db}", hint=f"known: {known or 'none'}")
                records.append(record)
        else:
            records = sorted(store.comparisons(limit), key=lambda r: r.id)
        if not records:
            raise DuetError(f"{db} holds no campaign and no comparison",
                            hint="run 'duet compare A B' or 'duet run CAMPAIGN.yml' first")
        entries = [(build_report(r, store.invocations(r.id)), dict(r.options.get("parameters") or {})) for r in records]
    finally:
        store.close()
    first, last = records[0].id, records[-1].id
    which = f"comparison #{first}" if len(records) == 1 else f"{len(records)} comparisons (#{first}–#{last})"
    return f"duetbench · {which}", entries
