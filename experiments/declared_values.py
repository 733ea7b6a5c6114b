"""Grid-valued columns: a numeric column's values declared (``"values"`` in the bounds) against min/max bounds alone.

A designed experiment's settings (yacht's hull parameters), a building simulation's few shapes
(energy), a survey's half-point scale: columns that take a handful of values, not integers, which
the default counts in a few equal-width bins at small n and so draws between the values. Declaring
them (``{"column": {"values": [...]}}``, public metadata like the bounds) gives such a column one cell
per value where the plan affords it, as an integer column's, and its synthetic values the declared
ones. This study compares the two on yacht and energy (the development set; the declared values are
each grid column's distinct values, taken as public as the min/max bounds are: both tables' settings
are published with them) and on two tables generated here, whose grids are known by construction
(fixed seeds): ``factorial`` (a 4 x 5 x 3 design at uneven settings, 8 replicates, 480 rows, and a
response smooth in the settings plus noise) and ``likert`` (600 answers to six questions on a
half-point scale 1, 1.5, ..., 5 driven by one latent trait, and an age column). A column is declared
where it is not integer-valued and takes at most 32 values; integer-valued columns are typed integer
in both arms.

Scores as in small_tables.py (SDMetrics' QualityReport in its own virtualenv, the strong-pair ratio,
the mean 2-way TV over 16 equal-width bins, the smooth queries' worst-case relative errors on the
table's fixed query set), at (1, 1e-10) and at pure epsilon = 1 with the independent baseline's 2-way
TV beside. Seeded releases (round r: seed + r, the same seeds in both arms): reproducible, NOT private
(a design study).

    python experiments/declared_values.py      # about 3 minutes; writes results/declared_values.md
"""

from __future__ import annotations

import argparse
import time
import warnings
import zlib
from pathlib import Path

import numpy as np
import pandas as pd
import small_tables as st
from adult_pairs import independent_table
from common import RESULTS_DIR, Dataset, command_line, generated_by, log, query_set, true_answers
from relationships import SDMetricsBatch, cell, run_table

SCRIPT = "declared_values.py"
TABLES = ("yacht", "energy", "factorial", "likert")
SETTINGS = ((1.0, 1e-10), st.PURE_SETTING)
ARMS = ("min/max bounds", "values declared")
MAX_DECLARED = 32
COLUMNS = ("sdm_overall", "sdm_shapes", "sdm_pair_trends", "strong_ratio", "mean_2way_tv", "rel_2", "rel_6", "rel_10")


def generated(name: str) -> pd.DataFrame:
    """The two tables made here (module docstring), from fixed seeds."""
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    if name == "factorial":
        speed, load, angle = [0.1, 0.25, 0.3, 0.55], [1.2, 1.5, 2.4, 3.1, 4.0], [-7.5, 0.0, 12.5]
        grid = np.array([(s, w, a) for s in speed for w in load for a in angle] * 8)
        response = 3 * grid[:, 0] ** 2 + 0.4 * grid[:, 1] + 0.02 * grid[:, 2] * grid[:, 0] + rng.normal(0, 0.15, len(grid))
        return pd.DataFrame({"speed": grid[:, 0], "load": grid[:, 1], "angle": grid[:, 2], "response": response})
    trait = rng.normal(0, 1, 600)
    answers = {f"q{k}": np.clip(np.round((3 + 0.9 * trait + rng.normal(0, 0.7, 600)) * 2) / 2, 1, 5) for k in range(6)}
    return pd.DataFrame({**answers, "age": np.round(rng.uniform(18, 80, 600) + 4 * trait, 1).clip(18, 90)})


def load(name: str, n_queries: int, query_seed: int) -> tuple[st.SmallTable, dict]:
    """The table with min/max bounds (integer-valued columns typed integer), and the bounds with its grid
    columns' values declared."""
    if name in ("yacht", "energy"):
        table = st.load_small(name, st.DATA_DIR, n_queries, query_seed)
    else:
        frame = generated(name)
        integer = tuple(c for c in frame.columns if np.all(np.mod(frame[c].to_numpy(float), 1) == 0))
        numeric = Dataset(name, frame, frame.min().to_numpy(float), frame.max().to_numpy(float), integer)
        table = st.SmallTable(name, frame, {"bounds": numeric.bounds}, None, numeric)
        table.queries = query_set(name, numeric.d, n_queries, query_seed)
        table.true = true_answers(numeric, table.queries)
    declared = dict(table.fit_kwargs["bounds"])
    for column in table.real.columns:
        values = np.unique(table.real[column].to_numpy(float))
        if column not in table.numeric.integer and len(values) <= MAX_DECLARED:
            declared[column] = {"values": values.tolist()}
    return table, declared


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", nargs="+", default=list(TABLES), choices=TABLES)
    parser.add_argument("--rounds", type=int, default=10, help="seeded releases per table, arm and setting (default 10)")
    parser.add_argument("--seed", type=int, default=100, help="round r uses seed + r (default 100)")
    parser.add_argument("--queries", type=int, default=st.N_QUERIES)
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "declared_values.md")
    args = parser.parse_args(argv)
    args.data_dir = st.DATA_DIR
    warnings.filterwarnings("ignore", message="a known seed")
    start = time.perf_counter()
    quality = SDMetricsBatch(RESULTS_DIR / "cache" / "declared_values")
    rows, notes = [], []
    for name in args.tables:
        table, declared = load(name, args.queries, st.QUERY_SEED)
        names = [c for c, spec in declared.items() if isinstance(spec, dict) and "values" in spec]
        notes.append(f"{name} ({table.shape()}): " + ", ".join(f"{c} ({len(declared[c]['values'])})" for c in names))
        scorer = st.scorer_for(table)
        for epsilon, delta in SETTINGS:
            for arm, bounds in zip(ARMS, (table.fit_kwargs["bounds"], declared)):
                runs = run_table(name, epsilon, delta, args.rounds, args, quality, "synthdp", table=(
                    table.real, {"bounds": bounds}, None), options={}, scorer=scorer)
                rows.append({"table": name, "setting": (epsilon, delta), "arm": arm, "runs": runs})
            if delta == 0:
                schema, runs = table.schema, []
                for round_ in range(args.rounds):
                    rng = np.random.default_rng([st.BASELINE_SEED, round_, zlib.crc32(name.encode())])
                    runs.append(scorer(name, table.real, independent_table(table.real, schema, epsilon, rng),
                                       table.fit_kwargs, round_))
                rows.append({"table": name, "setting": (epsilon, delta), "arm": "independent (baseline)", "runs": runs})
    quality.run()
    for row in rows:
        quality.fill(row["runs"])
    args.out.write_text(render(args, argv, rows, notes, time.perf_counter() - start, quality.message), encoding="utf-8")
    log(f"wrote {args.out}")


def render(args: argparse.Namespace, argv: list[str] | None, rows: list[dict], notes: list[str], seconds: float,
           message: str) -> str:
    lines = ["# Grid-valued columns: values declared against min/max bounds", "",
             generated_by(command_line(SCRIPT, argv)) + f"; {seconds:.0f} s.", "",
             f"{args.rounds} seeded releases per table, arm and setting (round r: seed {args.seed} + r, the same in both "
             "arms), mean ± standard error. Scores as in small_tables.md: SDMetrics' QualityReport, the strong-pair "
             "ratio (numeric pairs of real |r| > 0.5), the mean 2-way TV over 16 equal-width bins of the bounds (0 the "
             "best), the smooth queries' worst-case relative error at σ = 2, 6, 10 (each table's fixed query set). "
             "At pure ε the independent baseline (each column from its own noisy one-way histogram over the scorer's "
             "cells) is shown beside. Declared columns (number of values):", ""]
    lines += [f"* {note}" for note in notes] + [""]
    if message:
        lines += [f"SDMetrics: {message}", ""]
    header = ["table", "(ε, δ)", "bounds", *(st.SCORES[key] for key in COLUMNS)]
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        epsilon, delta = row["setting"]
        setting = f"({epsilon:g}, {delta:g})" if delta else f"ε = {epsilon:g}"
        lines.append("| " + " | ".join([row["table"], setting, row["arm"],
                                         *(cell([run.get(key) for run in row["runs"]]) for key in COLUMNS)]) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
