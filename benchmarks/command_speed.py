"""``synthdp generate`` as a command against pandas reading the same CSV (issue 22).

    python benchmarks/command_speed.py [--runs 3] [--rows 4000000] [--dir /tmp/synthdp_command_speed]
                                      [--extra "--n-basis 100"] [--baseline SRC] [--skip-big] [--skip-ctg]

Two comparisons, each command run alternately with the others (interleaved, so load on the
shared machine affects them alike), wall time and peak resident memory (``/usr/bin/time -v``)
per run, medians reported:

* big: a generated ROWS x 10 numeric CSV (mixed distributions, 6 significant digits, about
  290 MB at 4 million rows, written once to ``--dir``), ``synthdp generate BIG.csv -o out.csv
  --bounds b.json --rows 1000 --epsilon 1 --delta 1e-10 --quiet`` (plus ``--extra``) against
  ``pandas.read_csv(BIG.csv)``: goal at most 2.5 x, peak memory under 1 GB;
* ctg: ``synthdp generate data/ctg.csv`` with its min/max bounds at (1, 1e-10) against
  ``pandas.read_csv(ctg).to_csv(out)``.

``--baseline SRC`` also times the package found in the source tree SRC (e.g. an export of the
last commit: ``git archive HEAD | tar -x -C /tmp/base``) run as ``python -m synthdp.cli``.
Writes benchmarks/results/command_speed.md, or with ``--extra`` command_speed_<extra>.md (e.g.
``command_speed_n_basis_100.md``), so a run with other options never replaces the default's
results; ``--out`` names another file. Not a unit test: timings belong in benchmarks.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

GOAL = 2.5
MEMORY_GOAL_MB = 1024
REPO = Path(__file__).resolve().parents[1]
RESULTS = Path(__file__).resolve().parent / "results" / "command_speed.md"


def results_path(extra: str) -> Path:
    """command_speed.md for the default options, command_speed_<options>.md with ``--extra``."""
    if not extra.strip():
        return RESULTS
    slug = "_".join(part for part in re.split(r"[^0-9A-Za-z.]+", extra) if part)
    return RESULTS.with_name(f"command_speed_{slug}.md")
TIME = shutil.which("time") or ("/usr/bin/time" if Path("/usr/bin/time").exists() else None)


def make_table(path: Path, rows: int, seed: int = 0) -> dict:
    """A rows x 10 CSV of mixed distributions (6 significant digits) and public bounds for it."""
    rng = np.random.default_rng(seed)
    columns = {
        "normal": lambda n: rng.normal(50, 10, n), "exponential": lambda n: rng.exponential(3.0, n),
        "uniform": lambda n: rng.uniform(-5, 5, n), "lognormal": lambda n: rng.lognormal(2, 0.7, n),
        "integer": lambda n: rng.integers(0, 100, n).astype(float), "gamma": lambda n: rng.gamma(2.0, 2.0, n),
        "beta": lambda n: rng.beta(2, 5, n), "student": lambda n: rng.standard_t(5, n),
        "poisson": lambda n: rng.poisson(4, n).astype(float), "wide": lambda n: rng.normal(-1000, 300, n),
    }
    bounds = {"normal": [0, 100], "exponential": [0, 30], "uniform": [-5, 5], "lognormal": [0, 100],
              "integer": {"bounds": [0, 99], "type": "integer"}, "gamma": [0, 30], "beta": [0, 1],
              "student": [-10, 10], "poisson": {"bounds": [0, 20], "type": "integer"}, "wide": [-2500, 500]}
    with path.open("w") as handle:
        handle.write(",".join(columns) + "\n")
        for start in range(0, rows, 200_000):
            n = min(200_000, rows - start)
            block = np.column_stack([draw(n) for draw in columns.values()])
            handle.write("\n".join(",".join(f"{value:.6g}" for value in row) for row in block) + "\n")
    return bounds


def run(command: list[str], env: dict | None = None, cwd: Path | None = None) -> tuple[float, float]:
    """Wall seconds and peak resident MB of one run (in ``cwd``: outside the repository, so that
    ``python -m`` imports the package of PYTHONPATH, not the repository's)."""
    prefix = [TIME, "-v"] if TIME else []
    for flag in ("-o", "--report"):  # the run's own outputs from the run before: synthdp refuses to replace
        if flag in command:          # them (an older baseline has no --overwrite), so they go first
            (Path(cwd) / command[command.index(flag) + 1]).unlink(missing_ok=True)
    start = time.perf_counter()
    done = subprocess.run(prefix + command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env,
                          cwd=cwd)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"failed ({done.returncode}): {shlex.join(command)}\n{done.stderr[-2000:]}")
    found = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)
    return seconds, (int(found.group(1)) / 1024 if found else float("nan"))


def synthdp_command(baseline: str | None) -> tuple[list[str], dict | None]:
    if baseline is None:
        found = shutil.which("synthdp")
        return ([found] if found else [sys.executable, "-m", "synthdp.cli"]), None
    env = {**os.environ, "PYTHONPATH": str(Path(baseline).resolve())}
    return [sys.executable, "-m", "synthdp.cli"], env


def compare(title: str, commands: dict[str, tuple[list[str], dict | None]], reference: str, runs: int,
            cwd: Path) -> list[str]:
    for command, env in commands.values():  # warm the file cache
        run(command, env, cwd)
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, (command, env) in commands.items():
            times[name].append(run(command, env, cwd))
            print(f"  {name}: {times[name][-1][0]:.2f} s, {times[name][-1][1]:.0f} MB", flush=True)
    base = statistics.median(seconds for seconds, _ in times[reference])
    lines = [f"## {title}", "", "| command | median s | runs (s) | peak MB (median) | / reference |", "|---|---:|---|---:|---:|"]
    for name, values in times.items():
        median = statistics.median(seconds for seconds, _ in values)
        memory = statistics.median(mb for _, mb in values)
        shown = ", ".join(f"{seconds:.2f}" for seconds, _ in values)
        lines.append(f"| `{name}` | {median:.2f} | {shown} | {memory:.0f} | {median / base:.2f} |")
    return lines + [""]


def _commit() -> str:
    """The source tree's commit (short), with "+ uncommitted changes" where it has them; "unknown" without git."""
    try:
        root = Path(__file__).resolve().parents[1]
        commit = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--", "synthdp"], capture_output=True,
                               text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return commit + (" with uncommitted changes" if dirty else "")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3, help="interleaved runs of each command (default 3)")
    parser.add_argument("--rows", type=int, default=4_000_000, help="rows of the generated CSV (default 4 000 000)")
    parser.add_argument("--dir", default="/tmp/synthdp_command_speed", help="where the generated CSV is kept")
    parser.add_argument("--extra", default="", help="more options for the big table's generate, e.g. '--n-basis 100'")
    parser.add_argument("--baseline", help="also time the synthdp package of this source tree")
    parser.add_argument("--skip-big", action="store_true")
    parser.add_argument("--skip-ctg", action="store_true")
    parser.add_argument("--out", type=Path, default=None,
                        help="results file (default benchmarks/results/command_speed.md, or command_speed_<extra>.md)")
    args = parser.parse_args()
    compileall.compile_dir(Path(__file__).resolve().parents[1] / "synthdp", quiet=1)  # as installed: no run compiles it
    workdir = Path(args.dir)
    workdir.mkdir(parents=True, exist_ok=True)
    synthdp, env = synthdp_command(None)
    lines = ["# `synthdp generate` as a command against pandas (issue 22)", "",
             f"`python benchmarks/command_speed.py --runs {args.runs}"
             + (f" --extra '{args.extra}'" if args.extra else "") + (" --skip-big" if args.skip_big else "")
             + (" --skip-ctg" if args.skip_ctg else "") + "`"
             + f" on {time.strftime('%Y-%m-%d %H:%M')}, synthdp commit {_commit()} ({os.cpu_count()} CPUs shared "
             "with other jobs): medians of interleaved runs; "
             f"goal: the big table at most {GOAL} x `pandas.read_csv`, peak under {MEMORY_GOAL_MB} MB.", ""]
    if not args.skip_big:
        big, bounds_path = workdir / f"big_{args.rows}.csv", workdir / f"big_{args.rows}_bounds.json"
        if not big.exists() or not bounds_path.exists():
            print(f"writing {big} ...", flush=True)
            bounds_path.write_text(json.dumps(make_table(big, args.rows)))
        options = ["-o", str(workdir / "out.csv"), "--bounds", str(bounds_path), "--rows", "1000", "--epsilon", "1",
                   "--delta", "1e-10", "--quiet", *shlex.split(args.extra)]
        commands = {"pandas.read_csv": ([sys.executable, "-c", f"import pandas as pd; pd.read_csv({str(big)!r})"], None),
                    "synthdp generate": ([*synthdp, "generate", str(big), *options], env)}
        if args.baseline:
            base, base_env = synthdp_command(args.baseline)
            commands["synthdp generate (baseline)"] = ([*base, "generate", str(big), *options], base_env)
        size = big.stat().st_size / 2**20
        lines += compare(f"{args.rows:,} x 10 CSV ({size:.0f} MB)", commands, "pandas.read_csv", args.runs, workdir)
    ctg = REPO / "data" / "ctg.csv"
    if not args.skip_ctg and ctg.exists():
        import pandas as pd

        frame = pd.read_csv(ctg)
        bounds_path = workdir / "ctg_bounds.json"
        bounds_path.write_text(json.dumps({str(c): [float(frame[c].min()), float(frame[c].max())] for c in frame}))
        options = ["-o", str(workdir / "ctg_out.csv"), "--bounds", str(bounds_path), "--epsilon", "1", "--delta",
                   "1e-10", "--quiet"]
        read_write = f"import pandas as pd; pd.read_csv({str(ctg)!r}).to_csv({str(workdir / 'ctg_copy.csv')!r})"
        commands = {"pandas read_csv + to_csv": ([sys.executable, "-c", read_write], None),
                    "synthdp generate": ([*synthdp, "generate", str(ctg), *options], env)}
        if args.baseline:
            base, base_env = synthdp_command(args.baseline)
            commands["synthdp generate (baseline)"] = ([*base, "generate", str(ctg), *options], base_env)
        lines += compare("CTG (data/ctg.csv)", commands, "pandas read_csv + to_csv", args.runs, workdir)
    text = "\n".join(lines)
    print(text)
    out = args.out or results_path(args.extra)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
