"""The Java adapters (adapters/java), end to end with real JVMs on real barrier pages.

JMH is the real one (jmh-core from Maven Central, through examples/jmh-sample). DaCapo and
Renaissance are not on Maven Central, so their adapters are driven by the fake harnesses in the
adapters' test sources, which follow the call sequences of the real harnesses. Barrier pages come
from duetbench.execute.barrier; one test meets a Java side with a C side of native/duet_barrier.h.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import statistics
import struct
import subprocess
import time
import zipfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple
from collections.abc import Callable, Iterator

import pytest

from duetbench.execute.barrier import SIZE, BarrierPage

ROOT = Path(__file__).resolve().parent.parent
JAVA_DIR = ROOT / "adapters" / "java"
ABORT_SIDE_EXITED = 4  # what duet-launch sets when its command exits (docs/hooks.md)
WAIT = 120  # seconds any JVM of these tests may take before we call it hung


@dataclass(frozen=True)
class Build:
    core: Path
    jmh: Path
    dacapo: Path
    renaissance: Path
    sample: Path
    dacapo_stub: Path
    renaissance_stub: Path
    dacapo_tests: Path
    renaissance_tests: Path


@pytest.fixture(scope="module")
def build(java_build_dir: Path) -> Build:
    """All Java modules, built once per test session into a temporary directory (conftest)."""
    out = java_build_dir
    b = Build(core=out / "duet-core" / "duet-core.jar", jmh=out / "duet-jmh" / "duet-jmh.jar",
              dacapo=out / "duet-dacapo" / "duet-dacapo.jar",
              renaissance=out / "duet-renaissance" / "duet-renaissance.jar",
              sample=out / "jmh-sample" / "jmh-sample.jar",
              dacapo_stub=out / "dacapo-api-stub" / "dacapo-api-stub.jar",
              renaissance_stub=out / "renaissance-api-stub" / "renaissance-api-stub.jar",
              dacapo_tests=out / "duet-dacapo" / "test-classes",
              renaissance_tests=out / "duet-renaissance" / "test-classes")
    for p in vars(b).values():
        assert p.exists(), p
    return b


# --- helpers ---------------------------------------------------------------------------------------

class Line(NamedTuple):
    side: str
    index: int
    start: int
    end: int
    kind: str | None


def read_log(path: Path, processes: int = 1) -> list[Line]:
    """Parse an iteration log strictly: every line complete and well-formed (docs/hooks.md), with
    indices counting from 0 in each of ``processes`` equal runs (JMH forks append to one log)."""
    text = path.read_text()
    assert text.endswith("\n"), f"unterminated last line in {path}: {text[-80:]!r}"
    lines = []
    for raw in text.splitlines():
        f = raw.split(" ")
        assert len(f) in (4, 5, 6), raw
        assert f[0] in ("A", "B"), raw
        kind = f[4] if len(f) >= 5 else None
        assert kind in (None, "w", "m"), raw
        if len(f) == 6:  # the harness's value in seconds per op (JMH's score): positive and finite
            assert 0 < float(f[5]) < float("inf"), raw
        line = Line(f[0], int(f[1]), int(f[2]), int(f[3]), kind)
        assert line.start <= line.end, raw
        lines.append(line)
    assert [ln.index for ln in lines] == list(range(len(lines) // processes)) * processes, text
    return lines


def hook_env(side: str | None = None, log: Path | None = None, barrier: Path | None = None,
             timeout_ms: str | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DUET_")}
    for name, value in (("DUET_SIDE", side), ("DUET_ITERATION_LOG", log), ("DUET_BARRIER", barrier),
                        ("DUET_BARRIER_TIMEOUT_MS", timeout_ms)):
        if value is not None:
            env[name] = str(value)
    return env


def cpus() -> tuple[int, int]:
    """Two different CPUs for the two sides when the machine has them."""
    allowed = sorted(os.sched_getaffinity(0))
    return (allowed[0], allowed[1]) if len(allowed) > 1 else (allowed[0], allowed[0])


def pinned(cpu: int) -> Callable[[], None]:
    return lambda: os.sched_setaffinity(0, {cpu})


@contextmanager
def processes() -> Iterator[list[subprocess.Popen[str]]]:
    """Started processes are killed if the test leaves early, so a failure never leaves a spinning JVM."""
    started: list[subprocess.Popen[str]] = []
    try:
        yield started
    finally:
        for p in started:
            if p.poll() is None:
                p.kill()
                p.wait()


def start(procs: list[subprocess.Popen[str]], cmd: list[str], env: dict[str, str], cpu: int | None,
          out: Path) -> subprocess.Popen[str]:
    fh = out.open("w")
    p = subprocess.Popen(cmd, env=env, stdout=fh, stderr=subprocess.STDOUT, text=True,
                         preexec_fn=pinned(cpu) if cpu is not None else None)
    fh.close()
    procs.append(p)
    return p


def finish(p: subprocess.Popen[str], out: Path) -> str:
    try:
        rc = p.wait(timeout=WAIT)
    except subprocess.TimeoutExpired:
        p.kill()
        pytest.fail(f"hung: {p.args}\n{out.read_text()[-3000:]}")
    text = out.read_text()
    assert rc == 0, f"{p.args} exited {rc}:\n{text[-3000:]}"
    return text


def assert_synchronized(a: list[Line], b: list[Line]) -> list[int]:
    """Check what the barrier guarantees whatever the scheduling, and return the start skews (B - A, ns).

    Iteration k of either side can only start after both sides arrived at barrier k, which is after
    both ended iteration k-1: so every start of k lies after every end of k-1.
    """
    for k in range(1, min(len(a), len(b))):
        last_end = max(a[k - 1].end, b[k - 1].end)
        assert a[k].start > last_end and b[k].start > last_end, (k, a[k - 1:k + 1], b[k - 1:k + 1])
    return [y.start - x.start for x, y in zip(a, b)]


def well_aligned(run: Callable[[Path], list[int]], tmp_path: Path, enough: Callable[[list[int]], bool],
                 what: str) -> None:
    """Run a duet up to three times until its start skews are good enough; correctness is checked by
    ``run`` on every attempt. A spin release takes well under a microsecond, but on a busy machine a
    side can be descheduled right at a release for milliseconds: a judgement of latency needs a
    second chance there, the ordering invariants never do."""
    seen = []
    for attempt in range(3):
        skews = run(tmp_path / f"attempt-{attempt}")
        seen.append([round(x / 1000, 3) for x in skews])
        print(f"{what} start skews B-A (us), attempt {attempt}:", seen[-1])
        if len(set(cpus())) < 2 or enough(skews):
            return
    pytest.fail(f"{what}: start skews (us) too large in every attempt: {seen}")


def jmh_cmd(build: Build, *args: str, forks: int = 1) -> list[str]:
    # -Djmh.ignoreLock: two JMH instances on one machine otherwise refuse to run at once.
    return ["java", "-Djmh.ignoreLock=true", "-cp", f"{build.sample}{os.pathsep}{build.jmh}",
            "org.openjdk.jmh.Main", "LoopBenchmark", "-f", str(forks), "-w", "200ms", "-r", "200ms", *args]


def duet_tool(build: Build, *args: str) -> list[str]:
    return ["java", "-cp", str(build.core), "io.duetbench.Main", *args]


# --- the clock -------------------------------------------------------------------------------------

def test_nanotime_is_clock_monotonic(build: Build) -> None:
    """System.nanoTime() of another process lies between two CLOCK_MONOTONIC readings around it."""
    for _ in range(3):
        before = time.monotonic_ns()
        out = subprocess.run(duet_tool(build, "nanotime"), capture_output=True, text=True, timeout=WAIT, check=True)
        after = time.monotonic_ns()
        assert before < int(out.stdout) < after


# --- JMH -------------------------------------------------------------------------------------------

def test_jmh_duet_aligns_every_iteration(build: Build, tmp_path: Path) -> None:
    def run(d: Path) -> list[int]:
        d.mkdir()
        cpu = cpus()
        with BarrierPage(parties=2) as page, processes() as procs:
            runs = {}
            for side, c, size in (("A", cpu[0], 1000), ("B", cpu[1], 2000)):
                cmd = jmh_cmd(build, "-wi", "2", "-i", "3", "-p", f"size={size}",
                              "-prof", "io.duetbench.jmh.DuetProfiler", "-rf", "json", "-rff", str(d / f"{side}.json"))
                runs[side] = start(procs, cmd, hook_env(side, d / f"{side}.log", page.path), c, d / f"{side}.out")
            outputs = {side: finish(p, d / f"{side}.out") for side, p in runs.items()}
            assert page.generation == 5 and page.aborted == 0
        assert not any("duet:" in text for text in outputs.values()), outputs
        a, b = read_log(d / "A.log"), read_log(d / "B.log")
        for side, lines, size in (("A", a, "1000"), ("B", b, "2000")):
            assert [ln.kind for ln in lines] == ["w", "w", "m", "m", "m"]
            assert {ln.side for ln in lines} == {side}
            # JMH times 200 ms per iteration inside the interval the profiler logs.
            assert all(ln.end - ln.start >= 190_000_000 for ln in lines), lines
            result = json.loads((d / f"{side}.json").read_text())
            assert len(result) == 1 and result[0]["params"] == {"size": size}
            assert [len(fork) for fork in result[0]["primaryMetric"]["rawData"]] == [3]
        return assert_synchronized(a, b)

    # Each JVM shares the one CPU it is pinned to with its JIT compiler and GC threads and with JMH's host
    # JVM (which prints each iteration's result right at the next release), so a side that waits at the
    # barrier is often off its CPU for milliseconds when the release comes, most in the first iterations,
    # while C2 compiles. An idle Intel Xeon VM (kernel 6.18) on 2026-11-28: 8 runs of this duet had median
    # |skew| 0.2 µs–2.9 ms, 5 of them above 2 ms, and a skew under 100 µs in every run (their skews:
    # [-9192, 9286, -1589, 2313, 0.1], [931, -11236, 2851, -0.1, -7042] µs ...). Yielding in the spin, or
    # parking 20 µs between looks, left skews of 4-11 ms in most runs (2 and 1 of 8 runs above 2 ms: within
    # the noise of 8 runs), so the barrier stays a pure spin, as the C one. The ordering checks
    # in run() prove every release whatever the scheduling; this asks that a release the JVM's own threads
    # did not delay is prompt (one skew under 100 µs: a barrier that slept between looks would miss it) and
    # that the typical one stays well below an iteration (median under 10 ms of 200).
    well_aligned(run, tmp_path, lambda skews: min(abs(x) for x in skews) < 100_000
                 and statistics.median(abs(x) for x in skews) < 10_000_000, "JMH")


def test_jmh_forks_each_synchronize_and_append(build: Build, tmp_path: Path) -> None:
    """Every fork is a new JVM with the inherited environment: it appends to the same log, its index
    starts again at 0, and the barrier generation runs on across forks."""
    cpu = cpus()
    with BarrierPage(parties=2) as page, processes() as procs:
        runs = {side: start(procs, jmh_cmd(build, "-wi", "1", "-i", "1", "-prof", "io.duetbench.jmh.DuetProfiler",
                                           forks=2),
                            hook_env(side, tmp_path / f"{side}.log", page.path), c, tmp_path / f"{side}.out")
                for side, c in (("A", cpu[0]), ("B", cpu[1]))}
        for side, p in runs.items():
            finish(p, tmp_path / f"{side}.out")
        assert page.generation == 4 and page.aborted == 0
    a, b = read_log(tmp_path / "A.log", processes=2), read_log(tmp_path / "B.log", processes=2)
    assert [ln.kind for ln in a] == [ln.kind for ln in b] == ["w", "m", "w", "m"]
    assert_synchronized(a, b)


def test_jmh_lists_the_profiler(build: Build) -> None:
    """Registered through META-INF/services, so -lprof shows it."""
    out = subprocess.run(jmh_cmd(build)[:5] + ["-lprof"], capture_output=True, text=True, timeout=WAIT,
                         env=hook_env())
    assert out.returncode == 0, out.stderr
    assert "io.duetbench.jmh.DuetProfiler" in out.stdout


def test_jmh_side_with_fewer_iterations_releases_the_other_on_abort(build: Build, tmp_path: Path) -> None:
    """A runs 2 iterations, B 5; once A has exited the page is aborted (as duet-launch does) and B runs on."""
    cpu = cpus()
    with BarrierPage(parties=2) as page, processes() as procs:
        runs = {}
        for side, c, n in (("A", cpu[0], "2"), ("B", cpu[1], "5")):
            cmd = jmh_cmd(build, "-wi", "0", "-i", n, "-prof", "io.duetbench.jmh.DuetProfiler")
            runs[side] = start(procs, cmd, hook_env(side, tmp_path / f"{side}.log", page.path), c,
                               tmp_path / f"{side}.out")
        finish(runs["A"], tmp_path / "A.out")
        # B is now waiting for a partner that is gone, for the default 10 minutes unless told.
        time.sleep(0.5)
        assert runs["B"].poll() is None
        page.abort(ABORT_SIDE_EXITED)
        b_out = finish(runs["B"], tmp_path / "B.out")
        assert page.aborted == ABORT_SIDE_EXITED  # the first reason stays
    a, b = read_log(tmp_path / "A.log"), read_log(tmp_path / "B.log")
    assert len(a) == 2 and len(b) == 5
    assert_synchronized(a, b)
    assert b_out.count("duet:") == 1, b_out
    assert "side B stopped synchronizing at iteration 2: the other side's command exited (abort code 4)" in b_out


# --- a side killed, and a timeout without any abort ------------------------------------------------

def test_killed_partner_and_timeout_without_abort(build: Build, tmp_path: Path) -> None:
    cpu = cpus()
    with BarrierPage(parties=2) as page, processes() as procs:
        a = start(procs, duet_tool(build, "iterations", "1000", "20"), hook_env("A", tmp_path / "A.log", page.path),
                  cpu[0], tmp_path / "A.out")
        b = start(procs, duet_tool(build, "iterations", "20", "20"),
                  hook_env("B", tmp_path / "B.log", page.path, timeout_ms="700"), cpu[1], tmp_path / "B.out")
        deadline = time.monotonic() + WAIT
        while len((tmp_path / "A.log").read_text().splitlines() if (tmp_path / "A.log").exists() else []) < 3:
            assert time.monotonic() < deadline and a.poll() is None
            time.sleep(0.005)
        a.send_signal(signal.SIGKILL)
        a.wait()
        t0 = time.monotonic()
        b_out = finish(b, tmp_path / "B.out")
        waited = time.monotonic() - t0
        assert page.aborted == 1  # the timed-out waiter set abort = 1 (compare-and-swap from 0)
    lines = read_log(tmp_path / "B.log")
    assert len(lines) == 20
    assert 0.6 < waited < 30, waited
    assert b_out.count("duet:") == 1 and "did not arrive within 700 ms" in b_out, b_out


# --- DaCapo and Renaissance ------------------------------------------------------------------------

@pytest.mark.parametrize("version", ["9.12-MR1/23.x", "9.12-bach"])
def test_dacapo_callback_duet(build: Build, tmp_path: Path, version: str) -> None:
    cpu = cpus()
    if version == "9.12-bach":  # harness classes at the jar's root: the callback jar goes on -cp
        java = ["java", "-cp", os.pathsep.join(map(str, (build.dacapo_tests, build.dacapo_stub, build.dacapo))),
                "io.duetbench.dacapo.FakeDacapoHarness", "--bach"]
    else:  # the harness has its own class loader; the callback jar is added by an absolute URI
        java = ["java", f"-Ddacapo.callback.classpath={build.dacapo.as_uri()}",
                "-cp", os.pathsep.join(map(str, (build.dacapo_tests, build.dacapo_stub))),
                "io.duetbench.dacapo.FakeDacapoHarness"]
    with BarrierPage(parties=2) as page, processes() as procs:
        runs = {}
        for side, c in (("A", cpu[0]), ("B", cpu[1])):
            cmd = [*java,
                   "--work-ms", "20" if side == "A" else "30", "-c", "io.duetbench.dacapo.DuetCallback",
                   "-n", "4", "fop"]
            runs[side] = start(procs, cmd, hook_env(side, tmp_path / f"{side}.log", page.path), c,
                               tmp_path / f"{side}.out")
        outs = {side: finish(p, tmp_path / f"{side}.out") for side, p in runs.items()}
        assert page.generation == 4 and page.aborted == 0
    a, b = read_log(tmp_path / "A.log"), read_log(tmp_path / "B.log")
    for lines in (a, b):
        assert [ln.kind for ln in lines] == ["w", "w", "w", "m"]
    assert all(18_000_000 < ln.end - ln.start for ln in a)
    assert all(28_000_000 < ln.end - ln.start for ln in b)
    assert_synchronized(a, b)
    for text in outs.values():  # the base callback still ran (banners), and nothing complained
        assert text.count("starting warmup") == 3 and "PASSED" in text and "duet:" not in text, text


def test_renaissance_plugin_duet(build: Build, tmp_path: Path) -> None:
    with zipfile.ZipFile(build.renaissance) as jar:
        assert not [n for n in jar.namelist() if n.startswith("org/renaissance/")]
        assert "Renaissance-Plugin: io.duetbench.renaissance.DuetPlugin" in jar.read("META-INF/MANIFEST.MF").decode()
    cpu = cpus()
    cp = os.pathsep.join(map(str, (build.renaissance_tests, build.renaissance_stub)))
    with BarrierPage(parties=2) as page, processes() as procs:
        runs = {}
        for side, c in (("A", cpu[0]), ("B", cpu[1])):
            cmd = ["java", "-cp", cp, "io.duetbench.renaissance.FakeRenaissanceHarness",
                   "--plugin", str(build.renaissance), "-r", "5", "--work-ms", "20", "scrabble"]
            runs[side] = start(procs, cmd, hook_env(side, tmp_path / f"{side}.log", page.path), c,
                               tmp_path / f"{side}.out")
        outs = {side: finish(p, tmp_path / f"{side}.out") for side, p in runs.items()}
        assert page.generation == 5 and page.aborted == 0
    a, b = read_log(tmp_path / "A.log"), read_log(tmp_path / "B.log")
    assert len(a) == len(b) == 5 and all(ln.kind is None for ln in a + b)
    assert_synchronized(a, b)
    for side, lines in (("A", a), ("B", b)):
        metrics: dict[tuple[int, str], int] = {}
        for row in outs[side].splitlines():
            if row.startswith("metric "):
                _, op, name, value = row.split()
                metrics[int(op), name] = int(value)
        for ln in lines:  # the published metrics are the logged stamps
            assert metrics[ln.index, "duet_start_ns"] == ln.start and metrics[ln.index, "duet_end_ns"] == ln.end
            assert ln.end - ln.start >= metrics[ln.index, "duration_ns"]


# --- without the environment, or with a bad one ----------------------------------------------------

def test_no_environment_means_no_effect(build: Build, tmp_path: Path) -> None:
    env = hook_env()
    jmh = subprocess.run(jmh_cmd(build, "-wi", "1", "-i", "1", "-prof", "io.duetbench.jmh.DuetProfiler"),
                         capture_output=True, text=True, timeout=WAIT, env=env, cwd=tmp_path)
    dacapo = subprocess.run(["java", "-cp", os.pathsep.join(map(str, (build.dacapo_tests, build.dacapo_stub,
                                                                       build.dacapo))),
                             "io.duetbench.dacapo.FakeDacapoHarness", "-c", "io.duetbench.dacapo.DuetCallback",
                             "-n", "2", "fop"], capture_output=True, text=True, timeout=WAIT, env=env, cwd=tmp_path)
    ren = subprocess.run(["java", "-cp", os.pathsep.join(map(str, (build.renaissance_tests, build.renaissance_stub))),
                          "io.duetbench.renaissance.FakeRenaissanceHarness", "--plugin", str(build.renaissance),
                          "-r", "2", "x"], capture_output=True, text=True, timeout=WAIT, env=env, cwd=tmp_path)
    for proc in (jmh, dacapo, ren):
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
        assert "duet:" not in proc.stdout + proc.stderr
    assert "PASSED" in dacapo.stderr
    assert "duration_ns" in ren.stdout and "duet_" not in ren.stdout
    assert {p.name for p in tmp_path.iterdir()} <= {"jmh-result.csv"}  # JMH's own file at most


@pytest.mark.parametrize("page_bytes", [
    struct.pack("<IIII", 0x12345678, 1, 2, 0) + bytes(SIZE - 16),  # another magic
    struct.pack("<IIII", 0x54455544, 2, 2, 0) + bytes(SIZE - 16),  # a future protocol version
    struct.pack("<IIII", 0x54455544, 1, 2, 0),  # too short to be a page
], ids=["magic", "version", "short"])
def test_foreign_page_is_refused_and_left_alone(build: Build, tmp_path: Path, page_bytes: bytes) -> None:
    page = tmp_path / "page"
    page.write_bytes(page_bytes)
    proc = subprocess.run(duet_tool(build, "iterations", "3", "1"), capture_output=True, text=True, timeout=WAIT,
                          env=hook_env("A", tmp_path / "A.log", page))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count("duet:") == 1 and "cannot use the barrier" in proc.stderr, proc.stderr
    assert page.read_bytes() == page_bytes
    assert len(read_log(tmp_path / "A.log")) == 3


def test_bad_variables_are_reported_once_and_never_fatal(build: Build, tmp_path: Path) -> None:
    # A side that cannot take part switches its hook off and aborts the page, so its partner goes on.
    with BarrierPage(parties=2) as page:
        proc = subprocess.run(duet_tool(build, "iterations", "3", "1"), capture_output=True, text=True, timeout=WAIT,
                              env=hook_env("C", tmp_path / "C.log", page.path))
        assert page.aborted == 2 and page.generation == 0
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == "duet: DUET_SIDE must be A or B, not 'C'; the duet hook is off\n"
    assert not (tmp_path / "C.log").exists()

    with BarrierPage(parties=1) as page:  # one party: every wait releases at once
        proc = subprocess.run(duet_tool(build, "iterations", "3", "1"), capture_output=True, text=True, timeout=WAIT,
                              env=hook_env("A", tmp_path / "A.log", page.path, timeout_ms="soon"))
        assert page.generation == 3
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count("duet:") == 1 and "DUET_BARRIER_TIMEOUT_MS must be a positive number" in proc.stderr
    assert len(read_log(tmp_path / "A.log")) == 3

    missing_dir = tmp_path / "no" / "such" / "dir" / "B.log"
    proc = subprocess.run(duet_tool(build, "iterations", "2", "1"), capture_output=True, text=True, timeout=WAIT,
                          env=hook_env("B", missing_dir))
    assert proc.returncode == 0 and proc.stderr.count("duet:") == 1, proc.stderr
    assert "cannot open the iteration log" in proc.stderr


# --- a Java side and a C side on one page ----------------------------------------------------------

C_SIDE = r"""
#include "duet_barrier.h"
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

/* usage: c-side PAGE N WORK_NS: N iterations, each "wait, stamp, busy WORK_NS, stamp", one log line each. */
int main(int argc, char **argv)
{
    if (argc != 4) return 2;
    int fd = open(argv[1], O_RDWR);
    struct duet_shm *s = mmap(NULL, DUET_SHM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (fd < 0 || s == MAP_FAILED) return 3;
    int n = atoi(argv[2]);
    int64_t work = atoll(argv[3]);
    for (int i = 0; i < n; i++) {
        if (duet_barrier_wait(s, 60000000000LL) != DUET_RELEASED) return 4;
        int64_t t0 = duet_now_ns();
        while (duet_now_ns() - t0 < work) duet_cpu_relax();
        printf("B %d %lld %lld\n", i, (long long)t0, (long long)duet_now_ns());
    }
    return 0;
}
"""


def test_java_and_c_sides_meet_on_one_page(build: Build, tmp_path: Path) -> None:
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler (gcc) to build the C side")
    src = tmp_path / "c_side.c"
    src.write_text(C_SIDE)
    subprocess.run([cc, "-O2", "-std=gnu11", "-I", str(ROOT / "native"), "-o", str(tmp_path / "c-side"), str(src)],
                   check=True)
    n = 100

    def run(d: Path) -> list[int]:
        d.mkdir()
        cpu = cpus()
        with BarrierPage(parties=2) as page, processes() as procs:
            java = start(procs, duet_tool(build, "iterations", str(n), "5"), hook_env("A", d / "A.log", page.path),
                         cpu[0], d / "A.out")
            c = start(procs, [str(tmp_path / "c-side"), str(page.path), str(n), "3000000"], hook_env(), cpu[1],
                      d / "B.log")
            finish(java, d / "A.out")
            finish(c, d / "B.log")
            assert page.generation == n and page.aborted == 0
        a, b = read_log(d / "A.log"), read_log(d / "B.log")
        assert len(a) == len(b) == n
        return assert_synchronized(a, b)

    # Judged on the second half: the first fraction of a second of a JVM belongs to its JIT threads.
    well_aligned(run, tmp_path, lambda skews: sum(abs(x) < 50_000 for x in skews[n // 2:]) >= n // 4, "Java-C")
