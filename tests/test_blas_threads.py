"""duetbench's own process runs numpy's BLAS on one thread (its worker threads spin beside the sides a
comparison measures, `duetbench/_blas.py`), while the environment its commands inherit stays the user's."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

PROBE = """
import json, os, subprocess, sys
{first}
import numpy
threads = len(os.listdir("/proc/self/task"))
child = subprocess.run([sys.executable, "-c", "import os; print(os.environ.get('OPENBLAS_NUM_THREADS'))"],
                       capture_output=True, text=True, check=True).stdout.strip()
print(json.dumps({{"threads": threads, "env": os.environ.get("OPENBLAS_NUM_THREADS"), "child": child}}))
"""


def _probe(first: str, env_value: str | None) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                                                            "MKL_NUM_THREADS")}
    if env_value is not None:
        env["OPENBLAS_NUM_THREADS"] = env_value
    out = subprocess.run([sys.executable, "-c", PROBE.format(first=first)], capture_output=True, text=True,
                         check=True, env=env).stdout
    result: dict[str, object] = json.loads(out.strip().splitlines()[-1])
    return result


@pytest.mark.parametrize("env_value", [None, "3"])
def test_numpy_imported_after_duetbench_starts_no_blas_threads_and_leaves_the_environment(
        env_value: str | None) -> None:
    seen = _probe("import duetbench", env_value)
    assert seen["threads"] == 1
    assert seen["env"] == env_value
    assert seen["child"] == str(env_value)  # a command started afterwards sees the user's setting


def test_the_setting_is_what_keeps_the_threads_away() -> None:
    # Without duetbench first, numpy's OpenBLAS starts its workers on a machine of several CPUs; where the
    # BLAS starts none anyway (one CPU, another BLAS), the test above proves nothing more and this says so.
    plain = _probe("", None)
    if plain["threads"] == 1:
        pytest.skip("numpy's BLAS starts no worker threads here (one CPU or a single-threaded BLAS)")
    assert int(str(plain["threads"])) > 1
