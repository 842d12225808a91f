"""The reusable GitHub Action (action.yml): one comparison or one campaign, the step summary, the
outputs, and a failing step on a regression.

The composite action installs duetbench and runs ``python -m duetbench.cli.github_action``; everything
it does is here, driven by environment variables (the action maps its inputs onto them), so that it
is tested like any other code, with a fake $GITHUB_STEP_SUMMARY and $GITHUB_OUTPUT:

    DUETBENCH_ACTION_COMMAND_A, _COMMAND_B   a comparison: `duet compare A B`
    DUETBENCH_ACTION_CAMPAIGN        or a campaign file: `duet run FILE`, then `duet analyze`
    DUETBENCH_ACTION_FAIL_IF_SLOWER  percent (default 5; empty: never fail on the result)
    DUETBENCH_ACTION_ARGS            more arguments for `duet compare` / `duet run` (shell words)
    DUETBENCH_ACTION_ANALYZE_ARGS    more arguments for `duet analyze` (campaigns only)
    DUETBENCH_ACTION_DB              results database (default .duet/results.db)
    DUETBENCH_ACTION_RESULTS_DIR     where the JSON and Markdown reports go (default .duet/action)

(Not DUET_*: those are the hooks' variables, reserved for `duet run`.)

The exit code is duet's: 0, 1 for a failing benchmarked command, 2 for bad input, 3 for a regression.
docs/github-actions.md.
"""
from __future__ import annotations

import json
import math
import os
import shlex
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from duetbench.errors import EXIT_FAILED, EXIT_SLOWER, DuetError

DEFAULT_FAIL_IF_SLOWER = "5"


@dataclass(frozen=True)
class Inputs:
    command_a: str
    command_b: str
    campaign: str
    fail_if_slower: float | None
    args: list[str]
    analyze_args: list[str]
    db: str
    results_dir: Path

    @property
    def mode(self) -> str:
        return "campaign" if self.campaign else "compare"


def _words(env: Mapping[str, str], name: str) -> list[str]:
    try:
        return shlex.split(env.get(name, ""))
    except ValueError as e:
        raise DuetError(f"{name}: cannot split {env.get(name, '')!r} into arguments: {e}",
                        hint="quote as in a shell, e.g. --runs 30 --name-a 'base build'") from None


#: The exports the action writes itself (the `json` output and the step summary). Given in args too, they
#: would be dropped without a word: the action's come later on the command line, and the last one counts.
_OWN_EXPORTS = ("--export-json", "--export-markdown")


def _refuse_own_exports(words: list[str], name: str) -> None:
    for word in words:
        option = word.partition("=")[0]
        if option in _OWN_EXPORTS:
            raise DuetError(f"{name}: the action writes {option} itself, so {word!r} would be ignored",
                            hint="the JSON report's path is the step's `json` output and the Markdown goes to the "
                                 "step summary; copy them from there (other --export-* formats may be given)")


def read_inputs(env: Mapping[str, str]) -> Inputs:
    """The action's inputs, checked: either both commands or a campaign file, never both."""
    a, b, campaign = (env.get(k, "").strip() for k in
                      ("DUETBENCH_ACTION_COMMAND_A", "DUETBENCH_ACTION_COMMAND_B", "DUETBENCH_ACTION_CAMPAIGN"))
    if campaign and (a or b):
        raise DuetError("the action got both a campaign and commands",
                        hint="give either command-a and command-b, or campaign")
    if not campaign and not (a and b):
        raise DuetError("the action needs command-a and command-b, or a campaign file",
                        hint="e.g. with: {command-a: ./base/bench, command-b: ./pr/bench}")
    text = env.get("DUETBENCH_ACTION_FAIL_IF_SLOWER", DEFAULT_FAIL_IF_SLOWER).strip()
    try:
        # "3%" is how a percentage is often written; the number is the same.
        threshold = float(text.removesuffix("%")) if text else None
    except ValueError:
        threshold = math.nan
    if threshold is not None and not (math.isfinite(threshold) and threshold >= 0):
        raise DuetError(f"fail-if-slower {text!r} is not a percentage (a number >= 0)",
                        hint="e.g. fail-if-slower: 3 (B more than 3% slower with confidence fails), or '' to "
                             "never fail")
    args, analyze_args = _words(env, "DUETBENCH_ACTION_ARGS"), _words(env, "DUETBENCH_ACTION_ANALYZE_ARGS")
    _refuse_own_exports(analyze_args if campaign else args, "analyze-args" if campaign else "args")
    return Inputs(command_a=a, command_b=b, campaign=campaign, fail_if_slower=threshold,
                  args=args, analyze_args=analyze_args,
                  db=env.get("DUETBENCH_ACTION_DB", "").strip() or ".duet/results.db",
                  results_dir=Path(env.get("DUETBENCH_ACTION_RESULTS_DIR", "").strip() or ".duet/action"))


def _duet(args: Sequence[str]) -> int:
    """Run duet with this interpreter (the one the action installed duetbench into); its output goes to
    the job's log as it comes."""
    print("+ duet " + shlex.join(args), flush=True)
    return subprocess.run([sys.executable, "-m", "duetbench", *args]).returncode


def _threshold_args(inputs: Inputs) -> list[str]:
    return [] if inputs.fail_if_slower is None else ["--fail-if-slower", f"{inputs.fail_if_slower:g}"]


def run(inputs: Inputs) -> tuple[int, Path, Path]:
    """Measure and judge; returns duet's exit code and the JSON and Markdown reports' paths."""
    inputs.results_dir.mkdir(parents=True, exist_ok=True)
    report_json, report_md = inputs.results_dir / "report.json", inputs.results_dir / "report.md"
    for stale in (report_json, report_md):
        stale.unlink(missing_ok=True)  # a failed retry must not leave the previous attempt's report behind
    exports = ["--export-json", str(report_json), "--export-markdown", str(report_md), *_threshold_args(inputs)]
    if inputs.mode == "compare":
        code = _duet(["compare", inputs.command_a, inputs.command_b, "--no-progress", "--db", inputs.db,
                      *inputs.args, *exports])
        return code, report_json, report_md
    code = _duet(["run", inputs.campaign, "--no-progress", "--db", inputs.db, *inputs.args])
    if code not in (0, EXIT_FAILED):
        return code, report_json, report_md
    # Some runs failed (exit 1): the others are still judged, so the summary shows them; a regression among
    # them (3) is what the step reports, else the failure.
    judged = _duet(["analyze", "--db", inputs.db, *inputs.analyze_args, *exports])
    return judged or code, report_json, report_md


def outputs(inputs: Inputs, code: int, report_json: Path) -> dict[str, str]:
    """The step's outputs, from the JSON report (empty values when there is none)."""
    out = {"exit-code": str(code), "json": str(report_json.resolve()) if report_json.exists() else "",
           "regression": "false",
           "verdict": "", "ratio": "", "ci-low": "", "ci-high": "", "slower": "0", "faster": "0"}
    if not report_json.exists():
        return out
    doc = json.loads(report_json.read_text())
    limit = None if inputs.fail_if_slower is None else 1 + inputs.fail_if_slower / 100
    # (what each judges: a comparison, or a campaign's benchmark, which has a row per method; verdict; B/A; CI)
    judged: list[tuple[object, str, float, float | None, float | None]] = []
    if inputs.mode == "compare":
        # A parameter scan (-L/-P in args) exports one comparison per combination under "scan".
        for n, one in enumerate(doc.get("scan", [doc])):
            metric = one.get("options", {}).get("metric")
            primary = next((c for c in one.get("comparisons", []) if c.get("metric") == metric), None)
            if primary is not None:
                judged.append((n, primary["verdict"], primary["ratio"]["estimate"], primary["ratio"]["low"],
                               primary["ratio"]["high"]))
    else:
        judged = [(r["benchmark"], r["verdict"], r["ratio"], r["ci_low"], r["ci_high"]) for r in doc.get("rows", [])
                  if r.get("ratio") is not None]
    # A benchmark measured by several methods has a row per method: it is one benchmark that is slower.
    out["slower"] = str(len({what for what, v, *_ in judged if v == "slower"}))
    out["faster"] = str(len({what for what, v, *_ in judged if v == "faster"}))
    # duet's exit 3 counts too: args may carry a --fail-if-slower of their own. A bound is null in the JSON when
    # it is not finite (Fieller's interval with two runs can be unbounded).
    out["regression"] = str(code == EXIT_SLOWER or limit is not None and any(low is not None and low > limit
                                                                             for *_, low, _ in judged)).lower()
    if len(judged) == 1:
        _, verdict, ratio, low, high = judged[0]
        out.update({"verdict": verdict, "ratio": _g(ratio), "ci-low": _g(low), "ci-high": _g(high)})
    return out


def _g(x: float | None) -> str:
    return "" if x is None else f"{x:.6g}"


def write_outputs(path: str | None, values: Mapping[str, str]) -> None:
    if not path:
        return
    with open(path, "a", encoding="utf-8") as f:
        for key, value in values.items():
            f.write(f"{key}={value}\n")  # values are single-line by construction


def write_summary(path: str | None, inputs: Inputs, code: int, report_md: Path) -> None:
    """Append the Markdown report to the step summary, or say why there is none."""
    if not path:
        return
    if report_md.exists():
        text = report_md.read_text()
    else:
        what = f"campaign `{inputs.campaign}`" if inputs.mode == "campaign" else "the comparison"
        text = f"### duetbench\n\n{what} produced no result (duet exited with {code}); see the step's log.\n"
    with open(path, "a", encoding="utf-8") as f:
        f.write(text.rstrip("\n") + "\n\n")


def _refused(env: Mapping[str, str], error: DuetError) -> int:
    """Inputs the action cannot run with: the reason in the log and in the step summary (where the reader
    looks for the result), and every output, empty, so that later steps read defined values."""
    print(f"error: {error}", file=sys.stderr)
    empty = {"exit-code": str(error.exit_code), "json": "", "regression": "false", "verdict": "", "ratio": "",
             "ci-low": "", "ci-high": "", "slower": "0", "faster": "0"}
    write_outputs(env.get("GITHUB_OUTPUT"), empty)
    summary = env.get("GITHUB_STEP_SUMMARY")
    if summary:
        with open(summary, "a", encoding="utf-8") as f:
            f.write(f"### duetbench\n\nnothing was measured: {error}\n\n")
    print(f"::error::duetbench: {error}", flush=True)
    return error.exit_code


def main(env: Mapping[str, str] | None = None) -> int:
    env = os.environ if env is None else env
    try:
        inputs = read_inputs(env)
    except DuetError as e:
        return _refused(env, e)
    code, report_json, report_md = run(inputs)
    write_summary(env.get("GITHUB_STEP_SUMMARY"), inputs, code, report_md)
    values = outputs(inputs, code, report_json)
    write_outputs(env.get("GITHUB_OUTPUT"), values)
    if values["regression"] == "true":
        limit = "the limit in args" if inputs.fail_if_slower is None else f"{inputs.fail_if_slower:g}%"
        print(f"::error::duetbench: B is slower than A by more than {limit} (see the step summary)", flush=True)
    elif code == EXIT_FAILED:
        print("::error::duetbench: a benchmarked command failed (its error is in the log above)", flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
