"""`duet import`: measurements made by other tools become a stored campaign (docs/import.md)."""
from __future__ import annotations

import shlex
import sys
from pathlib import Path

import click

from duetbench.errors import DuetError
from duetbench.importers import (
    CsvMapping,
    Imported,
    read_csv,
    read_duetprocess,
    read_gbench,
    read_hyperfine,
    read_jmh,
    read_pyperf,
    store_imported,
)
from duetbench.importers.csv_mapping import FIELDS, TIME_UNITS
from duetbench.importers.gbench import Metric
from duetbench.model.method import METHODS
from duetbench.store.db import DEFAULT_DB
from duetbench.store.option import DB_PATH_OR_URL

FORMATS = ("hyperfine", "pyperf", "jmh", "gbench", "duetprocess", "csv")
_METHODS = METHODS


def _pairs(options: tuple[str, ...], flag: str, example: str) -> list[tuple[str, str]]:
    out = []
    for text in options:
        key, sep, value = text.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise DuetError(f"{flag} {text!r} is not KEY=VALUE", hint=f"e.g. {flag} {example}")
        out.append((key.strip(), value.strip()))
    return out


def _mapping(cols: tuple[str, ...], sets: tuple[str, ...], maps: tuple[str, ...], unit: str, time_unit: str,
             where: tuple[str, ...], method: str | None) -> CsvMapping:
    columns = {f: tuple(c.strip() for c in v.split(",")) for f, v in _pairs(cols, "--col", "side=version")}
    constants = dict(_pairs(sets, "--set", "method=sequential"))
    if method is not None:
        constants["method"] = method
        columns.pop("method", None)
    values: dict[str, dict[str, str]] = {}
    for text in maps:
        name, sep, rest = text.partition(":")
        if not sep:
            raise DuetError(f"--map {text!r} is not FIELD:FROM=TO[,FROM=TO...]", hint="e.g. --map side:1=A,2=B")
        values.setdefault(name.strip(), {}).update(_pairs(tuple(rest.split(",")), f"--map {name}:", "1=A"))
    filters = {c: tuple(v.split(",")) for c, v in _pairs(where, "--where", "mode=A,B")}
    return CsvMapping(columns=columns, constants=constants, values=values, unit=unit, time_unit=time_unit,
                      where=filters)


def _files(fmt: str, files: tuple[Path, ...], allowed: tuple[int, ...]) -> None:
    if len(files) not in allowed:
        want = " or ".join(str(n) for n in allowed)
        raise DuetError(f"duet import {fmt} takes {want} file(s), got {len(files)}",
                        hint={"jmh": "give A's JSON then B's JSON",
                              "hyperfine": "one export holding both commands, or A's then B's export",
                              "pyperf": "A's JSON then B's, or one JSON with exactly two benchmarks",
                              "gbench": "A's result then B's (JSON or CSV), or one with exactly two benchmarks"}.get(
                            fmt, "give one CSV file"))


def read(fmt: str, files: tuple[Path, ...], *, method: str | None = None, command_a: str = "0",
         command_b: str = "1", mapping: CsvMapping | None = None, gbench_metric: Metric = "real_time") -> Imported:
    """The importer behind `duet import FORMAT FILE...`."""
    if fmt == "hyperfine":
        _files(fmt, files, (1, 2))
        # An index only in ASCII digits: "¹" is a digit to str.isdigit, not to int().
        pick = [int(c) if c.isascii() and c.isdigit() else c for c in (command_a, command_b)]
        return read_hyperfine(files[0], files[1] if len(files) == 2 else None, command_a=pick[0],
                              command_b=pick[1])
    if fmt == "pyperf":
        _files(fmt, files, (1, 2))
        return read_pyperf(files[0], files[1] if len(files) == 2 else None, method=method or "sequential")
    if fmt == "gbench":
        _files(fmt, files, (1, 2))
        return read_gbench(files[0], files[1] if len(files) == 2 else None, method=method or "sequential",
                           metric=gbench_metric)
    if fmt == "jmh":
        _files(fmt, files, (2,))
        return read_jmh(files[0], files[1], method=method or "sequential")
    _files(fmt, files, (1,))
    if fmt == "duetprocess":
        return read_duetprocess(files[0], method=method)
    return read_csv(files[0], mapping or CsvMapping())


@click.command("import")
@click.argument("fmt", metavar="FORMAT", type=click.Choice(FORMATS))
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--name", help="Campaign name (default: FORMAT:first file name).")
@click.option("--db", type=DB_PATH_OR_URL, default=DEFAULT_DB, show_default=True,
              help="Results database to store the campaign in.")
@click.option("--method", type=click.Choice(_METHODS),
              help="How A and B were measured (pyperf/jmh/gbench default sequential; duetprocess/csv: instead of a "
                   "column).")
@click.option("--command-a", default="0", show_default=True, help="hyperfine, one file: A's command (index or text).")
@click.option("--command-b", default="1", show_default=True, help="hyperfine, one file: B's command (index or text).")
@click.option("--gbench-time", "gbench_metric", type=click.Choice(["real_time", "cpu_time"]), default=None,
              help="gbench: which of Google Benchmark's times to import  [default: real_time]")
@click.option("--col", "cols", multiple=True, metavar="FIELD=COLUMN[,COLUMN...]",
              help=f"csv: the column(s) giving a field ({', '.join(FIELDS)}); several are joined with '/'.")
@click.option("--set", "sets", multiple=True, metavar="FIELD=VALUE", help="csv: one value of a field for every row.")
@click.option("--map", "maps", multiple=True, metavar="FIELD:FROM=TO[,FROM=TO...]",
              help="csv: rename values, e.g. side:1=A,2=B or method:seqn=sequential.")
@click.option("--where", multiple=True, metavar="COLUMN=VALUE[,VALUE...]", help="csv: keep only these rows.")
@click.option("--unit", default="s", show_default=True, help="csv: unit of the value column (ns, us, ms, s, ...).")
@click.option("--time-unit", type=click.Choice(TIME_UNITS), default="ns", show_default=True,
              help="csv: unit of the start/end columns (iso: ISO-8601 date-times).")
def import_(fmt: str, files: tuple[Path, ...], name: str | None, db: Path, method: str | None, command_a: str,
            command_b: str, gbench_metric: Metric | None, cols: tuple[str, ...], sets: tuple[str, ...],
            maps: tuple[str, ...], where: tuple[str, ...], unit: str, time_unit: str) -> None:
    """Import measurements of A and B made by another tool as a campaign; prints its id.

    FORMAT is hyperfine, pyperf, jmh (JSON files), gbench (Google Benchmark JSON or CSV), duetprocess (the
    thesis tool's CSV) or csv (any CSV, described with --col/--set/--map). Analyse the result with
    `duet analyze --campaign ID`."""
    if name is not None and not name.strip():
        # An empty name was taken for none given (the default), a blank one stored: a campaign that lists blank.
        raise DuetError(f"--name {name!r} is empty", hint=f"give the campaign a name, or leave --name out for "
                                                          f"{fmt}:{files[0].name}")
    if fmt != "csv" and (cols or sets or maps or where):
        raise DuetError(f"--col, --set, --map and --where describe a generic CSV, not {fmt}",
                        hint="use 'duet import csv FILE ...' or drop these options")
    if fmt != "gbench" and gbench_metric is not None:
        raise DuetError(f"--gbench-time chooses Google Benchmark's real or CPU time, not a {fmt} one",
                        hint="drop --gbench-time, or use 'duet import gbench FILE ...'")
    mapping = _mapping(cols, sets, maps, unit, time_unit, where, method) if fmt == "csv" else None
    imported = read(fmt, files, method=method, command_a=command_a, command_b=command_b, mapping=mapping,
                    gbench_metric=gbench_metric or "real_time")
    command = shlex.join(["duet", "import", *sys.argv[2:]]) if sys.argv[1:2] == ["import"] else ""
    campaign_id = store_imported(db, imported, name=name or f"{fmt}:{files[0].name}", command=command)
    table = imported.table
    benchmarks = len(set(table.benchmark.tolist()))
    methods = ", ".join(sorted(set(table.method.tolist())))
    click.echo(f"imported {len(table):,} iterations of {benchmarks:,} benchmark(s) ({methods}) as campaign "
               f"{campaign_id} in {db}", err=True)
    for note in imported.notes:
        click.echo(f"note: {note}", err=True)
    click.echo(campaign_id)
