"""A tiny in-process harness for the `duet run` tests: N iterations of integer work, timed, with the
duetbench hook around each one (warmups included), one line per iteration on stdout."""
from __future__ import annotations

import argparse
import math
import os
import sys
import time

from duetbench import hook


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--iterations", type=int, default=8)
    p.add_argument("--warmups", type=int, default=1)
    p.add_argument("--work", type=int, default=100_000)
    p.add_argument("--exit", type=int, default=0, help="exit with this code after the iterations")
    p.add_argument("--sleep", type=float, default=0.0, help="sleep this long before the first iteration")
    p.add_argument("--result", help="also write the values to this file, one per line")
    p.add_argument("--no-hook", action="store_true", help="behave like a harness without the duet hook")
    p.add_argument("--waits", type=int, default=1,
                   help="call before_iteration this many times per iteration (framework and own code both do)")
    p.add_argument("--stamps", action="store_true",
                   help="append each iteration's own CLOCK_MONOTONIC start and end (ns) to its line")
    p.add_argument("--warm", type=float, default=0.0,
                   help="warm up: iteration i does (1 + WARM * exp(-i/4)) times the work, like a JIT settling")
    args = p.parse_args()
    time.sleep(args.sleep)
    values = []
    for i in range(args.warmups + args.iterations):
        kind = "w" if i < args.warmups else "m"
        for _ in range(0 if args.no_hook else args.waits):
            hook.before_iteration(kind)
        s0 = time.monotonic_ns()
        t0 = time.perf_counter()
        x = 0
        for j in range(int(args.work * (1 + args.warm * math.exp(-i / 4)))):
            x += j
        dt = time.perf_counter() - t0
        s1 = time.monotonic_ns()
        if not args.no_hook:
            hook.after_iteration()
        label = "warmup" if kind == "w" else "iteration"
        stamps = f" {s0} {s1}" if args.stamps else ""
        print(f"{label} {i}: {dt:.9f} s{stamps}", flush=True)
        if kind == "m":
            values.append(dt)
    if args.result:
        with open(args.result, "w") as f:
            f.write("".join(f"{v:.9f}\n" for v in values))
    print(f"side {os.environ.get('DUET_SIDE')} done, env offset {len(os.environ.get('DUETBENCH_ENV_OFFSET', ''))}",
          file=sys.stderr)
    return args.exit


if __name__ == "__main__":
    sys.exit(main())
