"""Python's cyclic garbage collector while a `duet` process starts (issue 17).

Importing makes tens of thousands of objects (classes, functions, their dicts) and none of them is
garbage; yet every 700 new ones Python's collector walks the young ones, and every tenth time the older
ones too. Counted in `duet compare` on a 2-vCPU AMD EPYC VM (gc.callbacks): 26 young and 3 older
collections before the first command started, 6-10 ms of its ~150 ms; in the reporter process, whose
imports (numpy, rich) are what the first measured pair waits for, 51 and 5, 12-18 ms. Collecting less
often does not help: a young collection walks all the young objects, so 3 collections at a threshold of
20 000 took as long as the 29 (and the reporter's one older collection 21-25 ms). So a process starts
with the collector off (`defer_collection`, the first thing `duet` does) and turns it on once start-up
is over (`settle`), with what start-up made frozen (`gc.freeze`: no later collection walks it):

- `duet compare`'s orchestrator when its runner starts measuring (everything before is parsing,
  checking and importing, and a compare that ends before measuring is short);
- its reporter once it has imported what the report needs;
- every other command before it runs (cli/main.py), so that a long analysis or import collects as usual.
"""
from __future__ import annotations

import gc

#: Commands whose start-up runs with the collector off until their runner settles it (cli/main.py).
SETTLED_WHEN_MEASURING = ("compare",)

_deferred = False


def defer_collection() -> None:
    """Turn the cyclic collector off until `settle` (reference counting still frees what is dropped)."""
    global _deferred
    if gc.isenabled():
        gc.disable()
        _deferred = True


def settle() -> None:
    """Start-up is over: freeze what it made and turn the collector back on (once; a no-op after, and if
    `defer_collection` did not turn it off)."""
    global _deferred
    if _deferred:
        gc.freeze()
        gc.enable()
        _deferred = False
