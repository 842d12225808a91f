"""What the campaign report says about where its numbers come from: facts, commands, environment."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from duetbench.report.campaign_context import campaign_commands, campaign_environment, campaign_facts
from duetbench.store.campaigns import CampaignRecord

CAMPAIGN = """campaign: c
methods: {duet: 2}
benchmarks:
  changed:
    A: python3 bench.py --work 'a b'
    B: python3 bench.py --work 'a c'
  same:
    command: ./run.sh --n 3
    shell: true
"""


def record(tmp_path: Path, text: str = CAMPAIGN, **changes: Any) -> CampaignRecord:
    values: dict[str, Any] = dict(
        id=3, name="c", path=str(tmp_path / "campaign.yml"), source_sha256="", source_text=text, created=0.0,
        finished=90.0, status="finished", seed=42, schedule="rmit", plan=[], run_dir="", options={},
        host={"hostname": "box", "kernel": "6.1.0", "machine": "x86_64", "cpu_model": "Test CPU", "cpu_count": 4,
              "usable_cpus": [0, 1]},
        artifacts={"uname": "Linux box " + "x" * 3000}, tool_version="9.9")
    values.update(changes)
    return CampaignRecord(**values)


def test_commands_as_written_per_benchmark_and_side(tmp_path: Path) -> None:
    assert campaign_commands(record(tmp_path)) == {
        "changed": {"A": "python3 bench.py --work 'a b'", "B": "python3 bench.py --work 'a c'"},
        "same": {"A": "./run.sh --n 3 (run by /bin/sh -c)", "B": "./run.sh --n 3 (run by /bin/sh -c)"},
    }


def test_commands_that_cannot_be_read_back_are_left_to_the_campaign_file(tmp_path: Path) -> None:
    # An import, a file from another tool: no error, no commands. A cwd that no longer exists on this machine
    # does not change the commands that ran: they are shown (the file read back as stored, not as a run's).
    gone = CAMPAIGN.replace("methods: {duet: 2}", "methods: {duet: 2}\ncwd: missing-dir")
    assert campaign_commands(record(tmp_path, gone)) == campaign_commands(record(tmp_path))
    assert campaign_commands(record(tmp_path, '{"format": "jmh"}', schedule="imported")) == {}
    assert campaign_commands(record(tmp_path, "not: [a campaign")) == {}


def test_facts_and_environment(tmp_path: Path) -> None:
    facts = campaign_facts(record(tmp_path))
    assert facts == {"campaign": "c (#3), finished", "file": str(tmp_path / "campaign.yml"), "seed": "42",
                     "schedule": "rmit", "started": "1970-01-01 00:00 UTC", "finished": "1970-01-01 00:01 UTC",
                     "host": "box", "CPU": "Test CPU, 4 CPUs (2 usable)", "kernel": "6.1.0 x86_64", "duetbench": "9.9"}
    assert campaign_facts(record(tmp_path, host={}, finished=None))["CPU"] == "unknown CPU"
    env = campaign_environment(record(tmp_path))
    assert env["hostname"] == "box" and len(env["artifact: uname"]) == 2000
