"""What a campaign's HTML report says about where its numbers come from, read from the stored campaign: the
host and the artifacts recorded on it, what identifies the campaign, and each benchmark's commands."""
from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from duetbench.errors import DuetError

if TYPE_CHECKING:
    from duetbench.config.campaign import Campaign
    from duetbench.store.campaigns import CampaignRecord


def campaign_environment(record: CampaignRecord) -> dict[str, Any]:
    """Every fact recorded about the host, and each artifact's output (its first 2,000 characters)."""
    return {**record.host, **{f"artifact: {k}": v[:2000] for k, v in record.artifacts.items()}}


def _when(timestamp: float | None) -> str:
    return "—" if timestamp is None else datetime.fromtimestamp(timestamp, tz=UTC).strftime("%Y-%m-%d %H:%M UTC")


def campaign_facts(record: CampaignRecord) -> dict[str, str]:
    """What identifies the campaign and its machine, in the order a reader checks them."""
    host = record.host
    cpus = host.get("usable_cpus")
    cpu = str(host.get("cpu_model") or "unknown CPU")
    if host.get("cpu_count"):
        cpu += f", {host['cpu_count']} CPUs" + (f" ({len(cpus)} usable)" if isinstance(cpus, list) else "")
    return {
        "campaign": f"{record.name} (#{record.id}), {record.status}",
        "file": record.path or "—",
        "seed": str(record.seed),
        "schedule": record.schedule,
        "started": _when(record.created),
        "finished": _when(record.finished),
        "host": str(host.get("hostname") or "—"),
        "CPU": cpu,
        "kernel": " ".join(str(host[k]) for k in ("kernel", "machine") if host.get(k)) or "—",
        "duetbench": record.tool_version,
    }


def campaign_commands(record: CampaignRecord) -> dict[str, dict[str, str]]:
    """Per benchmark, the command of side A and of side B as `duet run` ran them, from the stored campaign
    file; empty when that file cannot be read back (an import, a file another version wrote): the report then
    shows the file itself."""
    campaign = _stored_campaign(record)
    if campaign is None:
        return {}
    out: dict[str, dict[str, str]] = {}
    for bench in campaign.benchmarks:
        for side, spec in bench.sides.items():
            # As written in the file: a command split and joined again would lose its quoting.
            where = f"   (in container {spec.container.image})" if spec.container else ""
            out.setdefault(bench.name, {})[side] = spec.command + (" (run by /bin/sh -c)" if spec.shell else "") + where
    return out


def campaign_warmups(record: CampaignRecord) -> dict[str, Callable[[int], int]]:
    """Per benchmark, its `warmup:` rule from the stored campaign file, so that `duet analyze` and `duet report`
    drop the iterations `duet run`'s closing table dropped; empty when the file cannot be read back."""
    campaign = _stored_campaign(record)
    if campaign is None:
        return {}
    return {bench.name: bench.warmup.discard for bench in campaign.benchmarks
            if bench.warmup.count or bench.warmup.fraction}


def _stored_campaign(record: CampaignRecord) -> Campaign | None:
    """The campaign file stored with `record`, parsed as stored (a cwd since deleted still reads); None for an
    import or a file that no longer parses (written for another version)."""
    from duetbench.config.campaign import parse_campaign

    if record.schedule == "imported" or not record.source_text:
        return None
    try:
        return parse_campaign(record.source_text, Path(record.path or "campaign.yml"), stored=True)
    except DuetError:
        return None
