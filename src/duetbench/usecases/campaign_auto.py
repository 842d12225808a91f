"""`methods: {auto: N}` in a campaign: choose the method from the benchmark's pilot, then run only it.

The plan (plan/campaign.py) gives such a benchmark N duet runs and N sequential repetitions, its pilot —
duet run 0 and sequential repetition 0 — first. Once the pilot is stored, `decide` judges it
(analyze.choice.choose_from_runs), records the choice in the campaign's options (under "auto"), marks the
other method's pilot runs "pilot" (kept, never analysed) and names the method whose remaining runs
`duet run` skips. The choice is re-read, not re-made, on `--resume`.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from duetbench.analyze.choice import MethodChoice, choose_from_runs
from duetbench.analyze.sync import from_notes
from duetbench.config.campaign import BenchmarkSpec
from duetbench.model.table import discard_leading
from duetbench.plan.campaign import AUTO_CANDIDATES
from duetbench.store.campaigns import CampaignStore, RunRecord, iteration_table


def is_auto(bench: BenchmarkSpec) -> bool:
    return "auto" in bench.methods


def planned_runs(bench: BenchmarkSpec, method: str) -> int:
    """How many runs the benchmark asks of `method` (for auto: N of each candidate, as planned)."""
    if is_auto(bench):
        return bench.methods["auto"] if method in AUTO_CANDIDATES else 0
    return bench.methods.get(method, 0)


def pilot_keys(bench: BenchmarkSpec) -> dict[str, list[str]]:
    """The pilot runs' keys per method (as PlannedRun.key spells them)."""
    return {"duet": [f"{bench.name}/duet/0"], "sequential": [f"{bench.name}/sequential/0/A",
                                                          f"{bench.name}/sequential/0/B"]}


def recorded(campaigns: CampaignStore, campaign_id: int, bench: BenchmarkSpec) -> dict[str, Any] | None:
    """The choice already made for this benchmark (a resumed campaign), or None."""
    record = campaigns.campaign(campaign_id)
    return (record.options.get("auto") or {}).get(bench.name) if record else None


def decide(campaigns: CampaignStore, campaign_id: int, bench: BenchmarkSpec) -> dict[str, Any] | None:
    """Once the benchmark's pilot runs are all stored: choose, record, set the loser's pilot aside, and return
    the recorded choice ({"method", "reason", ...}); None while a pilot run is still to come."""
    keys = pilot_keys(bench)
    runs = {r.key: r for r in campaigns.runs(campaign_id, with_iterations=False) if r.benchmark == bench.name}
    if any(k not in runs for ks in keys.values() for k in ks):
        return None
    ok = {m: all(runs[k].status == "ok" for k in ks) for m, ks in keys.items()}
    # An unsynchronized duet pilot (a harness without the duet hook) says the duet runs after it will not be
    # paired by iteration either: its spread of index pairs would judge pairs that never ran together.
    sync = from_notes(runs[keys["duet"][0]].notes)
    made: dict[str, Any]
    if ok["duet"] and ok["sequential"] and sync is not None and not sync.synchronized:
        made = {"method": "sequential", "reason": f"sequential: the pilot's duet run was not synchronized "
                                                  f"({sync.cause}), so its iterations cannot be paired",
                "cpu_hint": None, "candidates": [], "pilot": keys}
    elif ok["duet"] and ok["sequential"]:
        choice = _judge(campaigns, campaign_id, bench, runs)
        made = {**choice.to_dict(), "pilot": keys}
    else:
        method = "sequential" if ok["sequential"] else "duet"
        failed = "duet run" if not ok["duet"] else "sequential repetition"
        made = {"method": method, "reason": f"{method}: the pilot's {failed} failed, so it could not be judged",
                "cpu_hint": None, "candidates": [], "pilot": keys}
    campaigns.set_auto_choice(campaign_id, bench.name, made)
    campaigns.set_pilot(campaign_id, keys[loser(made)])
    return made


def _judge(campaigns: CampaignStore, campaign_id: int, bench: BenchmarkSpec, runs: dict[str, RunRecord]
           ) -> MethodChoice:
    table = iteration_table(campaigns, campaign_id)
    mine = table.where(((table.benchmark == bench.name)
                        | np.char.startswith(table.benchmark.astype(str), bench.name + "/")) & (table.run == 0))
    measured = discard_leading(mine, rule=bench.warmup.discard).measured()
    arrays: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {m: [] for m in AUTO_CANDIDATES}
    for name in sorted(set(measured.benchmark.tolist())):
        for method in AUTO_CANDIDATES:
            part = measured.where((measured.benchmark == name) & (measured.method == method))
            sides = []
            for side in ("A", "B"):
                s = part.where(part.side == side)
                sides.append(s.value[np.argsort(s.index, kind="stable")])
            arrays[method].append((sides[0], sides[1]))
    keys = pilot_keys(bench)

    def seconds(method: str) -> float:
        return sum(runs[k].finished - runs[k].started for k in keys[method])

    return choose_from_runs(arrays["duet"], seconds("duet"), arrays["sequential"], seconds("sequential"))


def loser(choice: dict[str, Any]) -> str:
    return next(m for m in AUTO_CANDIDATES if m != choice["method"])
