"""Normal scores of unit columns through released one-way distributions, and their products.

The pairwise statistic of numeric tables (docs/relationships.md). Column j's released one-way
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


def default_clip_norm_sq(d: int) -> float:
    """C^2 = d + 2 sqrt(2 d): the squared norm of d independent standard normal scores is
    chi-square with mean d and standard deviation sqrt(2 d), so this bound, two standard
    deviations above the mean, shrinks a few per cent of the rows of a table whose columns
    are independent (more where they are strongly dependent). Public: d only."""
    return d + 2.0 * math.sqrt(2.0 * d)


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
    """

    probabilities: np.ndarray
    clip_norm_sq: float
    layout: CellLayout | None = None

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

    def scores(self, points: np.ndarray, missing: np.ndarray | None = None) -> np.ndarray:
        """The normal scores s_j(x_j) of unit points, shape (rows, d), before the norm clip
        (``missing``: as in :meth:`CellLayout.cells`)."""
        table = self.cell_scores()
        cells = self.cells.cells(points, missing)
        return np.take_along_axis(table.T, cells, axis=0)

    def clipped_scores(self, points: np.ndarray, missing: np.ndarray | None = None) -> np.ndarray:
        """The score vectors shrunk onto ||s||^2 <= C^2, shape (rows, d)."""
        scores = self.scores(points, missing)
        norm_sq = np.einsum("ij,ij->i", scores, scores)
        shrink = np.sqrt(np.minimum(1.0, self.clip_norm_sq / np.maximum(norm_sq, 1e-300)))
        return scores * shrink[:, None]


def pair_order(d: int) -> tuple[np.ndarray, np.ndarray]:
    """The pairs (i, j), i <= j, in the order of :func:`score_products`: ``np.triu_indices(d)``."""
    return np.triu_indices(d)


def score_products(points: np.ndarray, score_map: ScoreMap, missing: np.ndarray | None = None) -> np.ndarray:
    """Sum over rows of s_i s_j for i <= j of the clipped scores, shape (d (d + 1) / 2,). Private."""
    scores = score_map.clipped_scores(points, missing)
    return (scores.T @ scores)[pair_order(points.shape[1])]
