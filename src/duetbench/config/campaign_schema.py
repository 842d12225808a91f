"""The keys a campaign file may hold at each level, and what each value must look like.

One pydantic model per level (campaign, benchmark, side), all with unknown keys forbidden. Every value is
checked by a small function of our own that raises :func:`bad` with a message and a hint, so that the
user reads "must be a number > 0 (got "fast")" rather than pydantic's wording. A key's absence and an
explicit ``null`` differ: absent keys are inherited (see ``model_fields_set``), ``null`` is an error except
for ``container``, where it switches an inherited container off.
"""
from __future__ import annotations

import difflib
import json
import math
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationInfo, model_validator
from pydantic_core import PydanticCustomError

from duetbench.model.method import AUTO, METHODS

from . import placeholders

NAME_PATTERN = re.compile(r"[A-Za-z0-9._-]+")
#: A name becomes one path component (run directories, ``<id>-<campaign>``): far below the usual 255 bytes.
MAX_NAME_LENGTH = 100
#: Runs per method and benchmark: far beyond any campaign, and small enough for every counter downstream.
MAX_RUNS = 1_000_000
#: Seeds are stored as SQLite/PostgreSQL 64-bit signed integers.
MAX_SEED = 2**63 - 1
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PERCENT = re.compile(r"\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*%\s*")
ERROR_TYPE = "campaign"


def bad(message: str, hint: str = "") -> PydanticCustomError:
    """A validation error carrying our own message and hint (read back in campaign_problems)."""
    return PydanticCustomError(ERROR_TYPE, "{message}", {"message": message, "hint": hint})


def show(value: Any) -> str:
    """A value as the user would write it, short enough for one line."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
        return text if len(text) <= 42 else text[:38] + '..."'
    if isinstance(value, dict):
        return "a mapping" if value else "{}"
    if isinstance(value, list):
        return "a list" if value else "[]"
    text = repr(value)
    return text if len(text) <= 42 else text[:38] + "..."


def did_you_mean(word: str, choices: list[str] | tuple[str, ...]) -> str:
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f"did you mean '{close[0]}'?" if close else ""


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _check(function: Callable[..., Any]) -> BeforeValidator:
    return BeforeValidator(function)


# --- value checks ---------------------------------------------------------------------------------------

def _name(what: str) -> Callable[[Any], str]:
    def check(value: Any) -> str:
        if not isinstance(value, str):
            raise bad(f"must be a name (got {show(value)})", "quote it if it is a number, e.g. \"42\"")
        if len(value) > MAX_NAME_LENGTH:
            raise bad(f"{what} is {len(value)} characters long, more than {MAX_NAME_LENGTH}",
                      "shorten it (it becomes a file name)")
        if not NAME_PATTERN.fullmatch(value) or set(value) == {"."}:
            raise bad(f"{what} {show(value)} is not a valid name",
                      "use letters, digits, '.', '_' and '-' only (it becomes a file name)")
        return value
    return check


def _seed(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= MAX_SEED:
        raise bad(f"must be an integer from 0 to 2**63-1 (got {show(value)})",
                  "omit it to let duet run draw a seed (it is recorded with the results)")
    return value


def _schedule(value: Any) -> str:
    if value not in ("rmit", "ordered"):
        guess = did_you_mean(value, ("rmit", "ordered")) if isinstance(value, str) else ""
        raise bad(f"must be rmit or ordered (got {show(value)})",
                  guess or "rmit: all runs in random order (default); ordered: benchmark by benchmark")
    return value


def _run_count(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= MAX_RUNS:
        raise bad(f"must be a number of runs, an integer from 0 to {MAX_RUNS} (got {show(value)})", "e.g. duet: 10")
    return value


def _mapping(what: str, example: str) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        if not isinstance(value, dict):
            raise bad(f"must be a mapping of {what} (got {show(value)})", f"e.g. {example}")
        return value
    return check


def _text(what: str, example: str) -> Callable[[Any], str]:
    def check(value: Any) -> str:
        if not isinstance(value, str) or not value.strip():
            raise bad(f"must be {what} (got {show(value)})", f"e.g. {example}")
        return value
    return check


def _template(what: str, example: str) -> Callable[[Any], str]:
    """A non-empty string whose placeholders are all known."""
    text = _text(what, example)

    def check(value: Any) -> str:
        template = text(value)
        found = placeholders.problems(template)
        if found:
            raise bad("; ".join(message for message, _ in found), found[0][1])
        return template
    return check


def _env_value(value: Any) -> str:
    if _is_number(value) or isinstance(value, bool):
        value = str(value)  # normally already replaced by the text as written, see campaign._env_as_written
    if not isinstance(value, str):
        raise bad(f"must be a string or number (got {show(value)})", 'write "" for an empty value')
    found = placeholders.problems(value)
    if found:
        raise bad("; ".join(message for message, _ in found), found[0][1])
    return value


def _env_name(value: Any) -> str:
    if not isinstance(value, str) or not _ENV_NAME.fullmatch(value):
        raise bad(f"{show(value)} is not a valid environment variable name",
                  "letters, digits and '_', not starting with a digit")
    if value.startswith("DUET_"):
        raise bad(f"{value} is reserved: duet run sets the DUET_* variables itself",
                  "see docs/hooks.md; use barrier_timeout for DUET_BARRIER_TIMEOUT_MS")
    return value


def _cwd(value: Any, info: ValidationInfo) -> Path:
    if not isinstance(value, str) or not value.strip():
        raise bad(f"must be a directory path (got {show(value)})", "e.g. cwd: . (the campaign file's directory)")
    base: Path = (info.context or {})["base_dir"]
    path = Path(os.path.abspath(base / os.path.expanduser(value)))
    if (info.context or {}).get("stored"):
        return path  # read back for analysis: the directory may be gone since the runs
    if not path.exists():
        raise bad(f"directory {path} does not exist",
                  f"relative paths are relative to the campaign file's directory ({base})")
    if not path.is_dir():
        raise bad(f"{path} is not a directory", "cwd is the directory the command runs in")
    return path


def _shell(value: Any) -> bool:
    if not isinstance(value, bool):
        raise bad(f"must be true or false (got {show(value)})",
                  "true: run the command with /bin/sh -c; false: split it like a shell and run it directly")
    return value


def _parser(value: Any) -> dict[str, Any]:
    if isinstance(value, str):
        value = {"name": value}
    if not isinstance(value, dict):
        raise bad(f"must be a parser name or a mapping with 'name' (got {show(value)})",
                  "e.g. parser: jmh, or parser: {name: regex, pattern: '...'}")
    name = value.get("name")
    if not isinstance(name, str) or not name.strip():
        raise bad(f"the parser mapping needs 'name', a parser name (got {show(name)})",
                  "e.g. parser: {name: csv, column: 2}")
    return value


def _results(value: Any) -> list[Any]:
    if isinstance(value, str):
        return [value]  # one file needs no list brackets
    if not isinstance(value, list):
        raise bad(f"must be a list of file paths (got {show(value)})", "e.g. results: [out/result.json]")
    return value


def _warmup(value: Any) -> int | float:
    """An int is a count; a float in [0, 1) or a string "N%" is a fraction (returned as a float)."""
    hint = 'a count (e.g. 5), a percentage (e.g. "20%") or a fraction below 1 (e.g. 0.2)'
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 0:
            raise bad(f"must not be negative (got {value})", hint)
        return value
    if isinstance(value, float):
        if not (math.isfinite(value) and 0 <= value < 1):
            raise bad(f"a fraction must be >= 0 and < 1 (got {value})", "for a count write an integer, e.g. 5")
        return value
    if isinstance(value, str):
        match = _PERCENT.fullmatch(value)
        if match is None:
            raise bad(f"must be a count, a percentage or a fraction (got {show(value)})", hint)
        percent = float(match.group(1))
        if percent >= 100:
            raise bad(f"a percentage must be below 100% (got {show(value)})", hint)
        return percent / 100
    raise bad(f"must be a count, a percentage or a fraction (got {show(value)})", hint)


def _seconds(example: str) -> Callable[[Any], float]:
    def check(value: Any) -> float:
        if not _is_number(value) or not math.isfinite(value) or value <= 0:
            raise bad(f"must be a number > 0 (got {show(value)})", f"seconds, e.g. {example}")
        return float(value)
    return check


def _cpus_per_command(value: Any) -> int | str:
    if value == "all" or (isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 4096):
        return value
    raise bad(f"must be a number of CPUs from 1, or all (got {show(value)})",
              "e.g. cpus_per_command: all, for a benchmark that runs several threads at once")


def _container(value: Any) -> Any:
    if isinstance(value, str):
        return {"image": value}
    if value is not None and not isinstance(value, dict):
        raise bad(f"must be an image name or a mapping with 'image' (got {show(value)})",
                  "e.g. container: docker.io/library/python:3.12")
    return value


#: Engine arguments `duet run` sets itself (execute/container.py), which a later one in `options` would
#: silently override: the side's own CPU, the barrier's IPC, the name and cgroup it cleans up by, no pull.
RESERVED_OPTIONS = {
    "--cpuset-cpus": "it pins each side to its own CPU(s), as cpus_per_command says",
    "--ipc": "the sides share the host's IPC namespace for the barrier",
    "--name": "it removes the containers by their names",
    "--cgroup-parent": "the side's cgroup counts the container's CPU time",
    "--pull": "runs never pull: images are pulled before the first run",
}


def _option(value: Any) -> str:
    option = _text("an engine argument", 'options: ["--memory=2g"]')(value)
    name = option.partition("=")[0]
    if name in RESERVED_OPTIONS:
        raise bad(f"{name} is set by duet run ({RESERVED_OPTIONS[name]}); a second one would override it",
                  "remove it")
    return option


def _options(value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise bad(f"must be a list of container engine arguments (got {show(value)})",
                  'e.g. options: ["--memory=2g"]')
    return value


def _side(value: Any) -> Any:
    if isinstance(value, str):
        return {"command": value}
    if not isinstance(value, dict):
        raise bad(f"must be a command or a mapping of settings (got {show(value)})",
                  "omit B altogether for an A/A benchmark (B a copy of A)")
    return value


def _benchmarks(value: Any) -> Any:
    if not isinstance(value, dict) or not value:
        raise bad(f"must be a non-empty mapping of benchmark name to benchmark (got {show(value)})",
                  "e.g. benchmarks: {fib: {command: python3 fib.py}}")
    return value


def _benchmark(value: Any) -> Any:
    if isinstance(value, str):
        return {"command": value}  # a one-line A/A benchmark
    if not isinstance(value, dict):
        raise bad(f"must be a mapping of settings or a command (got {show(value)})",
                  "e.g. fib: {command: python3 fib.py}")
    return value


# --- the levels -----------------------------------------------------------------------------------------

Command = Annotated[str | None, _check(_template("a command line", "command: python3 bench.py --n 20"))]
Cwd = Annotated[Path | None, _check(_cwd)]
EnvName = Annotated[str, _check(_env_name)]
EnvValue = Annotated[str, _check(_env_value)]
Env = Annotated[dict[EnvName, EnvValue] | None, _check(_mapping("variable names to values", "env: {LC_ALL: C}"))]
Shell = Annotated[bool | None, _check(_shell)]
ParserValue = Annotated[dict[str, Any] | None, _check(_parser)]
ResultPath = Annotated[str, _check(_template("a file path", "results: [out/result.json]"))]
Results = Annotated[list[ResultPath] | None, _check(_results)]
WarmupValue = Annotated[int | float | None, _check(_warmup)]
RunCount = Annotated[int | None, _check(_run_count)]


class _Level(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class ContainerModel(_Level):
    image: Annotated[str, _check(_text("an image name", "image: docker.io/library/python:3.12"))]
    options: Annotated[list[Annotated[str, _check(_option)]],
                       _check(_options)] = Field(default_factory=list)


class MethodsModel(_Level):
    sequential: RunCount = None
    duet: RunCount = None
    aduet: RunCount = None
    auto: RunCount = None

    @model_validator(mode="after")
    def _auto_alone(self) -> MethodsModel:
        if self.auto and any(getattr(self, m) for m in METHODS):
            raise bad("auto chooses between duet and sequential by itself: give it alone",
                      "e.g. methods: {auto: 10}, or name the methods yourself: {duet: 10, sequential: 5}")
        return self

    def runs(self) -> dict[str, int]:
        if self.auto:
            return {AUTO: self.auto}
        return {m: getattr(self, m) or 0 for m in METHODS}


ContainerValue = Annotated[ContainerModel | None, _check(_container)]
MethodsValue = Annotated[MethodsModel | None,
                         _check(_mapping("method to number of runs", "methods: {duet: 10, sequential: 5}"))]


class SideModel(_Level):
    """Keys that may differ between A and B: how the process is started."""

    command: Command = None
    cwd: Cwd = None
    env: Env = None
    shell: Shell = None
    container: ContainerValue = None


CRITERIA = ("cv", "rciw", "kld")


def _criterion(value: Any) -> str | None:
    if value is None:
        return None  # a benchmark switches off the criterion it would inherit
    if value not in CRITERIA:
        guess = did_you_mean(value.lower(), CRITERIA) if isinstance(value, str) else ""
        raise bad(f"must be cv, rciw or kld (got {show(value)})",
                  guess or "cv: coefficient of variation, rciw: relative CI width, kld: Kullback-Leibler divergence")
    return value


def _whole(lowest: int, example: str) -> Callable[[Any], int]:
    def check(value: Any) -> int:
        if not isinstance(value, int) or isinstance(value, bool) or not lowest <= value <= MAX_RUNS:
            raise bad(f"must be an integer from {lowest} to {MAX_RUNS} (got {show(value)})", f"e.g. {example}")
        return value
    return check


def _share(below_one: bool, above_zero: bool, example: str) -> Callable[[Any], float | None]:
    """A finite number from 0 (or above 0), below 1 when ``below_one``: a threshold or a relative width."""
    lowest = "> 0" if above_zero else ">= 0"
    wanted = f"a number {lowest} and < 1" if below_one else f"a finite number {lowest}"

    def check(value: Any) -> float | None:
        if value is None and below_one and above_zero:
            return None  # target_width: null switches off an inherited target
        if (not _is_number(value) or not math.isfinite(value) or value < 0 or (above_zero and value == 0)
                or (below_one and value >= 1)):
            raise bad(f"must be {wanted} (got {show(value)})", f"e.g. {example}")
        return float(value)
    return check


CriterionValue = Annotated[str | None, _check(_criterion)]


class StoppingModel(_Level):
    """Adaptive measurement (Laaber et al. 2020; docs/campaign-format.md "stopping"): all optional.

    Each value is checked here; how they fit together (wi_max against wi_min and the window) once
    merged from campaign to benchmark, in campaign_checks.
    """

    warmup: CriterionValue = None  # dynamic warmup inside each run, by this criterion
    runs: CriterionValue = None  # stop launching runs once they are stable, by this criterion
    # stop once the B/A CI is this narrow
    target_width: Annotated[float | None, _check(_share(True, True, "target_width: 0.01 (1% of B/A)"))] = None
    min_runs: Annotated[int | None, _check(_whole(2, "min_runs: 10"))] = None
    mi: Annotated[int | None, _check(_whole(1, "mi: 50 (measured iterations after warmup)"))] = None
    wi_min: Annotated[int | None, _check(_whole(1, "wi_min: 5"))] = None
    wi_max: Annotated[int | None, _check(_whole(1, "wi_max: 50"))] = None
    f_min: Annotated[int | None, _check(_whole(1, "f_min: 2 (runs before run stopping may stop)"))] = None
    cv_threshold: Annotated[float | None, _check(_share(False, False, "cv_threshold: 0.01"))] = None
    rciw_threshold: Annotated[float | None, _check(_share(False, False, "rciw_threshold: 0.03"))] = None
    kld_threshold: Annotated[float | None, _check(_share(True, False, "kld_threshold: 0.99"))] = None
    window_iterations: Annotated[int | None, _check(_whole(2, "window_iterations: 5"))] = None
    window_runs: Annotated[int | None, _check(_whole(2, "window_runs: 2"))] = None


StoppingValue = Annotated[StoppingModel | None, _check(_mapping(
    "adaptive measurement settings", "stopping: {warmup: cv, mi: 30}, see docs/campaign-format.md"))]


class BenchmarkLevel(SideModel):
    """Keys shared by both sides of a run; settable on the campaign (defaults) and on each benchmark."""

    stopping: StoppingValue = None

    parser: ParserValue = None
    results: Results = None
    warmup: WarmupValue = None
    timeout: Annotated[float | None, _check(_seconds("300"))] = None
    barrier_timeout: Annotated[float | None, _check(_seconds("60"))] = None
    methods: MethodsValue = None
    #: CPUs each side's command may use (`duet compare --cpus-per-command`): 1, a count, or "all".
    cpus_per_command: Annotated[int | str | None, _check(_cpus_per_command)] = None


class BenchmarkModel(BenchmarkLevel):
    A: Annotated[SideModel | None, _check(_side)] = None
    B: Annotated[SideModel | None, _check(_side)] = None


class CampaignModel(BenchmarkLevel):
    campaign: Annotated[str, _check(_name("campaign name"))]
    seed: Annotated[int | None, _check(_seed)] = None
    schedule: Annotated[Literal["rmit", "ordered"], _check(_schedule)] = "rmit"
    artifacts: Annotated[
        dict[Annotated[str, _check(_name("artifact name"))],
             Annotated[str, _check(_text("a shell command", "uname: uname -a"))]] | None,
        _check(_mapping("artifact names to shell commands", "artifacts: {uname: uname -a}"))] = None
    benchmarks: Annotated[dict[Annotated[str, _check(_name("benchmark name"))],
                               Annotated[BenchmarkModel, _check(_benchmark)]],
                          _check(_benchmarks)]

    @model_validator(mode="before")
    @classmethod
    def _top_level_is_a_mapping(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            raise bad(f"the file must be a mapping of settings (got {show(value)})",
                      "start with 'campaign: NAME' and 'benchmarks:', see docs/campaign-format.md")
        return value


CAMPAIGN_ONLY_KEYS = tuple(k for k in CampaignModel.model_fields if k not in BenchmarkLevel.model_fields)
BENCHMARK_ONLY_KEYS = tuple(k for k in BenchmarkLevel.model_fields if k not in SideModel.model_fields)
