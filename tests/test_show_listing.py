"""`duet show`'s list of stored comparisons: an unbounded interval is worded, never '[0.0000, inf]'."""
from __future__ import annotations

import math

from duetbench.usecases.compare import _listed_interval


def test_an_unbounded_interval_reads_as_the_verdicts_word_it() -> None:
    assert _listed_interval(0.0, math.inf) == "[CI unbounded]"
    assert _listed_interval(1.02, math.inf) == "[1.0200, no upper bound]"
    assert _listed_interval(0.98, 1.03) == "[0.9800, 1.0300]"


def test_a_list_cut_at_the_limit_says_how_many_more_are_stored(duet) -> None:
    for _ in range(3):
        result = duet("compare", "true", "true", "--runs", "2", "--method", "sequential")
        assert result.returncode == 0, result.stderr
    cut = duet("show", "--limit", "2")
    assert cut.returncode == 0, cut.stderr
    assert "#3 " in cut.stdout and "#1 " not in cut.stdout
    assert cut.stdout.rstrip().endswith("... and 1 older comparison, not shown (--limit 3 lists them all)"), cut.stdout
    for listed in (duet("show", "--limit", "3"), duet("show")):
        assert "#1 " in listed.stdout and "not shown" not in listed.stdout, listed.stdout
