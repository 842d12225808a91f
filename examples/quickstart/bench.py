#!/usr/bin/env python3
"""A tiny benchmark harness: runs some CPU work N times in one process and prints each iteration's time.

    python3 bench.py --iterations 20 --work 200000
    iteration 0: 0.012345 s
    ...

Every iteration is wrapped in duetbench's hook, so under ``duet run`` a synchronous duet starts each
iteration of A and B together. Outside ``duet run`` (or without duetbench installed) it is a plain loop.
``--work`` scales the work per iteration: give B more work to see duet run detect a slowdown.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time

try:
    from duetbench import hook
except ImportError:
    hook = None  # type: ignore[assignment]


def work(n: int) -> int:
    """Integer arithmetic with a dependency from one step to the next, so nothing can be skipped."""
    h = 1125899906842597
    for i in range(n):
        h = (31 * h + (h >> 7) + i) & 0xFFFFFFFFFFFF
    return h


def iteration() -> contextlib.AbstractContextManager[object]:
    return hook.iteration() if hook is not None else contextlib.nullcontext()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=20, help="iterations to run (default 20)")
    parser.add_argument("--work", type=int, default=200_000, help="loop steps per iteration (default 200000)")
    args = parser.parse_args()
    if hook is None and os.environ.get("DUET_BARRIER"):
        # The other side would wait at every barrier for nothing: better to fail now and say why.
        print("bench.py: duet run asked for a synchronous duet, but this Python cannot import duetbench "
              f"({sys.executable}); run duet from the environment duetbench is installed in", file=sys.stderr)
        return 2
    checksum = 0
    for i in range(args.iterations):
        with iteration():
            start = time.perf_counter()
            checksum = (checksum + work(args.work)) % 1_000_000_007
            elapsed = time.perf_counter() - start
        print(f"iteration {i}: {elapsed:.6f} s", flush=True)
    print(f"# checksum {checksum}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
