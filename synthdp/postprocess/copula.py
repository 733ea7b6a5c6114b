"""Copula candidates: private one-way marginals joined by a private correlation matrix.

The candidate points of the LP should lie where the data lies; the paper's PCA ellipsoid
only gets the first two moments right, and at small n its noise wrecks even those. Here
each column gets a noisy histogram (equal-width bins of [-1, 1], plus the two bounds as
atoms: many real columns pile up at a bound, e.g. counts at 0 or values clipped into the
bounds, and an atom keeps those values exact instead of spreading them over a bin), and the
columns are tied together by a Gaussian copula whose correlation matrix comes from noisy
products E[x_i x_j]. A candidate is z ~ N(0, correlation), u = Phi(z), x_j = F_j^{-1}(u_j)
with F_j the noisy histogram's piecewise-uniform distribution. The copula's correlation is
the one that gives the candidates the released Pearson correlations (the NORTA method of
Cario and Nelson, 1997): taking the released correlation as the normal scores' correlation
instead left the candidates' correlations too weak wherever a column is skewed
(docs/decisions.md#copula-norta).

Everything here is post-processing of released statistics, except :func:`cell_counts`,
which :mod:`synthdp.privacy.release` calls on the private rows to compute what it releases.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import special

from synthdp.stats.histograms import bin_edges

EIGENVALUE_FLOOR = 1e-3  # keeps the noisy correlation matrix positive definite
HERMITE_TERMS = 60  # Mehler series terms (how much variance they keep: docs/decisions.md#hermite-terms)
QUANTILE_GRID = 20_000  # midpoints in u of the quadrature for the Hermite coefficients
ATOM_THRESHOLD = 2.0  # noise standard deviations an atom's noisy count must reach to be kept


@dataclass(frozen=True)
class Marginals:
    """Released one-way histograms of the unit-scaled columns.

    Attributes
    ----------
    noisy_counts : array, shape (d, B + 2)
        Noisy rows per cell: the atom at -1, B equal-width bins, the atom at +1.
    n_rows : int
        The public number of rows, which every column's counts add up to.
    noise_sd : float
        Standard deviation of each count's noise (public: from the sensitivity and the
        budget); 0 for exact counts.
    atom_threshold : float
        Noise standard deviations an atom's noisy count must reach to be kept
        (:meth:`probabilities`); the product uses ATOM_THRESHOLD, other values are for design
        studies (``experiments/design_choices.py --study atoms``; ``-inf`` keeps every atom).
    """

    noisy_counts: np.ndarray
    n_rows: int
    noise_sd: float = 0.0
    atom_threshold: float = ATOM_THRESHOLD

    @property
    def n_bins(self) -> int:
        return self.noisy_counts.shape[1] - 2

    def probabilities(self) -> np.ndarray:
        """Cell probabilities, shape (d, B + 2): each column's noisy counts projected onto
        the non-negative counts that add up to n, after dropping the atoms that noise alone
        could explain.

        An atom is a point mass at a bound. One whose noisy count is below ``atom_threshold``
        (ATOM_THRESHOLD by default) noise standard deviations is dropped (left out of the
        projection, so it gets probability 0): an empty atom passes that test by noise alone
        with probability 2.3 % (Gaussian) or 3 % (Laplace), whereas a kept spurious atom puts
        rows on the corners of the domain, where the data may have none. The cost is on a
        column whose real atom holds fewer rows than the threshold. Measured against keeping
        every atom, and against 3 sd: docs/decisions.md#copula-atoms.

        The Euclidean projection subtracts one threshold from every cell and sets those
        below it to 0. Merely zeroing the negative counts would keep the positive noise of
        the empty cells and spread mass over the whole range, inflating the variance.
        """
        counts = self.noisy_counts.copy()
        # a dropped atom gets a count so low that the projection leaves it at 0 (far below any threshold)
        excluded = -(self.n_rows + np.abs(counts).sum() + 1.0)
        atoms = counts[:, [0, -1]]
        counts[:, [0, -1]] = np.where(atoms < self.atom_threshold * self.noise_sd, excluded, atoms)
        ordered = -np.sort(-counts, axis=1)
        cells = np.arange(1, counts.shape[1] + 1)
        thresholds = (np.cumsum(ordered, axis=1) - self.n_rows) / cells
        active = np.sum(ordered - thresholds > 0, axis=1)  # cells above the threshold
        threshold = thresholds[np.arange(len(counts)), active - 1]
        return np.maximum(counts - threshold[:, None], 0.0) / self.n_rows

    def quantiles(self, u: np.ndarray) -> np.ndarray:
        """F_j^{-1}(u[:, j]) for every column j, shape of ``u`` (count, d)."""
        p = self.probabilities()
        edges = bin_edges(self.n_bins)
        out = np.empty_like(u)
        for column in range(p.shape[0]):
            cdf = np.concatenate([[0.0], np.cumsum(p[column])])
            cell = np.clip(np.searchsorted(cdf, u[:, column], side="right") - 1, 0, self.n_bins + 1)
            mass = p[column, cell]
            within = np.divide(u[:, column] - cdf[cell], mass, out=np.full(len(u), 0.5), where=mass > 0)
            bin_index = np.clip(cell - 1, 0, self.n_bins - 1)
            value = edges[bin_index] + np.clip(within, 0.0, 1.0) * (edges[bin_index + 1] - edges[bin_index])
            out[:, column] = np.where(cell == 0, -1.0, np.where(cell == self.n_bins + 1, 1.0, value))
        return out


def hermite_coefficients(marginals: Marginals) -> np.ndarray:
    """b_jk = E[g_j(Z) He_k(Z)] / sqrt(k!) for k = 0..HERMITE_TERMS, shape (d, HERMITE_TERMS + 1).

    g_j = F_j^{-1}(Phi(z)) maps a standard normal score to column j's value and He_k is the
    k-th (probabilists') Hermite polynomial, so b_j0 is the column's mean and the sum of
    b_jk^2 over k >= 1 its variance (Parseval). The expectation is a midpoint rule over
    QUANTILE_GRID values of u = Phi(z); a constant column gets b_jk = 0 for k >= 1 exactly
    (the rule's error in the high-order terms would give it a small spurious variance).
    """
    u = (np.arange(QUANTILE_GRID) + 0.5) / QUANTILE_GRID
    z = special.ndtri(u)
    values = marginals.quantiles(np.repeat(u[:, None], marginals.noisy_counts.shape[0], axis=1))
    hermite = np.empty((HERMITE_TERMS + 1, QUANTILE_GRID))  # He_k(z) / sqrt(k!), by their recurrence
    hermite[0], hermite[1] = 1.0, z
    for k in range(1, HERMITE_TERMS):
        hermite[k + 1] = (z * hermite[k] - math.sqrt(k) * hermite[k - 1]) / math.sqrt(k + 1)
    coefficients = values.T @ hermite.T / QUANTILE_GRID
    coefficients[np.ptp(values, axis=0) == 0, 1:] = 0.0
    return coefficients


def normal_scores_correlation(pearson: np.ndarray, coefficients: np.ndarray) -> np.ndarray:
    """For each pair i < j, the correlation r of normal scores whose values have Pearson correlation pearson[k].

    ``pearson`` is in ``np.triu_indices(d, 1)`` order; ``coefficients`` are the columns'
    :func:`hermite_coefficients`. By Mehler's formula, if (Z_i, Z_j) are standard normal with
    correlation r, then E[He_k(Z_i) He_l(Z_j)] = k! r^k when k = l and 0 otherwise, so the
    Pearson correlation of (g_i(Z_i), g_j(Z_j)) is sum_k b_ik b_jk r^k / (sd_i sd_j) over
    k >= 1. It does not decrease in r (g_i and g_j are non-decreasing), so bisection on
    [-1, 1] solves it; a target beyond what r = +-1 attains (skewed marginals cannot be
    perfectly anti-correlated, for one) gets r = +-1, and a pair whose series is flat (a
    column with a single value) gets 0. Returns the (d, d) symmetric matrix with unit
    diagonal, not necessarily positive semi-definite.
    """
    d = len(coefficients)
    i, j = np.triu_indices(d, 1)
    sd = np.sqrt(np.sum(coefficients[:, 1:] ** 2, axis=1))
    series = coefficients[i, 1:] * coefficients[j, 1:] / np.maximum(sd[i] * sd[j], 1e-12)[:, None]
    powers = np.arange(1, coefficients.shape[1])

    def correlation_at(r: np.ndarray) -> np.ndarray:
        return np.sum(series * r[:, None] ** powers, axis=1)

    low, high = -np.ones(len(i)), np.ones(len(i))
    floor, ceiling = correlation_at(low), correlation_at(high)
    target = np.clip(pearson, floor, ceiling)
    for _ in range(50):  # r to within 2^-50
        middle = (low + high) / 2
        above = correlation_at(middle) > target
        low, high = np.where(above, low, middle), np.where(above, middle, high)
    matrix = np.eye(d)
    matrix[i, j] = matrix[j, i] = np.where(ceiling - floor > 1e-12, (low + high) / 2, 0.0)
    return matrix


def nearest_correlation(matrix: np.ndarray, floor: float = EIGENVALUE_FLOOR, iterations: int = 100) -> np.ndarray:
    """The correlation matrix nearest ``matrix`` (Frobenius norm) with eigenvalues at least ``floor``, shape (d, d).

    Higham's (2002) alternating projections with Dykstra's correction, between the matrices
    with eigenvalues at least ``floor`` and those with unit diagonal; a final eigenvalue
    clip and rescaling make the result exactly a correlation matrix; with ``iterations=0``
    that clip is all there is, and lands further away (docs/decisions.md#nearest-correlation).
    """
    unit_diagonal, correction = matrix.copy(), np.zeros_like(matrix)
    for _ in range(iterations):
        start = unit_diagonal - correction
        eigenvalues, vectors = np.linalg.eigh(start)
        definite = (vectors * np.maximum(eigenvalues, floor)) @ vectors.T
        correction = definite - start
        unit_diagonal = definite.copy()
        np.fill_diagonal(unit_diagonal, 1.0)
        if np.abs(unit_diagonal - definite).max() < 1e-7:
            break
    eigenvalues, vectors = np.linalg.eigh(unit_diagonal)
    definite = (vectors * np.maximum(eigenvalues, floor)) @ vectors.T
    scale = np.sqrt(np.diag(definite))
    return definite / np.outer(scale, scale)


def correlation_matrix(
    marginals: Marginals,
    noisy_products: np.ndarray | None,
    noise_sd: float = 0.0,
    *,
    normal_scores: Callable[[np.ndarray, np.ndarray], np.ndarray] = normal_scores_correlation,
    nearest: Callable[[np.ndarray], np.ndarray] = nearest_correlation,
) -> np.ndarray:
    """The copula's correlation matrix, shape (d, d); the identity without released products.

    ``noisy_products`` holds the noisy E[x_i x_j] for i < j in ``np.triu_indices(d, 1)``
    order, each with Gaussian or Laplace noise of standard deviation ``noise_sd`` (public:
    from the calibration). With the marginals' means and variances they give the Pearson
    correlations the candidates should have. At small n the noise can dwarf the correlations
    (each entry's noise is noise_sd / (sd_i sd_j)), so the off-diagonal entries are shrunk
    toward 0 by the factor max(0, 1 - total noise variance / total square of the noisy
    entries), which estimates signal / (signal + noise). A pair with a constant column (one
    whose noisy histogram kept a single atom) has no correlation: it gets 0 and stays out of
    that estimate, where its noise divided by a zero variance would drown every other pair.
    Each pair's target is then turned into the normal scores' correlation that yields it
    (:func:`normal_scores_correlation`), and the matrix is replaced by the nearest
    correlation matrix with eigenvalues at least EIGENVALUE_FLOOR (noise, and targets no
    normal correlation reaches, make it indefinite).

    ``normal_scores`` and ``nearest`` replace those two steps (for design studies, e.g.
    ``experiments/design_choices.py --study copula``; the defaults are the product):
    ``normal_scores(pearson, coefficients)`` takes the shrunk Pearson targets in
    ``np.triu_indices(d, 1)`` order and the columns' :func:`hermite_coefficients` and returns
    a symmetric (d, d) matrix with unit diagonal; ``nearest(matrix)`` returns the correlation
    matrix the copula uses.
    """
    d = marginals.noisy_counts.shape[0]
    if noisy_products is None:
        return np.eye(d)
    coefficients = hermite_coefficients(marginals)
    mean, variance = coefficients[:, 0], np.sum(coefficients[:, 1:] ** 2, axis=1)
    i, j = np.triu_indices(d, 1)
    scale = np.sqrt(variance[i] * variance[j])
    varying = scale > 0
    entries = np.divide(noisy_products - mean[i] * mean[j], scale, out=np.zeros_like(scale), where=varying)
    noise_variance = np.sum((noise_sd / scale[varying]) ** 2)
    shrinkage = max(0.0, 1.0 - noise_variance / max(np.sum(entries**2), 1e-300))
    return nearest(normal_scores(shrinkage * entries, coefficients))


def copula_candidates(marginals: Marginals, correlation: np.ndarray, count: int,
                      rng: np.random.Generator) -> np.ndarray:
    """``count`` draws from the Gaussian copula with these marginals, shape (count, d)."""
    d = correlation.shape[0]
    normal_scores = rng.multivariate_normal(np.zeros(d), correlation, size=count, method="eigh")
    return marginals.quantiles(special.ndtr(normal_scores))
