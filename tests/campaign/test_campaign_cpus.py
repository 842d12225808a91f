"""`cpus_per_command` in a campaign: a benchmark that runs several threads at once gets several CPUs (or
all) per side, as `duet compare --cpus-per-command`; a duet of that size where the machine has the CPUs,
else a clear error before anything runs."""
from __future__ import annotations

import os
import re
import statistics
from pathlib import Path

import pytest

from duetbench.host.doctor.sysroot import parse_cpu_list
from duetbench.plan.schedule import keyed_cpu_sets
from duetbench.report.warnings import BUSY_SHARE, SELF_WAIT_SHARE


def _allowed(listed: str) -> set[int]:
    """A kernel CPU list ("0-1,3", as /proc/self/status's Cpus_allowed_list) as a set."""
    return set(parse_cpu_list(listed))


USABLE = sorted(os.sched_getaffinity(0))



def test_the_plans_cpus_stand_for_disjoint_sets_or_one_shared_set() -> None:
    eight = list(range(8))
    assert keyed_cpu_sets(eight, 1) == {}
    assert keyed_cpu_sets(eight, 2) == {6: (4, 5), 7: (6, 7)}  # the plan names 6 and 7 (choose_cpus)
    assert keyed_cpu_sets(eight, 5) == {6: (3, 4, 5, 6, 7), 7: (3, 4, 5, 6, 7)}  # sequential runs only
    assert keyed_cpu_sets([0, 1], 2) == {0: (0, 1), 1: (0, 1)}
    assert keyed_cpu_sets([3], 1) == {}


def _campaign(tmp_path: Path, cpus: str, methods: str) -> None:
    (tmp_path / "campaign.yml").write_text(f"""campaign: t
seed: 3
parser: {{name: regex, pattern: '^(?P<value>\\d+)$', unit: ns}}
benchmarks:
  threads:
    cpus_per_command: {cpus}
    methods: {methods}
    command: sh -c 'grep Cpus_allowed_list /proc/self/status >> {tmp_path}/$DUET_SIDE.txt; echo 1000'
""")


@pytest.mark.skipif(len(USABLE) < 2, reason="needs two CPUs to give a command more than one")
def test_every_run_of_the_benchmark_may_use_every_cpu(duet, tmp_path: Path) -> None:
    _campaign(tmp_path, "all", "{sequential: 2}")
    dry = duet("run", "campaign.yml", "--dry-run")
    listed = f"{USABLE[0]}-{USABLE[-1]}" if USABLE == list(range(USABLE[0], USABLE[-1] + 1)) else None
    said = " ".join(dry.stdout.split())
    assert f"threads: {len(USABLE)} CPUs per command (cpus_per_command): the plan's CPU" in said, dry.stdout
    assert listed is None or f"for {listed}" in said, dry.stdout
    result = duet("run", "campaign.yml", "--no-progress")
    assert result.returncode == 0, result.stdout + result.stderr
    seen = [_allowed(line.split()[-1]) for side in "AB" for line in (tmp_path / f"{side}.txt").read_text().splitlines()]
    assert seen == [set(USABLE)] * 4


@pytest.mark.skipif(len(USABLE) >= 4, reason="checks the refusal where a duet of two CPUs each does not fit")
def test_a_duet_without_twice_the_cpus_is_refused_before_anything_runs(duet, tmp_path: Path) -> None:
    _campaign(tmp_path, "2", "{duet: 2}")
    result = duet("run", "campaign.yml", "--no-progress")
    assert result.returncode == 2
    assert "benchmarks.threads.cpus_per_command: a duet of 2 CPUs per command needs 4 CPUs" in result.stderr, \
        result.stderr
    assert not list(tmp_path.glob("*.txt"))


@pytest.mark.parametrize(("value", "says"), [("0", "must be a number of CPUs from 1, or all (got 0)"),
                                             ("many", 'must be a number of CPUs from 1, or all (got "many")'),
                                             ("true", "must be a number of CPUs from 1, or all (got true)")])
def test_a_bad_value_is_named_where_it_is(duet, tmp_path: Path, value: str, says: str) -> None:
    _campaign(tmp_path, value, "{sequential: 1}")
    result = duet("run", "campaign.yml", "--dry-run")
    assert result.returncode == 2 and "cpus_per_command" in result.stderr and says in result.stderr, result.stderr


def test_more_cpus_than_usable_is_refused(duet, tmp_path: Path) -> None:
    _campaign(tmp_path, "4096", "{sequential: 1}")
    result = duet("run", "campaign.yml", "--no-progress")
    assert result.returncode == 2
    assert (f"campaign.yml:6:23: benchmarks.threads.cpus_per_command: 4096 CPUs per command, but this process "
            f"may use only {len(USABLE)} CPU(s)") in result.stderr, result.stderr


def test_too_many_cpus_set_for_the_whole_campaign_is_named_there_and_by_benchmark(duet, tmp_path: Path) -> None:
    (tmp_path / "campaign.yml").write_text("campaign: t\n"
                                           "cpus_per_command: 4096\n"
                                           "benchmarks:\n"
                                           "  one: {command: 'true', methods: {sequential: 1}}\n")
    result = duet("run", "campaign.yml", "--dry-run")
    assert result.returncode == 2
    assert "campaign.yml:2:19: cpus_per_command: benchmark one: 4096 CPUs per command" in result.stderr, result.stderr


def test_a_containers_cpuset_is_the_sides_cpu_or_its_cpus(tmp_path: Path) -> None:
    from duetbench.config.campaign_model import ContainerSpec
    from duetbench.execute.container import ContainerEngine, container_argv

    engine = ContainerEngine(name="podman", binary="podman")
    spec = ContainerSpec(image="img")
    for cpu, listed in ((3, "3"), ((4, 5), "4,5")):
        argv = container_argv(engine, spec, ["true"], cpu=cpu, cwd=tmp_path, env={}, mounts=[], cgroup=None,
                              name="n")
        assert argv[argv.index("--cpuset-cpus") + 1] == listed


@pytest.mark.skipif(len(USABLE) < 2, reason="needs two CPUs to tell one from several")
def test_by_default_each_run_is_pinned_to_one_cpu(duet, tmp_path: Path) -> None:
    _campaign(tmp_path, "1", "{sequential: 1, duet: 1}")
    result = duet("run", "campaign.yml", "--no-progress")
    assert result.returncode == 0, result.stdout + result.stderr
    seen = [_allowed(line.split()[-1]) for side in "AB" for line in (tmp_path / f"{side}.txt").read_text().splitlines()]
    assert len(seen) == 4 and all(len(cpus) == 1 for cpus in seen)


@pytest.mark.skipif(len(USABLE) < 2, reason="needs two CPUs to run a duet")
def test_a_benchmark_running_more_threads_than_its_cpus_is_named_in_the_summary(duet, native_dir: Path,
                                                                                tmp_path: Path) -> None:
    import sqlite3

    workload = native_dir / "duet-workload"
    (tmp_path / "campaign.yml").write_text(f"""campaign: t
seed: 3
parser: {{name: regex, pattern: '^(?P<value>\\d+)$', unit: ns}}
methods: {{duet: 2}}
benchmarks:
  threads: sh -c '{workload} integer --ops 15000 --threads 4 >/dev/null && echo 1000'
  single: sh -c '{workload} integer --ops 15000 >/dev/null && echo 1000'
""")
    result = duet("run", "campaign.yml", "--no-progress")
    assert result.returncode == 0, result.stdout + result.stderr
    with sqlite3.connect(tmp_path / ".duet" / "results.db") as conn:
        waits = [w for (w,) in conn.execute("SELECT cgroup_wait_s FROM run_sides")]
        rows = conn.execute("SELECT s.side, s.cpu_s / s.wall_s, s.cgroup_wait_s / s.wall_s FROM run_sides s "
                            "JOIN runs r ON r.id = s.run_id WHERE r.benchmark = 'threads' AND NOT s.warmup").fetchall()
    if any(w is None for w in waits):
        pytest.skip("the sides ran without a cgroup recording CPU pressure here (needs cgroup v2 and root)")
    # Another process on a side's CPU takes CPU time from it (busy below BUSY_SHARE: no sign then, by design):
    # the note names exactly the sides whose recorded shares qualify, as the product judges them.
    shares = {side: (statistics.median(b for s, b, _ in rows if s == side),
                     statistics.median(w for s, _, w in rows if s == side)) for side in "AB"}
    qualify = [side for side, (busy, wait) in shares.items() if busy >= BUSY_SHARE and wait >= SELF_WAIT_SHARE]
    if not qualify and all(busy < BUSY_SHARE for busy, _ in shares.values()):
        pytest.skip(f"another process took both sides' CPUs (busy and wait shares: {shares})")
    said = " ".join(result.stdout.split())
    warned = ("A and B kept their CPUs busy and still had tasks waiting for them" if len(qualify) == 2 else
              f"{qualify[0]} kept its CPU busy and still had tasks waiting for it" if qualify else "(nothing)")
    assert f"note threads · duet: {warned}" in said, (shares, said)
    assert not re.search(r"note single · duet: (A|B|A and B) kept", said), said
    assert f"cpus_per_command: all on the benchmark gives each side all {len(USABLE)} CPUs" in said
    analysed = duet("analyze")
    assert analysed.returncode == 0 and warned in " ".join(analysed.stdout.split()), analysed.stdout
