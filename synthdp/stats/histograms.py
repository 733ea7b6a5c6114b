"""Histogram cells of unit-box values: sums over rows, no noise, and the public layout of the cells."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

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


MAX_VALUE_CELLS = 1024  # most cells of an integer column counted value by value


@dataclass(frozen=True, eq=False)
class CellLayout:
    """The cells of every column's one-way histogram, in unit coordinates (public).

    A column has either

    * the atom at -1, B equal-width bins of [-1, 1] and the atom at +1 (:func:`cell_indices`),
      or
    * one cell per value of an integer column (``values[j]``: the unit positions of its
      integer values, in order), each a point mass: a spike such as 40 hours a week stays on
      its value instead of being spread over a bin;

    and, for a nullable column (``missing[j]``), a last cell holding its missing cells. Cells
    beyond a column's own are padding: arrays of cells have the width of the widest column.
    """

    n_bins: int
    values: tuple[np.ndarray | None, ...]
    missing: tuple[bool, ...]

    @classmethod
    def bins(cls, d: int, n_bins: int) -> CellLayout:
        """Every column in ``n_bins`` bins and two atoms, none nullable."""
        return cls(n_bins, (None,) * d, (False,) * d)

    @classmethod
    def given(cls, layout: CellLayout | None, cell_array: np.ndarray) -> CellLayout:
        """``layout``, or, if None, the bins-and-atoms layout of a (d, B + 2) array of cells."""
        return layout if layout is not None else cls.bins(cell_array.shape[0], cell_array.shape[1] - 2)

    @property
    def d(self) -> int:
        return len(self.values)

    def observed_cells(self, column: int) -> int:
        """The cells of a column's values (without its missing cell)."""
        values = self.values[column]
        return self.n_bins + 2 if values is None else len(values)

    def column_cells(self, column: int) -> int:
        return self.observed_cells(column) + self.missing[column]

    @property
    def n_cells(self) -> int:
        """M, the width of every array of cells: the widest column's cells."""
        return max((self.column_cells(j) for j in range(self.d)), default=self.n_bins + 2)

    @property
    def value_columns(self) -> int:
        """How many columns have one cell per integer value."""
        return sum(values is not None for values in self.values)

    def cells(self, points: np.ndarray, missing: np.ndarray | None = None) -> np.ndarray:
        """The cell of each unit value, shape of ``points`` (rows, d).

        ``missing`` (rows, d) bool marks missing cells of nullable columns: they go to the
        column's last cell, whatever their unit value.
        """
        out = np.empty(points.shape, dtype=np.int64)
        for j, values in enumerate(self.values):
            if values is None:
                out[:, j] = cell_indices(points[:, j], self.n_bins)
            else:  # the nearest value: points are integer values mapped to the unit scale
                out[:, j] = np.searchsorted((values[1:] + values[:-1]) / 2, points[:, j])
            if missing is not None and self.missing[j]:
                out[missing[:, j], j] = self.observed_cells(j)
        return out

    def counts(self, points: np.ndarray, missing: np.ndarray | None = None) -> np.ndarray:
        """Rows per cell and column, shape (d, M). Each row lies in exactly one cell of each
        column (:func:`synthdp.privacy.sensitivity.histogram_sensitivity`). Private: a sum over rows."""
        cells = self.cells(points, missing)
        counts = np.zeros((self.d, self.n_cells))
        for j in range(self.d):
            counts[j] = np.bincount(cells[:, j], minlength=self.n_cells)
        return counts

    def exists(self) -> np.ndarray:
        """Which entries of a (d, M) array of cells are cells of their column (not padding)."""
        return np.arange(self.n_cells)[None, :] < np.array([self.column_cells(j) for j in range(self.d)])[:, None]

    def bound_atoms(self) -> np.ndarray:
        """Which entries of a (d, M) array are the atoms at -1 and +1 of a binned column, shape (d, M)."""
        atoms = np.zeros((self.d, self.n_cells), dtype=bool)
        for j, values in enumerate(self.values):
            if values is None:
                atoms[j, [0, self.n_bins + 1]] = True
        return atoms

    def missing_cells(self) -> np.ndarray:
        """Which entries of a (d, M) array are a nullable column's missing cell, shape (d, M)."""
        out = np.zeros((self.d, self.n_cells), dtype=bool)
        for j in range(self.d):
            if self.missing[j]:
                out[j, self.observed_cells(j)] = True
        return out

    def indicators(self, points: np.ndarray, missing: np.ndarray | None = None) -> sp.csr_matrix:
        """Which cell each point is in, as the rows of a sparse 0/1 matrix, shape (cells, points).

        One row per cell of :meth:`exists`, column by column: its mean over a table is that
        cell's frequency, the statistic of the histograms (``missing`` as in :meth:`cells`).
        """
        cells = self.cells(points, missing)
        offsets = np.concatenate([[0], np.cumsum([self.column_cells(j) for j in range(self.d)])])
        rows = (cells + offsets[:-1]).reshape(-1)
        columns = np.repeat(np.arange(len(points)), self.d)
        return sp.csr_matrix((np.ones(len(rows)), (rows, columns)), shape=(int(offsets[-1]), len(points)))

    def flat(self, cell_array: np.ndarray) -> np.ndarray:
        """The cells of a (d, M) array in the row order of :meth:`indicators`, shape (cells,)."""
        return cell_array[self.exists()]

    def to_dict(self) -> dict:
        """For the plan in the report: the bins and the columns counted value by value."""
        return {"bins": self.n_bins, "value_cells": [0 if v is None else len(v) for v in self.values],
                "missing_cell": list(self.missing)}
