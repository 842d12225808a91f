"""Every ``--export-FORMAT PATH``: one module per format behind one `Exporter` protocol, one registry.

A command exports one of three *kinds* of subject (report/model.py): a ``comparison``
(`ComparisonReport`: ``duet compare``, ``duet show``), a ``scan`` (`ScanReport`: ``duet compare -L/-P``)
or a ``campaign`` (`CampaignReport`: ``duet analyze``, ``duet run``). A format names the kinds it can
write; the CLI generates ``--export-FORMAT`` for every command from `FORMATS` (cli/exports.py), so a
command offers exactly the formats that can write what it produces.

One rule for every file, hyperfine's: an existing file is replaced. The replacement is atomic (a temporary
file in the same directory, renamed over the target), so a run killed while exporting leaves the old file
or the new one, never half of one. The path ``-`` is standard output, as in hyperfine (1.16 on): the
export is printed after the report, each such export after the one before.

Adding a format: a module here defining ``EXPORTER`` and its entry in `TABLE` (docs/contributing.md,
"Adding an export format"). The command line is built from the table alone, and the modules import only
the standard library when loaded: ``duet --help`` lists the options without numpy, rich or SQLAlchemy
(tests/test_startup.py).
"""
from __future__ import annotations

import contextlib
import importlib
import os
import stat
from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypedDict

import msgspec

from duetbench.errors import DuetError

if TYPE_CHECKING:
    from duetbench.report.model import CampaignReport, ComparisonReport, ScanReport

    Subject = ComparisonReport | ScanReport | CampaignReport

#: What a command exports.
KINDS = ("comparison", "scan", "campaign")


class Format(msgspec.Struct, frozen=True):
    """A format as the command line needs it, without importing its module: its option and help."""

    #: ``--export-<name>``, and the module ``duetbench.report.exporters.<name>`` defining ``EXPORTER``.
    name: str
    #: In messages: "cannot write the <label> export to PATH".
    label: str
    #: The option's help text.
    help: str
    #: The kinds of subject it writes (its EXPORTER's renderers: `registry` checks they agree).
    kinds: frozenset[str]


_ALL = frozenset(KINDS)
#: The registry: every format, in the order its option is listed. The options of every command are built
#: from this table alone; a format's module (its renderers, and what they import) is imported only when a
#: file of that format is written (`exporter`). Importing all seven to build the options cost `duet
#: compare` ~15 ms of CPU before its first invocation (issue 17).
TABLE: tuple[Format, ...] = (
    Format("json", "JSON", "Write the results as JSON (every number, option and invocation).", _ALL),
    Format("csv", "CSV", "Write CSV: one row per invocation (compare, show) or per benchmark and method (analyze, "
                         "run; with --studies also every study's table, as NAME.studies.csv).", _ALL),
    Format("markdown", "Markdown", "Write a Markdown table (a pull-request comment, $GITHUB_STEP_SUMMARY).", _ALL),
    Format("asciidoc", "AsciiDoc", "Write an AsciiDoc table (the Markdown export's content).", _ALL),
    Format("orgmode", "Org", "Write an Emacs Org table (the Markdown export's content).", _ALL),
    Format("hyperfine", "hyperfine JSON",
           "Write A's and B's times in hyperfine's --export-json format, for tools that read it.",
           frozenset({"comparison", "scan"})),
    Format("html", "HTML", "Write a self-contained HTML report with plots (works offline).", _ALL),
)
FORMATS = tuple(f.name for f in TABLE)
_BY_NAME = {f.name: f for f in TABLE}


class Described(TypedDict):
    name: str
    label: str
    help: str


def described(name: str) -> Described:
    """A format's name, label and help from `TABLE`, for its module's EXPORTER."""
    entry = _BY_NAME[name]
    return {"name": entry.name, "label": entry.label, "help": entry.help}


class Exporter(Protocol):
    """One export format."""

    #: ``--export-<name>``
    name: str
    #: In messages: "cannot write the <label> export to PATH".
    label: str
    #: The option's help text.
    help: str
    #: The kinds of subject it writes (a subset of KINDS).
    kinds: frozenset[str]

    def write(self, subject: Subject, path: Path) -> None:
        """Write `subject` to `path` (with `write_atomically`), replacing what is there."""
        ...


@cache
def exporter(name: str) -> Exporter:
    """The exporter of one format: its module is imported now."""
    found: Exporter = importlib.import_module(f"{__name__}.{name}").EXPORTER
    entry = _BY_NAME[name]
    assert (found.name, found.label, found.help, found.kinds) == (entry.name, entry.label, entry.help, entry.kinds), \
        f"{name}.EXPORTER differs from its entry in TABLE"
    return found


def registry() -> dict[str, Exporter]:
    """Format name → exporter, in the order of FORMATS (importing every format's module)."""
    return {name: exporter(name) for name in FORMATS}


def formats_for(*kinds: str) -> list[Format]:
    """The formats that can write any of `kinds`, in registry order, without importing them."""
    return [f for f in TABLE if f.kinds & set(kinds)]


def exporters_for(*kinds: str) -> list[Exporter]:
    """The exporters of `formats_for(*kinds)`."""
    return [exporter(f.name) for f in formats_for(*kinds)]


def kind_of(subject: Subject) -> str:
    from duetbench.report.model import CampaignReport, ComparisonReport, ScanReport

    for kind, cls in (("comparison", ComparisonReport), ("scan", ScanReport), ("campaign", CampaignReport)):
        if isinstance(subject, cls):
            return kind
    raise TypeError(f"nothing exports a {type(subject).__name__}")


#: ``--export-FORMAT -``: standard output.
STDOUT = "-"


def to_stdout(path: Path | str) -> bool:
    """Does this export path mean standard output?"""
    return str(path) == STDOUT


#: The first bytes of every SQLite 3 database file.
_SQLITE_MAGIC = b"SQLite format 3\0"


def is_database(path: Path | str) -> bool:
    """Is `path` an SQLite database? No export is one: replacing one would lose every comparison stored there
    (``--export-json .duet/results.db``, the default --db)."""
    try:
        with open(path, "rb") as handle:
            return handle.read(len(_SQLITE_MAGIC)) == _SQLITE_MAGIC
    except OSError:
        return False


def _umask() -> int:
    mask = os.umask(0)  # the only way to read it is to set it
    os.umask(mask)
    return mask


def write_atomically(path: Path, data: str | bytes, what: str, hint: str = "choose a writable path") -> None:
    """Replace `path` with `data` (text is UTF-8) all at once: a temporary file beside it, flushed to disk,
    renamed over it; missing directories are made first. A symbolic link's target is replaced (the link
    stays); something that is not a regular file (/dev/stdout, a pipe) cannot be replaced and is written
    straight through; ``-`` is standard output (`to_stdout`)."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    if to_stdout(path):
        _print(payload, what)
        return
    try:
        try:
            existing: os.stat_result | None = os.stat(path)
        except FileNotFoundError:
            existing = None
        if existing is not None and not stat.S_ISREG(existing.st_mode):
            with open(path, "wb") as handle:
                handle.write(payload)
            return
        if existing is not None and is_database(path):
            raise DuetError(f"will not replace {path} with the {what}: it is an SQLite database, such as the "
                            "results (--db); what was measured is kept there", hint="give the export a path of its own")
        target = Path(os.path.realpath(path))
        # A new file gets the mode open() would give it; a replaced one keeps its own.
        mode = stat.S_IMODE(existing.st_mode) if existing is not None else 0o666 & ~_umask()
        import tempfile  # here: with shutil and its compression modules ~5 ms of every report's start

        target.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(payload)
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(temporary, mode)
            os.replace(temporary, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
    except OSError as exc:
        raise DuetError(f"cannot write the {what} to {path}: {exc.strerror or exc}", hint=hint) from None


def _print(payload: bytes, what: str) -> None:
    """An export to standard output, after what is printed there already (the report). A reader that has
    gone (`| head`) wants no more of it: said nothing, as click says nothing then."""
    import sys

    from duetbench.report.streams import discard_further_output

    try:
        sys.stdout.flush()
        sys.stdout.buffer.write(payload if payload.endswith(b"\n") or not payload else payload + b"\n")
        sys.stdout.flush()
    except BrokenPipeError:
        discard_further_output(sys.stdout)
    except OSError as exc:
        discard_further_output(sys.stdout)
        raise DuetError(f"cannot write the {what} to standard output: {exc.strerror or exc}",
                        hint="send it where there is room, or give the export a file") from None


class TextExporter(msgspec.Struct, frozen=True):
    """An `Exporter` that renders each kind it writes to one text (or bytes) and writes it atomically.
    A format without a renderer for a kind does not offer its option on the commands exporting that kind."""

    name: str
    label: str
    help: str
    comparison: Callable[[ComparisonReport], str | bytes] | None = None
    scan: Callable[[ScanReport], str | bytes] | None = None
    campaign: Callable[[CampaignReport], str | bytes] | None = None

    @property
    def kinds(self) -> frozenset[str]:
        return frozenset(kind for kind in KINDS if getattr(self, kind) is not None)

    def render(self, subject: Subject) -> str | bytes:
        kind = kind_of(subject)
        renderer: Callable[[Any], str | bytes] | None = getattr(self, kind)
        if renderer is None:
            raise DuetError(f"--export-{self.name} cannot write a {kind}",
                            hint=f"it writes: {', '.join(sorted(self.kinds))}")
        return renderer(subject)

    def write(self, subject: Subject, path: Path) -> None:
        write_atomically(path, self.render(subject), f"{self.label} export")


def option_name(name: str) -> str:
    """The keyword argument click passes for --export-<name>."""
    return "export_" + name.replace("-", "_")


class Exports:
    """The files a user asked for with --export-FORMAT (format → path); `write` writes them all."""

    def __init__(self, paths: Mapping[str, Path | None] | None = None) -> None:
        self.paths = {name: Path(p) for name, p in (paths or {}).items() if p is not None}
        unknown = set(self.paths) - set(FORMATS)
        if unknown:
            raise ValueError(f"unknown export format(s): {', '.join(sorted(unknown))}")
        seen: dict[str, str] = {}
        for name, path in self.paths.items():
            key = os.path.realpath(path)
            if key in seen and not to_stdout(path) and not path_is_special(path):
                raise DuetError(f"--export-{seen[key]} and --export-{name} both name {path}",
                                hint="give each export its own file")
            seen[key] = name

    @classmethod
    def from_options(cls, options: dict[str, Any]) -> Exports:
        """Take the --export-FORMAT values out of a command's keyword arguments."""
        return cls({name: options.pop(option_name(name)) for name in FORMATS if option_name(name) in options})

    def __bool__(self) -> bool:
        return bool(self.paths)

    def check(self, kind: str) -> None:
        """Before measuring: every requested format can write `kind`."""
        for name in self.paths:
            kinds = _BY_NAME[name].kinds
            if kind not in kinds:
                raise DuetError(f"--export-{name} cannot write a {kind}", hint=f"it writes: {', '.join(sorted(kinds))}")

    @property
    def printing(self) -> bool:
        """Does any export go to standard output (``-``)?"""
        return any(to_stdout(path) for path in self.paths.values())

    def write(self, subject: Subject, *, files: bool = True, printed: bool = True) -> None:
        """Write the files (`files`) and print the exports to standard output (`printed`). What a command
        writes while it goes on (a series after each comparison, so that a kill keeps them) it prints only
        once, at its end, after its report. One that cannot be written (its directory gone, its target
        become a database) keeps none of the others from being written: `ExportsFailed` once all were
        tried, each failure but the last told on its own line first."""
        failures: list[DuetError] = []
        for name, path in self.paths.items():
            if printed if to_stdout(path) else files:
                try:
                    exporter(name).write(subject, path)
                except DuetError as exc:
                    failures.append(exc)
        if failures:
            from duetbench.report.error_line import tell

            for failure in failures[:-1]:
                tell(failure)
            raise ExportsFailed(failures)


class ExportsFailed(DuetError):
    """The exports that could not be written, after the others were: raised as the last of them (the CLI
    prints it as its error line); `Exports.write` told the ones before it."""

    def __init__(self, failures: list[DuetError]) -> None:
        last = failures[-1]
        super().__init__(last.message, hint=last.hint, exit_code=last.exit_code)
        self.failures = failures


def path_is_special(path: Path) -> bool:
    """/dev/stdout, /dev/null, a pipe: several exports may go there."""
    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False
