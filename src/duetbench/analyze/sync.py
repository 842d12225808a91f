"""Was a synchronous duet run synchronized? Judged once when the run is stored, read back by every analysis.

The sync duet pairs iteration k of A with iteration k of B because the hooks made both start together at
the barrier. Nothing else guarantees it: a harness without the hook (pyperf without ``--inherit-environ
DUET_SIDE,…``, Google Benchmark without the hook calls, JMH without ``-prof``), a hook that lost the
barrier mid-run, or sides that run different numbers of iterations leave the k-th iterations at
unrelated times. Pairing them by index is then a sequential comparison in disguise whose CI is too
narrow, so such runs are paired by time overlap instead (the aduet analysis) or refused.

The evidence, in the order it is checked (the first that fails decides):

1. the harness's own metadata, where it records the hook's state (pyperf: ``duet_sync``);
2. the hooks' iteration logs: both sides must have written one;
3. the iteration counts of both sides (hook log and parsed output) must agree;
4. the barrier page's generation counter: the launchers' start barrier is one release, every iteration
   the hooks synchronized is one more, so a run is synchronized only if the barrier released at least
   once per logged iteration;
5. the barrier page's arrival counter, which a synchronized run leaves at 0: a party still counted there
   arrived and was never released (a hook that gave up at an abort or a timeout). The generation cannot
   show it when one side waits more often than it logs (a harness calling ``before_iteration`` twice per
   iteration): its partner's releases then number its logged iterations, half of them spent on the
   extra waits.

The verdict is kept as one line in the run's stored notes (``NOTE_PREFIX``), so the store needs no new
column and older stores (no such line) read back as "not recorded".
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

NOTE_PREFIX = "duet sync: "

NO_LOG = "no hook iteration log"
HARNESS = "harness metadata says duet_sync"
COUNTS = "iteration counts differ"
BARRIER = "barrier not passed for every iteration"


@dataclass(frozen=True)
class SyncStatus:
    synchronized: bool
    #: Short and shared by runs with the same cause, for summaries ("no hook iteration log"); "" if synchronized.
    cause: str
    #: The evidence for this run, one clause.
    detail: str

    def note(self) -> str:
        if self.synchronized:
            return f"{NOTE_PREFIX}synchronized: {self.detail}"
        return f"{NOTE_PREFIX}unsynchronized ({self.cause}): {self.detail}"


def from_notes(notes: Iterable[str]) -> SyncStatus | None:
    """The status a run's notes record; None when they record none (stored before it was recorded)."""
    for note in notes:
        if not note.startswith(NOTE_PREFIX):
            continue
        text = note[len(NOTE_PREFIX):]
        if text.startswith("synchronized: "):
            return SyncStatus(True, "", text[len("synchronized: "):])
        if text.startswith("unsynchronized (") and "): " in text:
            cause, detail = text[len("unsynchronized ("):].split("): ", 1)
            return SyncStatus(False, cause, detail)
    return None


def judge(*, log_counts: Mapping[str, int], parsed_counts: Mapping[str, int], releases: int | None,
          harness_sync: Mapping[str, str], ended_by_us: bool = False, waiting: int = 0) -> SyncStatus:
    """The status of one sync duet run from its evidence (module docstring).

    ``log_counts``/``parsed_counts``: lines in each side's hook log / iterations its parser found;
    ``releases``: barrier releases after the launchers' start barrier (None: not known);
    ``harness_sync``: each side's hook state as the harness recorded it, where it does;
    ``waiting``: parties left arrived but unreleased at the barrier when the run ended;
    ``ended_by_us``: adaptive warmup stopped both sides, which may leave one iteration's difference.
    """
    for side, state in sorted(harness_sync.items()):
        states = set(state.split(","))
        if states != {"synchronized"}:
            return SyncStatus(False, f"{HARNESS} {state}",
                              f"side {side}'s harness recorded the duet hook's state as {state!r}, not "
                              "'synchronized' (pyperf: pass --inherit-environ DUET_SIDE,DUET_ITERATION_LOG,"
                              "DUET_BARRIER,DUET_BARRIER_TIMEOUT_MS)")
    silent = sorted(side for side, n in log_counts.items() if n == 0)
    if silent:
        which = " and ".join(silent)
        return SyncStatus(False, NO_LOG, f"side {which} wrote no hook iteration log, so the harness never met "
                                         "the other side at the barrier (is the duet hook loaded? docs/hooks.md)")
    slack = 1 if ended_by_us else 0
    for what, counts in (("logged", log_counts), ("parsed", parsed_counts)):
        if len(counts) == 2 and abs(counts["A"] - counts["B"]) > slack:
            return SyncStatus(False, COUNTS, f"A has {counts['A']} {what} iterations and B {counts['B']}; give "
                                             "both sides the same iteration counts")
    logged = max(log_counts.values(), default=0)
    if releases is not None and releases + slack < logged:
        return SyncStatus(False, BARRIER, f"the barrier released {releases} times for {logged} logged iterations "
                                          "per side (the hook lost the barrier or could not use it)")
    if waiting > slack:
        return SyncStatus(False, BARRIER, "a side waited at the barrier and was never released, so it went on "
                                          "unsynchronized (its stderr says from which iteration: 'duet: side … "
                                          "stopped synchronizing'); does one side call before_iteration more "
                                          "often than the other?")
    if releases is None:
        return SyncStatus(True, "", f"both sides logged {logged} iterations (barrier releases not known)")
    return SyncStatus(True, "", f"the barrier released for every one of the {logged} logged iterations of both sides")


@dataclass(frozen=True)
class GroupSync:
    """How the duet runs of one benchmark are to be paired, and the line every output states."""

    #: "sync": by index, over `runs`; "overlap": by time overlap (the aduet analysis) over `runs`;
    #: "refuse": no duet result, `statement` says why.
    pairing: str
    runs: tuple[int, ...]
    statement: str


def plan_pairing(statuses: Mapping[int, SyncStatus | None], has_timestamps: bool) -> GroupSync:
    """The pairing of one benchmark's duet runs (keyed by repetition) from their recorded status.

    Sync pairing only when every run was synchronized. Otherwise overlap pairing of all runs (a
    synchronized run's iterations overlap almost wholly, so it pairs the same way), which needs
    timestamps; without them only the synchronized runs are paired by index, or, with none, the
    benchmark's duet is refused."""
    runs = tuple(sorted(statuses))
    total = len(runs)
    bad = {r: s for r, s in statuses.items() if s is not None and not s.synchronized}
    unknown = [r for r, s in statuses.items() if s is None]
    if not bad:
        if unknown:
            return GroupSync("sync", runs, f"duet: synchronization of {len(unknown)} of {total} runs not recorded "
                                           "(stored by an older duetbench or imported) — paired by iteration")
        return GroupSync("sync", runs, f"duet: {total} of {total} runs synchronized (barrier passed for every "
                                       "iteration) — paired by iteration")
    causes = sorted({s.cause for s in bad.values()})
    head = f"duet: {len(bad)} of {total} runs unsynchronized ({'; '.join(causes)})"
    if has_timestamps:
        return GroupSync("overlap", runs, f"{head} — paired by overlap instead")
    good = tuple(r for r in runs if r not in bad)
    if good:
        return GroupSync("sync", good, f"{head} and without timestamps to pair by overlap — left out; the "
                                       f"{len(good)} synchronized runs paired by iteration")
    return GroupSync("refuse", (), f"{head} and without timestamps to pair by overlap — no duet result "
                                   "(load the duet hook, or use the sequential method)")


def run_sync_statuses(runs: Iterable[object]) -> dict[tuple[str, int], SyncStatus | None]:
    """(benchmark, repetition) → recorded status of every finished sync duet run (RunRecord-like objects)."""
    return {(r.benchmark, r.repetition): from_notes(r.notes)  # type: ignore[attr-defined]
            for r in runs if r.method == "duet" and r.status == "ok"}  # type: ignore[attr-defined]
