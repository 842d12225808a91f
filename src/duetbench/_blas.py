"""numpy's BLAS held to one thread in duetbench's own process, its commands' environment untouched.

OpenBLAS (numpy's BLAS in its wheels) starts a worker thread per CPU when numpy is imported, and each
busy-waits for work before it sleeps: measured on the project's 2-vCPU VM, 55 ms of CPU in the 100 ms
after ``import numpy`` (0.1 ms with one thread). duetbench imports numpy while a comparison runs (the
statistics are imported while the first warm-up pair runs, issue 17; a campaign imports it just
before its first run), so that spin took a CPU from a measured side: the first measured pair of a
20 ms duet was 34-44 % slower on one side in half the comparisons (docs/notes/duet_on_2cpus.md,
point 14). The arrays duetbench computes on are small; one BLAS thread loses nothing.

Why not threadpoolctl (which `analyze/bootstrap.py` uses to hold its matrix products to one thread):
it limits later calls, but the workers the import started spin on regardless — 43 ms of CPU in the
100 ms after ``import numpy`` with ``threadpool_limits(1)`` called right after it.

The BLAS libraries read their thread count from the environment once, when they are loaded, so the
variables are set to 1 only while numpy itself is imported and restored right after: the launchers,
the measured commands and the hooks keep the user's environment.
"""
from __future__ import annotations

import importlib.machinery
import os
import sys
from collections.abc import Sequence
from types import ModuleType

#: OpenBLAS (numpy's wheels), OpenMP (builds with it), MKL (conda's numpy).
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


class OneBlasThread:
    """A meta path finder for the first import of numpy: numpy's own spec, whose loader runs it with
    `THREAD_VARIABLES` set to 1. It steps aside (removes itself) once numpy is found, or when numpy is
    provided by another finder than the standard path finder."""

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != "numpy":
            return None
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return None  # left to whichever finder provides it, without the setting
        exec_module = spec.loader.exec_module

        def exec_with_one_thread(module: ModuleType) -> None:
            saved = {name: os.environ.get(name) for name in THREAD_VARIABLES}
            os.environ.update(dict.fromkeys(THREAD_VARIABLES, "1"))
            try:
                exec_module(module)
            finally:
                for name, value in saved.items():
                    if value is None:
                        os.environ.pop(name, None)
                    else:
                        os.environ[name] = value

        setattr(spec.loader, "exec_module", exec_with_one_thread)  # noqa: B010 - a method of this one loader
        return spec


def install() -> None:
    """Hold numpy's BLAS to one thread when numpy is first imported (nothing if it already was)."""
    if "numpy" not in sys.modules and not any(isinstance(f, OneBlasThread) for f in sys.meta_path):
        sys.meta_path.insert(0, OneBlasThread())
