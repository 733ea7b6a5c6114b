"""What the model of pairs costs a command: time and peak memory against an earlier source tree (issue 18).

    python benchmarks/relationships_cost.py --baseline SRC [--runs 5] [--dir /tmp/synthdp_relationships_cost]

Issue 18 asks that a run stay within 2 x of the time and peak memory it had before the pairs were
released (its filing commit, e27d22e: ``git archive e27d22e | tar -x -C /tmp/base18``, then
``--baseline /tmp/base18``). Each command is run alternately with the others (interleaved, so load
on the shared machine affects them alike), wall time and peak resident memory per run
(``/usr/bin/time -v``), medians reported:

* PKS (``data/pks.csv``) with its min/max bounds at (1, 1e-10);
* adult (``data/adult.csv``) with ``configs/adult_schema.json`` (each tree's own) at (1, 1e-10).

Writes benchmarks/results/relationships_cost.md (``--out`` names another file). Not a unit
test: timings belong in benchmarks.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from command_speed import REPO, run, synthdp_command  # noqa: E402

GOAL = 2.0
RESULTS = Path(__file__).resolve().parent / "results" / "relationships_cost.md"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", required=True, help="the synthdp source tree to compare against")
    parser.add_argument("--runs", type=int, default=5, help="interleaved runs of each command (default 5)")
    parser.add_argument("--dir", default="/tmp/synthdp_relationships_cost", help="where outputs are written")
    parser.add_argument("--out", type=Path, default=RESULTS, help="results file")
    args = parser.parse_args()
    workdir = Path(args.dir)
    workdir.mkdir(parents=True, exist_ok=True)
    baseline = Path(args.baseline).resolve()
    trees = {"this tree": (REPO, synthdp_command(None)), "baseline": (baseline, synthdp_command(str(baseline)))}
    import pandas as pd

    pks = REPO / "data" / "pks.csv"
    frame = pd.read_csv(pks)
    bounds = workdir / "pks_bounds.json"
    bounds.write_text(json.dumps({str(c): [float(frame[c].min()), float(frame[c].max())] for c in frame}))
    level = ["--epsilon", "1", "--delta", "1e-10", "--seed", "1", "--quiet"]
    commands = {}
    for tree, (root, (command, env)) in trees.items():
        commands[("PKS", tree)] = ([*command, "generate", str(pks), "-o", str(workdir / f"pks_{tree[0]}.csv"),
                                    "--bounds", str(bounds), *level], env)
        commands[("adult", tree)] = ([*command, "generate", str(REPO / "data" / "adult.csv"),
                                      "-o", str(workdir / f"adult_{tree[0]}.csv"),
                                      "--schema", str(root / "configs" / "adult_schema.json"), *level], env)
    for command, env in commands.values():  # warm the file cache
        run(command, env, workdir)
    times: dict = {key: [] for key in commands}
    for _ in range(args.runs):
        for key, (command, env) in commands.items():
            times[key].append(run(command, env, workdir))
            print(f"  {key}: {times[key][-1][0]:.2f} s, {times[key][-1][1]:.0f} MB", flush=True)
    commit = subprocess.run(["git", "-C", str(REPO), "describe", "--always", "--dirty"], capture_output=True,
                            text=True).stdout.strip() or "unknown"
    lines = ["# What the model of pairs costs a command (issue 18)", "",
             f"`python benchmarks/relationships_cost.py --baseline {args.baseline} --runs {args.runs}` on "
             f"{time.strftime('%Y-%m-%d %H:%M')} (this tree: {commit}): medians of interleaved runs, `synthdp generate` "
             f"at (1, 10⁻¹⁰) with `--seed 1`; goal: this tree at most {GOAL} x the baseline's time and peak memory.", "",
             "| table | tree | median s | runs (s) | peak MB (median) | time / baseline | memory / baseline |",
             "|---|---|---:|---|---:|---:|---:|"]
    failed = []
    for table in ("PKS", "adult"):
        base_s = statistics.median(s for s, _ in times[(table, "baseline")])
        base_mb = statistics.median(mb for _, mb in times[(table, "baseline")])
        for tree in trees:
            values = times[(table, tree)]
            seconds, memory = statistics.median(s for s, _ in values), statistics.median(mb for _, mb in values)
            shown = ", ".join(f"{s:.2f}" for s, _ in values)
            lines.append(f"| {table} | {tree} | {seconds:.2f} | {shown} | {memory:.0f} | {seconds / base_s:.2f} | "
                         f"{memory / base_mb:.2f} |")
            if tree == "this tree" and (seconds > GOAL * base_s or memory > GOAL * base_mb):
                failed.append(table)
    lines += ["", "Within the goal on every table." if not failed else f"**Missed** on {', '.join(failed)}.", ""]
    text = "\n".join(lines)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
