"""Copula candidates: private one-way marginals joined by a private latent correlation matrix.

The candidate points of the LP should lie where the data lies; the paper's PCA ellipsoid
only gets the first two moments right, and at small n its noise wrecks even those. Here
each column gets a noisy histogram (equal-width bins of [-1, 1], plus the two bounds as
atoms: many real columns pile up at a bound, e.g. counts at 0 or values clipped into the
bounds, and an atom keeps those values exact instead of spreading them over a bin; or, for
an integer column of few values, one cell per value, so that its spikes stay exact), and the
columns are tied together by a Gaussian copula. A candidate is z ~ N(0, R), u = Phi(z),
x_j = F_j^{-1}(u_j) with F_j the noisy histogram's piecewise-uniform distribution. The latent
correlation matrix R comes from the pairs release, the means of products of normal scores
(:mod:`synthdp.postprocess.pairs`); without it, R is the identity.

Everything here is post-processing of released statistics.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy import special

from synthdp.stats.histograms import CellLayout, bin_edges

if TYPE_CHECKING:
    from synthdp.domain.schema import Schema

EIGENVALUE_FLOOR = 1e-3  # keeps the noisy correlation matrix positive definite
ATOM_THRESHOLD = 2.0  # noise standard deviations an atom's noisy count must reach to be kept


@dataclass(frozen=True)
class Marginals:
    """Released one-way histograms of the unit-scaled columns.

    Attributes
    ----------
    noisy_counts : array, shape (d, M)
        Noisy rows per cell, in the cells of ``layout``: by default (``layout`` None) the atom
        at -1, B = M - 2 equal-width bins, the atom at +1.
    n_rows : float
        The public number of rows, which every column's counts add up to.
    noise_sd : float or array of shape (d, 1)
        Standard deviation of each count's noise (public: from the sensitivity and the
        budget), or of each column's counts; 0 for exact counts.
    atom_threshold : float
        Noise standard deviations an atom's noisy count must reach to be kept
        (:meth:`probabilities`); the product uses ATOM_THRESHOLD, other values are for design
        studies (``experiments/design_choices.py --study atoms``; ``-inf`` keeps every atom).
    layout : CellLayout or None
        The cells of each column (:class:`synthdp.stats.histograms.CellLayout`): bins and
        atoms, or one cell per integer value, and a missing cell for a nullable column.
    """

    noisy_counts: np.ndarray
    n_rows: float
    noise_sd: float | np.ndarray = 0.0
    atom_threshold: float = ATOM_THRESHOLD
    layout: CellLayout | None = None

    @property
    def cells(self) -> CellLayout:
        """The layout of the cells (every column in bins and two atoms when none was given)."""
        return CellLayout.given(self.layout, self.noisy_counts)

    @property
    def n_bins(self) -> int:
        return self.cells.n_bins

    def probabilities(self) -> np.ndarray:
        """Cell probabilities, shape (d, M): each column's noisy counts projected onto
        the non-negative counts that add up to n, after dropping the atoms that noise alone
        could explain (padding cells get 0).

        An atom is a point mass at a bound. One whose noisy count is below ``atom_threshold``
        (ATOM_THRESHOLD by default) noise standard deviations is dropped (left out of the
        projection, so it gets probability 0): an empty atom passes that test by noise alone
        with probability 2.3 % (Gaussian) or 3 % (Laplace), whereas a kept spurious atom puts
        rows on the corners of the domain, where the data may have none. The cost is on a
        column whose real atom holds fewer rows than the threshold. Measured against keeping
        every atom, and against 3 sd: docs/decisions/copula-atoms.md. The cells of an integer
        column's values are not thresholded: the projection alone decides them, as it does
        the bins.

        The Euclidean projection subtracts one threshold from every cell and sets those
        below it to 0. Merely zeroing the negative counts would keep the positive noise of
        the empty cells and spread mass over the whole range, inflating the variance.
        """
        layout = self.cells
        counts = self.noisy_counts.copy()
        # a dropped atom gets a count so low that the projection leaves it at 0 (far below any threshold)
        excluded = -(self.n_rows + np.abs(counts).sum() + 1.0)
        weak_atoms = layout.bound_atoms() & (counts < self.atom_threshold * self.noise_sd)
        counts[weak_atoms | ~layout.exists()] = excluded
        return np.array([simplex_projection(row, self.n_rows) for row in counts]).reshape(counts.shape) / self.n_rows

    def value_probabilities(self) -> np.ndarray:
        """:meth:`probabilities` given that the value is not missing, shape (d, M): a nullable
        column's missing cell gets 0 and its other cells are rescaled to add up to 1 (to
        uniform over them if they hold nothing)."""
        layout = self.cells
        if not any(layout.missing):
            return self.probabilities()
        p = np.where(layout.missing_cells(), 0.0, self.probabilities())
        totals = p.sum(axis=1, keepdims=True)
        observed = layout.exists() & ~layout.missing_cells()
        uniform = observed / observed.sum(axis=1, keepdims=True)
        return np.where(totals > 0, p / np.where(totals > 0, totals, 1.0), uniform)

    def quantiles(self, u: np.ndarray) -> np.ndarray:
        """F_j^{-1}(u[:, j]) for every column j, shape of ``u`` (count, d): a value of the
        column's observed cells (a nullable column's candidates are values; whether the cell
        is missing is its indicator's business)."""
        layout = self.cells
        p = self.value_probabilities()
        edges = bin_edges(layout.n_bins)
        out = np.empty_like(u)
        for column in range(p.shape[0]):
            last = layout.observed_cells(column) - 1
            cdf = np.concatenate([[0.0], np.cumsum(p[column])])
            cell = np.clip(np.searchsorted(cdf, u[:, column], side="right") - 1, 0, last)
            values = layout.values[column]
            if values is not None:  # one cell per value (integer or declared): the value itself
                out[:, column] = values[cell]
                continue
            mass = p[column, cell]
            within = np.divide(u[:, column] - cdf[cell], mass, out=np.full(len(u), 0.5), where=mass > 0)
            bin_index = np.clip(cell - 1, 0, layout.n_bins - 1)
            value = edges[bin_index] + np.clip(within, 0.0, 1.0) * (edges[bin_index + 1] - edges[bin_index])
            out[:, column] = np.where(cell == 0, -1.0, np.where(cell == layout.n_bins + 1, 1.0, value))
        return out


def simplex_projection(values: np.ndarray, total: float = 1.0) -> np.ndarray:
    """The Euclidean projection of ``values`` (shape (m,)) onto {p >= 0, sum p = total}: one
    threshold subtracted from every entry, those below it set to 0, as :meth:`Marginals.probabilities`
    projects a histogram's noisy counts (merely clipping the negative ones would keep the positive
    noise of the empty cells)."""
    ordered = -np.sort(-values)
    thresholds = (np.cumsum(ordered) - total) / np.arange(1, len(values) + 1)
    active = int(np.sum(ordered - thresholds > 0))
    return np.maximum(values - thresholds[active - 1], 0.0)


def level_cell_estimates(schema: Schema, indices: np.ndarray, noisy_moments: np.ndarray,
                         rows: np.ndarray) -> np.ndarray:
    """``noisy_moments`` with the released one-way cells of each binary and categorical column
    (the ``rows`` of ``indices`` so marked, released apart:
    :func:`synthdp.privacy.release.release_level_cells`) made a distribution, as the numeric
    columns' histograms are (:meth:`Marginals.probabilities`): a categorical column's cells, one
    per level with "other" (and "missing"), projected onto the simplex
    (:func:`simplex_projection`), so that an empty level such as "other" that noise alone
    lifted goes back to 0; a binary column's one indicator clipped into [0, 1]. Post-processing
    of the release; the other moments are returned as they are."""
    out = np.asarray(noisy_moments, dtype=float).copy()
    for column in schema.categorical:
        block = schema.block_slice(column.name)
        mine = np.flatnonzero(rows & indices[:, block].any(axis=1))
        if not len(mine):
            continue
        if not column.binary and column.width > 1 and len(mine) == column.width:  # every level's cell
            out[mine] = simplex_projection(out[mine])
        else:  # a binary column's indicator, a one-level column, or only some of a column's cells: each in [0, 1]
            out[mine] = np.clip(out[mine], 0.0, 1.0)
    return out


def nearest_correlation(matrix: np.ndarray, floor: float = EIGENVALUE_FLOOR, iterations: int = 100,
                        held: np.ndarray | None = None) -> np.ndarray:
    """The correlation matrix nearest ``matrix`` (Frobenius norm) with eigenvalues at least ``floor``, shape (d, d).

    Higham's (2002) alternating projections with Dykstra's correction, between the matrices
    with eigenvalues at least ``floor`` and those with unit diagonal; a final eigenvalue
    clip and rescaling make the result exactly a correlation matrix; with ``iterations=0``
    that clip is all there is, and lands further away (docs/decisions/nearest-correlation.md).
    ``held`` (a symmetric boolean mask): the entries the second set also fixes at ``matrix``'s
    values (Higham's H-weighted variant with infinite weights), so that the others give way to
    them where the matrix can be completed; where it cannot, the iterations end near.
    """
    unit_diagonal, correction = matrix.copy(), np.zeros_like(matrix)
    for _ in range(iterations):
        start = unit_diagonal - correction
        eigenvalues, vectors = np.linalg.eigh(start)
        definite = (vectors * np.maximum(eigenvalues, floor)) @ vectors.T
        correction = definite - start
        unit_diagonal = definite.copy()
        np.fill_diagonal(unit_diagonal, 1.0)
        if held is not None:
            unit_diagonal[held] = matrix[held]
        if np.abs(unit_diagonal - definite).max() < 1e-7:
            break
    eigenvalues, vectors = np.linalg.eigh(unit_diagonal)
    definite = (vectors * np.maximum(eigenvalues, floor)) @ vectors.T
    scale = np.sqrt(np.diag(definite))
    return definite / np.outer(scale, scale)


def symmetric_root(matrix: np.ndarray) -> np.ndarray:
    """The symmetric square root S of a covariance matrix (S S = matrix, negative eigenvalues read as
    0), shape of ``matrix``. Unlike an eigenvector factor (numpy's multivariate_normal with
    method="eigh"), it is continuous in the matrix where eigenvalues repeat, so that a released
    statistic equal to the last bits (summed in memory, streamed or by Dask) draws the same points."""
    eigenvalues, vectors = np.linalg.eigh(matrix)
    return (vectors * np.sqrt(np.maximum(eigenvalues, 0.0))) @ vectors.T


def normal_draws(mean: np.ndarray, covariance: np.ndarray, count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` draws from N(mean, covariance), shape (count, d), through :func:`symmetric_root`."""
    return mean + rng.standard_normal((count, len(mean))) @ symmetric_root(covariance)


def copula_candidates(marginals: Marginals, correlation: np.ndarray, count: int,
                      rng: np.random.Generator) -> np.ndarray:
    """``count`` draws from the Gaussian copula with these marginals, shape (count, d)."""
    d = correlation.shape[0]
    normal_scores = normal_draws(np.zeros(d), correlation, count, rng)
    return marginals.quantiles(special.ndtr(normal_scores))


def rearranged(points: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Each column of the candidates moved onto its weighted marginal, in the order of its values, shape of ``points``.

    The candidates (N, d) with ``weights`` define a distribution whose one-way marginals
    the LP's tilt has fitted to the released moments. Reweighting does that with a factor per
    column, exp(sum of its moments' multipliers): a tilt that narrows a column whose noisy
    histogram spread it too wide also narrows, on every other column, the candidates that
    were extreme on that one, and so weakens every correlation with it (on two normal columns
    of correlation 0.9, halving both variances by such a factor leaves 0.65). Here instead the
    candidate of rank k among N in column j (its values sorted, ties in the candidates' order,
    which is random) takes the value of the weighted marginal at probability (k + 1/2) / N,
    and every candidate gets weight 1/N: the same one-way marginals up to 1/N in each column's
    distribution function, the same ranks as the copula's draws (their dependence). Where
    every row of the LP is a one-way moment or cell, the fit to the release is the tilt's.
    Post-processing of public values; the values stay candidate values (an integer column
    stays on its integers). Measured: docs/decisions/rearranged.md.

    Parameters
    ----------
    points : array, shape (N, d)
        The candidates (unit coordinates).
    weights : array, shape (N,) or (N, d)
        Their non-negative weights, not all zero; one column of weights per column of the
        candidates (the per-column tilts of :func:`synthdp.postprocess.lp.column_tilt_weights`).

    Returns
    -------
    array, shape (N, d)
        The rearranged candidates, each of weight 1/N.
    """
    points = np.asarray(points, dtype=float)
    weights = np.asarray(weights, dtype=float)
    count = len(points)
    levels = (np.arange(count) + 0.5) / count
    out = np.empty_like(points)
    for column in range(points.shape[1]):
        own = weights if weights.ndim == 1 else weights[:, column]
        order = np.argsort(points[:, column], kind="stable")
        cumulative = np.cumsum(own[order]) / float(np.sum(own))
        source = np.minimum(np.searchsorted(cumulative, levels), count - 1)
        out[order, column] = points[order[source], column]
    return out
