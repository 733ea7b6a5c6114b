"""Pure epsilon on mixed tables: the moments hold the cells, the histograms and pairs the numeric columns.

    python experiments/laplace_cells.py [--seeds 4] [--first-seed 100] [--epsilons 0.5 1 4]

Under Laplace noise a mixed table's moments leave out its numeric columns' means per level, and
their own moments of degree <= 2 where the histograms and the pairs release hold them
(:func:`synthdp.pipeline.plan.mixed_numeric_moments`; docs/decisions/laplace-cells.md): each of the
G sensitivity groups adds its whole share to every moment's Laplace noise. For each table and
pure epsilon, seeded fits (seeds FIRST_SEED .. FIRST_SEED + SEEDS - 1, the same for every variant:
reproducible, NOT private) of

* **product**: the default;
* **before**: ``StudyOptions(laplace_cells=False)``, the numeric moments and means per level held
  as under Gaussian noise (the previous product);
* **independent**: issue 18's pure-epsilon baseline, every column drawn from its own noisy one-way
  histogram over the scorer's cells, epsilon split evenly over the columns
  (``adult_pairs.independent_table``),

scored by the mean 2-way total-variation distance (:func:`synthdp.evaluation.mixed.pair_scores`,
numeric columns in 16 equal-width bins of their bounds) over all pairs and by kind of pair, each
release's worst one-way TV, and, where the table has numeric pairs of real |r| > 0.5, the strong-pair
ratio (:func:`synthdp.evaluation.metrics.strong_pairs`). "se" is the standard error of the paired
per-seed difference product - before of the all-pairs TV. Tables: adult (configs/adult_schema.json),
pks_sex (PKS with its binary sex column, 22 numeric columns: no pairs release at epsilon <= 1, so the
own moments stay), and the generated life, independent and counts tables of
experiments/binned_blocks.py (other shapes: few columns, 10 000-30 000 rows, a spike, nothing to find).

Writes experiments/results/laplace_cells.md (``--out``).
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from adult_pairs import independent_table, pair_tvs_by_kind
from binned_blocks import counts_table, life_table
from binned_blocks import independent_table as nothing_table
from common import DATA_DIR, RESULTS_DIR, command_line, generated_by, log
from relationships import load_table

from synthdp import SynthConfig
from synthdp.study import Schema, StudyOptions, fit, groups_count, sample, strong_pairs

OUT = RESULTS_DIR / "laplace_cells.md"
SCHEMA = DATA_DIR.parent / "configs" / "adult_schema.json"
VARIANTS = ("product", "before", "independent")
COLUMNS = ("all", "cat x num", "cat x cat", "num x num", "worst one-way", "strong pairs", "G")


def tables(names: list[str]) -> dict[str, tuple[pd.DataFrame, dict]]:
    """Each table named and its schema mapping."""
    makers = {"life": life_table, "independent": nothing_table, "counts": counts_table}
    found = {}
    for name in names:
        if name == "adult":
            found[name] = pd.read_csv(DATA_DIR / "adult.csv"), json.loads(SCHEMA.read_text())
        elif name == "pks_sex":
            frame, _, content = load_table(name, DATA_DIR)
            found[name] = frame, content
        else:
            found[name] = makers[name]()
    return found


def release_table(frame: pd.DataFrame, spec: dict, epsilon: float, seed: int, variant: str):
    """One seeded release's schema, synthetic table and number of sensitivity groups (None for the baseline)."""
    if variant == "independent":
        schema = Schema.from_dict(spec, list(frame.columns))
        return schema, independent_table(frame, schema, epsilon, np.random.default_rng(seed)), None
    study = StudyOptions(laplace_cells=variant == "product")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the known-seed warning
        model = fit(SynthConfig(epsilon=epsilon, seed=seed), frame, schema=spec, study=study)
        table = sample(model)
    release = model.release
    return release.schema, table, groups_count(release.schema, release.basis_indices)


def scores(frame: pd.DataFrame, spec: dict, epsilon: float, seeds: range, variant: str) -> tuple[dict, list[float]]:
    """Mean scores over the seeds, and each seed's all-pairs TV."""
    found: dict[str, list[float]] = {}
    per_seed = []
    for seed in seeds:
        schema, table, groups = release_table(frame, spec, epsilon, seed, variant)
        tvs = pair_tvs_by_kind(frame, table, schema)
        for kind in COLUMNS[:5]:
            found.setdefault(kind, []).extend(tvs.get(kind, []))
        per_seed.append(float(np.mean(tvs["all"])))
        numeric = list(schema.numeric.names)
        ratio = strong_pairs(frame[numeric], table[numeric])["ratio"] if len(numeric) > 1 else None
        if ratio is not None:
            found.setdefault("strong pairs", []).append(ratio)
        if groups is not None:
            found.setdefault("G", []).append(groups)
    return {kind: float(np.mean(values)) for kind, values in found.items() if values}, per_seed


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--first-seed", type=int, default=100)
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.5, 1.0, 4.0])
    parser.add_argument("--tables", nargs="+", default=["adult", "pks_sex", "life", "independent", "counts"])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    rows = []
    for name, (frame, spec) in tables(args.tables).items():
        for epsilon in args.epsilons:
            results, per_seed = {}, {}
            for variant in VARIANTS:
                results[variant], per_seed[variant] = scores(frame, spec, epsilon, seeds, variant)
                log(f"{name} epsilon={epsilon:g} {variant}: {results[variant]}")
            difference = np.subtract(per_seed["product"], per_seed["before"])
            se = float(difference.std(ddof=1) / np.sqrt(len(difference))) if len(difference) > 1 else float("nan")
            for variant in VARIANTS:
                values = results[variant]
                cells = [("n/a" if kind not in values else f"{values[kind]:.0f}" if kind == "G" else f"{values[kind]:.4f}")
                         for kind in COLUMNS]
                note = f"{difference.mean():+.4f} ± {se:.4f}" if variant == "product" else ""
                rows.append(f"| {name} | {epsilon:g} | {variant} | " + " | ".join(cells) + f" | {note} |")
    text = (f"# Pure epsilon on mixed tables: cells in the moments, numeric columns in the histograms and pairs\n\n"
            f"{generated_by(command_line('laplace_cells.py', argv))}; {(time.perf_counter() - started) / 60:.1f} min. "
            f"Mean over seeds {seeds.start}-{seeds.stop - 1} (seeded noise: reproducible, not private) of the mean "
            "2-way TV by kind of pair (numeric columns in 16 equal-width bins of the schema's bounds; 0 the best), "
            "each release's worst one-way TV, the strong-pair ratio (numeric pairs of real |r| > 0.5; synthetic "
            "over real mean |r|) and G, the moments' sensitivity groups. product - before: the paired difference "
            "of the all-pairs TV, ± its standard error over the seeds.\n\n"
            "| table | epsilon | variant | " + " | ".join(COLUMNS) + " | product - before |\n|---|---:|---|"
            + "---:|" * (len(COLUMNS) + 1) + "\n" + "\n".join(rows) + "\n")
    args.out.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
