"""Shared by the tests that fill or lock a file system: a small tmpfs mounted where only the test sees it."""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest

UNSHARE = shutil.which("unshare")


def in_own_mounts(script: str, env: dict[str, str] | None = None, timeout: float = 120
                  ) -> subprocess.CompletedProcess[str]:
    """`script` (sh) in a private mount namespace, where tmpfs mounts touch nobody else; skipped where
    this process may not make one (not root, no unshare(1), a sandbox that forbids it)."""
    if UNSHARE is None or os.geteuid() != 0:
        pytest.skip("needs root and unshare(1) to mount a small tmpfs privately")
    probe = subprocess.run([UNSHARE, "-m", "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"unshare -m is not permitted here: {probe.stderr.strip()}")
    return subprocess.run([UNSHARE, "-m", "sh", "-c", script], capture_output=True, text=True, env=env,
                          timeout=timeout)
