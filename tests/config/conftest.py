"""Helpers for the campaign-file tests: write a campaign into a fresh directory and load it."""
from __future__ import annotations

import textwrap
from pathlib import Path
from collections.abc import Callable

import pytest

from duetbench.config.campaign import Campaign, CampaignError, parse_campaign


@pytest.fixture()
def load(tmp_path: Path) -> Callable[[str], Campaign]:
    """Parse a campaign (dedented) as if it were ``tmp_path/campaign.yml``."""

    def run(text: str) -> Campaign:
        return parse_campaign(textwrap.dedent(text), tmp_path / "campaign.yml", display="campaign.yml")

    return run


@pytest.fixture()
def problems(tmp_path: Path) -> Callable[[str], list[str]]:
    """The error lines for a campaign (dedented) that must not load."""

    def run(text: str) -> list[str]:
        with pytest.raises(CampaignError) as info:
            parse_campaign(textwrap.dedent(text), tmp_path / "campaign.yml", display="campaign.yml")
        return str(info.value).splitlines()

    return run
