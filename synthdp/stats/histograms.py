"""Histogram cells of unit-box values: sums over rows, no noise."""

from __future__ import annotations

import numpy as np

EDGES = np.concatenate([-(2.0 ** (np.arange(-64, 129)[::-1] / 2)), [0.0], 2.0 ** (np.arange(-64, 129) / 2)])


N_BINS = len(EDGES) + 1  # bins: (-inf, e_0), [e_0, e_1), ..., [e_last, inf)


def histogram_counts(values: np.ndarray) -> np.ndarray:
    """Counts of the values in each fixed bin, shape (N_BINS,). Private: a sum over rows.

    Parameters
    ----------
    values : array, shape (n,)
        One private column (finite values), or a chunk of it: the counts of the chunks add up.
    """
    bins = np.searchsorted(EDGES, values, side="right")  # bin j holds [e_{j-1}, e_j)
    return np.bincount(bins, minlength=N_BINS)


def bin_edges(n_bins: int) -> np.ndarray:
    """Edges of ``n_bins`` equal-width bins of [-1, 1], shape (n_bins + 1,)."""
    return np.linspace(-1.0, 1.0, n_bins + 1)


def cell_indices(points: np.ndarray, n_bins: int) -> np.ndarray:
    """The cell of each unit value, shape of ``points``: 0 for x = -1, 1..n_bins for the bins, n_bins + 1 for x = +1."""
    inner = np.clip(np.searchsorted(bin_edges(n_bins), points, side="right"), 1, n_bins)  # 1..n_bins
    return np.where(points <= -1.0, 0, np.where(points >= 1.0, n_bins + 1, inner))


def cell_counts(points: np.ndarray, n_bins: int) -> np.ndarray:
    """Rows per cell and column, shape (d, n_bins + 2): [x = -1, the bins, x = +1].

    Each row lies in exactly one cell of each column (the sensitivity in
    :func:`synthdp.privacy.sensitivity.histogram_sensitivity`).
    """
    n, d = points.shape
    cells = cell_indices(points, n_bins)
    counts = np.zeros((d, n_bins + 2))
    for column in range(d):
        counts[column] = np.bincount(cells[:, column], minlength=n_bins + 2)
    return counts
