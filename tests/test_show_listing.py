"""`duet show`'s list of stored comparisons: an unbounded interval is worded, never '[0.0000, inf]'."""
from __future__ import annotations

import math

from duetbench.usecases.compare import _listed_interval


def test_an_unbounded_interval_reads_as_the_verdicts_word_it() -> None:
    assert _listed_interval(0.0, math.inf) == "[CI unbounded]"
    assert _listed_interval(1.02, math.inf) == "[1.0200, no upper bound]"
    assert _listed_interval(0.98, 1.03) == "[0.9800, 1.0300]"
