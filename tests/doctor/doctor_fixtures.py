"""Where the copies of /proc and /sys from other machines live (see fixtures/README.md)."""
from __future__ import annotations

from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"
MACHINES = ("vm-firecracker", "intel-baremetal", "amd-acpi-boost")
