"""Start-up of the command line: ``synthdp --help`` against ``python -c "import pandas"``.

    python benchmarks/startup.py [--runs 9] [--out benchmarks/results/startup.md]

Runs both commands alternately (interleaved, so load on the machine affects both alike),
reports the medians and their ratio against the goal (``--help`` at most 0.6 x importing
pandas: issue 21), and writes benchmarks/results/startup.md (``--out`` elsewhere). Exits 1 when the goal is missed.
Not a unit test: timings belong in benchmarks.
"""

from __future__ import annotations

import argparse
import compileall
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

GOAL = 0.6
RESULTS = Path(__file__).resolve().parent / "results" / "startup.md"


def seconds(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=9, help="runs of each command (default 9)")
    parser.add_argument("--out", type=Path, default=RESULTS, help="results file (default benchmarks/results/startup.md)")
    args = parser.parse_args()
    compileall.compile_dir(Path(__file__).resolve().parents[1] / "synthdp", quiet=1)  # as installed: no run compiles it
    synthdp = shutil.which("synthdp")
    commands = {
        "synthdp --help": [synthdp, "--help"] if synthdp else [sys.executable, "-m", "synthdp.cli", "--help"],
        "synthdp generate --help": ([synthdp] if synthdp else [sys.executable, "-m", "synthdp.cli"]) + ["generate", "--help"],
        'python -c "import pandas"': [sys.executable, "-c", "import pandas"],
    }
    for command in commands.values():  # warm the file cache
        seconds(command)
    times: dict[str, list[float]] = {name: [] for name in commands}
    started = time.strftime("%Y-%m-%d %H:%M")
    for _ in range(args.runs):
        for name, command in commands.items():
            times[name].append(seconds(command))
    medians = {name: statistics.median(values) for name, values in times.items()}
    pandas = medians['python -c "import pandas"']
    from command_speed import _commit  # sibling module: the source tree's commit, as its results name it

    lines = [f"# Command start-up (median of {args.runs} interleaved runs)", "",
             f"`python benchmarks/startup.py --runs {args.runs}{'' if args.out == RESULTS else f' --out {args.out}'}` "
             f"on {started} at commit {_commit()} "
             f"({platform.machine()}, {len(os.sched_getaffinity(0))} CPUs, Python {platform.python_version()}; load "
             f"average at the end {os.getloadavg()[0]:.1f}) — goal: `synthdp --help` at most "
             f"{GOAL} x `python -c \"import pandas\"`.", "",
             "| command | median s | / import pandas |", "|---|---|---|"]
    lines += [f"| `{name}` | {value:.3f} | {value / pandas:.2f} |" for name, value in medians.items()]
    ratio = medians["synthdp --help"] / pandas
    met = ratio <= GOAL
    lines += ["", f"`synthdp --help` / `import pandas` = {ratio:.2f}: goal {'met' if met else 'MISSED'}."]
    text = "\n".join(lines) + "\n"
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
