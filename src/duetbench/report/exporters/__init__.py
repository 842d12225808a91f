"""Every ``--export-FORMAT PATH``: one module per format behind one `Exporter` protocol, one registry.

A command exports one of three *kinds* of subject (report/model.py): a ``comparison``
(`ComparisonReport`: ``duet compare``, ``duet show``), a ``scan`` (`ScanReport`: ``duet compare -L/-P``)
or a ``campaign`` (`CampaignReport`: ``duet analyze``, ``duet run``). A format names the kinds it can
write; the CLI generates ``--export-FORMAT`` for every command from `FORMATS` (cli/exports.py), so a
command offers exactly the formats that can write what it produces.

One rule for every file, hyperfine's: an existing file is replaced. The replacement is atomic (a temporary
file in the same directory, renamed over the target), so a run killed while exporting leaves the old file
or the new one, never half of one.

Adding a format: a module here defining ``EXPORTER`` and its name in `FORMATS` (docs/contributing.md,
"Adding an export format"). This package and its modules import only the standard library when loaded:
``duet --help`` lists the options without numpy, rich or SQLAlchemy (tests/test_startup.py).
"""
from __future__ import annotations

import contextlib
import importlib
import os
import stat
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from duetbench.errors import DuetError

if TYPE_CHECKING:
    from duetbench.report.model import CampaignReport, ComparisonReport, ScanReport

    Subject = ComparisonReport | ScanReport | CampaignReport

#: The registry: every format, in the order its option is listed. Each is the module
#: ``duetbench.report.exporters.<name>``, which defines ``EXPORTER``; its option is ``--export-<name>``.
FORMATS = ("json", "csv", "markdown", "asciidoc", "orgmode", "hyperfine", "html")

#: What a command exports.
KINDS = ("comparison", "scan", "campaign")


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
def registry() -> dict[str, Exporter]:
    """Format name → exporter, in the order of FORMATS."""
    found: dict[str, Exporter] = {}
    for name in FORMATS:
        exporter = importlib.import_module(f"{__name__}.{name}").EXPORTER
        assert exporter.name == name, f"{name}.EXPORTER is named {exporter.name!r}"
        found[name] = exporter
    return found


def exporters_for(*kinds: str) -> list[Exporter]:
    """The formats that can write any of `kinds`, in registry order."""
    return [e for e in registry().values() if e.kinds & set(kinds)]


def kind_of(subject: Subject) -> str:
    from duetbench.report.model import CampaignReport, ComparisonReport, ScanReport

    for kind, cls in (("comparison", ComparisonReport), ("scan", ScanReport), ("campaign", CampaignReport)):
        if isinstance(subject, cls):
            return kind
    raise TypeError(f"nothing exports a {type(subject).__name__}")


def _umask() -> int:
    mask = os.umask(0)  # the only way to read it is to set it
    os.umask(mask)
    return mask


def write_atomically(path: Path, data: str | bytes, what: str, hint: str = "choose a writable path") -> None:
    """Replace `path` with `data` (text is UTF-8) all at once: a temporary file beside it, flushed to disk,
    renamed over it. A symbolic link's target is replaced (the link stays); something that is not a
    regular file (/dev/stdout, a pipe) cannot be replaced and is written straight through."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    try:
        try:
            existing: os.stat_result | None = os.stat(path)
        except FileNotFoundError:
            existing = None
        if existing is not None and not stat.S_ISREG(existing.st_mode):
            with open(path, "wb") as handle:
                handle.write(payload)
            return
        target = Path(os.path.realpath(path))
        # A new file gets the mode open() would give it; a replaced one keeps its own.
        mode = stat.S_IMODE(existing.st_mode) if existing is not None else 0o666 & ~_umask()
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


@dataclass(frozen=True)
class TextExporter:
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
            if key in seen and not path_is_special(path):
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
            exporter = registry()[name]
            if kind not in exporter.kinds:
                raise DuetError(f"--export-{name} cannot write a {kind}",
                                hint=f"it writes: {', '.join(sorted(exporter.kinds))}")

    def write(self, subject: Subject) -> None:
        for name, path in self.paths.items():
            registry()[name].write(subject, path)


def path_is_special(path: Path) -> bool:
    """/dev/stdout, /dev/null, a pipe: several exports may go there."""
    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False
