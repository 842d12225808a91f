"""`duet run --executor podman|docker`: each side in its own container, pinned, sharing /dev/shm for the
barrier. Skipped, with the reason, where no container engine can run containers."""
from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
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
    for d in ("tmp", "dev", "proc", "sys", "etc"):
        (root / d).mkdir()
    (root / "etc" / "passwd").write_text("root:x:0:0:root:/:/bin/sh\nbench:x:1001:1001::/:/bin/sh\n")
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


def _leaked() -> list[str]:
    """duet's containers whose orchestrator has ended (`duetbench-<pid>-...`): a live one's are in use (a
    test run beside this one, another user's campaign), and `duet run` above has ended."""
    names = subprocess.run(["podman", "ps", "-a", "--filter", "name=duetbench-", "--format", "{{.Names}}"],
                           capture_output=True, text=True).stdout.split()
    return [n for n in names if not (n.split("-")[1].isdigit() and Path(f"/proc/{n.split('-')[1]}").exists())]


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
            a, b = (np.array(conn.execute("SELECT start_ns, end_ns FROM iterations WHERE run_id=? AND side=? "
                                          "ORDER BY seq", (run_id, side)).fetchall(), dtype=np.int64)
                    for side in "AB")
            assert len(a) == len(b) == 5
            # Two containers, one barrier page in the host's /dev/shm: what it guarantees however the machine
            # schedules them (a start-to-start distance does not hold beside other work): iteration k of either
            # side starts only after both ended iteration k-1. Without it A, doing 20% less work, would start
            # its next iterations while B still ran.
            both_ended = np.maximum(a[:-1, 1], b[:-1, 1])
            assert np.all(a[1:, 0] >= both_ended) and np.all(b[1:, 0] >= both_ended), (a, b)
        cpus = conn.execute("SELECT cpu_requested FROM run_sides s JOIN runs r ON r.id = s.run_id "
                            "WHERE r.method = 'duet'").fetchall()
        assert len(cpus) == 4
    assert _leaked() == [], "containers left behind"


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
    assert _leaked() == []


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


def _two_sleeping_containers(image: str, duet_env: dict[str, str], tmp_path: Path, name: str, output: int
                             ) -> tuple[subprocess.Popen[str], Callable[[], list[str]]]:
    """`duet run` of a duet whose two sides sleep in containers, once both containers run; and a function
    listing that orchestrator's containers."""
    (tmp_path / "campaign.yml").write_text(f"""campaign: {name}
methods: {{duet: 1}}
parser: {{name: regex, pattern: '^(?P<value>\\d+)$', unit: ns}}
container: {image}
timeout: 120
benchmarks:
  sleepy: /bin/sh -c 'sleep 60'
""")
    proc = subprocess.Popen([sys.executable, "-m", "duetbench", "run", "campaign.yml", "--executor", "podman",
                             "--no-progress"], cwd=tmp_path, env=duet_env, stdout=output, stderr=output, text=True)

    def ours() -> list[str]:
        out = subprocess.run(["podman", "ps", "-a", "--filter", f"name=duetbench-{proc.pid}-", "--format",
                              "{{.Names}}"], capture_output=True, text=True).stdout
        return out.split()

    deadline = time.monotonic() + 60
    while len(ours()) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert len(ours()) == 2, "the two sides' containers never started"
    return proc, ours


def test_kill_9_leaves_no_container(image: str, duet_env: dict[str, str], tmp_path: Path) -> None:
    """Issue 16: a `kill -9` of `duet run` skips its clean-up, and a killed `podman run` client leaves its
    container running; the next `duet` command of any kind removes it."""
    proc, ours = _two_sleeping_containers(image, duet_env, tmp_path, "ctr-killed", subprocess.DEVNULL)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    time.sleep(1.0)
    nxt = subprocess.run([sys.executable, "-m", "duetbench", "show", "--db", ".duet/results.db"], cwd=tmp_path,
                         env=duet_env, capture_output=True, text=True, timeout=180)
    assert "Traceback" not in nxt.stderr
    assert ours() == []
    assert not list(Path("/dev/shm").glob(f"duetbench-containers-{proc.pid}-*"))


def ours_left(pid: int) -> list[str]:
    """The cgroups, in any hierarchy, of the orchestrator with this pid (podman makes its --cgroup-parent
    in every cgroup v1 controller too)."""
    return [str(p) for p in Path("/sys/fs/cgroup").glob(f"*/duetbench-{pid}-*")] + \
        [str(p) for p in Path("/sys/fs/cgroup").glob(f"duetbench-{pid}-*")]


def test_a_missing_or_misspelt_image_fails_once_before_any_run(duet, tmp_path: Path) -> None:
    """Not every run failing on its own (each one trying a registry, a pull timed inside the measured run):
    the image is checked (pulled if need be) once, before anything runs, and named at its line."""
    engine_or_skip("podman")
    for image in ("Not An Image", f"localhost/duetbench-nowhere-{uuid.uuid4().hex[:8]}:1"):  # no registry there
        (tmp_path / "campaign.yml").write_text(f"""campaign: c
methods: {{duet: 3}}
parser: {{name: regex, pattern: '(?P<value>\\d+)'}}
container: '{image}'
benchmarks:
  x: /bin/true
""")
        result = duet("run", "campaign.yml", "--executor", "podman", "--no-progress", timeout=180)
        assert result.returncode == 2, result.stdout + result.stderr
        error = [line for line in result.stderr.splitlines() if line.startswith("error:")]
        assert len(error) == 1 and "campaign.yml:4" in error[0] and f"'{image}'" in error[0], result.stderr
        assert not (tmp_path / ".duet" / "results.db").exists() or not sqlite3.connect(
            tmp_path / ".duet" / "results.db").execute("SELECT count(*) FROM runs").fetchone()[0]


def test_a_run_never_pulls_its_image(tmp_path: Path) -> None:
    from duetbench.config.campaign_model import ContainerSpec
    from duetbench.execute.container import ContainerEngine, container_argv

    argv = container_argv(ContainerEngine("podman", "podman"), ContainerSpec(image="img"), ["true"], cpu=0,
                          cwd=tmp_path, env={}, mounts=[], cgroup=None, name="n")
    assert "--pull=never" in argv[:argv.index("img")]


def test_a_working_directory_with_colon_comma_quote_and_space(image: str, duet, tmp_path: Path) -> None:
    """`-v SRC:DST` cannot name a path with a colon: every run failed with 'incorrect volume format'."""
    odd = tmp_path / "we:ird, dir\"'s"
    odd.mkdir()
    (tmp_path / "campaign.yml").write_text(f"""campaign: odd
methods: {{sequential: 1}}
parser: {{name: regex, pattern: '^(?P<value>\\d+)$', unit: ns}}
container: {image}
cwd: '{str(odd).replace("'", "''")}'
benchmarks:
  pwd: /bin/sh -c 'pwd > here.txt; echo 5; echo 6'
""")
    result = duet("run", "campaign.yml", "--executor", "podman", "--no-progress", timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (odd / "here.txt").read_text().strip() == str(odd)


def test_a_finished_run_leaves_no_cgroup(image: str, duet_env: dict[str, str], tmp_path: Path) -> None:
    """podman made the side's --cgroup-parent in every cgroup v1 controller and left it (with a conmon
    cgroup inside): 20 directories per run until the next `duet` command swept them."""

    (tmp_path / "campaign.yml").write_text(f"""campaign: cg
methods: {{duet: 1}}
parser: {{name: regex, pattern: '^(?P<value>\\d+)$', unit: ns}}
container: {image}
benchmarks:
  five: /bin/sh -c 'echo 5; echo 6'
""")
    proc = subprocess.Popen([sys.executable, "-m", "duetbench", "run", "campaign.yml", "--executor", "podman",
                             "--no-progress"], cwd=tmp_path, env=duet_env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, out + err
    assert ours_left(proc.pid) == []


def test_an_oom_killed_container_is_named(image: str, duet, tmp_path: Path) -> None:
    """A container's command killed by a signal (here the kernel's OOM killer) read only as "exit code 137";
    a local one reads "killed by signal 9"."""
    (tmp_path / "campaign.yml").write_text(f"""campaign: oom
methods: {{sequential: 1}}
parser: {{name: regex, pattern: '^(?P<value>\\d+)$', unit: ns}}
container: {{image: {image}, options: ["--memory=16m", "--memory-swap=16m"]}}
benchmarks:
  hog: /bin/sh -c 'echo 5; exec /bin/busybox dd if=/dev/zero of=/dev/null bs=256M count=1'
""")
    result = duet("run", "campaign.yml", "--executor", "podman", "--no-progress", timeout=300)
    if "exit code 137" not in result.stdout:
        pytest.skip(f"no memory limit for containers here: {result.stdout[-500:]}")
    assert "exit code 137: the command in the container was killed by signal 9 (SIGKILL)" in result.stdout


def test_an_engine_not_on_path_names_the_package_that_installs_it(duet_env: dict[str, str], tmp_path: Path) -> None:
    """Debian's `docker` package is a system tray; the engine is `docker.io`."""

    (tmp_path / "campaign.yml").write_text("""campaign: c
methods: {duet: 1}
parser: {name: regex, pattern: '(?P<value>\\d+)'}
container: localhost/nothing
benchmarks:
  x: /bin/true
""")
    for executor, package in (("docker", "apt-get install docker.io"), ("podman", "apt-get install podman runc")):
        result = subprocess.run([sys.executable, "-m", "duetbench", "run", "campaign.yml", "--executor", executor],
                                cwd=tmp_path, env={**duet_env, "PATH": str(tmp_path / "empty")},
                                capture_output=True, text=True, timeout=120)
        assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
        assert f"{executor} is not installed" in result.stderr and package in result.stderr, result.stderr


def test_a_result_file_outside_what_the_container_shares_is_refused(duet, tmp_path: Path) -> None:
    """The harness writes it inside the container, where `duet run` never looks: every run failed with
    "result file not found (the harness did not write it?)"."""
    engine_or_skip("podman")
    for declared in (str(tmp_path / "out.csv"), "../out.csv"):
        (tmp_path / "sub").mkdir(exist_ok=True)
        (tmp_path / "campaign.yml").write_text(f"""campaign: c
methods: {{sequential: 1}}
parser: {{name: csv, file: '{declared}', value: t}}
results: ['{declared}']
container: localhost/nothing
cwd: sub
benchmarks:
  x: /bin/true
""")
        result = duet("run", "campaign.yml", "--executor", "podman", "--no-progress")
        assert result.returncode == 2, result.stdout + result.stderr
        assert "campaign.yml:4" in result.stderr and f"{declared!r} is outside the side's cwd" in result.stderr


def test_a_duet_stopped_by_adaptive_warmup_stays_synchronized(image: str, duet, tmp_path: Path) -> None:
    """Told to stop, each launcher ended its container only after three wake-ups on the CPU the harness
    spins on; meanwhile the other side's harness ran on alone, and every such run read as unsynchronized
    (a local one does not)."""
    (tmp_path / "campaign.yml").write_text(f"""campaign: live
methods: {{duet: 2}}
container: {image}
timeout: 120
benchmarks:
  lcg:
    A: /bin/example 3000 0 200000
    B: /bin/example 3000 0 220000
""")
    result = duet("run", "campaign.yml", "--executor", "podman", "--no-progress", "--adaptive-warmup", "cv",
                  "--mi", "20", timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    with sqlite3.connect(tmp_path / ".duet" / "results.db") as conn:
        notes = [n for (n,) in conn.execute("SELECT notes FROM runs WHERE status = 'ok'")]
    stopped = [n for n in notes if "run ended after" in n]
    if not stopped:
        pytest.skip(f"adaptive warmup never settled here (noisy machine): {notes}")
    assert all("duet sync: synchronized" in n for n in stopped), stopped


def test_podman_with_the_systemd_cgroup_manager_gets_no_cgroupfs_parent(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The systemd manager (rootful podman's default on systemd hosts) refuses `--cgroup-parent=/duetbench-…`
    ("did not receive systemd slice as cgroup parent"): every container side failed with exit code 125.
    (Only podman's answer is changed here: containers cannot run under that manager without systemd.)"""

    from duetbench.config.campaign_model import ContainerSpec
    from duetbench.execute.container import container_argv
    from duetbench.host.cgroup import SideCgroup

    engine_or_skip("podman")
    group = SideCgroup(Path("/sys/fs/cgroup/duetbench-1-c1-0-A"))

    def parents(engine: object) -> list[str]:
        argv = container_argv(engine, ContainerSpec(image="img"), ["true"], cpu=0,  # type: ignore[arg-type]
                              cwd=tmp_path, env={}, mounts=[], cgroup=group, name="n")
        return [a for a in argv if a.startswith("--cgroup-parent")]

    here = find_engine("podman")
    wrapper = tmp_path / "bin" / "podman"
    wrapper.parent.mkdir()
    wrapper.write_text(f"#!/bin/sh\nexec {here.binary} --cgroup-manager=systemd \"$@\"\n")
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{wrapper.parent}:{os.environ['PATH']}")
    assert parents(find_engine("podman")) == []
    if "cgroupManager: cgroupfs" in subprocess.run([here.binary, "info"], capture_output=True, text=True).stdout:
        assert parents(here) == ["--cgroup-parent=/duetbench-1-c1-0-A"]


def test_ctrl_c_leaves_no_container_cgroup_or_marker(image: str, duet_env: dict[str, str], tmp_path: Path) -> None:
    """Interrupted, podman's cgroups of the run (its --cgroup-parent in every v1 controller, with the
    container's and conmon's inside) stayed until the next `duet` command swept them."""
    proc, ours = _two_sleeping_containers(image, duet_env, tmp_path, "ctr-interrupted", subprocess.PIPE)
    os.kill(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130 and "interrupted" in out + err and "Traceback" not in err, out + err
    assert ours() == []
    assert ours_left(proc.pid) == []
    assert not list(Path("/dev/shm").glob(f"duetbench-containers-{proc.pid}-*"))


def test_an_engine_that_does_not_remove_the_container_loses_no_run(image: str, duet_probe,
                                                                   tmp_path: Path) -> None:
    """`podman rm` stuck (its storage lock held by a hung podman): the clean-up's timeout ended `duet run`
    with a traceback, the run it had just measured lost. Now the run is kept, and the container is left to
    the next `duet` command's sweep."""
    stuck = tmp_path / "stuck"  # while it exists: only this test's `duet run` meets a stuck engine
    stuck.touch()
    wrapper = tmp_path / "bin" / "podman"
    wrapper.parent.mkdir()
    wrapper.write_text(f"#!/bin/sh\nif [ \"$1\" = rm ] && [ -e {stuck} ]; then exec sleep 300; fi\n"
                       f"exec {shutil.which('podman')} \"$@\"\n")
    wrapper.chmod(0o755)
    (tmp_path / "campaign.yml").write_text(f"""campaign: stuck
methods: {{sequential: 1}}
parser: {{name: regex, pattern: '^(?P<value>\\d+)$', unit: ns}}
container: {image}
benchmarks:
  five: /bin/sh -c 'echo 5; echo 6'
""")
    setup = (f"os.environ['PATH'] = {str(wrapper.parent)!r} + ':' + os.environ['PATH']\n"
             "import duetbench.execute.container as _c\n_c.REMOVE_TIMEOUT_S = 1.0\n")
    try:
        result = duet_probe(setup, ["run", "campaign.yml", "--executor", "podman", "--no-progress"],
                            then="print('exit code', e.code)\n", timeout=400)
    finally:
        stuck.unlink()
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    assert "exit code 0" in result.stdout, result.stdout + result.stderr
    with sqlite3.connect(tmp_path / ".duet" / "results.db") as conn:
        assert [s for (s,) in conn.execute("SELECT status FROM runs")] == ["ok", "ok"]
    # its containers ran with --rm and are gone; the marker naming them is kept for the next sweep
    markers = [m for m in Path("/dev/shm").glob("duetbench-containers-*") if str(wrapper) in m.read_text()]
    assert len(markers) == 1
    markers[0].unlink()


def test_an_images_entrypoint_does_not_swallow_the_command(image: str, duet, tmp_path: Path) -> None:
    """An image with an ENTRYPOINT (common for application images) ran it with the side's command as its
    arguments: here `echo entrypoint: /bin/sh -c ...`, found no iterations, every run failed."""
    entry = image.replace("duetbench-test-", "duetbench-test-entry-")
    made = f"duetbench-make-{uuid.uuid4().hex[:8]}"
    subprocess.run(["podman", "create", "--name", made, image, "/bin/true"], check=True, capture_output=True)
    try:
        subprocess.run(["podman", "commit", "-q", "--change", 'ENTRYPOINT ["/bin/busybox", "echo", "entrypoint:"]',
                        made, entry], check=True, capture_output=True)
    finally:
        subprocess.run(["podman", "rm", "-f", made], capture_output=True)
    try:
        (tmp_path / "campaign.yml").write_text(f"""campaign: entry
methods: {{sequential: 1}}
parser: {{name: regex, pattern: '^(?P<value>\\d+)$', unit: ns}}
container: {entry}
benchmarks:
  five: {{command: echo 5; echo 6, shell: true}}
""")
        result = duet("run", "campaign.yml", "--executor", "podman", "--no-progress", timeout=300)
    finally:
        subprocess.run(["podman", "rmi", "-f", entry], capture_output=True)
    assert result.returncode == 0, result.stdout + result.stderr


def _with_user(image: str, user: str) -> str:
    """`image` with `USER user` (as a Containerfile's), made here by committing a container of it."""
    made_image = image.replace("duetbench-test-", f"duetbench-test-user{user}-")
    made = f"duetbench-make-{uuid.uuid4().hex[:8]}"
    subprocess.run(["podman", "create", "--name", made, image, "/bin/true"], check=True, capture_output=True)
    try:
        subprocess.run(["podman", "commit", "-q", "--change", f"USER {user}", made, made_image], check=True,
                       capture_output=True)
    finally:
        subprocess.run(["podman", "rm", "-f", made], capture_output=True)
    return made_image


def test_an_image_with_a_non_root_user_runs_synchronized(image: str, duet, tmp_path: Path) -> None:
    """An image with `USER bench` (or a --user option): its harness could open neither the barrier page (0600
    in /dev/shm) nor the side's output directory, ran unsynchronized, logged nothing, and every run failed
    with "found no iterations". Now that user alone is given both for the run's life, and the run's files
    are the orchestrator's again afterwards."""

    named = _with_user(image, "bench")
    try:
        (tmp_path / "campaign.yml").write_text(f"""campaign: user
methods: {{duet: 1, sequential: 1}}
timeout: 120
benchmarks:
  named:
    container: {named}
    A: /bin/example 5 0 200000
    B: /bin/example 5 0 240000
  numeric:
    container: {{image: {image}, options: ["--user=1000"]}}
    methods: {{duet: 1}}
    A: /bin/example 5 0 200000
    B: /bin/example 5 0 240000
""")
        result = duet("run", "campaign.yml", "--executor", "podman", "--no-progress", timeout=300)
    finally:
        subprocess.run(["podman", "rmi", "-f", named], capture_output=True)
    assert result.returncode == 0, result.stdout + result.stderr
    with sqlite3.connect(tmp_path / ".duet" / "results.db") as conn:
        runs = conn.execute("SELECT method, status, error, notes FROM runs").fetchall()
    assert len(runs) == 4 and all(r[1] == "ok" for r in runs), runs
    assert all("duet sync: synchronized" in r[3] for r in runs if r[0] == "duet"), runs
    raw = tmp_path / ".duet" / "campaigns"
    for path in [p for p in raw.rglob("*")]:
        assert path.stat().st_uid == os.geteuid(), f"{path} left to the container's user"
        assert "system.posix_acl_access" not in os.listxattr(path), f"{path} still open to the container's user"


def test_a_harness_that_cannot_open_the_barrier_page_says_so(image: str, duet, tmp_path: Path) -> None:
    """A harness that cannot open the barrier page (here one that drops to another user itself, as images'
    entrypoints do with su/gosu) failed with "parser 'iteration-log' found no iterations" alone; the reason
    ("Permission denied", said by its hook) was only in its stderr.txt."""
    (tmp_path / "campaign.yml").write_text(f"""campaign: su
methods: {{duet: 1}}
timeout: 120
container: {image}
benchmarks:
  dropped: /bin/busybox su -s /bin/sh bench -c '/bin/example 5 0 200000'
""")
    result = duet("run", "campaign.yml", "--executor", "podman", "--no-progress", timeout=300)
    assert result.returncode == 1, result.stdout + result.stderr
    with sqlite3.connect(tmp_path / ".duet" / "results.db") as conn:
        [(error,)] = conn.execute("SELECT error FROM runs").fetchall()
    assert "found no iterations" in error and "cannot open the barrier DUET_BARRIER=/dev/shm/" in error, error
    assert "Permission denied" in error and "cannot open the iteration log" in error, error


def test_the_user_a_side_runs_as_and_where_its_uid_lands() -> None:
    from duetbench.execute.container_user import _passwd_uid, map_uid, run_as

    assert run_as([], "bench") == "bench"
    assert run_as(["--user=0"], "bench") == "0"
    assert run_as(["-u", "1000:1000", "--memory=1g"], "") == "1000:1000"
    assert run_as(["-u7", "--user", "nobody"], "bench") == "nobody"
    assert _passwd_uid("root:x:0:0::/:/bin/sh\nbench:x:1001:1001::/:/bin/sh\n", "bench") == 1001
    assert _passwd_uid("root:x:0:0::/:/bin/sh\n", "bench") is None
    rootless = "         0       1000          1\n         1     100000      65536\n"
    assert map_uid(rootless, 0) == 1000 and map_uid(rootless, 1000) == 100999 and map_uid(rootless, 70000) is None


def test_a_user_the_page_cannot_be_given_to_is_refused_at_its_line(image: str, duet_probe, tmp_path: Path) -> None:
    """Where /dev/shm cannot lend the page to the image's user (no ACLs there, duet not root; simulated by
    making every grant fail), `duet run` stops before the first run, at the container line, with the fix."""
    (tmp_path / "campaign.yml").write_text(f"""campaign: refused
methods: {{duet: 1}}
benchmarks:
  numeric:
    container: {{image: {image}, options: ["--user=1000"]}}
    A: /bin/example 5 0 200000
""")
    setup = ("import duetbench.execute.backends.container as _b\n_b.grant = lambda *a, **k: None\n")
    result = duet_probe(setup, ["run", "campaign.yml", "--executor", "podman", "--no-progress"],
                        then="print('exit code', e.code)\n", timeout=300)
    assert "exit code 2" in result.stdout, result.stdout + result.stderr
    error = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(error) == 1 and "campaign.yml:5" in error[0] and "user '1000'" in error[0], result.stderr
    assert '"--user=0"' in error[0], error
    assert not (tmp_path / ".duet" / "results.db").exists() or not sqlite3.connect(
        tmp_path / ".duet" / "results.db").execute("SELECT count(*) FROM runs").fetchone()[0]
