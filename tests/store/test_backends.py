"""The store's whole behaviour, the same on a SQLite file and on a real PostgreSQL database."""
from __future__ import annotations

import dataclasses
import json
import uuid

import msgspec
import numpy as np
import pytest
from sqlalchemy import select, text

from duetbench.errors import DuetError
from duetbench.execute.invocation import Invocation
from duetbench.store import campaigns as campaigns_module
from duetbench.store import schema
from duetbench.store.campaigns import CampaignStore, iteration_table, process_cpu_table
from duetbench.store.db import Store
from duetbench.store.migrations import HEAD
from store_samples import BIG_NS, begin_campaign, comparable, invocation, run


@pytest.fixture()
def store(db_location: str):
    s = Store(db_location)
    yield s
    s.close()


def test_comparisons_round_trip(store: Store) -> None:
    cid = store.begin_comparison(method="duet", name_a="a", name_b="b", command_a="sleep 1", command_b="sleep 2",
                                 seed=2**40, options={"runs": 3, "nested": {"x": [1, 2]}}, host={"cpus": 2},
                                 tool_version="0.1.0")
    written = [invocation(side, i, wall=0.1 + i / 100, warmup=i == 0) for i in range(3) for side in "AB"]
    for inv in written:
        store.add_invocation(cid, inv)
    store.finish_comparison(cid, "complete")
    assert store.invocations(cid) == written
    record = store.comparison(cid)
    assert record is not None and record.status == "complete" and record.finished is not None
    assert record.options == {"runs": 3, "nested": {"x": [1, 2]}} and record.seed == 2**40
    assert str(uuid.UUID(record.uid)) == record.uid
    assert store.comparison_by_uid(record.uid) == record
    assert store.comparison(cid + 1) is None and store.comparison_by_uid("nope") is None
    second = store.begin_comparison(method="sequential", name_a="a", name_b="b", command_a="x", command_b="y",
                                    seed=1, options={}, host={}, tool_version="0.1.0", uid="given-uid")
    assert [c.id for c in store.comparisons()] == [second, cid]
    assert [c.id for c in store.comparisons(limit=1)] == [second]
    assert store.comparison(second).uid == "given-uid"  # type: ignore[union-attr]
    with pytest.raises(Exception):
        store.begin_comparison(method="x", name_a="a", name_b="b", command_a="x", command_b="y", seed=1,
                               options={}, host={}, tool_version="0", uid="given-uid")


def test_invocation_sequence_continues_in_a_new_process(db_location: str) -> None:
    """A second Store on the same comparison (e.g. after a restart) appends after the stored invocations."""
    first = Store(db_location)
    cid = first.begin_comparison(method="duet", name_a="a", name_b="b", command_a="x", command_b="y", seed=1,
                                 options={}, host={}, tool_version="0")
    first.add_invocation(cid, invocation("A", 0))
    first.close()
    again = Store(db_location)
    again.add_invocation(cid, invocation("B", 1))
    assert [i.side for i in again.invocations(cid)] == ["A", "B"]
    again.close()


def test_campaign_round_trip(store: Store) -> None:
    campaigns = CampaignStore(store)
    cid = begin_campaign(campaigns, "nightly")
    campaigns.set_run_dir(cid, "/tmp/runs/1-nightly")
    campaigns.set_artifacts(cid, {"uname": "Linux"})
    runs = [run("fib/duet/0", 0), run("fib/sequential/0/A", 1, method="sequential", sides="A"),
            run("io/duet/0", 2, status="failed")]
    ids = [campaigns.add_run(cid, r) for r in runs]
    assert len(set(ids)) == 3
    campaigns.set_status(cid, "finished")

    record = campaigns.campaign(cid)
    assert record is not None
    assert (record.name, record.status, record.run_dir, record.artifacts, record.seed) == (
        "nightly", "finished", "/tmp/runs/1-nightly", {"uname": "Linux"}, 2**40)
    assert record.finished is not None and record.plan == [{"key": "b/duet/0"}]
    assert campaigns.by_uid(record.uid) == record and campaigns.by_uid("other") is None
    assert campaigns.done_keys(cid) == {r.key for r in runs}
    back = campaigns.runs(cid)
    assert [comparable(r) for r in back] == [comparable(r) for r in runs]
    assert [r.id for r in back] == ids
    assert back[0].iterations[0].start_ns == BIG_NS  # 64-bit timestamps survive
    assert [len(r.iterations) for r in campaigns.runs(cid, with_iterations=False)] == [0, 0, 0]

    other = begin_campaign(campaigns, "other")
    campaigns.add_run(other, run("fib/duet/0", 0))  # the same key in another campaign is another run
    assert [c.id for c in campaigns.campaigns()] == [other, cid]
    assert [c.id for c in campaigns.campaigns(name="nightly")] == [cid]
    campaigns.set_status(other, "running")
    assert campaigns.campaign(other).finished is None  # type: ignore[union-attr]

    table = iteration_table(campaigns, cid)  # failed runs left out
    assert len(table.value) == 3 * 2 + 3
    assert set(table.benchmark) == {"fib"} and set(table.method) == {"duet", "sequential"}
    assert np.all(table.end_ns > table.start_ns)
    assert list(table.warmup[:3]) == [True, False, False]
    assert len(iteration_table(campaigns, cid, include_failed=True).value) == 3 * 2 * 2 + 3
    cpu = process_cpu_table(campaigns, cid)
    assert sorted(zip(cpu.method, cpu.side)) == [("duet", "A"), ("duet", "B"), ("sequential", "A")]
    assert len(iteration_table(campaigns, 999).value) == 0 and len(process_cpu_table(campaigns, 999).value) == 0


def test_a_run_is_stored_whole_or_not_at_all(store: Store) -> None:
    campaigns = CampaignStore(store)
    cid = begin_campaign(campaigns)
    broken = run("fib/duet/0")
    broken.iterations.append(dataclasses.replace(broken.iterations[0], seq=99, value_s=None))  # NOT NULL
    with pytest.raises(Exception):
        campaigns.add_run(cid, broken)
    assert campaigns.done_keys(cid) == set()
    with store.engine.connect() as conn:
        assert conn.execute(select(schema.run_sides.c.side)).all() == []
        assert conn.execute(select(schema.iterations.c.seq)).all() == []
    campaigns.add_run(cid, run("fib/duet/0"))
    with pytest.raises(DuetError, match="already stored"):
        campaigns.add_run(cid, run("fib/duet/0"))
    assert len(campaigns.runs(cid)) == 1


def test_runs_stored_at_once_are_stored_as_one_at_a_time(store: Store, monkeypatch) -> None:
    # `duet import` stores its runs with add_runs (executemany, several runs per transaction).
    monkeypatch.setattr(campaigns_module, "_RUNS_PER_TRANSACTION", 2)  # 2 + 2 + 1 (the one-run path)
    campaigns = CampaignStore(store)
    runs = [run("fib/duet/0", 0), run("fib/sequential/0/A", 1, method="sequential", sides="A"),
            run("io/duet/0", 2, status="failed"), dataclasses.replace(run("io/duet/1", 3), iterations=[]),
            dataclasses.replace(run("io/duet/2", 4), adaptive_warmup={"outcome": "steady", "iteration": 3})]
    one, many = begin_campaign(campaigns, "one"), begin_campaign(campaigns, "many")
    for r in runs:
        campaigns.add_run(one, r)
    ids = campaigns.add_runs(many, iter(runs))
    back = campaigns.runs(many)
    assert [r.id for r in back] == ids and len(set(ids)) == len(runs)
    assert [comparable(r) + (r.adaptive_warmup,) for r in back] == [
        comparable(r) + (r.adaptive_warmup,) for r in campaigns.runs(one)]
    assert len(iteration_table(campaigns, many, include_failed=True).value) == 3 * 6 + 3
    with pytest.raises(DuetError, match="run io/duet/0 of campaign .* already stored"):
        campaigns.add_runs(many, [run("new/duet/0"), run("io/duet/0")])
    assert "new/duet/0" not in campaigns.done_keys(many)  # its transaction was rolled back whole


def test_passwords_in_options_are_masked(store: Store) -> None:
    campaigns = CampaignStore(store)
    secret = "postgresql://me:s3cret@db.example/results"
    cid = begin_campaign(campaigns, options={"db": secret, "list": [secret]}, host={"note": f"from {secret}"})
    comparison = store.begin_comparison(method="duet", name_a="a", name_b="b", command_a="x", command_b="y", seed=1,
                                        options={"db": secret}, host={}, tool_version="0")
    record = campaigns.campaign(cid)
    assert record is not None
    assert record.options == {"db": "postgresql://me:***@db.example/results",
                              "list": ["postgresql://me:***@db.example/results"]}
    assert record.host == {"note": "from postgresql://me:***@db.example/results"}
    assert store.comparison(comparison).options["db"] == "postgresql://me:***@db.example/results"  # type: ignore
    with store.engine.connect() as conn:
        dump = json.dumps([list(r) for t in ("campaigns", "comparisons") for r in conn.execute(text(f"SELECT * FROM {t}"))])
    assert "s3cret" not in dump


def test_schema_is_migrated_once(db_location: str) -> None:
    for _ in range(2):
        s = Store(db_location)
        with s.engine.connect() as conn:
            versions = conn.execute(select(schema.schema_migrations.c.version)).scalars().all()
        s.close()
        assert versions == list(range(1, HEAD + 1))


def _invocation_class(with_activity: bool) -> type:
    """Invocation as it is with or without its `activity` field, whichever the real one has now."""
    info = msgspec.structs.fields(Invocation)
    base = [(f.name, f.type) if f.required else (f.name, f.type, f.default) for f in info if f.name != "activity"]
    extra = [("activity", str | None, None)] if with_activity else []
    return msgspec.defstruct("Invocation", base + extra)


def test_activity_is_stored_when_the_invocation_has_it(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """The tables have `activity`; the store must work whether the Invocation Struct has the field."""
    import duetbench.store.db as db_module

    plain = {k: v for k, v in invocation().to_dict().items() if k != "activity"}
    with_activity, without = _invocation_class(True), _invocation_class(False)
    monkeypatch.setattr(db_module, "Invocation", with_activity)
    cid = store.begin_comparison(method="duet", name_a="a", name_b="b", command_a="x", command_b="y", seed=1,
                                 options={}, host={}, tool_version="0")
    store.add_invocation(cid, with_activity(**plain, activity='{"kworker": 0.01}'))
    campaigns = CampaignStore(store)
    camp = begin_campaign(campaigns)
    r = run("fib/duet/0")
    r.sides = {s: with_activity(**{**inv.to_dict(), "activity": f'{{"side": "{s}"}}'})
               for s, inv in r.sides.items()}
    campaigns.add_run(camp, r)
    assert store.invocations(cid)[0].activity == '{"kworker": 0.01}'
    assert campaigns.runs(camp)[0].sides["B"].activity == '{"side": "B"}'

    monkeypatch.setattr(db_module, "Invocation", without)  # an Invocation without the field reads and writes too
    assert store.invocations(cid)[0] == without(**plain)
    store.add_invocation(cid, without(**plain))
    assert len(store.invocations(cid)) == 2
