"""Combining results databases (per-task SQLite files) into one store, without duplicates.

Identity across databases: a campaign is its ``uid``, a run is (campaign uid, run key), a comparison
is its ``uid``. Database ids differ between files and are never compared. Merging is idempotent: what
the destination already holds is skipped, so merging the same files twice, or after more tasks
finished, adds only what is new. A run that two sources hold with different content is a conflict:
the first one merged is kept and the conflict is reported.

Every added run (with its sides and iterations) and every added comparison (with its invocations) is
one transaction, so an interrupted merge leaves no half-copied record and can simply be run again.
Sources are opened as stores, which brings an old file's schema up to date in place (as any duet
command would); that is also what gives an old file's campaigns their stable uids.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from duetbench.errors import DuetError, StoreFailed
from duetbench.model.invocation import Invocation
from duetbench.store import schema
from duetbench.store.campaigns import CampaignRecord, CampaignStore, RunAlreadyStored, RunRecord
from duetbench.store.connect import inserted_id, write_transaction
from duetbench.store.db import ComparisonRecord, NotADatabase, Store, process_columns
from duetbench.store.location import StoreLocation, scrub_credentials
from duetbench.store.migrations import NewerSchema
from duetbench.store.postgres import without_nul


@dataclass
class MergeReport:
    sources: int = 0
    campaigns_added: int = 0
    campaigns_matched: int = 0  # already in the destination (same uid): only their new runs were added
    runs_added: int = 0
    runs_skipped_duplicate: int = 0  # already there with the same content
    runs_conflicting: int = 0  # already there with other content: the first one merged is kept
    comparisons_added: int = 0
    comparisons_skipped_duplicate: int = 0
    comparisons_conflicting: int = 0
    #: One line per conflict: which record, which source.
    conflicts: list[str] = field(default_factory=list)

    @property
    def added_anything(self) -> bool:
        return bool(self.campaigns_added or self.runs_added or self.comparisons_added)

    def __str__(self) -> str:
        parts = [f"{self.campaigns_added} campaign(s) added ({self.campaigns_matched} already there)",
                 f"{self.runs_added} run(s) added",
                 f"{self.runs_skipped_duplicate} duplicate run(s) skipped"]
        if self.runs_conflicting:
            parts.append(f"{self.runs_conflicting} conflicting run(s) not copied (the first kept)")
        if self.comparisons_added or self.comparisons_skipped_duplicate or self.comparisons_conflicting:
            parts.append(f"{self.comparisons_added} comparison(s) added")
            parts.append(f"{self.comparisons_skipped_duplicate} duplicate comparison(s) skipped")
        if self.comparisons_conflicting:
            parts.append(f"{self.comparisons_conflicting} conflicting comparison(s) not copied (the first kept)")
        return ", ".join(parts)


def merge_databases(sources: Sequence[str | Path | StoreLocation], dest: Store) -> MergeReport:
    """Copy every campaign, run and comparison of `sources` that `dest` lacks into `dest`."""
    report = MergeReport()
    for source in sources:
        location = StoreLocation.parse(source)
        if not location.exists():
            raise DuetError(f"no results database at {location}", hint="check the path of each file to merge")
        if location.same_place(dest.location):
            raise DuetError(f"{location} is both a source and the destination of the merge",
                            hint="give --db a different database than the files merged into it")
        try:
            src = Store(location)
        except (NewerSchema, StoreFailed) as exc:
            # The store's hint is about --db, the destination here, and its message may not name the file
            # (a schema newer than this duetbench's): this file is one of several to merge. Other errors (a
            # read-only file of an older schema: "copy it to a writable place") already speak of the file.
            message = exc.message if str(location) in exc.message else f"{location}: {exc.message}"
            raise DuetError(message, hint=_source_hint(exc), exit_code=exc.exit_code) from None
        try:
            _merge_campaigns(src, dest, report, str(location))
            _merge_comparisons(src, dest, report, str(location))
        finally:
            src.close()
        report.sources += 1
    return report


def _source_hint(exc: NewerSchema | StoreFailed) -> str:
    """What to do about a file to merge that the store could not open."""
    if isinstance(exc, NewerSchema):
        return "upgrade duetbench here to merge it, or leave it out"
    if isinstance(exc, NotADatabase):
        return "give duet merge results files duet wrote (duet compare, duet run, duet import)"
    # A results file all the same: opening it writes beside it (SQLite's journal; an older file's schema is
    # brought up to date in place), which a full disk or another writer holding it for long stops.
    return "make room where it is or let the process writing it finish, or merge a copy of it from elsewhere"


def _all_campaigns(store: CampaignStore) -> list[CampaignRecord]:
    with store.store.errors(), store.engine.connect() as conn:
        ids = conn.execute(schema.campaigns.select().with_only_columns(schema.campaigns.c.id)
                           .order_by(schema.campaigns.c.id)).scalars().all()
    return [c for c in (store.campaign(i) for i in ids) if c is not None]


def _merge_campaigns(src: Store, dest: Store, report: MergeReport, source_name: str) -> None:
    src_campaigns, dest_campaigns = CampaignStore(src), CampaignStore(dest)
    for campaign in _all_campaigns(src_campaigns):
        target = dest_campaigns.by_uid(campaign.uid)
        if target is None:
            target_id = _copy_campaign(dest, campaign)
            report.campaigns_added += 1
        else:
            target_id = target.id
            report.campaigns_matched += 1
        runs = src_campaigns.runs(campaign.id)
        # Keys as a PostgreSQL destination holds them (an imported name may hold a NUL: store/postgres.py).
        present = {without_nul(key) for key in dest_campaigns.done_keys(target_id)}
        kept: dict[str, RunRecord] | None = None
        for run in runs:
            key = without_nul(run.key)
            if key not in present:
                try:
                    dest_campaigns.add_run(target_id, run)
                    report.runs_added += 1
                    present.add(key)
                    continue
                except RunAlreadyStored:  # stored by a concurrent writer meanwhile: compare as below
                    pass
            if kept is None:
                kept = {without_nul(r.key): r for r in dest_campaigns.runs(target_id)}
            if key in kept and _same_run(kept[key], run):
                report.runs_skipped_duplicate += 1
            else:
                report.runs_conflicting += 1
                report.conflicts.append(f"campaign {campaign.name} ({campaign.uid}) run {run.key}: {source_name} "
                                        "differs from the run merged first, which is kept")


def _same_run(a: RunRecord, b: RunRecord) -> bool:
    def content(r: RunRecord) -> tuple[object, ...]:
        return (r.key, r.position, r.benchmark, r.method, r.repetition, r.launch_order, r.status, r.error, r.started,
                r.finished, r.run_dir, r.clock, r.notes, r.adaptive_warmup, r.sides,
                sorted(r.iterations, key=lambda i: (i.side, i.seq)))
    return _same_stored(content(a), content(b))


def _same_stored(a: object, b: object) -> bool:
    """Equal as a store keeps them: a PostgreSQL destination holds a source's NUL characters as U+FFFD."""
    return bool(without_nul(msgspec.to_builtins(a)) == without_nul(msgspec.to_builtins(b)))


def _copy_campaign(dest: Store, c: CampaignRecord) -> int:
    with dest.errors(), write_transaction(dest.engine) as conn:
        result = conn.execute(schema.campaigns.insert(), dict(
            name=c.name, path=c.path, source_sha256=c.source_sha256, source_text=c.source_text, created=c.created,
            finished=c.finished, status=c.status, seed=c.seed, schedule=c.schedule, plan=json.dumps(c.plan),
            run_dir=c.run_dir, options=json.dumps(scrub_credentials(c.options)),
            host=json.dumps(scrub_credentials(c.host)), artifacts=json.dumps(c.artifacts),
            tool_version=c.tool_version, uid=c.uid))
        return inserted_id(result)


def _merge_comparisons(src: Store, dest: Store, report: MergeReport, source_name: str) -> None:
    with src.errors(), src.engine.connect() as conn:
        ids = conn.execute(schema.comparisons.select().with_only_columns(schema.comparisons.c.id)
                           .order_by(schema.comparisons.c.id)).scalars().all()
    for comparison_id in ids:
        record = src.comparison(comparison_id)
        if record is None:
            continue
        invocations = src.invocations(comparison_id)
        existing = dest.comparison_by_uid(record.uid)
        if existing is None:
            _copy_comparison(dest, record, invocations)
            report.comparisons_added += 1
        elif _same_stored(dest.invocations(existing.id), invocations) and _same_comparison(existing, record):
            report.comparisons_skipped_duplicate += 1
        else:
            report.comparisons_conflicting += 1
            report.conflicts.append(f"comparison {record.name_a} vs {record.name_b} ({record.uid}): {source_name} "
                                    "differs from the comparison merged first, which is kept")


def _same_comparison(a: ComparisonRecord, b: ComparisonRecord) -> bool:
    return _same_stored((a.created, a.finished, a.status, a.method, a.command_a, a.command_b, a.seed),
                        (b.created, b.finished, b.status, b.method, b.command_a, b.command_b, b.seed))


def _copy_comparison(dest: Store, c: ComparisonRecord, invocations: list[Invocation]) -> None:
    columns = process_columns()
    with dest.errors(), write_transaction(dest.engine) as conn:
        result = conn.execute(schema.comparisons.insert(), dict(
            created=c.created, finished=c.finished, status=c.status, method=c.method, name_a=c.name_a,
            name_b=c.name_b, command_a=c.command_a, command_b=c.command_b, seed=c.seed,
            options=json.dumps(scrub_credentials(c.options)), host=json.dumps(scrub_credentials(c.host)),
            tool_version=c.tool_version, uid=c.uid))
        new_id = inserted_id(result)
        if invocations:
            conn.execute(schema.invocations.insert(), [
                {"comparison_id": new_id, "seq": seq, **{col: getattr(inv, col) for col in columns}}
                for seq, inv in enumerate(invocations)])
