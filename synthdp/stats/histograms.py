"""Histogram cells of unit-box values: sums over rows, no noise, and the public layout of the cells."""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

if TYPE_CHECKING:
    from synthdp.domain.box import Domain

EDGES = np.concatenate([-(2.0 ** (np.arange(-64, 129)[::-1] / 2)), [0.0], 2.0 ** (np.arange(-64, 129) / 2)])


N_BINS = len(EDGES) + 1  # bins: (-inf, e_0), [e_0, e_1), ..., [e_last, inf)


def histogram_counts(values: np.ndarray) -> np.ndarray:
    """Counts of the values in each fixed bin, shape (N_BINS,). Private: a sum over rows.

    Parameters
    ----------
    values : array, shape (n,)
        One private column, or a chunk of it: the counts of the chunks add up. A missing value
        (NaN, a nullable column's missing cell) is in no bin.
    """
    values = values[~np.isnan(values)]
    bins = np.searchsorted(EDGES, values, side="right")  # bin j holds [e_{j-1}, e_j)
    return np.bincount(bins, minlength=N_BINS)


def bin_edges(n_bins: int) -> np.ndarray:
    """Edges of ``n_bins`` equal-width bins of [-1, 1], shape (n_bins + 1,)."""
    return np.linspace(-1.0, 1.0, n_bins + 1)


def cell_indices(points: np.ndarray, n_bins: int) -> np.ndarray:
    """The cell of each unit value, shape of ``points``: 0 for x = -1, 1..n_bins for the bins, n_bins + 1 for x = +1."""
    points = np.asarray(points, dtype=float)
    return CellSearch.binned(1, n_bins).cells(points.reshape(-1, 1)).reshape(points.shape)


def reference_cell_indices(points: np.ndarray, n_bins: int) -> np.ndarray:
    """:func:`cell_indices` by a binary search of the edges (the definition; NaN in cell n_bins)."""
    inner = np.clip(np.searchsorted(bin_edges(n_bins), points, side="right"), 1, n_bins)  # 1..n_bins
    return np.where(points <= -1.0, 0, np.where(points >= 1.0, n_bins + 1, inner))


def nearest_value(values: np.ndarray, points: np.ndarray) -> np.ndarray:
    """The position of the nearest of the sorted ``values`` to each point (a tie goes to the
    lower value): the cell of a column counted value by value, by a binary search of the midpoints."""
    return np.searchsorted((values[1:] + values[:-1]) / 2, points)


BLOCK_VALUES = 2**16  # values of a column per block of CellSearch.cells: its arrays stay in the processor's cache
SEARCH_ROUNDS = 3  # moves of a guessed cell before a block falls back to binary searches


class CellSearch:
    """The cells of every column of unit points, by arithmetic.

    Each column's cells are delimited by sorted boundaries, about equally spaced: the bin
    edges of [-1, 1] (:func:`cell_indices`), or the midpoints between an integer column's
    values (:func:`nearest_value`). A value's cell is guessed from an affine map of it, then
    checked against the boundaries on either side and moved until it is the number of
    boundaries at or below the value: the result of a binary search of the boundaries, exactly
    (the tests compare every cell with :func:`reference_cell_indices` and
    :func:`nearest_value`), but with a few passes over cached blocks of a column instead of a
    search per value. A block with a NaN, or whose guesses do not settle within
    ``SEARCH_ROUNDS`` moves, is searched by :func:`reference_cell_indices` or :func:`nearest_value`.

    Parameters
    ----------
    columns : list of (n_bins or None, values or None)
        Per column: ``(B, None)`` for B equal-width bins and two atoms, ``(None, values)`` for
        one cell per value.
    """

    def __init__(self, columns: list[tuple[int | None, np.ndarray | None]]) -> None:
        self.columns = columns
        self._maps = []
        for n_bins, values in columns:
            if values is None:
                assert n_bins is not None
                boundaries = bin_edges(n_bins)  # cell = #{edges <= x}, less 1 at x = -1 (the atom)
                slope, intercept, atom = n_bins / 2.0, n_bins / 2.0 + 1.0, -1.0
            else:  # #{midpoints < x} = #{next float above each midpoint <= x}
                boundaries = np.nextafter((values[1:] + values[:-1]) / 2, np.inf)
                span = float(values[-1] - values[0]) if len(values) > 1 else 0.0
                slope = (len(values) - 1) / span if span > 0 else 0.0
                intercept, atom = 0.5 - float(values[0]) * slope, None
            # at cell c: boundaries c - 1 and c; NaN beyond the ends, which no comparison moves past
            table = np.concatenate([[np.nan], boundaries, [np.nan]])
            self._maps.append((table[:-1], table[1:], slope, intercept, float(len(boundaries)), atom))

    @classmethod
    def binned(cls, d: int, n_bins: int) -> CellSearch:
        return cls([(n_bins, None)] * d)

    def cells(self, points: np.ndarray) -> np.ndarray:
        """The cell of each value of ``points`` (rows, d) in its column, shape (rows, d), int64."""
        out = np.empty(np.shape(points), dtype=np.int64)
        np.copyto(out, self.cells_by_column(points).T)
        return out

    def cells_by_column(self, points: np.ndarray, compiled: bool = False) -> np.ndarray:
        """The cells of :meth:`cells`, transposed: shape (d, rows), each column's contiguous (int32).
        ``compiled``: by :func:`synthdp.stats.compiled.column_cells` (numba; large tables), the same cells."""
        points = np.asarray(points, dtype=float)
        rows, d = points.shape
        if compiled:
            from synthdp.stats import compiled as kernels

            return kernels.column_cells(points.T, *self.compiled_maps)
        columns = points.T if points.flags.f_contiguous else np.ascontiguousarray(points.T)  # (d, rows)
        out = np.empty((d, rows), dtype=np.int32)
        for j in range(d):
            for start in range(0, rows, BLOCK_VALUES):
                self._column_block(j, columns[j, start : start + BLOCK_VALUES], out[j, start : start + BLOCK_VALUES])
        return out

    @functools.cached_property
    def compiled_maps(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The maps of :meth:`_column_block` as arrays for the compiled kernel: every column's
        boundary table padded with NaN to the widest, and its slope, intercept, top and whether binned."""
        tops = np.array([int(top) for _, _, _, _, top, _ in self._maps], dtype=np.int64)
        boundaries = np.full((len(self._maps), int(tops.max(initial=0)) + 2), np.nan)
        for j, (below, above, *_rest) in enumerate(self._maps):
            boundaries[j, : len(below) + 1] = np.concatenate([below, above[-1:]])
        return (boundaries, np.array([m[2] for m in self._maps], dtype=float),
                np.array([m[3] for m in self._maps], dtype=float), tops,
                np.array([m[5] is not None for m in self._maps]))

    def _column_block(self, j: int, x: np.ndarray, out: np.ndarray) -> None:
        """The cells of a block of column ``j``'s values ``x`` into ``out``."""
        below, above, slope, intercept, top, atom = self._maps[j]
        guess = x * slope
        guess += intercept
        np.maximum(guess, 0.0, out=guess)
        np.minimum(guess, top, out=guess)
        if not np.isnan(guess).any():
            np.copyto(out, guess, casting="unsafe")  # truncation: the floor of a guess >= 0
            for _ in range(SEARCH_ROUNDS):
                down = np.take(below, out) > x
                up = np.take(above, out) <= x
                if not (down.any() or up.any()):
                    if atom is not None:
                        at_atom = x == atom
                        if at_atom.any():
                            np.copyto(out, 0, where=at_atom)
                    return
                out -= down
                out += up
        n_bins, values = self.columns[j]
        if values is None:
            assert n_bins is not None
            out[...] = reference_cell_indices(x, n_bins)
        else:
            out[...] = nearest_value(values, x)


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
    def for_domain(cls, domain: Domain, n_bins: int, value_cells: int, nullable: Sequence[str] = ()) -> CellLayout:
        """The cells of the one-way histograms of ``domain``'s columns (public: bounds, types and
        the plan's sizes).

        A continuous column, or an integer (or date) column with many values, gets ``n_bins``
        equal-width bins and an atom at each bound. An integer column with k integer values
        inside its bounds gets one cell per value when k <= ``value_cells``
        (:func:`synthdp.pipeline.plan.value_cells_limit`), and so does a column that declares its
        k ``values`` (:class:`synthdp.domain.box.ColumnDomain`), one cell per declared value; a
        row's value lies in the cell of the value nearest to it. The histograms' sensitivity does
        not change: a row still lies in one cell per column. A column named in ``nullable`` gets a
        last cell for its missing cells.
        """
        values: list[np.ndarray | None] = []
        for j, column in enumerate(domain.columns):
            low, high = math.ceil(column.lower), math.floor(column.upper)
            # an integer column's values counted before they are made: bounds of 10^12 values are bins, not an array
            declared = (np.asarray(column.values, dtype=float) if column.values is not None
                        else np.arange(low, high + 1, dtype=float) if column.integer and high - low < value_cells
                        else None)
            if declared is not None and len(declared) <= value_cells:
                rows = np.tile((domain.lower + domain.upper) / 2, (len(declared), 1))
                rows[:, j] = declared
                values.append(domain.to_unit(rows)[:, j])  # the values mapped onto [-1, 1] as the domain maps them
            else:
                values.append(None)
        return cls(n_bins, tuple(values), tuple(column.name in nullable for column in domain.columns))

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
    def cell_dtype(self) -> np.dtype:
        """The narrowest unsigned integer type that holds a cell number (0 to M - 1): how a pass keeps
        its rows' cells for the next (one byte per value where M <= 256)."""
        return np.dtype(np.uint8 if self.n_cells <= 2**8 else np.uint16 if self.n_cells <= 2**16 else np.int32)

    @property
    def value_columns(self) -> int:
        """How many columns have one cell per value (integer or declared)."""
        return sum(values is not None for values in self.values)

    def cells(self, points: np.ndarray, missing: np.ndarray | None = None) -> np.ndarray:
        """The cell of each unit value, shape of ``points`` (rows, d).

        ``missing`` (rows, d) bool marks missing cells of nullable columns: they go to the
        column's last cell, whatever their unit value.
        """
        out = self._search.cells(points)  # bins, or the nearest value (integer values mapped to the unit scale)
        if missing is not None:
            self._missing_cells(out, missing)
        return out

    def _missing_cells(self, cells: np.ndarray, missing: np.ndarray) -> None:
        for j in range(self.d):
            if self.missing[j]:
                cells[missing[:, j], j] = self.observed_cells(j)

    @functools.cached_property
    def _search(self) -> CellSearch:
        return CellSearch([(self.n_bins, None) if values is None else (None, values) for values in self.values])

    def counts(self, points: np.ndarray, missing: np.ndarray | None = None) -> np.ndarray:
        """Rows per cell and column, shape (d, M). Each row lies in exactly one cell of each
        column (:func:`synthdp.privacy.sensitivity.histogram_sensitivity`). Private: a sum over rows."""
        return self.count(self.cells_by_column(points, missing))

    def cells_by_column(self, points: np.ndarray, missing: np.ndarray | None = None,
                        compiled: bool = False) -> np.ndarray:
        """:meth:`cells` transposed, shape (d, rows), int32: each column's cells contiguous (what
        :meth:`count` counts, without :meth:`cells`' copy into rows). ``compiled``: as
        :meth:`CellSearch.cells_by_column`'s."""
        cells = self._search.cells_by_column(points, compiled)
        if missing is not None:
            self._missing_cells(cells.T, missing)
        return cells

    @property
    def compiled_maps(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The cells' search tables for the compiled kernels (:attr:`CellSearch.compiled_maps`; without the
        missing cells, which only a mixed table's nullable columns have)."""
        return self._search.compiled_maps

    def count(self, cells: np.ndarray, compiled: bool = False) -> np.ndarray:
        """Rows per cell and column, shape (d, M), of cells shaped as :meth:`cells_by_column` gives them
        (``compiled``: by :func:`synthdp.stats.compiled.cell_counts`, the same counts)."""
        if compiled:
            from synthdp.stats import compiled as kernels

            return kernels.cell_counts(cells, self.n_cells)
        counts = np.zeros((self.d, self.n_cells))
        for j in range(self.d):
            counts[j] = np.bincount(cells[j], minlength=self.n_cells)
        return counts

    def same_cells(self, other: CellLayout) -> bool:
        """Whether ``other`` puts every point in the same cell (the same bins, value cells and missing cells)."""
        return self is other or (self.n_bins == other.n_bins and self.missing == other.missing
                                 and len(self.values) == len(other.values)
                                 and all((a is None and b is None) or (a is not None and b is not None
                                                                       and np.array_equal(a, b))
                                         for a, b in zip(self.values, other.values)))

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
