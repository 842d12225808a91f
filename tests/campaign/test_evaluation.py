"""From stored runs to the per-benchmark ratio: pairing, warmup discard, harness-internal names (seeded
simulations with a known true ratio)."""
from __future__ import annotations

import numpy as np
import pytest

from duetbench.campaign_evaluation import NotAnalyzable, evaluate_method, harness_names, measured
from duetbench.store.campaigns import RunRecord, StoredIteration

TRUE_RATIO = 1.05


def run(method: str, iterations: list[StoredIteration], key: str = "x", clock: str = "monotonic") -> RunRecord:
    return RunRecord(0, key, 0, "b", method, 0, "AB", "ok", "", 0.0, 0.0, "", clock, [], {"A": None, "B": None},  # type: ignore[dict-item]
                     iterations)


def duet_runs(n_runs: int, n_its: int, rng: np.random.Generator, name: str = "") -> list[RunRecord]:
    runs = []
    for r in range(n_runs):
        t, its = 0, []
        for i in range(n_its):
            shared = rng.lognormal(0, 0.2)  # interference hitting both sides alike
            a = 0.01 * shared * rng.lognormal(0, 0.005)
            b = 0.01 * TRUE_RATIO * shared * rng.lognormal(0, 0.005)
            its.append(StoredIteration("A", i, name, a, t, t + int(a * 1e9), i == 0))
            its.append(StoredIteration("B", i, name, b, t, t + int(b * 1e9), i == 0))
            t += int(max(a, b) * 1e9) + 1000
        runs.append(run("duet", its, key=f"d{r}"))
    return runs


def test_duet_pairs_by_index_and_recovers_the_truth() -> None:
    rng = np.random.default_rng(1)
    result = evaluate_method("duet", duet_runs(12, 20, rng), lambda n: 2, seed=1)
    assert result.ratio.low < TRUE_RATIO < result.ratio.high
    assert result.relative_ci_width < 0.01  # shared interference cancels in the pair ratio
    assert result.verdict == "slower"


def test_aduet_pairs_by_overlap() -> None:
    rng = np.random.default_rng(2)
    runs = [RunRecord(**{**r.__dict__, "method": "aduet"}) for r in duet_runs(10, 20, rng)]
    result = evaluate_method("aduet", runs, lambda n: 0, seed=2)
    assert result.ratio.low < TRUE_RATIO < result.ratio.high


def test_aduet_refuses_runs_without_timestamps() -> None:
    rng = np.random.default_rng(3)
    runs = duet_runs(3, 5, rng)
    stripped = [RunRecord(**{**r.__dict__, "method": "aduet", "clock": "none",
                             "iterations": [StoredIteration(i.side, i.seq, i.name, i.value_s, None, None, i.warmup)
                                            for i in r.iterations]}) for r in runs]
    with pytest.raises(NotAnalyzable, match="timestamps"):
        evaluate_method("aduet", stripped, lambda n: 0)


def test_sequential_uses_independent_runs() -> None:
    rng = np.random.default_rng(4)
    runs = []
    for r in range(10):
        for side, scale in (("A", 1.0), ("B", TRUE_RATIO)):
            level = rng.lognormal(0, 0.01)  # a run effect
            its = [StoredIteration(side, i, "", 0.01 * scale * level * rng.lognormal(0, 0.01), None, None, False)
                   for i in range(15)]
            runs.append(RunRecord(0, f"s{r}{side}", 0, "b", "sequential", r, side, "ok", "", 0, 0, "", "none", [],
                                  {side: None}, its))  # type: ignore[dict-item]
    result = evaluate_method("sequential", runs, lambda n: 0, seed=4)
    assert result.ratio.low < TRUE_RATIO < result.ratio.high


def test_warmup_discard_and_flags() -> None:
    its = [StoredIteration("A", i, "", float(i + 1), None, None, i < 2) for i in range(10)]
    kept = measured(its, "A", lambda n: n // 4)
    assert [it.value_s for it in kept] == [5.0, 6.0, 7.0, 8.0, 9.0, 10.0]  # 2 flagged, then 8 // 4 = 2 more


def test_names_are_analysed_separately() -> None:
    rng = np.random.default_rng(5)
    one = duet_runs(10, 10, rng, name="Foo.fast")
    two = duet_runs(10, 10, rng, name="Foo.slow")
    runs = [RunRecord(**{**a.__dict__, "iterations": a.iterations + b.iterations}) for a, b in zip(one, two)]
    assert harness_names(runs) == ["Foo.fast", "Foo.slow"]
    for name in ("Foo.fast", "Foo.slow"):
        result = evaluate_method("duet", runs, lambda n: 0, name=name, seed=5)
        assert result.ratio.low < TRUE_RATIO < result.ratio.high


def test_failed_runs_are_left_out_and_nothing_left_says_so() -> None:
    rng = np.random.default_rng(6)
    runs = [RunRecord(**{**r.__dict__, "status": "failed"}) for r in duet_runs(3, 5, rng)]
    with pytest.raises(NotAnalyzable):
        evaluate_method("duet", runs, lambda n: 0)
