"""Finding parsers by name: the built-ins, the ``duetbench.parsers`` entry points, and ``module:function``."""
from __future__ import annotations

import importlib
import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, ValidationError

from ..errors import DuetError
from .merge import attach_log
from .model import Iteration, ParseResult, ParserInput

ENTRY_POINT_GROUP = "duetbench.parsers"
_INT64_END = 2**63

# name -> module under duetbench.harness.parsers; imported only when asked for, so that config validation
# of one parser's options does not import them all.
BUILTINS: dict[str, str] = {
    "jmh": "jmh",
    "dacapo": "dacapo",
    "renaissance-json": "renaissance_json",
    "renaissance-csv": "renaissance_csv",
    "pyperf": "pyperf",
    "gbench": "gbench",
    "hyperfine": "hyperfine",
    "csv": "csv_columns",
    "regex": "regex_text",
    "iteration-log": "hook_log",
}


@runtime_checkable
class Parser(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def options_model(self) -> type[BaseModel]: ...

    def parse(self, inp: ParserInput, options: Any) -> ParseResult: ...


class AnyOptions(BaseModel):
    """Options of a plain-function user parser: anything goes, the function checks them itself."""

    model_config = ConfigDict(extra="allow", frozen=True)


@dataclass(frozen=True)
class ModuleParser:
    """A parser module: it defines ``Options`` (pydantic) and ``parse(inp, options)``."""

    name: str
    module: Any

    @property
    def options_model(self) -> type[BaseModel]:
        return self.module.Options

    def parse(self, inp: ParserInput, options: Any) -> ParseResult:
        return self.module.parse(inp, options)


@dataclass(frozen=True)
class FunctionParser:
    """A user's plain function ``f(inp, options: dict) -> ParseResult``."""

    name: str
    function: Callable[[ParserInput, dict[str, Any]], ParseResult]
    options_model: type[BaseModel] = AnyOptions

    def parse(self, inp: ParserInput, options: Any) -> ParseResult:
        return self.function(inp, options.model_dump() if isinstance(options, BaseModel) else dict(options))


@dataclass(frozen=True)
class NamedParser:
    """A user's Parser-like object, under the name the user refers to it by."""

    name: str
    inner: Any

    @property
    def options_model(self) -> type[BaseModel]:
        return self.inner.options_model

    def parse(self, inp: ParserInput, options: Any) -> ParseResult:
        return self.inner.parse(inp, options)


def _entry_points() -> dict[str, Any]:
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def parser_names() -> list[str]:
    """Built-in parser names, then the installed entry points' names (built-ins win on a clash)."""
    return list(BUILTINS) + sorted(n for n in _entry_points() if n not in BUILTINS)


def _wrap(name: str, obj: Any, origin: str) -> Parser:
    if hasattr(obj, "parse") and hasattr(obj, "options_model"):
        if not (isinstance(obj.options_model, type) and issubclass(obj.options_model, BaseModel)):
            raise DuetError(f"parser '{name}' ({origin}): options_model is not a pydantic model class")
        return NamedParser(name, obj)
    if callable(obj):
        _takes_input_and_options(name, obj)
        return FunctionParser(name, obj)
    raise DuetError(f"parser '{name}' ({origin}) is neither a function f(inp, options) nor an object with "
                    ".parse and .options_model")


def _takes_input_and_options(name: str, function: Any) -> None:
    """Refuse, when the campaign is loaded, a function that cannot be called as f(inp, options): otherwise
    every run would fail the same way (``parser: os:system`` is a function, but of one argument)."""
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return  # some built-ins do not tell; calling it will
    try:
        signature.bind(None, {})
    except TypeError:
        raise DuetError(f"parser '{name}' is {getattr(function, '__qualname__', name)}{signature}, not a parser "
                        "function f(inp, options)",
                        hint="name a function that takes (ParserInput, options dict) and returns a ParseResult, "
                             "see docs/parsers.md") from None


def get_parser(name: str) -> Parser:
    """The parser called ``name``; DuetError when there is none or it cannot be loaded."""
    if name in BUILTINS:
        module = importlib.import_module(f"{__package__}.parsers.{BUILTINS[name]}")
        return ModuleParser(name, module)
    eps = _entry_points()
    if name in eps:
        try:
            obj = eps[name].load()
        except Exception as e:  # noqa: BLE001 — a broken plug-in must be one clear line, not a traceback
            raise DuetError(f"parser '{name}': cannot load entry point {eps[name].value}: "
                            f"{type(e).__name__}: {e}") from None
        return _wrap(name, obj, f"entry point {eps[name].value}")
    if ":" in name:
        mod_name, _, attr = name.partition(":")
        try:
            module = importlib.import_module(mod_name)
        except Exception as e:  # noqa: BLE001 — user code may raise anything on import
            raise DuetError(f"parser '{name}': cannot import module '{mod_name}': {type(e).__name__}: {e}",
                            hint="is the module on PYTHONPATH or installed?") from None
        target: Any = module
        for part in attr.split("."):
            if not hasattr(target, part):
                raise DuetError(f"parser '{name}': module '{mod_name}' has no attribute '{attr}'")
            target = getattr(target, part)
        return _wrap(name, target, name)
    raise DuetError(f"unknown parser '{name}'; known: {', '.join(parser_names())}",
                    hint="or give a user parser as 'module.path:function'")


def _problems(model: type[BaseModel], e: ValidationError) -> list[tuple[tuple[str | int, ...], str]]:
    known = ", ".join(model.model_fields)
    out: list[tuple[tuple[str | int, ...], str]] = []
    for err in e.errors():
        loc = tuple(err["loc"])
        if err["type"] == "extra_forbidden":
            msg = f"unknown option '{loc[-1]}' (known: {known})" if loc else "unknown option"
        elif err["type"] == "missing":
            msg = f"required option '{loc[-1]}' is missing" if loc else "required option missing"
        else:
            msg = err["msg"].removeprefix("Value error, ")
        out.append((loc, msg))
    return out


def validate_parser_options(name: str, options: Any) -> list[tuple[tuple[str | int, ...], str]]:
    """[] when ``options`` suit parser ``name``; else (location inside the options mapping, message) per problem."""
    try:
        parser = get_parser(name)
    except DuetError as e:
        return [((), str(e))]
    if options is None:
        options = {}
    if not isinstance(options, dict):
        return [((), f"parser options must be a mapping, not {type(options).__name__}")]
    try:
        parser.options_model.model_validate(options)
    except ValidationError as e:
        return _problems(parser.options_model, e)
    return []


def _check(name: str, result: Any) -> ParseResult:
    """User parsers may return anything: check the shape once here rather than fail later in analysis."""
    if not isinstance(result, ParseResult):
        raise DuetError(f"parser '{name}' returned {type(result).__name__}, expected a ParseResult")
    for it in result.iterations:
        if not isinstance(it, Iteration):
            raise DuetError(f"parser '{name}' returned an iteration of type {type(it).__name__}")
        if not (math.isfinite(it.value_s) and it.value_s >= 0):
            raise DuetError(f"parser '{name}': iteration {it.index} {it.name!r} has value {it.value_s!r} s, "
                            "expected a finite non-negative number")
        if (it.start_ns is None) != (result.clock == "none") or (it.end_ns is None) != (result.clock == "none"):
            raise DuetError(f"parser '{name}': iteration {it.index} {it.name!r} timestamps do not agree with "
                            f"clock '{result.clock}'")
        for stamp in (it.start_ns, it.end_ns):
            if stamp is not None and not -_INT64_END <= stamp < _INT64_END:
                # Stored as 64-bit integers: a larger one would fail the database write after the run.
                raise DuetError(f"parser '{name}': iteration {it.index} {it.name!r} has timestamp {stamp} ns, "
                                "beyond 64 bits (about 292 years of nanoseconds)",
                                hint="check the timestamp unit (ns, us, ms, s) the output is read with")
    return result


def parse(name: str, options: dict[str, Any] | None, inp: ParserInput) -> ParseResult:
    """Validate ``options``, parse ``inp`` with parser ``name`` and attach this side's hook log when useful."""
    parser = get_parser(name)
    try:
        opts = parser.options_model.model_validate(options or {})
    except ValidationError as e:
        loc, msg = _problems(parser.options_model, e)[0]
        where = ".".join(str(p) for p in loc)
        raise DuetError(f"parser '{name}' option{' ' + repr(where) if where else 's'}: {msg}") from None
    if isinstance(parser, ModuleParser):
        try:
            result = _check(name, parser.parse(inp, opts))
        except (TypeError, KeyError, AttributeError, IndexError, ValueError, OverflowError) as e:
            # The built-in parsers check the shape they rely on; a document shaped otherwise where they
            # do not look (a number where a list belongs) is still this file's problem, told in one line.
            source = ", ".join(str(p) for p in inp.files.values()) or f"the run's {name} output"
            raise DuetError(f"{source}: not a {name} result this parser understands "
                            f"({type(e).__name__}: {' '.join(str(e).split())[:200]})",
                            hint=f"check that the file was written by {name} and is complete") from None
    else:
        try:
            returned = parser.parse(inp, opts)
        except DuetError:
            raise
        except Exception as e:  # noqa: BLE001 — a user parser's bug is this run's failure, told in one line
            raise DuetError(f"parser '{name}' raised {type(e).__name__}: {' '.join(str(e).split())[:300]}",
                            hint="fix the parser function; run it on the run's stdout file to see why") from None
        result = _check(name, returned)
    if not result.iterations:
        origin = result.metadata.get("source")
        raise DuetError(f"{str(origin) + ': ' if origin else ''}parser '{name}' found no iterations",
                        hint="the harness never told the duet hook of an iteration: build it with adapters/c/duet.h, "
                             "give JMH -prof io.duetbench.jmh.DuetProfiler, or pyperf the duet hook (docs/hooks.md)"
                        if name == "iteration-log" else "check the harness's output and the parser's options")
    log = [line for line in inp.iteration_log if line.side == inp.side]
    if log and name != "iteration-log":
        result = attach_log(result, log)
    return result
