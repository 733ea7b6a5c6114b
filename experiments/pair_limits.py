"""How much pairwise structure a private release of all pairs can carry at (1, 1e-10) (issue 18).

    python experiments/pair_limits.py [--rounds 200] [--shares 0.3 1.0] [--seeds 5] [--queries 300] [--out FILE]

The issue asks, where a table's size and budget make its strong pairs impossible to keep
(WDBC: 569 rows, 435 pairs), for a measurement of the limit instead of an assertion. This
script measures it for the release synthdp makes of pairs: the means of products of normal
scores (a correlation matrix of the scores), with the Gaussian noise the package would add
at a share s of the budget (ε, δ) = (1, 10⁻¹⁰), replace-one rows: the noise standard deviation
comes from the package's own sensitivity and budget arithmetic, the function the budget rules
use (:func:`synthdp.pipeline.plan.pair_noise_sd`). s = 0.3 is the share the default gives pairs
when it releases them; s = 1.0 gives the pairs the whole budget (nothing left for the columns' shapes or the moments): no split of
the budget can do better than that row.

An oracle stands in for the rest of the pipeline: the exact correlation C of each table's rank
normal scores (computed from the data, NOT private: a bound study, not a release), plus that
noise, then three estimates of C:

* **independent**: the identity (what the default releases on WDBC and CRM, whose pair noise is
  above CORRELATION_NOISE_LIMIT);
* **threshold 2 sd**: the package's rule (:func:`synthdp.postprocess.pairs.latent_correlation`
  keeps a correlation two noise sd from 0, then projects onto the correlation matrices);
* **spectral**: :func:`synthdp.postprocess.pairs.spectral_denoise`, eigenvalue shrinkage of the
  noisy matrix (spiked Wigner model). It uses the matrix as a whole: a table whose strong pairs
  form a few blocks (WDBC's size measures) has a few large eigenvalues that stand out of noise
  no single entry stands out of.

Scores, on the pairs with |C| > 0.5 (the issue's strong pairs, on the scores' scale): the
strong-pair ratio mean |Ĉ| / mean |C|, and the pair-trend proxy 1 - mean |C - Ĉ| / 2 (SDMetrics'
correlation similarity, which its Column Pair Trends averages over the same pairs), as if the
synthetic table's correlations were exactly Ĉ: what drawing rows could keep of such a release
(the release itself scores rows more coarsely, through the noisy histograms; where it is
denoised as a matrix it also shrinks them onto a smaller norm bound, which lowers the noise
relative to the signal: the end-to-end rows below can beat this oracle). Mean ± standard error
over the rounds.

Then, end to end on WDBC and CRM (whose default releases no pairs: their noise at share 0.3 is
above the limit), seeded releases (seeds 0 .. SEEDS - 1; reproducible, NOT private) of the
default, of ``correlation_share=0.3`` with each estimate (``StudyOptions(spectral_pairs=...)``)
and the rows scored as pairs read one by one are (step scores of the histograms' cells, default
norm bound: ``StudyOptions(matrix_scores=False)``, the rule before), and of
``favour="relationships"`` (the product: there the pairs at 0.3, denoised as a matrix, the rows
scored in finer cells and shrunk onto ||s||^2 <= d / 2, :func:`synthdp.postprocess.pairs.marginal_score_map`),
scored on the synthetic table against the real one: the strong-pair ratio (Pearson r, real
|r| > 0.5), the same pairs' correlation similarity 1 - mean |r - r̃| / 2 (SDMetrics' pair trend
on them), synthdp's Column Shapes (1 - mean KS) and the mean absolute error of QUERIES of the
papers' smooth queries per σ (the Tables 3–6 queries, mean instead of worst case). Last, the
settings of those matrix scores (SWEEP: bins and norm bound), the strong pairs' trend of
``favour="relationships"`` under each, on the same seeds. Writes
experiments/results/pair_limits.md (``--out``).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from common import (
    RESULTS_DIR,
    command_line,
    generated_by,
    load_dataset,
    log,
    query_set,
    score_correlation,
    true_answers,
)

from synthdp import SynthConfig
from synthdp.study import (
    CORRELATION_NOISE_LIMIT,
    SIGMAS,
    StudyOptions,
    answer_queries,
    composition,
    fit,
    ks_distances,
    nearest_correlation,
    pair_noise_sd,
    sample,
    spectral_denoise,
    strong_pairs,
)

OUT = RESULTS_DIR / "pair_limits.md"
TABLES = ("wdbc", "crm", "ctg", "pks")
EPSILON, DELTA = 1.0, 1e-10
STRONG = 0.5


def pair_noise(n: int, d: int, share: float) -> float:
    """The noise sd the package adds to each released score correlation at this share of (1, 1e-10)."""
    return float(pair_noise_sd(n, d, EPSILON, DELTA, composition(SynthConfig(epsilon=EPSILON, delta=DELTA)), share))


def noisy(correlation: np.ndarray, sd: float, rng: np.random.Generator) -> np.ndarray:
    d = len(correlation)
    noise = np.triu(rng.normal(0.0, sd, (d, d)), 1)
    return correlation + noise + noise.T


def threshold_estimate(matrix: np.ndarray, sd: float) -> np.ndarray:
    kept = np.where(np.abs(matrix) >= 2 * sd, matrix, 0.0)
    np.fill_diagonal(kept, 1.0)
    return nearest_correlation(kept)


def scores(truth: np.ndarray, estimate: np.ndarray) -> tuple[float, float]:
    upper = np.triu_indices(len(truth), 1)
    real, synthetic = truth[upper], estimate[upper]
    strong = np.abs(real) > STRONG
    ratio = float(np.abs(synthetic[strong]).mean() / np.abs(real[strong]).mean())
    trend = float(1 - np.abs(real[strong] - synthetic[strong]).mean() / 2)
    return ratio, trend


END_TO_END = ("wdbc", "crm")
VARIANTS = {"default (no pairs)": ({}, None),
            "pairs at 0.3, pair by pair, step scores": ({"correlation_share": 0.3},
                                                         StudyOptions(spectral_pairs=False, matrix_scores=False)),
            "pairs at 0.3, spectral, step scores": ({"correlation_share": 0.3},
                                                     StudyOptions(spectral_pairs=True, matrix_scores=False)),
            "--favour relationships (pairs at 0.3, spectral, matrix scores)": ({"favour": "relationships"}, None)}


def end_to_end(seeds: int, n_queries: int) -> list[str]:
    lines = []
    for name in END_TO_END:
        dataset = load_dataset(name)
        queries = query_set(name, dataset.d, n_queries)
        truth = true_answers(dataset, queries)
        real = np.corrcoef(dataset.frame.to_numpy(float), rowvar=False)
        upper = np.triu_indices(dataset.d, 1)
        for label, (options, study) in VARIANTS.items():
            rows = []
            for seed in range(seeds):
                started = time.perf_counter()
                model = fit(SynthConfig(epsilon=EPSILON, delta=DELTA, seed=seed, **options), dataset.frame,
                            bounds=dataset.bounds, study=study)
                synthetic = sample(model)
                found = np.nan_to_num(np.corrcoef(synthetic.to_numpy(float), rowvar=False))
                errors = np.abs(answer_queries(dataset.unit(synthetic), queries, SIGMAS) - truth).mean(axis=1)
                rows.append([strong_pairs(dataset.frame, synthetic)["ratio"], scores(real, found)[1],
                             1 - np.abs(real[upper] - found[upper]).mean() / 2,
                             1 - np.mean(list(ks_distances(dataset.frame, synthetic).values())), *errors,
                             time.perf_counter() - started])
            values = np.array(rows)
            mean, se = values.mean(axis=0), values.std(axis=0, ddof=1) / np.sqrt(seeds)
            cells = [f"{m:.3f} ± {e:.3f}" for m, e in zip(mean[:4], se[:4])] + [f"{m:.4f}" for m in mean[4:-1]]
            lines.append(f"| {name} | {label} | " + " | ".join(cells) + f" | {mean[-1]:.1f} |")
            log(f"{name} {label}: {cells}")
    return lines


#: the matrix scores' settings (at least this many bins, C^2 = share x d), strong pairs' trend
#: only; (1, share): the histograms' own step scores; False: the rule before (step scores,
#: C^2 = d + 2 sqrt(2d)); True is (128, 0.5)
SWEEP = {"step scores, C² = d + 2√(2d) (before)": False, "step scores, C² = d": (1, 1.0),
         "step scores, C² = d/2": (1, 0.5), "≥ 16 bins, C² = d/2": (16, 0.5), "≥ 64 bins, C² = d/2": (64, 0.5),
         "≥ 128 bins, C² = d/2 (the product)": True, "≥ 250 bins, C² = d/2": (250, 0.5),
         "≥ 128 bins, C² = d": (128, 1.0), "≥ 128 bins, C² = d/4": (128, 0.25)}


def sweep(seeds: int) -> list[str]:
    """The strong pairs' trend of ``--favour relationships`` on WDBC and CRM at (1, 1e-10) under
    each setting of SWEEP (paired seeds 0 .. seeds - 1): docs/decisions/matrix-scores.md."""
    lines = []
    for name in END_TO_END:
        dataset = load_dataset(name)
        real = np.corrcoef(dataset.frame.to_numpy(float), rowvar=False)
        for label, setting in SWEEP.items():
            trends = []
            for seed in range(seeds):
                model = fit(SynthConfig(epsilon=EPSILON, delta=DELTA, seed=seed, favour="relationships"),
                            dataset.frame, bounds=dataset.bounds, study=StudyOptions(matrix_scores=setting))
                found = np.nan_to_num(np.corrcoef(sample(model).to_numpy(float), rowvar=False))
                trends.append(scores(real, found)[1])  # the strong pairs' trend
            values = np.array(trends)
            lines.append(f"| {name} | {label} | {values.mean():.3f} ± {values.std(ddof=1) / np.sqrt(seeds):.3f} |")
            log(f"{name} {label}: {values.mean():.3f}")
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--shares", type=float, nargs="+", default=[0.3, 1.0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--seeds", type=int, default=5, help="seeded releases per variant, end to end (0: none)")
    parser.add_argument("--queries", type=int, default=300, help="smooth queries per table, end to end")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    lines = []
    for name in TABLES:
        values = load_dataset(name).frame.to_numpy(dtype=float)
        n, d = values.shape
        truth = score_correlation(values)
        upper = np.triu_indices(d, 1)
        k = int((np.abs(truth[upper]) > STRONG).sum())
        eigenvalues = np.linalg.eigvalsh(truth)[::-1]
        for share in args.shares:
            sd = pair_noise(n, d, share)
            rng = np.random.default_rng([args.seed, d, int(share * 1000)])
            found: dict[str, list[tuple[float, float]]] = {"independent": [], "threshold 2 sd": [], "spectral": []}
            for _ in range(args.rounds):
                matrix = noisy(truth, sd, rng)
                found["independent"].append(scores(truth, np.eye(d)))
                found["threshold 2 sd"].append(scores(truth, threshold_estimate(matrix, sd)))
                found["spectral"].append(scores(truth, spectral_denoise(matrix, sd)))
            for method, pairs in found.items():
                ratio, trend = np.array(pairs).T
                se = np.sqrt(args.rounds)
                lines.append(f"| {name} | {n} | {d} | {k} | {eigenvalues[0]:.1f}, {eigenvalues[1]:.1f} | {share:g} | "
                             f"{sd:.3f} | {method} | {ratio.mean():.3f} ± {ratio.std(ddof=1) / se:.3f} | "
                             f"{trend.mean():.3f} ± {trend.std(ddof=1) / se:.3f} |")
            log(f"{name} share {share}: sd {sd:.3f} done")
    text = (f"# The limit of a private release of all pairs at (1, 10⁻¹⁰)\n\n"
            f"{generated_by(command_line('pair_limits.py', argv))}; {(time.perf_counter() - started):.0f} s; "
            f"{args.rounds} rounds of noise per cell, mean ± standard error.\n\n"
            "An oracle study (experiments/pair_limits.py's docstring): the exact correlation C of each table's rank "
            "normal scores (NOT private) plus the Gaussian noise synthdp's pairs release adds at that share of the "
            "budget (replace-one rows, the package's sensitivity and default clip), estimated three ways; the scores "
            f"are over the *k* pairs with \\|C\\| > {STRONG}, as if the synthetic correlations were the estimate. "
            f"The default releases pairs only when the noise sd at share 0.3 is at most {CORRELATION_NOISE_LIMIT} "
            "(CORRELATION_NOISE_LIMIT). Eigenvalues: the two largest of C.\n\n"
            "| table | n | d | *k* | eigenvalues | share | noise sd | estimate | strong-pair ratio | pair-trend proxy |\n"
            "|---|---:|---:|---:|---|---:|---:|---|---:|---:|\n" + "\n".join(lines) + "\n")
    if args.seeds:
        text += ("\n## End to end: WDBC and CRM at (1, 10⁻¹⁰)\n\n"
                 f"Seeds 0-{args.seeds - 1} (seeded noise: reproducible, not private), mean ± standard error; "
                 f"{args.queries} smooth queries per table (mean absolute error per σ, 0 the best); pair trend: "
                 "1 - mean \\|r - r̃\\| / 2 over the real pairs with \\|r\\| > 0.5 (SDMetrics' correlation "
                 "similarity on them), and over all pairs (synthdp's own pair trends on a numeric table)."
                 "\n\n| table | variant | strong-pair ratio | pair trend, strong pairs | pair trend, all pairs | shapes | "
                 + " | ".join(f"σ={sigma:g}" for sigma in SIGMAS) + " | s / release |\n|---|---|---:|---:|---:|---:|"
                 + "---:|" * len(SIGMAS) + "---:|\n" + "\n".join(end_to_end(args.seeds, args.queries)) + "\n")
        text += ("\n## The matrix scores' settings: WDBC and CRM, `--favour relationships` at (1, 10⁻¹⁰)\n\n"
                 f"Seeds 0-{args.seeds - 1} as above, paired across settings; the strong pairs' trend (1 - mean "
                 "\\|r - r̃\\| / 2 over the real pairs with \\|r\\| > 0.5). Where the pairs are denoised as a "
                 "matrix the rows are scored in finer cells (each bin split until there are at least that many) "
                 "and shrunk onto \\|\\|s\\|\\|² ≤ C² (`StudyOptions(matrix_scores=(bins, share))`; "
                 "docs/decisions/matrix-scores.md).\n\n| table | setting | pair trend, strong pairs |\n|---|---|---:|\n"
                 + "\n".join(sweep(args.seeds)) + "\n")
    args.out.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
