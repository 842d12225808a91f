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
        builds = [(name, sources, ["-lm"]) for name, sources in PROGRAMS.items()]
        builds += [(name, sources, ["-fPIC", "-shared"]) for name, sources in LIBRARIES.items()]
        for name, sources, extra in builds:
            cmd = [cc, *CFLAGS, "-o", str(out_dir / name), *[str(HERE / s) for s in sources], *extra]
            self.announce("compiling " + " ".join(cmd), level=2)
            result = subprocess.run(cmd, cwd=HERE, capture_output=True, text=True)
            if result.returncode != 0:
                sys.stderr.write(result.stdout + result.stderr)
                sys.stderr.write(f"\nerror: compiling {name} with {cc} failed (see above).\n")
                raise SystemExit(1)


setup(cmdclass={"build_py": BuildNative})
