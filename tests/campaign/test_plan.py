"""The campaign plan: every requested run exactly once, RMIT interleaving, seeded and reproducible."""
from __future__ import annotations

from collections import Counter

import pytest

from duetbench.plan.campaign import PlannedRun, RunRequest, make_plan

REQUESTS = [RunRequest("fib", {"sequential": 3, "duet": 4, "aduet": 2}), RunRequest("sort", {"duet": 5})]


def test_every_requested_run_once() -> None:
    plan = make_plan(REQUESTS, schedule="rmit", seed=1, cpus=(0, 1))
    keys = [p.key for p in plan]
    assert len(keys) == len(set(keys)) == 3 * 2 + 4 + 2 + 5
    count = Counter((p.benchmark, p.method) for p in plan)
    assert count == {("fib", "sequential"): 6, ("fib", "duet"): 4, ("fib", "aduet"): 2, ("sort", "duet"): 5}
    assert [p.position for p in plan] == list(range(len(plan)))
    # a sequential repetition is one A run and one B run
    seq = Counter(p.repetition for p in plan if p.method == "sequential")
    assert all(v == 2 for v in seq.values())
    assert {p.sides[0] for p in plan if p.method == "sequential"} == {"A", "B"}


def test_seeded_and_reproducible() -> None:
    one = make_plan(REQUESTS, schedule="rmit", seed=7, cpus=(0, 1))
    assert one == make_plan(REQUESTS, schedule="rmit", seed=7, cpus=(0, 1))
    assert [p.key for p in one] != [p.key for p in make_plan(REQUESTS, schedule="rmit", seed=8, cpus=(0, 1))]


def test_rmit_interleaves_benchmarks_and_methods() -> None:
    plan = make_plan([RunRequest("x", {"duet": 20, "sequential": 10}), RunRequest("y", {"aduet": 20})],
                     schedule="rmit", seed=3, cpus=(0, 1))
    labels = [(p.benchmark, p.method) for p in plan]
    switches = sum(1 for a, b in zip(labels, labels[1:]) if a != b)
    # 60 runs in 3 groups: ordered would switch twice; a shuffle switches about 2/3 of the time
    assert switches > 25


def test_ordered_keeps_file_and_method_order() -> None:
    plan = make_plan(REQUESTS, schedule="ordered", seed=1, cpus=(0, 1))
    assert [(p.benchmark, p.method) for p in plan][:6] == [("fib", "sequential")] * 6
    assert [p.method for p in plan if p.benchmark == "fib"] == ["sequential"] * 6 + ["duet"] * 4 + ["aduet"] * 2
    assert [p.benchmark for p in plan][-5:] == ["sort"] * 5


def test_cpu_and_order_randomized_and_balanced() -> None:
    for n in (2, 3, 7, 200):
        plan = make_plan([RunRequest("x", {"duet": n, "sequential": n})], schedule="rmit", seed=n, cpus=(2, 3))
        duets = [p for p in plan if p.method == "duet"]
        assert all(sorted(p.cpus.values()) == [2, 3] for p in duets)
        # exactly balanced (within one for odd n): a slower CPU cannot bias the ratio
        assert abs(2 * sum(p.cpus["A"] == 2 for p in duets) - n) <= 1
        assert abs(2 * sum(p.sides == ("A", "B") for p in duets) - n) <= 1
        for side in "AB":
            mine = [p for p in plan if p.method == "sequential" and p.sides == (side,)]
            assert len(mine) == n and abs(2 * sum(p.cpus[side] == 2 for p in mine) - n) <= 1
    # and random: different seeds give different assignments
    one = [p.cpus["A"] for p in make_plan([RunRequest("x", {"duet": 20})], schedule="ordered", seed=1, cpus=(0, 1))]
    two = [p.cpus["A"] for p in make_plan([RunRequest("x", {"duet": 20})], schedule="ordered", seed=2, cpus=(0, 1))]
    assert one != two


def test_json_round_trip() -> None:
    from dataclasses import asdict

    for run in make_plan(REQUESTS, schedule="rmit", seed=2, cpus=(0, 1)):
        assert PlannedRun.from_json(run.to_json()) == run
        # written out by hand (asdict's deep copy was slow): every field, in the order asdict gives them
        assert list(run.to_json().items()) == list({**asdict(run), "sides": list(run.sides)}.items())


def test_bad_schedule() -> None:
    with pytest.raises(ValueError, match="schedule"):
        make_plan(REQUESTS, schedule="random", seed=1, cpus=(0, 1))


def test_dry_run_table_of_a_huge_plan_is_cut_short() -> None:
    # 1 000 000 runs per method are valid: the table of all of them took rich minutes and gigabytes.
    import io
    import re

    from rich.console import Console

    from duetbench.report.campaign import print_plan

    plan = make_plan([RunRequest("b", {"duet": 1500})], schedule="rmit", seed=1, cpus=(0, 1))
    out = io.StringIO()
    print_plan(Console(file=out, width=120), "c", 1, "rmit", plan, {}, done={plan[-1].key})
    text = out.getvalue()
    assert "1500 runs" in text and "... and 500 more runs, not shown (1 of them done)" in text
    assert re.search(r"^│\s*1000 │", text, re.M) and not re.search(r"^│\s*1001 │", text, re.M)
