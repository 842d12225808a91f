"""What the store hands back, apart from the database code that reads it (store/db.py, store/direct.py)."""
from __future__ import annotations

from typing import Any

import msgspec

from duetbench.model.invocation import Invocation


def invocation_from_row(data: dict[str, Any], cls: type[Invocation] = Invocation) -> Invocation:
    data["warmup"] = bool(data["warmup"])
    return cls(**data)


class ComparisonRecord(msgspec.Struct):
    id: int
    created: float
    finished: float | None
    status: str
    method: str
    name_a: str
    name_b: str
    command_a: str
    command_b: str
    seed: int
    options: dict[str, Any]
    host: dict[str, Any]
    tool_version: str
    uid: str = ""
