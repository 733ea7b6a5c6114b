"""adult's 2-way total-variation distance by kind of pair (issue 18): which pairs the mixed pipeline keeps.

    python experiments/adult_pairs.py [--seeds 12] [--first-seed 100] [--variants default no-value-blocks join-ratio=0 independent]

For each setting ((1, 1e-10) and epsilon = 1) and each variant — the default; ``no-value-blocks``,
the schema without value blocks (``StudyOptions(value_blocks=False)``: no 2-way tables of
education-num's values, education tied to it by a latent order, the default before value blocks); ``join-ratio=R``, another join ratio of
:func:`synthdp.postprocess.candidates.ordinal_latent` (``StudyOptions(join_ratio=R)``; 0 joins
every categorical column whose means per level stand out of the noise); ``independent``, at epsilon = 1 only,
the baseline issue 18 sets for pure epsilon: every column drawn independently from its own noisy one-way
histogram (:func:`independent_table`) — seeded releases of adult with
configs/adult_schema.json (seed s = FIRST_SEED .. FIRST_SEED + SEEDS - 1: reproducible, NOT private), each scored by
:func:`synthdp.evaluation.mixed.pair_scores` (numeric columns in 16 equal-width bins of the
schema's bounds): the mean 2-way TV over all pairs, over categorical x numeric, categorical and
numeric pairs, the TV of education x education-num (a function of each other), and the worst
one-way TV over the columns (:func:`synthdp.evaluation.mixed.column_tv`, the same cells). The numbers
before ``ordinal_latent`` come from running this script at commit 98c6acc (no JOIN_RATIO: pass
``--join-ratios none --out experiments/results/adult_pairs_before.md``, the option of that version). Writes
experiments/results/adult_pairs.md (``--out``).

Seeds: the default seeds start at 100. adult's design choices made before 2026-11-28 (commit d9c977f) were measured on seeds 0-5,
which turned out favourable to the default (mean 2-way TV .0529 there against .0552 at seeds 100-111
and .0574 at 6-11; unseeded releases .0562): a variant chosen because it won on seeds 0-5 carries
their luck. ``--first-seed 0 --seeds 6`` gives those seeds back; new choices should be confirmed on
seeds they were not chosen on (docs/decisions/held-out-seeds.md).
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
from synthdp.study import BINS, JOIN_RATIO, Schema, StudyOptions, column_tv, distribution, fit, pair_scores, sample

SCHEMA = DATA_DIR.parent / "configs" / "adult_schema.json"
OUT = RESULTS_DIR / "adult_pairs.md"
KINDS = ("all", "cat x num", "cat x cat", "num x num")
COLUMNS = (*KINDS, "education x education-num", "worst one-way")


def pair_tvs_by_kind(real: pd.DataFrame, table: pd.DataFrame, schema) -> dict[str, list[float]]:
    """The 2-way TV of every pair of columns (:func:`synthdp.evaluation.mixed.pair_scores`), grouped by
    kind of pair ("cat x num", "cat x cat", "num x num"), under "all", and under
    "education x education-num" for that pair."""
    numeric = set(schema.numeric.names)
    found: dict[str, list[float]] = {}
    for entry in pair_scores(real, table, schema)["per_pair"]:
        kinds = sorted("num" if name in numeric else "cat" for name in entry["columns"])
        found.setdefault(" x ".join(kinds), []).append(entry["tv"])
        found.setdefault("all", []).append(entry["tv"])
        if set(entry["columns"]) == {"education", "education-num"}:
            found.setdefault("education x education-num", []).append(entry["tv"])
    found["worst one-way"] = [column_tv(real, table, schema)["max"]]
    return found


def independent_table(frame: pd.DataFrame, schema: Schema, epsilon: float, rng: np.random.Generator,
                      bins: int = BINS) -> pd.DataFrame:
    """The pure-epsilon baseline: each of the d columns drawn independently from its own histogram
    over the scorer's cells (levels, and "other" where the column has it; a numeric column's ``bins`` equal-width bins of its
    bounds, at the bin's midpoint), with Laplace noise of scale 2 d / epsilon per cell (replace one
    row: two counts of each histogram move by one, l1 sensitivity 2; epsilon split evenly over the
    columns), negative cells set to 0. It reads the real rows and is private only as a whole
    (sequential composition); a baseline for the scores, not a product path."""
    columns = {}
    numeric = {column.name: column for column in schema.numeric.columns}
    scale = 2.0 * len(schema.names) / epsilon
    for name in schema.names:
        counts = distribution(frame, schema, name, bins) * len(frame)
        if name not in numeric and counts.size > len(schema.column(name).all_levels):
            # the scorer's "other" cell, after the levels, where the column has no level "other" of its own
            # (a binary column, or a categorical one declared complete): not a cell it can draw
            counts = np.delete(counts, len(schema.column(name).levels))
        noisy = np.clip(counts + rng.laplace(scale=scale, size=counts.size), 0.0, None)
        weights = noisy / noisy.sum() if noisy.sum() > 0 else np.full(counts.size, 1.0 / counts.size)
        codes = rng.choice(counts.size, size=len(frame), p=weights)
        if name in numeric:
            lower, upper = numeric[name].lower, numeric[name].upper
            columns[name] = lower + (codes + 0.5) * (upper - lower) / bins
        else:
            columns[name] = np.asarray(schema.column(name).all_levels, dtype=object)[codes]
    return pd.DataFrame(columns, columns=list(schema.names))


def scores(frame: pd.DataFrame, spec: dict, epsilon: float, delta: float, seeds: range,
           study: StudyOptions | None, independent: bool = False) -> dict:
    """Mean TVs of each kind over the seeds' releases (``independent``: of :func:`independent_table`
    instead, on the schema's cells); "worst one-way" is the mean over seeds of each release's worst
    column."""
    found: dict[str, list[float]] = {}
    per_seed: list[float] = []
    for seed in seeds:
        if independent:
            schema = Schema.from_dict(spec, list(frame.columns))
            table = independent_table(frame, schema, epsilon, np.random.default_rng(seed))
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = fit(SynthConfig(epsilon=epsilon, delta=delta, seed=seed), frame, schema=spec, study=study)
            schema, table = model.release.schema, sample(model)
        for kind, values in pair_tvs_by_kind(frame, table, schema).items():
            (per_seed if kind == "worst one-way" else found.setdefault(kind, [])).extend(values)
    return {**{kind: float(np.mean(values)) for kind, values in found.items()},
            "worst one-way": float(np.mean(per_seed))}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=12, help="how many seeded releases per setting and variant")
    parser.add_argument("--first-seed", type=int, default=100, help="the first seed (default 100: not the seeds "
                        "0-5 adult's earlier choices were measured on)")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--variants", nargs="+", default=["default", "no-value-blocks", "join-ratio=0", "independent"],
                        help="'default', 'no-value-blocks' (StudyOptions(value_blocks=False)), 'join-ratio=R' "
                             "and/or 'independent' (noisy one-way histograms, pure epsilon only)")
    args = parser.parse_args(argv)
    for variant in args.variants:
        if variant not in ("default", "no-value-blocks", "independent") and not variant.startswith("join-ratio="):
            parser.error(f"unknown variant '{variant}'")
    started = time.perf_counter()
    frame = pd.read_csv(DATA_DIR / "adult.csv")
    spec = json.loads(SCHEMA.read_text())
    default = JOIN_RATIO
    rows = []
    for epsilon, delta in ((1.0, 1e-10), (1.0, 0.0)):
        for variant in args.variants:
            if variant == "independent" and delta > 0:  # the baseline is for pure epsilon
                continue
            ratio = variant.partition("=")[2]
            study = (StudyOptions(join_ratio=float(ratio)) if ratio else
                     StudyOptions(value_blocks=False) if variant == "no-value-blocks" else None)
            seeds = range(args.first_seed, args.first_seed + args.seeds)
            result = scores(frame, spec, epsilon, delta, seeds, study, independent=variant == "independent")
            label = {"default": f"default (JOIN_RATIO = {default}, value blocks, binned blocks)",
                     "no-value-blocks": "no value blocks",
                     "independent": "independent noisy one-way histograms (baseline)"}.get(variant, f"JOIN_RATIO = {ratio}")
            log(f"({epsilon:g}, {delta:g}) {label}: {result}")
            rows.append(f"| ({epsilon:g}, {delta:g}) | {label} | "
                        + " | ".join(f"{result.get(kind, float('nan')):.4f}" for kind in COLUMNS) + " |")
    text = (f"# adult: 2-way TV by kind of pair\n\n{generated_by(command_line('adult_pairs.py', argv))}; "
            f"{(time.perf_counter() - started) / 60:.1f} min. Mean over seeds {args.first_seed}-{args.first_seed + args.seeds - 1} (seeded noise: "
            "reproducible, not private) of the mean 2-way TV (numeric columns in 16 equal-width bins of the "
            "schema's bounds); 0 the best. worst one-way: each release's largest one-way TV over the columns, "
            "averaged over the seeds.\n\n| setting | variant | " + " | ".join(COLUMNS)
            + " |\n|---|---|" + "---:|" * len(COLUMNS) + "\n" + "\n".join(rows) + "\n")
    args.out.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
