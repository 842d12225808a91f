"""``duet workload``: run the built-in artificial workloads (native program ``duet-workload``).

The command replaces the Python process with the native program (``os.execv``), so nothing of Python
stays around while the workload runs. The lead registers it with ``main.add_command(workload)``.
"""
from __future__ import annotations

import math
import os
import sys

import click

from duetbench.errors import DuetError
from duetbench.execute.native import native_binary

KINDS = ("integer", "float", "cache", "memory", "inc")


class _MissingProgram(click.ClickException):
    """A missing native program when this command runs on its own. click fixes the exit code per class:
    DuetError's, as the `duet` group would exit."""

    exit_code = DuetError.exit_code


def _native_path() -> str:
    """Absolute path of ``duet-workload``.

    A missing binary raises DuetError, which the ``duet`` group prints as one line; when this command runs
    on its own (no parent group) it becomes a click error instead, so it is never a traceback either way.
    """
    try:
        return str(native_binary("duet-workload").resolve())
    except DuetError as err:
        if click.get_current_context().parent is not None:
            raise
        raise _MissingProgram(str(err)) from None


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("kind", metavar="KIND", required=False, type=click.Choice(KINDS))
@click.option(
    "--ops", type=click.IntRange(min=0, max=2**53), metavar="N", help="Base number of ops to run (whole number >= 0)."
)
@click.option(
    "--scale",
    type=click.FloatRange(min=0, min_open=True),
    metavar="F",
    help="Run round(N x F) ops instead of N: --scale 1.05 is a known 5% slowdown.",
)
@click.option(
    "--calibrate",
    type=click.FloatRange(min=0, min_open=True, max=1e7),
    metavar="MS",
    help="Print only the N whose work takes about MS milliseconds on this machine.",
)
@click.option(
    "--threads",
    type=click.IntRange(min=1, max=256),
    metavar="T",
    help="Split the ops across T threads (integer, float, inc): the same work, in parallel where the CPUs are "
    "(compare with --cpus-per-command).",
)
@click.option(
    "--report",
    is_flag=True,
    help='Print {"kind","ops","scale","setup_ns","work_ns","cpu_ns"} as one JSON line on stderr; '
    "ops is the work done, round(N x F).",
)
@click.option("--which", is_flag=True, help="Print the absolute path of the native program and exit.")
def workload(
    kind: str | None,
    ops: int | None,
    scale: float | None,
    calibrate: float | None,
    threads: int | None,
    report: bool,
    which: bool,
) -> None:
    """Run an artificial workload with a known amount of work, for checking a comparison against ground truth.

    \b
    KIND is what one "op" exercises:
      integer  1024 dependent xorshift/multiply steps in registers (L1)
      float    1024 dependent x = x*a + b steps on a double (L1)
      cache    a linear walk over 256 KiB of loads in a buffer held in L2 (1/4 of L2)
      memory   128 dependent loads of a random walk over >= 64 MiB, >= 2x LLC (misses the cache)
      inc      4096 increments of a counter (the INC program)

    The buffers are sized from this CPU's caches, never from N, so time is linear in the op count
    on any host. The work is round(N x F) ops, and the true ratio between two runs
    is known: `--ops N` against `--ops N --scale 1.05` is a known 5% slowdown (exactly: the ratio of the
    two op counts, which --report prints). Find N for a target duration first with `--calibrate MS`.

    cache and memory build their buffers before the timed work (memory: about 10-40 ms, cache: under
    1 ms); every process pays that set-up, so it dilutes a ratio of whole-process times. --report shows
    it as setup_ns next to work_ns.

    \b
    Examples:
      N=$(duet workload memory --calibrate 100)
      duet workload memory --ops $N --scale 1.05 --report

    This command execs the native program, but Python has started first. To benchmark the workload
    without measuring Python start-up, run the program itself; `duet workload --which` prints its path:

    \b
      W=$(duet workload --which)
      duet compare "$W integer --ops $N" "$W integer --ops $N --scale 1.05"
      duet compare "$W integer --ops $N" "$W integer --ops $N --threads 4" --cpus-per-command all
    """
    if which:
        if kind is not None or ops is not None or scale is not None or calibrate is not None or threads or report:
            raise click.UsageError("--which takes no KIND and no other options")
        click.echo(_native_path())
        return
    if kind is None:
        raise click.UsageError("missing KIND (one of integer, float, cache, memory, inc)")
    for name, value in (("--scale", scale), ("--calibrate", calibrate)):
        if value is not None and not math.isfinite(value):
            raise click.BadParameter(f"{value} is not a finite number", param_hint=f"'{name}'")
    if calibrate is not None and ops is not None:
        raise click.UsageError("give either --ops or --calibrate, not both")
    if calibrate is not None and scale is not None:
        raise click.UsageError("--scale applies to --ops runs, not to --calibrate")
    if calibrate is None and ops is None:
        raise click.UsageError("missing --ops N (or --calibrate MS)")
    if threads is not None and calibrate is not None:
        raise click.UsageError("--threads applies to --ops runs: calibrate without it (the same N is the same work)")
    if threads is not None and kind in ("cache", "memory"):
        raise click.UsageError(f"--threads applies to integer, float and inc, not to {kind}")

    path = _native_path()
    argv = [path, kind]
    if calibrate is not None:
        argv += ["--calibrate", repr(calibrate)]
    else:
        argv += ["--ops", str(ops)]
        if scale is not None:
            argv += ["--scale", repr(scale)]
        if threads is not None:
            argv += ["--threads", str(threads)]
    if report:
        argv.append("--report")

    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execv(path, argv)
    except OSError as err:
        raise click.ClickException(f"cannot run {path}: {err.strerror}") from None
