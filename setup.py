"""Builds the native parts (launcher, workloads, the Python hook's library) with the system C
compiler at install time.

They are plain executables and a plain shared library loaded with ctypes, not Python extensions, so
they are compiled by a custom build_py step and shipped as package data in ``duetbench/_native``.
The barrier protocol has one implementation, ``adapters/c/duet.h``, included by the launcher
(through ``native/duet_barrier.h``) and by ``libduethook.so``.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

try:  # setuptools >= 70.1 carries bdist_wheel itself; before, the wheel package did
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # pragma: no cover - depends on the build environment
    try:
        from wheel.bdist_wheel import bdist_wheel
    except ImportError:  # no wheel can be built here, but `setup.py build_py` still can
        bdist_wheel = None

HERE = Path(__file__).resolve().parent
PROGRAMS = {
    "duet-launch": ["native/launcher.c"],
    "duet-workload": ["native/workload.c"],
}
# Shared libraries: loaded by duetbench.hook through ctypes.
LIBRARIES = {
    "libduethook.so": ["native/duethook.c"],
}
CFLAGS = ["-O2", "-std=gnu11", "-Wall", "-Wextra", "-Inative"]


def find_compiler() -> str:
    for candidate in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if candidate and shutil.which(candidate):
            return candidate
    sys.stderr.write(
        "\nerror: duetbench needs a C compiler to build its launcher and workloads, and none was found.\n"
        "       Install one (Debian/Ubuntu: apt-get install build-essential) or set CC, then retry.\n\n"
    )
    raise SystemExit(1)


class BuildNative(build_py):
    def run(self) -> None:
        super().run()
        cc = find_compiler()
        out_dir = Path(self.build_lib) / "duetbench" / "_native"
        out_dir.mkdir(parents=True, exist_ok=True)
        builds = [(name, sources, ["-lm", "-pthread"]) for name, sources in PROGRAMS.items()]
        builds += [(name, sources, ["-fPIC", "-shared"]) for name, sources in LIBRARIES.items()]
        for name, sources, extra in builds:
            cmd = [cc, *CFLAGS, "-o", str(out_dir / name), *[str(HERE / s) for s in sources], *extra]
            self.announce("compiling " + " ".join(cmd), level=2)
            result = subprocess.run(cmd, cwd=HERE, capture_output=True, text=True)
            if result.returncode != 0:
                sys.stderr.write(result.stdout + result.stderr)
                sys.stderr.write(f"\nerror: compiling {name} with {cc} failed (see above).\n")
                raise SystemExit(1)


class PlatformWheel(bdist_wheel or object):  # type: ignore[misc]
    """Tags the wheel for the platform it was built on (e.g. py3-none-linux_x86_64).

    It carries native executables, so a py3-none-any wheel would install anywhere and fail at the first
    measurement. They are not Python extensions, so the wheel fits every Python 3 and needs no ABI tag.
    """

    def finalize_options(self) -> None:
        super().finalize_options()
        self.root_is_pure = False

    def get_tag(self) -> tuple[str, str, str]:
        _python, _abi, plat = super().get_tag()
        return "py3", "none", plat


commands: dict[str, type] = {"build_py": BuildNative}
if bdist_wheel is not None:
    commands["bdist_wheel"] = PlatformWheel
setup(cmdclass=commands)
