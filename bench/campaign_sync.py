"""bench/campaign_sync: how well do `duet run`'s harness hooks synchronize, and what does it buy?

For each harness that speaks the hook protocol — C (adapters/c/duet.h), Python (duetbench.hook), JMH
(the duet profiler; needs java + mvn) and C inside two podman containers (needs podman) — one campaign
with the same machine work for each method (sequential, duet, aduet), B doing 5% more work than A:

- start skew of the k-th iterations of A and B in the synchronous duet (median, p90, p99, max, and the
  share within 1 µs / 50 µs);
- overlap of the asynchronous duet (mean overlap rate of paired iterations, share paired);
- per method: ratio B/A with its 99% CI, relative CI width, and the campaign's wall time per method.

Writes bench/results/campaign_sync.json and bench/results/campaign_sync.md.

    python bench/campaign_sync.py [--runs 5] [--iterations 30] [--harnesses c,python,jmh,podman]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from duetbench.analyze.overlap import overlap_pairs

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results"
TRUTH = 1.05


def _c_example(out: Path, static: bool = False) -> Path:
    exe = out / "example"
    cmd = ["cc", "-O2", "-std=c11", *(["-static"] if static else []), "-I", str(ROOT / "adapters" / "c"), "-o",
           str(exe), str(ROOT / "adapters" / "c" / "example.c")]
    subprocess.run(cmd, check=True)
    return exe


def campaign_c(work: Path, runs: int, iterations: int) -> str:
    exe = _c_example(work)
    return f"""campaign: c
methods: {{sequential: {runs}, duet: {runs}, aduet: {runs}}}
parser: {{name: regex, pattern: '^(?P<value>\\d+)$', unit: ns}}
timeout: 300
benchmarks:
  lcg:
    A: {exe} {iterations} 5 2000000
    B: {exe} {iterations} 5 2100000
"""


def campaign_python(work: Path, runs: int, iterations: int) -> str:
    bench = ROOT / "examples" / "quickstart" / "bench.py"
    return f"""campaign: python
methods: {{sequential: {runs}, duet: {runs}, aduet: {runs}}}
parser: {{name: regex, pattern: '^iteration \\d+: (?P<value>[0-9.]+) s$'}}
warmup: 5
timeout: 300
benchmarks:
  work:
    A: {sys.executable} {bench} --iterations {iterations + 5} --work 100000
    B: {sys.executable} {bench} --iterations {iterations + 5} --work 105000
"""


def campaign_jmh(work: Path, runs: int, iterations: int) -> str:
    out = work / "java"
    subprocess.run(["mvn", "-q", "-B", "package", f"-Dduet.target={out}/${{project.artifactId}}"],
                   cwd=ROOT / "adapters" / "java", check=True)
    cp = f"{out / 'jmh-sample' / 'jmh-sample.jar'}:{out / 'duet-jmh' / 'duet-jmh.jar'}"
    n = max(5, iterations // 3)
    return f"""campaign: jmh
methods: {{sequential: {runs}, duet: {runs}, aduet: {runs}}}
shell: true
command: >-
  exec java -Djmh.ignoreLock=true -cp {cp} org.openjdk.jmh.Main 'LoopBenchmark.mix' -p size=$SIZE
  -f 1 -wi 3 -i {n} -w 200ms -r 200ms -prof io.duetbench.jmh.DuetProfiler -rf json -rff {{outdir}}/jmh.json
parser: jmh
results: ["{{outdir}}/jmh.json"]
timeout: 300
benchmarks:
  loop:
    env: {{SIZE: 1000}}
    B: {{env: {{SIZE: 1050}}}}
"""


def campaign_podman(work: Path, runs: int, iterations: int) -> str:
    root = work / "rootfs"
    (root / "bin").mkdir(parents=True)
    for d in ("tmp", "dev", "proc", "sys"):
        (root / d).mkdir()
    shutil.copy(_c_example(work, static=True), root / "bin" / "example")
    subprocess.run(["tar", "-C", str(root), "-cf", str(work / "rootfs.tar"), "."], check=True)
    subprocess.run(["podman", "import", "-q", str(work / "rootfs.tar"), "localhost/duetbench-bench:latest"],
                   check=True, capture_output=True)
    return f"""campaign: podman
methods: {{sequential: {runs}, duet: {runs}, aduet: {runs}}}
parser: {{name: regex, pattern: '^(?P<value>\\d+)$', unit: ns}}
container: localhost/duetbench-bench:latest
timeout: 300
benchmarks:
  lcg:
    A: /bin/example {iterations} 5 2000000
    B: /bin/example {iterations} 5 2100000
"""


HARNESSES = {"c": campaign_c, "python": campaign_python, "jmh": campaign_jmh, "podman": campaign_podman}


def available(name: str) -> str | None:
    """Why a harness cannot be measured here, or None."""
    needs = {"jmh": ("java", "mvn"), "podman": ("podman",), "c": ("cc",), "python": ()}[name]
    missing = [t for t in needs if shutil.which(t) is None]
    return f"missing {', '.join(missing)}" if missing else None


def sync_stats(conn: sqlite3.Connection) -> dict[str, float]:
    skews = []
    for (run_id,) in conn.execute("SELECT id FROM runs WHERE method='duet' AND status='ok'"):
        a, b = ([s for (s,) in conn.execute("SELECT start_ns FROM iterations WHERE run_id=? AND side=? AND warmup=0 "
                                             "ORDER BY seq", (run_id, side))] for side in "AB")
        n = min(len(a), len(b))
        skews += list(np.abs(np.array(a[:n], dtype=np.int64) - np.array(b[:n], dtype=np.int64)) / 1e3)
    s = np.array(skews)
    if s.size == 0:
        return {}
    return {"pairs": int(s.size), "median_us": float(np.median(s)), "p90_us": float(np.percentile(s, 90)),
            "p99_us": float(np.percentile(s, 99)), "max_us": float(s.max()),
            "within_1us": float(np.mean(s < 1)), "within_50us": float(np.mean(s < 50))}


def overlap_stats(conn: sqlite3.Connection) -> dict[str, float]:
    rates, paired, total = [], 0, 0
    for (run_id,) in conn.execute("SELECT id FROM runs WHERE method='aduet' AND status='ok'"):
        a, b = (np.array(conn.execute("SELECT start_ns, end_ns FROM iterations WHERE run_id=? AND side=? AND "
                                      "warmup=0 AND start_ns IS NOT NULL ORDER BY seq", (run_id, side)).fetchall(),
                         dtype=np.int64).reshape(-1, 2) for side in "AB")
        if not len(a) or not len(b):
            continue
        pairs = overlap_pairs(a[:, 0], a[:, 1], b[:, 0], b[:, 1], min_overlap_rate=0.4)
        rates += list(pairs.overlap_rate)
        paired += int(np.unique(pairs.a_index).size)  # A iterations with a partner
        total += len(a)
    return {"mean_overlap_rate": float(np.mean(rates)) if rates else float("nan"),
            "a_paired_share": paired / total if total else float("nan")}


def method_stats(db: Path, seed: int) -> dict[str, dict[str, object]]:
    from duetbench.store.campaigns import CampaignStore, iteration_table
    from duetbench.store.db import Store
    from duetbench.analyze.tables import AnalysisOptions, analyze_table

    store = Store(db)
    campaigns = CampaignStore(store)
    record = campaigns.campaigns()[0]
    runs = campaigns.runs(record.id)
    analysed = {r.method: r for r in analyze_table(iteration_table(campaigns, record.id), AnalysisOptions(seed=seed))}
    out: dict[str, dict[str, object]] = {}
    for method in ("sequential", "duet", "aduet"):
        mine = [r for r in runs if r.method == method]
        seconds = sum(max(s.end_ns for s in r.sides.values()) - min(s.start_ns for s in r.sides.values())
                      for r in mine if r.sides) / 1e9
        entry: dict[str, object] = {"runs_ok": sum(r.status == "ok" for r in mine), "runs": len(mine),
                                    "machine_s": seconds}
        row = analysed.get(method)
        res = row.result if row else None
        if res is not None:
            entry.update(ratio=res.ratio.estimate, low=res.ratio.low, high=res.ratio.high,
                         rciw=res.relative_ci_width, verdict=res.verdict,
                         covers_truth=bool(res.ratio.low <= TRUTH <= res.ratio.high))
        else:
            entry["problem"] = row.problem if row else "no runs"
        out[method] = entry
    store.close()
    return out


def run_one(name: str, runs: int, iterations: int, seed: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix=f"duetbench-bench-{name}-") as tmp:
        work = Path(tmp)
        (work / "campaign.yml").write_text(f"seed: {seed}\n" + HARNESSES[name](work, runs, iterations))
        t0 = time.monotonic()
        proc = subprocess.run([sys.executable, "-m", "duetbench", "run", "campaign.yml", "--no-progress"],
                              cwd=work, capture_output=True, text=True)
        elapsed = time.monotonic() - t0
        if proc.returncode != 0:
            return {"error": proc.stderr[-2000:] or proc.stdout[-2000:]}
        with sqlite3.connect(work / ".duet" / "results.db") as conn:
            result = {"elapsed_s": elapsed, "sync": sync_stats(conn), "overlap": overlap_stats(conn)}
        result["methods"] = method_stats(work / ".duet" / "results.db", seed)
        return result


def markdown(results: dict[str, dict[str, object]], args: argparse.Namespace) -> str:
    lines = [f"# duet run: hook synchronization and what it buys ({time.strftime('%Y-%m-%d')})", "",
             f"{args.runs} runs per method, ~{args.iterations} measured iterations per run, B does 5% more work "
             "than A (truth ≈ 1.05 for C and JMH; Python's interpreter overheads make it ≈1.05 too).", "",
             "## Start skew of the k-th iterations in the synchronous duet", "",
             "| harness | pairs | median | p90 | p99 | max | ≤1 µs | ≤50 µs |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, r in results.items():
        s = r.get("sync") or {}
        if not s:
            lines.append(f"| {name} | {r.get('skipped') or r.get('error', 'no data')[:80]} ||||||| ")
            continue
        lines.append(f"| {name} | {s['pairs']} | {s['median_us']:.3f} µs | {s['p90_us']:.3f} µs | "
                     f"{s['p99_us']:.1f} µs | {s['max_us']:.1f} µs | {s['within_1us']:.0%} | {s['within_50us']:.0%} |")
    lines += ["", "## Ratio B/A per method (99% CI)", "",
              "| harness | method | runs ok | ratio [CI] | CI width | machine s | aduet overlap |",
              "|---|---|---:|---|---:|---:|---|"]
    for name, r in results.items():
        for method, m in (r.get("methods") or {}).items():
            ov = r.get("overlap", {})
            extra = (f"rate {ov['mean_overlap_rate']:.2f}, A paired {ov['a_paired_share']:.0%}"
                     if method == "aduet" and ov else "")
            if "ratio" in m:
                lines.append(f"| {name} | {method} | {m['runs_ok']}/{m['runs']} | {m['ratio']:.4f} "
                             f"[{m['low']:.4f}, {m['high']:.4f}] | {m['rciw']:.2%} | {m['machine_s']:.1f} | {extra} |")
            else:
                lines.append(f"| {name} | {method} | {m['runs_ok']}/{m['runs']} | {m.get('problem', '')[:60]} | | "
                             f"{m['machine_s']:.1f} | {extra} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--iterations", type=int, default=30)
    p.add_argument("--harnesses", default="c,python,jmh,podman")
    p.add_argument("--seed", type=int, default=20261122)
    args = p.parse_args()
    results: dict[str, dict[str, object]] = {}
    for name in args.harnesses.split(","):
        why = available(name)
        if why:
            results[name] = {"skipped": why}
            print(f"{name}: skipped ({why})", flush=True)
            continue
        print(f"{name}: measuring", flush=True)
        results[name] = run_one(name, args.runs, args.iterations, args.seed)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "campaign_sync.json").write_text(json.dumps({"args": vars(args), "results": results}, indent=2))
    text = markdown(results, args)
    (RESULTS / "campaign_sync.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("COLUMNS", "200")
    sys.exit(main())
