"""The selected pairs (few rows for the columns) against the release without them: product against before.

    python experiments/selected_pairs.py [--rounds 10] [--first-seed 7000] [--tables pima energy ...]
    python experiments/selected_pairs.py --forest --out experiments/results/selected_pairs_forest.md

Where no pair of a release of all of them would stand out of its noise, the noise is Gaussian and
the moments are not noise, the product chooses the pairs worth measuring with the exponential
mechanism and measures only those (:func:`synthdp.pipeline.plan.selected_pair_count`,
docs/decisions/selected-pairs.md); ``StudyOptions(select_pairs=False, blend_noisy_pairs=False)``
releases no pairs there (before). The rule depends only on n, d and the budget, and holds for a
band of epsilon on each table (below it the moments are noise, above it the pairs are read one
by one), so each table runs at an epsilon inside its band, with delta = 1e-10: the six small
tables of the development set (their numeric columns only: iris, glass and heart_cleveland drop
their categorical column, heart_cleveland its rows with a missing cell), WDBC, CRM, CTG and PKS.
Bounds are each column's min and max, taken as public (:data:`common.BOUNDS_NOTE`).

For every seed (the same for both variants: paired, reproducible, NOT private): the strong-pair
ratio, the pair trend (1 - mean |r_real - r_synthetic| / 2 over every pair), the invented pairs,
the shapes (mean 1 - KS) (:func:`quiet_clip.numeric_scores`), and the worst-case relative error
of 1 000 smooth queries at sigma = 2 ... 10 (the Tables 3-6 protocol's queries). Each cell gives
product, before, and the paired difference with its standard error.

``--integer``: each column whose values are all whole numbers typed integer in the bounds, as a user
who knows it declares (one histogram cell per value where it has few: heart_cleveland's codes, pima's
counts).

``--forest``: the same, the pairs chosen as a spanning forest grows
(``StudyOptions(forest_selection=True)``, each pick among the pairs that join two groups of columns
the earlier picks have not joined) against the product's choice among all the pairs left.

Writes experiments/results/selected_pairs.md (``--out``).
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from common import DATA_DIR, RESULTS_DIR, Dataset, command_line, generated_by, log, paired_row, query_set, true_answers
from quiet_clip import numeric_scores

from synthdp import SynthConfig
from synthdp.study import SIGMAS, StudyOptions, answer_queries, fit, sample, worst_case_errors

OUT = RESULTS_DIR / "selected_pairs.md"
LEVELS = {"pima": 1.0, "energy": 1.2, "yacht": 2.6, "glass": 4.0, "iris": 3.9, "heart_cleveland": 4.0,
          "wdbc": 4.0, "crm": 2.0, "ctg": 0.7, "pks": 0.28}
DELTA = 1e-10
N_QUERIES = 1000
QUERY_SEED = 20240601
VARIANTS = {"product": StudyOptions(), "before": StudyOptions(select_pairs=False, blend_noisy_pairs=False)}
# --forest: the pairs chosen as a spanning forest grows, against the product's choice
FOREST_VARIANTS = {"forest": StudyOptions(forest_selection=True), "product": StudyOptions()}
NAMES = ["strong-pair ratio", "pair trend", "invented pairs", "shapes", *[f"σ={s:g}" for s in SIGMAS]]


def numeric_table(name: str, data_dir: Path = DATA_DIR, integer: bool = False) -> Dataset:
    """A table's numeric columns (rows with a missing cell dropped) with min/max bounds; with ``integer``,
    each column whose values are all whole numbers typed integer in them, as a user who knows it declares
    (one histogram cell per value where it has few)."""
    frame = pd.read_csv(data_dir / f"{name}.csv").select_dtypes("number").dropna().reset_index(drop=True)
    whole = tuple(c for c in frame.columns if integer and bool(np.all(np.mod(frame[c].to_numpy(float), 1) == 0)))
    return Dataset(name, frame, frame.min().to_numpy(float), frame.max().to_numpy(float), whole)


def run_table(name: str, rounds: int, first_seed: int, variants: dict[str, StudyOptions] = VARIANTS,
              integer: bool = False) -> tuple[np.ndarray, int]:
    """Each seed's scores for both variants, shape (rounds, 2, scores), and the first variant's k."""
    dataset = numeric_table(name, integer=integer)
    queries = query_set(name, dataset.d, N_QUERIES, QUERY_SEED)
    true = true_answers(dataset, queries)
    found, k = [], 0
    for seed in range(first_seed, first_seed + rounds):
        row = []
        for study in variants.values():
            config = SynthConfig(epsilon=LEVELS[name], delta=DELTA, seed=seed)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the known-seed warning
                model = fit(config, dataset.frame, bounds=dataset.bounds, study=study)
                synthetic = sample(model)
            if not row:  # the first variant
                k = model.release.plan.selected_pairs
            answers = answer_queries(dataset.unit(synthetic), queries, SIGMAS)
            row.append([*numeric_scores(dataset.frame, synthetic),
                        *worst_case_errors(true, answers, queries.alpha).relative])
        found.append(row)
    log(f"{name}: done")
    return np.array(found, float), k


def section(name: str, scores: np.ndarray, k: int, n: int, d: int, labels: tuple[str, ...] = tuple(VARIANTS)) -> str:
    """One table's rows: each score, the two variants (product / before) and their paired difference +- its
    standard error."""
    lines = [f"### {name} ({n} × {d}) at ({LEVELS[name]:g}, {DELTA:g}): {k} of {d * (d - 1) // 2} pairs selected",
             "", f"| score | {labels[0]} | {labels[1]} | difference ± se |", "|---|---:|---:|---:|"]
    for j, label in enumerate(NAMES):
        lines.append(paired_row(label, scores[:, 0, j], scores[:, 1, j], 4 if label.startswith("σ") else 3))
    ratios = np.nanmean(scores[:, 0, 4:], axis=0) / np.nanmean(scores[:, 1, 4:], axis=0)
    lines.append(f"\nSmooth queries, {labels[0]} over {labels[1]}: {' '.join(f'{r:.2f}' for r in ratios)} (σ = 2 … 10).")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--first-seed", type=int, default=7000, help="first noise seed (numpy, NOT private)")
    parser.add_argument("--tables", nargs="+", default=list(LEVELS), choices=list(LEVELS))
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--forest", action="store_true",
                        help="compare the pairs chosen as a spanning forest grows with the product's choice")
    parser.add_argument("--integer", action="store_true",
                        help="type each column whose values are all whole numbers integer in the bounds")
    args = parser.parse_args(argv)
    variants = FOREST_VARIANTS if args.forest else VARIANTS
    start = time.perf_counter()
    sections = []
    for name in args.tables:
        scores, k = run_table(name, args.rounds, args.first_seed, variants, args.integer)
        dataset = numeric_table(name, integer=args.integer)
        sections.append(section(name, scores, k, dataset.n, dataset.d, tuple(variants)))
    title = ("The selected pairs chosen as a spanning forest grows, against the product's choice" if args.forest
             else "The selected pairs, against no pairs where no pair of all of them would stand out")
    args.out.write_text(
        f"# {title}\n\n"
        + generated_by(command_line("selected_pairs.py", argv))
        + f"; {(time.perf_counter() - start) / 60:.1f} min. {args.rounds} paired seeds from {args.first_seed} "
        "(numpy, NOT private). Numeric columns only, bounds each column's min and max, taken as public"
        + ("; each column of whole numbers typed integer in them (one cell per value where few)" if args.integer
           else "") + "; "
        f"{N_QUERIES} queries (seed {QUERY_SEED}), worst-case relative error. Strong-pair ratio: mean |r| "
        "synthetic over real of the pairs of real |r| > 0.5; pair trend: 1 − mean |r real − r synthetic| / 2; "
        "invented pairs: real |r| < 0.1 shown above 0.3; shapes: mean 1 − KS.\n\n" + "\n".join(sections),
        encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
