"""Choices of the default measured against their alternatives, at several privacy levels.

``--study split``: how the budget is split between the copula's histograms and the moments.
The package default against the histograms' share (``marginals_share``) fixed at 0.3, 0.5,
0.7 and 0.9 (the pairs' share, when the default releases them, left at its default).
The table gives the noise standard deviation of one moment at the histograms' share of 0.5,
the quantity :func:`synthdp.pipeline.plan.copula_shares` compares with ``MOMENT_NOISE_LIMIT``.

``--study atoms``: which atoms (point masses at a column's bounds) the copula keeps. The
default drops an atom whose noisy count is below ``ATOM_THRESHOLD`` = 2 noise standard
deviations (:meth:`synthdp.postprocess.copula.Marginals.probabilities`); the alternatives keep every atom
(the projection alone decides, as before) or use 1 or 3.

``--study basis``: how many moments R the release holds. The default is the paper's R
(Appendix A.5) raised to 2d, so that every column's T_1 and T_2 moments are released
(:func:`synthdp.pipeline.plan.auto_n_basis`); the alternatives are the paper's R raised to d only
(the default before), and R fixed at d (the column means), 2d and 4d. One release answers
every σ, and the trade-off is between them: more moments describe rough queries (σ = 2)
better, fewer moments carry less noise each, which smooth queries (σ >= 4) need.

``--study pairs``: how the copula's latent correlation matrix is made from the pairs release
(the means of products of normal scores, :mod:`synthdp.postprocess.pairs`). The default keeps
a pair whose released score correlation reaches ``THRESHOLD`` = 2 noise standard deviations
and fits the rest by the Monte Carlo fixed point, projecting with the nearest correlation
matrix after each step; the alternatives keep pairs from 1 or 3 noise sd, replace the
projection by one eigenvalue clip, or release no pairs at all (``correlation_share`` 0: the
candidates' columns are independent, and the moments measure the basis's pair products, as
before the pairs release). Pairs are released where their noise on a correlation is at
most 0.25 (PKS and CTG at (1, 1e-10); every table at larger epsilon); elsewhere the
variants coincide.

``--study favour``: ``--favour relationships`` against the default (``smooth``). Where the pairs
are released, the default leaves the basis's pair moments x_i x_j to the pairs release and
fits the moments alone; ``relationships`` releases every moment of degree <= 2 (pairs
included) and adds the histograms' cells to the LP's rows, as mixed tables do. Where the
default releases no pairs (their noise above the pair-by-pair limit), ``relationships``
releases them at a share of 0.3, denoised as a matrix, unless no correlation matrix could
stand out of that noise; there the two coincide.

``--study column-tilts``: where a tilted copula fit is rearranged onto its one-way marginals
(every row of its LP one column's moment), those marginals come from one tilt of all the rows
(the default) or from one tilt per column of that column's rows alone
(:func:`synthdp.postprocess.lp.column_tilt_weights`), which does not let the candidates'
dependence couple the columns' fitted moments.

``--study pair-entropy``: pairs read one by one, the copula's latent correlation after the fixed
point. The default replaces it by the correlation matrix of largest determinant within 0.1
noise sd of each kept pair (0 where the LP also fits their product moments: mixed tables and
``favour="relationships"``, which this study does not run) and 1 noise sd of the others
(:func:`synthdp.postprocess.pairs.max_entropy_correlation`, :func:`synthdp.postprocess.pairs.entropy_boxes`);
the alternatives keep the fixed point's matrix (before), or use other boxes everywhere: the
kept pairs fixed (0), or within 0.25 noise sd, the others within 2. Where no pairs are
released, or they are denoised as a matrix, the variants coincide.

``--study tilt-without-pairs``: where the copula's candidates come without a pairs release (their
columns independent), the default tilts the LP's optimum toward them wherever the moments' noise
is within ``MOMENT_NOISE_LIMIT`` (:func:`synthdp.pipeline.run.tilts`); the alternative blends the
optimum with the uniform distribution there, as before. Where the moments get a tenth of the
budget, or the pairs are released, the two coincide (PKS at epsilon = 1 and (0.25, 1e-10), CTG at
epsilon = 2 and 4, CRM and WDBC at (4, 1e-10) differ).

``--study blend-rearranged``: where the LP's optimum is blended with the uniform distribution
(``--tilt 0`` here, so that every cell blends) and every moment is one column's, the product
rearranges the candidates onto the blend's one-way marginals (:func:`synthdp.pipeline.run.rearranges`);
the alternative keeps the blend's weights, whose optimum part repeats at most R + 1 candidates
(before). The default (a tilt, or a blend that reaches the uniform distribution) beside them.

``--study pair-fdr``: pairs read one by one. The default keeps a pair whose released score
correlation reaches 2 noise sd only where the Benjamini–Hochberg procedure at false discovery
rate 0.1 also selects it (:func:`synthdp.postprocess.pairs.false_discovery_keep`); the
alternatives keep every pair from 2 sd (before) or select at rates 0.05 and 0.2. The column
"invented pairs" counts what the rule is for: pairs the data do not relate (|r| < 0.1) that
the synthetic table shows above |r| = 0.3.

``--study quiet-clip``: pairs read one by one with noise on a correlation above half the limit
(CORRELATION_NOISE_LIMIT / 2 = 0.125) at the default norm bound C^2 = d + 2 sqrt(2d). The default
lowers the bound until the noise is at that margin, not below C^2 = d
(:func:`synthdp.pipeline.plan.pairs_clip_norm_sq`); the alternative keeps the default bound (before).
Elsewhere the variants coincide (CTG at (1, 1e-10), PKS at (0.5, 1e-10) and WDBC at (8, 1e-10)
differ among the benchmark tables).

``--study pairs-test``: where the pairs' noise on a correlation at a share of 0.3 is above the
pair-by-pair limit (and the noise is Gaussian), the default releases none; the alternatives spend
0.05 of the budget on a private test of whether a block of related columns stands out of it and
release the pairs, denoised as a matrix, only where one does
(``StudyOptions(pairs_test=True)``, :func:`synthdp.pipeline.plan.pairs_test_planned`), or release
them always (``--favour relationships``). The variant's label says in
how many rounds the pairs were released. Elsewhere the variants coincide (``relationships``
apart: it also adds the pair moments where the pairs are read one by one).

``--study matrix-means``: where the pairs are denoised as a matrix (``--favour relationships`` on a
table whose pairs' noise is above the pair-by-pair limit), the release holds the means of the
products of the rows' normal scores (the product); the alternatives also release the scores' means
beside them, with weight c^2 = 0.125 or 0.25 of the norm bound C^2
(``StudyOptions(matrix_means=...)``), and fit the copula's model to covariances: without them, a
skewed column's finer scores do not average 0 and the products hold m m^T, a block no dependence
made (docs/decisions/score-means.md). The default (no pairs on such tables) is the first row.

``--study block-edges``: pairs read one by one. The default reads a column's pairs into a block of
tied columns (kept pairs of |r| >= 0.5 that stand 4 noise sd out, three or more connected) from the
block as a whole: it keeps them only where the column's pooled relation to the block is selected at
the false discovery rate, and gives the members it has no kept pair with the block's reading
(:func:`synthdp.postprocess.pairs.block_edges_pooled`); since 2026-11-28 (commit d4409c8), under
Laplace noise, a column not selected also keeps no pair with the columns selected for the block.
The alternatives: that under Gaussian noise too (``StudyOptions(extend_blocks="always")``), pairs
into the tied members only (``"never"``, the rule until that commit), and every selected pair as
released and nothing else (before). The column "invented pairs" counts what it is for.

``--study sensitivity``: the noise of the moments. The default calibrates it to their derived
sensitivity (:func:`synthdp.privacy.sensitivity.moments_sensitivity`: a column's T_1 and T_2 cannot both
move by 2 when one row changes, so R = 2d moments cost 3.13 d/n in l1 and 2.27 sqrt(d)/n in
l2); the alternative is the bound for any R functions with values in [-1, 1], 2R/n and
2 sqrt(R)/n, used before. Same privacy guarantee, 9-22 % more noise on the benchmarks.

``--study oracle``: where the default's error comes from, a diagnosis that is NOT private.
Each variant replaces the private inputs of one or more stages (the copula's histograms, the
pairs release, the moments) by their exact values (``StudyOptions.exact_stages``), with
everything else as in the default (the same noise draws elsewhere, the same post-processing,
which still assumes the budgeted noise). A stage whose exact value lowers the error a lot is
the one whose noise limits the default; one whose exact value changes nothing is either
limited by the model (the copula) or not used by the table (see the note on the blend in the
results file).

Every variant is a set of SynthConfig keys and a :class:`synthdp.pipeline.run.StudyOptions`
(the public options of the design studies; its defaults are the product), fitted with
:func:`synthdp.pipeline.run.fit` and sampled with :func:`synthdp.pipeline.run.sample`.
Each variant is fitted ``--rounds`` times per dataset of data/ and scored by the
worst-case relative error over random sums of 10 Gaussian kernels (docs/mechanism.md §5),
σ ∈ {2, 4, 6, 8, 10}, and by the strong-pair ratio (the mean synthetic |r| of the pairs with
real |r| > 0.5 over the real one), mean over rounds. Round r of every variant uses the seeded noise stream
``seed + r`` (numpy, NOT private), so the variants see the same draws and their differences
are not noise of the comparison. Bounds are each column's min and max, *taken as public*.

Usage::

    python experiments/design_choices.py --study split     # 4 levels, 5 rounds, 2000 queries (about 4 min)
    python experiments/design_choices.py --study atoms
    python experiments/design_choices.py --study basis --levels 0.25,0 1,0 0.25,1e-10 1,1e-10 4,1e-10 16,1e-10
    python experiments/design_choices.py --study atoms --levels 1,1e-10 --datasets wdbc
    python experiments/design_choices.py --study oracle --levels 1,0 1,1e-10 --rounds 10
    python experiments/design_choices.py --study pairs --levels 1,1e-10 4,1e-10 16,1e-10 --rounds 10
    python experiments/design_choices.py --study rearrange --levels 1,1e-10 4,1e-10 --rounds 10
    python experiments/design_choices.py --study sensitivity --levels 0.25,1e-10 1,0 1,1e-10 4,1e-10
"""

from __future__ import annotations

import argparse
import math
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import numpy as np
from common import (
    BOUNDS_NOTE,
    DATASETS,
    QUERY_SEED,
    RESULTS_DIR,
    SHAPED,
    Dataset,
    command_line,
    generated_by,
    load_dataset,
    log,
    query_set,
    shaped_dataset,
    true_answers,
)

from synthdp import SynthConfig, SynthDPError
from synthdp.study import (
    SIGMAS,
    FittedModel,
    StudyOptions,
    answer_queries,
    bounded_means_sensitivity,
    correlation_error,
    fit,
    invented_pairs,
    ks_distances,
    make_plan,
    nearest_correlation,
    paper_n_basis,
    privacy_report,
    sample,
    strong_pairs,
    worst_case_errors,
)

LEVELS = ("0.25,0", "1,0", "0.25,1e-10", "1,1e-10")


@dataclass(frozen=True)
class Variant:
    """One alternative to the default: SynthConfig keys (or a function of the paper's R
    (Appendix A.5) and d returning them), and the :class:`synthdp.pipeline.run.StudyOptions` of
    its fits (the copula's post-processing, the moments' release, and the stages whose exact
    values replace the noisy ones: the oracle study only, not private)."""

    keys: dict | Callable[[int, int], dict] = field(default_factory=dict)
    study: StudyOptions = StudyOptions()

    def config_keys(self, paper_r: int, d: int) -> dict:
        """The SynthConfig keys of this variant for a table of d columns whose paper's R is ``paper_r``."""
        return self.keys(paper_r, d) if callable(self.keys) else dict(self.keys)


def generic_moments_sensitivity(indices: np.ndarray, n: int) -> tuple[float, float]:
    """The rule before: the sensitivity of any R functions with values in [-1, 1], 2R/n in l1 and 2 sqrt(R)/n in l2."""
    return bounded_means_sensitivity(len(indices), n)


EIGENVALUE_CLIP = partial(nearest_correlation, iterations=0)  # one clip, rescaled to a unit diagonal


STUDIES = {
    "split": {"default": Variant(),
              **{f"histograms {share:g}": Variant({"marginals_share": share}) for share in (0.3, 0.5, 0.7, 0.9)}},
    "atoms": {"default (2 sd)": Variant(), "every atom kept": Variant(study=StudyOptions(atom_threshold=-math.inf)),
              **{f"{sd:g} sd": Variant(study=StudyOptions(atom_threshold=sd)) for sd in (1.0, 3.0)}},
    "basis": {"default (paper's R, at least 2d)": Variant(),
              "paper's R, at least d": Variant(lambda paper_r, d: {"n_basis": max(paper_r, d)}),
              "R = d": Variant(lambda paper_r, d: {"n_basis": d}),
              "R = 2d": Variant(lambda paper_r, d: {"n_basis": 2 * d}),
              "R = 4d": Variant(lambda paper_r, d: {"n_basis": 4 * d})},
    "pairs": {"default (pairs from 2 noise sd, released variances, nearest correlation)": Variant(),
              "the copula's variances, one common factor (before)": Variant(study=StudyOptions(pair_variances="model")),
              "pairs from 1 noise sd": Variant(study=StudyOptions(pair_threshold=1.0)),
              "pairs from 3 noise sd": Variant(study=StudyOptions(pair_threshold=3.0)),
              "eigenvalue clip instead of the nearest correlation": Variant(study=StudyOptions(nearest=EIGENVALUE_CLIP)),
              "no pairs release (before)": Variant({"correlation_share": 0.0})},
    "favour": {"default (--favour smooth)": Variant(), "--favour relationships": Variant({"favour": "relationships"})},
    "weak-pairs": {"default (pairs 0.5 where 0.3 leaves their noise above half the limit)": Variant(),
                   "pairs 0.3, histograms 0.3 (before)": Variant({"correlation_share": 0.3, "marginals_share": 0.3})},
    "rearrange": {"default (tilted fit rearranged onto its one-way marginals)": Variant(),
                  "the tilt's weights (before)": Variant(study=StudyOptions(rearrange=False))},
    "column-tilts": {"default (one tilt of every row)": Variant(),
                     "one tilt per column": Variant(study=StudyOptions(column_tilts=True)),
                     "--favour relationships": Variant({"favour": "relationships"}),
                     "--favour relationships, one tilt per column": Variant({"favour": "relationships"},
                                                                            StudyOptions(column_tilts=True))},
    "pair-entropy": {"default (largest entropy within 0.1 sd of a kept pair, 1 sd of the others)": Variant(),
                     "the fixed point's matrix (before)": Variant(study=StudyOptions(pair_entropy=False)),
                     "kept pairs fixed, others within 1 sd": Variant(study=StudyOptions(pair_entropy=(0.0, 1.0))),
                     "kept within 0.25 sd, others within 1 sd": Variant(study=StudyOptions(pair_entropy=(0.25, 1.0))),
                     "kept pairs fixed, others within 2 sd": Variant(study=StudyOptions(pair_entropy=(0.0, 2.0)))},
    "pairs-test": {"default (no pairs where their noise is above the limit)": Variant(),
                   "the pairs test (released where it finds a block)": Variant(study=StudyOptions(pairs_test=True)),
                   "--favour relationships (always released)": Variant({"favour": "relationships"})},
    "tilt-without-pairs": {"default (tilt where the moments' noise is within the limit)": Variant(),
                           "the blend wherever no pairs are released (before)": Variant(
                               study=StudyOptions(tilt_without_pairs=False))},
    "blend-rearranged": {"default": Variant(),
                         "--tilt 0: the blend rearranged onto its one-way marginals (the product)": Variant(
                             {"tilt": 0.0}),
                         "--tilt 0: the blend's weights (before)": Variant(
                             {"tilt": 0.0}, StudyOptions(rearrange_blend=False))},
    "pair-fdr": {"default (from 2 noise sd, selected at false discovery rate 0.1)": Variant(),
                 "every pair from 2 noise sd (before)": Variant(study=StudyOptions(pair_fdr=None)),
                 **{f"selected at false discovery rate {q:g}": Variant(study=StudyOptions(pair_fdr=q))
                    for q in (0.05, 0.2)}},
    "matrix-means": {"default": Variant(),
                     "--favour relationships (the products only: the product)": Variant({"favour": "relationships"}),
                     **{f"--favour relationships, the scores' means beside them (c^2 = {share:g} C^2)": Variant(
                         {"favour": "relationships"}, StudyOptions(matrix_means=share)) for share in (0.125, 0.25)}},
    "block-edges": {"default (pairs into a block read from the block as a whole)": Variant(),
                    "the columns selected count as members under either noise": Variant(
                        study=StudyOptions(extend_blocks="always")),
                    "pairs into the tied members only (until 2026-11-28)": Variant(study=StudyOptions(extend_blocks="never")),
                    "every selected pair as released (before)": Variant(study=StudyOptions(block_edges=False))},
    "quiet-clip": {"default (the pairs' norm bound lowered to half the noise limit, not below d)": Variant(),
                   "the default bound d + 2 sqrt(2d) (before)": Variant(study=StudyOptions(quiet_clip=False))},
    "sensitivity": {"default (derived sensitivity)": Variant(),
                    "generic sensitivity 2R/n, 2 sqrt(R)/n (before)": Variant(
                        study=StudyOptions(moments_sensitivity=generic_moments_sensitivity))},
    "oracle": {"default": Variant(), "exact histograms": Variant(study=StudyOptions(exact_stages=("marginals",))),
               "exact pairs": Variant(study=StudyOptions(exact_stages=("correlation",))),
               "exact moments": Variant(study=StudyOptions(exact_stages=("moments",))),
               "exact histograms and pairs": Variant(study=StudyOptions(exact_stages=("marginals", "correlation"))),
               "all exact": Variant(study=StudyOptions(exact_stages=("marginals", "correlation", "moments")))},
}
TITLES = {"split": "Budget split between the histograms and the moments",
          "atoms": "Atoms kept by the copula's histograms",
          "basis": "Number of moments R",
          "pairs": "The copula's latent correlation from the pairs release",
          "weak-pairs": "The pairs' share where 0.3 leaves a strong pair fewer than four noise sd above 0",
          "rearrange": "A tilted copula fit: its weights, or its candidates rearranged onto its one-way marginals",
          "column-tilts": "A rearranged fit's one-way marginals: from one tilt of every row, or one tilt per column",
          "favour": "What the default favours where the pairs are released: the smooth queries or the relationships",
          "pair-entropy": "Pairs read one by one: the fixed point's latent correlation, or the one of largest entropy near it",
          "pairs-test": "Where the pairs' noise is above the pair-by-pair limit: released where a private test finds a block, never, or always",
          "tilt-without-pairs": "Copula candidates without a pairs release: the LP's optimum tilted toward them, or blended with the uniform distribution",
          "blend-rearranged": "A blended copula fit (--tilt 0): its weights, or its candidates rearranged onto its one-way marginals",
          "pair-fdr": "Pairs read one by one: kept from 2 noise sd, or also selected by the Benjamini–Hochberg procedure",
          "matrix-means": "Pairs denoised as a matrix: the scores' means released beside their products, or the products only",
          "block-edges": "Pairs read one by one: a column's pairs into a block of tied columns, from the block as a whole or one by one",
          "sensitivity": "The moments' sensitivity: derived for the Chebyshev basis, or that of any R bounded functions",
          "quiet-clip": "Pairs read one by one: the norm bound on a row's scores lowered where their noise is above half the limit",
          "oracle": "Where the error comes from: private inputs replaced by exact ones (a diagnosis, not private)"}

NOTES = {"oracle": "Not private: each variant hands exact values on from the stages it names. The "
                   "post-processing still assumes the budgeted noise; in particular the blend's tolerance "
                   "(synthdp.postprocess.lp.blend_with_uniform) follows it, so where the moments get 0.1 of the budget the "
                   "blend takes the table all the way to the candidates, and the moments, noisy or exact, do "
                   "not change it.\n\n"}


def fit_variant(variant: Variant, dataset: Dataset, epsilon: float, delta: float, seed: int) -> FittedModel:
    """One seeded fit of ``variant`` on ``dataset`` (bounds taken as public), through the pipeline's public API."""
    paper_r = paper_n_basis(dataset.n, dataset.d, SynthConfig().smoothness, delta)
    config = SynthConfig(epsilon=epsilon, delta=delta, seed=seed, **variant.config_keys(paper_r, dataset.d))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the known-seed warning (and the oracle's not-private one), once per fit
        return fit(config, dataset.frame, bounds=dataset.bounds, study=variant.study)


def moment_noise_sd(epsilon: float, delta: float, n: int, d: int) -> float:
    """Noise sd of one moment when the histograms get 0.5 and no pairs are released."""
    plan = make_plan(SynthConfig(epsilon=epsilon, delta=delta, marginals_share=0.5, correlation_share=0.0), n, d, True)
    return plan.budget.stage("moments").means_noise_sd(plan.n_basis, n)


def run(study: str, name: str, epsilon: float, delta: float, rounds: int, n_queries: int, query_seed: int,
        seed: int) -> list[str]:
    dataset = shaped_dataset(name) if name in SHAPED else load_dataset(name)
    queries = query_set(name, dataset.d, n_queries, query_seed)
    true = true_answers(dataset, queries)
    sd = moment_noise_sd(epsilon, delta, dataset.n, dataset.d)
    lines = []
    for label, variant in STUDIES[study].items():
        errors, ratios, shapes, trends, invented, repeated, released = [], [], [], [], [], [], 0
        try:
            for round_index in range(rounds):
                model = fit_variant(variant, dataset, epsilon, delta, seed + round_index)
                released += model.release.noisy_scores is not None
                synthetic = sample(model)
                answers = answer_queries(dataset.unit(synthetic), queries, SIGMAS)
                errors.append(worst_case_errors(true, answers, queries.alpha).relative)
                ratios.append(strong_pairs(dataset.frame, synthetic)["ratio"])
                shapes.append(1.0 - np.mean(list(ks_distances(dataset.frame, synthetic).values())))
                trends.append(1.0 - correlation_error(dataset.frame, synthetic)["mean"] / 2.0)
                invented.append(invented_pairs(dataset.frame, synthetic)["invented"])
                repeated.append(float(synthetic.duplicated().mean()))
        except SynthDPError as error:  # a share the pairs leave no room for
            log(f"{name} {label}: {error}")
            continue
        parameters = privacy_report(model)["parameters"]
        stages = parameters["budget"]["stages"]
        shares = " / ".join(f"{stages.get(stage, {}).get('share', 0):.2g}" for stage in ("marginals", "correlation", "moments"))
        cells = " | ".join(f"{value:.4f}" for value in np.mean(errors, axis=0))
        kept = f"{np.mean(ratios):.3f}" if None not in ratios else "n/a"
        shown = f"{label}; pairs released in {released} of {rounds} rounds" if study == "pairs-test" else label
        lines.append(f"| {name} | {sd:.3f} | {shown} | {parameters['R']} | {shares} | {cells} | {kept} "
                     f"| {np.mean(shapes):.3f} | {np.mean(trends):.3f} | {np.mean(invented):.1f} | {np.mean(repeated):.3f} |")
        log(lines[-1])
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--study", choices=sorted(STUDIES), required=True)
    parser.add_argument("--levels", nargs="+", default=list(LEVELS), help="privacy levels as EPSILON,DELTA")
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS + SHAPED)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--queries", type=int, default=2000)
    parser.add_argument("--query-seed", type=int, default=QUERY_SEED)
    parser.add_argument("--seed", type=int, default=1000, help="first noise seed (numpy, NOT private)")
    parser.add_argument("--out", type=Path, default=None, help="results file (default: results/design_STUDY.md)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    header = ["| dataset | moment noise sd at 0.5 | variant | R | shares: histograms / pairs / moments | "
              + " | ".join(f"rel σ={s:g}" for s in SIGMAS) + " | strong-pair ratio | shapes | pair trends | invented pairs | repeated rows |",
              "|---|---:|---|---:|---|" + "---:|" * (len(SIGMAS) + 5)]
    sections = []
    for level in args.levels:
        epsilon, delta = (float(value) for value in level.split(","))
        rows = [line for name in args.datasets
                for line in run(args.study, name, epsilon, delta, args.rounds, args.queries, args.query_seed, args.seed)]
        sections.append(f"## (ε, δ) = ({epsilon:g}, {delta:g})\n\n" + "\n".join(header + rows) + "\n")
    out = args.out or RESULTS_DIR / f"design_{args.study}.md"
    out.write_text(
        f"# {TITLES[args.study]}\n\n"
        + generated_by(command_line("design_choices.py", argv))
        + f"; {(time.perf_counter() - start) / 60:.1f} min. {args.rounds} rounds, {args.queries} queries, "
        "worst-case relative error, strong-pair ratio (synthdp.evaluation.metrics.strong_pairs; n/a: no pair with |r| > 0.5), "
        "shapes (mean 1 − KS over the columns), pair trends (1 − mean |r real − r synthetic| / 2 over every pair) and invented pairs (synthdp.evaluation.metrics.invented_pairs: pairs with real |r| < 0.1 and synthetic |r| > 0.3) and repeated rows (the share of synthetic rows equal to an earlier one; the real tables have none, or nearly none), mean over rounds; round r of every variant uses the seeded noise "
        f"stream {args.seed} + r (numpy, not private), so the variants see the same draws. Defaults: the "
        "histograms take all but 0.1 of the budget when the moment noise sd exceeds MOMENT_NOISE_LIMIT = 0.1 "
        "(synthdp.pipeline.plan.copula_shares); atoms below ATOM_THRESHOLD = 2 noise sd are dropped "
        "(synthdp.postprocess.copula.Marginals.probabilities); R is the paper's R raised to 2d (synthdp.pipeline.plan.auto_n_basis).\n\n" + NOTES.get(args.study, "") + BOUNDS_NOTE + "\n\n" + "\n".join(sections),
        encoding="utf-8")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
