"""Relationships between columns in synthdp's default release: strong pairs, pair trends, models (issue 18, item 4).

For each table (CRM, CTG, PKS, WDBC with each column's min/max as public bounds, see
:data:`common.BOUNDS_NOTE`; adult with ``configs/adult_schema.json``) and each privacy setting
((epsilon, delta) = (1, 1e-10) and epsilon = 1), R rounds of synthdp's DEFAULT
(``SmoothSynthesizer(epsilon=..., delta=...)``, nothing else set), each scored against the real
table by :func:`synthdp.evaluation.metrics.utility_report` (the scores ``synthdp evaluate``
prints; few smooth queries and no SDMetrics, to stay fast):

* **strong-pair ratio**: over the pairs of numeric columns with real |Pearson r| > 0.5, the mean
  synthetic |r| over the mean real |r| (1: kept, 0: independent columns);
* **column shapes** and **column pair trends**: synthdp's own SDMetrics-style scores (mean over
  columns of 1 - KS, numeric, or 1 - TV, categorical; mean pair similarity: 1 - |r_real -
  r_synth| / 2 for numeric pairs, 1 - 2-way TV for pairs with a categorical column);
* **mean 2-way TV** over all pairs (numeric columns in 16 equal-width bins of their bounds);
* **train on synthetic, test on real** (:func:`synthdp.evaluation.metrics.model_accuracy`): PKS
  motor_UPDRS from the voice measures (total_UPDRS dropped from both tables; R^2), adult income
  (accuracy), each beside the same model trained on real rows.

Every entry of the results is the mean +- standard error over rounds (the standard error is the
sample standard deviation over sqrt(R); "-" with one round).

TODO (issue 18, item 4): the peers -- smartnoise-synth MST and AIM, OpenDP dp.mbi MST and AIM
(``experiments/peers/``, run through ``harness.binned_peer`` on 16 equal-width bins of the same
bounds) -- are NOT run by this script yet. They must be added at the same (epsilon, delta)
(they are zCDP mechanisms: (1, 1e-10) only; at epsilon = 1 the comparison is against the best
pure-epsilon method) for the issue's comparison, and SDMetrics' own QualityReport beside
synthdp's scores.

Randomness: synthdp's privacy noise is OpenDP's (never seeded) unless ``--seed`` is given (then
round r uses ``seed + r``: reproducible, NOT private); the report of round r (its queries and
its model's train/test split) uses seed r.

Writes ``experiments/results/relationships.md`` and ``relationships.json`` (``--out``).

Usage::

    python experiments/relationships.py                      # 5 rounds, every table, both settings
    python experiments/relationships.py --rounds 1 --datasets pks
    python experiments/relationships.py --rounds 3 --adult-rounds 2
"""

from __future__ import annotations

import argparse
import json
import math
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from common import (
    BOUNDS_NOTE,
    DATA_DIR,
    DATASETS,
    RESULTS_DIR,
    command_line,
    generated_by,
    load_dataset,
    log,
    write_json,
)

from synthdp import SmoothSynthesizer
from synthdp.evaluation.metrics import STRONG_R, model_accuracy, utility_report

SCRIPT = "relationships.py"
TABLES = (*DATASETS, "adult")
SCHEMA = DATA_DIR.parent / "configs" / "adult_schema.json"
SETTINGS = ((1.0, 1e-10), (1.0, 0.0))
#: Smooth queries per report: only to fill the report's section; the scores here do not use them.
N_QUERIES = 20
#: PKS: predict motor_UPDRS from the voice measures (total_UPDRS, nearly a linear function of it, dropped).
PKS_TARGET, PKS_DROP = "motor_UPDRS", "total_UPDRS"
ADULT_TARGET = "income"
SCORES = {
    "strong_ratio": "strong-pair ratio",
    "column_shapes": "column shapes",
    "pair_trends": "column pair trends",
    "mean_2way_tv": "mean 2-way TV",
    "model_synth": "train synthetic, test real",
    "model_real": "train real, test real",
}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", nargs="+", default=list(TABLES), choices=TABLES)
    parser.add_argument("--rounds", type=int, default=5, help="releases per table and setting (default 5)")
    parser.add_argument("--adult-rounds", type=int, default=None, help="rounds on adult (default: --rounds)")
    parser.add_argument("--seed", type=int, default=None,
                        help="seed synthdp's noise (reproducible but NOT private); default: real OpenDP noise")
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR)
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "relationships.md")
    args = parser.parse_args(argv)
    if args.rounds < 1 or (args.adult_rounds is not None and args.adult_rounds < 1):
        parser.error("--rounds and --adult-rounds must be >= 1")
    return args


def setting_label(epsilon: float, delta: float) -> str:
    return f"({epsilon:g}, {delta:g})" if delta > 0 else f"ε = {epsilon:g}"


def scores(report: dict, model: dict | None) -> dict:
    """The scores of one release, from its utility report (and its model, if any)."""
    strong = (report["correlation"] or {}).get("strong_pairs") or {}
    return {
        "strong_ratio": strong.get("ratio"),
        "strong_pairs": strong.get("pairs"),
        "column_shapes": report["similarity"]["column_shapes"],
        "pair_trends": report["similarity"]["column_pair_trends"],
        "mean_2way_tv": report["pairs"]["tv"]["mean"],
        "model_synth": None if model is None else model["train_synth_test_real"],
        "model_real": None if model is None else model["train_real_test_real"],
        "model_metric": None if model is None else model["metric"],
    }


def run_table(name: str, epsilon: float, delta: float, rounds: int, args: argparse.Namespace) -> list[dict]:
    """``rounds`` releases of synthdp's default on table ``name`` and their scores."""
    if name == "adult":
        real = pd.read_csv(args.data_dir / "adult.csv")
        schema = json.loads(SCHEMA.read_text())
        fit_kwargs: dict = {"schema": schema}
    else:
        dataset = load_dataset(name, args.data_dir)
        real, schema = dataset.frame, None
        fit_kwargs = {"bounds": dataset.bounds}
    runs = []
    for round_ in range(rounds):
        seed = None if args.seed is None else args.seed + round_
        start = time.perf_counter()
        synthetic = SmoothSynthesizer(epsilon=epsilon, delta=delta, seed=seed).fit(real, **fit_kwargs).sample()
        fit_seconds = time.perf_counter() - start
        report = utility_report(real, synthetic, target=ADULT_TARGET if name == "adult" else None,
                                n_queries=N_QUERIES, seed=round_, sdmetrics=False, **fit_kwargs)
        model = report["model"]
        if name == "pks":
            model = model_accuracy(real.drop(columns=PKS_DROP), synthetic.drop(columns=PKS_DROP), PKS_TARGET,
                                   seed=round_)
        total = time.perf_counter() - start
        runs.append({"round": round_, "fit_seconds": fit_seconds, "seconds": total, **scores(report, model)})
        log(f"{name} {setting_label(epsilon, delta)} round {round_}: release {fit_seconds:.1f} s, "
            f"scored {total - fit_seconds:.1f} s; strong-pair ratio {runs[-1]['strong_ratio']}")
    return runs


def mean_se(values: list) -> tuple[float | None, float | None]:
    values = [v for v in values if v is not None]
    if not values:
        return None, None
    mean = float(np.mean(values))
    return mean, (float(np.std(values, ddof=1) / math.sqrt(len(values))) if len(values) > 1 else None)


def cell(values: list) -> str:
    mean, se = mean_se(values)
    if mean is None:
        return "n/a"
    return f"{mean:.3f}" if se is None else f"{mean:.3f} ± {se:.3f}"


def summarise(results: list[dict]) -> list[dict]:
    rows = []
    for entry in results:
        runs = entry["runs"]
        row = {"table": entry["table"], "setting": entry["setting"], "rounds": len(runs),
               "strong_pairs": runs[0]["strong_pairs"], "model_metric": runs[0]["model_metric"],
               "seconds_per_round": float(np.mean([run["seconds"] for run in runs]))}
        for key in SCORES:
            row[key] = dict(zip(("mean", "se"), mean_se([run[key] for run in runs])))
            row[key]["cell"] = cell([run[key] for run in runs])
        rows.append(row)
    return rows


def render(args: argparse.Namespace, argv: list[str] | None, rows: list[dict], seconds: float) -> str:
    lines = [
        "# Relationships between columns: synthdp's default",
        "",
        generated_by(command_line(SCRIPT, argv)) + f"; {seconds:.0f} s in all.",
        "",
        "synthdp's default (`SmoothSynthesizer` with only epsilon and delta set) on each table, mean ± standard "
        "error over the rounds (the standard error is the sample standard deviation over √rounds). Scores "
        "(`synthdp evaluate` reports them all; docs/relationships.md says what they mean):",
        "",
        f"* **strong-pair ratio**: over the pairs of numeric columns with real \\|Pearson r\\| > {STRONG_R:g} "
        "(*k* of them), the mean synthetic \\|r\\| over the mean real \\|r\\| (1: kept, 0: independent);",
        "* **shapes** / **pair trends**: synthdp's own Column Shapes (mean of 1 − KS per numeric column, "
        "1 − TV per categorical one) and Column Pair Trends (mean pair similarity: 1 − \\|r real − r synthetic\\|/2 "
        "for numeric pairs, 1 − 2-way TV for pairs with a categorical column), on every row; 1 the best;",
        "* **2-way TV**: mean total-variation distance over all pairs of columns (numeric columns in 16 "
        "equal-width bins of their bounds); 0 the best;",
        "* **model**: train on synthetic rows, test on held-out real rows, beside the same model "
        "(scikit-learn's histogram gradient boosting) trained on the real training rows. PKS: motor_UPDRS from "
        "the voice measures, total_UPDRS dropped from both tables (R²); adult: income (accuracy).",
        "",
        BOUNDS_NOTE + " adult uses configs/adult_schema.json (public levels and integer bounds).",
        "",
        "| table | setting | rounds | *k* | strong-pair ratio | shapes | pair trends | 2-way TV "
        "| model: synthetic → real | model: real → real | s / round |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        metric = f" ({row['model_metric']})" if row["model_metric"] else ""
        lines.append(
            f"| {row['table']} | {row['setting']} | {row['rounds']} | {row['strong_pairs']} "
            f"| {row['strong_ratio']['cell']} | {row['column_shapes']['cell']} | {row['pair_trends']['cell']} "
            f"| {row['mean_2way_tv']['cell']} | {row['model_synth']['cell']}{metric} "
            f"| {row['model_real']['cell']} | {row['seconds_per_round']:.1f} |")
    lines += [
        "",
        "s / round: one release and its scoring, on a machine shared with other jobs.",
        "",
        "## TODO: the peers",
        "",
        "This page measures synthdp's default only. For issue 18's comparison the peers -- smartnoise-synth MST "
        "and AIM, OpenDP dp.mbi MST and AIM (experiments/peers/, 16 equal-width bins of the same bounds, decoded "
        "uniformly in bins, as in harness.py) -- must be scored the same way at the same (ε, δ) = (1, 10⁻¹⁰) "
        "(they are zCDP mechanisms; at ε = 1 the comparison is against the best pure-ε method), and SDMetrics' "
        "own QualityReport added beside synthdp's scores.",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    warnings.simplefilter("ignore")
    start = time.perf_counter()
    results = []
    for epsilon, delta in SETTINGS:
        for name in args.datasets:
            rounds = args.adult_rounds if name == "adult" and args.adult_rounds is not None else args.rounds
            results.append({"table": name, "epsilon": epsilon, "delta": delta,
                            "setting": setting_label(epsilon, delta),
                            "runs": run_table(name, epsilon, delta, rounds, args)})
    seconds = time.perf_counter() - start
    rows = summarise(results)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(render(args, argv, rows, seconds))
    write_json(args.out.with_suffix(".json"), {"command": command_line(SCRIPT, argv), "seconds": seconds,
                                               "summary": rows, "runs": results})
    log(f"wrote {args.out} and {args.out.with_suffix('.json')} ({seconds:.0f} s)")


if __name__ == "__main__":
    main()
