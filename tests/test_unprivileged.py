"""duetbench run by an ordinary user, as most people run it, on a machine where root (`sudo duet …`) ran it
too: the machine lock, scratch directories and container markers another user left, a .duetbench
directory root made, cgroups only where one was delegated. The tests run the real CLI as a user made
for them (run as root; skipped otherwise), and remove it afterwards."""
from __future__ import annotations

import json
import math
import os
import pwd
import shutil
import sqlite3
import stat
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

import duetbench
from duetbench.execute.owner import boot_id

SRC = Path(duetbench.__file__).resolve().parent.parent
#: A pid no process has (above the kernel's pid_max limit of 2^22): a killed duet's leftovers carry it.
DEAD_PID = 4_194_304 + 17


class User:
    """An unprivileged user, a Python it may run with duetbench's dependencies, and a directory of its own."""

    def __init__(self, uid: int, gid: int, python: str, env: dict[str, str], work: Path) -> None:
        self.uid, self.gid, self.python, self.env, self.work = uid, gid, python, env, work

    def run(self, args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run([self.python, "-m", "duetbench", *args], cwd=cwd, env=self.env,
                              user=self.uid, group=self.gid, extra_groups=[], capture_output=True, text=True,
                              timeout=120)

    def python_c(self, code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run([self.python, "-c", code], cwd=cwd, env=self.env, user=self.uid, group=self.gid,
                              extra_groups=[], capture_output=True, text=True, timeout=60)

    def own(self, path: Path) -> Path:
        path.mkdir(parents=True, exist_ok=True)
        os.chown(path, self.uid, self.gid)
        return path


def _interpreter(uid: int, gid: int, env: dict[str, str]) -> str | None:
    """This Python if the user may run it, else one of the same version elsewhere (a virtualenv made from
    a Python under /root cannot be run by anyone else; /usr/bin/python3.X reads the same site-packages)."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for candidate in (sys.executable, shutil.which(version), f"/usr/bin/{version}", f"/usr/local/bin/{version}"):
        if not candidate or not os.path.exists(candidate):
            continue
        try:
            probe = subprocess.run([candidate, "-c", "import duetbench, numpy, sqlalchemy, click, rich, msgspec"],
                                   env=env, user=uid, group=gid, extra_groups=[], capture_output=True, timeout=60)
        except (OSError, subprocess.SubprocessError):
            continue
        if probe.returncode == 0:
            return candidate
    return None


@pytest.fixture(scope="module")
def user(native_dir: Path) -> Iterator[User]:
    if os.geteuid() != 0:
        pytest.skip("runs the CLI as an unprivileged user, which takes root to switch to")
    work = Path(tempfile.mkdtemp(prefix="duet-unprivileged-"))
    work.chmod(0o755)
    name = f"duetu{os.getpid()}"
    made = False
    try:
        if shutil.which("useradd"):
            subprocess.run(["useradd", "--no-create-home", "--home-dir", str(work / "home"), "--shell", "/bin/sh",
                            "--user-group", name], check=True, capture_output=True)
            made = True
            entry = pwd.getpwnam(name)
            uid, gid = entry.pw_uid, entry.pw_gid
        else:  # a uid without a name does as well for everything duet does
            uid = gid = next(n for n in range(61000, 65000) if not _taken(n))
        # The natives may have been built where only root may look (a pytest temporary directory).
        natives = shutil.copytree(native_dir, work / "native")
        natives.chmod(0o755)
        paths = [str(SRC), sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(work / "home"), "LANG": "C.UTF-8",
               "PYTHONPATH": os.pathsep.join(dict.fromkeys(paths)), "PYTHONDONTWRITEBYTECODE": "1",
               "DUETBENCH_NATIVE_DIR": str(natives), "COLUMNS": "200", "TMPDIR": str(work / "tmp"),
               "DUETBENCH_LOCK": str(work / "lock" / "duetbench.lock"),
               "XDG_RUNTIME_DIR": str(work / "home" / "run")}
        for sticky in ("tmp", "lock"):  # as /tmp and /run/lock are: anyone may make files there
            (work / sticky).mkdir()
            (work / sticky).chmod(0o1777)
        python = _interpreter(uid, gid, env)
        if python is None:
            pytest.skip("no Python the unprivileged user may run with duetbench's dependencies (this one lives "
                        "where only root may go, and there is no other of the same version)")
        found = User(uid, gid, python, env, work)
        found.own(work / "home")
        found.own(work / "home" / "run").chmod(0o700)
        yield found
    finally:
        if "uid" in locals():
            _end_processes_of(uid)
        shutil.rmtree(work, ignore_errors=True)
        if made:
            subprocess.run(["userdel", name], capture_output=True)


def _end_processes_of(uid: int) -> None:
    """What the user's commands left: `duet doctor` asks podman, which as an ordinary user starts its user
    namespace's pause process (catatonit), kept for the user's later podman commands, and its lock."""
    import signal

    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    os.kill(int(entry.name), signal.SIGKILL)
            except OSError:
                pass
    lock = Path(f"/dev/shm/libpod_rootless_lock_{uid}")
    try:
        if lock.stat().st_uid == uid:
            lock.unlink()
    except OSError:
        pass


def _taken(uid: int) -> bool:
    try:
        pwd.getpwuid(uid)
    except KeyError:
        return False
    return True


def _one_line_error(result: subprocess.CompletedProcess[str], words: str) -> None:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and "PermissionError" not in result.stderr, result.stderr
    assert words in result.stderr, result.stderr


def test_every_method_measures_as_an_ordinary_user(user: User) -> None:
    home = Path(user.env["HOME"])
    methods = ("auto", "duet", "aduet", "sequential")
    for method in methods:
        result = user.run(["compare", "true", "sh -c :", "--runs", "3", "--method", method], home)
        assert result.returncode == 0, result.stderr
        assert "Traceback" not in result.stderr and "PermissionError" not in result.stderr, result.stderr
    shown = user.run(["show"], home)
    assert shown.returncode == 0 and f"#{len(methods)} " in shown.stdout, shown.stdout + shown.stderr


def test_a_lock_file_root_made_does_not_shut_others_out(user: User) -> None:
    # `sudo duet compare` made the machine lock with its umask (0644): an ordinary user may not open it for
    # writing, and was refused ("cannot open the machine lock … set DUETBENCH_LOCK"), which would also
    # have ended the exclusion between the two.
    lock = Path(user.env["DUETBENCH_LOCK"])
    lock.unlink(missing_ok=True)
    lock.touch()
    lock.chmod(0o644)
    try:
        home = Path(user.env["HOME"])
        result = user.run(["compare", "true", "--runs", "2", "--db", "lock.db"], home)
        assert result.returncode == 0, result.stderr
        # While the user holds it (not able to write who it is), root is told who holds it all the same.
        holder = subprocess.Popen(
            [user.python, "-c", "import sys, time\nfrom duetbench.execute.lock import MeasurementLock\n"
             "with MeasurementLock('duet run nightly'):\n    print('held', flush=True)\n    time.sleep(60)\n"],
            env=user.env, user=user.uid, group=user.gid, extra_groups=[], stdout=subprocess.PIPE, text=True)
        try:
            assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
            from duetbench.errors import DuetError
            from duetbench.execute.lock import MeasurementLock

            with pytest.raises(DuetError) as err:
                MeasurementLock("duet compare", lock).acquire(wait=0)
            assert f"(pid {holder.pid})" in str(err.value)
        finally:
            holder.kill()
            holder.wait()
            assert holder.stdout is not None
            holder.stdout.close()
    finally:
        lock.unlink()
    # A lock file duet makes is one every user may write who they are into.
    from duetbench.execute.lock import MeasurementLock

    with MeasurementLock("duet compare", lock):
        assert stat.S_IMODE(lock.stat().st_mode) == 0o666
    lock.unlink()


def test_a_dotdir_root_made_is_refused_in_one_line(user: User) -> None:
    # `sudo duet measure` in the user's checkout made .duetbench/ as root: measure then died with a
    # PermissionError traceback, after taking the machine lock.
    here = user.own(user.work / "checkout")
    (here / ".duetbench").mkdir()
    _one_line_error(user.run(["measure", "true", "--runs", "2"], here), "cannot write the samples file")


def test_another_users_scratch_is_left_alone(user: User) -> None:
    tmp = Path(user.env["TMPDIR"])
    # A killed `sudo duet compare` left its scratch directory (0700, root's): every command of the user
    # died with a PermissionError traceback looking into it for a journal.
    scratch = tmp / f"duetbench-run-{DEAD_PID}-1-{(boot_id().replace('-', '') or '0' * 8)[:8]}-x"
    scratch.mkdir(mode=0o700)
    (scratch / "queued-0-0.stderr").touch()
    home = Path(user.env["HOME"])
    result = user.run(["show", "--db", "none.db"], home)
    assert "Traceback" not in result.stderr and "PermissionError" not in result.stderr, result.stderr
    assert scratch.exists()  # its owner's next command recovers and removes it


def test_another_users_cgroups_are_not_waited_for(user: User) -> None:
    # Root's cgroups of a killed run, which only root may remove, were waited for (1 s) by every command.
    home = Path(user.env["HOME"])
    cgroups = Path(user.env["TMPDIR"]) / "cgroups"
    (cgroups / f"duetbench-{DEAD_PID}-A").mkdir(parents=True)
    found = user.python_c(f"from pathlib import Path\nfrom duetbench.host.cgroup import stale_cgroups\n"
                          f"print(len(stale_cgroups([Path({str(cgroups)!r})])))", home)
    assert found.returncode == 0 and found.stdout.strip() == "0", found.stdout + found.stderr


def test_root_does_not_run_the_program_a_users_container_marker_names(user: User) -> None:
    from duetbench.execute.container import MARKER_PREFIX, sweep_stale_containers

    shm = user.own(user.work / "shm")
    ran = user.work / "ran"
    program = user.work / "fake-engine"
    program.write_text(f"#!/bin/sh\ntouch {ran}\n")
    program.chmod(0o755)
    marker = shm / f"{MARKER_PREFIX}{DEAD_PID}-1"
    marker.write_text(f"{program}\tsome-container\n")
    os.chown(marker, user.uid, user.gid)
    assert sweep_stale_containers(str(shm)) == []
    assert not ran.exists()


def _delegable_cgroup2() -> Path | None:
    from duetbench.host.cgroup import find_cgroup2_root

    root = find_cgroup2_root()
    return root if root is not None and (root / "cpu.stat").exists() else None


def test_doctor_says_what_an_ordinary_user_measures_without_cgroups(user: User) -> None:
    if _delegable_cgroup2() is None:
        pytest.skip("no cgroup v2 hierarchy with cpu.stat here")
    result = user.run(["doctor", "--json", "--interval", "0.1"], Path(user.env["HOME"]))
    assert result.returncode in (0, 1), result.stderr
    check = next(c for c in json.loads(result.stdout)["checks"] if c["name"] == "cgroups")
    assert check["status"] == "warn"
    assert any("may not make cgroups" in line for line in check["evidence"]), check
    assert "Delegate=yes" in check["fix"]


def test_a_delegated_cgroup_is_used(user: User) -> None:
    """`systemd-run --user --scope -p Delegate=yes duet …`: the scope's cgroup belongs to the user, and the
    sides' cgroups (CPU time of the whole tree, run-queue wait) are made inside it. Made here as systemd
    makes it: the directory and its cgroup.procs, cgroup.threads and cgroup.subtree_control chowned."""
    root = _delegable_cgroup2()
    if root is None:
        pytest.skip("no cgroup v2 hierarchy with cpu.stat that root may make cgroups in")
    scope = root / f"duettest-delegated-{os.getpid()}"
    scope.mkdir()
    try:
        for path in (scope, scope / "cgroup.procs", scope / "cgroup.threads", scope / "cgroup.subtree_control"):
            os.chown(path, user.uid, user.gid)

        def enter_as_user() -> None:
            # Moved by root (only a writer of both cgroups' common ancestor may), then the user's own.
            (scope / "cgroup.procs").write_text(str(os.getpid()))
            os.setgroups([])
            os.setgid(user.gid)
            os.setuid(user.uid)

        home = Path(user.env["HOME"])
        result = subprocess.run([user.python, "-m", "duetbench", "compare", "true", "sh -c :", "--runs", "3",
                                 "--db", "delegated.db"], cwd=home, env=user.env, preexec_fn=enter_as_user,
                                capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr
        with sqlite3.connect(home / "delegated.db") as db:
            measured = db.execute("SELECT cgroup_cpu_s FROM invocations WHERE warmup = 0").fetchall()
        assert measured and all(value is not None for (value,) in measured), measured
        assert not [p for p in scope.iterdir() if p.is_dir()]  # the sides' cgroups went with the comparison
    finally:
        for child in sorted(scope.glob("**/"), key=lambda p: -len(p.parts)):
            try:
                child.rmdir()
            except OSError:
                pass


def test_the_interference_note_says_when_no_run_queue_wait_was_recorded() -> None:
    """Without a cgroup (an ordinary user's duet), sleeping counts as time off the CPU: the note that leaves
    a short duet's wall ratio unbounded says so, and where to look."""
    import msgspec

    from duetbench.analyze.invocations import evaluate
    from duetbench.execute.invocation import Invocation

    def pair(k: int) -> list[Invocation]:
        return [Invocation(side, k, k, False, "ok", 0, 0, k * 10**9, k * 10**9 + 1, 0.030 if side == "A" else 0.021,
                           0.021, 0.021, 0, None, 0, 0, 0, 0, 0, 0, 0, 0,
                           activity=json.dumps([{"pid": 9, "comm": "hog", "cpu_ms": 9.0}])) for side in "AB"]

    kw = dict(confidence_level=0.99, n_resamples=1000, seed=1)
    blind = evaluate("duet", [i for k in range(5) for i in pair(k)], "wall", judge_one_sided=True, **kw)
    assert blind.ratio.high == math.inf
    assert any("no side's run-queue wait was recorded" in n and "duet doctor" in n for n in blind.notes)
    waited = [msgspec.structs.replace(i, cgroup_wait_s=0.009 if i.side == "A" else 0.0)
              for k in range(5) for i in pair(k)]
    seen = evaluate("duet", waited, "wall", judge_one_sided=True, **kw)
    assert seen.ratio.high == math.inf and not any("run-queue wait was recorded" in n for n in seen.notes)


def test_doctor_says_when_proc_hides_other_users_processes(tmp_path: Path) -> None:
    """A shared server's /proc mounted with hidepid: an ordinary user sees only its own processes, and the
    noise attribution of its measurements misses everyone else's CPU use — without a word, before."""
    copy = shutil.copytree(Path(__file__).parent / "doctor" / "fixtures" / "vm-firecracker", tmp_path / "machine")
    mounts = copy / "proc" / "self" / "mounts"
    proc = "proc /proc proc rw,relatime"
    mounts.write_text(mounts.read_text().replace(proc, f"{proc},hidepid=invisible"))
    # In this process: a `duet` command first clears what killed duets left, which may wait for an engine.
    from duetbench.host.doctor.report import run_checks

    check = next(c for c in run_checks(copy).checks if c.name == "daemons")
    assert any("hidepid=invisible" in line and "noise attribution" in line for line in check.evidence), check


def test_a_campaign_directory_root_made_is_refused_before_anything_is_recorded(user: User) -> None:
    # `sudo duet run` beside the user's database made .duet/campaigns root's: the user's next `duet run`
    # died with a PermissionError traceback, its campaign recorded and later marked "orchestrator died".
    here = user.own(user.work / "project")
    (here / "tiny.yml").write_text("campaign: tiny\nmethods: {sequential: 2}\nbenchmarks:\n"
                                   "  t:\n    A: 'true'\n    B: 'true'\n")
    assert user.run(["compare", "true", "--runs", "2"], here).returncode == 0  # the user's .duet/results.db
    (here / ".duet" / "campaigns").mkdir()
    _one_line_error(user.run(["run", "tiny.yml"], here), "cannot write the runs' raw outputs")
    with sqlite3.connect(here / ".duet" / "results.db") as db:
        assert db.execute("SELECT count(*) FROM campaigns").fetchone() == (0,)
