"""Copies of a release that carry its uncertainty: a parametric bootstrap of the whole mechanism.

A statistic computed on one synthetic table has three sources of error: the real table is a
sample of its population, the release adds noise, and the synthesis (candidates, LP, sampling)
adds its own. synthdp knows the mechanism exactly and its fit estimates the population, so it
can simulate all three, as post-processing of the one release (Neunhoeffer, Sheldon & Smith,
*Bootstrap-based, general-purpose statistical inference from differentially private releases*;
Ferrando, Wang & Sheldon, *Parametric bootstrap for differentially private confidence
intervals*): each copy

1. draws a population table of the release's n rows from the fitted distribution (the
   estimate of the population);
2. runs the release's mechanism on it, with the same plan, shares and calibration: the same
   statistics, fresh noise of the same scale (public randomness: nothing private is read); where
   the release chose the pairs it measures, the copy measures the pairs it chose
   (``StudyOptions.chosen_pairs``), public once released, rather than choosing again: the intervals
   are conditional on the choice, and a measured pair's spread over the copies is its measurement's
   noise, not that of a choice that leaves it out of most copies (docs/inference-coverage.md);
3. fits and samples it as the release was fitted and sampled.

So the copies' statistic varies as the release's does around the truth (the bootstrap
principle), and their mean departs from the fitted distribution's as the release's departs from
the truth: :func:`synthdp.infer` turns both into an estimate corrected for that bias, a standard
error and an interval. No copy reads the data or spends budget: the input of each is a sample
of the fitted distribution.

The fitted distribution the copies start from, and each copy's own fit, keep every pair the
release measured at its noisy reading (:data:`INFERENCE`: no threshold, no false-discovery
control), where the synthetic table the release hands out keeps a pair only where it stands out
of its noise. A threshold sets a weak dependence to 0 in the fitted distribution and in every
copy alike, so the copies' spread says nothing of its uncertainty and the bias correction sees
no bias: a bootstrap fails at a threshold, as for any estimator that sets small values to 0. At
its noisy reading, the pair's noise is in the copies. Two thresholds of a mixed table are of the
same kind, and the copies leave them out too: the tilt's noise box
(:func:`synthdp.pipeline.run.tilt_box`: moments of noise sd above MOMENT_NOISE_LIMIT held within the
universal threshold), which keeps each copy near its candidates' independence wherever the
moments are mostly noise, and the categorical trees' edge threshold
(:data:`synthdp.postprocess.candidates.EDGE_Z`), which draws the levels of two columns
independently unless their 2-way table stands out of its noise. Measured (200 releases of 2 000
rows each, docs/inference-coverage.md): without the pairs' threshold the coverage of OLS and
logistic coefficients of pairs below it rose from .37-.68 to .81-.94 (CTG's .435 to .81, its
interval twice as wide); without the noise box and the edge threshold, adult's logistic
coefficients of income (pairs its release does not measure at this n: flagged) from 0 and 0 to
.32 and .11, the other statistics .85-.97 before and .885-.97 after.
Measured: docs/decisions/copies-thresholds.md, docs/decisions/copies-chosen-pairs.md.

By privacy unit, a copy's population carries synthetic units, as the release's synthetic table
does: identifiers drawn with the released numbers of units per contribution size
(:func:`synthdp.domain.units.synthetic_units`), so each copy bounds and noises its statistics by
unit as the release did. A synthetic unit's rows are independent draws of the fitted
distribution, where a real unit's (a patient's visits) are often alike: the copies carry the
privacy noise by unit, not the part of the sampling variance that comes from a unit's rows being
alike (docs/inference.md).

The copies need the release itself (its noisy statistics, plan and configuration), not only the
fitted distribution: a fit in this process has it, and so does a model file of format version 4
(:mod:`synthdp.pipeline.release_file`), from which copies are made in any process, the same copies
under the same seed.
"""

from __future__ import annotations

import sys
import time
import warnings
from dataclasses import replace

import numpy as np
import pandas as pd
from tqdm import tqdm

from synthdp.errors import SynthDPError
from synthdp.evaluation.inference import REFERENCE_FACTOR, Copies
from synthdp.evaluation.options import MAX_COPIES
from synthdp.pipeline import run
from synthdp.pipeline.model import SamplingModel, check_output_size, check_rows, draw, kept_release
from synthdp.pipeline.plan import MOMENT_NOISE_LIMIT
from synthdp.pipeline.progress import StageTracker

#: The post-processing of the copies' fitted distribution and of each copy: every measured pair at
#: its noisy reading (a pair read one by one or a selected pair is kept from 0 noise sd, without the
#: false discovery control), and a mixed table's tilt holding every moment within the same box
#: (no noise box) and its categorical trees taking every 2-way table as a candidate edge (no
#: edge threshold), the rest as the product (module docstring).
INFERENCE = run.StudyOptions(pair_threshold=0.0, pair_fdr=None, noise_box=False, tree_edges=False)
NO_RELEASE = ("copies rerun the release's mechanism, and this model file does not hold the release (written before "
              "synthdp kept it, format version 3 or earlier): fit again, or make copies where it is fitted")


def check_copies_count(copies: object, name: str = "copies") -> None:
    """Refuse a count of copies that is no integer from 2 (a standard error needs two) to
    :data:`MAX_COPIES`; ``name``: the option as the caller knows it (``--copies`` on the command line,
    which checks it before the fit)."""
    if not (isinstance(copies, (int, np.integer)) and not isinstance(copies, bool) and 2 <= copies <= MAX_COPIES):
        raise SynthDPError(f"{name} must be an integer from 2 to {MAX_COPIES} (a standard error needs at least two)")


def release_copies(fitted: run.FittedModel | SamplingModel, copies: int, n_rows: int | None,
                   rng: np.random.Generator, progress: bool = False) -> Copies:
    """``copies`` synthetic tables of ``n_rows`` rows (default the release's n), each from a refit of
    the mechanism on a population drawn from the fitted distribution (module docstring), with the
    reference sample and the seconds per copy. ``fitted``: a fit of this process, or a model file's
    model that holds its release. ``rng``: public randomness for the populations, the noise and the
    sampling."""
    check_copies_count(copies)
    if n_rows is not None:
        check_rows(n_rows)  # before the first refit, not after it
    if isinstance(fitted, SamplingModel):
        kept = kept_release(fitted)
        if kept is None:
            raise SynthDPError(NO_RELEASE)
        release, config = kept
    else:
        release, config = fitted.release, fitted.config
    model = inference_model(fitted, release, config, rng)
    # the released domain and levels are public; the populations are tables in memory, read by the numpy engine
    # (a file's configuration names how its fit read its input: no Dask scheduler of its address is reached)
    config = replace(config, bounds_share=0.0, levels_share=0.0, engine="numpy", scheduler=None, chunk_rows=None)
    bounds, schema = (release.domain, None) if release.schema is None else (None, release.schema)
    # at least REFERENCE_FACTOR blocks of a copy's rows (infer's theta_0 is the statistic's mean over them)
    reference_rows = REFERENCE_FACTOR * max(release.plan.n, 0 if n_rows is None else int(n_rows))
    check_copies_size(copies, release.plan.n if n_rows is None else int(n_rows), len(model.names), reference_rows)
    reference = draw(model, reference_rows, rng)
    # the release's own plan (the same n, budget and basis); a design study's pairs test is planned afresh
    planned = release if release.plan.pairs_test is None else None
    study = INFERENCE
    if release.selected_pairs is not None:  # the pairs the release chose, public: each copy measures those
        study = replace(INFERENCE, chosen_pairs=tuple((int(i), int(j)) for i, j in np.asarray(release.selected_pairs.pairs)))
    out: list[pd.DataFrame] = []
    start = time.perf_counter()
    # one bar counting the copies (shown once they take more than a second), not each refit's stages
    for _ in tqdm(range(copies), desc="synthdp copies", unit="copy", file=sys.stderr, disable=not progress,
                  leave=False, delay=1.0):
        population = draw(model, release.plan.n, rng)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the refit's known-seed warning: its noise is public randomness here
                refit = run.fit(replace(config, seed=int(rng.integers(2**63))), population, bounds, schema=schema,
                                progress=False, planned=planned, study=study)
            out.append(run.sample(refit, n_rows if n_rows is not None else release.plan.n, rng))
        except MemoryError:  # a copy refits as the release was fitted: as much memory as that fit took
            raise SynthDPError(f"copies ran out of memory at copy {len(out) + 1} of {copies}: each refits the release "
                               "as it was fitted (its candidates and moments); make them on a machine with more "
                               "memory") from None
    measured = measured_pairs(release)
    return Copies(out, reference, (time.perf_counter() - start) / copies, bool(measured), measured)


def check_copies_size(copies: int, rows: int, columns: int, reference_rows: int) -> None:
    """Refuse, before any refit, copies that would not fit the output bound
    (:func:`synthdp.pipeline.model.check_output_size`): the reference sample of ``reference_rows``
    rows, and the ``copies`` tables of ``rows`` rows each, all held in memory until written. The
    command line calls it before the fit (and before a budget file is charged), with the rows per
    copy given by --rows (n is not read yet)."""
    check_output_size(reference_rows, columns,  # named here, before the refits, not as draw's bound
                      f"the copies' reference sample ({REFERENCE_FACTOR} x the larger of n and the rows per copy)",
                      "ask for fewer rows per copy (--rows, n_rows)")
    check_output_size(copies * rows, columns, f"{copies} copies of {rows} rows, held in memory until written",
                      "ask for fewer copies or fewer rows per copy (--copies, --rows; copies, n_rows)")


def inference_fit(fitted: run.FittedModel, rng: np.random.Generator) -> run.FittedModel:
    """The release's fitted distribution as the copies start from it: its release post-processed
    again with :data:`INFERENCE` (every measured pair at its noisy reading; a mixed table's without
    the noise box and the trees' edge threshold) where it measured pairs or is a mixed table's,
    else ``fitted`` itself (nothing would change but the draws). Post-processing: no data read.
    ``rng``: public randomness for the candidates."""
    refit = _inference_distribution(fitted.release, fitted.config, rng)
    if refit is None:
        return fitted
    solution, points, weights, blend_share, rearranged = refit
    return replace(fitted, lp=solution, support_points=points, support_weights=weights, blend_share=blend_share,
                   rearranged=rearranged)


def inference_model(fitted: run.FittedModel | SamplingModel, release: run.Release, config: run.SynthConfig,
                    rng: np.random.Generator) -> SamplingModel:
    """:func:`inference_fit`'s distribution to sample: of a fit, or of a model file's model and the
    ``release`` and ``config`` it holds (the same distribution from the same ``rng``: the file holds the
    fit's support exactly)."""
    if isinstance(fitted, SamplingModel):
        refit = _inference_distribution(release, config, rng)
        return fitted if refit is None else replace(fitted, points=refit[1], weights=refit[2])
    return run.sampling_model(inference_fit(fitted, rng))


def _inference_distribution(release: run.Release, config: run.SynthConfig, rng: np.random.Generator) -> tuple | None:
    """:func:`run.fit_distribution` of ``release`` with :data:`INFERENCE`, or None where it would give
    the release's own fitted distribution (no pairs measured, not a mixed table)."""
    if release.noisy_scores is None and release.selected_pairs is None and release.plan.candidates != "mixed":
        return None
    stages = StageTracker([], quiet=True)
    try:
        return run.fit_distribution(release, config, rng, stages, INFERENCE)
    finally:
        stages.close()


def measures_dependence(release: run.Release) -> bool:
    """Whether the release measured any dependence between columns (:func:`measured_pairs`). Without
    one the fitted columns are independent, or related only by noise larger than any relation, and
    the copies cannot tell (:data:`synthdp.evaluation.inference.NO_DEPENDENCE`)."""
    return bool(measured_pairs(release))


def measured_pairs(release: run.Release) -> frozenset[frozenset[str]]:
    """The pairs of the table's columns whose dependence the release measured: every pair of numeric
    columns of a pairs release or of a private PCA (its axes hold every pair's covariance, in its
    leading directions), the selected pairs, and the columns of each released moment of two
    or more columns (a pair product, a mixed table's 2-way cell or mean per level) whose noise sd is
    at most MOMENT_NOISE_LIMIT. A moment of larger noise does not count: a small mixed table whose
    moments keep a tenth of the budget (sd 0.9 on a correlation's product moment) came out as
    correlations of -0.54 and +0.03 from one table. A nullable column's missing indicator and an
    integer column's value block stand for their column. Public: the release's plan, basis and
    noise scales, and each numeric column released by level of a ``class_column`` with the class.
    :func:`synthdp.infer` marks the statistics that read a pair outside these.
    A release that selects its pairs (``Plan.selects_pairs``) counts the selected ones, not every
    pair: on PKS at 2 000 rows 64 of 190, and the pairs of motor_UPDRS with age and with HNR were
    among them in 13 % and 9.5 % of 200 releases.

    Parameters
    ----------
    release : Release
        A fitted release (``SmoothSynthesizer.release_``).

    Returns
    -------
    frozenset of frozenset of str
        Each measured pair as the set of its two column names.
    """
    schema = release.schema
    numeric = list(release.domain.names)
    if schema is None:
        owner, names = np.arange(len(numeric)), numeric
    else:
        internal = [column.indicator_of or column.values_of or column.name for column in schema.categorical]
        names = list(dict.fromkeys(numeric + internal))
        owner = np.array([names.index(name) for name in numeric + internal])[schema.block_of_coordinate]
    pairs: set[frozenset[str]] = set()
    # the pairs release of every pair, or the private axes of every pair; a release that selects its pairs
    # (Plan.selects_pairs, also a pairs release) measured the selected ones only (below): the others take
    # what the max-entropy completion of the selected ones gives them, in the fitted distribution and in
    # every copy alike, and a copy cannot show how far that is from the data
    if (release.plan.releases_pairs and not release.plan.selects_pairs) or release.pca is not None:
        pairs |= {frozenset((a, b)) for i, a in enumerate(numeric) for b in numeric[i + 1:]}
    if release.plan.selects_pairs and release.selected_pairs is not None:
        pairs |= {frozenset((numeric[i], numeric[j])) for i, j in np.asarray(release.selected_pairs.pairs, dtype=int)}
    if release.class_histograms is not None:  # each conditioned column's histogram by level of the class
        classes = release.class_histograms
        pairs |= {frozenset((classes.column, numeric[int(j)])) for j in classes.columns}
    indices = np.asarray(release.basis_indices)
    noise = np.asarray(release.moment_noise_sd, dtype=float)
    if noise.shape != (len(indices),):  # one sd for all (or none): the largest stands for each
        noise = np.full(len(indices), float(noise.max()) if noise.size else np.inf)
    # moment x column it reads, from the non-zero degrees (a mixed basis is mostly zeros: no R x D copy)
    rows, coordinates = np.nonzero(indices)
    reads = np.zeros((len(indices), len(names)), dtype=bool)
    reads[rows, owner[coordinates]] = True
    reads = reads[noise <= MOMENT_NOISE_LIMIT]
    together = reads.T.astype(np.int64) @ reads  # the moments that read both columns
    pairs |= {frozenset((names[i], names[j])) for i, j in zip(*np.nonzero(np.triu(together, 1)))}
    return frozenset(pairs)
