"""A random environment size per invocation, so that memory-layout bias averages out over runs.

The size of the environment moves the initial stack (argv and envp are copied onto it), and with it the
alignment of everything on the stack. Mytkowicz et al. ("Producing wrong data without doing anything
obviously wrong!", ASPLOS 2009) measured speed-ups and slow-downs of several percent from that alone;
A and B with command lines of different lengths start at different alignments, a bias no number of
runs removes. hyperfine answers with a random-length variable per run; so do we, with one twist for
paired methods: the k-th invocation of A and the k-th of B get the same length, so an A/A pair still
starts from identical layouts (and keeps cancelling in the ratio), while over k the common offset
sweeps a whole page. Deterministic in the key, so a seeded comparison is reproducible.

With ASLR on, Linux already moves the stack by a random sub-page offset at every exec; the variable
matters where ASLR is off (randomize_va_space = 0, ``setarch -R``), where only the environment moves it.
"""
from __future__ import annotations

import random
from functools import lru_cache

#: The variable that carries the padding, visible to the benchmarked command.
ENV_OFFSET_VAR = "DUETBENCH_ENV_OFFSET"
#: Offsets are drawn from [0, PAGE): every stack alignment within a page.
PAGE = 4096


def env_offset(key: str) -> dict[str, str]:
    """``{ENV_OFFSET_VAR: "x" * L}`` with L uniform in [0, PAGE), a function of `key` only (string
    seeding of `random.Random` hashes it with SHA-512, the same on every machine and Python run)."""
    return {ENV_OFFSET_VAR: "x" * _length(key)}


@lru_cache(maxsize=16)
def _length(key: str) -> int:
    # Cached: both sides of a duet pair ask with the same key, between two pairs (~25 µs a seeding here).
    return random.Random(f"duetbench-layout:{key}").randrange(PAGE)
