"""Duet pairs queued to the launchers (issue 17): the launchers run them one after another, each pair's two
children meeting at a barrier page of its own, while the orchestrator sleeps; real processes, real pinning."""
from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

import pytest
from queued_runs import fixed_pairs, record_batches
from stopped_children import kill_stopped_children, stopped_children

from duetbench.execute import runner as runner_module
from duetbench.execute.runner import Runner, RunSettings

if TYPE_CHECKING:
    from duetbench.execute.invocation import Invocation

two_cpus = pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs to run a duet")
BURN = "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done"  # ~10-30 ms of CPU in dash



@two_cpus
def test_queued_pairs_are_measured_as_released_ones(native_dir: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Every pair queued runs once, both sides together on their drawn CPUs, each side's CPU time counted
    by its own cgroup once, with its steal; the warm-up pair is released by the orchestrator."""
    batches = record_batches(monkeypatch)
    runs = {side: tmp_path / side for side in "AB"}
    settings = RunSettings(method="duet", argv={s: ["sh", "-c", f"{BURN}; echo $DUET_ITERATION >> {runs[s]}"]
                                                for s in "AB"}, cpus=(0, 1), seed=5, warmup=1)
    go_on, certain = fixed_pairs(14)
    outcome = Runner(settings, go_on, lambda inv: None, certain=certain).run()
    assert outcome.status == "complete" and len(outcome.measured) == 28
    assert batches and sum(count for _, count in batches) >= 13 and batches[0][0] == 1
    for side in "AB":
        assert runs[side].read_text().split() == [str(i) for i in range(15)]  # the warm-up and 14, once each
    pairs: dict[int, list[Invocation]] = {}
    for inv in outcome.measured:
        pairs.setdefault(inv.pair, []).append(inv)
        assert inv.status == "ok" and inv.cpu_seen == inv.cpu_requested and inv.steal_s is not None
        if inv.cgroup_cpu_s is not None:
            assert inv.cgroup_cpu_s == pytest.approx(inv.user_s + inv.sys_s, rel=0.25, abs=0.002), inv
    assert sorted(pairs) == list(range(1, 15))
    apart_ns = []
    for pair in pairs.values():
        a, b = sorted(pair, key=lambda i: i.side)
        assert (a.side, b.side) == ("A", "B") and a.cpu_requested != b.cpu_requested
        apart_ns.append(abs(a.start_ns - b.start_ns))
        # Released together by the pair's barrier page: never one side after the other's command, unless the
        # later one was preempted between the barrier and its start stamp (on a machine busy with other work;
        # its involuntary context switches count that time, the child's from its fork) ...
        late = max(a, b, key=lambda i: i.start_ns)
        assert apart_ns[-1] < min(a.end_ns - a.start_ns, b.end_ns - b.start_ns) or late.nivcsw > 0, (a, b)
    # ... and as a rule within microseconds (a side preempted between the barrier and its start stamp, on
    # a machine busy with other work, can start a few ms late: CI runs beside other test suites).
    assert sorted(apart_ns)[len(apart_ns) // 2] < 1_000_000, apart_ns
    # the CPUs are drawn per pair, also within a batch
    assert len({(p[0].side, p[0].cpu_requested) for p in pairs.values()}) == 2


@two_cpus
def test_the_orchestrator_reads_no_answer_while_its_batch_runs(native_dir: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing of the orchestrator runs beside a queued pair: it reads a batch's answers once its last pair
    ended, not as they come."""
    from duetbench.execute import invocation

    batches = record_batches(monkeypatch)
    reads: list[tuple[int, int]] = []
    original = invocation.ServedInvocation.wait

    def wait(self: invocation.ServedInvocation) -> Invocation:
        reads.append((time.monotonic_ns(), self.spec.pair))
        return original(self)

    monkeypatch.setattr(invocation.ServedInvocation, "wait", wait)
    settings = RunSettings(method="duet", argv={"A": ["sleep", "0.01"], "B": ["sleep", "0.03"]}, cpus=(0, 1),
                           seed=6, warmup=1)
    go_on, certain = fixed_pairs(12)
    outcome = Runner(settings, go_on, lambda inv: None, certain=certain).run()
    assert outcome.status == "complete" and batches
    ends: dict[int, int] = {}
    for inv in outcome.measured:
        ends[inv.pair] = max(ends.get(inv.pair, 0), inv.end_ns)
    for first, count in batches:
        last_end = max(ends[p] for p in range(first, first + count))
        for when, pair in reads:
            if first <= pair < first + count:
                assert when >= last_end, (pair, (last_end - when) / 1e6)


@two_cpus
@pytest.mark.parametrize("ignore_failure", [False, True])
def test_a_failed_pair_halts_the_pairs_queued_after_it(native_dir: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch, ignore_failure: bool) -> None:
    """A's sixth invocation exits 1: the comparison fails there and no pair after it runs (the launchers
    answer them unrun); with --ignore-failure an exit code is a measurement and the queue goes on."""
    batches = record_batches(monkeypatch)
    runs = {side: tmp_path / side for side in "AB"}
    fail = f"echo $DUET_ITERATION >> {runs['A']}; test $DUET_ITERATION -ne 5"
    settings = RunSettings(method="duet", argv={"A": ["sh", "-c", fail],
                                                "B": ["sh", "-c", f"echo $DUET_ITERATION >> {runs['B']}"]},
                           cpus=(0, 1), seed=7, warmup=1, ignore_failure=ignore_failure)
    stored: list[Invocation] = []
    go_on, certain = fixed_pairs(12)
    outcome = Runner(settings, go_on, stored.append, certain=certain).run()
    assert batches and batches[0] == (1, 12)  # the warm-up timed, all queued at once
    if ignore_failure:
        assert outcome.status == "complete" and len(stored) == 2 * 13
        assert [i.status for i in stored if i.side == "A" and i.index == 5] == ["failed"]
        return
    assert outcome.status == "failed" and outcome.failure is not None
    assert (outcome.failure.side, outcome.failure.index, outcome.failure.exit_code) == ("A", 5, 1)
    assert sorted({i.pair for i in stored}) == list(range(6))  # the warm-up, 1-4 and the failed pair 5
    for side in "AB":
        assert runs[side].read_text().split() == [str(i) for i in range(6)]


@two_cpus
def test_an_interrupt_keeps_the_queued_pairs_that_ended_before_it(native_dir: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C in the middle of a batch: the pairs that ended before it are stored, whole; the one it cut
    short and those after it are not."""
    monkeypatch.setattr(runner_module, "QUEUE_SPAN_S", 10.0)
    batches = record_batches(monkeypatch)
    settings = RunSettings(method="duet", argv={"A": ["sleep", "0.05"], "B": ["sleep", "0.05"]}, cpus=(0, 1),
                           seed=8, warmup=1)
    stored: list[Invocation] = []

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    go_on, certain = fixed_pairs(40)
    runner = Runner(settings, go_on, stored.append, certain=certain)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.9)
        outcome = runner.run()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert outcome.status == "interrupted" and batches and batches[0][1] == 40
    measured = [i for i in stored if not i.warmup]
    assert len(measured) >= 2 * 5  # ~0.8 s of 50 ms pairs ended before the interrupt
    assert all(i.status == "ok" for i in measured)
    pairs = sorted({i.pair for i in measured})
    assert pairs == list(range(1, len(pairs) + 1)) and len(measured) == 2 * len(pairs)
    assert outcome.measured == measured


def _pair(k: int, a: float, b: float) -> list[Invocation]:
    from duetbench.model.invocation import Invocation

    start = 1_000_000_000 + k * 50_000_000
    return [Invocation(side=side, index=k, pair=k, warmup=False, status="ok", exit_code=0, signal=0,
                       start_ns=start, end_ns=start + int(wall * 1e9), wall_s=wall, cpu_s=wall, user_s=wall,
                       sys_s=0.0, cgroup_cpu_s=None, maxrss_kb=1, nvcsw=0, nivcsw=0, minflt=0, majflt=0,
                       cpu_requested=k % 2 if side == "A" else 1 - k % 2, cpu_seen=0, orphans_reaped=0)
            for side, wall in (("A", a), ("B", b))]


@pytest.mark.parametrize("seed, slower, spread, options", [
    (1, 1.0, 0.02, {}),
    (2, 1.05, 0.02, {}),
    (3, 1.0, 0.004, {}),  # narrow: the precision stop comes early
    (4, 1.2, 0.05, {"min_runs": 30}),
    (5, 1.0, 0.03, {"stop_on_evidence": False, "min_runs": 5}),
    (6, 1.0, 0.002, {"run_criterion": "cv", "min_runs": 12}),
    (7, 1.0, 0.05, {"time_budget": 3.1}),  # stops on the budget: 40 ms a pair below
    (8, 1.0, 0.05, {"max_runs": 57, "target_rciw": 0.0001}),
])
def test_asking_the_stop_rule_only_when_it_may_stop_stops_at_the_same_run(
        seed: int, slower: float, spread: float, options: dict[str, object]) -> None:
    """`certain` skips only counts at which the adaptive stop rule cannot stop: asked after each run or
    only when it may stop (as queued pairs ask it), it stops at the same run with the same reason."""
    import numpy as np

    from duetbench.config.compare import CompareOptions
    from duetbench.usecases.compare import _Stop, _stop_rule

    rng = np.random.default_rng(seed)
    walls = 0.02 * (1 + spread * rng.standard_normal((400, 2)))
    measured = [inv for k in range(400) for inv in _pair(k, walls[k, 0], walls[k, 1] * slower)]
    opts = CompareOptions(command_a="a", command_b="b", method="duet", seed=seed, **options)

    def stop_at(batched: bool) -> tuple[int, str, list[int]]:
        stop = _Stop()
        go_on, certain = _stop_rule(opts, "duet", lambda n, text: None, stop=stop)
        n, asked = 0, []
        while True:
            asked.append(n)
            if not go_on(measured[:2 * n], 0.04 * n):
                return n, stop.reason, asked
            n += certain(measured[:2 * n], 0.04 * n) if batched else 1

    every, batched = stop_at(False), stop_at(True)
    assert batched[:2] == every[:2]
    if not options.get("run_criterion") and every[0] > 20:
        assert len(batched[2]) < len(every[2])  # fewer looks: pairs were queued in between


def test_a_killed_batchs_journal_is_stored_once_and_only_its_whole_pairs(tmp_path: Path) -> None:
    """`journal.recover`: the pairs both sides of which were answered whole, in order, up to the first
    cut short; a journal line the kill cut in half is left out; a batch already stored is not stored
    again."""
    import msgspec

    from duetbench.execute import journal
    from duetbench.store.direct import open_comparison_store
    from duetbench.store.orchestrators import with_owner

    store = open_comparison_store(tmp_path / "r.db")
    options = with_owner({})
    comparison = store.begin_comparison(method="duet", name_a="A", name_b="B", command_a="a", command_b="b", seed=1,
                                        options=options, host={}, tool_version="t")
    store.close()

    def answer(status: str, k: int) -> bytes:
        return msgspec.json.encode({"status": status, "exit_code": 0, "start_ns": 10**9 + k, "end_ns": 2 * 10**9 + k,
                                    "utime_us": 1000, "stime_us": 0, "cpu_requested": 0})

    cpu0 = tmp_path / "j0"
    cpu1 = tmp_path / "j1"
    manifest = journal.Manifest(
        store=str(tmp_path / "r.db"), comparison_id=comparison, first_pair=3,
        journals={"0": str(cpu0), "1": str(cpu1)},
        requests={"0": [journal.QueuedRequest("A", k, k) for k in range(3, 8)],
                  "1": [journal.QueuedRequest("B", k, k) for k in range(3, 8)]}, owner=options["orchestrator"])
    # Named relatively, or by another orchestrator, the store is not this one's: nothing is recovered.
    for wrong in (msgspec.structs.replace(manifest, store="r.db"),
                  msgspec.structs.replace(manifest, owner={**manifest.owner, "pid": 1})):
        journal.begin(tmp_path, wrong)
        assert journal.recover(tmp_path) == 0
    journal.begin(tmp_path, manifest)
    # pairs 3 and 4 whole; 5 interrupted on one side (the kill); 6 half a line
    cpu0.write_bytes(b"\n".join([answer("ok", 3), answer("ok", 4), answer("ok", 5), answer("ok", 6)[:20]]) + b"\n")
    cpu1.write_bytes(b"\n".join([answer("ok", 3), answer("failed", 4), answer("interrupted", 5)]) + b"\n")
    assert journal.recover(tmp_path) == 2
    assert journal.recover(tmp_path) == 0  # stored already: not twice
    store = open_comparison_store(tmp_path / "r.db")
    stored = store.invocations(comparison)
    store.close()
    assert [(i.pair, i.side, i.status) for i in stored] == [(3, "A", "ok"), (3, "B", "ok"), (4, "A", "ok"),
                                                            (4, "B", "failed")]
    journal.end(tmp_path)
    assert journal.recover(tmp_path) == 0  # no manifest: nothing to recover


@two_cpus
def test_a_launcher_gone_in_the_middle_of_a_batch_ends_it_at_once(native_dir: Path) -> None:
    """A launcher killed while its batch runs: the comparison fails with its launch error well before the
    barrier's timeout (the partner's next child is not left waiting at its page), the pairs that ended are
    kept."""
    import threading

    settings = RunSettings(method="duet", argv={"A": ["sleep", "0.02"], "B": ["sleep", "0.02"]}, cpus=(0, 1),
                           seed=9, warmup=1, barrier_timeout_s=20.0)
    go_on, certain = fixed_pairs(200)
    stored: list[Invocation] = []
    runner = Runner(settings, go_on, stored.append, certain=certain)

    def kill_one() -> None:
        os.kill(runner._servers[1].process.pid, signal.SIGKILL)

    timer = threading.Timer(0.6, kill_one)
    timer.start()
    started = time.monotonic()
    outcome = runner.run()
    timer.join()
    assert time.monotonic() - started < 5
    assert outcome.status == "failed" and outcome.failure is not None
    assert outcome.failure.status == "launch_error"
    ok = [i for i in outcome.measured if i.ok]
    assert len(ok) >= 2 * 5 and all(i.pair < outcome.failure.pair for i in ok if i.side == outcome.failure.side)


def test_sequential_rounds_are_queued_too(native_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Sequential rounds queued to the one launcher: each round runs both sides once, in its drawn order,
    on the sequential CPU; each invocation is stored apart, with its steal, as released ones are."""
    batches = record_batches(monkeypatch)
    runs = tmp_path / "order"
    settings = RunSettings(method="sequential", argv={s: ["sh", "-c", f"echo {s}$DUET_ITERATION >> {runs}"]
                                                      for s in "AB"}, cpus=(0, 1), seed=10, warmup=1)
    go_on, certain = fixed_pairs(20)
    outcome = Runner(settings, go_on, lambda inv: None, certain=certain).run()
    assert outcome.status == "complete" and len(outcome.measured) == 40
    assert batches and batches[0] == (1, 20)
    lines = runs.read_text().split()
    assert sorted(lines[2:]) == sorted(f"{s}{k}" for s in "AB" for k in range(1, 21))
    assert [line[1:] for line in lines[2:]] == [str(k) for k in range(1, 21) for _ in "AB"]  # round by round
    assert {line[0] for line in lines[2::2]} == {"A", "B"}  # the order is drawn per round
    for inv in outcome.measured:
        assert inv.status == "ok" and inv.cpu_requested == 1 and inv.steal_s is not None


def test_a_failed_sequential_invocation_halts_the_rounds_queued_after_it(native_dir: Path, tmp_path: Path) -> None:
    runs = tmp_path / "order"
    fail = f"echo B$DUET_ITERATION >> {runs}; test $DUET_ITERATION -ne 7"
    settings = RunSettings(method="sequential", argv={"A": ["sh", "-c", f"echo A$DUET_ITERATION >> {runs}"],
                                                      "B": ["sh", "-c", fail]}, cpus=(0, 1), seed=11, warmup=1)
    go_on, certain = fixed_pairs(20)
    stored: list[Invocation] = []
    outcome = Runner(settings, go_on, stored.append, certain=certain).run()
    assert outcome.status == "failed" and outcome.failure is not None
    assert (outcome.failure.side, outcome.failure.index) == ("B", 7)
    assert stored[-1] is outcome.failure and max(i.index for i in stored) == 7
    assert runs.read_text().split()[-1] == "B7"  # nothing ran after the failure


@two_cpus
def test_no_queued_child_waits_beside_the_partners_command(native_dir: Path) -> None:
    """The shorter side's next child is forked only once the longer side's launcher is ready too: forked at once,
    it would spin at the barrier beside that command (~190 ms a pair here), work beside the later side
    that slows it (bench/beside.py). Its CPU before exec stays that of a set-up."""
    settings = RunSettings(method="duet", argv={"A": ["sleep", "0.01"], "B": ["sleep", "0.2"]}, cpus=(0, 1),
                           seed=12, warmup=1)
    go_on, certain = fixed_pairs(6)
    outcome = Runner(settings, go_on, lambda inv: None, certain=certain).run()
    assert outcome.status == "complete" and len(outcome.measured) == 12
    for inv in outcome.measured:
        assert inv.user_s + inv.sys_s - inv.cpu_s < 0.05, inv  # the spin before exec (the command sleeps)


@pytest.mark.parametrize("method", ["duet", "sequential"])
def test_a_launcher_stopped_in_the_middle_of_a_batch_times_out(native_dir: Path, monkeypatch: pytest.MonkeyPatch,
                                                               method: str) -> None:
    """A's fourth invocation stops its launcher (`kill -STOP $PPID`) in a queued batch, whose answers the
    orchestrator does not wait for one by one: it notices that the launcher answered nothing for --timeout
    and the barrier waits and some slack, ends it, and the run ends at that invocation as timed out; what
    ended before is kept. (Here that is 1 + 2 x 1 + 5 s for a duet: the barrier's timeout is 1 s. The bound
    below is generous.)"""
    import threading

    if method == "duet" and len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs two CPUs to run a duet")
    batches = record_batches(monkeypatch)
    stop = 'if [ "$DUET_ITERATION" = 4 ]; then kill -STOP $PPID; fi'
    settings = RunSettings(method=method, argv={"A": ["sh", "-c", stop], "B": ["sleep", "0.001"]}, cpus=(0, 1),
                           seed=13, warmup=1, timeout_s=1.0, barrier_timeout_s=1.0)
    go_on, certain = fixed_pairs(12)
    stored: list[Invocation] = []
    outcomes = []
    run = threading.Thread(target=lambda: outcomes.append(Runner(settings, go_on, stored.append,
                                                                 certain=certain).run()), daemon=True)
    run.start()
    run.join(90)
    if run.is_alive():
        kill_stopped_children()  # let the run end, or it holds on to this process for ever
        run.join(30)
        pytest.fail("the orchestrator waited for ever for a launcher its command had stopped")
    assert stopped_children() == []
    assert batches and batches[0][0] == 1 and batches[0][1] >= 4  # the stop came in a queued batch
    outcome = outcomes[0]
    assert outcome.status == "failed" and outcome.failure is not None
    assert (outcome.failure.side, outcome.failure.index, outcome.failure.status) == ("A", 4, "timeout")
    assert stored[-1 if method == "sequential" else -2] is outcome.failure
    for inv in stored:
        assert inv.status == "ok" or inv is outcome.failure, inv
    assert {i.index for i in stored if i.side == "A"} == set(range(5))  # the warm-up, 1-3 and the stopped one
