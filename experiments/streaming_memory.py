"""Peak memory and wall time of the in-memory, streaming and Dask paths on a large generated CSV.

    nice -n 10 python experiments/streaming_memory.py                 # 10^7 rows x 10 columns (~2 min)
    python experiments/streaming_memory.py --rows 200000 --no-save     # a quick check

The table (Gaussian columns, 4 decimals) is written once under --folder (default /tmp, never
the repository) with pyarrow. Each path runs in its own child process, which fits a summary
release (``synthesize=False``: moments only, R = --n-basis, seeded noise) and reports its
wall time and peak resident set size (``VmHWM`` of /proc/self/status: unlike ``ru_maxrss`` it
is not inherited from the parent; it includes the ~0.2 GB of the imported libraries, given
separately as the baseline). Linux only. The paths:

* memory: ``fit(pd.read_csv(path))``, the in-memory engine (the CLI's path for CSV files up
  to 256 MB);
* stream: ``fit(path, chunk_rows=...)``, the numpy engine streaming pandas chunks of 2^22
  values (the CLI's path for larger CSV files, or with --chunk-rows);
* dask: ``fit(path, engine="dask")``, dask.dataframe partitions of 64 MB on local threads.

The noisy moments of the three must agree up to summation order (same seed); the script
checks it and writes experiments/results/streaming_memory.md.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results" / "streaming_memory.md"
MODES = ("memory", "stream", "dask")
GENERATE_ROWS = 1_000_000  # rows generated and written at a time


def table_path(folder: Path, rows: int, columns: int) -> Path:
    return folder / f"synthdp_stream_{rows}x{columns}.csv"


def generate(path: Path, rows: int, columns: int, seed: int = 0) -> None:
    """Write the table in blocks (bounded memory); columns c0..c{d-1} ~ N(j, 1 + j / d)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    rng = np.random.default_rng(seed)
    names = [f"c{j}" for j in range(columns)]
    temporary = path.with_suffix(".tmp")
    with pacsv.CSVWriter(temporary, pa.schema([(name, pa.float64()) for name in names])) as writer:
        for start in range(0, rows, GENERATE_ROWS):
            size = min(GENERATE_ROWS, rows - start)
            block = rng.normal(np.arange(columns), 1 + np.arange(columns) / columns, (size, columns)).round(4)
            writer.write_table(pa.table({name: block[:, j] for j, name in enumerate(names)}))
    temporary.rename(path)


def bounds(columns: int) -> dict:
    """Public bounds: 6 standard deviations either side of each column's generating mean."""
    return {f"c{j}": [j - 6 * (1 + j / columns), j + 6 * (1 + j / columns)] for j in range(columns)}


def peak_rss_mb() -> float:
    """The process's peak resident set size so far (Linux)."""
    status = Path("/proc/self/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:"))) / 1024


def child(mode: str, path: Path, columns: int, n_basis: int) -> None:
    """Run one path and print its measurements as JSON (in a fresh process, for a clean peak)."""
    import warnings

    import pandas as pd

    from synthdp import SmoothSynthesizer
    from synthdp.study import CHUNK_VALUES

    baseline_mb = peak_rss_mb()
    options = {"engine": "dask"} if mode == "dask" else {"chunk_rows": CHUNK_VALUES // columns} if mode == "stream" else {}
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the testing-seed warning
        synth = SmoothSynthesizer(seed=1, n_basis=n_basis, **options)
        synth.fit(pd.read_csv(path) if mode == "memory" else path, bounds=bounds(columns), synthesize=False)
    seconds = time.perf_counter() - start
    report = synth.privacy_report()
    print(json.dumps({
        "mode": mode, "seconds": seconds, "peak_mb": peak_rss_mb(),
        "baseline_mb": baseline_mb, "engine": report["engine"], "timings": synth.timings_,
        "moments": synth.release_.noisy_moments.tolist(),
    }))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--columns", type=int, default=10)
    parser.add_argument("--n-basis", type=int, default=20)
    parser.add_argument("--folder", type=Path, default=Path("/tmp"))
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument("--no-save", action="store_true", help="print the table only")
    parser.add_argument("--child", choices=MODES, help=argparse.SUPPRESS)
    args = parser.parse_args()
    path = table_path(args.folder, args.rows, args.columns)
    if args.child:
        child(args.child, path, args.columns, args.n_basis)
        return
    if not path.exists():
        start = time.perf_counter()
        args.folder.mkdir(parents=True, exist_ok=True)
        generate(path, args.rows, args.columns)
        print(f"wrote {path} in {time.perf_counter() - start:.0f} s", file=sys.stderr)
    size_mb = path.stat().st_size / 2**20
    results = []
    for mode in args.modes:
        command = [sys.executable, __file__, "--child", mode, "--rows", str(args.rows), "--columns",
                   str(args.columns), "--n-basis", str(args.n_basis), "--folder", str(args.folder)]
        output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
        results.append(json.loads(output.strip().splitlines()[-1]))
        print(f"{mode}: {results[-1]['seconds']:.1f} s, peak {results[-1]['peak_mb']:.0f} MB", file=sys.stderr)
    from common import generated_by  # in the parent only: a child's baseline memory is synthdp's own

    reference = np.array(results[0]["moments"])
    command = " ".join(["python", "experiments/streaming_memory.py", "--rows", str(args.rows), "--columns",
                        str(args.columns)]
                       + (["--n-basis", str(args.n_basis)] if args.n_basis != 20 else [])
                       + (["--modes", *args.modes] if args.modes != list(MODES) else []))
    lines = [
        f"# Peak memory and wall time: {args.rows:,} rows x {args.columns} columns ({size_mb:.0f} MB CSV)",
        "",
        f"{generated_by(command)} — summary release (R = {args.n_basis} moments, seeded), each path in a fresh process on a",
        "2-core machine shared with other jobs. Peak = `VmHWM` of the process (the baseline is the",
        "peak after importing synthdp and its libraries, before reading the table).",
        "",
        "| path | engine, input | wall time (s) | first pass (s) | moments pass (s) | peak RSS (MB) | baseline (MB) "
        f"| max abs moment difference vs {results[0]['mode']} |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for result in results:
        engine = ", ".join(f"{key} {value}" for key, value in result["engine"].items() if key != "scheduler")
        difference = np.abs(np.array(result["moments"]) - reference).max()
        lines.append(f"| {result['mode']} | {engine} | {result['seconds']:.1f} | {result['timings']['first pass']:.1f} "
                     f"| {result['timings']['moments']:.1f} | {result['peak_mb']:.0f} | {result['baseline_mb']:.0f} "
                     f"| {difference:.1e} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_save:
        RESULTS.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
