"""Normal scores of unit columns through released one-way distributions, and their products.

The pairwise statistic of numeric tables (docs/relationships-design.md). Column j's released one-way
histogram (:func:`synthdp.stats.histograms.cell_counts`, post-processed into cell
probabilities) is a distribution F_j on [-1, 1]: an atom at each bound and uniform mass within
each of B equal-width bins. A unit value x gets the normal score

    s_j(x) = Phi^{-1}(u),  u = F_j(x) inside a bin,  u = F_j(-1) / 2 at the atom -1,
             u = 1 - (1 - F_j(1-)) / 2 at the atom +1,

with u kept in [U_FLOOR, 1 - U_FLOOR]. Were F_j the column's distribution, s_j would be
standard normal on the continuous part: the scores are scale-free, whatever the column's
units, skew or spread, which is what makes one noise level fit every pair. A row's score
vector s is then shrunk onto the ball ||s||^2 <= C^2 (``clip_norm_sq``), and the statistic is
the sum over rows of its products s_i s_j, i <= j: the bound on ||s|| is what bounds the
sensitivity (:func:`synthdp.privacy.sensitivity.score_products_sensitivity`).

The map from values to scores is public (a post-processing of the histograms' release); the
sums are private, like every sum of :mod:`synthdp.stats.row_sums`, and combine chunk by chunk.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

from synthdp.stats.histograms import CellLayout

U_FLOOR = 1e-6  # scores within Phi^{-1}(1e-6) = -4.75 and its opposite
MATRIX_CLIP_SHARE = 0.5  # C^2 = this x d where the pairs are denoised as a matrix (matrix_clip_norm_sq)
MATRIX_SCORE_BINS = 128  # at least this many bins of scores per column there (ScoreMap.refined)
MATRIX_MEAN_SHARE = 0.125  # c^2 / C^2 of the scores' means where a design study releases them there (ScoreMap.mean_weight)


def default_clip_norm_sq(d: int) -> float:
    """C^2 = d + 2 sqrt(2 d): the squared norm of d independent standard normal scores is
    chi-square with mean d and standard deviation sqrt(2 d), so this bound, two standard
    deviations above the mean, shrinks a few per cent of the rows of a table whose columns
    are independent (more where they are strongly dependent). Public: d only."""
    return d + 2.0 * math.sqrt(2.0 * d)


def matrix_clip_norm_sq(d: int, share: float = MATRIX_CLIP_SHARE) -> float:
    """C^2 = d / 2 (``share`` x d, MATRIX_CLIP_SHARE by default): the norm bound of the pairs release where its noise
    is too large for any single pair and the release is denoised as a matrix
    (:func:`synthdp.postprocess.pairs.denoised_as_matrix`). Public: d only.

    The release adds noise of sd proportional to C^2 (its sensitivity, sqrt(2) C^2 / n in
    l2) to sum_rows min(1, C^2 / ||s||^2) s s^T / n. Its signal-to-noise ratio, entry by entry
    and for any eigenvalue of the matrix, is therefore that of E[min(1 / C^2, 1 / ||s||^2) s s^T],
    which grows as C^2 falls, to E[s s^T / ||s||^2] (every row's scores on the sphere: the
    spatial sign covariance, whose eigenvectors are those of the correlation for Gaussian
    scores) once every row is shrunk. ||s||^2 is about chi-square with d degrees of freedom, so
    C^2 = d / 2 shrinks all but a few rows (1.3 % at d = 30, under 5 % from d = 13 on): close
    to that limit. The cost is bias, which the copula's model of the release
    (:func:`synthdp.postprocess.pairs.model_means`, which applies the same clip) undoes; where
    the noise is small enough to read pairs one by one the bias matters more than the noise,
    and :func:`default_clip_norm_sq` stays. Measured: docs/decisions/matrix-scores.md.
    """
    return share * d


@dataclass(frozen=True)
class ScoreMap:
    """The public map from unit values to clipped normal scores.

    Attributes
    ----------
    probabilities : array, shape (d, M)
        Each column's released cell probabilities (rows sum to 1), in the cells of ``layout``:
        by default the atom at -1, B = M - 2 equal-width bins of [-1, 1], the atom at +1.
    clip_norm_sq : float
        C^2, the largest squared norm of a row's score vector.
    layout : CellLayout or None
        The cells (:class:`synthdp.stats.histograms.CellLayout`); None: bins and two atoms.
    mean_weight : float
        c >= 0: where positive, the statistic (:func:`score_products`) also holds the sums of
        c s_j, the products of the clipped scores with a constant coordinate c, so that the
        release carries the scores' means beside their products (a design study's choice where the
        pairs are denoised as a matrix, c^2 = MATRIX_MEAN_SHARE x C^2; docs/decisions/score-means.md).
        0: the products only (the product).
    signs : bool
        Each score replaced by its cell's sign (:meth:`cell_signs`: -1 below the released median,
        +1 above, 0 for the cell that holds it) and no norm clip: the statistic is then the sums
        of sgn_i sgn_j of the selected pairs (:func:`synthdp.privacy.release.release_pair_selection`);
        every product lies in [-1, 1] whatever d. ``clip_norm_sq`` is not used.
    """

    probabilities: np.ndarray
    clip_norm_sq: float
    layout: CellLayout | None = None
    mean_weight: float = 0.0
    signs: bool = False

    @property
    def cells(self) -> CellLayout:
        """The layout of the cells (every column in bins and two atoms when none was given)."""
        return CellLayout.given(self.layout, self.probabilities)

    def cell_scores(self) -> np.ndarray:
        """The score of each cell, shape (d, M): Phi^{-1} of the cell's mid-probability among
        the column's values; 0 (the median) for a missing cell and for padding."""
        layout = self.cells
        values = layout.exists() & ~layout.missing_cells()
        p = np.where(values, self.probabilities, 0.0)
        if layout.missing_cells().any():  # the scores of the values among themselves
            p = p / np.maximum(p.sum(axis=1, keepdims=True), 1e-300)
        middle = np.cumsum(p, axis=1) - p / 2
        return np.where(values, special.ndtri(np.clip(middle, U_FLOOR, 1.0 - U_FLOOR)), 0.0)

    def cell_signs(self) -> np.ndarray:
        """Each cell's sign, shape (d, M): -1 where all of the cell lies below the column's released
        median (its cumulative probability at most 1/2), +1 above (the probability before it at
        least 1/2), 0 for the cell that holds the median, and for a missing cell and padding. In
        refined cells (:meth:`refined`) the median's cell is a sliver of a bin, so a continuous
        column's signs split its rows in halves; an integer column's median value signs 0."""
        layout = self.cells
        values = layout.exists() & ~layout.missing_cells()
        p = np.where(values, self.probabilities, 0.0)
        p = p / np.maximum(p.sum(axis=1, keepdims=True), 1e-300)
        after = np.cumsum(p, axis=1)
        before = after - p
        return np.where(values, np.where(after <= 0.5, -1.0, np.where(before >= 0.5, 1.0, 0.0)), 0.0)

    def refined(self, min_bins: int) -> ScoreMap:
        """The same distributions in finer cells: each of B bins split into k = ceil(min_bins / B)
        equal-width bins holding 1/k of its probability each (atoms, integer values and missing
        cells unchanged), so that values in one bin get different scores in the order of their
        values instead of one step score (``self`` when k = 1).

        The distribution is the same piecewise-uniform one, so a copula candidate x = F^{-1}(u)
        falls in the finer cell whose probability interval holds u, as
        :func:`synthdp.postprocess.pairs.model_means` assumes. With few bins (WDBC at
        (1, 1e-10): 4, most of a skewed column's rows in one) step scores keep about half of a
        column's variance and hide the rows' order inside a bin; the finer scores keep it.
        Post-processing of the released histograms: the map stays public.
        """
        layout = self.cells
        k = max(1, math.ceil(min_bins / layout.n_bins))
        if k == 1:
            return self
        fine = CellLayout(layout.n_bins * k, layout.values, layout.missing)
        probabilities = np.zeros((layout.d, fine.n_cells))
        bins = layout.n_bins
        for j in range(layout.d):
            row = self.probabilities[j]
            if layout.values[j] is None:  # atom, B bins split k ways, atom, then the missing cell if any
                probabilities[j, 0] = row[0]
                probabilities[j, 1 : bins * k + 1] = np.repeat(row[1 : bins + 1] / k, k)
                tail = layout.column_cells(j) - bins - 1
                probabilities[j, bins * k + 1 : bins * k + 1 + tail] = row[bins + 1 : bins + 1 + tail]
            else:
                cells = layout.column_cells(j)
                probabilities[j, :cells] = row[:cells]
        return ScoreMap(probabilities, self.clip_norm_sq, fine, self.mean_weight, self.signs)

    def scores(self, points: np.ndarray, missing: np.ndarray | None = None) -> np.ndarray:
        """The normal scores s_j(x_j) of unit points, shape (rows, d), before the norm clip
        (``missing``: as in :meth:`CellLayout.cells`)."""
        table = self.cell_scores()
        cells = self.cells.cells(points, missing)
        return np.take_along_axis(table.T, cells, axis=0)

    def clipped_scores(self, points: np.ndarray, missing: np.ndarray | None = None) -> np.ndarray:
        """The score vectors shrunk onto ||s||^2 <= C^2, shape (rows, d); their signs with ``signs``."""
        if self.signs:
            return np.take_along_axis(self.cell_signs().T, self.cells.cells(points, missing), axis=0)
        scores = self.scores(points, missing)
        norm_sq = np.einsum("ij,ij->i", scores, scores)
        shrink = np.sqrt(np.minimum(1.0, self.clip_norm_sq / np.maximum(norm_sq, 1e-300)))
        return scores * shrink[:, None]


def pair_order(d: int) -> tuple[np.ndarray, np.ndarray]:
    """The pairs (i, j), i <= j, in the order of :func:`score_products`: ``np.triu_indices(d)``."""
    return np.triu_indices(d)


def pair_matrix(values: np.ndarray, d: int) -> np.ndarray:
    """The symmetric d x d matrix whose entries (i, j), i <= j, are ``values`` in :func:`pair_order`."""
    matrix = np.zeros((d, d))
    matrix[pair_order(d)] = values
    return matrix + np.triu(matrix, 1).T


def statistic_size(d: int, mean_weight: float) -> int:
    """The length of :func:`score_products`' statistic: d (d + 1) / 2 products, and d sums of
    c s_j where the map's ``mean_weight`` c is positive."""
    return d * (d + 1) // 2 + (d if mean_weight > 0 else 0)


def split_statistic(values: np.ndarray, d: int, mean_weight: float) -> tuple[np.ndarray, np.ndarray | None]:
    """The statistic's products s_i s_j, i <= j (in :func:`pair_order`), and its scores' part divided
    by c (the sums or means of s_j; None where ``mean_weight`` c is 0)."""
    pairs = d * (d + 1) // 2
    if len(values) != statistic_size(d, mean_weight):
        raise ValueError(f"a score statistic of {d} columns has {statistic_size(d, mean_weight)} values, "
                         f"got {len(values)}")
    return values[:pairs], (values[pairs:] / mean_weight if mean_weight > 0 else None)


def clipped_score_statistic(scores: np.ndarray, mean_weight: float) -> np.ndarray:
    """Sum over rows of s_i s_j for i <= j of clipped scores (rows, d), followed, where
    ``mean_weight`` c > 0, by the sums of c s_j: shape (:func:`statistic_size`,)."""
    products = (scores.T @ scores)[pair_order(scores.shape[1])]
    if mean_weight <= 0:
        return products
    return np.concatenate([products, mean_weight * scores.sum(axis=0)])


def score_products(points: np.ndarray, score_map: ScoreMap, missing: np.ndarray | None = None) -> np.ndarray:
    """Sum over rows of s_i s_j for i <= j of the clipped scores, and of c s_j where the map's
    ``mean_weight`` c is positive: shape (:func:`statistic_size`,). Private."""
    return clipped_score_statistic(score_map.clipped_scores(points, missing), score_map.mean_weight)
