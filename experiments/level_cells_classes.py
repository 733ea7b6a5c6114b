"""A class column of many levels: are its one-way cells better released apart?

The mixed-tables plan releases the binary and categorical columns' one-way cells in a stage of
their own (``level cells``) where the moments' noise would swamp them
(:func:`synthdp.pipeline.plan.mixed_shares`): above MOMENT_NOISE_LIMIT, or where a cell of the
block with the most cells holds on average less than twice the noise's sd (1/L < 2 sd). This
study takes a table the default was not developed on, scikit-learn's bundled digits (1 797 rows:
ten pixel columns, integers 0-16 with their value blocks, and the class, ten levels), and
compares, over seeded releases at (1, 1e-10), the plan's choice with the moments keeping the
cells (the rule before its second clause, MOMENT_NOISE_LIMIT alone): the class's one-way total
variation distance and the mean 2-way TV of the class against each pixel (16 equal-width bins).
Seeded noise: reproducible, NOT private (a design study).

    python experiments/level_cells_classes.py      # about a minute; writes results/level_cells_classes.md
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd
from common import RESULTS_DIR, command_line, generated_by, level_cells_clause, log

from synthdp import SmoothSynthesizer
from synthdp.study import plan_module

PIXELS = ["pixel_2_2", "pixel_2_3", "pixel_2_4", "pixel_2_5", "pixel_2_6",
          "pixel_4_2", "pixel_4_3", "pixel_4_4", "pixel_4_5", "pixel_4_6"]
BINS = 16


def digits() -> tuple[pd.DataFrame, dict]:
    from sklearn.datasets import load_digits

    frame = load_digits(as_frame=True).frame
    table = frame[PIXELS + ["target"]].rename(columns={"target": "digit"}).astype(int)
    schema = {"columns": {**{name: {"type": "integer", "bounds": [0, 16]} for name in PIXELS},
                          "digit": {"type": "categorical", "levels": list(range(10)), "other": False}}}
    return table, schema


def one_way_tv(real: pd.Series, synthetic: pd.Series) -> float:
    levels = range(10)
    return 0.5 * float(np.abs(real.value_counts(normalize=True).reindex(levels, fill_value=0)
                              - synthetic.value_counts(normalize=True).reindex(levels, fill_value=0)).sum())


def pair_tv(real: pd.DataFrame, synthetic: pd.DataFrame) -> float:
    tvs = []
    for name in PIXELS:
        cells = [pd.crosstab(frame["digit"].astype(int), np.clip(frame[name] * BINS // 17, 0, BINS - 1),
                             normalize=True) for frame in (real, synthetic)]
        index, columns = cells[0].index.union(cells[1].index), cells[0].columns.union(cells[1].columns)
        a, b = (cell.reindex(index=index, columns=columns, fill_value=0) for cell in cells)
        tvs.append(0.5 * float(np.abs(a - b).to_numpy().sum()))
    return float(np.mean(tvs))


def run(rounds: int, cells_rule: bool) -> dict:
    table, schema = digits()
    with level_cells_clause(cells_rule):  # without it: the rule before its second clause, MOMENT_NOISE_LIMIT alone
        scores, stages = [], set()
        for seed in range(rounds):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                synth = SmoothSynthesizer(epsilon=1.0, delta=1e-10, seed=seed).fit(table, schema=schema)
                synthetic = synth.sample(seed=seed)
            stages |= {stage["stage"] for stage in synth.privacy_report()["privacy"]["stages"]}
            scores.append((one_way_tv(table["digit"], synthetic["digit"].astype(int)), pair_tv(table, synthetic)))
    values = np.array(scores)
    return {"one_way": values[:, 0], "pairs": values[:, 1], "apart": plan_module.LEVEL_CELLS in stages}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--out", default=str(RESULTS_DIR / "level_cells_classes.md"))
    args = parser.parse_args(argv)
    start = time.perf_counter()
    rows = []
    for label, rule in (("the plan (cells apart where 1/L < 2 sd)", True), ("MOMENT_NOISE_LIMIT alone", False)):
        result = run(args.rounds, rule)
        mean = lambda values: f"{values.mean():.3f} ± {values.std(ddof=1) / np.sqrt(len(values)):.3f}"  # noqa: E731
        rows.append(f"| {label} | {'yes' if result['apart'] else 'no'} | {mean(result['one_way'])} | "
                    f"{mean(result['pairs'])} |")
        log(f"{label}: done")
    lines = ["# A class of ten levels: its one-way cells apart or in the moments", "",
             generated_by(command_line("level_cells_classes.py", argv)) + f"; {time.perf_counter() - start:.0f} s.", "",
             f"scikit-learn's digits (1 797 rows: ten pixel columns, integers 0-16, and the class, ten levels), "
             f"{args.rounds} seeded releases at (1, 1e-10) each (mean ± standard error); 0 the best.", "",
             "| rule | one-way cells apart | class one-way TV | class x pixel 2-way TV |", "|---|---|---:|---:|",
             *rows, ""]
    with open(args.out, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines))
    log(f"wrote {args.out}")


if __name__ == "__main__":
    main()
