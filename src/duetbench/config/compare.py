"""What a ``duet compare`` was asked to do: validated options with defaults, and command splitting."""
from __future__ import annotations

import math
import os
import re
import shlex
import shutil
from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta

from duetbench.errors import DuetError
from duetbench.model.method import CompareMethod

#: Runs (pairs) one comparison may be asked for.
MAX_RUNS = 1_000_000

Method = CompareMethod
Metric = Literal["wall", "cpu"]

# Bounds of the options, as types: a count beyond them is a typo (or 1e23) that would otherwise just keep
# measuring.
Count = Annotated[int, Meta(ge=2, le=MAX_RUNS)]
Positive = Annotated[float, Meta(gt=0)]
#: A command per side at most (hyperfine's convention: one applies to both, two are A's and B's).
PerSide = Annotated[list[str], Meta(max_length=2)]


class CompareOptions(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Options of one comparison. Stored with every result so it can be explained and re-run later.

    A msgspec Struct, not a pydantic model (issue 17): `duet compare` validates these before its first
    invocation, and importing pydantic and building this model took ~195 ms there on a 2-vCPU AMD EPYC VM
    (~50 ms on an Intel one), msgspec ~16 ms beyond what the command imports anyway (min of 6 each)."""

    command_a: str
    #: None: one command is benchmarked on its own (`duet compare CMD`, as `hyperfine CMD`).
    command_b: str | None = None
    name_a: str = "A"
    name_b: str = "B"
    method: Method = "auto"
    metric: Metric = "wall"
    warmup: Annotated[int, Meta(ge=0, le=MAX_RUNS)] = 1
    runs: Count | None = None
    min_runs: Count = 10
    max_runs: Count = 300
    time_budget: Positive = 60.0
    target_rciw: Positive = 0.01
    #: Also stop once both sides' runs are stable by this criterion (Laaber et al. run stopping); None: off.
    run_criterion: Literal["cv", "rciw", "kld"] | None = None
    prepare: PerSide = []
    setup: PerSide = []
    cleanup: PerSide = []
    conclude: PerSide = []
    #: None: run directly, or through /bin/sh when the command uses shell syntax (detect_shell_syntax);
    #: "none" (-N): always directly; else the shell's command line (-S/--shell), e.g. "bash --norc".
    shell: str | None = None
    #: Where the commands' standard output goes, per side as --prepare: "null", "pipe", "inherit" or a file.
    output: PerSide = []
    #: A file the commands read as standard input (default: /dev/null).
    input: str | None = None
    timeout: Positive | None = None
    seed: Annotated[int, Meta(ge=0, le=2**63 - 1)]
    confidence: Annotated[float, Meta(ge=0.5, lt=1)] = 0.99  # check_confidence: the one range
    n_resamples: Annotated[int, Meta(ge=100)] = 10_000
    min_overlap_rate: Annotated[float, Meta(gt=0, lt=1)] = 0.4
    ignore_failure: bool = False
    #: With ignore_failure, only these exit codes are timed, any other ends the comparison (hyperfine's
    #: --ignore-failure=1,2); empty: every non-zero one.
    ignore_exit_codes: list[Annotated[int, Meta(ge=1, le=255)]] = []
    show_output: bool = False
    fail_if_slower: Annotated[float, Meta(ge=0)] | None = None
    robust: bool = True
    #: "t": small-sample t intervals (analyze.interval); "bootstrap": the papers' percentile bootstrap.
    #: A comparison that stopped on evidence is reported with "anytime" (set when it stops).
    interval: Literal["t", "bootstrap"] = "t"
    #: Also stop once a difference is evident by an anytime-valid confidence sequence (analyze.monitor).
    stop_on_evidence: bool = True
    fill: bool = False
    #: CPUs each command may use (--cpus-per-command): 1 pins it to one CPU (a duet: one per side); more, or
    #: "all" (every CPU this process may use), measure a multi-threaded command's parallel speed; where the
    #: machine has not twice as many, A and B run in turn on them (sequential).
    cpus_per_command: Annotated[int, Meta(ge=1, le=4096)] | Literal["all"] = 1
    #: The values of a parameter scan's placeholders in this comparison (already substituted above).
    parameters: dict[str, str] = {}

    def __post_init__(self) -> None:
        for name in ("time_budget", "target_rciw", "timeout", "confidence", "min_overlap_rate", "fail_if_slower"):
            value = getattr(self, name)
            if value is not None and not math.isfinite(value):
                raise ValueError(f"{flag(name)}: must be a finite number, got {value}")
        if self.min_runs > self.max_runs:
            raise ValueError(f"--min-runs ({self.min_runs}) is larger than --max-runs ({self.max_runs})")
        if self.command_b is not None and self.name_a == self.name_b:
            raise ValueError(f"-n/--command-name: two commands are both named {self.name_a!r}; give them different "
                             "names")
        files = [o for o in self.output if o not in OUTPUT_KINDS]
        # One file for both: given once, or the same file twice (o.txt and ./o.txt: interleaved, garbled output)
        shared = len(self.output) == 1 or (len(files) == 2 and os.path.realpath(files[0]) == os.path.realpath(files[1]))
        if self.command_b is not None and files and shared and self.method != "sequential":
            raise ValueError(f"--output: both commands would write to {files[0]!r} at the same time (a duet runs "
                             "them side by side); give each command a file of its own (--output once per command), "
                             "or use --method sequential")

    def per_side(self, values: list[str]) -> dict[str, str | None]:
        """One value applies to both sides, two values are A's and B's (hyperfine's convention)."""
        if not values:
            return {"A": None, "B": None}
        return {"A": values[0], "B": values[-1]}

    def model_dump(self) -> dict[str, Any]:
        """Every option by name, as plain values (what is stored with the comparison); a deep copy."""
        return msgspec.to_builtins(self)


def check_confidence(confidence: float) -> float:
    """The confidence level every command accepts: [0.5, 1). Below 0.5 an interval would claim less than a
    coin flip; 1 has no finite interval."""
    if not 0.5 <= confidence < 1:
        raise DuetError(f"--confidence must be in [0.5, 1), got {confidence}", hint="e.g. --confidence 0.95")
    return confidence


#: The options whose flag is not their field's name with dashes (cli/main.py names them so).
_FLAGS = {"target_rciw": "--target-width", "min_overlap_rate": "--min-overlap", "ignore_exit_codes": "--ignore-failure"}


def flag(field: str) -> str:
    """The command-line flag a user gives for the field `field` of CompareOptions (an error names it)."""
    return _FLAGS.get(field, f"--{field.replace('_', '-')}")


#: Options given once for every command, or once per command in the order of the commands (hyperfine's rule,
#: counting a --reference command of its own, which comes first).
PER_COMMAND = ("prepare", "conclude", "setup", "cleanup", "output")


def check_per_command(options: dict[str, Any], count: int) -> None:
    """Refuses a per-command option given neither once nor `count` times: with three commands and two
    --prepare, the third command would silently get the second's."""
    for key in PER_COMMAND:
        given = len(options[key])
        if given > 1 and given != count:
            raise DuetError(f"{flag(key)} is given {given} times for {count} command(s)",
                            hint=f"once for all commands, or once per command ({count}) in their order "
                                 "(a --reference command of its own first)")


def pair_options(options: dict[str, Any], a: int, b: int) -> dict[str, list[str]]:
    """The per-command options of the comparison of command `a` (as A) with command `b` (as B): one value
    applies to both, else each command's own."""
    return {key: [options[key][a], options[key][b]] if len(options[key]) > 1 else list(options[key])
            for key in PER_COMMAND}


#: msgspec's "... - at `$.min_runs`": the message and the option it is about.
_AT = re.compile(r"^(?P<message>.*?)(?: - at `\$\.(?P<where>[A-Za-z_]+)[^`]*`)?$", re.DOTALL)


def _plain(message: str) -> str:
    """msgspec's wording of a bound, said as the option's own: "Expected `int` >= 2" -> "must be >= 2"."""
    if (m := re.fullmatch(r"Expected `array` of length <= (\d+)", message)) is not None:
        return f"give it at most {m[1]} times (once for both commands, or once for A and once for B)"
    if (m := re.fullmatch(r"Expected `\w+` (.+)", message)) is not None:
        return f"must be {m[1]}"
    if message.startswith("Invalid enum value"):
        return "not one of its values" + message.removeprefix("Invalid enum value")
    return message


def validated(**kwargs: object) -> CompareOptions:
    try:
        return msgspec.convert(kwargs, CompareOptions)
    except msgspec.ValidationError as exc:
        match = _AT.match(str(exc))
        assert match is not None  # the pattern matches any text
        message, where = _plain(match["message"]), match["where"]
        prefix = f"{flag(where)}: " if where else ""
        raise DuetError(f"invalid option {prefix}{message}", hint="see duet compare --help") from None


#: --output's keywords (anything else is a file), as hyperfine's.
OUTPUT_KINDS = ("null", "pipe", "inherit")

#: Shells -S/--shell accepts by name besides those /etc/shells lists. A check, because `--shell` used to
#: be a flag: `--shell 'cmd a' 'cmd b'` now reads 'cmd a' as the shell, and must not run 'cmd b' with it.
KNOWN_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox", "fish", "tcsh", "csh",
                          "yash", "pwsh", "nu", "elvish", "xonsh", "oksh", "loksh", "posh", "rbash"})

#: Words a shell runs itself (keywords and built-ins without a program of the same name): as a command's
#: first word they need a shell.
_SHELL_WORDS = frozenset({"if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case",
                          "esac", "function", "select", "cd", "export", "source", ".", "exit", "set", "unset",
                          "alias", "eval", "exec", "read", "ulimit", "umask", "trap", "wait", "{", "(", "!",
                          # sh's other built-ins that most systems have no program for (`:` or `command -v git`
                          # were "not found", though hyperfine runs them in its shell)
                          ":", "command", "type", "hash", "times", "getopts", "shift", "return", "break",
                          "continue", "readonly", "unalias", "jobs", "fg", "bg", "local"})
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


def detect_shell_syntax(command: str) -> str | None:
    """What in `command` only a shell understands (a pipe, a redirection, $VAR, a glob, &&, ;, a keyword
    such as `exit`), described in a few words; None when splitting it as a shell would and running it
    directly gives the same command. Quotes alone are not shell syntax: shlex removes them exactly as sh
    does; `$` and backquotes inside double quotes are, since sh expands them there. So are what shlex
    reads otherwise than sh: a newline (sh: the next command; shlex: a space), a backslash before a
    newline (sh joins the lines; shlex keeps the newline) and, in double quotes, before `$` or a backquote
    (sh drops the backslash; shlex keeps it, and `awk "{print \\$2}"` would give awk the backslash)."""
    quote = ""  # "'" or '"' while inside quotes
    word_start = True
    escaped = False
    for k, ch in enumerate(command):
        if escaped:
            escaped, word_start = False, False
            if ch == "\n":
                return "a line continuation (\\ and a newline)"
            if quote == '"' and ch in "$`":
                return f"an escaped {ch} in double quotes"
            continue
        if quote == "'":
            quote = "" if ch == "'" else quote
            continue
        if ch == "\\":  # shlex and sh both take the next character as it is (but for the cases above)
            escaped = True
            continue
        if quote == '"':
            if ch == '"':
                quote = ""
            elif ch in "$`":
                what = "a variable or substitution ($)" if ch == "$" else "a command substitution (`)"
                return f"{what} in double quotes"
            continue
        if ch in "'\"":
            quote, word_start = ch, False
            continue
        if ch == "|":
            return "&& or ||" if command[k:k + 2] == "||" else "a pipe (|)"
        if ch == "&":
            return "&&" if command[k:k + 2] == "&&" else "a background job (&)"
        if ch == ";":
            return "a command list (;)"
        if ch == "\n":
            return "a command list (a newline)"
        if ch in "<>":
            return f"a redirection ({ch})"
        if ch == "$":
            return "a variable or substitution ($)"
        if ch == "`":
            return "a command substitution (`)"
        if ch in "()":
            return "a subshell or grouping (parentheses)"
        if ch in "*?[":
            return f"a glob ({ch})"
        if ch == "~" and word_start:
            return "a home directory (~)"
        if ch == "#" and word_start:
            return "a comment (#)"
        word_start = ch.isspace()
    words = command.split()
    if words and (words[0] in _SHELL_WORDS or _ASSIGNMENT.match(words[0])):
        return f"the shell word {words[0]!r}" if words[0] in _SHELL_WORDS else "a variable assignment"
    return None


def shell_argv(shell: str) -> list[str]:
    """-S/--shell's value as argv: "default" is /bin/sh (as hyperfine's default on Unix), else a shell by
    name or path with its options (e.g. "bash --norc"); refused when it names no shell we can find."""
    if shell == "default":
        return ["/bin/sh"]
    try:
        argv = shlex.split(shell)
    except ValueError:
        argv = []
    program = argv[0] if argv else ""
    found = shutil.which(program) if program else None
    if found is None or not _is_shell(program, found):
        raise DuetError(f"--shell {shell!r} is not a shell found on this machine",
                        hint="--shell takes the shell to run the commands with, e.g. -S bash or --shell=sh, before "
                             "or after the commands (-N: no shell)")
    return argv


def hook_shell(shell: str | None) -> list[str] | None:
    """The shell --setup/--prepare/--conclude/--cleanup run in: -S/--shell's, as hyperfine runs them in its
    shell; /bin/sh (None) without -S or with -N, since those commands are shell command lines by nature."""
    if shell is None or shell == "none":
        return None
    return shell_argv(shell)


def _is_shell(program: str, found: str) -> bool:
    try:
        with open("/etc/shells") as f:
            listed = {os.path.basename(line.strip()) for line in f if line.strip().startswith("/")}
    except OSError:
        listed = set()
    return any(os.path.basename(p) in KNOWN_SHELLS | listed for p in (program, os.path.realpath(found)))


def command_argv(command: str, *, shell: str | None, side: str) -> tuple[list[str], str | None]:
    """argv for a command and, when it runs through /bin/sh only because it uses shell syntax, a note
    saying so. `shell`: as CompareOptions.shell.

    Without -S and -N, shell syntax runs through `sh -c` rather than being refused: hyperfine runs every
    command through a shell by default, so its users write pipes and $VARs and expect them to work; the
    note tells them the shell's start-up is now part of what is measured. With -N (no shell, asked for)
    such a command is refused: split into words it would run something else (`seq 1000 | sort -r` would
    give seq the words `|`, `sort`, `-r`)."""
    if not command.strip():
        raise DuetError(f"command {side} is empty", hint="give the command line to benchmark in quotes")
    if shell is not None and shell != "none":
        return [*shell_argv(shell), "-c", command], None
    feature = detect_shell_syntax(command)
    if feature is not None:
        if shell == "none":
            raise DuetError(f"command {side} ({command!r}) uses shell syntax, {feature}, but -N/--shell=none "
                            "runs it without a shell", hint="drop -N to run it through sh, or pass --shell bash")
        _check_first_program(command, side)
        return ["/bin/sh", "-c", command], (f"command {side} uses shell syntax ({feature}): it runs through sh -c, "
                                            "whose start-up is measured too (-S SHELL to choose the shell)")
    return split_command(command, shell=False, side=side), None


def _check_first_program(command: str, side: str) -> None:
    """A shell command's first program, when it is a plain word: missing, it is reported before measuring
    (as for a command run directly), not as exit code 127 of every run."""
    try:
        first = shlex.split(command)[0] if command.strip() else ""
    except (ValueError, IndexError):
        return
    if (not first or first in _SHELL_WORDS or _ASSIGNMENT.match(first) or detect_shell_syntax(first) is not None
            or os.sep in first):
        return
    if shutil.which(first) is None:
        raise DuetError(f"command {side} not found: {first!r}", hint="check the spelling and PATH, or give a full path")


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
                        hint="check the quoting, or pass --shell sh to run it through /bin/sh") from None
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
                        hint="check the spelling and PATH, or give a full path")
    return argv
