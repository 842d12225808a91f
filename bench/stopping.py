"""bench/stopping: what adaptive stopping saves, and whether it changes the answer (issue 5 item 4).

`duet compare` with a fixed `--runs 30` against the adaptive default (at least 10 pairs, then stop as
soon as the 99% CI of B/A is narrower than --target-width, within the time budget), on the built-in
integer workload: A/A and a known 2% and 5% slowdown, each repeated. Both configurations run
alternately in the same session (these VMs drift), and for each pair of results we record the machine
time (wall time of the whole `duet compare`), the ratio, the CI and the verdict.

Writes bench/results/stopping.json and bench/results/stopping.md.

    python bench/stopping.py [--reps 3] [--target-ms 20] [--target-width 0.01]

Not yet here: the JMH half of the issue (JMH's defaults, 5 forks x 5+5 iterations of 10 s, are ~8
machine-minutes per benchmark and side; it needs a session of its own).
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from duetbench.execute.native import native_binary

RESULTS = Path(__file__).resolve().parent / "results"
SCALES = (1.00, 1.02, 1.05)


def compare(cmd_a: str, cmd_b: str, extra: list[str], seed: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "r.json"
        t0 = time.monotonic()
        proc = subprocess.run([sys.executable, "-m", "duetbench", "compare", cmd_a, cmd_b, "--seed", str(seed),
                               "--no-progress", "--db", str(Path(tmp) / "db.sqlite"), "--export-json", str(out),
                               *extra], capture_output=True, text=True)
        elapsed = time.monotonic() - t0
        if proc.returncode != 0:
            return {"error": proc.stderr[-500:]}
        data = json.loads(out.read_text())
    wall = next(c for c in data["comparisons"] if c["metric"] == "wall")
    return {"elapsed_s": elapsed, "runs": wall["runs"], "ratio": wall["ratio"]["estimate"],
            "low": wall["ratio"]["low"], "high": wall["ratio"]["high"], "verdict": wall["verdict"],
            "rciw": wall["relative_ci_width"]}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--target-ms", type=float, default=20.0)
    p.add_argument("--target-width", type=float, default=0.01)
    p.add_argument("--seed", type=int, default=5)
    p.add_argument("--name", default="stopping", help="results file name (bench/results/NAME.json, .md)")
    args = p.parse_args()
    work = str(native_binary("duet-workload"))
    ops = int(subprocess.run([work, "integer", "--calibrate", str(args.target_ms)], capture_output=True, text=True,
                             check=True).stdout.split()[0])
    fixed = ["--runs", "30"]
    adaptive = ["--target-width", str(args.target_width), "--min-runs", "10", "--max-runs", "300",
                "--time-budget", "60"]
    cases = []
    for rep in range(args.reps):
        for scale in SCALES:
            cmd_a = f"{work} integer --ops {ops}"
            cmd_b = f"{work} integer --ops {ops} --scale {scale}"
            seed = args.seed * 1000 + rep * 10 + int(scale * 100)
            order = [("fixed", fixed), ("adaptive", adaptive)]
            if rep % 2:
                order.reverse()  # alternate which configuration runs first
            case: dict[str, object] = {"rep": rep, "scale": scale}
            for name, extra in order:
                case[name] = compare(cmd_a, cmd_b, extra, seed)
                print(f"scale {scale} rep {rep} {name}: {case[name]}", flush=True)
            cases.append(case)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{args.name}.json").write_text(json.dumps({"args": vars(args), "ops": ops, "cases": cases}, indent=2))
    lines = [f"# Adaptive stopping against a fixed --runs 30 ({time.strftime('%Y-%m-%d')})", "",
             f"`duet compare` (duet method), integer workload ~{args.target_ms:g} ms, {args.reps} repetitions per "
             f"case; adaptive = `--target-width {args.target_width:g} --min-runs 10 --max-runs 300 --time-budget 60`.",
             "", "| truth | rep | fixed: runs, s, ratio [CI], verdict | adaptive: runs, s, ratio [CI], verdict | "
                 "time saved | same verdict |", "|---:|---:|---|---|---:|---|"]
    savings, same, run_savings = [], [], []
    for c in cases:
        f, a = c["fixed"], c["adaptive"]
        if "error" in f or "error" in a:  # type: ignore[operator]
            lines.append(f"| {c['scale']} | {c['rep']} | {f.get('error', '')} | {a.get('error', '')} | | |")  # type: ignore[union-attr]
            continue
        saving = 1 - a["elapsed_s"] / f["elapsed_s"]  # type: ignore[index,operator]
        savings.append(saving)
        run_savings.append(1 - a["runs"] / f["runs"])  # type: ignore[index,operator]
        same.append(f["verdict"] == a["verdict"])  # type: ignore[index]

        def cell(r: dict) -> str:  # type: ignore[type-arg]
            return (f"{r['runs']}, {r['elapsed_s']:.1f} s, {r['ratio']:.4f} [{r['low']:.4f}, {r['high']:.4f}], "
                    f"{r['verdict']}")
        lines.append(f"| {c['scale']} | {c['rep']} | {cell(f)} | {cell(a)} | {saving:.0%} | "  # type: ignore[arg-type]
                     f"{'yes' if same[-1] else '**no**'} |")
    if savings:
        lines += ["", f"Median machine time saved: **{statistics.median(savings):.0%}** "
                      f"(range {min(savings):.0%} … {max(savings):.0%}); measured pairs saved: "
                      f"**{statistics.median(run_savings):.0%}** (the rest is the fixed start-up of each "
                      f"`duet compare`, ~0.8 s: Python and its imports); same verdict in {sum(same)}/{len(same)}."]
    text = "\n".join(lines) + "\n"
    (RESULTS / f"{args.name}.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
