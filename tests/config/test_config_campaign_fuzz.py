"""Random damage to a valid campaign never crashes the loader: it loads, or it says where the problem is."""
from __future__ import annotations

import atexit
import copy
import math
import shutil
import tempfile
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from duetbench.config.campaign import Campaign, CampaignError, parse_campaign

VALID = """\
campaign: fuzz
seed: 3
methods: {sequential: 1, duet: 2, aduet: 1}
artifacts: {uname: uname -a}
cwd: .
env: {A_VAR: "1", N: 2}
parser: {name: regex, pattern: '^iteration \\d+: (?P<value>[0-9.]+) s$', unit: s}
results: ["{outdir}/out.txt"]
warmup: "10%"
timeout: 60
barrier_timeout: 30
container: {image: "img:1", options: [--cpus=1]}
benchmarks:
  one:
    command: python3 bench.py --work 10
    env: {B_VAR: x}
    A: {env: {C: "{side}"}, shell: false}
    B: {command: python3 bench.py --work 20, container: null}
  two:
    A: ./a --n 1
    B: ./b --n 1
    methods: {duet: 1}
    warmup: 2
    parser: jmh
  three: ./only-a
"""

DIR = Path(tempfile.mkdtemp(prefix="duet-fuzz-"))  # module-wide: hypothesis reruns one test many times
atexit.register(shutil.rmtree, DIR, True)
SETTINGS = settings(max_examples=200, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])

scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 10**6), st.floats(allow_nan=True),
                    st.text(max_size=12), st.sampled_from(["{outdir}", "{typo}", "20%", "rmit", "{", "~/x"]))
values = st.one_of(scalars, st.lists(scalars, max_size=3), st.dictionaries(st.text(max_size=6), scalars, max_size=3))


def paths(data: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix] if prefix else []
    if isinstance(data, dict):
        for key, value in data.items():
            found += paths(value, prefix + (key,))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            found += paths(value, prefix + (i,))
    return found


def parent_and_key(data: Any, path: tuple[Any, ...]) -> tuple[Any, Any]:
    for part in path[:-1]:
        data = data[part]
    return data, path[-1]


@st.composite
def mutated_documents(draw: st.DrawFn) -> str:
    data = copy.deepcopy(yaml.safe_load(VALID))
    for _ in range(draw(st.integers(1, 3))):
        all_paths = paths(data)
        if not all_paths:
            break
        path = draw(st.sampled_from(all_paths))
        parent, key = parent_and_key(data, path)
        action = draw(st.sampled_from(["delete", "replace", "insert"]))
        if action == "delete":
            del parent[key]
        elif action == "replace":
            parent[key] = draw(values)
        else:
            target = parent[key] if isinstance(parent[key], dict) else parent
            if isinstance(target, dict):
                target[draw(st.text(min_size=1, max_size=8))] = draw(values)
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)


@st.composite
def damaged_texts(draw: st.DrawFn) -> str:
    lines = VALID.splitlines(keepends=True)
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(lines) - 1))
        action = draw(st.sampled_from(["delete", "duplicate", "insert", "truncate"]))
        if action == "delete" and len(lines) > 1:
            del lines[i]
        elif action == "duplicate":
            lines.insert(i, lines[i])
        elif action == "insert":
            at = draw(st.integers(0, len(lines[i])))
            junk = draw(st.text(st.sampled_from(list(" :-{}[]'\"#&*!|>%@`,?\tab1\n")), min_size=1, max_size=4))
            lines[i] = lines[i][:at] + junk + lines[i][at:]
        else:
            lines[i] = lines[i][:draw(st.integers(0, len(lines[i])))]
    return "".join(lines)


def check(text: str) -> None:
    try:
        campaign = parse_campaign(text, DIR / "campaign.yml", display="campaign.yml")
    except CampaignError as exc:
        n_lines = max(1, len(text.splitlines()))
        message_lines = str(exc).splitlines()
        assert message_lines and all(line.startswith("campaign.yml") for line in message_lines)
        if not exc.problems:  # a problem with the file as a whole
            assert len(message_lines) == 1 and not message_lines[0].startswith("campaign.yml:")
        for problem in exc.problems:
            assert 1 <= problem.mark.line <= n_lines, (problem, text)
            assert problem.mark.column >= 1
            assert problem.message
        return
    assert isinstance(campaign, Campaign)
    for bench in campaign.benchmarks:
        assert bench.methods and all(n > 0 for n in bench.methods.values())
        assert math.isfinite(bench.timeout_s) and bench.timeout_s > 0
        assert set(bench.sides) == {"A", "B"} and all(s.command.strip() for s in bench.sides.values())


def test_the_unmutated_document_is_valid() -> None:
    campaign = parse_campaign(VALID, DIR / "campaign.yml")
    assert [b.name for b in campaign.benchmarks] == ["one", "two", "three"]


@SETTINGS
@given(mutated_documents())
def test_mutated_documents(text: str) -> None:
    check(text)


@SETTINGS
@given(damaged_texts())
def test_damaged_texts(text: str) -> None:
    check(text)
