"""Options and checks shared by the user-described parsers (csv, regex): units and timestamp domains."""
from __future__ import annotations

from typing import Literal

from .._common import Options as _Base
from .._common import TimeUnit


class TimedOptions(_Base):
    unit: TimeUnit = "s"
    """Unit of the value."""
    clock: Literal["monotonic", "epoch"] = "monotonic"
    """Domain of the start/end timestamps, when there are any."""
    timestamp_unit: TimeUnit = "ns"
    """Unit of the start/end timestamps (integers or decimals)."""
