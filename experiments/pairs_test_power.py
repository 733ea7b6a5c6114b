"""How often the pairs test would release the pairs, on generated tables of other shapes (issue 18).

    python experiments/pairs_test_power.py [--seeds 5] [--levels 1,1e-10 4,1e-10] [--shapes 300x10 ...] [--out FILE]

Where the pairs' noise on a correlation at a share of 0.3 is above the pair-by-pair limit (few rows
for many columns, delta > 0), the default releases none. The pairs test (a design study's
alternative, ``StudyOptions(pairs_test=True)``) spends 0.05 of the budget on a private test and
releases the pairs, denoised as a matrix, only where a block of related columns stands out of
their noise (:func:`synthdp.pipeline.plan.pairs_test_planned`). Its line is derived, not fitted
(the strongest block's direction recovered with at least half its weight); this script measures
what it does on tables the benchmark does not have: generated Gaussian-copula tables of several
sizes (n x d, all with the test planned at (1, 1e-10)), with

* **independent** columns (the test should not release: a release is the budget lost),
* **one block** of d/2 columns on one factor (loading .9, |r| about .81) beside d/2 independent ones,
* **two blocks** of d/4 columns each (loading .7, |r| about .49), the rest independent,
* **weak block**: d/2 columns on one factor with loading .5 (|r| about .25: no strong pair),

some columns log-normal (skewed) and the rest normal, bounds each column's min and max. For
each: in how many seeded releases the test released the pairs (seeds 0 .. SEEDS - 1;
reproducible, NOT private), the mean released statistic and histograms' offset in units of the
pairs' noise edge (the line is sqrt(2) for the difference), the strong-pair ratio (mean |r| of
the pairs with real |r| > 0.5, synthetic over real) and the largest synthetic |r| over the pairs
whose real |r| is below 0.1 (a correlation the data do not have), with the test and without it
(the product). Writes experiments/results/pairs_test_power.md.
"""

from __future__ import annotations

import argparse
import math
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
from common import RESULTS_DIR, command_line, generated_by, log

from synthdp import SynthConfig
from synthdp.study import StudyOptions, fit, sample, strong_pairs

SHAPES = ((300, 10), (569, 30), (1000, 50), (2000, 100), (2500, 30), (4000, 60))
STRUCTURES = ("independent", "one block", "two blocks", "weak block")


def generated_table(n: int, d: int, structure: str, seed: int) -> pd.DataFrame:
    """A Gaussian-copula table of ``structure``; every third column log-normal."""
    rng = np.random.default_rng(seed)
    loadings = np.zeros((d, 2))
    if structure == "one block":
        loadings[: d // 2, 0] = 0.9
    elif structure == "two blocks":
        loadings[: d // 4, 0] = 0.7
        loadings[d // 4 : 2 * (d // 4), 1] = 0.7
    elif structure == "weak block":
        loadings[: d // 2, 0] = 0.5
    latent = rng.normal(size=(n, 2)) @ loadings.T + rng.normal(size=(n, d)) * np.sqrt(1 - (loadings**2).sum(axis=1))
    values = np.where(np.arange(d) % 3 == 2, np.exp(latent), latent)
    return pd.DataFrame(values, columns=[f"c{j}" for j in range(d)])


def spurious(real: pd.DataFrame, synthetic: pd.DataFrame) -> float:
    """The largest synthetic |Pearson r| over the pairs whose real |r| is below 0.1."""
    upper = np.triu_indices(real.shape[1], 1)
    real_r, synthetic_r = real.corr().to_numpy()[upper], synthetic.corr().to_numpy()[upper]
    free = np.abs(real_r) < 0.1
    return float(np.abs(synthetic_r[free]).max()) if free.any() else float("nan")


def run(n: int, d: int, structure: str, epsilon: float, delta: float, seeds: int) -> str:
    found, statistics, offsets, ratios, before, false_r, false_before = 0, [], [], [], [], [], []
    for seed in range(seeds):
        frame = generated_table(n, d, structure, seed)
        bounds = {name: [float(frame[name].min()), float(frame[name].max())] for name in frame}
        config = SynthConfig(epsilon=epsilon, delta=delta, seed=seed + 1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = fit(config, frame, bounds=bounds, study=StudyOptions(pairs_test=True))
            test = model.release.pairs_test
            if test is None:
                return f"| {n} × {d} | {structure} | not planned | | | | | | |"
            found += test.found
            statistics.append(test.statistic)
            offsets.append(test.offset)
            synthetic = sample(model)
            ratios.append(strong_pairs(frame, synthetic)["ratio"])
            false_r.append(spurious(frame, synthetic))
            product = sample(fit(config, frame, bounds=bounds))
            before.append(strong_pairs(frame, product)["ratio"])
            false_before.append(spurious(frame, product))
    kept = "n/a" if None in ratios else f"{np.mean(ratios):.3f}"
    kept_before = "n/a" if None in before else f"{np.mean(before):.3f}"
    line = (f"| {n} × {d} | {structure} | {found} of {seeds} | {np.mean(statistics):.2f} | {np.mean(offsets):.2f} "
            f"| {kept} | {kept_before} | {np.mean(false_r):.2f} | {np.mean(false_before):.2f} |")
    log(line)
    return line


def generated_tables_parser(description: str, seeds: int, levels: list[str], shapes: tuple[tuple[int, int], ...],
                            out: Path) -> argparse.ArgumentParser:
    """The options of a script over the generated tables: seeds, privacy levels, sizes, output file."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=seeds)
    parser.add_argument("--levels", nargs="+", default=levels, help="privacy levels as EPSILON,DELTA")
    parser.add_argument("--shapes", nargs="+", default=[f"{n}x{d}" for n, d in shapes], help="table sizes as NxD")
    parser.add_argument("--out", type=Path, default=out)
    return parser


def sweep(args: argparse.Namespace, run_one: Callable[..., str], header: str) -> list[str]:
    """One section per privacy level of ``args``: ``header`` and a row ``run_one(n, d, structure,
    epsilon, delta, seeds)`` per size and structure."""
    sections = []
    for level in args.levels:
        epsilon, delta = (float(value) for value in level.split(","))
        shapes = [tuple(int(size) for size in shape.split("x")) for shape in args.shapes]
        rows = [run_one(n, d, structure, epsilon, delta, args.seeds) for n, d in shapes for structure in STRUCTURES]
        sections.append(f"## (ε, δ) = ({epsilon:g}, {delta:g})\n\n" + header + "\n".join(rows) + "\n")
    return sections


def main(argv: list[str] | None = None) -> None:
    parser = generated_tables_parser(__doc__, 5, ["1,1e-10", "4,1e-10"], SHAPES, RESULTS_DIR / "pairs_test_power.md")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    sections = sweep(args, run, "| n × d | structure | pairs released | statistic | histograms' offset | strong-pair ratio "
                     "| without the test (product) | largest \\|r\\| where real \\|r\\| < .1 | the same, product |\n"
                     "|---|---|---:|---:|---:|---:|---:|---:|---:|\n")
    args.out.write_text(
        "# The pairs test on generated tables\n\n"
        + generated_by(command_line("pairs_test_power.py", argv))
        + f"; {(time.perf_counter() - start) / 60:.1f} min. The statistic and the histograms' offset are in units "
        "of the pairs' noise edge (sd sqrt(d)); the pairs are released where their difference reaches "
        f"{math.sqrt(2):.3g}. Strong-pair ratio: mean |r| of the pairs with real |r| > 0.5, synthetic over real "
        "(n/a: no such pair). Every third column log-normal, bounds the data's min and max (taken as public).\n\n"
        + "\n".join(sections), encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
