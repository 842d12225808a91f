"""`duet show`'s list of stored comparisons (its unbounded intervals: tests/report/test_unbounded_tables.py)."""
from __future__ import annotations


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
