"""Inheritance: campaign -> benchmark -> side, the most specific level that sets a key wins.

Runs only on a fully validated file. ``env`` is the one key merged variable by variable; every other key
is taken whole from the most specific level that sets it (a benchmark's ``methods`` replaces the
campaign's, it is not merged into it).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel

from .campaign_checks import DEFAULT_METHODS
from .campaign_model import BenchmarkSpec, Campaign, ContainerSpec, ParserSpec, SideSpec, Warmup
from .campaign_schema import BenchmarkModel, CampaignModel, ContainerModel, MethodsModel, SideModel

DEFAULT_PARSER = "iteration-log"
DEFAULT_TIMEOUT_S = 600.0


def resolve(model: CampaignModel, path: Path, text: str) -> Campaign:
    return Campaign(
        name=model.campaign,
        path=path,
        seed=model.seed,
        schedule=model.schedule,
        artifacts=dict(model.artifacts or {}),
        benchmarks=[_benchmark(name, b, model, path.parent) for name, b in model.benchmarks.items()],
        source_text=text,
    )


def _pick(key: str, levels: list[BaseModel], default: Any = None) -> Any:
    for level in levels:
        if key in level.model_fields_set:
            return getattr(level, key)
    return default


def _benchmark(name: str, bench: BenchmarkModel, top: CampaignModel, base_dir: Path) -> BenchmarkSpec:
    levels: list[BaseModel] = [bench, top]
    side_a = _side(bench.A or SideModel(), bench, top, base_dir)
    aa = "B" not in bench.model_fields_set
    side_b = side_a if aa else _side(bench.B or SideModel(), bench, top, base_dir)
    parser: dict[str, Any] = dict(_pick("parser", levels, {"name": DEFAULT_PARSER}))
    methods: MethodsModel | None = _pick("methods", levels)
    runs = methods.runs() if methods is not None else dict(DEFAULT_METHODS)
    timeout = _pick("timeout", levels, DEFAULT_TIMEOUT_S)
    warmup = _pick("warmup", levels, 0)
    return BenchmarkSpec(
        name=name,
        sides={"A": side_a, "B": side_b},
        aa=aa,
        methods={m: n for m, n in runs.items() if n > 0},
        parser=ParserSpec(name=parser.pop("name"), options=parser),
        results=list(_pick("results", levels, [])),
        warmup=Warmup(fraction=warmup) if isinstance(warmup, float) else Warmup(count=warmup),
        timeout_s=timeout,
        barrier_timeout_s=_pick("barrier_timeout", levels, timeout),
        stopping=_stopping(levels),
        cpus_per_command=_pick("cpus_per_command", levels, 1),
    )


def _stopping(levels: list[BaseModel]) -> dict[str, Any]:
    """The `stopping` settings, merged key by key (a benchmark may change one threshold of the campaign's)."""
    merged: dict[str, Any] = {}
    for level in reversed(levels):
        stopping = getattr(level, "stopping", None)
        if stopping is not None:
            merged.update({k: getattr(stopping, k) for k in stopping.model_fields_set})
    return merged


def _side(side: SideModel, bench: BenchmarkModel, top: CampaignModel, base_dir: Path) -> SideSpec:
    levels: list[BaseModel] = [side, bench, top]
    env: dict[str, str] = {}
    for level in (top, bench, side):
        env.update(level.env or {})
    container: ContainerModel | None = _pick("container", levels)
    return SideSpec(
        command=_pick("command", levels),
        shell=_pick("shell", levels, False),
        cwd=_pick("cwd", levels, base_dir),
        env=env,
        container=ContainerSpec(image=container.image, options=list(container.options)) if container else None,
    )
