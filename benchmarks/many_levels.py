"""Memory and time of a mixed table with one categorical column of many levels: generate, and fit
to a model file and sample from it.

    python benchmarks/many_levels.py [--cases 3000:2000 5000:5000:40000] [--out benchmarks/results/many_levels.md]

Each case ``ROWS:LEVELS[:CANDIDATES]`` makes a table of two numeric columns (a normal and a
uniform one, clipped to their bounds) and one categorical column of LEVELS declared levels
(drawn with Zipf-like frequencies, so some are rare and some absent), with its schema, and runs
``python -m synthdp generate`` on it at (1, 1e-10), seeded, as a process of its own under
``/usr/bin/time``: its wall time and peak resident memory. A column of thousands of levels (a
postcode) once took memory growing with the square of its levels (docs/mixed-tables.md).
Not a unit test: timings and memory belong in benchmarks.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "many_levels.md"
sys.path.insert(0, str(ROOT / "experiments"))
from common import generated_by  # noqa: E402


def make_table(rows: int, levels: int, folder: Path) -> tuple[Path, Path]:
    """The table and its schema, seeded by their sizes."""
    rng = np.random.default_rng([rows, levels])
    names = [f"L{k:05d}" for k in range(levels)]
    weights = 1.0 / np.arange(1, levels + 1)
    frame = pd.DataFrame({"x": np.clip(rng.normal(0, 1, rows), -4, 4), "y": rng.uniform(0, 10, rows),
                          "code": rng.choice(names, size=rows, p=weights / weights.sum())})
    table, schema = folder / f"t{rows}_{levels}.csv", folder / f"s{rows}_{levels}.json"
    frame.to_csv(table, index=False)
    schema.write_text(json.dumps({"columns": {"x": {"type": "continuous", "bounds": [-4, 4]},
                                              "y": {"type": "continuous", "bounds": [0, 10]},
                                              "code": {"type": "categorical", "levels": names}}}))
    return table, schema


def timed(arguments: list[str], case: str) -> tuple[float, float]:
    """Wall seconds and peak resident GB of ``python -m synthdp ARGUMENTS`` as a process of its own."""
    command = ["/usr/bin/time", "-f", "TIME %e %M", sys.executable, "-m", "synthdp", *arguments]
    result = subprocess.run(command, capture_output=True, text=True)
    found = re.search(r"TIME ([0-9.]+) ([0-9]+)", result.stderr)
    if result.returncode != 0 or found is None:
        raise SystemExit(f"case {case} failed: {result.stderr.strip().splitlines()[-1]}")
    return float(found.group(1)), int(found.group(2)) / 2**20


def run_case(rows: int, levels: int, candidates: int | None, folder: Path) -> dict:
    """generate; fit to a model file; sample as many rows as the table's from that file."""
    table, schema = make_table(rows, levels, folder)
    options = ["--schema", str(schema), "--epsilon", "1", "--delta", "1e-10", "--seed", "1", "--quiet", "--overwrite",
               *(["--n-candidates", str(candidates)] if candidates else [])]
    case, model = f"{rows}:{levels}", folder / "model.synthdp"
    seconds, peak = timed(["generate", str(table), "-o", str(folder / "out.csv"), *options], case)
    fit_seconds, fit_peak = timed(["fit", str(table), "-o", str(model), *options], case)
    sample_seconds, sample_peak = timed(["sample", str(model), "-o", str(folder / "sampled.csv"), "--rows", str(rows),
                                         "--seed", "2", "--quiet", "--overwrite"], case)
    return {"rows": rows, "levels": levels, "candidates": candidates or 10_000, "seconds": seconds, "peak_gb": peak,
            "fit_seconds": fit_seconds, "fit_peak_gb": fit_peak, "model_mb": model.stat().st_size / 2**20,
            "sample_seconds": sample_seconds, "sample_peak_gb": sample_peak}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", nargs="+", default=["3000:2000", "5000:5000:40000"],
                        help="ROWS:LEVELS[:CANDIDATES] (the default 10 000 candidates refuse more moments than that)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for case in args.cases:
            parts = [int(part) for part in case.split(":")]
            rows.append(run_case(parts[0], parts[1], parts[2] if len(parts) > 2 else None, Path(folder)))
    lines = ["# A categorical column of many levels: time and peak memory of generate", "",
             generated_by(" ".join(["python benchmarks/many_levels.py", *(sys.argv[1:] if argv is None else argv)]))
             + ".", "",
             "Two numeric columns and one categorical column of L declared levels, (1, 1e-10), seeded; "
             "one process per command under /usr/bin/time (wall time, peak resident memory): `generate`; "
             "`fit -o model.synthdp` (the model file's size); `sample` of as many rows as the table's from it.", "",
             "| rows | levels L | candidates | generate s | peak GB | fit s | peak GB | model file MB | sample s "
             "| peak GB |", "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    lines += [f"| {r['rows']} | {r['levels']} | {r['candidates']} | {r['seconds']:.1f} | {r['peak_gb']:.2f} "
              f"| {r['fit_seconds']:.1f} | {r['fit_peak_gb']:.2f} | {r['model_mb']:.1f} | {r['sample_seconds']:.1f} "
              f"| {r['sample_peak_gb']:.2f} |" for r in rows]
    text = "\n".join(lines) + "\n"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
