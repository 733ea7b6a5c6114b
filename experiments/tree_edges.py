"""Tree edges only where a table's dependence stands out of its noise: the rule against every table, on three mixed tables.

    python experiments/tree_edges.py [--seeds 3] [--adult-seeds 6]

The categorical candidates of a mixed table grow along a Chow-Liu tree of the released 2-way
tables; an edge needs its table's dependence to stand EDGE_Z (3) standard deviations above
that of noise alone (:func:`synthdp.postprocess.candidates.table_dependence`; docs/decisions/tree-edges.md).
Before, every table could be an edge (``StudyOptions(tree_edges=False)``). For each table, at
(1, 1e-10) and epsilon = 1, seeded fits (seeds 0 .. SEEDS - 1: reproducible, NOT private) of
both variants, scored by the mean 2-way total-variation distance over all pairs of columns
(:func:`synthdp.evaluation.mixed.pair_scores`, numeric columns in 16 equal-width bins):

* adult (configs/adult_schema.json; ``--adult-seeds``);
* classes: 40 000 rows, 8 categorical columns of 8-15 levels and 3 numeric ones, all from 5
  latent classes (every pair dependent);
* sparse: 8 000 rows, 6 categorical columns of 15-25 levels, two of them tied pairs (80 % and
  70 % of the rows), the others independent, and one numeric column that follows the first.

Writes experiments/results/tree_edges.md (``--out``).
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from common import DATA_DIR, RESULTS_DIR, command_line, generated_by, log

from synthdp import SynthConfig
from synthdp.study import StudyOptions, fit, pair_scores, sample

OUT = RESULTS_DIR / "tree_edges.md"
SCHEMA = DATA_DIR.parent / "configs" / "adult_schema.json"
SETTINGS = ((1.0, 1e-10), (1.0, 0.0))


def classes_table(seed: int = 7) -> tuple[pd.DataFrame, dict]:
    """40 000 rows from 5 latent classes: 8 categorical columns (Dirichlet level frequencies per
    class) and 3 normal columns (a mean per class), with public levels and bounds."""
    rng = np.random.default_rng(seed)
    n = 40_000
    z = rng.choice(5, n, p=[0.3, 0.25, 0.2, 0.15, 0.1])
    columns, spec = {}, {"columns": {}}
    for j, levels in enumerate([8, 10, 12, 9, 15, 11, 8, 14]):
        probabilities = rng.dirichlet(np.full(levels, 0.5), size=5)
        codes = np.array([rng.choice(levels, p=probabilities[k]) for k in z])
        columns[f"c{j}"] = np.array([f"l{c}" for c in codes])
        spec["columns"][f"c{j}"] = {"type": "categorical", "levels": [f"l{c}" for c in range(levels)]}
    for j in range(3):
        means = rng.normal(0, 1.5, 5)
        columns[f"x{j}"] = np.clip(rng.normal(means[z], 1.0), -6, 6).round(3)
        spec["columns"][f"x{j}"] = {"type": "continuous", "bounds": [-6, 6]}
    return pd.DataFrame(columns), spec


def sparse_table(seed: int = 7) -> tuple[pd.DataFrame, dict]:
    """8 000 rows: categorical a (20 levels) and b (15; a mod 15 in 80 % of the rows), c (25) and
    d (18; c mod 18 in 70 %), independent e (22) and f (16), and x = N(0, 1) + (a mod 3)."""
    rng = np.random.default_rng(seed)
    n = 8_000
    a = rng.integers(0, 20, n)
    b = np.where(rng.random(n) < 0.8, a % 15, rng.integers(0, 15, n))
    c = rng.integers(0, 25, n)
    d = np.where(rng.random(n) < 0.7, c % 18, rng.integers(0, 18, n))
    columns, spec = {}, {"columns": {}}
    for name, values, levels in (("a", a, 20), ("b", b, 15), ("c", c, 25), ("d", d, 18),
                                 ("e", rng.integers(0, 22, n), 22), ("f", rng.integers(0, 16, n), 16)):
        columns[name] = np.array([f"l{v}" for v in values])
        spec["columns"][name] = {"type": "categorical", "levels": [f"l{v}" for v in range(levels)]}
    columns["x"] = np.clip(rng.normal(0, 1, n) + (a % 3), -4, 6).round(3)
    spec["columns"]["x"] = {"type": "continuous", "bounds": [-4, 6]}
    return pd.DataFrame(columns), spec


def mean_tv(frame: pd.DataFrame, spec: dict, epsilon: float, delta: float, seeds: int, study: StudyOptions) -> list[float]:
    """The mean 2-way TV over all pairs of each seeded fit."""
    values = []
    for seed in range(seeds):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the known-seed warning
            model = fit(SynthConfig(epsilon=epsilon, delta=delta, seed=seed), frame, schema=spec, study=study)
            table = sample(model)
        values.append(float(np.mean([entry["tv"] for entry in pair_scores(frame, table, model.release.schema)["per_pair"]])))
    return values


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--adult-seeds", type=int, default=6)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    tables = {"adult": (pd.read_csv(DATA_DIR / "adult.csv"), json.loads(SCHEMA.read_text()), args.adult_seeds),
              "classes": (*classes_table(), args.seeds), "sparse": (*sparse_table(), args.seeds)}
    lines = []
    for name, (frame, spec, seeds) in tables.items():
        for epsilon, delta in SETTINGS:
            scores = {label: mean_tv(frame, spec, epsilon, delta, seeds, StudyOptions(tree_edges=edges))
                      for label, edges in (("default", True), ("every table (before)", False))}
            for label, values in scores.items():
                lines.append(f"| {name} | ({epsilon:g}, {delta:g}) | {label} | {np.mean(values):.4f} | "
                             + " / ".join(f"{value:.4f}" for value in values) + " |")
                log(lines[-1])
    text = ("# Tree edges only where a table's dependence stands out of its noise\n\n"
            f"{generated_by(command_line('tree_edges.py', argv))}; {(time.perf_counter() - start) / 60:.1f} min. "
            "The tables and the protocol: experiments/tree_edges.py's docstring. Mean 2-way TV over all pairs "
            "of columns (numeric columns in 16 equal-width bins of their bounds), mean over the seeds and each "
            "seed; 0 the best. docs/decisions/tree-edges.md.\n\n"
            "| table | setting | tree edges | mean 2-way TV | per seed |\n|---|---|---|---:|---|\n"
            + "\n".join(lines) + "\n")
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
