"""Small mixed tables: numeric histograms conditioned on the class column, a probe (NOT private).

On small mixed tables at (1, 1e-10) the default's moments are noise (a few hundred rows), so what its
synthetic table keeps of a numeric column's dependence on the categorical column (iris's petal sizes
by species) is what its noisy means per level hold: next to nothing (iris: SDMetrics pair trends .49
against dpmm AIM's .53). MST and AIM instead measure 2-way marginals. This probe asks what the
release would gain by the cheapest such measurement: each numeric column's histogram *conditioned on
the table's categorical column* (an L x B table) in place of its one-way histogram (B cells). Under
replace-one the L x B tables of the d numeric columns have the same l2 sensitivity as their one-way
histograms (sqrt(2 d): a row moves one count in each column's table), so the noise per cell is the
same, but a column's marginal summed from L cells carries sqrt(L) times the noise.

Not a release: the real tables plus Gaussian noise of the size the product's budget gives them
(numpy's noise, seeded; NOT private), the synthetic table drawn from them directly. For each table:
the level cells' mu and the histograms' mu are those of the default's own plan (its report; the
moments' mu added to the histograms', as the moments would no longer be needed for the means per
level), B the default's rule for the bins (:func:`synthdp.pipeline.plan.auto_marginal_bins`'s, at
that mu); the class drawn from its noisy level cells, then each numeric column's bin from

* ``one-way``: its noisy one-way histogram (independent columns: the probe's baseline, the same
  machinery as the others, with neither atoms nor value cells, which the default has);
* ``conditional``: its noisy L x B table's row of the drawn level;
* ``both``: a one-way histogram and the L x B table, each at mu / sqrt(2), made consistent by least
  squares, then the table's row;
* ``AIM oracle``: the table only where AIM's criterion holds on the TRUE table (its l1 distance from
  independence above the l1 noise sqrt(2/pi) sd B (L - 1) it would add), else one-way: an upper
  bound of what a private choice of the columns to condition could keep;

and the value uniformly within its bin (integer columns rounded). Beside them, the default's own
release (``synthdp``, seeded). Scores: SDMetrics' QualityReport (overall, Column Shapes, Column Pair
Trends, in its own virtualenv, as in small_tables.py) and the strong-pair ratio (numeric pairs of real
|r| > 0.5). Tables: iris and glass (the development set, configs/*_schema.json) and four tables the
probe was not made on, from noise_box.py (wine, diabetes, cancer10, digits600): one categorical column
each.

    python experiments/conditional_histograms.py     # about 3 minutes; writes results/conditional_histograms.md
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
from common import DATA_DIR, RESULTS_DIR, command_line, generated_by, log
from noise_box import unseen_tables
from relationships import SDMetricsBatch, cell, present
from small_tables import CONFIGS

from synthdp import SmoothSynthesizer
from synthdp.study import MARGINAL_BINS_RANGE

SCRIPT = "conditional_histograms.py"
TABLES = ("iris", "glass", "wine", "diabetes", "cancer10", "digits600")
VARIANTS = ("synthdp", "one-way", "conditional", "both", "AIM oracle")
EPSILON, DELTA = 1.0, 1e-10


def load(names: list[str]) -> dict[str, tuple[pd.DataFrame, dict]]:
    tables = {name: (pd.read_csv(DATA_DIR / f"{name}.csv"), json.loads((CONFIGS / f"{name}_schema.json").read_text()))
              for name in names if name in ("iris", "glass")}
    if any(name not in tables for name in names):
        tables.update({name: table for name, table in unseen_tables().items() if name in names})
    return tables


def draw(weights: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """k draws from noisy counts clipped at 0 (uniform where none is left)."""
    p = np.clip(weights, 0, None)
    p = p / p.sum() if p.sum() > 0 else np.full(len(p), 1 / len(p))
    return rng.choice(len(p), k, p=p)


def stage_mus(report: dict) -> tuple[float, float]:
    """The level cells' mu and the histograms' (with the moments' added) of the default's plan."""
    mus = {stage["stage"]: stage["mu"] or 0.0 for stage in report["privacy"]["stages"]}
    return mus["level cells"], math.hypot(mus["marginals"], mus["moments"])


def probe_table(name: str, real: pd.DataFrame, content: dict, rounds: int, seed: int,
                batch: SDMetricsBatch) -> list[dict]:
    cat = next(c for c, v in content["columns"].items() if v["type"] in ("categorical", "binary"))
    levels = [str(level) for level in content["columns"][cat]["levels"]]
    numeric = [c for c in real.columns if c != cat]
    n, L, d = len(real), len(levels), len(numeric)
    code = real[cat].astype(str).map({level: i for i, level in enumerate(levels)}).to_numpy()
    corr = real[numeric].corr().to_numpy()
    upper = np.triu_indices(d, 1)
    strong = np.abs(corr[upper]) > 0.5
    keys: dict[str, list] = {v: [] for v in VARIANTS}
    ratios: dict[str, list] = {v: [] for v in VARIANTS}
    conditioned: list[int] = []
    setting = {}
    for r in range(rounds):
        model = SmoothSynthesizer(epsilon=EPSILON, delta=DELTA, seed=seed + r).fit(real, schema=content)
        mu_levels, mu_hist = stage_mus(model.privacy_report())
        sd = math.sqrt(2 * d) / mu_hist
        bins = int(np.clip(math.floor(n / (2 * sd)) - 2, *MARGINAL_BINS_RANGE))
        setting = {"mu_levels": mu_levels, "mu_histograms": mu_hist, "bins": bins, "levels": L, "numeric": d}
        tables = {}
        for c in numeric:
            low, high = content["columns"][c]["bounds"]
            edges = np.linspace(low, high, bins + 1)
            b = np.clip(np.searchsorted(edges, real[c].to_numpy(float), side="right") - 1, 0, bins - 1)
            table = np.zeros((L, bins))
            np.add.at(table, (code, b), 1)
            tables[c] = (edges, table)
        rng = np.random.default_rng(seed + r)
        synthetic = {"synthdp": model.sample(n)}
        drawn = draw(np.bincount(code, minlength=L) + rng.normal(0, math.sqrt(2) / mu_levels, L), n, rng)
        for variant in VARIANTS[1:]:
            columns = {cat: np.asarray(levels, dtype=object)[drawn]}
            count = 0
            for c in numeric:
                edges, table = tables[c]
                noisy = None
                if variant == "conditional":
                    noisy = table + rng.normal(0, sd, table.shape)
                elif variant == "both":
                    one_way = table.sum(0) + rng.normal(0, sd * math.sqrt(2), bins)
                    noisy = table + rng.normal(0, sd * math.sqrt(2), table.shape)
                    marginal = (L * one_way + noisy.sum(0)) / (L + 1)  # least squares: variances 2 sd^2 and 2 L sd^2
                    noisy += (marginal - noisy.sum(0)) / L
                elif variant == "AIM oracle":  # NOT private: the criterion read on the true table
                    dependence = np.abs(table - table.sum(1, keepdims=True) * table.sum(0, keepdims=True) / n).sum()
                    if dependence > math.sqrt(2 / math.pi) * sd * bins * (L - 1):
                        noisy = table + rng.normal(0, sd, table.shape)
                if noisy is None:
                    cells = draw(table.sum(0) + rng.normal(0, sd, bins), n, rng)
                else:
                    count += 1
                    cells = np.empty(n, dtype=int)
                    for level in range(L):
                        rows = drawn == level
                        cells[rows] = draw(noisy[level], int(rows.sum()), rng)
                values = edges[cells] + rng.uniform(0, 1, n) * (edges[1] - edges[0])
                if content["columns"][c]["type"] == "integer":
                    values = np.clip(np.round(values), edges[0], edges[-1])
                columns[c] = values
            if variant == "AIM oracle":
                conditioned.append(count)
            synthetic[variant] = pd.DataFrame(columns)[list(real.columns)]
        for variant, frame in synthetic.items():
            keys[variant].append(batch.add(real, frame, content, r, False))
            synth_corr = frame[numeric].astype(float).corr().to_numpy()
            ratios[variant].append(np.abs(synth_corr[upper][strong]).mean() / np.abs(corr[upper][strong]).mean()
                                   if strong.any() else np.nan)
    batch.run()
    rows = []
    for variant in VARIANTS:
        results = [batch.results.get(key) or {} for key in keys[variant]]
        row = {"table": name, "variant": variant, **setting, "strong_ratio": ratios[variant]}
        for score in ("overall", "column_shapes", "column_pair_trends"):
            row[score] = [result.get(score, np.nan) for result in results]
        if variant == "AIM oracle":
            row["conditioned"] = conditioned
        rows.append(row)
    return rows



def render(args: argparse.Namespace, argv: list[str] | None, rows: list[dict], seconds: float, message: str) -> str:
    lines = ["# Small mixed tables: numeric histograms conditioned on the class column (a NOT private probe)", "",
             generated_by(command_line(SCRIPT, argv)) + f"; {seconds:.0f} s.", "",
             f"{args.rounds} rounds per table (round r: seed {args.seed} + r), mean ± standard error. At (ε, δ) = "
             "(1, 10⁻¹⁰): `synthdp` is the default's seeded release; the other rows are NOT releases but draws from "
             "the real tables plus Gaussian noise of the size the default's plan gives its level cells and "
             "histograms (the moments' μ added to the histograms'), B bins by the default's rule (the module "
             "docstring says how each row draws). `AIM oracle` reads AIM's criterion on the true tables: an upper "
             "bound for a private choice of the columns to condition. Scores: SDMetrics' QualityReport (its own "
             "virtualenv) and the strong-pair ratio (numeric pairs of real |r| > 0.5).", ""]
    if message:
        lines += [f"SDMetrics: {message}", ""]
    lines += ["| table | L levels, d numeric, B bins | μ levels / histograms | variant | SDM overall | SDM shapes | "
              "SDM pair trends | strong-pair ratio | columns conditioned |",
              "|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        lines.append(f"| {row['table']} | {row['levels']}, {row['numeric']}, {row['bins']} | "
                     f"{row['mu_levels']:.3f} / {row['mu_histograms']:.3f} | {row['variant']} | {cell(present(row['overall']))} | "
                     f"{cell(present(row['column_shapes']))} | {cell(present(row['column_pair_trends']))} | "
                     f"{cell(present(row['strong_ratio']))} | "
                     + (f"{np.mean(row['conditioned']):.1f} of {row['numeric']}" if "conditioned" in row else "") + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", nargs="+", default=list(TABLES), choices=TABLES)
    parser.add_argument("--rounds", type=int, default=10, help="seeded rounds per table (default 10)")
    parser.add_argument("--seed", type=int, default=1000, help="round r uses seed + r (default 1000)")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "conditional_histograms.md")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore", message="a known seed")
    start = time.perf_counter()
    batch = SDMetricsBatch(RESULTS_DIR / "cache" / "conditional_histograms")
    rows = []
    for name, (real, content) in load(args.tables).items():
        log(f"{name}: {args.rounds} rounds")
        rows += probe_table(name, real, content, args.rounds, args.seed, batch)
    args.out.write_text(render(args, argv, rows, time.perf_counter() - start, batch.message), encoding="utf-8")
    log(f"wrote {args.out}")


if __name__ == "__main__":
    main()
