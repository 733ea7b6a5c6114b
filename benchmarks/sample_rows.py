"""``synthdp sample`` from a model file: time and peak memory against the rows drawn.

    python benchmarks/sample_rows.py [--rows 1000000 10000000 100000000] [--dir /tmp/synthdp_sample_rows]

Fits the bundled example (synthdp/datasets/clinic.csv, 600 rows, 5 columns) once with ``synthdp
fit`` at epsilon 1, then runs ``synthdp sample MODEL -n ROWS -o OUT.csv --seed 1 --quiet`` for each
ROWS under ``/usr/bin/time -v``: wall time, peak resident memory, the output's size, and rows per
second. The rows stream to the file chunk by chunk (synthdp.pipeline.model.CHUNK_VALUES values at a
time), so memory is set by a chunk, not by ROWS: the goal is under 1 GB at 10^8 rows. Writes
benchmarks/results/sample_rows.md. Not a unit test: timings belong in benchmarks.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "sample_rows.md"


def timed(command: list[str]) -> tuple[float, float]:
    """Wall seconds and peak resident memory (MB) of ``command`` (/usr/bin/time -v)."""
    result = subprocess.run(["/usr/bin/time", "-v", *command], capture_output=True, text=True, check=True)
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", result.stderr).group(1)
    parts = [float(part) for part in wall.split(":")]
    seconds = sum(part * 60**power for power, part in enumerate(reversed(parts)))
    peak = float(re.search(r"Maximum resident set size \(kbytes\): (\d+)", result.stderr).group(1)) / 1024
    return seconds, peak


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 10_000_000, 100_000_000])
    parser.add_argument("--dir", type=Path, default=Path("/tmp/synthdp_sample_rows"))
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    args.dir.mkdir(parents=True, exist_ok=True)
    model = args.dir / "clinic.synthdp"
    synthdp = [sys.executable, "-m", "synthdp.cli"]
    subprocess.run([*synthdp, "fit", str(ROOT / "synthdp" / "datasets" / "clinic.csv"), "-o", str(model),
                    "--bounds", str(ROOT / "synthdp" / "datasets" / "clinic_bounds.json"), "--epsilon", "1",
                    "--quiet"], check=True)
    lines = ["| rows | wall s | rows / s | peak MB | output MB |", "|---:|---:|---:|---:|---:|"]
    for rows in args.rows:
        output = args.dir / f"rows_{rows}.csv"
        seconds, peak = timed([*synthdp, "sample", str(model), "-n", str(rows), "-o", str(output), "--seed", "1",
                               "--quiet"])
        size = output.stat().st_size / 2**20
        output.unlink()
        lines.append(f"| {rows:,} | {seconds:.1f} | {rows / seconds:,.0f} | {peak:.0f} | {size:.0f} |")
        print(lines[-1], flush=True)
    command = " ".join(["python benchmarks/sample_rows.py", *(argv if argv is not None else sys.argv[1:])])
    args.out.write_text(
        "# synthdp sample: rows drawn from a model file, streamed to CSV\n\n"
        f"`{command}` on {time.strftime('%Y-%m-%d %H:%M')} (2 CPUs shared with other jobs); the model of the "
        "bundled example (600 × 5) fitted at ε = 1. Peak memory is the process's maximum resident set.\n\n"
        + "\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
