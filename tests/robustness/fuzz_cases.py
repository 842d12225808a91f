"""Random input for the whole command line (issue 16, "0 tracebacks"): campaign files, every import
format, and the options of every command that reads input without measuring. Shared by the test suite
(tests/robustness/test_fuzz.py, a few hundred cases) and bench/fuzz.py (10 000 and more).

Every case is one ``duet`` command line (plus the files it reads), run in-process with click's runner.
It passes when the command ends with an exit code (never an exception), and a failure is one error line
(a campaign file's problems: one line each, every one starting with its file:line:column).
"""
from __future__ import annotations

import copy
import json
import re
import shutil
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner
from hypothesis import strategies as st

FIXTURES = Path(__file__).resolve().parent.parent / "harness" / "fixtures"
DUETPROCESS = (Path(__file__).resolve().parent.parent / "importers" / "data" / "asynchronous-duet"
               / "duetprocess_chi-square_5096d7d.csv")

VALID_CAMPAIGN = """\
campaign: fuzz
seed: 3
methods: {sequential: 1, duet: 2, aduet: 1}
env: {A_VAR: "1"}
parser: {name: regex, pattern: '^iteration \\d+: (?P<value>[0-9.]+) s$', unit: s}
warmup: "10%"
timeout: 60
benchmarks:
  one:
    command: python3 bench.py --work 10
    A: {env: {C: "{side}"}}
    B: {command: python3 bench.py --work 20}
  two:
    A: ./a --n 1
    B: ./b --n 1
    methods: {duet: 1}
    parser: jmh
"""

# Values that broke, or could break, something somewhere: huge and odd numbers, formulas, markup, bidi,
# lone surrogates, URLs with passwords, paths, placeholders.
NASTY_TEXT = ["", " ", "0", "-1", "1e23", "nan", "inf", "-0", str(2**63), str(10**30), "=HYPERLINK(\"x\")",
              "<img src=x onerror=alert(1)>", "a\u202eb", "\ud800", "x" * 5000, "postgresql://u:pw@h/db", "../..",
              "/etc/passwd", "/etc", "{n}", "{outdir}", "%", "20%", "A", "B", "duet", "a,b", "a=b", "\n", "\x1b[31m",
              "\t=1", "-", "--", "~"]
nasty_text = st.one_of(st.sampled_from(NASTY_TEXT), st.text(max_size=20))
nasty_number = st.sampled_from(["-1", "0", "1", "2", "3", "10", "99", "100", "2147483648", str(2**63), str(10**23),
                                "1e23", "nan", "inf", "-inf", "0.5", "1.5", "-0.0", "1e-300", "x"])
json_scalars = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
                         st.floats(allow_nan=False, allow_infinity=False), st.sampled_from(NASTY_TEXT),
                         st.text(max_size=8))
json_values = st.recursive(json_scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                                   st.dictionaries(st.text(max_size=8), inner,
                                                                                   max_size=4)), max_leaves=20)


@dataclass
class Case:
    kind: str
    argv: list[str]
    files: dict[str, str] = field(default_factory=dict)

    def describe(self) -> str:
        return json.dumps({"kind": self.kind, "argv": self.argv, "files": {k: v[:300] for k, v in self.files.items()}},
                          ensure_ascii=True)


@dataclass
class Outcome:
    exit_code: int
    problem: str | None  # None: the case passed
    error_line: str = ""


# -- campaign files ------------------------------------------------------------------------------------
def _paths(data: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix] if prefix else []
    if isinstance(data, dict):
        for key, value in data.items():
            found += _paths(value, prefix + (key,))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            found += _paths(value, prefix + (i,))
    return found


campaign_values = st.one_of(json_values, nasty_text, st.sampled_from([
    {"duet": 99999999999999999999}, {"name": "os:system"}, "os:system", "json:loads", 2**64, -1, 1e308,
    {"name": "regex", "pattern": "("}, {"name": "regex", "pattern": "(?P<value>x)"}, "*a", "&a x"]))


@st.composite
def campaign_cases(draw: st.DrawFn) -> Case:
    how = draw(st.sampled_from(["mutate", "mutate", "text", "aliases"]))
    if how == "mutate":
        data = copy.deepcopy(yaml.safe_load(VALID_CAMPAIGN))
        for _ in range(draw(st.integers(1, 3))):
            paths = _paths(data)
            path = draw(st.sampled_from(paths))
            parent = data
            for part in path[:-1]:
                parent = parent[part]
            action = draw(st.sampled_from(["delete", "replace", "insert"]))
            if action == "delete":
                del parent[path[-1]]
            elif action == "replace":
                parent[path[-1]] = copy.deepcopy(draw(campaign_values))
            elif isinstance(parent, dict):
                parent[draw(nasty_text) or "k"] = copy.deepcopy(draw(campaign_values))
        try:
            text = yaml.safe_dump(data, sort_keys=False, allow_unicode=draw(st.booleans()))
        except (yaml.YAMLError, UnicodeEncodeError):
            text = VALID_CAMPAIGN
    elif how == "text":
        lines = VALID_CAMPAIGN.splitlines(keepends=True)
        for _ in range(draw(st.integers(1, 4))):
            i = draw(st.integers(0, len(lines) - 1))
            at = draw(st.integers(0, len(lines[i])))
            junk = draw(st.one_of(st.text(st.sampled_from(list(" :-{}[]'\"#&*!|>%@`,?\tab1\n\\")), min_size=1,
                                          max_size=5), nasty_text))
            lines[i] = lines[i][:at] + junk + lines[i][at:]
        text = "".join(lines)
    else:
        depth = draw(st.integers(1, 12))
        width = draw(st.integers(1, 12))
        lines = ['a0: &a0 ["x"]']
        for d in range(1, depth):
            lines.append(f"a{d}: &a{d} [" + ",".join([f"*a{d - 1}"] * width) + "]")
        text = VALID_CAMPAIGN + "\n".join(lines) + "\n"
    argv = ["run", "c.yml", "--dry-run"] + draw(st.sampled_from([[], ["--seed", "1"], ["--seed", str(2**63)],
                                                                   ["--resume", "--db", "r.db"]]))
    return Case("campaign", argv, {"c.yml": text})


# -- import formats --------------------------------------------------------------------------------------
def _fixture(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())


def _mutate_json(draw: st.DrawFn, doc: Any) -> Any:
    doc = copy.deepcopy(doc)
    for _ in range(draw(st.integers(1, 4))):
        paths = _paths(doc)
        if not paths:
            return draw(json_values)
        path = draw(st.sampled_from(paths))
        parent = doc
        for part in path[:-1]:
            parent = parent[part]
        if draw(st.booleans()):
            parent[path[-1]] = draw(json_values)
        elif isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent.pop(path[-1])
    return doc


@st.composite
def import_cases(draw: st.DrawFn) -> Case:
    fmt = draw(st.sampled_from(["hyperfine", "pyperf", "jmh", "duetprocess", "csv"]))
    files: dict[str, str] = {}
    extra: list[str] = []
    if fmt in ("hyperfine", "pyperf", "jmh"):
        base = {"hyperfine": "hyperfine.json", "pyperf": "pyperf.json", "jmh": "jmh_sample.json"}[fmt]
        how = draw(st.sampled_from(["mutate", "mutate", "random", "deep", "bytes"]))
        if how == "mutate":
            text = json.dumps(_mutate_json(draw, _fixture(base)))
        elif how == "random":
            text = json.dumps(draw(json_values))
        elif how == "deep":
            n = draw(st.sampled_from([10, 1000, 100_000]))
            text = "[" * n + "]" * n
        else:
            text = draw(st.text(max_size=200))
        files["a.json"] = text
        names = ["a.json"]
        if fmt != "hyperfine" or draw(st.booleans()):
            files["b.json"] = json.dumps(_mutate_json(draw, _fixture(base))) if draw(st.booleans()) else text
            names.append("b.json")
        if fmt == "hyperfine" and draw(st.booleans()):
            extra += ["--command-a", draw(nasty_text), "--command-b", draw(nasty_text)]
    else:
        if fmt == "duetprocess":
            lines = DUETPROCESS.read_text().splitlines()[:40]
        else:
            lines = ["bench,method,run,side,value,start,end"] + [
                f"b{r % 2},{m},{r},{s},{0.1 + r / 100},{1000 + r},{2000 + r}"
                for m in ("duet", "sequential", "aduet") for r in range(6) for s in "AB"]
        for _ in range(draw(st.integers(0, 4))):
            i = draw(st.integers(0, len(lines) - 1))
            cells = lines[i].split(",")
            j = draw(st.integers(0, len(cells) - 1))
            cells[j] = draw(nasty_text).replace("\n", " ")
            lines[i] = ",".join(cells)
        files["d.csv"] = "\n".join(lines) + "\n"
        names = ["d.csv"]
        if fmt == "csv":
            fields = ["benchmark", "method", "run", "side", "value", "index", "start", "end", "warmup", draw(nasty_text)]
            columns = ["bench", "method", "run", "side", "value", "start", "end", draw(nasty_text)]
            for f in draw(st.lists(st.sampled_from(fields), min_size=3, max_size=7)):
                extra += ["--col", f"{f}={draw(st.sampled_from(columns))}"]
            if draw(st.booleans()):
                extra += ["--set", f"{draw(st.sampled_from(fields))}={draw(nasty_text)}"]
            if draw(st.booleans()):
                extra += ["--map", f"{draw(st.sampled_from(fields))}:{draw(nasty_text)}={draw(nasty_text)}"]
            if draw(st.booleans()):
                extra += ["--unit", draw(st.sampled_from(["s", "ms", "ns", "us", "min", "x", ""]))]
            if draw(st.booleans()):
                extra += ["--time-unit", draw(st.sampled_from(["s", "ns", "iso", "ms", "x"]))]
            if draw(st.booleans()):
                extra += ["--where", f"{draw(st.sampled_from(columns))}={draw(nasty_text)}"]
    if draw(st.booleans()):
        extra += ["--method", draw(st.sampled_from(["duet", "aduet", "sequential"]))]
    if draw(st.booleans()):
        extra += ["--name", draw(nasty_text)]
    return Case("import", ["import", fmt, *names, *extra, "--db", "r.db"], files)


# -- command-line options ------------------------------------------------------------------------------
_COMPARE_OPTIONS: dict[str, Any] = {
    "--method": st.sampled_from(["duet", "aduet", "sequential", "x"]), "--warmup": nasty_number,
    "--runs": nasty_number, "--min-runs": nasty_number, "--max-runs": nasty_number, "--time-budget": nasty_number,
    "--target-width": nasty_number, "--seed": nasty_number, "--confidence": nasty_number, "--timeout": nasty_number,
    "--metric": st.sampled_from(["wall", "cpu", "x"]), "--name-a": nasty_text, "--name-b": nasty_text,
    "--fail-if-slower": nasty_number, "--min-overlap": nasty_number, "--prepare": nasty_text,
    "--db": st.sampled_from(["r.db", "postgresql://u:pw@nohost.invalid:1/db", ".", "sqlite://", "x/../r.db"]),
    "-P": st.tuples(nasty_text, nasty_number, nasty_number), "-D": nasty_number, "-L": st.tuples(nasty_text, nasty_text),
}
_ANALYZE_OPTIONS: dict[str, Any] = {
    "--campaign": nasty_number, "--benchmark": nasty_text, "--method": st.sampled_from(["duet", "aduet", "sequential"]),
    "--metric": st.sampled_from(["wall", "cpu"]), "--confidence": nasty_number,
    "--resamples": st.sampled_from(["-1", "0", "99", "100", "200", "1e23", str(10**7), str(2**70)]),
    "--warmup": nasty_text, "--min-overlap": nasty_number, "--seed": nasty_number,
    "--estimator": st.sampled_from(["auto", "run-means", "hierarchical", "merged"]), "--fail-if-slower": nasty_number,
}
# Commands that do not fail early never reach a measurement: A is a program that does not exist.
_MISSING = "duet-fuzz-no-such-program"


def _options(draw: st.DrawFn, table: dict[str, Any]) -> list[str]:
    argv: list[str] = []
    for name in draw(st.lists(st.sampled_from(sorted(table)), max_size=5, unique=True)):
        value = draw(table[name])
        argv += [name, *value] if isinstance(value, tuple) else [name, value]
    return argv


@st.composite
def cli_cases(draw: st.DrawFn) -> Case:
    command = draw(st.sampled_from(["compare", "show", "analyze", "report", "merge", "run"]))
    if command == "compare":
        a = draw(st.one_of(st.just(_MISSING), st.just(f"{_MISSING} {{n}}"), nasty_text.filter(lambda t: "\x00" not in t)))
        argv = ["compare", a if a.strip() and _MISSING in a else _MISSING + " " + a, draw(nasty_text),
                *_options(draw, _COMPARE_OPTIONS)]
        if "--db" not in argv:
            argv += ["--db", "r.db"]
    elif command == "show":
        argv = ["show", *([draw(nasty_number)] if draw(st.booleans()) else []), "--db",
                draw(st.sampled_from(["base.db", "missing.db", "postgresql://u:pw@nohost.invalid:1/db"]))]
        if draw(st.booleans()):
            argv += ["--limit", draw(nasty_number)]
        if draw(st.booleans()):
            argv += ["--export-csv", "o.csv", "--export-markdown", "o.md"]
    elif command in ("analyze", "report"):
        argv = [command, *_options(draw, _ANALYZE_OPTIONS), "--db", draw(st.sampled_from(["base.db", "missing.db"]))]
        if "--resamples" not in argv:
            argv += ["--resamples", "200"]
        if command == "report":
            argv += ["-o", draw(st.sampled_from(["o.html", ".", "no/such/dir/o.html"]))]
        else:
            argv = [a for a in argv if a != "--fail-if-slower"] if "--fail-if-slower" in argv[-2:] else argv
            if draw(st.booleans()):
                argv += ["--export-csv", "o.csv", "--export-markdown", "o.md", "--export-json", "o.json"]
    elif command == "merge":
        argv = ["merge", *draw(st.lists(st.sampled_from(["base.db", "missing.db", "postgresql://u:pw@h/db", ".",
                                                          "r.db", "c.yml"]), min_size=1, max_size=3)),
                "--db", draw(st.sampled_from(["m.db", "base.db", "postgresql://u:pw@nohost.invalid:1/db"]))]
    else:
        argv = ["run", draw(st.sampled_from(["c.yml", "missing.yml", ".", "postgresql://u:pw@h/db"])), "--dry-run",
                *_options(draw, {"--seed": nasty_number, "--confidence": nasty_number, "--target-width": nasty_number,
                                 "--min-runs": nasty_number, "--time-budget": nasty_number,
                                 "--executor": st.sampled_from(["auto", "local", "podman", "x"]),
                                 "--mi": nasty_number, "--f-min": nasty_number})]
    return Case("cli", argv, {"c.yml": VALID_CAMPAIGN})


any_case = st.one_of(campaign_cases(), import_cases(), cli_cases())


# -- running a case ----------------------------------------------------------------------------------------
_LOCATED = re.compile(r"^\S.*?:\d+(:\d+)?: ")
_CLICK_NOISE = ("Usage:", "Try '")


def prepare_base(directory: Path) -> None:
    """base.db: a small imported campaign (every method, with timestamps) and nothing else."""
    if (directory / "base.db").exists():
        return
    lines = ["bench,method,run,side,value,start,end"] + [
        f"b{r % 2},{m},{r},{s},{0.1 + (r % 3) / 100},{1000 * r},{1000 * r + 100}"
        for m in ("duet", "sequential", "aduet") for r in range(8) for s in "AB"]
    (directory / "seed.csv").write_text("\n".join(lines) + "\n")
    outcome = CliRunner().invoke(_main(), ["import", "csv", str(directory / "seed.csv"), "--col", "benchmark=bench", "--col",
                                           "method=method", "--col", "run=run", "--col", "side=side", "--col",
                                           "value=value", "--col", "start=start", "--col", "end=end", "--time-unit",
                                           "ns", "--db", str(directory / "base.db")])
    assert outcome.exit_code == 0, outcome.output


def _main() -> Any:
    from duetbench.cli.main import main

    return main


def run_case(case: Case, directory: Path) -> Outcome:
    """Run one case in `directory` (which holds base.db); the files it writes are removed after."""
    import os

    prepare_base(directory)
    keep = {"base.db", "seed.csv"}
    for name, text in case.files.items():
        (directory / name).write_text(text, encoding="utf-8", errors="surrogatepass")
    cwd = os.getcwd()
    os.chdir(directory)
    try:
        # A warning Python shows by default (FutureWarning, UserWarning) is a source line on the user's
        # stderr: recorded here, where pytest would otherwise swallow it.
        with warnings.catch_warnings(record=True) as shown:
            warnings.simplefilter("always")
            result = CliRunner().invoke(_main(), case.argv, catch_exceptions=True)
    finally:
        os.chdir(cwd)
        for entry in directory.iterdir():
            if entry.name not in keep:
                shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        import traceback

        where = traceback.extract_tb(result.exc_info[2])[-1] if result.exc_info else None
        at = f" at {Path(where.filename).name}:{where.lineno}" if where else ""
        return Outcome(-1, f"{type(result.exception).__name__}: {result.exception}{at}"[:500])
    code = result.exit_code
    visible = [w for w in shown if issubclass(w.category, (FutureWarning, UserWarning))]
    if visible:
        return Outcome(code, f"a Python warning was shown: {visible[0].category.__name__}: {visible[0].message}"[:500])
    if code not in (0, 1, 2, 130):
        return Outcome(code, f"exit code {code}")
    stderr = result.stderr
    if "Traceback" in stderr:
        return Outcome(code, "traceback on stderr")
    if code == 0:
        return Outcome(code, None)
    lines = [line for line in stderr.splitlines() if line.strip() and not line.startswith(_CLICK_NOISE)
             and not line.lower().startswith(("note:", "warning:"))]
    errors = [line for line in lines if line.lower().startswith("error")]
    if len(errors) != 1:
        return Outcome(code, f"{len(errors)} error lines: {stderr[-500:]}")
    extra = [line for line in lines if line not in errors and not _LOCATED.match(line)]
    if extra:
        return Outcome(code, f"an error spans lines without a location: {extra[0][:200]}", errors[0])
    if "pw@" in stderr + result.stdout and "***@" not in stderr + result.stdout:
        return Outcome(code, "a password was printed", errors[0])
    return Outcome(code, None, errors[0])
