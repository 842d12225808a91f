"""A click float range that refuses nan: click's ``FloatRange`` lets it through, since every comparison
with nan is false, and a nan interval or budget then runs as if it were some other number."""
from __future__ import annotations

import math
from typing import Any

import click


class FiniteFloatRange(click.FloatRange):
    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number
