"""The ``duet`` command line.

Start-up is part of what a comparison costs (and `duet --version`/`--help` should answer at once), so
this module imports only click: every subcommand's module, and what a command needs (numpy, SQLAlchemy,
rich, pydantic), is imported when that command runs.
"""
from __future__ import annotations

import gc
import importlib
import os
import random
import stat
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import click

from duetbench import __version__
from duetbench.cli.exports import export_options
from duetbench.cli.finite import FiniteFloatRange
from duetbench.cli.help_page import MAX_CONTENT_WIDTH
from duetbench.errors import DuetError
from duetbench.execute.backends.registry import BACKENDS
from duetbench.model.method import COMPARE_METHODS

if TYPE_CHECKING:  # analyze.stopping imports numpy: only for the annotations
    from collections.abc import Sequence

    from duetbench.analyze.stopping import Criterion
    from duetbench.report.speed import RelativeTo

#: Where results go by default; the same as ``duetbench.store.db.DEFAULT_DB``, which imports SQLAlchemy.
DEFAULT_DB = Path(".duet/results.db")
#: Seeds are stored as 64-bit signed integers (SQLite, PostgreSQL): refuse larger ones before measuring.
SEED = click.IntRange(0, 2**63 - 1)
#: A count of runs or iterations: beyond this it is a typo that would overflow later.
COUNT = click.IntRange(max=10**6)
#: --sort, as hyperfine's (report/speed.Sort).
SORTS = ("auto", "command", "mean-time")
#: Allocations between two collections of the youngest generation (Python's default: 700); see main().
GC_THRESHOLD = 10_000
#: A stored comparison's or campaign's id (= store.option.RECORD_ID, kept here to start without the store).
RECORD_ID = click.IntRange(1, 2**63 - 1)


def _lock_wait(value: float | None) -> None:
    """--lock-wait: every acquisition of the machine lock in this process honours it (execute/lock.py reads
    DUETBENCH_LOCK_WAIT), so compare, run and their sessions need no parameter for it."""
    if value is not None:
        os.environ["DUETBENCH_LOCK_WAIT"] = "inf" if value == float("inf") else repr(value)


def _err_console() -> Any:
    from rich.console import Console

    return Console(stderr=True, highlight=False, emoji=False)


def _fail(exc: DuetError) -> None:
    from duetbench.report.error_line import tell

    tell(exc)
    sys.exit(exc.exit_code)


def _refuse_undecodable(args: Sequence[str] | None) -> None:
    """Every argument must be text: Python decodes bytes that are not UTF-8 (a Latin-1 file name, a command
    with such a byte) to lone surrogates, which run, but can be neither stored nor printed; refused here,
    before anything is measured, in one line that shows the bytes."""
    for position, arg in enumerate(sys.argv[1:] if args is None else args, 1):
        if not isinstance(arg, str):
            continue
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            try:
                shown = arg.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
            except UnicodeEncodeError:  # a surrogate no byte decodes to (only from Python, not a shell)
                shown = arg.encode("utf-8", "backslashreplace").decode("utf-8")
            raise DuetError(f"argument {position} is not UTF-8 text: '{shown}'",
                            hint="duetbench stores commands, names and paths as text; give them in UTF-8 "
                                 "(rename the file, or use a name)") from None


#: hyperfine 1.20's `--ignore-failure=1,2` (`-i=1,2`): the value must be attached with "=", so that `-i CMD`
#: stays the flag. click has no such option (an optional value takes the next word, the command), so the
#: attached value is moved to a hidden option of its own before click parses.
_IGNORE_FAILURE_FORMS = ("--ignore-failure=", "-i=")
#: `duet compare`'s short options that take one value: hyperfine (clap) reads `-r=10` as `-r 10`, click as the
#: value "=10" ("'=10' is not a valid integer"). A flag (-N=x) or a -P/-L of several values is left to click.
_SHORT_WITH_VALUE = frozenset("wrmMpCscSnuD")


def _attached_values(args: list[str]) -> list[str]:
    """`args` with `--ignore-failure=V` as `--ignore-failure --ignore-exit-codes V`, and (`duet compare`) a
    short option's `-r=10` as `-r 10`, as hyperfine takes them; up to a `--`."""
    out: list[str] = []
    compare = bool(args) and args[0] == "compare"
    for k, arg in enumerate(args):
        if arg == "--":
            return out + args[k:]
        form = next((f for f in _IGNORE_FAILURE_FORMS if arg.startswith(f)), None) if isinstance(arg, str) else None
        if form is not None:
            out += ["--ignore-failure", "--ignore-exit-codes", arg[len(form):]]
        elif compare and isinstance(arg, str) and arg[2:3] == "=" and arg[:1] == "-" and arg[1:2] in _SHORT_WITH_VALUE:
            out += [arg[:2], arg[3:]]
        else:
            out.append(arg)
    return out


class _DatabaseParam(click.ParamType):
    """``--db``: defers to ``store.option.DB_PATH_OR_URL``, imported (with SQLAlchemy) only when a value
    is given; the default needs no conversion."""

    name = "PATH|URL"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if value is DEFAULT_DB:
            return value
        from duetbench.store.option import DB_PATH_OR_URL

        return DB_PATH_OR_URL.convert(value, param, ctx)


DB_PATH_OR_URL = _DatabaseParam()

#: Subcommands defined elsewhere, loaded when used: name -> (module, attribute, first paragraph of its
#: help, hidden). The help is what `duet --help` lists without importing the module
#: (tests/test_startup.py checks it against the real commands).
_LAZY: dict[str, tuple[str, str, str, bool]] = {
    "analyze": ("duetbench.cli.analyze", "analyze",
                "Per benchmark and method: the ratio B/A with its CI, verdict, U-test, CV, CI width.", False),
    "calibrate": ("duetbench.cli.calibrate", "calibrate",
                  "This machine's noise floor: can it resolve a 1 % difference, and with which method?", False),
    "doctor": ("duetbench.cli.doctor", "doctor",
               "What on this machine disturbs timing: each item with its status, evidence and fix.", False),
    "import": ("duetbench.cli.importing", "import_",
               "Import measurements of A and B made by another tool as a campaign; prints its id.", False),
    "measure": ("duetbench.cli.measure", "measure",
                "Measure COMMAND's process time (user+sys) and elapsed time with EMP (Suh et al.).", False),
    "merge": ("duetbench.cli.merge", "merge",
              "Merge the results in SOURCES (SQLite files, e.g. one per cluster task) into --db.", False),
    "report": ("duetbench.cli.analyze", "report",
               "Write one self-contained HTML report (works offline) of a campaign, or of stored comparisons.",
               False),
    "slurm-task": ("duetbench.execute.backends.slurm.task", "slurm_task",
                   "Run one Slurm array task's share of a campaign.", True),
    "workload": ("duetbench.cli.workload", "workload",
                 "Run an artificial workload with a known amount of work, for checking a comparison against "
                 "ground truth.", False),
}


class _Group(click.Group):
    """Turns our errors into one clear line (exit 2 for usage, 1 for failed commands), never a traceback;
    loads the subcommands of other modules only when one is run."""

    _listing = False

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *_LAZY})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in _LAZY:
            module, attribute, short, hidden = _LAZY[cmd_name]
            if self._listing:
                # Listing the commands in --help: their first help paragraph is all it shows.
                return click.Command(cmd_name, help=short, hidden=hidden)
            self.add_command(getattr(importlib.import_module(module), attribute), cmd_name)
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        self._listing = True
        try:
            super().format_commands(ctx, formatter)
        finally:
            self._listing = False

    # click types main() as overloads on standalone_mode (NoReturn when True); this one wrapper serves both.
    def main(self, *args: object, standalone_mode: bool = True, **kwargs: object) -> object:  # type: ignore[override]
        # click prints a usage error with the values as typed: mask a URL's password first (a command or a
        # name may be one), and keep it one line.
        try:
            given = cast("Sequence[str] | None", args[0] if args else kwargs.pop("args", None))
            _refuse_undecodable(given)
            argv = _attached_values(list(sys.argv[1:] if given is None else given))
            rv = super().main(argv, *args[1:], standalone_mode=False, **kwargs)  # type: ignore[call-overload]
        except DuetError as exc:
            if not standalone_mode:
                raise
            _fail(exc)
        except click.ClickException as exc:
            if not standalone_mode:
                raise
            # click declares message Final, but show() prints it (with the usage): replaced before it does.
            from duetbench.report.error_line import one_line

            exc.message = one_line(exc.message)  # type: ignore[misc]
            exc.show()
            sys.exit(exc.exit_code)
        except click.exceptions.Abort:
            if not standalone_mode:
                raise
            _err_console().print("Aborted!")
            sys.exit(1)
        except (EOFError, KeyboardInterrupt):
            if not standalone_mode:
                raise
            _err_console().print("interrupted")
            sys.exit(130)
        if standalone_mode:  # as click's own standalone mode: an Exit's code (--help: 0), else 0
            sys.exit(rv if isinstance(rv, int) else 0)
        return rv

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except DuetError as exc:
            _fail(exc)
        except KeyboardInterrupt:
            _err_console().print("interrupted")
            sys.exit(130)
        return None


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"],
                                           "max_content_width": MAX_CONTENT_WIDTH})
@click.version_option(__version__, prog_name="duetbench")
def main() -> None:
    """duetbench: is B faster or slower than A, by how much, and how sure — on noisy machines."""
    # A command imports pydantic, SQLAlchemy, numpy and rich, whose hundreds of thousands of new objects
    # are never garbage: at the default threshold (700) the cyclic collector runs ~180 times meanwhile, ~9%
    # of the imports' CPU (issue 17). A short-lived command loses nothing by collecting less often, and a
    # collection between two pairs delays the next one less often.
    gc.set_threshold(GC_THRESHOLD, 50, 50)
    from duetbench.cli.program import setup_process

    setup_process()
    from duetbench.execute.housekeeping import clear_leftovers

    clear_leftovers()


def entry() -> None:
    """The `duet` program (its script, ``python -m duetbench``): `main`, then an exit without the cyclic
    collector's passes. The interpreter's finalization collects everything the imports made (pydantic,
    numpy, rich: hundreds of thousands of objects) in full, and that took ~45 ms of a compare's CPU
    (issue 17; 7 runs each: 337–373 ms for those imports and a normal exit, 293–348 ms frozen first).
    Frozen, the objects are still released (reference counts), exit handlers run and the standard
    streams are flushed; only cyclic garbage left at the very end is not collected, which the operating
    system reclaims. Not in `main`: tests call it in their own process, which goes on. (The program's
    script is `cli.program.entry`, which may fork a compare's reporter first and then calls this.)"""
    from duetbench.cli.program import setup_process
    from duetbench.startup import SETTLED_WHEN_MEASURING, settle
    from duetbench.usecases import apart

    setup_process()  # here too: click prints a group's --help before `main`'s body would set it up
    if sys.argv[1:2] and sys.argv[1] not in SETTLED_WHEN_MEASURING:
        settle()  # the collector is back on for the command's own work (startup.py)
    try:
        main()
    finally:
        apart.end()
        gc.disable()
        gc.freeze()


_COMPARE_EPILOG = """\b
Exit codes: 0 done; 1 a command (or --setup/--prepare/...) failed; 2 bad input;
3 --fail-if-slower tripped; 130 interrupted (what finished is kept);
141 the reader of the output went away (`| head`; what was measured is kept)."""


@main.command(epilog=_COMPARE_EPILOG)
@click.argument("commands", nargs=-1, required=True, metavar="COMMAND...")
@click.option("--method", type=click.Choice(COMPARE_METHODS), default="auto", show_default=True,
              help="auto: a short pilot of duet pairs and sequential rounds decides which gives the narrowest CI per "
                   "machine-second here (the pilot is kept as warm-up, never in the CI); "
                   "duet: A and B side by side on their own CPUs, each pair released together by a barrier; "
                   "aduet: side by side without a barrier, paired afterwards by overlap; "
                   "sequential: A and B alternate on one CPU in random order (RMIT).")
@click.option("-w", "--warmup", type=int, default=1, show_default=True,
              help="Runs (pairs) before measuring, to warm caches; stored but not analysed.")
@click.option("-r", "--runs", type=int, help="Measure exactly this many runs (pairs) and stop.")
@click.option("-m", "--min-runs", type=int, default=10, show_default=True, help="Measure at least this many runs.")
@click.option("-M", "--max-runs", type=int, default=300, show_default=True, help="Measure at most this many runs.")
@click.option("--lock-wait", type=FiniteFloatRange(min=0), metavar="SECONDS", expose_value=False,
              callback=lambda ctx, param, value: _lock_wait(value),
              help="When another measurement holds the machine lock, wait up to SECONDS for it (inf: no limit) "
                   "instead of failing. Default: $DUETBENCH_LOCK_WAIT, else fail at once (docs/lock.md).")
@click.option("--time-budget", type=float, default=60.0, show_default=True, metavar="SECONDS",
              help="Stop measuring after this long, unless --runs is given.")
@click.option("--target-width", "target_rciw", type=float, default=0.01, show_default=True,
              help="Stop once the CI of the ratio is this narrow relative to it (0.01 = 1%), after --min-runs.")
@click.option("--stop-on-evidence/--no-stop-on-evidence", default=True, show_default=True,
              help="Also stop (after 10 runs) once a difference is evident by an anytime-valid 99% confidence "
                   "sequence, and report that sequence: valid however early it stops (Lai 1976).")
@click.option("--interval", type=click.Choice(["t", "bootstrap"]), default="t", show_default=True,
              help="t: Student-t intervals (Yuen's with the robust filter, Fieller's for sequential), which keep "
                   "their level from 5 runs on; bootstrap: the papers' percentile bootstrap (too narrow below ~30).")
@click.option("--run-criterion", type=click.Choice(["cv", "rciw", "kld"]),
              help="Also stop (after --min-runs) once both sides' runs are stable by this criterion (Laaber et al.).")
@click.option("-p", "--prepare", multiple=True, metavar="CMD",
              help="Shell command run before each invocation; once, or once per command in their order.")
@click.option("-C", "--conclude", multiple=True, metavar="CMD",
              help="Shell command run after each invocation (in a duet: after each pair); once, or once per command.")
@click.option("-s", "--setup", multiple=True, metavar="CMD", help="Shell command run once before measuring.")
@click.option("-c", "--cleanup", multiple=True, metavar="CMD", help="Shell command run once after measuring.")
@click.option("-S", "--shell", metavar="SHELL", is_flag=False, flag_value="default",
              help="Run the commands through SHELL (a name, path or command line such as 'bash --norc'; 'default': "
                   "/bin/sh; 'none': as -N). Default: run them directly, split as a shell would, so no shell "
                   "start-up is measured; a command with shell syntax (|, >, $VAR, globs, &&, ;) runs through "
                   "sh -c, with a note.")
@click.option("-N", "no_shell", is_flag=True,
              help="No shell, ever (= --shell=none): a command with shell syntax is refused rather than run "
                   "through sh.")
@click.option("--timeout", type=float, metavar="SECONDS", help="Kill an invocation that runs longer than this.")
@click.option("--seed", type=SEED, help="Seed for the random schedule and the bootstrap (default: random, recorded).")
@click.option("--confidence", type=float, default=0.99, show_default=True, help="Confidence level of the CI.")
@click.option("--metric", type=click.Choice(["wall", "cpu"]), default="wall", show_default=True,
              help="Metric the verdict is based on (both are always reported). cpu = user+sys of the process tree.")
@click.option("-n", "--command-name", "command_names", multiple=True, metavar="NAME",
              help="Name of a command in the output; repeat it for the next commands, in order "
                   "(default: A, B, C, ...).")
@click.option("--name-a", metavar="NAME", help="Same as the first -n.")
@click.option("--name-b", metavar="NAME", help="Same as the second -n.")
@click.option("--reference", metavar="CMD|N",
              help="Compare every other command against this one: the N-th command given (from 1), or a "
                   "command line of its own (default: the first command). Three or more commands: the summary "
                   "is then relative to it; without --reference it names the fastest command and how many times "
                   "faster it ran than each other (factors with their CI; between two commands other than the "
                   "reference, combined from their comparisons with it).")
@click.option("--reference-name", metavar="NAME",
              help="Name of the reference command in the output (with --reference CMD, -n names the other "
                   "commands, in order).")
@click.option("--sort", type=click.Choice(SORTS), default="auto", show_default=True,
              help="Order of the summary of three or more commands and of the tables of their Markdown, AsciiDoc "
                   "and Org exports: auto: the summary by time, the tables as the commands were given; command: "
                   "both as given; mean-time: both by time, fastest first (also a parameter scan's table).")
@click.option("-i", "--ignore-failure", is_flag=True,
              help="Time invocations that exit non-zero or are killed by a signal (exit code 128+N) instead of "
                   "stopping; --ignore-failure=1,2: only those exit codes (as hyperfine).")
@click.option("--ignore-exit-codes", hidden=True, metavar="CODES")
@click.option("--show-output", is_flag=True,
              help="Show the commands' output (stdout and stderr), each line prefixed with the command's name, "
                   "once each invocation ended (= --output=inherit).")
@click.option("--output", multiple=True, metavar="WHERE",
              help="Where the commands' standard output goes: null (default), pipe (read and discarded by duet: "
                   "programs that notice /dev/null cannot skip writing), inherit (= --show-output) or a FILE "
                   "(each invocation's output; the last one stays). Once for all commands, or once per command.")
@click.option("--input", "input_file", metavar="FILE", help="Feed FILE to the commands' standard input "
                                                              "(default: null, i.e. /dev/null).")
@click.option("--fail-if-slower", type=float, metavar="PCT",
              help="Exit with 3 when a command is slower than the reference by more than PCT percent, with the "
                   "chosen confidence.")
@click.option("-u", "--time-unit", type=click.Choice(["auto", "microsecond", "millisecond", "second"]),
              default="auto", show_default=True, help="Unit of the times shown (exports keep seconds).")
@click.option("--style", type=click.Choice(["auto", "basic", "full", "nocolor", "color", "none"]), default="auto",
              show_default=True,
              help="basic: no colours, no progress line; full: colours and progress even when not on a terminal; "
                   "nocolor / color: only without colours / without progress; none: print nothing (exports and "
                   "the exit code still tell).")
@click.option("--min-overlap", "min_overlap_rate", type=float, default=0.4, show_default=True,
              help="aduet: pair two invocations only if they overlap for more than this share of each.")
@click.option("--no-robust", "robust", is_flag=True, default=True, flag_value=False,
              help="duet: keep every pair; by default isolated outlier pairs (noise that hit one side only) "
                   "are set aside and counted in the report.")
@click.option("--fill", is_flag=True,
              help="duet/aduet: re-run (unmeasured) the side that finishes first until its partner finishes, so "
                   "the longer side never runs alone (Bulej et al. 2020 §4.4). Helps where the two CPUs are "
                   "hyperthreads of one core; on the VMs measured so far it changed nothing (see bench/).")
@click.option("--cpus-per-command", metavar="N|all", default="1", show_default=True,
              help="CPUs each command may use. 1: pinned to one CPU (a duet: A and B on one each). For a "
                   "multi-threaded command, more, or all (every CPU duet may use, as an unpinned run would): its "
                   "threads then run in parallel and its parallel speed is compared. A duet needs twice as many "
                   "CPUs; where the machine has fewer, A and B take turns on them (sequential).")
@click.option("--db", type=DB_PATH_OR_URL, default=DEFAULT_DB, show_default=True,
              help="SQLite database where every invocation is stored as it finishes, or a postgresql:// URL.")
@click.option("--no-progress", is_flag=True, help="Do not show the live progress line.")
@click.option("-P", "--parameter-scan", nargs=3, multiple=True, metavar="NAME MIN MAX",
              help="One comparison per value of NAME from MIN to MAX (integers, or any step with -D); {NAME} in "
                   "the commands is replaced by the value.")
@click.option("-D", "--parameter-step-size", multiple=True, metavar="DELTA",
              help="Step of --parameter-scan (default 1).")
@click.option("-L", "--parameter-list", nargs=2, multiple=True, metavar="NAME VALUES",
              help="One comparison per comma-separated value of NAME (\\, for a comma in a value, as hyperfine); "
                   "several -L (and -P) give every combination, the first parameter varying slowest (unlike "
                   "hyperfine's, whose first varies fastest).")
@export_options("comparison", "scan")
def compare(commands: tuple[str, ...], db: Path, no_progress: bool, **options: Any) -> None:
    """Benchmark COMMAND, or compare each other COMMAND against the first: is it faster or slower, by how
    much, how sure.

    \b
    Examples:
      duet compare 'gzip -k -f data.bin' 'zstd -k -f data.bin'
      duet compare './old --n 100' './new --n 100' --runs 30 --export-markdown pr.md
      duet compare 'python a.py' 'python b.py' --method sequential --metric cpu
      duet compare './old --n {n}' './new --n {n}' -L n 100,1000,10000
      duet compare 'sort -n data.txt'                  # one command: mean ± σ, range, its noise
      duet compare ./base ./opt1 ./opt2 -n base -n o1 -n o2   # opt1 and opt2 each against base,
                                                              # then which ran fastest, by how much
      duet compare ./opt1 ./opt2 --reference ./base --reference-name base --sort command

    The ratio B/A is reported with a confidence interval (Student-t family by default); above 1 means
    B is slower.
    """
    from duetbench.config.compare import OUTPUT_KINDS, check_confidence, check_per_command, pair_options, validated
    from duetbench.config.scan import parameter_grid
    from duetbench.report.exporters import Exports

    exports = Exports.from_options(options)

    # hyperfine's rule: the summary is about the reference only when one was asked for, else the fastest.
    relative_to: RelativeTo = "fastest" if options["reference"] is None else "reference"
    sort = options.pop("sort")
    commands_, names = _commands_and_names(list(commands), options)
    shell, no_shell = options.pop("shell"), options.pop("no_shell")
    if shell is not None and no_shell:
        raise DuetError("-N and --shell contradict each other", hint="-N runs without a shell: give one of them")
    options["shell"] = "none" if no_shell else shell
    style, time_unit = options.pop("style"), options.pop("time_unit")
    output = list(options.pop("output"))
    if output and options["show_output"]:
        raise DuetError("--show-output and --output both say where the output goes",
                        hint="--show-output is --output=inherit: give one of them")
    for where in output:
        # Refused here, as bad input, what the launcher could only report as command A failing to start.
        if not where:
            raise DuetError("--output is empty", hint="null, pipe, inherit, or a file in an existing directory")
        if where not in OUTPUT_KINDS and Path(where).is_dir():
            raise DuetError(f"--output {where!r} is a directory",
                            hint=f"give a file in it, e.g. --output {os.path.join(where, 'out.txt')}")
        if where not in OUTPUT_KINDS and not Path(where).parent.is_dir():
            raise DuetError(f"--output {where!r}: its directory does not exist",
                            hint="null, pipe, inherit, or a file in an existing directory")
    if len(output) > max(2, len(commands_)):
        raise DuetError(f"--output is given {len(output)} times for {len(commands_)} command(s)",
                        hint="once for all commands, or once per command")
    options["output"] = output
    input_file = options.pop("input_file")
    if input_file is not None and input_file != "null":
        # A file, or a device such as /dev/zero that every invocation opens afresh (as hyperfine's --input);
        # not a directory, nor a pipe that the first invocation would drain and the next wait on.
        try:
            mode = os.stat(input_file).st_mode
        except (OSError, ValueError):
            mode = 0
        if not (stat.S_ISREG(mode) or stat.S_ISCHR(mode)) or not os.access(input_file, os.R_OK):
            raise DuetError(f"--input {input_file!r} is not a readable file", hint="give an existing file, or null")
        options["input"] = os.path.abspath(input_file)
    # Multiple, so that a second -P or -D is refused rather than silently replacing the first (click's way).
    scans, steps = options.pop("parameter_scan"), options.pop("parameter_step_size")
    for name, given, hint in (("-P/--parameter-scan", scans, "give it once; -L NAME VALUES adds parameters"),
                              ("-D/--parameter-step-size", steps, "give it once, the step of the one -P")):
        if len(given) > 1:
            raise DuetError(f"{name} is given {len(given)} times", hint=hint)
    grid = parameter_grid(scans[0] if scans else None, steps[0] if steps else None, options.pop("parameter_list"))
    if options.get("seed") is None:
        options["seed"] = random.SystemRandom().randrange(2**31)
    check_confidence(float(options["confidence"]))
    options["ignore_exit_codes"] = _exit_codes(options.pop("ignore_exit_codes"))
    options["cpus_per_command"] = _cpus_per_command(options["cpus_per_command"])
    # --runs is the number of runs: a --min-runs above it or a --max-runs below it would be ignored unsaid
    # (hyperfine refuses either beside --runs)
    runs = options["runs"]
    for key, contradicted in (("min_runs", runs is not None and runs < options["min_runs"]),
                              ("max_runs", runs is not None and runs > options["max_runs"])):
        source = click.get_current_context().get_parameter_source(key)
        if contradicted and source is click.core.ParameterSource.COMMANDLINE:
            flag = f"--{key.replace('_', '-')}"
            raise DuetError(f"--runs {runs} contradicts {flag} {options[key]}",
                            hint=f"--runs N measures exactly N runs: give it alone, or {flag} without it")
    # hyperfine's rule: --max-runs alone, below the default minimum, lowers the minimum to it; and --min-runs
    # alone, above the default maximum, raises the maximum to it (hyperfine has none by default)
    if (click.get_current_context().get_parameter_source("min_runs") is click.core.ParameterSource.DEFAULT
            and options["max_runs"] < options["min_runs"]):
        options["min_runs"] = options["max_runs"]
    if (click.get_current_context().get_parameter_source("max_runs") is click.core.ParameterSource.DEFAULT
            and options["min_runs"] > options["max_runs"]):
        options["max_runs"] = options["min_runs"]
    for key in ("prepare", "conclude", "setup", "cleanup"):
        options[key] = list(options[key])
    check_per_command(options, len(commands_))
    console, show_progress = _styled_console(style, no_progress)
    unit = None if time_unit == "auto" else time_unit
    if len(commands_) == 1:
        if options["method"] in ("duet", "aduet"):
            raise DuetError(f"--method {options['method']} needs two commands to run side by side",
                            hint="one command is measured in sequential runs: drop --method")
        if options["fail_if_slower"] is not None:
            raise DuetError("--fail-if-slower needs a second command to compare with",
                            hint="give the baseline first: duet compare BASELINE COMMAND --fail-if-slower 3")
    base = {"command_a": commands_[0][0], "command_b": None, "name_a": names[0], **options}
    if len(commands_) > 2:
        if grid:
            raise DuetError("a parameter scan (-P/-L) compares two commands (or benchmarks one), not "
                            f"{len(commands_)}", hint="scan two commands at a time")
        from duetbench.usecases.many import run_many

        exports.check("scan")  # exported as a scan whose one parameter is the command's name
        reference = next(k for k, (_, is_reference) in enumerate(commands_) if is_reference)
        sys.exit(run_many(base, [c for c, _ in commands_], names, reference, db_path=db, exports=exports,
                          console=console, show_progress=show_progress, time_unit=unit, sort=sort,
                          relative_to=relative_to))
    if len(commands_) == 2:
        # The reference is A; the other, B (each with its own --prepare, ... when they were given per command).
        ref, other = (0, 1) if commands_[0][1] else (1, 0)
        base.update(command_a=commands_[ref][0], command_b=commands_[other][0], name_a=names[ref],
                    name_b=names[other], **pair_options(options, ref, other))
    if grid:
        from duetbench.usecases.scan import run_scan

        exports.check("scan")
        sys.exit(run_scan(base, grid, db_path=db, exports=exports, console=console, show_progress=show_progress,
                          time_unit=unit, sort=sort))
    from duetbench.usecases.compare import run_compare

    exports.check("comparison")

    opts = validated(**base)
    sys.exit(run_compare(opts, db_path=db, exports=exports, console=console, show_progress=show_progress,
                         time_unit=unit))


def _letter_name(k: int) -> str:
    """The default name of the k-th command: A, B, C, ... (#27 on)."""
    return chr(ord("A") + k) if k < 26 else f"#{k + 1}"


def _exit_codes(value: str | None) -> list[int]:
    """--ignore-failure=VALUE's exit codes: "1,2"; none (every one) for "all-non-zero", as in hyperfine."""
    if value is None or value.strip() == "all-non-zero":
        return []
    try:
        codes = [int(code) for code in value.split(",")]
    except ValueError:
        codes = []
    if not codes or not all(0 < code < 256 for code in codes):
        raise DuetError(f"--ignore-failure={value}: not a list of exit codes",
                        hint="--ignore-failure=1,2 (codes 1 to 255), or -i alone for every non-zero one")
    return sorted(set(codes))


def _cpus_per_command(value: str) -> int | str:
    """--cpus-per-command's value: a count of CPUs from 1, or "all"."""
    if value.strip().lower() == "all":
        return "all"
    try:
        count = int(value)
    except ValueError:
        count = 0
    if count < 1:
        raise DuetError(f"--cpus-per-command {value}: not a number of CPUs",
                        hint="give a count from 1 (the default), or all for every CPU duet may use")
    return count


def _commands_and_names(commands: list[str], options: dict[str, Any]) -> tuple[list[tuple[str, bool]], list[str]]:
    """The commands with which is the reference (--reference: the N-th, one of them, or one more in front),
    and their names (-n in order, --name-a/--name-b as the first two -n, --reference-name the reference's,
    else A, B, C, ...)."""
    given = list(options.pop("command_names"))
    for k, key in enumerate(("name_a", "name_b")):
        value = options.pop(key)
        if value is None:
            continue
        if len(given) > k:
            raise DuetError(f"--{key.replace('_', '-')} and the {'first' if k == 0 else 'second'} -n both name "
                            "a command", hint="give one of them")
        given += [None] * (k - len(given)) + [value]
    reference = options.pop("reference")
    index = 0
    if reference is not None:
        if reference.isascii() and reference.isdigit():  # "¹" is a digit to isdigit, not to int()
            index = int(reference) - 1
            if not 0 <= index < len(commands):
                raise DuetError(f"--reference {reference}: there are {len(commands)} command(s)",
                                hint=f"a number from 1 to {len(commands)}, or a command line")
        elif reference in commands:
            index = commands.index(reference)
        else:  # as hyperfine: a reference command of its own, benchmarked too
            commands.insert(0, reference)
            given.insert(0, None)
    if len(given) > len(commands):
        raise DuetError(f"{len(given)} names (-n/--command-name) for {len(commands)} command(s)",
                        hint="give at most one name per command, in the order of the commands")
    reference_name = options.pop("reference_name")
    if reference_name is not None:
        given += [None] * (index + 1 - len(given))
        if given[index] is not None:
            raise DuetError(f"--reference-name {reference_name!r} and -n/--name-a/--name-b {given[index]!r} both "
                            f"name the reference (command {index + 1})", hint="give one of them")
        given[index] = reference_name
    if any(name is not None and not name.strip() for name in given):
        # A blank name would leave a blank in the summary ("ran 1.20 times faster than ") and the exports' keys.
        raise DuetError("a command name (-n/--command-name, --name-a/--name-b, --reference-name) is empty",
                        hint="give each name some text, or leave it out for A, B, C, ...")
    names = [name if name is not None else _letter_name(k)
             for k, name in enumerate(given + [None] * (len(commands) - len(given)))]
    for command in commands:
        if not command.strip():
            raise DuetError("a command is empty", hint="give the command line to benchmark in quotes")
    return [(c, k == index) for k, c in enumerate(commands)], names


def piped_console() -> Any:
    """The console reports print to. Piped (a CI log, a file) rich would assume 80 columns and cut table
    cells ("seque…"); a log has no width, so tables get 160 columns there, as `duet analyze`'s do."""
    from duetbench.report.console import OutputConsole

    return OutputConsole(**_piped_options())


def _piped_options() -> dict[str, Any]:
    return {"highlight": False, "width": None if sys.stdout.isatty() else 160}


def _styled_console(style: str, no_progress: bool) -> tuple[Any, bool]:
    """--style as hyperfine's: the console that prints the report, and whether the progress line shows.
    Made when first used (report/lazy_console.py): without a progress line, after the measurements."""
    from duetbench.report.lazy_console import LazyConsole

    if style == "none":
        return LazyConsole(quiet=True), False
    if style in ("basic", "nocolor"):
        return LazyConsole(highlight=False, no_color=True), style == "nocolor" and not no_progress
    if style in ("full", "color"):
        return LazyConsole(highlight=False, force_terminal=True), style == "full" and not no_progress
    return LazyConsole(**_piped_options()), not no_progress and _may_be_terminal()


def _may_be_terminal() -> bool:
    """Could rich's console (on standard output, with no force_terminal) be a terminal? False only where rich's
    own check (Console.is_terminal) is certain to say no, so a piped compare neither imports rich.progress
    nor makes its console before the first invocation (~20-50 ms, issue 17); else rich decides."""
    if os.environ.get("TTY_COMPATIBLE") == "1" or os.environ.get("FORCE_COLOR"):
        return True
    try:
        return sys.stdout.isatty()
    except (ValueError, AttributeError):  # closed, or replaced by something without isatty: as rich says
        return False


@main.command()
@click.argument("comparison_id", type=RECORD_ID, required=False)
@click.option("--db", type=DB_PATH_OR_URL, default=DEFAULT_DB, show_default=True,
              help="The results database.")
@click.option("--limit", type=click.IntRange(1, 10**6), default=30, show_default=True,
              help="How many comparisons to list.")
@export_options("comparison")
def show(comparison_id: int | None, db: Path, limit: int, **export_paths: Path | None) -> None:
    """List stored comparisons, or re-print (and re-export) comparison COMPARISON_ID."""

    from duetbench.report.exporters import Exports
    from duetbench.usecases.compare import show as show_comparison

    exports = Exports.from_options(export_paths)
    if exports and comparison_id is None:
        raise DuetError("--export-* needs the id of the comparison to export",
                        hint="e.g. duet show 3 --export-json r.json")
    sys.exit(show_comparison(db, comparison_id, exports=exports, console=piped_console(), limit=limit))


@main.command()
@click.argument("campaign_file", type=click.Path(path_type=Path))
@click.option("--dry-run", is_flag=True, help="Print the plan (every run in order, with CPUs) and exit.")
@click.option("--resume", is_flag=True,
              help="Continue the last interrupted run of this campaign, without repeating finished runs.")
@click.option("--retry-failed", is_flag=True,
              help="With --resume (implied): also run again the runs that failed, even of a finished campaign; "
                   "the failed records are kept, marked retried.")
@click.option("--executor", type=click.Choice(["auto", "local", "podman", "docker"]), default="auto",
              show_default=True,
              help="Where sides run: local processes, or containers (podman/docker) for benchmarks that name an "
                   "image; auto = containers only where an image is named.")
@click.option("--seed", type=SEED, help="Seed of the schedule (overrides the campaign's; default: random, recorded).")
@click.option("--confidence", type=float, default=0.99, show_default=True, help="Confidence level of the CIs.")
@click.option("--show-output", is_flag=True, help="Show the harnesses' output instead of only keeping it.")
@click.option("--no-progress", is_flag=True, help="Print one line per run instead of the live view.")
@click.option("--target-width", type=float, metavar="FRACTION",
              help="Stop a benchmark's method once the CI of B/A is this narrow relative to it (0.01 = 1%), after "
                   "--min-runs runs; the campaign's repetitions become the maximum. Precision, never significance.")
@click.option("--min-runs", type=COUNT, default=10, show_default=True,
              help="With --target-width: runs (per side) before a method may stop. Below 10 the percentile CI is "
                   "too narrow and early stopping raises false alarms (17.7% A/A alarms at 5 runs in our "
                   "simulation, tests/analyze/test_stopping_simulation.py).")
@click.option("--lock-wait", type=FiniteFloatRange(min=0), metavar="SECONDS", expose_value=False,
              callback=lambda ctx, param, value: _lock_wait(value),
              help="When another measurement holds the machine lock, wait up to SECONDS for it (inf: no limit) "
                   "instead of failing. Default: $DUETBENCH_LOCK_WAIT, else fail at once (docs/lock.md).")
@click.option("--time-budget", type=float, metavar="SECONDS",
              help="Stop launching runs after this long; the campaign stays resumable (--resume).")
@click.option("--adaptive-warmup", type=click.Choice(["cv", "rciw", "kld"]),
              help="Dynamic warmup inside every run (Laaber et al.): follow the hooks' iteration logs, end warmup "
                   "once this criterion holds (for both sides of a duet), then stop the run after --mi iterations.")
@click.option("--mi", type=COUNT, default=50, show_default=True, help="With --adaptive-warmup: measured iterations.")
@click.option("--run-criterion", type=click.Choice(["cv", "rciw", "kld"]),
              help="Stop launching a method's runs once both sides' runs are stable by this criterion (Laaber et al., "
                   "fork stopping); the campaign's repetitions are the maximum.")
@click.option("--f-min", type=COUNT, default=2, show_default=True, help="With --run-criterion: minimum runs.")
@click.option("--wi-min", type=COUNT, default=5, show_default=True, help="With --adaptive-warmup: minimum warmup.")
@click.option("--wi-max", type=COUNT, default=50, show_default=True,
              help="With --adaptive-warmup: maximum warmup (a warning is recorded when reached without stability).")
@click.option("--db", type=DB_PATH_OR_URL, default=str(DEFAULT_DB), show_default=True,
              help="SQLite database where every run is stored as it finishes (raw outputs go next to it), or a "
                   "postgresql:// URL (password from the URL, PGPASSWORD or ~/.pgpass).")
@click.option("--backend", type=click.Choice(list(BACKENDS)), default="local", show_default=True,
              help="local: measure on this machine (in containers when --executor or the campaign asks for them); "
                   "container: on this machine, each side in its benchmark's container image; slurm: submit the "
                   "campaign as a Slurm array job, one whole node per task, and follow it (docs/slurm.md).")
@click.option("--partition", help="With --backend slurm: the partition to submit to.")
@click.option("--nodes", type=COUNT, help="With --backend slurm: nodes measuring at once (--split slices: the plan is "
                                        "cut into this many tasks; default 1).")
@click.option("--split", type=click.Choice(["slices", "benchmark"]), default="slices", show_default=True,
              help="With --backend slurm: tasks are contiguous slices of the RMIT order, or one task per benchmark.")
@click.option("--sbatch-arg", "sbatch_args", multiple=True, metavar="ARG",
              help="With --backend slurm: extra sbatch option(s), e.g. --sbatch-arg=--time=2:00:00 "
                   "--sbatch-arg=--constraint=c5.xlarge (repeatable).")
@click.option("--shared-dir", type=click.Path(file_okay=False, path_type=Path),
              help="With --backend slurm: a directory all nodes see, for job files, logs, raw outputs and per-task "
                   "databases (default: the --db file's directory, or .duet for PostgreSQL).")
@export_options("campaign")
def run(campaign_file: Path, dry_run: bool, resume: bool, retry_failed: bool, executor: str, seed: int | None,
        confidence: float, show_output: bool, no_progress: bool, target_width: float | None, min_runs: int,
        time_budget: float | None,
        adaptive_warmup: Criterion | None, mi: int, run_criterion: Criterion | None, f_min: int, wi_min: int,
        wi_max: int, db: Path, backend: str, partition: str | None, nodes: int | None, split: str,
        sbatch_args: tuple[str, ...], shared_dir: Path | None, **export_paths: Path | None) -> None:
    """Run the benchmark campaign described in CAMPAIGN_FILE (YAML; see docs/campaign-format.md).

    \b
    Examples:
      duet run campaign.yml --dry-run     # show the plan
      duet run campaign.yml               # measure; Ctrl-C keeps every finished run
      duet run campaign.yml --resume      # continue where it stopped
      duet run campaign.yml --retry-failed  # run the failed runs again
    """
    from rich.console import Console

    from duetbench.report.exporters import Exports
    from duetbench.usecases.campaign import RunOptions, run_campaign

    exports = Exports.from_options(export_paths)
    from duetbench.config.compare import check_confidence

    check_confidence(confidence)
    if target_width is not None and not 0 < target_width < 1:
        raise DuetError(f"--target-width must be a fraction between 0 and 1, got {target_width}",
                        hint="e.g. --target-width 0.01 for a CI 1% wide")
    if min_runs < 2:
        raise DuetError(f"--min-runs must be at least 2, got {min_runs}", hint="a CI needs runs to resample")
    if target_width is not None and min_runs < 10:
        Console(stderr=True, highlight=False, emoji=False).print(
            f"[yellow]warning:[/yellow] --min-runs {min_runs} with --target-width: stopping that early inflates "
            "false alarms (a percentile CI over fewer than 10 runs is too narrow); 10 or more is safe")
    if time_budget is not None and not time_budget > 0:  # so written, nan is refused too (it never runs out)
        raise DuetError(f"--time-budget must be positive, got {time_budget}", hint="seconds, e.g. --time-budget 600")
    warmup_given = ("--adaptive-warmup", adaptive_warmup)
    for key, (needs, criterion) in {"mi": warmup_given, "wi_min": warmup_given, "wi_max": warmup_given,
                                    "f_min": ("--run-criterion", run_criterion)}.items():
        # Without its criterion the option would be ignored: the campaign file's `stopping` keeps its own value.
        if criterion is None and click.get_current_context().get_parameter_source(key) is \
                click.core.ParameterSource.COMMANDLINE:
            raise DuetError(f"--{key.replace('_', '-')} applies only with {needs}",
                            hint=f"add {needs} cv|rciw|kld, or set it in the campaign file: stopping: {{{key}: ...}}")
    warmup_params = None
    if adaptive_warmup is not None:
        from duetbench.analyze.stopping import StoppingParams

        warmup_params = StoppingParams(criterion=adaptive_warmup, mi=mi, wi_min=wi_min, wi_max=wi_max)
    run_params = None
    if run_criterion is not None:
        from duetbench.analyze.stopping import StoppingParams

        run_params = StoppingParams(criterion=run_criterion, f_min=f_min, f_max=max(f_min, 2))
    opts = RunOptions(db=db, dry_run=dry_run, resume=resume or retry_failed, retry_failed=retry_failed,
                      executor=executor, seed=seed, confidence=confidence,
                      show_output=show_output, progress=not no_progress, target_width=target_width,
                      min_runs=min_runs, time_budget=time_budget, warmup_params=warmup_params,
                      run_params=run_params, exports=exports)
    slurm_only = [name for name, given in (("--partition", partition), ("--nodes", nodes),
                                           ("--sbatch-arg", sbatch_args), ("--shared-dir", shared_dir)) if given]
    if slurm_only and backend != "slurm":
        raise DuetError(f"{slurm_only[0]} applies only to --backend slurm", hint="add --backend slurm, or drop it")
    settings = {"partition": partition, "nodes": nodes, "split": split, "sbatch_args": list(sbatch_args),
                "shared_dir": shared_dir} if backend == "slurm" else {}
    sys.exit(run_campaign(campaign_file, opts, piped_console(), backend=backend, settings=settings))
