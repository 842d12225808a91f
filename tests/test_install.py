"""The install builds the native programs, and says clearly when it cannot."""
from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import zipfile
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


def _platform_tag() -> str:
    import sysconfig

    return sysconfig.get_platform().replace("-", "_").replace(".", "_")


def _fresh_venv(path: Path) -> Path:
    """A venv with nothing of ours in it; returns its bin directory."""
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True, timeout=300)
    return path / "bin"


def _outside_env() -> dict[str, str]:
    """This environment without what points into the source tree or its venv."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "DUETBENCH_NATIVE_DIR", "VIRTUAL_ENV")}


def _compare_from(bindir: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """A real duet, A/A on the built-in workload, run by the installed `duet` with nothing from the
    source tree on the paths (the environment names no native directory or PYTHONPATH)."""
    env = _outside_env()
    env["PATH"] = f"{bindir}{os.pathsep}{env.get('PATH', '')}"
    env["COLUMNS"] = "200"
    which = subprocess.run([str(bindir / "duet"), "workload", "--which"], env=env, capture_output=True, text=True,
                           timeout=60)
    assert which.returncode == 0 and str(bindir.parent) in which.stdout, which.stdout + which.stderr
    workload = f"{which.stdout.strip()} integer --ops 2000"
    return subprocess.run([str(bindir / "duet"), "compare", workload, workload, "--runs", "3", "--method", "duet",
                           "--no-progress", "--db", str(cwd / "results.db")],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_wheel_is_platform_tagged_and_works_in_a_fresh_venv(tmp_path: Path) -> None:
    """The wheel carries the native launcher, so it is tagged for this platform (not py3-none-any,
    which would install anywhere and fail at the first measurement), and a fresh venv with only the
    wheel (and its dependencies) installed measures a real duet."""
    wheels = tmp_path / "wheels"
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-q", "-w", str(wheels)],
                           capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stderr
    (wheel,) = wheels.glob("*.whl")
    assert wheel.name == f"duetbench-{_version()}-py3-none-{_platform_tag()}.whl"
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        wheel_meta = archive.read(next(n for n in names if n.endswith(".dist-info/WHEEL"))).decode()
    assert "Root-Is-Purelib: false" in wheel_meta
    for program in ("duet-launch", "duet-workload", "libduethook.so"):
        assert any(n.endswith(f"duetbench/_native/{program}") for n in names), program
    entry_points = archive_text(wheel, ".dist-info/entry_points.txt")
    assert "duet = " in entry_points, entry_points

    bindir = _fresh_venv(tmp_path / "venv")
    # Without the source tree on PYTHONPATH: there pip finds src/duetbench.egg-info (left by `pip install .`),
    # takes duetbench as installed already, installs only its dependencies and no `duet` (seen in CI).
    install = subprocess.run([str(bindir / "pip"), "install", str(wheel)], capture_output=True, text=True,
                             timeout=900, env=_outside_env())
    assert install.returncode == 0, install.stderr
    assert (bindir / "duet").exists(), (install.stdout[-3000:], install.stderr[-2000:], sorted(os.listdir(bindir)))
    result = _compare_from(bindir, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "method duet" in result.stdout and "3 runs" in result.stdout


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("pipx") is None, reason="pipx is not installed (Debian: apt-get install pipx)")
def test_pipx_install_from_a_clone(tmp_path: Path) -> None:
    """`pipx install .` in a clone, as the README says, gives a working `duet`."""
    env = _outside_env()
    env.update(PIPX_HOME=str(tmp_path / "pipx"), PIPX_BIN_DIR=str(tmp_path / "bin"),
               PIPX_MAN_DIR=str(tmp_path / "man"))
    install = subprocess.run(["pipx", "install", "--python", sys.executable, str(ROOT)], env=env,
                             capture_output=True, text=True, timeout=900)
    assert install.returncode == 0, install.stdout + install.stderr
    result = _compare_from(tmp_path / "bin", tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "method duet" in result.stdout


def archive_text(wheel: Path, suffix: str) -> str:
    """The text of the wheel's member whose name ends with `suffix` ("" if none does)."""
    with zipfile.ZipFile(wheel) as archive:
        name = next((n for n in archive.namelist() if n.endswith(suffix)), None)
        return archive.read(name).decode() if name else ""


def _version() -> str:
    import tomllib

    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="not a git checkout")
def test_git_url_builds_a_platform_wheel(tmp_path: Path) -> None:
    """The README's `pip install 'git+URL'` form, with a file URL of this checkout (what is committed)."""
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path),
                            f"git+file://{ROOT}"], capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stderr
    (wheel,) = tmp_path.glob("*.whl")
    assert wheel.name.endswith(f"-py3-none-{_platform_tag()}.whl")
