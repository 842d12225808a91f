"""``duet measure CMD``: EMP (Suh et al.) for one program — PT and ET, daemon cutoffs, ±2σ, sample size."""
from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click
import numpy as np

from duetbench.cli.exports import writable_target
from duetbench.errors import DuetError
from duetbench.report.console import OutputConsole

if TYPE_CHECKING:  # imported when the command runs, not at start-up
    from duetbench.analyze.emp import CutoffRule, DaemonCutoff
    from duetbench.usecases.measure import MeasureSample

#: EMPv6's recommendation for the number of repetitions (Suh et al. (EMP) §4.6.2, Figure 8 step 2).
DEFAULT_RUNS = 10
#: The paper's advice for checking that size: run once for 300 samples and halve (§4.6.2).
FIND_RUNS = 300


def _new_samples_file(ctx: click.Context, param: click.Parameter, value: str | None) -> Path | None:
    """--samples names a new file: an existing one holds an earlier measure's samples (opening it for writing
    emptied it, `--samples .duet/results.db` a results database), so it is refused, as pyperf refuses an
    existing -o file; before that, what `writable_target` refuses (no file name, a directory, no access)."""
    if value is None:
        return None
    if value == "-":
        raise click.BadParameter("the samples go to a file (standard output shows the report): give a path",
                                 ctx=ctx, param=param)
    path = writable_target(ctx, param, value)
    if path is not None and path.is_file() and path.stat().st_size > 0:
        raise click.BadParameter(f"{path} exists: it would be emptied (an earlier measure's samples, or other "
                                 f"data); give a new file, or analyse those samples with --load {path}",
                                 ctx=ctx, param=param)
    return path


@click.command()
@click.argument("command", required=False)
@click.option("-r", "--runs", type=int,
              help=f"Measured samples (default {DEFAULT_RUNS}, EMPv6; {FIND_RUNS} with --find-sample-size).")
@click.option("-w", "--warmup", type=int, default=1, show_default=True,
              help="Samples run first and discarded (EMP throws out the first, cold-cache run).")
@click.option("--find-sample-size", is_flag=True,
              help="EMPv6: compare the first n/2, n/4, ... samples with all of them and suggest the smallest "
                   "sample size that behaves like the whole.")
@click.option("--cpu", type=int, help="CPU to pin the command to (default: the last usable one).")
@click.option("--shell", is_flag=True, help="Run the command through /bin/sh.")
@click.option("--timeout", type=float, metavar="SECONDS", help="Kill a sample that runs longer than this.")
@click.option("--samples", "samples_path", type=click.Path(dir_okay=False), callback=_new_samples_file,
              help="New JSON-lines file the samples are appended to as they are measured "
                   "(default .duetbench/measure-DATE-TIME.jsonl).")
@click.option("--load", "load_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Analyse the samples file of an earlier (maybe interrupted) measure instead of measuring.")
@click.option("--cutoffs", "cutoffs_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Apply the daemon cutoffs of an earlier measure's --export-json instead of determining them "
                   "from this run (EMP determines them once from a long run, then applies them).")
@click.option("--cutoff-rule", type=click.Choice(["extremes", "means"]), default="extremes", show_default=True,
              help="Cutoff = midpoint between the daemon's max PT in the central cluster and its min long PT in "
                   "the L-samples (extremes, the paper's worked example), or between their means (its step 8).")
# Refused before measuring, as duet compare's exports are: a path that could not be written at the end, or
# a database (the results, --db) it would replace.
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False), callback=writable_target,
              help="Write the dual-execution scatter plot as SVG.")
@click.option("--export-json", type=click.Path(dir_okay=False), callback=writable_target,
              help="Write the results as JSON ('-': print it after the report).")
@click.option("--show-output", is_flag=True, help="Show the command's output instead of discarding it.")
def measure(command: str | None, runs: int | None, warmup: int, find_sample_size: bool, cpu: int | None, shell: bool,
            timeout: float | None, samples_path: Path | None, load_path: Path | None, cutoffs_path: Path | None,
            cutoff_rule: CutoffRule, plot_path: Path | None, export_json: Path | None, show_output: bool) -> None:
    """Measure COMMAND's process time (user+sys) and elapsed time with EMP (Suh et al.).

    Each sample runs COMMAND once, pinned to a CPU, and records the CPU time every other process used
    meanwhile. Samples disturbed by infrequent long-running daemons are removed with a cutoff per daemon,
    then samples beyond ±2σ; mean, std and relative error of PT and ET are reported before and after.

    \b
    Examples:
      duet measure './prog --n 1000'
      duet measure './prog' --find-sample-size --plot scatter.svg --export-json emp.json
      duet measure './prog' --cutoffs emp.json          # reuse the cutoffs found above
      duet measure --load .duetbench/measure-20240101-120000.jsonl
    """
    from duetbench.analyze.emp import DaemonCutoff, attributable_windows, emp_v5, prorate_to_run, sample_size
    from duetbench.config.compare import split_command
    from duetbench.report.emp import emp_to_dict, print_emp, scatter_svg
    from duetbench.report.exporters import to_stdout, write_atomically
    from duetbench.report.exporters.json import clean_json
    from duetbench.usecases.measure import (
        default_samples_path,
        load_samples,
        new_header,
        pick_cpu,
    )
    from duetbench.usecases.measure import measure as run_measure

    console = OutputConsole(highlight=False)
    if (command is None) == (load_path is None):
        raise DuetError("give either a COMMAND to measure or --load FILE, not both or neither",
                        hint="e.g. duet measure './prog' or duet measure --load samples.jsonl")
    if runs is not None and runs < 2:
        raise DuetError(f"--runs must be at least 2, got {runs}", hint="EMP suggests 10")
    if warmup < 0:
        raise DuetError(f"--warmup must be 0 or more, got {warmup}", hint="e.g. --warmup 1")
    cutoffs = _read_cutoffs(cutoffs_path, DaemonCutoff) if cutoffs_path else None

    if load_path is not None:
        header, samples = load_samples(load_path)
        where = load_path
    else:
        assert command is not None
        argv = split_command(command, shell=shell, side="to measure")
        n = runs if runs is not None else (FIND_RUNS if find_sample_size else DEFAULT_RUNS)
        header = new_header(command, argv, pick_cpu(cpu), n, warmup)
        where = samples_path or default_samples_path()
        console.print(f"Measuring {command!r}: {warmup} warm-up + {n} samples on CPU {header.cpu}; "
                      f"samples → {where}", markup=False)

        def progress(s: MeasureSample) -> None:
            busiest = next((a for a in s.activity if a.cpu_ns > 0), None)
            noise = f"  busiest other: {busiest.comm} {busiest.cpu_ms:.1f} ms" if busiest else ""
            tag = " (warm-up)" if s.warmup else ""
            console.print(f"  #{s.index}{tag}  PT {s.pt_s * 1e3:.3f} ms  ET {s.et_s * 1e3:.3f} ms{noise}",
                          markup=False)

        try:
            samples = run_measure(header, where, timeout_s=timeout, show_output=show_output, on_sample=progress)
        except KeyboardInterrupt:
            console.print(f"interrupted; the samples measured so far are in {where} (analyse them with --load)",
                          markup=False)
            raise

    measured = [s for s in samples if not s.warmup and s.status == "ok"]
    if len(measured) < 2:
        raise DuetError(f"only {len(measured)} measured sample(s) in {where}", hint="measure at least 2 samples")
    pt = np.array([s.pt_s for s in measured])
    et = np.array([s.et_s for s in measured])
    windows = [s.window_s for s in measured]
    daemons = prorate_to_run([s.daemons() for s in measured], et, windows)
    indices = [s.index for s in measured]
    attributable = attributable_windows(windows, et)
    result = emp_v5(pt, et, daemons, cutoffs=cutoffs, rule=cutoff_rule,
                    attributable=attributable)
    choice = sample_size(pt, et, daemons, result.cutoffs) if find_sample_size else None
    print_emp(console, header.command, result, indices, pt, et, choice, _top_noise(measured))
    # Written whole or not at all (a run killed meanwhile leaves no half file); the samples stay either way.
    again = f"the samples are kept in {where}: write it again with duet measure --load {where}"
    if plot_path is not None:
        write_atomically(plot_path, scatter_svg(et, result, f"Dual-execution scatter plot: {header.command}"),
                         "scatter plot", hint=again)
        if not to_stdout(plot_path):
            console.print(f"plot → {plot_path}", markup=False)
    if export_json is not None:
        data = {"command": header.command, "argv": header.argv, "cpu": header.cpu, "samples_file": str(where),
                "host": header.host,
                "samples": [{"index": s.index, "pt_s": s.pt_s, "et_s": s.et_s,
                             "top_activity": [{"comm": a.comm, "pid": a.pid, "cpu_ms": round(a.cpu_ms, 3)}
                                              for a in s.activity if a.cpu_ns > 0][:10]} for s in measured],
                **emp_to_dict(result, indices, choice)}
        # A statistic with no value (the relative error of a mean of 0) is null: JSON has no NaN.
        write_atomically(export_json, json.dumps(clean_json(data), indent=2, allow_nan=False) + "\n",
                         "JSON export", hint=again)
        if not to_stdout(export_json):
            console.print(f"JSON → {export_json}", markup=False)


def _top_noise(samples: list[MeasureSample]) -> list[tuple[str, float, int]]:
    """The busiest other processes by name over all samples: (comm, total ms, samples it ran in)."""
    total: dict[str, float] = {}
    count: dict[str, int] = {}
    for s in samples:
        for name, times in s.daemons().items():
            total[name] = total.get(name, 0.0) + sum(times) * 1e3
            count[name] = count.get(name, 0) + 1
    return sorted(((n, total[n], count[n]) for n in total), key=lambda r: -r[1])[:5]


def _read_cutoffs(path: Path, cls: type[DaemonCutoff]) -> dict[str, DaemonCutoff]:
    try:
        data = json.loads(path.read_text())
        raw = data["cutoffs"]
        return {name: cls(name, float(c["cutoff_s"]), float(c.get("low_s", 0.0)), float(c.get("high_s", 0.0)))
                for name, c in raw.items()}
    except OSError as exc:
        raise DuetError(f"cannot read --cutoffs {path}: {exc.strerror}",
                        hint="give the --export-json file of an earlier duet measure") from None
    except (ValueError, KeyError, TypeError, AttributeError):
        raise DuetError(f"--cutoffs {path} holds no daemon cutoffs",
                        hint="give the --export-json file of an earlier duet measure") from None
