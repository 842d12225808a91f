"""docs/campaign-format.md stays true: its YAML examples load and its error example is what the loader says."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from duetbench.config.campaign import CampaignError, load_campaign, parse_campaign

DOC = (Path(__file__).resolve().parents[2] / "docs" / "campaign-format.md").read_text(encoding="utf-8")
YAML_BLOCKS = re.findall(r"```yaml\n(.*?)```", DOC, flags=re.S)


def test_doc_has_yaml_examples() -> None:
    assert len(YAML_BLOCKS) >= 2


@pytest.mark.parametrize("block", YAML_BLOCKS)
def test_yaml_examples_load(block: str, tmp_path: Path) -> None:
    import textwrap

    text = textwrap.dedent(block)
    if not text.startswith("campaign:"):
        text = "campaign: from-the-docs\n" + text
    assert parse_campaign(text, tmp_path / "campaign.yml").benchmarks


def test_error_example_is_what_the_loader_reports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    section = DOC[DOC.index("## Errors"):]
    numbered, reported = re.findall(r"```text\n(.*?)```", section, flags=re.S)[:2]
    text = "".join(re.sub(r"^ ?\d+  ", "", line) for line in numbered.splitlines(keepends=True))
    (tmp_path / "campaign.yml").write_text(text)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CampaignError) as info:
        load_campaign("campaign.yml")
    assert str(info.value) + "\n" == reported.replace("/home/me/bench", str(tmp_path))
