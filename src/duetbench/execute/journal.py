"""Queued pairs' answers kept on disk until they are stored: what a `kill -9` of the orchestrator would
otherwise lose.

While a batch of queued duet pairs runs (execute/runner.py `_run_queued`) the orchestrator sleeps and
stores nothing until the batch ends. So that a killed orchestrator still keeps every pair that ended
before it, each launcher appends every answer to a journal file in the run's scratch directory as it
answers (native/launcher.c `journal_answer`), and the orchestrator writes, before it sends the batch,
which invocation each answer will be and where the comparison is stored (`Manifest`). Once the batch is
stored the manifest is removed. A `kill -9` leaves both behind, and the next `duet` command of any kind
(execute/scratch.py `sweep_stale_scratch`) stores the pairs both sides of which were answered
(`recover`) before it removes the directory.

Manifest versions: 1 (2026-11-27) — store (an absolute path), comparison_id, first_pair, journals
(CPU -> file), requests (CPU -> [side, index, pair] in the order that launcher answers them), owner (the
orchestrator, as the comparison's options record it).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

if TYPE_CHECKING:
    from duetbench.model.invocation import Invocation

#: The manifest's name in a run's scratch directory.
MANIFEST = "queued-pairs.json"
VERSION = 1

#: Answers of invocations that did not run whole: not stored (a pair needs both sides' measurement).
_NOT_MEASURED = frozenset({"skipped", "interrupted", "launch_error", "barrier_aborted", "barrier_timeout"})


class QueuedRequest(msgspec.Struct, array_like=True, frozen=True):
    side: str
    index: int
    pair: int


class Manifest(msgspec.Struct, frozen=True):
    #: The database file, as an absolute path: the command that recovers runs in another directory.
    store: str
    comparison_id: int
    first_pair: int
    journals: dict[str, str]
    requests: dict[str, list[QueuedRequest]]
    #: The orchestrator that wrote it (`Owner.to_json`): the comparison recovered into must be its own.
    owner: dict[str, object] = msgspec.field(default_factory=dict)
    version: int = VERSION


def begin(directory: Path, manifest: Manifest) -> None:
    """Before a batch is sent: empty its journals and say what their answers will be (written whole, then
    renamed into place, so a kill never leaves half a manifest)."""
    for path in manifest.journals.values():
        with open(path, "wb"):
            pass
    part = directory / (MANIFEST + ".part")
    part.write_bytes(msgspec.json.encode(manifest))
    os.replace(part, directory / MANIFEST)


def end(directory: Path) -> None:
    """The batch is stored: nothing to recover from it."""
    (directory / MANIFEST).unlink(missing_ok=True)


def recover(directory: Path) -> int:
    """Store what a killed orchestrator's last batch measured: every pair both of whose invocations the
    launchers answered whole, unless the comparison already has pairs from it (stored, then killed before
    `end`). The number of pairs stored."""
    from duetbench.execute.invocation import LaunchSpec, invocation_from_result
    from duetbench.store.direct import open_comparison_store

    try:
        manifest = msgspec.json.decode((directory / MANIFEST).read_bytes(), type=Manifest)
    except (OSError, msgspec.DecodeError):
        return 0
    if manifest.version != VERSION or not os.path.isabs(manifest.store) or not manifest.owner:
        return 0
    pairs: dict[int, list[Invocation]] = {}
    for cpu, requests in manifest.requests.items():
        for request, answer in zip(requests, _answers(Path(manifest.journals.get(cpu, ""))), strict=False):
            spec = LaunchSpec(argv=[], side=request.side, index=request.index, pair=request.pair, warmup=False)
            pairs.setdefault(request.pair, []).append(invocation_from_result(spec, answer, None, ""))
    whole: list[Invocation] = []
    for pair in sorted(pairs):
        invocations = pairs[pair]
        if len(invocations) != 2 or any(inv.status in _NOT_MEASURED for inv in invocations):
            break  # the pairs after one cut short did not run either
        whole += sorted(invocations, key=lambda inv: inv.side)
    if not whole:
        return 0
    from duetbench.store.orchestrators import OWNER_KEY

    store = open_comparison_store(manifest.store)
    try:
        record = store.comparison(manifest.comparison_id)
        if record is None or record.options.get(OWNER_KEY) != manifest.owner:
            return 0  # not the comparison the killed orchestrator measured (the file was replaced since)
        if any(inv.pair >= manifest.first_pair for inv in store.invocations(manifest.comparison_id)):
            return 0
        store.add_invocations(manifest.comparison_id, whole)
    finally:
        store.close()
    return len(whole) // 2


def _answers(path: Path) -> list[dict[str, object]]:
    """The journal's whole lines (one cut short by the kill is left out), decoded."""
    try:
        lines = path.read_bytes().split(b"\n")[:-1]
    except OSError:
        return []
    answers = []
    for line in lines:
        try:
            raw = msgspec.json.decode(line)
        except msgspec.DecodeError:
            break
        if not isinstance(raw, dict):
            break
        answers.append(raw)
    return answers
