"""A small table as a command: ``synthdp generate`` on each small table, against the goal of 1 s (issue 51).

    python benchmarks/small_command.py [--runs 5] [--tables iris yacht ...] [--epsilon 1] [--delta 1e-10]

For each table of data/ (the development set, WDBC and CRM by default), ``synthdp generate
TABLE.csv -o OUT.csv --epsilon E --delta D --quiet`` with its public description (a mixed
table's schema from configs/, a numeric table's min/max bounds taken as public, as the papers
do), run as a fresh process (``python -m synthdp.cli``), every table once per round and the
rounds one after another (interleaved, so load on the machine falls on all alike); beside them
``python -c "import pandas"`` and ``python -c "import synthdp.cli, synthdp.synthesizer,
synthdp.pipeline.run"`` (the imports the command needs before any work). Medians per table.

The package's bytecode is compiled first (``compileall``), as ``pip install`` does: with
``PYTHONDONTWRITEBYTECODE`` set and sources newer than their ``.pyc`` (an editable checkout
after an edit), every run would compile the package from source again (about 0.2 s on a
2-core machine), which no installed package pays.

Writes benchmarks/results/small_command.md (``--out`` elsewhere). Not a unit test: timings
belong in benchmarks. Exits 1 when a table misses the goal.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

GOAL_S = 1.0
REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "data"
CONFIGS = REPO / "configs"
RESULTS = Path(__file__).resolve().parent / "results" / "small_command.md"
TABLES = ["iris", "glass", "yacht", "heart_cleveland", "pima", "energy", "wdbc", "crm"]
IMPORTS = "import synthdp.cli, synthdp.synthesizer, synthdp.pipeline.run"


def description(name: str, folder: Path) -> list[str]:
    """The options that describe table ``name``: its schema in configs/ where there is one, else its
    min/max bounds (taken as public, as the papers do) written to ``folder``."""
    schema = CONFIGS / f"{name}_schema.json"
    if schema.exists():
        return ["--schema", str(schema)]
    frame = pd.read_csv(DATA / f"{name}.csv")
    bounds = {column: [float(frame[column].min()), float(frame[column].max())] for column in frame.columns}
    path = folder / f"{name}_bounds.json"
    path.write_text(json.dumps(bounds))
    return ["--bounds", str(path)]


def seconds(command: list[str]) -> float:
    """Wall time of one run of ``command``; its output (after ``-o``) removed first, as the command
    never replaces a file."""
    if "-o" in command:
        Path(command[command.index("-o") + 1]).unlink(missing_ok=True)
    start = time.perf_counter()
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=REPO)
    elapsed = time.perf_counter() - start
    if done.returncode:
        sys.exit(f"{' '.join(command)} failed: {done.stderr.strip()}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5, help="rounds over every command (default 5)")
    parser.add_argument("--tables", nargs="+", default=TABLES, help=f"tables of data/ (default: {' '.join(TABLES)})")
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--delta", type=float, default=1e-10)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    from command_speed import _commit  # sibling module: the source tree's commit, as its results name it

    compileall.compile_dir(REPO / "synthdp", quiet=1)  # as an installed package has it
    with tempfile.TemporaryDirectory() as folder:
        commands = {"python -c \"import pandas\"": [sys.executable, "-c", "import pandas"],
                    "synthdp's imports": [sys.executable, "-c", IMPORTS]}
        for name in args.tables:
            commands[name] = [sys.executable, "-m", "synthdp.cli", "generate", str(DATA / f"{name}.csv"), "-o",
                              str(Path(folder) / f"{name}.out.csv"), "--epsilon", str(args.epsilon), "--delta",
                              str(args.delta), "--quiet", *description(name, Path(folder))]
        for command in commands.values():  # warm the file cache
            seconds(command)
        times: dict[str, list[float]] = {name: [] for name in commands}
        started = time.strftime("%Y-%m-%d %H:%M")
        for _ in range(args.runs):
            for name, command in commands.items():
                times[name].append(seconds(command))
    medians = {name: statistics.median(values) for name, values in times.items()}
    sizes = {name: pd.read_csv(DATA / f"{name}.csv").shape for name in args.tables}
    lines = [f"# A small table as a command (median of {args.runs} interleaved runs)", "",
             f"`python benchmarks/small_command.py --runs {args.runs} --tables {' '.join(args.tables)}` on {started} "
             f"at commit {_commit()} ({platform.machine()}, {len(os.sched_getaffinity(0))} CPUs, "
             f"Python {platform.python_version()}; load average at the end "
             f"{os.getloadavg()[0]:.1f}). Each table: `synthdp generate TABLE.csv -o OUT.csv "
             f"--epsilon {args.epsilon:g} --delta {args.delta:g} --quiet` with its schema (configs/) or min/max "
             f"bounds; bytecode compiled first, as an installed package's. Goal (issue 51): at most {GOAL_S:g} s.",
             "", "| command | rows × columns | median s | min s | max s | goal |", "|---|---|---:|---:|---:|---|"]
    for name, values in times.items():
        shape = f"{sizes[name][0]:,} × {sizes[name][1]}" if name in sizes else ""
        goal = ("met" if medians[name] <= GOAL_S else "**missed**") if name in sizes else ""
        lines.append(f"| `{name}` | {shape} | {medians[name]:.2f} | {min(values):.2f} | {max(values):.2f} | {goal} |")
    missed = [name for name in args.tables if medians[name] > GOAL_S]
    lines += ["", f"Missed on {len(missed)} of {len(args.tables)} tables" + (f" ({', '.join(missed)})." if missed else ".")]
    text = "\n".join(lines) + "\n"
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
