"""``duet doctor``: how fit this machine is for measuring, and (``--fix``) the settings that make it steadier."""
from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from duetbench.cli.finite import FiniteFloatRange
from duetbench.errors import DuetError

if TYPE_CHECKING:  # imported when the command runs
    from duetbench.host.doctor.report import DoctorReport
    from duetbench.host.doctor.tune import Outcome

_STYLE = {"ok": "green", "warn": "yellow", "bad": "bold red", "info": "cyan", "not-observable": "dim"}


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON (stable keys) instead of a table.")
@click.option("--interval", type=FiniteFloatRange(min=0.1, max=60), default=1.0, show_default=True,
              metavar="SECONDS", help="How long to watch other processes' CPU use and steal time.")
@click.option("--fix", is_flag=True,
              help="Print the kernel settings that would make timing steadier (changes nothing).")
@click.option("--apply", is_flag=True,
              help="With --fix: apply those settings (root only). The previous values are saved, so --reset "
                   "restores them.")
@click.option("--reset", is_flag=True, help="Restore the settings saved by --fix --apply, exactly.")
@click.option("--root", type=click.Path(exists=True, file_okay=False, path_type=Path), default=Path("/"),
              show_default=True, help="Inspect a copy of another machine's /proc and /sys (see --snapshot).")
@click.option("--snapshot", type=click.Path(file_okay=False, path_type=Path), metavar="DIR",
              help="Copy every file the checks read on this machine into DIR (to inspect later with --root).")
def doctor(as_json: bool, interval: float, fix: bool, apply: bool, reset: bool, root: Path,
           snapshot: Path | None) -> None:
    """What on this machine disturbs timing: each item with its status, evidence and fix.

    \b
    Statuses: ok · warn (disturbs timing; fix it or know it) · bad (will spoil results)
              info (a fact that shapes measuring) · not-observable (this machine hides it)
    \b
    Examples:
      duet doctor                    # the table
      duet doctor --json             # for scripts
      duet doctor --fix              # what would be changed, and why
      sudo duet doctor --fix --apply # change it (saved first)
      sudo duet doctor --reset       # and back
    Exit code 0 whatever the machine's state; non-zero only when the tool itself fails.
    """
    from duetbench.host.doctor import report as doctor_report
    from duetbench.host.doctor import tune
    from duetbench.host.doctor.sysroot import SysRoot

    console = Console(highlight=False, soft_wrap=False, emoji=False)
    sysroot = SysRoot(root)
    if sum((fix or apply, reset, snapshot is not None)) > 1:
        raise DuetError("give one of --fix/--apply, --reset or --snapshot", hint="see duet doctor --help")
    if snapshot is not None:
        if not sysroot.is_live:
            raise DuetError("--snapshot copies this machine's files, not those under --root",
                            hint="give --snapshot DIR without --root")
        doctor_report.snapshot(snapshot, interval_s=interval)
        # soft_wrap: a command to copy is never broken across lines
        console.print(f"copied the files the checks read into {escape(str(snapshot))}; "
                      f"inspect it with: duet doctor --root {escape(shlex.quote(str(snapshot)))}", soft_wrap=True)
        return
    state = tune.state_path()
    if (apply or reset) and sysroot.is_live and os.geteuid() != 0:
        raise DuetError(f"--{'apply' if apply else 'reset'} changes kernel settings and needs root",
                        hint="run it with sudo; duet doctor --fix shows what it would change")
    if reset:
        restored = tune.reset(sysroot, state)
        failed = [o for o in restored if not o.ok]
        if as_json:
            click.echo(json.dumps({"root": str(root), "state_file": str(state),
                                   "reset": [o.to_dict() for o in restored]}, indent=2))
        elif not restored:
            console.print(f"nothing to reset: no settings saved in {escape(str(state))}")
        else:
            _print_outcomes(console, "restored", restored)
        sys.exit(1 if failed else 0)

    result = doctor_report.run_checks(root, interval_s=interval)
    data = result.to_dict()
    outcomes = tune.apply(result.settings, sysroot, state) if apply else None
    if fix or apply:
        data["fix"] = {"settings": [s.to_dict() for s in result.settings], "state_file": str(state),
                       "applied": [o.to_dict() for o in outcomes] if outcomes is not None else None}
    if as_json:
        click.echo(json.dumps(data, indent=2))
    else:
        _print_table(console, result)
        if fix or apply:
            _print_fix(console, result, outcomes, state)
    sys.exit(1 if outcomes and any(not o.ok for o in outcomes) else 0)


def _print_table(console: Console, result: DoctorReport) -> None:
    table = Table(title=f"duet doctor · {escape(result.root)} · sampled {result.interval_s:g} s",
                  show_lines=True, expand=False)
    # Long words (paths, process names) fold instead of ending in "…": the evidence is the point of the
    # table, and it must survive 80 columns (a CI log, a pipe).
    table.add_column("item", ratio=1, overflow="fold")
    table.add_column("status", no_wrap=True)
    table.add_column("evidence", ratio=3, overflow="fold")
    table.add_column("fix", ratio=2, overflow="fold")
    for c in result.checks:
        style = _STYLE[c.status]
        table.add_row(escape(c.title), f"[{style}]{c.status}[/{style}]", escape("\n".join(c.evidence)),
                      escape(c.fix or ""))
    console.print(table)
    counts = result.to_dict()["summary"]
    assert isinstance(counts, dict)
    console.print("  ".join(f"[{_STYLE[k]}]{v} {k}[/{_STYLE[k]}]" for k, v in counts.items() if v))


def _print_fix(console: Console, result: DoctorReport, outcomes: list[Outcome] | None, state: Path) -> None:
    hidden = [c for c in result.checks if c.status == "not-observable"]
    if not result.settings:
        console.print("[bold]--fix:[/bold] nothing this machine lets us change makes timing steadier; "
                      "nothing will be applied.")
    elif outcomes is None:
        console.print("[bold]--fix:[/bold] these settings would make timing steadier "
                      "(apply with: sudo duet doctor --fix --apply; undo with --reset):")
        for s in result.settings:
            console.print(f"  {escape(s.path)}: {escape(s.current)} → {escape(s.wanted)}  [dim]{escape(s.why)}[/dim]")
    else:
        _print_outcomes(console, "applied", outcomes)
        again = "" if result.root == "/" else f" --root {shlex.quote(result.root)}"
        console.print(f"previous values saved in {escape(str(state))}; undo with: duet doctor --reset{escape(again)}",
                      soft_wrap=True)
    for c in hidden:
        console.print(f"  [dim]{escape(c.title)}: {escape(c.evidence[0])}[/dim]")


def _print_outcomes(console: Console, verb: str, outcomes: list[Outcome]) -> None:
    for o in outcomes:
        mark = "[green]✓[/green]" if o.ok else "[red]✗[/red]"
        console.print(f"  {mark} {escape(o.path)} = {escape(o.value)}  [dim]{escape(o.message)}[/dim]")
    failed = sum(1 for o in outcomes if not o.ok)
    console.print(f"{len(outcomes) - failed} {verb}" + (f", {failed} failed" if failed else ""))
