"""Records to store in the store tests: invocations, runs and campaigns with values that exercise every
column (64-bit timestamps, None where allowed, non-ASCII text)."""
from __future__ import annotations

from typing import Any

from duetbench.execute.invocation import Invocation
from duetbench.store.campaigns import CampaignStore, RunRecord, StoredIteration

BIG_NS = 1_700_000_000_123_456_789  # an epoch timestamp in ns: needs 64 bits


def invocation(side: str = "A", index: int = 0, *, wall: float = 0.1, warmup: bool = False,
               start_ns: int = BIG_NS) -> Invocation:
    return Invocation(side=side, index=index, pair=index, warmup=warmup, status="ok", exit_code=0, signal=0,
                      start_ns=start_ns + index * 1_000_000, end_ns=start_ns + index * 1_000_000 + int(wall * 1e9),
                      wall_s=wall, cpu_s=wall * 0.9, user_s=wall * 0.8, sys_s=wall * 0.1, cgroup_cpu_s=None,
                      maxrss_kb=5_000_000_000, nvcsw=3, nivcsw=4, minflt=2**33, majflt=0, cpu_requested=1,
                      cpu_seen=1, orphans_reaped=0, steal_s=None, error="", stderr_tail="größer → ✓")


def run(key: str, position: int = 0, *, method: str = "duet", values: tuple[float, ...] = (0.1, 0.2, 0.3),
        sides: str = "AB", status: str = "ok") -> RunRecord:
    bench, *_ = key.split("/")
    iterations = [StoredIteration(side, seq, "", v * (1.1 if side == "B" else 1.0), BIG_NS + seq * 10**9,
                                  BIG_NS + seq * 10**9 + int(v * 1e9), seq == 0)
                  for side in sides for seq, v in enumerate(values)]
    return RunRecord(id=0, key=key, position=position, benchmark=bench, method=method, repetition=position,
                     launch_order=sides, status=status, error="", started=1.5e9 + position, finished=1.5e9 + position + 1,
                     run_dir=f"/runs/{key}", clock="monotonic", notes=["note"],
                     sides={s: invocation(s, position) for s in sides}, iterations=iterations)


def begin_campaign(campaigns: CampaignStore, name: str = "c", uid: str | None = None, **extra: Any) -> int:
    values: dict[str, Any] = dict(name=name, path=f"/x/{name}.yml", source_sha256="0" * 64, source_text="campaign: c",
                                  seed=2**40, schedule="rmit", plan=[{"key": "b/duet/0"}], run_dir="",
                                  options={"executor": "local"}, host={"cpus": 2}, tool_version="0.1.0")
    values.update(extra)
    return campaigns.begin(**values, uid=uid)


def comparable(r: RunRecord) -> tuple:
    """A run without its database id (which differs between databases)."""
    return (r.key, r.position, r.benchmark, r.method, r.repetition, r.launch_order, r.status, r.error, r.started,
            r.finished, r.run_dir, r.clock, r.notes, r.sides, r.iterations)
