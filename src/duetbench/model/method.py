"""The three ways of measuring A against B, named once for every layer (config, plan, execute, analyze,
report, cli). Imports nothing: `duet compare` names the methods before it imports numpy (tests/test_startup.py).

- ``sequential``: A and B alternate on one CPU in random order (RMIT); their runs are independent;
- ``duet``: A and B side by side, each pair of iterations released together by a barrier: iteration k of A
  and iteration k of B of the same run are a pair (Bulej et al. 2020 §3);
- ``aduet``: side by side without a barrier, iterations paired afterwards by time overlap (Drozdík 2023 §3.3.2).
"""
from __future__ import annotations

from typing import Literal

Method = Literal["sequential", "duet", "aduet"]
#: `duet compare --method`'s values (tests/test_layout.py checks both Literals against the tuples below).
CompareMethod = Literal["auto", "sequential", "duet", "aduet"]

#: Every method, in the order campaigns plan and reports list them.
METHODS: tuple[str, ...] = ("sequential", "duet", "aduet")

#: The methods that run A and B at the same time and pair their iterations.
PAIRED_METHODS: tuple[str, ...] = ("duet", "aduet")

#: Not a method of its own: `duet compare --method auto`, and a campaign's `methods: {auto: N}`, measure a
#: pilot of the two candidates and then only the one with the narrower interval per machine-second
#: (analyze/choice.py).
AUTO = "auto"
AUTO_CANDIDATES: tuple[str, ...] = ("duet", "sequential")

#: What `duet compare --method` accepts: a method, or "auto" (a pilot of duet and sequential decides).
COMPARE_METHODS: tuple[str, ...] = (AUTO, *METHODS)


def check_method(method: str) -> str:
    """`method` if it is one of METHODS, else ValueError naming the known ones."""
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; known: {', '.join(METHODS)}")
    return method
