"""adapters/c/duet.h with real compilers, real pinned processes, a real barrier page and duet-launch.

The harness is adapters/c/example.c (WARMUPS + ITERATIONS iterations of an integer loop), built once
as C11 and once as C++17. Skews measured on the 2-vCPU dev VM: median ~0.05 us, max ~0.1 us.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from duet_sync import Row, assert_synchronized, parse_log

from duetbench.execute.barrier import BarrierPage

ROOT = Path(__file__).resolve().parent.parent
ADAPTER = ROOT / "adapters" / "c"
STRICT = ["-Wall", "-Wextra", "-Werror", "-pedantic"]
WORK = "300000"  # LCG steps per iteration: ~0.3 ms

two_cpus = pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs to run a duet")
CPUS = sorted(os.sched_getaffinity(0))[:2]


def compiler(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed (Debian: apt-get install build-essential)")
    return path


def compile_harness(out: Path, lang: str, *sources: Path,
                    extra: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    """Compile with every warning an error: as C11 with gcc, or as C++17 with g++ (-x c++ on .c files)."""
    if lang == "c":
        cmd = [compiler("gcc"), "-std=c11"]
    else:
        cmd = [compiler("g++"), "-std=c++17", "-x", "c++"]
    cmd += ["-O2", *STRICT, *extra, "-I", str(ADAPTER), "-o", str(out), *map(str, sources)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module", params=["c", "c++"])
def harness(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("harness") / f"example-{request.param}"
    result = compile_harness(out, request.param, ADAPTER / "example.c")
    assert result.returncode == 0, result.stderr
    return out


@pytest.fixture(scope="module")
def c_harness(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("harness") / "example"
    result = compile_harness(out, "c", ADAPTER / "example.c")
    assert result.returncode == 0, result.stderr
    return out


def clean_env(**duet: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DUET_")}
    env.update(duet)
    return env


def side_env(side: str, log: Path, page: BarrierPage | None, **extra: str) -> dict[str, str]:
    duet = {"DUET_SIDE": side, "DUET_ITERATION_LOG": str(log), **extra}
    if page is not None:
        duet["DUET_BARRIER"] = str(page.path)
    return clean_env(**duet)


def start(argv: list[str], env: dict[str, str], cpu: int | None) -> subprocess.Popen[str]:
    pin = (lambda: os.sched_setaffinity(0, {cpu})) if cpu is not None else None
    return subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            preexec_fn=pin)


def check_log(path: Path, side: str, warmups: int, iterations: int) -> list[Row]:
    rows = parse_log(path)
    assert len(rows) == warmups + iterations
    assert [r[0] for r in rows] == [side] * len(rows)
    assert [r[1] for r in rows] == list(range(len(rows)))
    assert [r[4] for r in rows] == ["w"] * warmups + ["m"] * iterations
    assert all(r[2] <= r[3] for r in rows)
    assert all(a[3] <= b[2] for a, b in zip(rows, rows[1:]))
    return rows


# --- compiling ---------------------------------------------------------------------------------------


def test_compiles_cleanly_as_c11_and_cxx17_with_libc_only(tmp_path: Path) -> None:
    for lang in ("c", "c++"):
        out = tmp_path / f"ex-{lang}"
        result = compile_harness(out, lang, ADAPTER / "example.c", extra=("-Wconversion", "-Wshadow"))
        assert result.returncode == 0, result.stderr
        needed = subprocess.run(["readelf", "-d", str(out)], capture_output=True, text=True).stdout \
            if shutil.which("readelf") else ""
        libs = set(re.findall(r"Shared library: \[([^\]]+)\]", needed))
        allowed = {"libc.so.6", "libstdc++.so.6", "libm.so.6", "libgcc_s.so.1"}
        assert libs <= allowed, libs


def test_strict_c_after_other_headers_fails_with_a_clear_message(tmp_path: Path) -> None:
    src = tmp_path / "late.c"
    src.write_text('#include <stdio.h>\n#include "duet.h"\nint main(void) { return duet_before_iteration(); }\n')
    result = compile_harness(tmp_path / "late", "c", src)
    assert result.returncode != 0
    assert "include duet.h before other headers" in result.stderr


def test_translation_units_share_one_hook_state(tmp_path: Path) -> None:
    """The counter, the log and the pending start are per process, not per file including the header."""
    (tmp_path / "main.c").write_text(
        '#include "duet.h"\nvoid finish(void);\n'
        "int main(void) { for (int i = 0; i < 3; i++) { duet_before_iteration(); finish(); } "
        "return (int)duet_hook_iterations() - 3; }\n")
    (tmp_path / "other.c").write_text(
        '#include "duet.h"\nvoid finish(void);\nvoid finish(void) { duet_after_iteration(); }\n')
    for lang in ("c", "c++"):
        exe = tmp_path / f"two-{lang}"
        result = compile_harness(exe, lang, tmp_path / "main.c", tmp_path / "other.c")
        assert result.returncode == 0, result.stderr
        log = tmp_path / f"{lang}.log"
        run = subprocess.run([str(exe)], env=side_env("A", log, None), capture_output=True, text=True, timeout=30)
        assert run.returncode == 0, run.stderr
        assert [r[1] for r in parse_log(log)] == [0, 1, 2]


# --- one process -------------------------------------------------------------------------------------


def test_without_the_environment_the_hook_does_nothing(c_harness: Path, tmp_path: Path) -> None:
    run = subprocess.run([str(c_harness), "5", "2", "1000"], env=clean_env(), cwd=tmp_path, capture_output=True,
                         text=True, timeout=30)
    assert run.returncode == 0
    assert len(run.stdout.split()) == 7
    assert run.stderr.startswith("checksum") and "duet" not in run.stderr
    assert list(tmp_path.iterdir()) == []


def test_without_a_barrier_it_only_logs(c_harness: Path, tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    run = subprocess.run([str(c_harness), "4", "1", "1000"], env=side_env("A", log, None), capture_output=True,
                         text=True, timeout=30)
    assert run.returncode == 0 and "duet" not in run.stderr
    check_log(log, "A", 1, 4)


def test_log_lines_of_several_processes_append(c_harness: Path, tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    for _ in range(2):
        subprocess.run([str(c_harness), "2", "0", "1000"], env=side_env("B", log, None), timeout=30, check=True,
                       capture_output=True)
    assert [(r[0], r[1]) for r in parse_log(log)] == [("B", 0), ("B", 1), ("B", 0), ("B", 1)]


def test_a_file_that_is_no_barrier_page_is_refused(c_harness: Path, tmp_path: Path) -> None:
    fake = tmp_path / "page"
    fake.write_bytes(bytes(4096))
    log = tmp_path / "a.log"
    run = subprocess.run([str(c_harness), "3", "0", "1000"], env=side_env("A", log, None, DUET_BARRIER=str(fake)),
                         capture_output=True, text=True, timeout=30)
    assert run.returncode == 0
    assert "is not a duet barrier page" in run.stderr and "running unsynchronized" in run.stderr
    assert len(parse_log(log)) == 3
    assert fake.read_bytes() == bytes(4096)


def test_a_bad_timeout_is_reported_and_the_default_used(c_harness: Path, tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    run = subprocess.run([str(c_harness), "1", "0", "1000"], env=side_env("A", log, None, DUET_BARRIER_TIMEOUT_MS="1s"),
                         capture_output=True, text=True, timeout=30)
    assert run.returncode == 0
    assert "DUET_BARRIER_TIMEOUT_MS must be a positive number of milliseconds, not '1s'; using 600000" in run.stderr


CLOSING_HARNESS = r"""
#include "duet.h"
#include <stdio.h>
#include <unistd.h>

int main(void)
{
    FILE *own = NULL;
    for (int i = 0; i < 5; i++) {
        if (i == 2) { /* a daemon-style clean-up: another directory, no inherited descriptors */
            if (chdir("sub") != 0)
                return 3;
            for (long fd = 3; fd < sysconf(_SC_OPEN_MAX); fd++)
                close((int)fd);
            own = fopen("own.txt", "w"); /* takes the lowest number: the log's old one */
        }
        duet_before_iteration();
        duet_after_iteration();
    }
    fputs("the harness's own data\n", own);
    return fclose(own) != 0;
}
"""


def test_a_harness_closing_its_descriptors_keeps_its_files_and_the_log(tmp_path: Path) -> None:
    """The hook wrote its lines into whatever file took the log's descriptor number next: the harness's
    own file got them and the log lost them. Now the log's descriptor is a high number, which the harness's
    new files do not get, and when it was closed the log is opened again, by its absolute path even when it
    was given relative and the harness changed directory."""
    (tmp_path / "closing.c").write_text(CLOSING_HARNESS)
    result = compile_harness(tmp_path / "closing", "c", tmp_path / "closing.c")
    assert result.returncode == 0, result.stderr
    (tmp_path / "sub").mkdir()
    run = subprocess.run([str(tmp_path / "closing")], env=clean_env(DUET_SIDE="A", DUET_ITERATION_LOG="a.log"),
                         cwd=tmp_path, capture_output=True, text=True, timeout=30)
    assert run.returncode == 0 and run.stderr == "", run.stderr
    assert (tmp_path / "sub" / "own.txt").read_text() == "the harness's own data\n"
    assert [r[1] for r in parse_log(tmp_path / "a.log")] == [0, 1, 2, 3, 4]
    assert not (tmp_path / "sub" / "a.log").exists()


# --- two processes on one page -----------------------------------------------------------------------


@two_cpus
def test_both_sides_start_every_iteration_together(harness: Path, tmp_path: Path) -> None:
    with BarrierPage(parties=2) as page:
        logs = {s: tmp_path / f"{s}.log" for s in "AB"}
        procs = [start([str(harness), "40", "5", WORK], side_env(s, logs[s], page), cpu)
                 for s, cpu in zip("AB", CPUS)]
        for p in procs:
            _, err = p.communicate(timeout=60)
            assert p.returncode == 0 and "duet:" not in err, err
        assert page.generation == 45 and page.aborted == 0
    a, b = (check_log(logs[s], s, 5, 40) for s in "AB")
    assert_synchronized(a, b, harness.name)


@two_cpus
def test_a_side_with_fewer_iterations_releases_its_partner_through_abort_4(c_harness: Path, tmp_path: Path) -> None:
    with BarrierPage(parties=2) as page:
        logs = {s: tmp_path / f"{s}.log" for s in "AB"}
        env = {s: side_env(s, logs[s], page, DUET_BARRIER_TIMEOUT_MS="60000") for s in "AB"}
        short = start([str(c_harness), "10", "0", WORK], env["A"], CPUS[0])
        long = start([str(c_harness), "30", "0", WORK], env["B"], CPUS[1])
        short.communicate(timeout=60)
        page.abort(4)  # what duet-launch does when A's command exits
        released = time.monotonic()
        _, err = long.communicate(timeout=60)
        assert time.monotonic() - released < 5  # 20 unsynchronized iterations of ~0.3 ms, not a 60 s timeout
        assert long.returncode == 0
    assert err.count("duet:") == 1
    assert "side B stopped synchronizing at iteration 10: the other side's command exited (abort code 4)" in err
    assert len(parse_log(logs["A"])) == 10 and len(parse_log(logs["B"])) == 30


@two_cpus
def test_a_short_timeout_alone_releases_the_partner(c_harness: Path, tmp_path: Path) -> None:
    """No abort from anyone (A's launcher is not there to set 4): B's own timeout ends its wait.
    1.5 s rather than less, so that a starved start on a busy machine is not taken for a timeout."""
    with BarrierPage(parties=2) as page:
        logs = {s: tmp_path / f"{s}.log" for s in "AB"}
        env = {s: side_env(s, logs[s], page, DUET_BARRIER_TIMEOUT_MS="1500") for s in "AB"}
        short = start([str(c_harness), "5", "0", WORK], env["A"], CPUS[0])
        t0 = time.monotonic()
        long = start([str(c_harness), "12", "0", WORK], env["B"], CPUS[1])
        short.communicate(timeout=60)
        _, err = long.communicate(timeout=60)
        elapsed = time.monotonic() - t0
        assert page.aborted == 1
    assert 1.5 <= elapsed < 8
    assert err.count("duet:") == 1
    assert "side B stopped synchronizing at iteration 5: the other side did not arrive within 1500 ms" in err
    assert len(parse_log(logs["B"])) == 12


@two_cpus
def test_a_misconfigured_side_sets_abort_2_so_its_partner_does_not_wait(c_harness: Path, tmp_path: Path) -> None:
    with BarrierPage(parties=2) as page:
        good = start([str(c_harness), "5", "0", WORK], side_env("A", tmp_path / "A.log", page), CPUS[0])
        bad = subprocess.run([str(c_harness), "5", "0", WORK], env=side_env("Q", tmp_path / "Q.log", page),
                             capture_output=True, text=True, timeout=30)
        _, err = good.communicate(timeout=30)
        assert page.aborted == 2
    assert "DUET_SIDE must be A or B, not 'Q'; the duet hook is off" in bad.stderr
    assert not (tmp_path / "Q.log").exists()
    assert "the other side failed (abort code 2)" in err
    assert len(parse_log(tmp_path / "A.log")) == 5


# Milliseconds meaning "for ever" (barrier_timeout: 10000000000 in a campaign): as nanoseconds past INT64_MAX,
# and 2^64 ns + 0.45 ms, which a plain multiplication wrapped to a timeout of 0.45 ms.
FOR_EVER_MS = ["10000000000000", "18446744073710"]


@pytest.mark.parametrize("ms", FOR_EVER_MS)
def test_a_timeout_too_long_to_add_to_the_clock_waits(c_harness: Path, tmp_path: Path, ms: str) -> None:
    """The deadline (now + timeout) overflowed: the first wait timed out at once, aborted the page for both
    sides and said the partner had not come "within 9223372036854 ms"."""
    with BarrierPage(parties=2) as page:
        alone = start([str(c_harness), "3", "0", "1000"], side_env("A", tmp_path / "A.log", page,
                                                                   DUET_BARRIER_TIMEOUT_MS=ms), CPUS[0])
        try:
            with pytest.raises(subprocess.TimeoutExpired):
                alone.wait(timeout=1)  # still waiting for its partner
            assert page.aborted == 0
        finally:
            page.abort(4)
            _, err = alone.communicate(timeout=30)
    assert "the other side's command exited (abort code 4)" in err and "did not arrive" not in err


@pytest.mark.parametrize("ms", FOR_EVER_MS)
def test_the_launcher_waits_at_the_start_for_a_timeout_too_long_to_multiply(launcher: Path, tmp_path: Path,
                                                                          ms: str) -> None:
    with BarrierPage(parties=2) as page:
        result = tmp_path / "r.json"
        alone = subprocess.Popen([str(launcher), "--result", str(result), "--barrier", str(page.path),
                                  "--barrier-timeout-ms", ms, "--", "true"])
        try:
            with pytest.raises(subprocess.TimeoutExpired):
                alone.wait(timeout=1)
            assert page.aborted == 0
        finally:
            page.abort(3)
            alone.wait(timeout=30)
        assert json.loads(result.read_text())["status"] == "barrier_aborted"


# --- through duet-launch -----------------------------------------------------------------------------


def test_the_launcher_sets_abort_4_when_its_command_exits(launcher: Path, tmp_path: Path) -> None:
    with BarrierPage(parties=1) as page:
        result = tmp_path / "r.json"
        subprocess.run([str(launcher), "--result", str(result), "--barrier", str(page.path), "--", "true"],
                       timeout=30, check=True)
        assert json.loads(result.read_text())["status"] == "ok"
        assert page.aborted == 4


def test_the_launcher_keeps_an_earlier_abort_reason(launcher: Path, tmp_path: Path) -> None:
    with BarrierPage(parties=2) as page:
        page.abort(3)
        result = tmp_path / "r.json"
        subprocess.run([str(launcher), "--result", str(result), "--barrier", str(page.path), "--", "true"], timeout=30)
        assert json.loads(result.read_text())["status"] == "barrier_aborted"
        assert page.aborted == 3


@two_cpus
def test_full_path_start_barrier_then_hooks_then_abort_4(launcher: Path, c_harness: Path, tmp_path: Path) -> None:
    """Both sides started by duet-launch on one page: generation 1 is the start, then one per iteration;
    A runs fewer iterations, its launcher sets abort 4 and B goes on without waiting."""
    with BarrierPage(parties=2) as page:
        logs = {s: tmp_path / f"{s}.log" for s in "AB"}
        counts = {"A": 8, "B": 25}
        procs = {}
        for side, cpu in zip("AB", CPUS):
            argv = [str(launcher), "--result", str(tmp_path / f"{side}.json"), "--cpu", str(cpu),
                    "--barrier", str(page.path), "--", str(c_harness), str(counts[side]), "2", WORK]
            procs[side] = subprocess.Popen(argv, env=side_env(side, logs[side], page, DUET_BARRIER_TIMEOUT_MS="60000"),
                                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        procs["A"].communicate(timeout=60)
        a_done = time.monotonic()
        _, err_b = procs["B"].communicate(timeout=60)
        assert time.monotonic() - a_done < 5
        assert page.aborted == 4
        assert page.generation == 1 + 2 + counts["A"]
    results = {s: json.loads((tmp_path / f"{s}.json").read_text()) for s in "AB"}
    assert [results[s]["status"] for s in "AB"] == ["ok", "ok"]
    a, b = check_log(logs["A"], "A", 2, 8), check_log(logs["B"], "B", 2, 25)
    for k in range(1, 10):  # the barrier's ordering; skew quality is the business of the test above
        assert min(a[k][2], b[k][2]) >= max(a[k - 1][3], b[k - 1][3])
    assert min(a[0][2], b[0][2]) >= max(results[s]["start_ns"] for s in "AB")
    assert "side B stopped synchronizing at iteration 10: the other side's command exited (abort code 4)" in err_b
