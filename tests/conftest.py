"""Shared fixtures: the native programs, and a way to run the real ``duet`` CLI as a user would."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import settings

ROOT = Path(__file__).resolve().parent.parent

# Property tests draw the same cases on every run (a CI that passed once passes again on the same code);
# new cases are explored on purpose, outside CI: bench/fuzz.py with a new --seed, or
# HYPOTHESIS_PROFILE=explore for the whole suite. A test's own @settings keeps what it does not set.
settings.register_profile("deterministic", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False, database=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "deterministic"))

# The suite run as a background job of a shell without job control (`./scripts/test &` in a script, a CI
# runner that does so) inherits SIGINT ignored, and so would every `duet` it starts: the tests that press
# Ctrl-C (SIGINT) would see it ignored. They test what a terminal's Ctrl-C does: default disposition.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session", autouse=True)
def private_machine_lock(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The tests' measurements lock among themselves, not against a real campaign running on the machine."""
    os.environ["DUETBENCH_LOCK"] = str(tmp_path_factory.mktemp("lock") / "duetbench.lock")


@pytest.fixture(scope="session")
def native_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The installed native programs; built into a temp dir when running from a source tree."""
    import duetbench.execute.native as native

    if all((native.NATIVE_DIR / n).exists() for n in ("duet-launch", "duet-workload", "libduethook.so")):
        return native.NATIVE_DIR
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler to build the native programs")
    out = tmp_path_factory.mktemp("native")
    for name, src, extra in (("duet-launch", "launcher.c", ["-lm"]), ("duet-workload", "workload.c", ["-lm", "-pthread"]),
                             ("libduethook.so", "duethook.c", ["-fPIC", "-shared"])):
        subprocess.run([cc, "-O2", "-std=gnu11", "-I", str(ROOT / "native"), "-o", str(out / name),
                        str(ROOT / "native" / src), *extra], check=True)
    os.environ["DUETBENCH_NATIVE_DIR"] = str(out)
    return out


@pytest.fixture()
def launcher(native_dir: Path) -> Path:
    return native_dir / "duet-launch"


@pytest.fixture()
def workload(native_dir: Path) -> Path:
    return native_dir / "duet-workload"


def cli_env(native_dir: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["DUETBENCH_NATIVE_DIR"] = str(native_dir)
    import duetbench

    src = str(Path(duetbench.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    env["COLUMNS"] = "200"
    return env


@pytest.fixture()
def duet_env(native_dir: Path) -> dict[str, str]:
    """The environment to run the ``duet`` CLI in a subprocess (a fixture: test modules cannot import
    conftest reliably when several directories have one)."""
    return cli_env(native_dir)


@pytest.fixture()
def duet_probe(native_dir: Path, tmp_path: Path):
    """Run ``duet ARGS...`` in one ``python -c`` process, as the ``duet`` program does, with a probe's hooks
    installed first, in a fresh directory. `setup`: source run before (os, sys and runpy imported);
    `at_first_run`: an expression printed, after "at the first run: ", when the orchestrator's first runner
    starts (before its first launch); `then`: source run after the program ended, with its SystemExit as
    `e` (a compare's reporter process ends on its own: it never runs it). Returns the CompletedProcess."""

    def run(setup: str, args: list[str], then: str = "assert e.code in (0, None), e.code\n",
            at_first_run: str | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        if at_first_run is not None:
            setup += ("import duetbench.execute.runner as _runner\n"
                      "_run, _seen = _runner.Runner.run, []\n"
                      "def _first(self, *a, **k):\n"
                      "    if not _seen:\n"
                      "        _seen.append(1)\n"
                      f"        print('at the first run:', {at_first_run}, flush=True)\n"
                      "    return _run(self, *a, **k)\n"
                      "_runner.Runner.run = _first\n")
        script = (f"import os, sys, runpy\n{setup}sys.argv = ['duet', *{args!r}]\n"
                  "try:\n    runpy.run_module('duetbench', run_name='__main__')\nexcept SystemExit as e:\n"
                  + textwrap.indent(then, "    "))
        return subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=cli_env(native_dir),
                              capture_output=True, text=True, timeout=timeout)

    return run


@pytest.fixture()
def duet(native_dir: Path, tmp_path: Path):
    """Run ``duet ARGS...`` in a fresh directory; returns the CompletedProcess."""

    def run(*args: str, timeout: float = 120, check_no_traceback: bool = True) -> subprocess.CompletedProcess[str]:
        result = subprocess.run([sys.executable, "-m", "duetbench", *args], cwd=tmp_path, env=cli_env(native_dir),
                                capture_output=True, text=True, timeout=timeout)
        if check_no_traceback:
            assert "Traceback" not in result.stderr, result.stderr
        return result

    return run


@pytest.fixture(scope="session")
def java_build_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """adapters/java built once per session into a temporary directory (the source tree stays clean);
    each module's jar lands in DIR/<artifactId>/."""
    java, mvn = shutil.which("java"), shutil.which("mvn")
    if java is None or mvn is None:
        pytest.skip("java and mvn are needed to build adapters/java "
                    "(Debian: apt-get install default-jdk-headless maven)")
    out = tmp_path_factory.mktemp("java-build")
    proc = subprocess.run([mvn, "-q", "-B", "package", f"-Dduet.target={out}/${{project.artifactId}}"],
                          cwd=ROOT / "adapters" / "java", capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, f"mvn package failed:\n{proc.stdout[-6000:]}\n{proc.stderr[-3000:]}"
    return out
