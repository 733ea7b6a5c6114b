"""What the private side hands to post-processing: the noisy statistics of one run.

Everything here is public once released: noisy arrays, each with its noise standard deviation,
and the sizes of the plan. Post-processing (:mod:`synthdp.postprocess`, :mod:`synthdp.summaries`)
reads these objects and never the rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from synthdp.domain.box import Domain
from synthdp.domain.schema import Schema
from synthdp.stats.histograms import CellLayout

if TYPE_CHECKING:  # a type only: post-processing reads the plan's public sizes, never imports the pipeline
    from synthdp.pipeline.plan import Plan


@dataclass(frozen=True)
class PrivatePCA:
    """Released principal axes of the data, in [-1, 1]^d coordinates.

    Attributes
    ----------
    center : array, shape (d,)
        Released (noisy) mean, clipped into [-1, 1]^d.
    axes : array, shape (d, k)
        Orthonormal private eigenvector estimates, strongest first.
    eigenvalues : array, shape (k,)
        Private eigenvalue estimates (variances along the axes), non-negative.
    """

    center: np.ndarray
    axes: np.ndarray
    eigenvalues: np.ndarray


@dataclass(frozen=True)
class UnitsRelease:
    """With a privacy unit: what the units stage released, and where the unit column goes.

    ``column`` and ``position`` (its place in the input's header) are public; ``noisy_rows``
    is the noisy row count after bounding each unit to ``max_rows`` rows, and
    ``noisy_contributions`` the noisy units per bin of
    :func:`synthdp.domain.units.contribution_bins` (:func:`synthdp.privacy.release.release_units`).
    """

    column: str
    position: int
    max_rows: int
    noisy_rows: float
    noisy_contributions: np.ndarray


@dataclass(frozen=True)
class PairsTestResult:
    """What the pairs test released and decided (:func:`synthdp.pipeline.run.release_tested_pairs`).

    ``statistic`` is the noisy T = lambda_max(S) - kappa tr(S) / d, ``noise_sd`` its noise sd and
    ``offset`` what the histograms' noise alone adds to it (:func:`synthdp.postprocess.pairs.score_offset`),
    all in units of the pairs' noise edge sd sqrt(d); ``threshold`` the line T - offset had to
    reach (:data:`synthdp.postprocess.pairs.SPIKE_RATIO`); ``found`` whether it did, and so
    whether the pairs were released.
    """

    statistic: float
    threshold: float
    noise_sd: float
    offset: float
    found: bool


@dataclass(frozen=True)
class ClassHistograms:
    """Numeric columns' histograms by level of one binary or categorical column, the *class*
    (``class_column``: :mod:`synthdp.postprocess.class_histograms`), released in place of their one-way
    histograms (:func:`synthdp.privacy.release.release_marginals`; the same sensitivity).

    ``column`` names the class; ``columns`` (int, shape (k,)) are the conditioned numeric columns'
    positions; ``noisy_counts`` (shape (k, L, M)) their noisy rows per level (``all_levels``
    order) and cell of the release's ``cell_layout``; ``noise_sd`` the sd of each count's noise
    (public: from the calibration); ``level_rows`` (shape (L,)) the class's rows per level, from
    its released one-way cells (:func:`synthdp.postprocess.class_histograms.released_level_counts`).
    """

    column: str
    columns: np.ndarray
    noisy_counts: np.ndarray
    noise_sd: float
    level_rows: np.ndarray


@dataclass(frozen=True)
class SelectedPairs:
    """The selected pairs' release (:func:`synthdp.privacy.release.release_pair_selection` and
    :func:`synthdp.privacy.release.release_selected_pairs`).

    ``pairs`` (int, shape (k, 2), i < j) are the pairs the exponential mechanism chose, in the
    order chosen; ``noisy_means`` (shape (k,)) their noisy means of sgn(s_i) sgn(s_j), the signs of
    the rows' normal scores through the released histograms; ``noise_sd`` the sd of each one's
    noise (public: from the calibration).
    """

    pairs: np.ndarray
    noisy_means: np.ndarray
    noise_sd: float


@dataclass(frozen=True)
class Release:
    """The noisy statistics of one run: all that post-processing may read.

    Attributes
    ----------
    domain : Domain
        Public column bounds.
    plan : Plan
        Public sizes and budget split.
    basis_indices : int array, shape (R, d)
        Multi-indices of the released moments (public, fixed by R and d).
    noisy_moments : array, shape (R,)
        b_hat, the noisy moments.
    moment_noise_l1 : float
        Expected l1 norm of the noise added to the moments (public: from the calibration).
    moment_noise_sd : array, shape (R,)
        Standard deviation of each moment's noise (public: from the calibration).
    pca : PrivatePCA or None
        Released principal axes when candidates are "pca".
    noisy_histograms : array, shape (d, M), or None
        Released one-way histograms of the unit-scaled (numeric) columns when candidates are
        "copula" or "mixed": noisy rows per cell of ``cell_layout``
        (:meth:`synthdp.stats.histograms.CellLayout.counts`). Post-processing turns them into
        :class:`synthdp.postprocess.copula.Marginals`.
    histogram_noise_sd : float
        Standard deviation of the noise on each histogram count (public: from the calibration).
    noisy_scores : array, shape (d (d + 1) / 2,) or (d (d + 3) / 2,), or None
        (the second with the scores' means after the products: :func:`synthdp.stats.scores.split_statistic`).
        Released means of the products s_i s_j, i <= j (``np.triu_indices(d)`` order), of the
        rows' normal scores through the released histograms
        (:func:`synthdp.stats.scores.score_products`), when candidates are "copula" with a
        correlation share; :func:`synthdp.postprocess.pairs.latent_correlation` reads them.
    scores_noise_sd : float
        Standard deviation of the noise on each of them (public: from the calibration).
    noisy_rows_clipped : float or None
        Noisy count of rows with a value outside the bounds (None: not released).
    schema : Schema or None
        Mixed tables: the public schema; the basis then runs over its encoded coordinates
        and ``domain`` holds its numeric columns only.
    noisy_rows_other : float or None
        Mixed tables: noisy count of rows with a categorical value outside its levels.
    units : UnitsRelease or None
        With a privacy unit: the noisy row count and rows-per-unit histogram (None: rows).
    cell_layout : CellLayout or None
        The cells of ``noisy_histograms`` (:class:`synthdp.stats.histograms.CellLayout`;
        public, from the plan and the domain); None: B bins and two atoms per column.
    pairs_test : PairsTestResult or None
        Where the plan tests whether to release the pairs (``Plan.pairs_test``): the test's
        noisy statistic and outcome; ``plan`` is then the plan after the test.
    selected_pairs : SelectedPairs or None
        Where the plan selects the pairs worth measuring (``Plan.selected_pairs``; few rows for
        the columns): the pairs chosen and their noisy sign products.
    class_histograms : ClassHistograms or None
        Mixed tables whose moments are noise: the numeric columns whose histograms were released
        by level of a class column; ``noisy_histograms`` then holds their sums over the levels.
    """

    domain: Domain
    plan: Plan
    basis_indices: np.ndarray
    noisy_moments: np.ndarray
    moment_noise_l1: float
    moment_noise_sd: np.ndarray
    pca: PrivatePCA | None
    noisy_histograms: np.ndarray | None
    histogram_noise_sd: float
    noisy_scores: np.ndarray | None
    scores_noise_sd: float
    noisy_rows_clipped: float | None
    schema: Schema | None = None
    noisy_rows_other: float | None = None
    cell_layout: CellLayout | None = None
    units: UnitsRelease | None = None
    pairs_test: PairsTestResult | None = None
    selected_pairs: SelectedPairs | None = None
    class_histograms: ClassHistograms | None = None
