"""A class column: the numeric columns' histograms released by level of the class (``class_column``) against the default.

On small mixed tables at (1, 1e-10) the default keeps a numeric column's dependence on the categorical
one only through its noisy means per level (iris: SDMetrics pair trends .49 against dpmm AIM's .53,
small_tables.md). ``class_column`` releases each numeric column's histogram by level of the column the
user names, at the one-way histograms' sensitivity (synthdp.postprocess.class_histograms). This study
compares the two releases, seeded round by round (round r: seed + r for both), on the development
set's mixed tables (iris, glass, heart_cleveland: configs/*_schema.json) and four tables the option was
not made on (wine, diabetes, cancer10, digits600, from noise_box.py), each with its class (the schema's
last binary or categorical column: species, type, num; the unseen tables' one categorical column), and
optionally adult (income, ``--tables adult``). Scores: SDMetrics' QualityReport (overall, Column Shapes,
Column Pair Trends; its own virtualenv, as in small_tables.py), the strong-pair ratio (numeric pairs of
real |r| > 0.5), and on the development tables the worst relative error of the papers' smooth queries
at sigma = 2, 6 and 10 (small_tables.py's query sets).

    python experiments/class_column.py      # about 5 minutes; writes results/class_column.md
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
from harness import worst_errors
from noise_box import unseen_tables
from relationships import SDMetricsBatch, cell, present
from small_tables import CONFIGS, load_small

from synthdp import SmoothSynthesizer
from synthdp.study import SIGMAS

SCRIPT = "class_column.py"
DEVELOPMENT = ("iris", "glass", "heart_cleveland")
TABLES = (*DEVELOPMENT, "wine", "diabetes", "cancer10", "digits600", "adult")
DEFAULT_TABLES = TABLES[:-1]
VARIANTS = ("default", "class_column")
SHOWN_SIGMAS = (2.0, 6.0, 10.0)
EPSILON, DELTA = 1.0, 1e-10


def load(names: list[str]) -> dict[str, tuple[pd.DataFrame, dict]]:
    tables = {name: (pd.read_csv(DATA_DIR / f"{name}.csv"), json.loads((CONFIGS / f"{name}_schema.json").read_text()))
              for name in names if name in (*DEVELOPMENT, "adult")}
    if any(name not in tables for name in names):
        tables.update({name: table for name, table in unseen_tables().items() if name in names})
    return {name: tables[name] for name in names}


def class_of(content: dict) -> str:
    """The schema's last binary or categorical column."""
    return [c for c, spec in content["columns"].items() if spec.get("type") in ("categorical", "binary")][-1]


def study_table(name: str, real: pd.DataFrame, content: dict, rounds: int, seed: int, batch: SDMetricsBatch) -> list[dict]:
    klass = class_of(content)
    numeric = [c for c, spec in content["columns"].items() if spec.get("type", "continuous") in ("continuous", "integer")]
    corr = real[numeric].corr().to_numpy()
    upper = np.triu_indices(len(numeric), 1)
    strong = np.abs(corr[upper]) > 0.5
    queries = load_small(name, DATA_DIR, 500, 0) if name in DEVELOPMENT else None
    keys: dict[str, list] = {v: [] for v in VARIANTS}
    ratios: dict[str, list] = {v: [] for v in VARIANTS}
    errors: dict[str, list] = {v: [] for v in VARIANTS}
    conditioned: list[int] = []
    for r in range(rounds):
        for variant in VARIANTS:
            options = {"class_column": klass} if variant == "class_column" else {}
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the known-seed warning; a short level's
                model = SmoothSynthesizer(epsilon=EPSILON, delta=DELTA, seed=seed + r, **options).fit(real, schema=content)
                frame = model.sample(len(real), seed=seed + r)
            if variant == "class_column":
                classes = model.model_.release.class_histograms
                conditioned.append(0 if classes is None else len(classes.columns))
            keys[variant].append(batch.add(real, frame, content, r, False))
            synthetic = frame[numeric].astype(float).corr().to_numpy()
            ratios[variant].append(float(np.abs(synthetic[upper][strong]).mean() / np.abs(corr[upper][strong]).mean())
                                   if strong.any() else np.nan)
            if queries is not None:
                columns = list(queries.numeric.frame.columns)
                relative = worst_errors(queries.numeric, [(range(len(SIGMAS)), frame[columns])], queries.queries,
                                        queries.true)["relative"]
                errors[variant].append([float(relative[list(SIGMAS).index(sigma)]) for sigma in SHOWN_SIGMAS])
    batch.run()
    rows = []
    for variant in VARIANTS:
        results = [batch.results.get(key) or {} for key in keys[variant]]
        row = {"table": name, "shape": f"{len(real)} × {len(real.columns)}", "class": klass, "variant": variant,
               "strong_ratio": ratios[variant], "errors": errors[variant],
               "conditioned": conditioned if variant == "class_column" else []}
        for score in ("overall", "column_shapes", "column_pair_trends"):
            row[score] = [result.get(score, np.nan) for result in results]
        rows.append(row)
    return rows



def render(args: argparse.Namespace, argv: list[str] | None, rows: list[dict], seconds: float, message: str) -> str:
    lines = ["# A class column: histograms by level of the class against the default", "",
             generated_by(command_line(SCRIPT, argv)) + f"; {seconds:.0f} s.", "",
             f"{args.rounds} rounds per table (round r: seed {args.seed} + r for both releases), mean ± standard "
             "error, at (ε, δ) = (1, 10⁻¹⁰). `default`: `SmoothSynthesizer(epsilon, delta)`; `class_column`: the "
             "same with `class_column` set to the class named beside the table (the numeric columns released by "
             "level: how many of them is the last column; a column with a value block stays one-way). Scores: "
             "SDMetrics' QualityReport (its own virtualenv), the strong-pair ratio (numeric pairs of real |r| > 0.5), "
             "and on the development tables the worst relative error of the papers' smooth queries at σ = 2, 6, 10 "
             "(small_tables.py's query sets; the peers' on the same tables: small_tables.md).", ""]
    if message:
        lines += [f"SDMetrics: {message}", ""]
    lines += ["| table | class | variant | SDM overall | SDM shapes | SDM pair trends | strong-pair ratio | "
              "rel. err. σ = 2 / 6 / 10 | numeric columns by level |",
              "|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        errors = (" / ".join(f"{np.mean([e[i] for e in row['errors']]):.3f}" for i in range(len(SHOWN_SIGMAS)))
                  if row["errors"] else "")
        by_level = f"{np.mean(row['conditioned']):.1f}" if row["conditioned"] else ""
        lines.append(f"| {row['table']} ({row['shape']}) | {row['class']} | {row['variant']} | "
                     f"{cell(present(row['overall']))} | {cell(present(row['column_shapes']))} | "
                     f"{cell(present(row['column_pair_trends']))} | {cell(present(row['strong_ratio']))} | "
                     f"{errors} | {by_level} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", nargs="+", default=list(DEFAULT_TABLES), choices=TABLES)
    parser.add_argument("--rounds", type=int, default=10, help="seeded rounds per table (default 10)")
    parser.add_argument("--seed", type=int, default=1000, help="round r uses seed + r (default 1000)")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "class_column.md")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    batch = SDMetricsBatch(RESULTS_DIR / "cache" / "class_column")
    rows = []
    for name, (real, content) in load(args.tables).items():
        log(f"{name}: {args.rounds} rounds")
        rows += study_table(name, real, content, args.rounds, args.seed, batch)
    args.out.write_text(render(args, argv, rows, time.perf_counter() - start, batch.message), encoding="utf-8")
    args.out.with_suffix(".json").write_text(json.dumps(rows, indent=1, default=float), encoding="utf-8")
    log(f"wrote {args.out}")


if __name__ == "__main__":
    main()
