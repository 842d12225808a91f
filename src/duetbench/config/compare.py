"""What a ``duet compare`` was asked to do: validated options with defaults, and command splitting."""
from __future__ import annotations

import os
import shlex
import shutil
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from duetbench.errors import DuetError
from duetbench.model.method import CompareMethod

#: Runs (pairs) one comparison may be asked for.
MAX_RUNS = 1_000_000

Method = CompareMethod
Metric = Literal["wall", "cpu"]


class CompareOptions(BaseModel):
    """Options of one comparison. Stored with every result so it can be explained and re-run later."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    command_a: str
    command_b: str
    name_a: str = "A"
    name_b: str = "B"
    method: Method = "auto"
    metric: Metric = "wall"
    # Upper bounds: a count beyond them is a typo (or 1e23) that would otherwise just keep measuring.
    warmup: int = Field(1, ge=0, le=MAX_RUNS)
    runs: int | None = Field(None, ge=2, le=MAX_RUNS)
    min_runs: int = Field(10, ge=2, le=MAX_RUNS)
    max_runs: int = Field(300, ge=2, le=MAX_RUNS)
    time_budget: float = Field(60.0, gt=0)
    target_rciw: float = Field(0.01, gt=0)
    #: Also stop once both sides' runs are stable by this criterion (Laaber et al. run stopping); None: off.
    run_criterion: Literal["cv", "rciw", "kld"] | None = None
    prepare: list[str] = Field(default_factory=list, max_length=2)
    setup: list[str] = Field(default_factory=list, max_length=2)
    cleanup: list[str] = Field(default_factory=list, max_length=2)
    conclude: list[str] = Field(default_factory=list, max_length=2)
    shell: bool = False
    timeout: float | None = Field(None, gt=0)
    seed: int = Field(ge=0, le=2**63 - 1)
    confidence: float = Field(0.99, gt=0, lt=1)
    n_resamples: int = Field(10_000, ge=100)
    min_overlap_rate: float = Field(0.4, gt=0, lt=1)
    ignore_failure: bool = False
    show_output: bool = False
    fail_if_slower: float | None = Field(None, ge=0)
    robust: bool = True
    #: "t": small-sample t intervals (analyze.interval); "bootstrap": the papers' percentile bootstrap.
    #: A comparison that stopped on evidence is reported with "anytime" (set when it stops).
    interval: Literal["t", "bootstrap"] = "t"
    #: Also stop once a difference is evident by an anytime-valid confidence sequence (analyze.monitor).
    stop_on_evidence: bool = True
    fill: bool = False
    #: The values of a parameter scan's placeholders in this comparison (already substituted above).
    parameters: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _consistent(self) -> "CompareOptions":
        if self.min_runs > self.max_runs:
            raise ValueError(f"--min-runs ({self.min_runs}) is larger than --max-runs ({self.max_runs})")
        if self.name_a == self.name_b:
            raise ValueError(f"--name-a and --name-b are both {self.name_a!r}; give them different names")
        return self

    def per_side(self, values: list[str]) -> dict[str, str | None]:
        """One value applies to both sides, two values are A's and B's (hyperfine's convention)."""
        if not values:
            return {"A": None, "B": None}
        return {"A": values[0], "B": values[-1]}


def validated(**kwargs: object) -> CompareOptions:
    try:
        return CompareOptions(**kwargs)  # type: ignore[arg-type]
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]).replace("_", "-")
        message = err["msg"].removeprefix("Value error, ")
        prefix = f"--{where}: " if where else ""
        raise DuetError(f"invalid option {prefix}{message}", hint="see duet compare --help") from None


def split_command(command: str, *, shell: bool, side: str) -> list[str]:
    """argv for a command: through /bin/sh with --shell, else split as a shell would (no shell started,
    so its start-up is not measured). Fails early, with a clear message, when the program does not exist."""
    if not command.strip():
        raise DuetError(f"command {side} is empty", hint="give the command line to benchmark in quotes")
    if shell:
        return ["/bin/sh", "-c", command]
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise DuetError(f"cannot split command {side} ({command!r}): {exc}",
                        hint="check the quoting, or pass --shell to run it through /bin/sh") from None
    program = argv[0]
    if os.sep in program and os.path.exists(program):
        if os.path.isdir(program):
            raise DuetError(f"command {side}: {program!r} is a directory, not a program",
                            hint="give the program inside it, e.g. " + shlex.quote(os.path.join(program, "run")))
        if not os.access(program, os.X_OK):
            raise DuetError(f"command {side}: {program!r} exists but is not executable",
                            hint=f"make it executable (chmod +x {shlex.quote(program)}), or run it through its "
                                 f"interpreter (e.g. 'sh {program}')")
    found = shutil.which(program) if os.sep not in program else (program if os.access(program, os.X_OK) else None)
    if found is None:
        raise DuetError(f"command {side} not found: {program!r}",
                        hint="check the spelling and PATH, give a full path, or use --shell for shell built-ins")
    return argv
