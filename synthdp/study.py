"""The names the design studies and experiments use (``experiments/``), in one place.

This module is for the people who measure synthdp's design choices, not for users: the
scripts in ``experiments/`` import from here (or from synthdp's top level) instead of
reaching into the package's internal modules. Names here may change between versions, with
the experiments that use them; the user API is synthdp's top level (``from synthdp import
SmoothSynthesizer``). Every name is the package's own object, imported, not a copy: a
study gets exactly what the product runs.

The groups:

* **Fitting with study options** (:mod:`synthdp.pipeline.run`): ``StudyOptions``, ``fit``,
  ``sample``, ``FittedModel``, ``mixed_design``: a fit with alternatives to the product's
  choices, its draws, and the LP of a mixed table.
* **The plan, the budget and the noise** (:mod:`synthdp.pipeline.plan`, :mod:`synthdp.privacy`,
  :mod:`synthdp.pipeline.report`): ``make_plan``, ``paper_n_basis``, ``auto_n_basis``,
  ``MAX_AUTO_N_BASIS``, ``MARGINAL_BINS_RANGE``, ``pair_noise_sd``, ``composition``, ``plan_budget``, ``Budget``,
  ``privacy_report``, ``bounded_means_sensitivity``, ``NoiseSampler``, ``OpenDPNoise``,
  ``analytic_gaussian_sigma``, ``gdp_mu``, ``laplace_scale``, ``PrivacyLedger``: sizes and budget shares
  from public inputs, the noise samplers and scales, the ledger and the report.
* **The release's statistics** (:mod:`synthdp.stats`, :mod:`synthdp.summaries`):
  ``ChebyshevBasis``, ``groups_count``, ``default_clip_norm_sq``, ``DEFAULT_NODES``,
  ``column_sets``, ``marginal``, ``marginal_errors``: the basis, the sensitivity groups and the
  scores' clip, a summary's quadrature size, and marginals of a table.
* **Post-processing pieces** (:mod:`synthdp.postprocess`): ``make_candidates``,
  ``copula_marginals``, ``pair_correlation``, ``JOIN_RATIO``, ``nearest_correlation``,
  ``spectral_denoise``, ``CORRELATION_NOISE_LIMIT``, ``solve_l1_fit``, ``tilt_weights``,
  ``clean_weights``: the candidates and the copula's correlation, the LP and its weights.
* **Evaluation helpers** (:mod:`synthdp.evaluation`): the smooth queries (``SIGMAS``,
  ``KernelQueries``, ``gaussian_kernel_queries``, ``answer_queries``, ``worst_case_errors``,
  ``to_unit``), the utility metrics (``utility_report``, ``strong_pairs``, ``STRONG_R``,
  ``correlation_error``, ``invented_pairs``, ``ks_distances``, ``model_accuracy``,
  ``distinct_rows``) and the distances for every column type (``pair_scores``, ``column_tv``,
  ``distribution``, ``BINS``, ``numeric_schema``).
* **Data reading** (:mod:`synthdp.domain.schema`, :mod:`synthdp.reader.table`): ``Schema``,
  ``LEVEL_TYPES``, ``MISSING_LABEL``, ``CHUNK_VALUES``: a mixed table's description and the
  reader's chunk size.
* **Patch points** (module objects): ``candidates_module``, ``plan_module``, ``run_module``.
  A study that replaces a function at run time, to record what it computes or to break the
  product on purpose (the privacy audit), must replace it in the module that calls it; these
  are those modules themselves (:mod:`synthdp.postprocess.candidates`,
  :mod:`synthdp.pipeline.plan`, :mod:`synthdp.pipeline.run`).

Three of the names give a public name to a private helper of the package, which keeps its
own name: :func:`composition` (``synthdp.pipeline.plan._composition``), :func:`plan_budget`
(``synthdp.pipeline.plan._budget``) and :func:`pair_correlation`
(``synthdp.postprocess.candidates._pair_correlation``). Each calls the helper through its
module at call time, so it follows a patch of the helper.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

# grouped as the module docstring lists them, not alphabetically
# isort: off
# fitting with study options
from synthdp.pipeline.run import FittedModel, StudyOptions, fit, mixed_design, sample

# the plan, the budget and the noise
from synthdp.pipeline.plan import (
    MARGINAL_BINS_RANGE,
    MAX_AUTO_N_BASIS,
    auto_n_basis,
    make_plan,
    pair_noise_sd,
    paper_n_basis,
)
from synthdp.privacy.budget import Budget
from synthdp.pipeline.report import privacy_report
from synthdp.privacy.sensitivity import bounded_means_sensitivity
from synthdp.privacy.noise import NoiseSampler, OpenDPNoise, analytic_gaussian_sigma, gdp_mu, laplace_scale
from synthdp.privacy.ledger import PrivacyLedger

# the release's statistics: the basis, the sensitivity groups, the scores' clip, summaries and marginals
from synthdp.stats.chebyshev import ChebyshevBasis
from synthdp.stats.mixed_basis import groups_count
from synthdp.stats.scores import default_clip_norm_sq
from synthdp.summaries.smooth import DEFAULT_NODES
from synthdp.summaries.marginal import column_sets, marginal, marginal_errors

# post-processing pieces: candidates and the copula's correlation, the LP and its weights
from synthdp.postprocess.candidates import JOIN_RATIO, copula_marginals, make_candidates
from synthdp.postprocess.copula import nearest_correlation
from synthdp.postprocess.pairs import CORRELATION_NOISE_LIMIT, spectral_denoise
from synthdp.postprocess.lp import solve_l1_fit, tilt_weights
from synthdp.postprocess.sampling import clean_weights

# evaluation helpers: smooth queries, utility metrics, distances for every column type
from synthdp.evaluation.queries import (
    SIGMAS,
    KernelQueries,
    answer_queries,
    gaussian_kernel_queries,
    to_unit,
    worst_case_errors,
)
from synthdp.evaluation.metrics import (
    STRONG_R,
    correlation_error,
    distinct_rows,
    invented_pairs,
    ks_distances,
    model_accuracy,
    strong_pairs,
    utility_report,
)
from synthdp.evaluation.mixed import BINS, column_tv, distribution, numeric_schema, pair_scores

# data reading: a mixed table's description, the reader's chunk size
from synthdp.domain.schema import LEVEL_TYPES, MISSING_LABEL, Schema
from synthdp.reader.table import CHUNK_VALUES

# patch points: the modules themselves (a function is replaced in the module that calls it)
from synthdp.postprocess import candidates as candidates_module
from synthdp.pipeline import plan as plan_module
from synthdp.pipeline import run as run_module
# isort: on

if TYPE_CHECKING:
    from synthdp.config import SynthConfig
    from synthdp.postprocess.candidates import CandidateOptions
    from synthdp.postprocess.copula import Marginals
    from synthdp.released import Release


# ----------------------------------------------------------------- public names of private helpers
def composition(config: SynthConfig) -> str:
    """The composition a configuration's noise uses, as :class:`Budget` takes it.

    The public name of ``synthdp.pipeline.plan._composition``, which the plan uses for every
    budget it builds.

    Parameters
    ----------
    config : SynthConfig
        The configuration; only its ``noise_kind`` counts.

    Returns
    -------
    str
        ``"gdp"`` (Gaussian noise composes in Gaussian DP) or ``"basic"`` (Laplace noise, basic
        composition).
    """
    return plan_module._composition(config)


def plan_budget(config: SynthConfig, bounds: float, clip_count: float, shares: dict[str, float]) -> Budget:
    """The budget the plan gives a release: these stage shares, the moments taking the rest.

    The public name of ``synthdp.pipeline.plan._budget``. Gaussian stages compose in Gaussian
    DP, or in zCDP when the pairs' selection (exponential mechanisms) is among the shares.

    Parameters
    ----------
    config : SynthConfig
        The configuration: the total (epsilon, delta) and the noise kind.
    bounds : float
        The epsilon spent on the bounds, outside the shares.
    clip_count : float
        The epsilon spent on the clip count, outside the shares.
    shares : dict of str to float
        Each stage's share of the remaining budget (the moments get ``1 - sum(shares)``).

    Returns
    -------
    Budget
        The split of (epsilon, delta) between the stages.
    """
    return plan_module._budget(config, bounds, clip_count, shares)


def pair_correlation(release: Release, marginals: Marginals, rng: np.random.Generator,
                     options: CandidateOptions) -> np.ndarray:
    """The copula's latent correlation matrix, from a release's pairs statistics (post-processing).

    The public name of ``synthdp.postprocess.candidates._pair_correlation``, which the copula
    candidates use: the latent correlation modelled with the score map the release used.

    Parameters
    ----------
    release : Release
        The noisy release (its plan and pairs statistics).
    marginals : Marginals
        The copula's one-way marginals (:func:`copula_marginals`).
    rng : numpy.random.Generator
        Random numbers for the post-processing.
    options : CandidateOptions
        The post-processing rules (the product's defaults, or a study's alternatives).

    Returns
    -------
    numpy.ndarray
        The d x d latent correlation matrix.
    """
    return candidates_module._pair_correlation(release, marginals, rng, options)


__all__ = [
    # fitting with study options
    "StudyOptions", "fit", "sample", "FittedModel", "mixed_design",
    # the plan, the budget and the noise
    "make_plan", "paper_n_basis", "auto_n_basis", "MAX_AUTO_N_BASIS", "MARGINAL_BINS_RANGE", "pair_noise_sd", "composition", "plan_budget",
    "Budget", "privacy_report", "bounded_means_sensitivity", "NoiseSampler", "OpenDPNoise", "analytic_gaussian_sigma", "gdp_mu",
    "laplace_scale", "PrivacyLedger",
    # the release's statistics
    "ChebyshevBasis", "groups_count", "default_clip_norm_sq", "DEFAULT_NODES", "column_sets", "marginal",
    "marginal_errors",
    # post-processing pieces
    "make_candidates", "copula_marginals", "pair_correlation", "JOIN_RATIO", "nearest_correlation", "spectral_denoise",
    "CORRELATION_NOISE_LIMIT", "solve_l1_fit", "tilt_weights", "clean_weights",
    # evaluation helpers
    "SIGMAS", "KernelQueries", "gaussian_kernel_queries", "answer_queries", "worst_case_errors", "to_unit",
    "utility_report", "strong_pairs", "STRONG_R", "correlation_error", "invented_pairs", "ks_distances",
    "model_accuracy", "distinct_rows", "pair_scores", "column_tv", "distribution", "BINS", "numeric_schema",
    # data reading
    "Schema", "LEVEL_TYPES", "MISSING_LABEL", "CHUNK_VALUES",
    # patch points
    "candidates_module", "plan_module", "run_module",
]
