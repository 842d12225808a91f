"""Valid campaign files resolve to exactly the model the planner and executor consume."""
from __future__ import annotations

import math
from pathlib import Path

import pytest
from pydantic import ValidationError

from duetbench.config.campaign import (BenchmarkSpec, Campaign, ContainerSpec, ParserSpec, SideSpec, Warmup,
                                       load_campaign, render)
from duetbench.errors import DuetError

FULL = """\
campaign: full
seed: 7
schedule: ordered
methods: {sequential: 2, duet: 4}
artifacts:
  uname: uname -a
cwd: work
env: {LEVEL: campaign, KEEP: "1", NUM: 1.10, OCT: 010, FLAG: yes}
shell: true
parser: {name: regex, pattern: '(?P<value>[0-9.]+) s', unit: ms}
results: ["{outdir}/r.json"]
warmup: 2
timeout: 30
barrier_timeout: 5
container: docker.io/library/python:3.12
command: ./run {benchmark} {side} {{literal}}
benchmarks:
  inherit-all: {}
  override:
    cwd: work/sub
    env: {LEVEL: benchmark, BENCH: b}
    parser: jmh
    results: out.json
    warmup: 25%
    timeout: 60
    container: {image: "img:1", options: [--cpus=1]}
    methods: {aduet: 3, duet: 0}
    A:
      env: {LEVEL: side-a}
      shell: false
      command: python3 a.py --out {outdir}
    B:
      cwd: /
      container: null
      env: {SIDE: b}
  strings:
    A: ./a
    B: ./b
    warmup: 0.5
"""


def test_full_campaign_resolves_every_level(tmp_path: Path) -> None:
    (tmp_path / "work" / "sub").mkdir(parents=True)
    (tmp_path / "campaign.yml").write_text(FULL)
    campaign = load_campaign(tmp_path / "campaign.yml")

    work = tmp_path / "work"
    top_env = {"LEVEL": "campaign", "KEEP": "1", "NUM": "1.10", "OCT": "010", "FLAG": "yes"}
    top_container = ContainerSpec(image="docker.io/library/python:3.12", options=[])
    top_command = "./run {benchmark} {side} {{literal}}"
    top_side = SideSpec(command=top_command, shell=True, cwd=work, env=top_env, container=top_container)
    top_parser = ParserSpec(name="regex", options={"pattern": "(?P<value>[0-9.]+) s", "unit": "ms"})
    expected = Campaign(
        name="full",
        path=tmp_path / "campaign.yml",
        seed=7,
        schedule="ordered",
        artifacts={"uname": "uname -a"},
        source_text=FULL,
        benchmarks=[
            BenchmarkSpec(name="inherit-all", sides={"A": top_side, "B": top_side}, aa=True,
                          methods={"sequential": 2, "duet": 4}, parser=top_parser, results=["{outdir}/r.json"],
                          warmup=Warmup(count=2), timeout_s=30.0, barrier_timeout_s=5.0),
            BenchmarkSpec(
                name="override",
                sides={
                    "A": SideSpec(command="python3 a.py --out {outdir}", shell=False, cwd=work / "sub",
                                  env={**top_env, "LEVEL": "side-a", "BENCH": "b"},
                                  container=ContainerSpec(image="img:1", options=["--cpus=1"])),
                    "B": SideSpec(command=top_command, shell=True, cwd=Path("/"),
                                  env={**top_env, "LEVEL": "benchmark", "BENCH": "b", "SIDE": "b"}, container=None),
                },
                aa=False, methods={"aduet": 3}, parser=ParserSpec(name="jmh", options={}), results=["out.json"],
                warmup=Warmup(fraction=0.25), timeout_s=60.0, barrier_timeout_s=5.0),
            BenchmarkSpec(
                name="strings",
                sides={"A": top_side.model_copy(update={"command": "./a"}),
                       "B": top_side.model_copy(update={"command": "./b"})},
                aa=False, methods={"sequential": 2, "duet": 4}, parser=top_parser, results=["{outdir}/r.json"],
                warmup=Warmup(fraction=0.5), timeout_s=30.0, barrier_timeout_s=5.0),
        ],
    )
    assert campaign == expected
    assert list(campaign.benchmarks[1].methods) == ["aduet"]


def test_minimal_campaign_gets_the_defaults(load, tmp_path: Path) -> None:
    campaign = load("""\
        campaign: tiny
        benchmarks:
          one: ./bench --fast
          two: {command: ./bench, timeout: 45}
        """)
    side = SideSpec(command="./bench --fast", shell=False, cwd=tmp_path, env={}, container=None)
    assert campaign.seed is None and campaign.schedule == "rmit" and campaign.artifacts == {}
    one, two = campaign.benchmarks
    assert one == BenchmarkSpec(name="one", sides={"A": side, "B": side}, aa=True, methods={"auto": 10},
                                parser=ParserSpec(name="iteration-log"), results=[], warmup=Warmup(count=0),
                                timeout_s=600.0, barrier_timeout_s=600.0)
    # the barrier's default is the benchmark's own timeout, not the campaign's default
    assert (two.timeout_s, two.barrier_timeout_s) == (45.0, 45.0)


def test_benchmark_methods_replace_the_campaigns(load) -> None:
    campaign = load("""\
        campaign: m
        methods: {sequential: 5, aduet: 1}
        benchmarks:
          a: {command: x, methods: {duet: 2}}
          b: x
        """)
    assert campaign.benchmark("a").methods == {"duet": 2}
    assert list(campaign.benchmark("b").methods.items()) == [("sequential", 5), ("aduet", 1)]


def test_yaml_anchors_and_merge_keys_share_settings(load) -> None:
    campaign = load("""\
        campaign: anchors
        benchmarks:
          a: &base {command: ./run, env: {X: "1"}, timeout: 10}
          b:
            <<: *base
            timeout: 20
        """)
    a, b = campaign.benchmarks
    assert (a.timeout_s, b.timeout_s) == (10.0, 20.0)
    assert b.sides["A"].env == {"X": "1"} and b.sides["A"].command == "./run"


def test_cwd_home_and_relative_to_the_file_not_the_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "sub" / "dir").mkdir(parents=True)
    (tmp_path / "sub" / "c.yml").write_text("campaign: c\ncwd: dir\nbenchmarks: {x: {command: y, cwd: \"~\"}}\n")
    monkeypatch.chdir("/")
    monkeypatch.setenv("HOME", str(tmp_path))
    campaign = load_campaign(tmp_path / "sub" / "c.yml")
    assert campaign.path == tmp_path / "sub" / "c.yml"
    assert campaign.benchmarks[0].sides["A"].cwd == tmp_path


@pytest.mark.parametrize("warmup, n, discarded", [
    (Warmup(count=5), 20, 5), (Warmup(count=5), 3, 3), (Warmup(count=0), 10, 0),
    (Warmup(fraction=0.2), 10, 2), (Warmup(fraction=0.29), 100, 29), (Warmup(fraction=0.25), 7, 1),
    (Warmup(fraction=0.0), 50, 0), (Warmup(fraction=0.999), 10, 9),
])
def test_warmup_discard(warmup: Warmup, n: int, discarded: int) -> None:
    assert warmup.discard(n) == discarded


def test_warmup_forms(load) -> None:
    campaign = load("""\
        campaign: w
        command: x
        benchmarks:
          count: {warmup: 3}
          percent: {warmup: "12.5%"}
          fraction: {warmup: 0.125}
          zero-percent: {warmup: 0%}
        """)
    got = [b.warmup for b in campaign.benchmarks]
    assert got == [Warmup(count=3), Warmup(fraction=0.125), Warmup(fraction=0.125), Warmup(fraction=0.0)]


def test_render_fills_placeholders_and_unescapes_braces() -> None:
    template = "run --out {outdir}/{benchmark}-{side}-{method}-{run}.json --fmt '{{x}}'"
    assert render(template, outdir="/o", benchmark="fib", side="B", method="duet", run=3) == \
        "run --out /o/fib-B-duet-3.json --fmt '{x}'"
    with pytest.raises(DuetError, match="no value"):
        render("{outdir}", side="A")


def test_source_text_is_kept_verbatim(load) -> None:
    text = "campaign: s   # a comment\nbenchmarks: {x: y}\n"
    assert load(text).source_text == text


def test_resolved_model_is_immutable_and_serializable(load) -> None:
    campaign = load("campaign: s\nbenchmarks: {x: y}\n")
    with pytest.raises(ValidationError, match="frozen"):
        campaign.name = "other"  # type: ignore[misc]
    again = Campaign.model_validate_json(campaign.model_dump_json())
    assert again == campaign
    assert not math.isnan(again.benchmarks[0].timeout_s)
