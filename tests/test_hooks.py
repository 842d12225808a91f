"""duetbench.hook (Python, over libduethook.so) and its pyperf hook, with real processes, a real
barrier page, real pyperf from PyPI and duet-launch.

Skews measured on the 2-vCPU dev VM (start stamps of the k-th iterations of A and B): plain Python
sides median ~0.04 us; pyperf workers median ~0.05 us, max a few us (more when the machine is busy).
"""
from __future__ import annotations

import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from duet_sync import assert_synchronized, parse_log

from duetbench.execute.barrier import BarrierPage
from duetbench.hook import ENVIRONMENT

ROOT = Path(__file__).resolve().parent.parent
LIBRARY = "libduethook.so"

two_cpus = pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs to run a duet")
CPUS = sorted(os.sched_getaffinity(0))[:2]

SIDE_SCRIPT = """
import sys
from duetbench import hook
count, warmups = int(sys.argv[1]), int(sys.argv[2])
for i in range(count):
    with hook.iteration("w" if i < warmups else "m") as synced:
        sum(i * i for i in range(20000))
print(hook.state(), hook.synced_iterations(), hook.iterations())
"""

BENCH_SCRIPT = """
import pyperf

def work():
    return sum(i * i for i in range({n}))

pyperf.Runner().bench_func("work", work)
"""


@pytest.fixture(scope="session")
def hook_dir(native_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory holding libduethook.so: the installed one, or built from the source tree."""
    if (native_dir / LIBRARY).exists():
        return native_dir
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler to build libduethook.so")
    out = tmp_path_factory.mktemp("hooklib")
    subprocess.run([cc, "-O2", "-std=gnu11", "-Wall", "-Wextra", "-Werror", "-fPIC", "-shared", "-o",
                    str(out / LIBRARY), str(ROOT / "native" / "duethook.c")], check=True)
    return out


def python_env(hook_dir: Path | None, **duet: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DUET_") and k != "DUETBENCH_NATIVE_DIR"}
    import duetbench

    src = str(Path(duetbench.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    if hook_dir is not None:
        env["DUETBENCH_NATIVE_DIR"] = str(hook_dir)
    env.update(duet)
    return env


def side_env(hook_dir: Path, side: str, log: Path, page: BarrierPage | None, **extra: str) -> dict[str, str]:
    duet = {"DUET_SIDE": side, "DUET_ITERATION_LOG": str(log), **extra}
    if page is not None:
        duet["DUET_BARRIER"] = str(page.path)
    return python_env(hook_dir, **duet)


def pinned(cpu: int) -> Callable[[], None]:
    """A preexec_fn that pins the child before it execs, so that its workers inherit the CPU."""
    return lambda: os.sched_setaffinity(0, {cpu})


def run_python(code: str, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, timeout=60)


# --- the Python API ----------------------------------------------------------------------------------


def test_importing_the_hook_stays_light() -> None:
    code = ("import sys, duetbench.hook, duetbench.hook.pyperf_hook\n"
            "heavy = sorted(m for m in ('numpy', 'scipy', 'pydantic', 'rich', 'click', 'pyperf', 'ctypes')"
            " if m in sys.modules)\nprint(heavy)")
    result = run_python(code, python_env(None))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "['ctypes']"


def test_an_installed_package_ships_the_hook_library() -> None:
    from duetbench.execute import native

    if not (native.NATIVE_DIR / "duet-launch").exists():
        pytest.skip("running from a source tree: no installed package to check")
    assert (native.NATIVE_DIR / LIBRARY).is_file()


def test_without_the_environment_nothing_is_loaded_or_written(tmp_path: Path) -> None:
    code = ("from duetbench import hook\nassert hook.state() == 'not-started'\n"
            "with hook.iteration('m') as synced: pass\n"
            "import ctypes, sys\nprint(synced, hook.state(), hook.iterations())")
    env = python_env(tmp_path / "nowhere")  # no library there: it must not even be looked for
    result = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "off", "0"]
    assert result.stderr == ""
    assert list(tmp_path.iterdir()) == []


def test_a_missing_library_is_one_clear_error(tmp_path: Path) -> None:
    code = ("from duetbench import hook\nfrom duetbench.errors import DuetError\n"
            "try:\n    hook.before_iteration()\nexcept DuetError as e:\n    print(e)")
    env = python_env(tmp_path, DUET_SIDE="A", DUET_ITERATION_LOG=str(tmp_path / "a.log"))
    result = run_python(code, env)
    assert result.returncode == 0, result.stderr
    message = result.stdout.strip()
    assert "\n" not in message
    assert f"cannot load its native library {tmp_path / LIBRARY}" in message
    assert "DUETBENCH_NATIVE_DIR" in message


def test_a_bad_kind_is_rejected(hook_dir: Path, tmp_path: Path) -> None:
    code = ("from duetbench import hook\nfrom duetbench.errors import DuetError\n"
            "try:\n    hook.before_iteration('warmup')\nexcept DuetError as e:\n    print(e)")
    result = run_python(code, side_env(hook_dir, "A", tmp_path / "a.log", None))
    assert "kind is 'w', 'm' or None, not 'warmup'" in result.stdout


def test_without_a_barrier_it_logs_with_kinds(hook_dir: Path, tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    result = run_python(SIDE_SCRIPT, side_env(hook_dir, "A", log, None), "5", "2")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["log-only", "0", "5"]
    rows = parse_log(log)
    assert [(r[0], r[1], r[4]) for r in rows] == [("A", 0, "w"), ("A", 1, "w"), ("A", 2, "m"), ("A", 3, "m"),
                                                   ("A", 4, "m")]
    assert all(r[2] <= r[3] for r in rows)


@two_cpus
def test_two_python_sides_start_together_and_the_longer_one_is_released(hook_dir: Path, tmp_path: Path) -> None:
    with BarrierPage(parties=2) as page:
        logs = {s: tmp_path / f"{s}.log" for s in "AB"}
        counts = {"A": 30, "B": 45}
        procs = {s: subprocess.Popen([sys.executable, "-c", SIDE_SCRIPT, str(counts[s]), "3"],
                                     env=side_env(hook_dir, s, logs[s], page, DUET_BARRIER_TIMEOUT_MS="60000"),
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=pinned(cpu))
                 for s, cpu in zip("AB", CPUS)}
        out_a, _ = procs["A"].communicate(timeout=60)
        page.abort(4)  # as duet-launch does when A's command exits
        released = time.monotonic()
        out_b, err_b = procs["B"].communicate(timeout=60)
        assert time.monotonic() - released < 5
    assert out_a.split() == ["synchronized", "30", "30"]
    assert out_b.split() == ["lost", "30", "45"]
    assert err_b.count("duet:") == 1 and "the other side's command exited (abort code 4)" in err_b
    a, b = parse_log(logs["A"]), parse_log(logs["B"])
    assert len(a) == 30 and len(b) == 45
    assert_synchronized(a, b, "python sides")


# --- pyperf ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pyperf_ready() -> None:
    """Real pyperf with our hook registered; the entry point exists only when duetbench is installed
    (pip install ".[test]", as CI does), not in a bare source checkout."""
    pyperf = pytest.importorskip("pyperf", reason="pyperf is not installed (pip install 'duetbench[test]')")
    if tuple(int(x) for x in pyperf.__version__.split(".")[:2]) < (2, 8):
        pytest.skip(f"pyperf {pyperf.__version__} has no hooks (needs 2.8 or newer)")
    points = {e.name: e.value for e in importlib.metadata.entry_points(group="pyperf.hook")}
    if points.get("duet") != "duetbench.hook.pyperf_hook:DuetHook":
        pytest.skip("the pyperf.hook entry point 'duet' is not registered: duetbench is not installed "
                    "(pip install '.[test]')")


def pyperf_argv(script: Path, out: Path, *, processes: int, values: int, warmups: int, loops: int) -> list[str]:
    return [sys.executable, str(script), "--hook", "duet", "--inherit-environ",
            ",".join([*ENVIRONMENT, "DUETBENCH_NATIVE_DIR"]), "--processes", str(processes), "--values", str(values),
            "--warmups", str(warmups), "--loops", str(loops), "--quiet", "-o", str(out)]


def runs_metadata(path: Path) -> list[dict[str, object]]:
    bench = json.loads(path.read_text())["benchmarks"][0]
    common = {**json.loads(path.read_text()).get("metadata", {}), **bench.get("metadata", {})}
    return [{**common, **run.get("metadata", {})} for run in bench["runs"]]


def write_benches(tmp_path: Path) -> dict[str, Path]:
    scripts = {}
    for side, n in (("A", 20000), ("B", 24000)):  # B does 20% more work
        scripts[side] = tmp_path / f"bench_{side}.py"
        scripts[side].write_text(BENCH_SCRIPT.format(n=n))
    return scripts


@two_cpus
def test_pyperf_workers_are_synchronized_across_process_restarts(pyperf_ready: None, hook_dir: Path,
                                                                 tmp_path: Path) -> None:
    processes, values, warmups = 3, 4, 1
    scripts = write_benches(tmp_path)
    logs = {s: tmp_path / f"{s}.log" for s in "AB"}
    outs = {s: tmp_path / f"{s}.json" for s in "AB"}
    with BarrierPage(parties=2) as page:
        procs = {s: subprocess.Popen(pyperf_argv(scripts[s], outs[s], processes=processes, values=values,
                                                 warmups=warmups, loops=4),
                                     env=side_env(hook_dir, s, logs[s], page), stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, preexec_fn=pinned(cpu))
                 for s, cpu in zip("AB", CPUS)}
        for side, proc in procs.items():
            out, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, out + err
            assert "duet:" not in err
        assert page.aborted == 0
        assert page.generation == processes * (values + warmups)
    a, b = parse_log(logs["A"]), parse_log(logs["B"])
    per_process = ["w"] * warmups + ["m"] * values
    for side, rows in (("A", a), ("B", b)):
        assert len(rows) == processes * (values + warmups)
        assert [r[0] for r in rows] == [side] * len(rows)
        assert [r[1] for r in rows] == list(range(values + warmups)) * processes  # index restarts per worker
        assert [r[4] for r in rows] == per_process * processes
    assert_synchronized(a, b, "pyperf")
    for side in "AB":
        data = json.loads(outs[side].read_text())
        runs = data["benchmarks"][0]["runs"]
        assert [len(r.get("values", [])) for r in runs] == [values] * processes
        assert [len(r.get("warmups", [])) for r in runs] == [warmups] * processes
        for md in runs_metadata(outs[side]):
            assert md["hooks"] == "duet"
            assert md["duet_sync"] == "synchronized"
            assert md["duet_side"] == side
            assert md["duet_synced"] == md["duet_iterations"] == values + warmups
    # The hook's timing brackets pyperf's own: each measured line lasts at least loops x the value.
    values_a = [v for r in json.loads(outs["A"].read_text())["benchmarks"][0]["runs"] for v in r["values"]]
    measured = [(r[3] - r[2]) / 1e9 for r in a if r[4] == "m"]
    assert all(d >= 4 * v * 0.999 for d, v in zip(measured, values_a))


@two_cpus
def test_pyperf_through_duet_launch_with_unequal_counts_does_not_hang(pyperf_ready: None, launcher: Path,
                                                                      hook_dir: Path, tmp_path: Path) -> None:
    """A runs fewer values than B (a configuration error): when A's pyperf exits, its launcher sets
    abort 4 and B finishes at once, its last worker reporting the lost synchronization."""
    scripts = write_benches(tmp_path)
    logs = {s: tmp_path / f"{s}.log" for s in "AB"}
    values = {"A": 2, "B": 4}
    with BarrierPage(parties=2) as page:
        procs = {}
        for side, cpu in zip("AB", CPUS):
            argv = [str(launcher), "--result", str(tmp_path / f"{side}.result"), "--cpu", str(cpu),
                    "--barrier", str(page.path), "--",
                    *pyperf_argv(scripts[side], tmp_path / f"{side}.json", processes=2, values=values[side],
                                 warmups=1, loops=2)]
            procs[side] = subprocess.Popen(argv, env=side_env(hook_dir, side, logs[side], None,
                                                              DUET_BARRIER=str(page.path),
                                                              DUET_BARRIER_TIMEOUT_MS="60000"),
                                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        procs["A"].communicate(timeout=120)
        a_done = time.monotonic()
        _, err_b = procs["B"].communicate(timeout=120)
        assert time.monotonic() - a_done < 10  # a few worker start-ups, never the 60 s barrier timeout
        assert page.aborted == 4
    for side in "AB":
        assert json.loads((tmp_path / f"{side}.result").read_text())["status"] == "ok"
    assert len(parse_log(logs["A"])) == 2 * (1 + 2) and len(parse_log(logs["B"])) == 2 * (1 + 4)
    assert "the other side's command exited (abort code 4)" in err_b
    sync = [md["duet_sync"] for md in runs_metadata(tmp_path / "B.json")]
    assert sync == ["synchronized", "lost"]


def test_pyperf_hook_with_a_broken_install_stops_with_one_message(pyperf_ready: None, tmp_path: Path) -> None:
    script = write_benches(tmp_path)["A"]
    argv = pyperf_argv(script, tmp_path / "a.json", processes=1, values=1, warmups=0, loops=1)
    env = python_env(tmp_path, DUET_SIDE="A", DUET_ITERATION_LOG=str(tmp_path / "a.log"))
    result = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert "ERROR setting up hook 'duet'" in output
    [line] = [ln for ln in output.splitlines() if "duet hook" in ln]
    assert "cannot load its native library" in line and "DUETBENCH_NATIVE_DIR" in line
    # pyperf's manager adds its own traceback for any failed worker; none of it may come from us.
    assert "duetbench" not in output.split("Traceback", 1)[-1] if "Traceback" in output else True


def test_pyperf_hook_outside_a_duet_only_notes_it(pyperf_ready: None, hook_dir: Path, tmp_path: Path) -> None:
    script = write_benches(tmp_path)["A"]
    out = tmp_path / "a.json"
    argv = pyperf_argv(script, out, processes=1, values=2, warmups=1, loops=1)
    result = subprocess.run(argv, env=python_env(hook_dir), cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    [md] = runs_metadata(out)
    assert md["duet_sync"] == "off" and "duet_synced" not in md
