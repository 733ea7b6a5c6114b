"""Binned value blocks: integer columns of 33-128 values tabled against the categorical columns, on four mixed tables.

    python experiments/binned_blocks.py [--seeds 4] [--adult-seeds 6] [--first-seed 100]

An integer column of more than MAX_VALUE_BLOCK (32) and at most MAX_BINNED_BLOCK (128) values
gets a binned value block (at most BLOCK_BINS = 16 bins of equal width), and every numeric column
with a block releases its 2-way tables with the categorical columns in place of its means per
level; the LP and the tilt fit a value block's table only where its dependence stands out of
the noise (docs/decisions/binned-blocks.md). Variants: the default; every table fitted
(``StudyOptions(block_gate=False)``); before (``StudyOptions(binned_blocks=False,
block_gate=False)``: such a column had its means per level only, the release and the fit of
the previous product byte for byte). For each table, at (1, 1e-10) and epsilon = 1, seeded fits
of every variant (seeds FIRST_SEED .. FIRST_SEED + SEEDS - 1, the same for both: reproducible,
NOT private; adult's design choices were made on seeds 0-5, docs/decisions/held-out-seeds.md),
scored by the mean 2-way total-variation distance (:func:`synthdp.evaluation.mixed.pair_scores`,
numeric columns in 16 equal-width bins of their bounds) over all pairs and by kind of pair, and
the fit's seconds (median; the machine's load moves them):

* adult (configs/adult_schema.json: age has 74 values, hours-per-week 99; ``--adult-seeds``);
* life: 30 000 rows; age (18-90) and hours (1-99) integer columns, a life stage that is not
  monotone in age, a job that sets the hours (part time, a spike at 40, long hours), income
  from both, and a continuous column that follows age;
* independent: 10 000 rows; an integer column of 100 values independent of three categorical
  columns of 3, 8 and 12 levels (what the tables cost where there is nothing to find);
* counts: 20 000 rows; a count of 0-60 that is 0 in 40 % of the rows and small in most others,
  and a categorical column that depends on whether the count is 0 (equal-width bins of 4 values
  put 0 with 1-3: the bins' weak case).

Writes experiments/results/binned_blocks.md (``--out``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from adult_pairs import KINDS
from common import DATA_DIR, RESULTS_DIR, command_line, generated_by, log

from synthdp import SynthConfig
from synthdp.study import StudyOptions, fit, pair_scores, sample

OUT = RESULTS_DIR / "binned_blocks.md"
SCHEMA = DATA_DIR.parent / "configs" / "adult_schema.json"
SETTINGS = ((1.0, 1e-10), (1.0, 0.0))
VARIANTS = (("binned blocks (default)", StudyOptions()),
            ("binned blocks, every table fitted", StudyOptions(block_gate=False)),
            ("means per level (before)", StudyOptions(binned_blocks=False, block_gate=False)))


def life_table(seed: int = 11) -> tuple[pd.DataFrame, dict]:
    """30 000 rows: age, a stage of life not monotone in it, a job that sets the hours, income, x."""
    rng = np.random.default_rng(seed)
    n = 30_000
    age = np.clip(np.rint(rng.gamma(6.0, 6.5, n) + 18), 18, 90).astype(int)
    stage = np.select([age < 25, age < 45, age < 65], ["student", "family", "settled"], "retired")
    stage = np.where(rng.random(n) < 0.15, rng.choice(["student", "family", "settled", "retired"], n), stage)
    job = rng.choice(["part", "office", "trade", "care", "exec", "none"], n, p=[0.15, 0.3, 0.2, 0.15, 0.1, 0.1])
    hours = np.select([job == "part", job == "exec", job == "none"],
                      [rng.integers(8, 30, n), rng.integers(45, 80, n), rng.integers(1, 10, n)],
                      np.where(rng.random(n) < 0.6, 40, rng.integers(30, 60, n)))
    income = np.where(rng.random(n) < 1 / (1 + np.exp(-(hours - 40) / 8 - (age - 45) / 15)), "high", "low")
    frame = pd.DataFrame({"age": age, "stage": stage, "job": job, "hours": hours, "income": income,
                          "x": np.clip(age / 10 + rng.normal(0, 1, n), 0, 15).round(3)})
    spec = {"columns": {"age": {"type": "integer", "bounds": [18, 90]},
                        "stage": {"type": "categorical", "levels": ["student", "family", "settled", "retired"]},
                        "job": {"type": "categorical", "levels": ["part", "office", "trade", "care", "exec", "none"]},
                        "hours": {"type": "integer", "bounds": [1, 99]},
                        "income": {"type": "binary", "levels": ["low", "high"]},
                        "x": {"type": "continuous", "bounds": [0, 15]}}}
    return frame, spec


def independent_table(seed: int = 12) -> tuple[pd.DataFrame, dict]:
    """10 000 rows: an integer column of 100 values and three independent categorical columns."""
    rng = np.random.default_rng(seed)
    n = 10_000
    frame = pd.DataFrame({"k": rng.integers(0, 100, n)})
    spec = {"columns": {"k": {"type": "integer", "bounds": [0, 99]}}}
    for name, levels in (("a", 3), ("b", 8), ("c", 12)):
        frame[name] = [f"l{v}" for v in rng.integers(0, levels, n)]
        spec["columns"][name] = {"type": "categorical", "levels": [f"l{v}" for v in range(levels)]}
    return frame, spec


def counts_table(seed: int = 13) -> tuple[pd.DataFrame, dict]:
    """20 000 rows: a count of 0-60 (0 in 40 %), a group set by whether it is 0, and a second group."""
    rng = np.random.default_rng(seed)
    n = 20_000
    count = np.where(rng.random(n) < 0.4, 0, np.minimum(rng.geometric(0.15, n), 60))
    group = np.where(count == 0, rng.choice(["a", "b"], n, p=[0.8, 0.2]), rng.choice(["a", "b", "c"], n, p=[0.1, 0.3, 0.6]))
    frame = pd.DataFrame({"count": count, "group": group, "other": rng.choice(["u", "v", "w"], n)})
    spec = {"columns": {"count": {"type": "integer", "bounds": [0, 60]},
                        "group": {"type": "categorical", "levels": ["a", "b", "c"]},
                        "other": {"type": "categorical", "levels": ["u", "v", "w"]}}}
    return frame, spec


def scores(frame: pd.DataFrame, spec: dict, epsilon: float, delta: float, seeds: range,
           study: StudyOptions) -> tuple[dict[str, float], list[float], float]:
    """Mean 2-way TV by kind of pair over the seeds, each seed's mean over all pairs, median fit seconds."""
    found: dict[str, list[float]] = {}
    per_seed, seconds = [], []
    for seed in seeds:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the known-seed warning
            start = time.perf_counter()
            model = fit(SynthConfig(epsilon=epsilon, delta=delta, seed=seed), frame, schema=spec, study=study)
            seconds.append(time.perf_counter() - start)
            table = sample(model)
        numeric = set(model.release.schema.numeric.names)
        tvs = []
        for entry in pair_scores(frame, table, model.release.schema)["per_pair"]:
            kind = " x ".join(sorted("num" if name in numeric else "cat" for name in entry["columns"]))
            found.setdefault(kind, []).append(entry["tv"])
            tvs.append(entry["tv"])
        found.setdefault("all", []).extend(tvs)
        per_seed.append(float(np.mean(tvs)))
    return {kind: float(np.mean(values)) for kind, values in found.items()}, per_seed, statistics.median(seconds)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--adult-seeds", type=int, default=6)
    parser.add_argument("--first-seed", type=int, default=100)
    parser.add_argument("--tables", nargs="+", default=["adult", "life", "independent", "counts"])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    makers = {"adult": lambda: (pd.read_csv(DATA_DIR / "adult.csv"), json.loads(SCHEMA.read_text())),
              "life": life_table, "independent": independent_table, "counts": counts_table}
    lines = []
    for name in args.tables:
        frame, spec = makers[name]()
        count = args.adult_seeds if name == "adult" else args.seeds
        seeds = range(args.first_seed, args.first_seed + count)
        for epsilon, delta in SETTINGS:
            for label, study in VARIANTS:
                result, per_seed, seconds = scores(frame, spec, epsilon, delta, seeds, study)
                lines.append(f"| {name} | ({epsilon:g}, {delta:g}) | {label} | "
                             + " | ".join(f"{result[kind]:.4f}" if kind in result else "" for kind in KINDS)
                             + f" | {' / '.join(f'{value:.4f}' for value in per_seed)} | {seconds:.1f} |")
                log(lines[-1])
    text = ("# Binned value blocks\n\n"
            f"{generated_by(command_line('binned_blocks.py', argv))}; {(time.perf_counter() - start) / 60:.1f} min. "
            "The tables and the protocol: experiments/binned_blocks.py's docstring. Mean 2-way TV (numeric columns "
            f"in 16 equal-width bins of their bounds) over the seeds from {args.first_seed}, by kind of pair, each "
            "seed's mean over all pairs, and the fit's median seconds; 0 the best. "
            "docs/decisions/binned-blocks.md.\n\n"
            "| table | setting | variant | " + " | ".join(KINDS) + " | all, per seed | fit s |\n"
            "|---|---|---|" + "---:|" * len(KINDS) + "---|---:|\n" + "\n".join(lines) + "\n")
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
