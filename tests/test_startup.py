"""Start-up stays light: `duet --version`/`--help` and the start of `duet compare` import neither numpy,
SQLAlchemy, pydantic nor rich (issue 17). What is imported is checked, not how long it takes."""
from __future__ import annotations

import importlib
import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest

HEAVY = ("numpy", "scipy", "sqlalchemy", "pydantic", "rich", "duetbench.importers", "duetbench.store.db")


def _imported_after(code: str) -> list[str]:
    probe = (f"import sys\n{code}\n"
             f"import json; print(json.dumps(sorted(m for m in sys.modules if m.startswith({HEAVY!r}))))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


@pytest.mark.parametrize("args", [["--version"], ["--help"], ["compare", "--help"]])
def test_version_and_help_import_nothing_heavy(args: list[str]) -> None:
    code = (f"from duetbench.cli.main import main\ntry:\n    main({args!r})\nexcept SystemExit as e:\n"
            "    assert e.code in (0, None), e.code")
    assert _imported_after(code) == []


@pytest.mark.parametrize("args", [["--help"], ["compare", "--help"], ["show", "--help"]])
def test_the_export_options_import_no_exporter_module(args: list[str]) -> None:
    # Their names and help come from the registry's table; a format's module is imported to write a file.
    code = (f"from duetbench.cli.main import main\ntry:\n    main({args!r})\nexcept SystemExit as e:\n"
            "    assert e.code in (0, None), e.code\n"
            "import sys; print(sorted(m for m in sys.modules if m.startswith('duetbench.report.exporters.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"


def test_the_compare_session_imports_statistics_and_store_on_first_use() -> None:
    # rich draws the progress line before the first invocation (on a terminal); numpy (statistics),
    # SQLAlchemy (the store) and pydantic (campaign files only) come after it, or never.
    imported = _imported_after("import duetbench.usecases.compare, duetbench.execute.runner")
    assert [m for m in imported if not m.startswith("rich")] == []


def test_a_duets_report_draws_nothing_and_imports_no_bootstrap(tmp_path: Path) -> None:
    # The report of a fixed-count comparison is on its critical path (usecases/apart.py): its t interval
    # draws nothing, so numpy.random and the bootstrap (threadpoolctl) are not imported (~25-35 ms).
    probe = (
        "import sys, importlib\n"
        "import numpy as np\n"
        "import duetbench.usecases.conclude as c, duetbench.report.lazy_console\n"
        "for m in c.REPORT_MODULES: importlib.import_module(m)\n"
        "from duetbench.analyze.comparison import compare\n"
        "rng = np.linspace(1.0, 1.1, 12)\n"
        "for method in ('duet', 'sequential'):\n"
        "    compare(method, rng, rng[::-1] * 1.01, random_state=7)\n"
        "print(sorted(m for m in ('numpy.random', 'duetbench.analyze.bootstrap', 'threadpoolctl', 'scipy')\n"
        "             if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"


@pytest.mark.parametrize("progress", [["--no-progress"], []])
def test_a_compare_on_sqlite_imports_no_sqlalchemy_and_nothing_heavy_before_its_first_run(duet_probe,  # type: ignore[no-untyped-def]
                                                                                         progress: list[str]) -> None:
    # Without a progress line (--no-progress, or standard output not a terminal: here a pipe), rich waits
    # for the report; the options are validated without pydantic (config/compare.py: ~195 ms on an AMD EPYC
    # VM); the store is reached without SQLAlchemy (store/direct.py), on a new database as on an existing one.
    for _ in range(2):
        result = duet_probe(f"HEAVY = {HEAVY!r}\n", ["compare", "true", "true", "--runs", "2", "--method", "duet",
                                                      *progress, "--db", "r.db"],
                            at_first_run="sorted({m.split('.')[0] for m in sys.modules if m.startswith(HEAVY)})",
                            then="assert e.code in (0, None), e.code\n"
                                 "print('at the end:', 'sqlalchemy' in sys.modules)\n")
        assert result.returncode == 0, result.stderr
        lines = result.stdout.splitlines()
        assert "at the first run: []" in lines and lines[-1] == "at the end: False", result.stdout


def test_help_lists_every_lazy_command_as_the_command_itself_would() -> None:
    from duetbench.cli.main import _LAZY, main

    ctx = click.Context(main)
    for name, (module, attribute, short, hidden) in _LAZY.items():
        real = getattr(importlib.import_module(module), attribute)
        assert real.name == name and real.hidden == hidden, name
        if not hidden:
            placeholder = click.Command(name, help=short)
            for limit in (30, 45, 80):
                assert placeholder.get_short_help_str(limit) == real.get_short_help_str(limit), (name, limit)
    assert main.get_command(ctx, "doctor") is importlib.import_module("duetbench.cli.doctor").doctor


def test_constants_kept_apart_to_stay_light_match_their_originals() -> None:
    import duetbench.cli.main as cli
    from duetbench.analyze import invocations
    from duetbench.store import db
    from duetbench.usecases import compare as session

    assert cli.DEFAULT_DB == db.DEFAULT_DB
    assert session.METRICS == invocations.METRICS
    assert inspect.signature(session.build_report)  # the lazy stand-ins resolve


def test_the_programs_own_version_answer_is_clicks() -> None:
    # `duet --version` answers before click is imported (cli/program.py): the same line as click's.
    fast = subprocess.run([sys.executable, "-m", "duetbench", "--version"], capture_output=True, text=True, check=True)
    code = ("from duetbench.cli.main import main\ntry:\n    main(['--version'])\nexcept SystemExit:\n    pass\n")
    slow = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert fast.stdout == slow.stdout and fast.stdout.startswith("duetbench, version ")
    probe = ("import sys, runpy\nsys.argv = ['duet', '--version']\nrunpy.run_module('duetbench', run_name='__main__')\n"
             "print('click' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True).stdout.splitlines()[-1] == "False"


@pytest.mark.parametrize("columns", ["80", "130", "90"])
def test_the_programs_own_help_page_is_clicks(columns: str) -> None:
    """`duet --help` prints the page kept in cli/help_pages.py, before click is imported, for the widths
    it keeps (80 columns, 100 or more); at others click renders it. Either way it is click's page: if this
    fails after a change to the command line, run `python -m duetbench.cli.help_page --write`."""
    from duetbench.cli.help_page import WIDTHS, render
    from duetbench.cli.help_pages import PAGES

    assert sorted(PAGES) == sorted(WIDTHS)
    for width in WIDTHS:
        assert PAGES[width] == render(width), "stale: python -m duetbench.cli.help_page --write"
    env = {**os.environ, "COLUMNS": columns}
    probe = ("import sys, runpy\nsys.argv = ['/usr/local/bin/duet', '--help']\n"
             "try:\n    runpy.run_module('duetbench', run_name='__main__')\nexcept SystemExit:\n    pass\n"
             "print('click imported:', 'click' in sys.modules)")
    fast = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True).stdout
    page, _, imported = fast.rpartition("click imported: ")
    code = "from duetbench.cli.main import main\ntry:\n    main(['--help'], prog_name='duet')\nexcept SystemExit:\n    pass\n"
    slow = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout
    assert page == slow and page.startswith("Usage: duet [OPTIONS] COMMAND")
    assert imported.strip() == ("True" if columns == "90" else "False")


@pytest.mark.parametrize("columns", [None, "", "abc", "-5", "0", "40", "60", "99", "100", "200"])
def test_the_help_page_width_is_what_click_would_use(monkeypatch: pytest.MonkeyPatch, columns: str | None) -> None:
    import shutil

    from duetbench.cli.help_page import MAX_CONTENT_WIDTH, formatter_width

    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert formatter_width() == max(min(shutil.get_terminal_size().columns, MAX_CONTENT_WIDTH) - 2, 50)


@pytest.mark.parametrize("encoding", ["utf-8", "ascii", "latin-1"])
def test_help_in_any_encoding_and_to_a_closed_pipe_ends_without_a_traceback(encoding: str) -> None:
    """The kept page is written as click writes it (UTF-8, also where the stream says ASCII); in another
    encoding click writes it, and a character the encoding lacks (the em dash) is shown escaped."""
    probe = ("import sys, runpy\nsys.argv = ['duet', '--help']\n"
             "runpy.run_module('duetbench', run_name='__main__')\n")
    env = {**os.environ, "PYTHONIOENCODING": encoding, "COLUMNS": "80"}
    shown = subprocess.run([sys.executable, "-c", probe], capture_output=True, env=env)
    assert shown.returncode == 0 and shown.stderr == b"", shown.stderr
    dash = "\\u2014".encode() if encoding == "latin-1" else "—".encode()
    assert b"how sure " + dash + b" on" in shown.stdout
    proc = subprocess.Popen([sys.executable, "-c", probe], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader went away before anything was written
    err = proc.stderr.read()
    proc.wait(timeout=60)
    assert proc.returncode in (0, 1) and b"Traceback" not in err, err


@pytest.mark.parametrize("module", ["duetbench.startup", "duetbench.usecases", "click"])
def test_ctrl_c_while_starting_is_one_line_and_130(module: str, tmp_path: Path, duet_env: dict[str, str]) -> None:
    """Ctrl-C in the first few hundred ms (the imports before the command line is parsed) printed the
    traceback of whichever import it landed in. Made certain here: the import of `module` is interrupted."""
    probe = ("import builtins, sys, runpy\n"
             "load = builtins.__import__\n"
             "def interrupted(name, *args, **kwargs):\n"
             f"    if name == {module!r}:\n"
             "        raise KeyboardInterrupt\n"
             "    return load(name, *args, **kwargs)\n"
             "builtins.__import__ = interrupted\n"
             "sys.argv = ['duet', 'compare', 'true', 'true', '--runs', '3', '--no-progress']\n"
             "runpy.run_module('duetbench', run_name='__main__')\n")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path, timeout=60,
                            env=duet_env)
    assert result.returncode == 130, result.stderr
    assert result.stderr == "interrupted while starting: nothing was measured\n", result.stderr
    assert not (tmp_path / ".duet").exists()


_COUNT_DATACLASSES = (
    "import dataclasses, sys\n"
    "made = []\n"
    "process = dataclasses._process_class\n"
    "def counted(cls, *args, **kwargs):\n"
    "    if cls.__module__.startswith('duetbench'):\n"
    "        made.append(f'{cls.__module__}.{cls.__qualname__}')\n"
    "    return process(cls, *args, **kwargs)\n"
    "dataclasses._process_class = counted\n")


def test_no_dataclass_is_made_before_a_compares_first_run_nor_among_the_reporters_imports(duet_probe) -> None:  # type: ignore[no-untyped-def]
    """Making a dataclass costs ~1-1.4 ms on a 2-vCPU AMD EPYC VM (six `exec`s of generated code), a
    msgspec Struct ~0.04 ms: the ~25 classes on these two paths were ~30 ms of each (issue 17, the ninth
    pass of docs/notes/overhead.md). A class they need is a Struct; this fails when a dataclass comes back."""
    result = duet_probe(_COUNT_DATACLASSES, ["compare", "true", "true", "--runs", "2", "--method", "duet",
                                             "--no-progress", "--db", "r.db"], at_first_run="made")
    assert result.returncode == 0, result.stderr
    assert "at the first run: []" in result.stdout.splitlines(), result.stdout
    # What the reporter imports (usecases/apart.py `start`): what both processes need, imported before the
    # fork, then REPORT_MODULES.
    reporter = (
        _COUNT_DATACLASSES +
        "import importlib, json\n"
        "import duetbench.cli.program\n"
        "from duetbench.usecases.apart import BOTH_IMPORT\n"
        "for name in BOTH_IMPORT:\n"
        "    importlib.import_module(name)\n"
        "from duetbench.usecases.conclude import REPORT_MODULES\n"
        "for name in REPORT_MODULES:\n"
        "    importlib.import_module(name)\n"
        "print(json.dumps(made))\n")
    out = subprocess.run([sys.executable, "-c", reporter], capture_output=True, text=True, check=True).stdout
    assert json.loads(out.strip().splitlines()[-1]) == []


def test_a_compares_start_up_runs_no_cyclic_collection_in_either_process(duet_probe, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The collector is off from `duet`'s first line until start-up is over (duetbench/startup.py): in the
    orchestrator until its runner starts, in the reporter until its imports are done; on after that. With
    it on, ~30 collections took 6-10 ms of the orchestrator's way to its first command and 12-18 ms of the
    reporter's imports on a 2-vCPU VM (issue 17)."""
    record = tmp_path / "settled.jsonl"
    hooks = ("import gc, json\n"
             "import duetbench.startup as s\n"
             "collections = [0]\n"
             "gc.callbacks.append(lambda phase, info:\n"
             "                    collections.__setitem__(0, collections[0] + (phase == 'start')))\n"
             "defer, settle = s.defer_collection, s.settle\n"
             "def deferred():\n"
             "    collections[0] = 0\n"
             "    defer()\n"
             "def settled():\n"
             "    before = collections[0]\n"
             "    settle()\n"
             f"    with open({str(record)!r}, 'a') as f:\n"
             "        f.write(json.dumps([os.getpid(), before, gc.isenabled()]) + '\\n')\n"
             "s.defer_collection, s.settle = deferred, settled\n")
    result = duet_probe(hooks, ["compare", "true", "true", "--runs", "2", "--method", "duet", "--no-progress",
                                "--db", "r.db"])
    assert result.returncode == 0, result.stderr
    settled = [json.loads(line) for line in record.read_text().splitlines()]
    assert len({pid for pid, _, _ in settled}) == 2, settled  # the orchestrator and its reporter
    assert all(before == 0 and enabled for _, before, enabled in settled), settled


def test_settle_freezes_what_start_up_made_and_turns_the_collector_back_on() -> None:
    import gc

    from duetbench import startup

    was = gc.isenabled()
    try:
        startup.defer_collection()
        assert not gc.isenabled()
        frozen = gc.get_freeze_count()
        startup.settle()
        assert gc.isenabled() and gc.get_freeze_count() >= frozen
        gc.disable()
        startup.settle()  # once only: a second call changes nothing
        assert not gc.isenabled()
    finally:
        gc.unfreeze()
        (gc.enable if was else gc.disable)()
