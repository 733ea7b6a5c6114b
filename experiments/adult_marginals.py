"""Mixed tables on adult: k-way marginal errors and smooth-query errors against epsilon.

For each epsilon and round, one release of data/adult.csv with the schema
configs/adult_schema.json (public levels from the data README; the integer bounds are the
README's ranges, taken as public) and every other option at its default (pure epsilon-DP,
marginal degree 2, real OpenDP noise). From that one release:

* (a) the synthetic table (n rows sampled from the LP's distribution),
* (b) the marginal summary (answers from the noisy moments; 3-way cells estimated within the
  Frechet bounds of the released 2-way cells, synthdp/marginals.py),

and, at the same epsilon,

* (c) independent noisy one-way marginals: a Laplace-noised histogram of each of the 9
  categorical columns (with its "other" level). Replacing one row moves each histogram of
  fractions by 2/n in l1, so the 9 have l1 sensitivity 18/n: Laplace(18/(n eps)) per cell.
  Negative cells are set to 0, each histogram is renormalised, and a k-way cell is the
  product of its one-way cells.

``--with-degree-3`` adds (d) the marginal summary of a separate summary-only release with
``marginal_degree=3`` at the same epsilon, which holds every 3-way cell.

Errors: worst-case and mean absolute error of the cell fractions over all cells of all
2-way (36 marginals) and 3-way (84) marginals of the 9 categorical columns. Smooth queries:
the papers' protocol (synthdp.evaluation.queries; Q random sums of 10 Gaussian kernels, worst-case
relative error) on the 6 integer columns, for the mixed release's synthetic table and for a
release of the 6 numeric columns alone at the same epsilon (the cost of sharing the budget).

Usage::

    nice -n 10 python experiments/adult_marginals.py                      # 6 epsilons x 2 rounds
    python experiments/adult_marginals.py --epsilons 1 --rounds 1 --queries 200   # a quick look
    python experiments/adult_marginals.py --epsilons 1 4 --rounds 1 --with-degree-3 \
        --out experiments/results/adult_marginals_degree3.md
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from common import generated_by

from synthdp import SmoothSynthesizer
from synthdp.study import (
    SIGMAS,
    Schema,
    answer_queries,
    column_sets,
    gaussian_kernel_queries,
    marginal,
    marginal_errors,
    to_unit,
    worst_case_errors,
)

HERE = Path(__file__).resolve().parent
DATA = HERE.parent / "data" / "adult.csv"
SCHEMA = HERE.parent / "configs" / "adult_schema.json"
DEGREE_3 = "summary of a degree-3 release"


def independent_one_way(data: pd.DataFrame, schema: Schema, epsilon: float, rng: np.random.Generator) -> dict:
    """Noisy one-way histograms of every categorical column (baseline c), as Series of fractions."""
    columns = [column.name for column in schema.declared]
    scale = 2 * len(columns) / (len(data) * epsilon)
    histograms = {}
    for name in columns:
        exact = marginal(data, [name], schema).to_numpy()
        noisy = np.clip(exact + rng.laplace(0.0, scale, len(exact)), 0, None)
        histograms[name] = noisy / noisy.sum() if noisy.sum() > 0 else np.full(len(noisy), 1 / len(noisy))
    return histograms


def product_marginal(histograms: dict, columns, schema: Schema) -> pd.Series:
    table = np.ones(1)
    for name in columns:
        table = np.multiply.outer(table, histograms[name]).reshape(-1)
    index = pd.MultiIndex.from_product([schema.column(name).all_levels for name in columns], names=list(columns))
    return pd.Series(table, index=index)


def smooth_errors(real: pd.DataFrame, synthetic: pd.DataFrame, schema: Schema, queries, truth) -> np.ndarray:
    numeric = schema.numeric
    points = to_unit(synthetic[numeric.names], numeric.lower, numeric.upper)
    return worst_case_errors(truth, answer_queries(points, queries), queries.alpha).relative


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.25, 0.5, 1, 2, 4, 8])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--queries", type=int, default=1000, help="smooth queries (default 1000)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the queries and of the baseline's noise")
    parser.add_argument("--with-degree-3", action="store_true",
                        help="also a summary-only release of every 3-way cell (--marginal-degree 3; about 1 min a fit)")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "adult_marginals.md")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    data = pd.read_csv(DATA)
    content = json.loads(SCHEMA.read_text())
    schema = Schema.from_dict(content, list(data.columns))
    rng = np.random.default_rng(args.seed)
    queries = gaussian_kernel_queries(schema.d_numeric, args.queries, rng)
    numeric = schema.numeric
    truth = answer_queries(to_unit(data[numeric.names], numeric.lower, numeric.upper), queries)
    reference_cache: dict = {}

    def reference(columns):
        key = tuple(columns)
        if key not in reference_cache:
            reference_cache[key] = marginal(data, columns, schema)
        return reference_cache[key]

    rows, smooth_rows, timings = [], [], []
    for epsilon in args.epsilons:
        for round_ in range(args.rounds):
            start = time.perf_counter()
            synth = SmoothSynthesizer(epsilon=epsilon).fit(data, schema=content)
            fit_seconds = time.perf_counter() - start
            synthetic, summary = synth.sample(), synth.marginal_summary()
            histograms = independent_one_way(data, schema, epsilon, rng)
            answers = {"synthetic table": lambda c, table=synthetic: marginal(table, c, schema),
                       "summary": summary.marginal,
                       "independent 1-way": lambda c, counts=histograms: product_marginal(counts, c, schema)}
            if args.with_degree_3:
                answers[DEGREE_3] = SmoothSynthesizer(epsilon=epsilon, marginal_degree=3).fit(
                    data, schema=content, synthesize=False).marginal_summary().marginal
            for k in (2, 3):
                for method in answers:
                    errors = marginal_errors(reference, answers[method], column_sets(schema, k))
                    rows.append({"epsilon": epsilon, "round": round_, "k": k, "method": method, **errors})
            numeric_only = SmoothSynthesizer(epsilon=epsilon).fit(data[numeric.names], bounds=numeric).sample()
            for method, table in (("mixed release", synthetic), ("numeric columns alone", numeric_only)):
                smooth_rows.append({"epsilon": epsilon, "round": round_, "method": method,
                                    **dict(zip(SIGMAS, smooth_errors(data, table, schema, queries, truth)))})
            timings.append({"epsilon": epsilon, "fit_seconds": fit_seconds, **synth.timings_,
                            "R": synth.release_.plan.n_basis, "distinct_rows": int(len(synthetic.drop_duplicates()))})
            print(f"eps={epsilon} round={round_}: fit {fit_seconds:.1f} s, total {time.perf_counter() - start:.1f} s",
                  flush=True)
        done = args.epsilons[:args.epsilons.index(epsilon) + 1]  # results so far, should a later epsilon not finish
        write_results(args, done, pd.DataFrame(rows), pd.DataFrame(smooth_rows), pd.DataFrame(timings))


def write_results(args, epsilons, marginals: pd.DataFrame, smooth: pd.DataFrame, timings: pd.DataFrame) -> None:
    mean = marginals.groupby(["k", "epsilon", "method"], sort=False)[["worst", "mean"]].mean()
    methods = list(dict.fromkeys(marginals.method))
    lines = [
        "# Mixed tables on adult: marginal and smooth-query errors against epsilon",
        "",
        generated_by(f"python experiments/adult_marginals.py --epsilons {' '.join(f'{e:g}' for e in epsilons)} "
                     f"--rounds {args.rounds} --queries {args.queries} --seed {args.seed}"
                     + (" --with-degree-3" if args.with_degree_3 else "")) + "; n = 32561, pure epsilon-DP, "
        "defaults (marginal degree 2), real OpenDP noise; mean over rounds. Errors are absolute differences of "
        "cell fractions over every cell of every marginal of the 9 categorical columns "
        f"(2-way: 36 marginals, {int(marginals[marginals.k == 2].cells.iloc[0])} cells; "
        f"3-way: 84 marginals, {int(marginals[marginals.k == 3].cells.iloc[0])} cells).",
        "",
    ]
    for k in (2, 3):
        lines += [f"## {k}-way marginals", "", "| epsilon | " + " | ".join(f"{m} worst | {m} mean" for m in methods) + " |",
                  "|---:|" + "---:|" * (2 * len(methods))]
        for epsilon in epsilons:
            cells = [f"{mean.loc[(k, epsilon, m), stat]:.4f}" for m in methods for stat in ("worst", "mean")]
            lines.append(f"| {epsilon:g} | " + " | ".join(cells) + " |")
        lines.append("")
    smooth_mean = smooth.groupby(["epsilon", "method"], sort=False)[list(SIGMAS)].mean()
    lines += ["## Smooth queries on the 6 integer columns (worst-case relative error)", "",
              "| epsilon | release | " + " | ".join(f"σ={s:g}" for s in SIGMAS) + " |",
              "|---:|---|" + "---:|" * len(SIGMAS)]
    for (epsilon, method), values in smooth_mean.iterrows():
        lines.append(f"| {epsilon:g} | {method} | " + " | ".join(f"{v:.3f}" for v in values) + " |")
    timing = timings.groupby("epsilon").mean(numeric_only=True)
    lines += ["", "## Time and size", "", "| epsilon | fit (s) | LP (s) | R | distinct synthetic rows |", "|---:|---:|---:|---:|---:|"]
    for epsilon, row in timing.iterrows():
        lines.append(f"| {epsilon:g} | {row.fit_seconds:.1f} | {row['LP fit']:.1f} | {row.R:.0f} | {row.distinct_rows:.0f} |")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    plot(args.out.with_suffix(".png"), epsilons, methods, mean)
    print(f"wrote {args.out}")


def plot(path: Path, epsilons, methods, mean: pd.DataFrame) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for axis, k in zip(axes, (2, 3)):
        for method, (marker, colour) in zip(methods, (("o", "C0"), ("s", "C1"), ("^", "C2"), ("d", "C3"))):
            for stat, line in (("worst", "-"), ("mean", ":")):
                values = [mean.loc[(k, e, method), stat] for e in epsilons]
                axis.loglog(epsilons, values, marker + line, color=colour, label=f"{method}, {stat}")
        axis.set_title(f"all {k}-way marginals of 9 columns")
        axis.set_xlabel("epsilon")
        axis.set_xticks(epsilons, [f"{e:g}" for e in epsilons])
        axis.minorticks_off()
    axes[0].set_ylabel("absolute cell error (fraction of rows)")
    axes[1].legend(fontsize=7)
    figure.suptitle("adult (n = 32561): worst (solid) and mean (dotted) cell error")
    figure.tight_layout()
    figure.savefig(path, dpi=120)


if __name__ == "__main__":
    main()
