"""adult at small epsilon: the level-cells rule's second clause, for and against.

At pure epsilon <= 0.5 the cells of adult's native-country (42 levels) hold on average less
than twice the moments' noise sd (1/L < 2 sd), and the mixed-tables plan releases that
column's one-way cells apart (``level cells``, :func:`synthdp.pipeline.plan.level_cells_apart`),
at the share that meets the rule, the moments keeping the rest. This study compares, over
seeded releases of data/adult.csv with configs/adult_schema.json at pure epsilon, the plan with
the rule of 2026-11-29 (every column's one-way cells apart, the moments, which hold the 2-way
cells, left NOISY_MOMENTS_SHARE) and with the rule before (MOMENT_NOISE_LIMIT alone), on the 9
categorical columns: native-country's
one-way total variation distance (TV), the mean one-way TV, and the mean and worst 2-way TV
over the 36 pairs (synthdp.evaluation.mixed). Seeded noise: reproducible, NOT private (a
design study).

    python experiments/level_cells_adult.py      # about 2 minutes; writes results/level_cells_adult.md
"""

from __future__ import annotations

import argparse
import json
import time
import warnings

import numpy as np
import pandas as pd
from common import DATA_DIR, RESULTS_DIR, command_line, generated_by, level_cells_clause, log

from synthdp import SmoothSynthesizer
from synthdp.study import column_tv, pair_scores

RULES = (("the plan (only the columns whose cells hold < 2 noise sd apart)", "product"),
         ("every column's cells apart where one column's do (2026-11-29)", "all"),
         ("MOMENT_NOISE_LIMIT alone", "limit"))


def run(epsilon: float, rounds: int, rule: str, rows: int | None) -> dict:
    real = pd.read_csv(DATA_DIR / "adult.csv")
    if rows is not None:
        real = real.head(rows)
    schema = json.loads((DATA_DIR.parent / "configs" / "adult_schema.json").read_text(encoding="utf-8"))
    levels = [name for name, spec in schema["columns"].items() if spec.get("type") in ("binary", "categorical")]
    scored = {"columns": {name: schema["columns"][name] for name in levels}}
    with level_cells_clause(rule):
        scores, apart = [], set()
        for seed in range(rounds):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                synth = SmoothSynthesizer(epsilon=epsilon, seed=1000 + seed).fit(real, schema=schema)
                synthetic = synth.sample(len(real), seed=seed)
            cells = synth.release_.plan.apart_levels
            apart.add("none" if not cells else "all" if cells == 1 else f"columns of {cells}+ levels")
            one_way = column_tv(real[levels], synthetic[levels], scored)
            pairs = pair_scores(real[levels], synthetic[levels], scored)["tv"]
            scores.append((one_way["per_column"]["native-country"], one_way["mean"], pairs["mean"], pairs["worst"]))
    return {"scores": np.array(scores), "apart": apart}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epsilons", nargs="+", type=float, default=[0.25, 0.5, 1.0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--rows", type=int, default=None, help="the table's first ROWS rows (default all)")
    parser.add_argument("--out", default=str(RESULTS_DIR / "level_cells_adult.md"))
    args = parser.parse_args(argv)
    start = time.perf_counter()
    lines = []
    for epsilon in args.epsilons:
        for label, rule in RULES:
            result = run(epsilon, args.rounds, rule, args.rows)
            values = result["scores"]
            cells = " | ".join(f"{values[:, j].mean():.4f} ± {values[:, j].std(ddof=1) / np.sqrt(len(values)):.4f}"
                               for j in range(values.shape[1]))
            lines.append(f"| {epsilon:g} | {label} | {', '.join(sorted(result['apart']))} | {cells} |")
            log(f"epsilon {epsilon:g}, {label}: done")
    text = ["# adult at small epsilon: the level-cells rule's second clause, for and against", "",
            generated_by(command_line("level_cells_adult.py", argv)) + f"; {time.perf_counter() - start:.0f} s.", "",
            f"data/adult.csv{'' if args.rows is None else f' (first {args.rows} rows)'} with configs/adult_schema.json, "
            f"pure epsilon, {args.rounds} seeded releases each (mean ± standard error), the 9 categorical columns; "
            "TV: total variation distance, 0 the best.", "",
            "| epsilon | rule | one-way cells apart | native-country one-way TV | mean one-way TV | mean 2-way TV | "
            "worst 2-way TV |", "|---:|---|---|---:|---:|---:|---:|", *lines, ""]
    with open(args.out, "w", encoding="utf-8") as handle:
        handle.write("\n".join(text))
    log(f"wrote {args.out}")


if __name__ == "__main__":
    main()
