"""adult's 2-way TV by kind of pair against the peers, and an oracle of numeric-bin x level tables in the tilt.

    python experiments/adult_crosstabs.py [--seeds 3] [--bins 8] [--share 0.15]

A probe for issue 18's next step (docs/relationships-mixed.md#where-it-stops-on-mixed-tables), NOT a private release:

* **peers**: the 2-way TV by kind of pair (:func:`synthdp.evaluation.mixed.pair_scores`, numeric
  columns in 16 equal-width bins of the schema's bounds) of the cached peer runs of
  experiments/relationships.py (experiments/results/cache/relationships/adult; local, absent
  on a clean checkout: then the rows say so);
* **default**: synthdp's default at (1, 1e-10), seeds 0 .. SEEDS - 1 (seeded noise);
* **before**: the same seeds with a joined categorical column's levels ordered and correlated
  from the thresholded deviations (``StudyOptions(ordinal_levels="thresholded")``, the rule
  before docs/decisions/level-order.md);
* **oracle**: the same release and candidates, with the LP and its tilt also fitting every
  numeric column x categorical column table (the numeric column in ``--bins`` bins at the
  quantiles of its released histogram, public; the categorical column in its levels), whose
  targets are the REAL table's cell shares plus Gaussian noise of the sd such a release would
  have at ``--share`` of the budget (l2 sensitivity sqrt(2 P) for P tables, replace-one).
  No budget is taken from the other stages, so the oracle is optimistic: an upper bound on
  what the release would give.

Writes experiments/results/adult_crosstabs.md (``--out``).
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp
from adult_pairs import pair_tvs_by_kind
from common import DATA_DIR, RESULTS_DIR, command_line, generated_by, log

from synthdp import SynthConfig
from synthdp.study import (
    Budget,
    ChebyshevBasis,
    Schema,
    StudyOptions,
    clean_weights,
    composition,
    copula_marginals,
    fit,
    make_candidates,
    mixed_design,
    sample,
    solve_l1_fit,
    tilt_weights,
)

SCHEMA = DATA_DIR.parent / "configs" / "adult_schema.json"
PEER_CACHE = RESULTS_DIR / "cache" / "relationships" / "adult"
OUT = RESULTS_DIR / "adult_crosstabs.md"
KINDS = ("all", "cat x num", "cat x cat", "num x num", "education x education-num")


def by_kind(real: pd.DataFrame, table: pd.DataFrame, schema: Schema) -> dict[str, float]:
    """The mean 2-way TV of each kind of pair (:func:`adult_pairs.pair_tvs_by_kind`)."""
    return {kind: float(np.mean(values)) for kind, values in pair_tvs_by_kind(real, table, schema).items()}


def oracle_table(real: pd.DataFrame, model, bins: int, share: float, seed: int) -> tuple[pd.DataFrame, str]:
    """The default's release and candidates, with noisy real numeric-bin x level tables in the LP (NOT private)."""
    release, config = model.release, model.config
    schema, d, n = release.schema, release.schema.d_numeric, len(real)
    candidates = make_candidates("mixed", release, np.random.default_rng(1000 + seed), config, None)
    design, target, _, row_sd = mixed_design(release, ChebyshevBasis(release.basis_indices), candidates)
    probabilities = np.repeat((np.arange(1, bins) / bins)[:, None], d, axis=1)
    edges_unit = copula_marginals(release).quantiles(probabilities)  # public: the released histograms' quantiles
    columns = [column for column in schema.categorical if not column.internal]
    tables = [(j, column) for j in range(d) for column in columns]
    budget = Budget(0.0, 0.0, config.epsilon, config.delta, composition(config), (("tables", share),))
    sd = budget.stage("tables").noise_sd(2.0 * len(tables), float(np.sqrt(2.0 * len(tables))))
    noise = np.random.default_rng([seed, 7])
    rows, targets = [], []
    for j, column in tables:
        numeric = schema.numeric.columns[j]
        edges = np.unique(edges_unit[:, j])
        real_bins = np.searchsorted(numeric.lower + (edges + 1) / 2 * (numeric.upper - numeric.lower),
                                    real[numeric.name].to_numpy(float), side="right")
        candidate_bins = np.searchsorted(edges, candidates[:, j], side="right")
        block = schema.block_slice(column.name)
        levels = block.stop - block.start + int(column.binary)
        candidate_levels = ((candidates[:, block.start] > 0.5).astype(int) if column.binary
                            else np.argmax(candidates[:, block], axis=1))
        cells = (len(edges) + 1) * levels
        shares = np.bincount(real_bins * levels + column.level_codes(real[column.name]), minlength=cells) / n
        targets.append(shares + noise.normal(0.0, sd / n, cells))
        rows.append(sp.csr_matrix((np.ones(len(candidates)), (candidate_bins * levels + candidate_levels,
                                                              np.arange(len(candidates)))), shape=(cells, len(candidates))))
    weight = row_sd / (sd / n)  # each cell in units of the moments' noise, as mixed_design weighs its rows
    stacked = sp.vstack([design, sp.vstack(rows) * weight], format="csr")
    goal = np.concatenate([target, np.concatenate(targets) * weight])
    solution = solve_l1_fit(stacked, goal, method="ipm")
    solution = tilt_weights(lambda a, b: stacked[:, a:b], len(candidates), goal, solution, np.full(len(goal), row_sd))
    weights = clean_weights(solution.weights)
    keep = weights > 0
    oracle = replace(model, support_points=candidates[keep], support_weights=weights[keep])
    return sample(oracle), f"{len(tables)} tables, {stacked.shape[0] - len(target)} cells, count noise sd {sd:.0f}, tilt {solution.status}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--bins", type=int, default=8)
    parser.add_argument("--share", type=float, default=0.15)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    real = pd.read_csv(DATA_DIR / "adult.csv")
    spec = json.loads(SCHEMA.read_text())
    schema = Schema.from_dict(spec, list(real.columns))
    rows = []
    for path in sorted(PEER_CACHE.glob("*.csv.gz")) if PEER_CACHE.exists() else []:
        scores = by_kind(real, pd.read_csv(path), schema)
        rows.append(f"| peer: {path.name.split('_')[0]} (cached {path.name.split('_')[-1][:2]}) | "
                    + " | ".join(f"{scores[kind]:.4f}" for kind in KINDS) + " | |")
    if not rows:
        rows.append("| peers | no cached peer run (run experiments/relationships.py) | | | | | |")
    found: dict[str, list[dict]] = {"default": [], "before": [], "oracle": []}
    notes = []
    for seed in range(args.seeds):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = fit(SynthConfig(epsilon=1.0, delta=1e-10, seed=seed), real, schema=spec)
            found["default"].append(by_kind(real, sample(model), schema))
            before = fit(SynthConfig(epsilon=1.0, delta=1e-10, seed=seed), real, schema=spec,
                         study=StudyOptions(ordinal_levels="thresholded"))
            found["before"].append(by_kind(real, sample(before), schema))
            table, note = oracle_table(real, model, args.bins, args.share, seed)
            found["oracle"].append(by_kind(real, table, schema))
        notes.append(note)
        log(f"seed {seed}: {note}")
    for name, label in (("default", "synthdp default"),
                        ("before", "synthdp, levels from the thresholded deviations (before)"),
                        ("oracle", f"oracle: + {args.bins}-bin x level tables at share {args.share:g} (NOT private)")):
        rows.append(f"| {label} | " + " | ".join(f"{np.mean([s[kind] for s in found[name]]):.4f}" for kind in KINDS)
                    + f" | {args.seeds} seeds |")
    text = (f"# adult at (1, 1e-10): 2-way TV by kind of pair, the peers, and an oracle of numeric x categorical tables\n\n"
            f"{generated_by(command_line('adult_crosstabs.py', argv))}; {(time.perf_counter() - start) / 60:.1f} min. "
            "Mean 2-way TV (synthdp.evaluation.mixed.pair_scores, numeric columns in 16 equal-width bins of the schema's "
            "bounds) over all pairs and by kind; lower is better. The oracle is NOT private and optimistic "
            "(experiments/adult_crosstabs.py's docstring); "
            f"its fits: {notes[0] if notes else ''}.\n\n"
            "| table | " + " | ".join(KINDS) + " | runs |\n|---|" + "---:|" * len(KINDS) + "---|\n" + "\n".join(rows) + "\n")
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
