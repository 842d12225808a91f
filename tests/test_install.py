"""The install builds the native programs, and says clearly when it cannot."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.skipif(importlib.util.find_spec("setuptools") is None, reason="setuptools is not installed here")
def test_build_without_a_compiler_fails_with_a_clear_message(tmp_path: Path) -> None:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "python").symlink_to(sys.executable)
    env = {k: v for k, v in os.environ.items() if k != "CC"}
    env["PATH"] = str(bindir)  # no cc, gcc or clang on it
    result = subprocess.run([sys.executable, "setup.py", "-q", "build_py", "--build-lib", str(tmp_path / "out")],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode != 0
    assert "needs a C compiler" in result.stderr and "build-essential" in result.stderr
    assert "Traceback" not in result.stderr


def test_installed_package_ships_the_native_programs(native_dir: Path) -> None:
    for name in ("duet-launch", "duet-workload"):
        assert os.access(native_dir / name, os.X_OK), name
