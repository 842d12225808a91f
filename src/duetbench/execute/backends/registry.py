"""Backend name → its class, as a module path imported only when the backend is used.

`duet run --backend NAME` offers these names; the command line imports this module at start-up,
so it holds strings only (see cli/main.py: start-up time is part of what a comparison costs).
Adding a backend: one line here.
"""
from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from duetbench.errors import DuetError

if TYPE_CHECKING:
    from duetbench.config.campaign_model import Campaign
    from duetbench.execute.backends.base import Backend

BACKENDS: dict[str, str] = {
    "local": "duetbench.execute.backends.local:LocalBackend",
    "container": "duetbench.execute.backends.container:ContainerBackend",
    "slurm": "duetbench.execute.backends.slurm.backend:SlurmBackend",
}


def backend_class(name: str) -> type[Backend]:
    target = BACKENDS.get(name)
    if target is None:
        raise DuetError(f"unknown backend {name!r}", hint=f"use one of: {', '.join(BACKENDS)}")
    module, _, attr = target.partition(":")
    cls: type[Backend] = getattr(importlib.import_module(module), attr)
    return cls


def create_backend(name: str, campaign: Campaign, executor: str, settings: Mapping[str, Any] | None = None
                   ) -> Backend:
    return backend_class(name).for_campaign(campaign, executor, settings or {})
