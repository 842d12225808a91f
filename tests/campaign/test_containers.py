"""`duet run --executor podman|docker`: each side in its own container, pinned, sharing /dev/shm for the
barrier. Skipped, with the reason, where no container engine can run containers."""
from __future__ import annotations

import shutil
import sqlite3
import subprocess
import uuid
from pathlib import Path

import numpy as np
import pytest

from duetbench.errors import DuetError
from duetbench.execute.container import find_engine

ROOT = Path(__file__).resolve().parents[2]


def engine_or_skip(name: str) -> None:
    try:
        find_engine(name)
    except DuetError as exc:
        pytest.skip(f"no working {name} here: {exc}")


@pytest.fixture(scope="module")
def image(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A tiny image made here (no registry needed): busybox and the static C example harness with duet.h."""
    engine_or_skip("podman")
    cc = shutil.which("cc") or shutil.which("gcc")
    busybox = shutil.which("busybox")
    if cc is None or busybox is None:
        pytest.skip("building the test image needs a C compiler and busybox (apt-get install busybox-static)")
    root = tmp_path_factory.mktemp("rootfs")
    (root / "bin").mkdir()
    for d in ("tmp", "dev", "proc", "sys"):
        (root / d).mkdir()
    built = subprocess.run([cc, "-O2", "-std=c11", "-static", "-I", str(ROOT / "adapters" / "c"), "-o",
                            str(root / "bin" / "example"), str(ROOT / "adapters" / "c" / "example.c")],
                           capture_output=True, text=True)
    if built.returncode != 0:
        pytest.skip(f"cannot link a static test harness (libc6-dev's libc.a missing?): {built.stderr[-300:]}")
    shutil.copy(busybox, root / "bin" / "busybox")
    (root / "bin" / "sh").symlink_to("busybox")
    tar = root.parent / "rootfs.tar"
    subprocess.run(["tar", "-C", str(root), "-cf", str(tar), "."], check=True)
    name = f"localhost/duetbench-test-{uuid.uuid4().hex[:8]}:latest"
    subprocess.run(["podman", "import", "-q", str(tar), name], check=True, capture_output=True)
    yield name
    subprocess.run(["podman", "rmi", "-f", name], capture_output=True)


def test_duet_in_two_podman_containers(image: str, duet, tmp_path: Path) -> None:
    (tmp_path / "campaign.yml").write_text(f"""campaign: ctr
seed: 4
methods: {{duet: 2, sequential: 1}}
parser: {{name: regex, pattern: '^(?P<value>\\d+)$', unit: ns}}
container: {image}
timeout: 120
benchmarks:
  lcg:
    A: /bin/example 5 0 2000000
    B: /bin/example 5 0 2400000
""")
    result = duet("run", "campaign.yml", "--executor", "podman", "--no-progress", timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    with sqlite3.connect(tmp_path / ".duet" / "results.db") as conn:
        runs = conn.execute("SELECT id, method, status, error FROM runs").fetchall()
        assert len(runs) == 4 and all(r[2] == "ok" for r in runs), runs
        for run_id, method, _, _ in runs:
            if method != "duet":
                continue
            a, b = ([s for (s,) in conn.execute("SELECT start_ns FROM iterations WHERE run_id=? AND side=? "
                                                 "ORDER BY seq", (run_id, side))] for side in "AB")
            assert len(a) == len(b) == 5
            # two containers, one barrier page in the host's /dev/shm: starts aligned (B does 20% more work,
            # so without the barrier they would drift apart by ~0.4 ms per iteration)
            assert np.mean(np.abs(np.array(a) - np.array(b)) < 100_000) >= 0.3
        cpus = conn.execute("SELECT cpu_requested FROM run_sides s JOIN runs r ON r.id = s.run_id "
                            "WHERE r.method = 'duet'").fetchall()
        assert len(cpus) == 4
    leftover = subprocess.run(["podman", "ps", "-a", "--filter", "name=duetbench-", "--format", "{{.Names}}"],
                              capture_output=True, text=True)
    assert leftover.stdout.strip() == "", "containers left behind"


def test_container_timeout_leaves_no_container(image: str, duet, tmp_path: Path) -> None:
    (tmp_path / "campaign.yml").write_text(f"""campaign: ctr-timeout
methods: {{sequential: 1}}
parser: {{name: regex, pattern: '^(?P<value>\\d+)$', unit: ns}}
container: {image}
timeout: 3
benchmarks:
  sleepy: {{command: /bin/sh -c 'sleep 60', B: /bin/sh -c 'sleep 60'}}
""")
    result = duet("run", "campaign.yml", "--executor", "podman", "--no-progress", timeout=300)
    assert result.returncode == 1, result.stderr  # the runs timed out: failed, as the exit code says
    with sqlite3.connect(tmp_path / ".duet" / "results.db") as conn:
        errors = [e for (e,) in conn.execute("SELECT error FROM runs")]
    assert len(errors) == 2 and all("timed out" in e for e in errors), errors
    leftover = subprocess.run(["podman", "ps", "-a", "--filter", "name=duetbench-", "--format", "{{.Names}}"],
                              capture_output=True, text=True)
    assert leftover.stdout.strip() == ""


def test_docker_executor_runs_or_says_why(duet, tmp_path: Path) -> None:
    engine_or_skip("docker")  # the docker CLI may be installed without a daemon: then this skips with why
    pytest.skip("docker engine available, but the test image is built with podman only")


def test_image_without_executor_gives_clear_error(duet, tmp_path: Path) -> None:
    (tmp_path / "campaign.yml").write_text("""campaign: c
methods: {duet: 1}
parser: {name: regex, pattern: '(?P<value>\\d+)'}
container: localhost/nothing
benchmarks:
  x: /bin/true
""")
    result = duet("run", "campaign.yml", "--executor", "local")
    assert result.returncode == 2
    assert "names a container image" in result.stderr and "--executor podman" in result.stderr


def test_kill_9_leaves_no_container(image: str, duet_env: dict[str, str], tmp_path: Path) -> None:
    """Issue 16: a `kill -9` of `duet run` skips its clean-up, and a killed `podman run` client leaves its
    container running; the next `duet` command of any kind removes it."""
    import os
    import signal
    import sys
    import time

    (tmp_path / "campaign.yml").write_text(f"""campaign: ctr-killed
methods: {{duet: 1}}
parser: {{name: regex, pattern: '^(?P<value>\\d+)$', unit: ns}}
container: {image}
timeout: 120
benchmarks:
  sleepy: /bin/sh -c 'sleep 60'
""")
    proc = subprocess.Popen([sys.executable, "-m", "duetbench", "run", "campaign.yml", "--executor", "podman",
                             "--no-progress"], cwd=tmp_path, env=duet_env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)

    def ours() -> list[str]:
        out = subprocess.run(["podman", "ps", "-a", "--filter", f"name=duetbench-{proc.pid}-", "--format",
                              "{{.Names}}"], capture_output=True, text=True).stdout
        return out.split()

    deadline = time.monotonic() + 60
    while len(ours()) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert len(ours()) == 2, "the two sides' containers never started"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    time.sleep(1.0)
    nxt = subprocess.run([sys.executable, "-m", "duetbench", "show", "--db", ".duet/results.db"], cwd=tmp_path,
                         env=duet_env, capture_output=True, text=True, timeout=180)
    assert "Traceback" not in nxt.stderr
    assert ours() == []
    assert not list(Path("/dev/shm").glob(f"duetbench-containers-{proc.pid}-*"))
