"""Loading a campaign file (``duet run campaign.yml``): YAML -> validated, inherited, immutable Campaign.

The format is described in docs/campaign-format.md. Validation reports every problem at once, each with
the file, line and column it comes from; a file that loads runs nothing yet — commands are checked for
form here and executed by the execute layer.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from duetbench.model.method import METHODS

from .campaign_checks import cross_level_issues
from .campaign_model import BenchmarkSpec, Campaign, ContainerSpec, ParserSpec, Schedule, SideSpec, Warmup
from .campaign_problems import CampaignError, Issue, Problem, clamp, from_validation_error, place
from .campaign_resolve import resolve
from .campaign_schema import CampaignModel
from .placeholders import NAMES as PLACEHOLDERS
from .placeholders import render
from .yaml_locations import DataPath, Located, YamlSyntaxError, YamlTooLarge, last_line, locate

__all__ = ["METHODS", "PLACEHOLDERS", "BenchmarkSpec", "Campaign", "CampaignError", "ContainerSpec", "ParserSpec",
           "Problem", "Schedule", "SideSpec", "Warmup", "load_campaign", "parse_campaign", "render", "setting_error"]


def load_campaign(path: str | Path) -> Campaign:
    """The campaign in file ``path``; CampaignError listing every problem when it is not valid."""
    file = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CampaignError.single(file, "campaign file not found", "check the path") from None
    except IsADirectoryError:
        raise CampaignError.single(file, "is a directory, not a campaign file", "give the .yml file") from None
    except UnicodeDecodeError as exc:
        raise CampaignError.single(file, f"not UTF-8 text ({exc.reason} at byte {exc.start})",
                                   "save the file as UTF-8") from None
    except OSError as exc:
        raise CampaignError.single(file, f"cannot read: {exc.strerror}") from None
    return parse_campaign(text, Path(path), display=file)


def parse_campaign(text: str, path: Path, *, display: str | None = None, stored: bool = False) -> Campaign:
    """The campaign in ``text``, as if read from ``path`` (relative cwd's start at its directory).

    ``display`` is how the file is named in error messages; by default ``path`` as given. ``stored``: the text
    stored with a campaign's results, read back to analyse them (its warmup rule, its CPUs): without the checks
    that only guard a run about to start (directories that exist, parser options, files A and B would share),
    so that a deleted checkout or a check added since cannot silently change what `duet analyze` computes.
    """
    file = display if display is not None else str(path)
    absolute = Path(os.path.abspath(path))
    try:
        located = locate(text)
    except YamlTooLarge as exc:
        raise CampaignError(file, [Problem(min(exc.mark, last_line(text)), (), exc.message, exc.hint)]) from None
    except YamlSyntaxError as exc:
        mark = min(exc.mark, last_line(text))
        raise CampaignError(file, [Problem(mark, (), f"not valid YAML: {exc.message}",
                                           "check indentation and quoting around this place")]) from None
    if located is None:
        raise CampaignError.single(file, "the campaign file is empty",
                                   "start with 'campaign: NAME' and 'benchmarks:', see docs/campaign-format.md")
    yaml_problems = [Problem(clamp(p.mark, located), p.path, p.message, p.hint) for p in located.problems]
    data = _env_as_written(located)
    later: list[Problem] = []
    model: CampaignModel | None = None
    try:
        model = CampaignModel.model_validate(data, context={"base_dir": absolute.parent, "stored": stored})
    except ValidationError as exc:
        later += from_validation_error(exc, located)
    if isinstance(data, dict) and not stored:
        later += [place(issue, located) for issue in cross_level_issues(data)]
    problems = yaml_problems + _not_about(located.unreadable, later)
    if problems or model is None:
        raise CampaignError(file, problems)
    return resolve(model, absolute, text)


def setting_error(campaign: Campaign, benchmark: str, key: str, message: str, hint: str = "") -> CampaignError:
    """A benchmark's setting that loaded but cannot be used where the campaign runs (more CPUs than this
    machine has), as a problem at the line that sets it: the benchmark's own key, else the campaign's."""
    located = locate(campaign.source_text)
    data = located.data if located is not None and isinstance(located.data, dict) else {}
    bench = _get(data, ("benchmarks", benchmark))
    if isinstance(bench, dict) and key in bench:
        path: DataPath = ("benchmarks", benchmark, key)
    elif key in data:
        path, message = (key,), f"benchmark {benchmark}: {message}"
    else:
        path = ("benchmarks", benchmark)
    cwd = Path.cwd()
    file = str(campaign.path.relative_to(cwd) if campaign.path.is_relative_to(cwd) else campaign.path)
    if located is None:
        return CampaignError.single(file, f"{'.'.join(map(str, path))}: {message}", hint)
    return CampaignError(file, [place(Issue(path, message, hint), located)])


def _env_as_written(located: Located) -> Any:
    """The data with every non-string environment value replaced by its text in the file.

    YAML reads ``1.10`` as the float 1.1 and ``010`` as the integer 8; a variable holds the text.
    """
    data = located.data
    if not isinstance(data, dict):
        return data
    env_paths: list[tuple[str, ...]] = [("env",)]
    benchmarks = data.get("benchmarks")
    if isinstance(benchmarks, dict):
        for name, bench in benchmarks.items():
            env_paths.append(("benchmarks", name, "env"))
            if isinstance(bench, dict):
                env_paths += [("benchmarks", name, side, "env") for side in ("A", "B")]
    for path in env_paths:
        env = _get(data, path)
        if isinstance(env, dict):
            for key, value in env.items():
                if isinstance(value, (bool, int, float)):
                    env[key] = located.plain_text.get(path + (key,), str(value))
    return data


def _get(data: Any, path: tuple[str, ...]) -> Any:
    for part in path:
        if not isinstance(data, dict):
            return None
        data = data.get(part)
    return data


def _not_about(unreadable: set[DataPath], problems: list[Problem]) -> list[Problem]:
    """Without problems about values the YAML reader could not read: it already reported them."""
    return [p for p in problems if not any(p.path[:len(u)] == u for u in unreadable)]
