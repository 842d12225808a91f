"""Issue 16 item 6: a campaign run's output goes to disk and is parsed from there in chunks; the
orchestrator's memory does not grow with what a benchmark prints."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

# 200 MB of noise around three values; written in 1 MB pieces, so the benchmark itself stays small.
BENCH = """
import sys
line = "x" * 1023 + "\\n"
piece = line * 1024
for i in range(200):
    sys.stdout.write(piece)
    if i % 70 == 0:
        sys.stdout.write(f"iteration {i}: 0.{i + 1:03d} s\\n")
sys.stdout.flush()
"""


# `duet` itself, writing its own peak RSS when it exits: VmHWM of /proc/self/status, which starts afresh at
# exec (getrusage's ru_maxrss does not: it keeps the peak of the forked copy of a large test process).
ORCHESTRATOR = """
import atexit, re, runpy, sys
def peak():
    status = open("/proc/self/status").read()
    open("peak_rss_kb", "w").write(re.search(r"VmHWM:\\s+(\\d+) kB", status).group(1))
atexit.register(peak)
sys.argv = ["duet", *sys.argv[1:]]
runpy.run_module("duetbench", run_name="__main__")
"""


DACAPO = 'f"===== DaCapo 23.11-chopin fop PASSED in {i + 1} msec =====\\n"'
PARSERS = {"regex": ("{name: regex, pattern: 'iteration \\d+: (?P<value>[0-9.]+) s'}", BENCH),
           # a line-by-line parser of the registry (DaCapo's banners), reading the file one line at a time
           "dacapo": ("{name: dacapo, stream: stdout}",
                      BENCH.replace('f"iteration {i}: 0.{i + 1:03d} s\\n"', DACAPO))}


@pytest.mark.parametrize("parser", sorted(PARSERS))
def test_a_benchmark_printing_200_mb_does_not_grow_the_orchestrator(duet_env, tmp_path: Path, parser: str) -> None:  # type: ignore[no-untyped-def]
    spec, bench = PARSERS[parser]
    assert bench != BENCH or parser == "regex"
    (tmp_path / "loud.py").write_text(bench)
    (tmp_path / "c.yml").write_text(
        f"campaign: loud\nmethods: {{sequential: 1}}\nparser: {spec}\n"
        f"benchmarks:\n  loud: {{command: '{sys.executable} loud.py'}}\n")
    proc = subprocess.Popen([sys.executable, "-c", ORCHESTRATOR, "run", "c.yml", "--db", "r.db", "--no-progress"],
                            cwd=tmp_path, env=duet_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = proc.communicate(timeout=600)
    peak_mb = int((tmp_path / "peak_rss_kb").read_text()) / 1024
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    stdout_files = list((tmp_path / "campaigns").rglob("stdout*"))
    assert stdout_files and all(f.stat().st_size > 200 * 2**20 for f in stdout_files)  # kept on disk, whole
    from duetbench.store.campaigns import CampaignStore
    from duetbench.store.db import Store

    store = Store(tmp_path / "r.db")
    try:
        runs = CampaignStore(store).runs(1)
    finally:
        store.close()
    assert [r.status for r in runs] == ["ok", "ok"] and all(len(r.iterations) == 3 for r in runs)
    assert peak_mb < 180, f"orchestrator peak RSS {peak_mb:.0f} MB for 200 MB of output"


def test_chunked_regex_search_finds_what_one_search_over_the_whole_text_finds(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import random
    import re

    from duetbench.harness.parsers import regex_text

    monkeypatch.setattr(regex_text, "OVERLAP", 400)
    rng = random.Random(1)
    for _ in range(200):
        text = "".join(rng.choice(["it 1.5 s\n", "noise\n", "x" * rng.randint(0, 120) + "\n", "it 2 s\n", "\n",
                                   "val=3\nend\n"]) for _ in range(200))
        size = rng.randint(1, 300)
        chunks = [text[i:i + size] for i in range(0, len(text), size)]
        for pattern in (r"^it (?P<value>[0-9.]+) s$", r"val=(?P<value>\d+)\nend", r"(?P<value>\d+(\.\d+)?)"):
            rx = re.compile(pattern, re.MULTILINE)
            found = [(m.group(0), lines + m.string.count("\n", 0, m.start()))
                     for m, lines in regex_text._matches(rx, iter(chunks))]
            assert found == [(m.group(0), text.count("\n", 0, m.start())) for m in rx.finditer(text)]
