"""Encoded points of a mixed table held per column: the one-hot encoding without its zeros.

A mixed table's encoded point (:mod:`synthdp.domain.schema`) has D = d + sum of the blocks' widths
coordinates, of which each binary or categorical column sets at most one. :class:`EncodedPoints`
holds the d numeric coordinates and one level per column instead, so m points take
m (d + k) numbers rather than m D: the candidates of a column of 5 000 levels (some 75 000 of
them) took 3 GB as (m, D) float64. It reads as that (m, D) array where a caller needs one:
``points[rows]`` selects points, ``points[:, j]`` or ``points[:, a:b]`` gives the dense
coordinates (a block's one-hot columns), and ``numpy.asarray(points)`` the whole array, with
the same values to the bit (0.0 and 1.0, and the numeric coordinates as they are).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from synthdp.domain.schema import Schema


class EncodedPoints:
    """m encoded points: numeric coordinates (m, d), and each block's level, shape (m, k).

    Parameters
    ----------
    numeric : array, shape (m, d)
        The numeric coordinates.
    levels : int array, shape (m, k)
        Column b's level of each point, an index into its ``all_levels``: its one-hot coordinate
        is ``starts[b] + levels[:, b] - offsets[b]`` where that lies within the block (a binary
        column's first level has no coordinate: offset 1).
    starts, widths, offsets : int sequences of length k
        Each block's first coordinate, its width and its offset.
    n_coordinates : int
        D.
    """

    ndim = 2
    dtype = np.dtype(np.float64)

    def __init__(self, numeric: np.ndarray, levels: np.ndarray, starts: Sequence[int] | np.ndarray,
                 widths: Sequence[int] | np.ndarray, offsets: Sequence[int] | np.ndarray, n_coordinates: int):
        self.numeric = np.asarray(numeric, dtype=np.float64)
        self.levels = np.asarray(levels, dtype=np.int64).reshape(len(self.numeric), len(starts))
        self.starts = np.asarray(starts, dtype=np.int64)
        self.widths = np.asarray(widths, dtype=np.int64)
        self.offsets = np.asarray(offsets, dtype=np.int64)
        self.n_coordinates = int(n_coordinates)

    @classmethod
    def of(cls, schema: Schema, numeric: np.ndarray, levels: Sequence[np.ndarray]) -> EncodedPoints:
        """Points of ``schema``'s encoding: ``levels`` holds each of its binary and categorical columns'
        level codes (indices into ``all_levels``), in the schema's order."""
        blocks = [schema.block_slice(column.name) for column in schema.categorical]
        count = len(numeric)
        codes = (np.stack([np.asarray(level, dtype=np.int64) for level in levels], axis=1) if len(levels)
                 else np.zeros((count, 0), dtype=np.int64))
        return cls(numeric, codes, [block.start for block in blocks], [block.stop - block.start for block in blocks],
                   [int(column.binary) for column in schema.categorical], schema.n_coordinates)

    # ------------------------------------------------------------------ the (m, D) array's view
    @property
    def shape(self) -> tuple[int, int]:
        return (len(self.numeric), self.n_coordinates)

    @property
    def size(self) -> int:
        return len(self.numeric) * self.n_coordinates

    def __len__(self) -> int:
        return len(self.numeric)

    def __repr__(self) -> str:
        return f"EncodedPoints(shape={self.shape}, blocks={len(self.starts)})"

    def coordinates(self, block: int) -> np.ndarray:
        """Each point's coordinate within block ``block`` (-1 where its level has none), shape (m,)."""
        coordinate = self.levels[:, block] - self.offsets[block]
        return np.where((coordinate >= 0) & (coordinate < self.widths[block]), coordinate, -1)

    def select(self, rows: Any) -> EncodedPoints:
        """The points ``rows`` selects (a slice, integer positions or a boolean mask), as numpy would."""
        return EncodedPoints(self.numeric[rows], self.levels[rows], self.starts, self.widths, self.offsets,
                             self.n_coordinates)

    def column(self, j: int) -> np.ndarray:
        """Coordinate ``j`` of every point, shape (m,): a numeric coordinate, or an indicator (0.0 or 1.0)."""
        j = int(j)
        if j < 0:
            j += self.n_coordinates
        if not 0 <= j < self.n_coordinates:
            raise IndexError(f"coordinate {j} is out of range for {self.n_coordinates} coordinates")
        d = self.numeric.shape[1]
        if j < d:
            return self.numeric[:, j]
        block = int(np.searchsorted(self.starts, j, side="right")) - 1
        return (self.coordinates(block) == j - self.starts[block]).astype(np.float64)

    def columns(self, start: int, stop: int) -> np.ndarray:
        """Coordinates ``start`` to ``stop`` (excluded) of every point, dense, shape (m, stop - start)."""
        d, m = self.numeric.shape[1], len(self.numeric)
        out = np.zeros((m, max(0, stop - start)))
        if start < d:
            out[:, : min(d, stop) - start] = self.numeric[:, start : min(d, stop)]
        rows = np.arange(m)
        for block, (first, width) in enumerate(zip(self.starts, self.widths)):
            if first + width <= start or first >= stop:
                continue
            coordinate = self.coordinates(block)
            at = first + coordinate
            inside = (coordinate >= 0) & (at >= start) & (at < stop)
            out[rows[inside], at[inside] - start] = 1.0
        return out

    def toarray(self) -> np.ndarray:
        """The dense (m, D) array."""
        return self.columns(0, self.n_coordinates)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        dense = self.toarray()
        return dense if dtype is None else dense.astype(dtype, copy=False)

    def copy(self) -> EncodedPoints:
        return EncodedPoints(self.numeric.copy(), self.levels.copy(), self.starts, self.widths, self.offsets,
                             self.n_coordinates)

    def __getitem__(self, key: Any) -> Any:
        if not isinstance(key, tuple):
            if isinstance(key, (int, np.integer)):  # one point: a row of the dense array
                return self.select(slice(int(key), int(key) + 1 or None)).toarray()[0]
            return self.select(key)
        if len(key) != 2:
            raise IndexError("an EncodedPoints is indexed by rows, or by (rows, coordinates)")
        rows, coordinates = key
        if isinstance(rows, (int, np.integer)):  # numpy drops the row axis
            return self.select([int(rows)])[:, coordinates][0]
        points = self if isinstance(rows, slice) and rows == slice(None) else self.select(rows)
        if isinstance(coordinates, (int, np.integer)):
            return points.column(int(coordinates))
        if isinstance(coordinates, slice):
            start, stop, step = coordinates.indices(self.n_coordinates)
            if step == 1:
                return points.columns(start, max(start, stop))
            return points.columns(0, self.n_coordinates)[:, coordinates]
        wanted = np.asarray(coordinates)
        if not isinstance(rows, slice):  # rows and coordinates both arrays: numpy pairs them up, on the whole array
            return self.toarray()[key]
        if wanted.dtype == bool:
            wanted = np.flatnonzero(wanted)
        if wanted.ndim != 1 or not np.issubdtype(wanted.dtype, np.integer):
            raise IndexError("coordinates must be an integer, a slice or a 1-d array of them")
        if len(wanted) == 0:
            return np.zeros((len(points), 0))
        wanted = np.where(wanted < 0, wanted + self.n_coordinates, wanted)
        low, high = int(wanted.min()), int(wanted.max()) + 1
        return points.columns(low, high)[:, wanted - low]  # the span they cover, dense
