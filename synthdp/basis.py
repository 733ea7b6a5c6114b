"""Chebyshev product basis and its moments.

The basis functions are phi_r(x) = prod_i T_{r_i}(x_i) for multi-indices r, where
T_k(x) = cos(k arccos x) is the Chebyshev polynomial of the first kind. T_k is evaluated by
the three-term recurrence T_{k+1} = 2x T_k - T_{k-1}, and each product runs only over the
non-zero degrees of r, so a basis of R functions on n points costs O(n * R * s) for
multi-indices with at most s non-zero entries.

Every |phi_r| <= 1 on [-1, 1]^d; the moment sensitivity in :mod:`synthdp.release` rests on it.
The constant phi_0 = 1 is never part of an index set here: its moment is exactly 1.
"""

from __future__ import annotations

import itertools
from typing import Iterator

import numpy as np
import scipy.sparse as sp

ROW_CHUNK = 4096  # rows evaluated at once; bounds the (rows, R, s) gather array
CHUNK_ENTRIES = 4_000_000  # ... and so does this, for large bases (mixed tables: R in the thousands)


def lowest_degree_indices(d: int, count: int) -> np.ndarray:
    """The ``count`` non-constant multi-indices of lowest total degree, shape (count, d).

    Order: by total degree; within a degree by number of non-zero entries (so the squares
    T_2(x_i) come before the products x_i x_j); then by the split of the degree over those
    entries, largest first; then by columns, lexicographically. The rule is fixed, so the
    basis is public and deterministic.
    """
    chosen: list[np.ndarray] = []
    degree = 1
    while len(chosen) < count:
        for index in _indices_of_degree(d, degree):
            chosen.append(index)
            if len(chosen) == count:
                break
        degree += 1
    return np.array(chosen, dtype=np.int64).reshape(count, d)


def _indices_of_degree(d: int, degree: int) -> Iterator[np.ndarray]:
    for support_size in range(1, min(d, degree) + 1):
        for parts in _compositions(degree, support_size):
            for columns in itertools.combinations(range(d), support_size):
                index = np.zeros(d, dtype=np.int64)
                index[list(columns)] = parts
                yield index


def _compositions(total: int, parts: int) -> Iterator[tuple[int, ...]]:
    """Ordered ways to write ``total`` as ``parts`` positive integers, largest first."""
    if parts == 1:
        yield (total,)
        return
    for first in range(total - parts + 1, 0, -1):
        for rest in _compositions(total - first, parts - 1):
            yield (first, *rest)


def count_indices_up_to_degree(d: int, degree: int) -> int:
    """Number of non-constant multi-indices with total degree <= ``degree``: C(d+g, g) - 1."""
    from math import comb

    return comb(d + degree, degree) - 1


def tensor_indices(d: int, t: int) -> np.ndarray:
    """All of {0..t-1}^d except the zero index (Algorithm 1's basis), shape (t^d - 1, d)."""
    grids = np.meshgrid(*([np.arange(t)] * d), indexing="ij")
    indices = np.stack([g.ravel() for g in grids], axis=1)
    return indices[1:]  # the first row is the zero index


def chebyshev_table(x: np.ndarray, max_degree: int) -> np.ndarray:
    """T_0..T_max_degree at every entry of x, shape x.shape + (max_degree + 1,)."""
    x = np.asarray(x, dtype=float)
    table = np.empty(x.shape + (max_degree + 1,))
    table[..., 0] = 1.0
    if max_degree >= 1:
        table[..., 1] = x
    for k in range(2, max_degree + 1):
        table[..., k] = 2.0 * x * table[..., k - 1] - table[..., k - 2]
    return table


class ChebyshevBasis:
    """A fixed set of R non-constant product-Chebyshev functions on [-1, 1]^d.

    Parameters
    ----------
    indices : int array, shape (R, d)
        The multi-indices r, none of them all-zero.
    """

    def __init__(self, indices: np.ndarray):
        indices = np.asarray(indices, dtype=np.int64)
        if indices.ndim != 2 or indices.shape[0] == 0:
            raise ValueError("indices must be a non-empty (R, d) array")
        if np.any(indices.sum(axis=1) == 0):
            raise ValueError("the constant function is not part of a basis")
        self.indices = indices
        self.max_degree = int(indices.max())
        # Sparse form: for each function, up to s (column, degree) pairs; padding uses
        # degree 0 (T_0 = 1), so a product over the padded row is the product over the support.
        support = indices > 0
        width = max(1, int(support.sum(axis=1).max()))
        self._columns = np.zeros((len(indices), width), dtype=np.int64)
        self._degrees = np.zeros((len(indices), width), dtype=np.int64)
        for row, index in enumerate(indices):
            columns = np.flatnonzero(index)
            self._columns[row, : len(columns)] = columns
            self._degrees[row, : len(columns)] = index[columns]

    @property
    def size(self) -> int:
        return len(self.indices)

    @property
    def d(self) -> int:
        return self.indices.shape[1]

    def evaluate(self, points: np.ndarray) -> np.ndarray:
        """phi_r at each point, shape (len(points), R)."""
        points = np.atleast_2d(np.asarray(points, dtype=float))
        out = np.empty((len(points), self.size))
        step = self._row_chunk
        for start in range(0, len(points), step):
            block = chebyshev_table(points[start : start + step], self.max_degree)
            gathered = block[:, self._columns, self._degrees]  # (rows, R, s)
            out[start : start + step] = gathered.prod(axis=2)
        return out

    @property
    def _row_chunk(self) -> int:
        return max(1, min(ROW_CHUNK, CHUNK_ENTRIES // self._columns.size))

    def sparse_design_matrix(self, candidates: np.ndarray) -> sp.csr_matrix:
        """W as a sparse matrix, shape (R, C): for bases whose functions vanish on most candidates.

        Indicator products (mixed tables) are 0 unless the candidate has every level they
        name, so W has at most one non-zero per candidate and sensitivity group.
        """
        step = self._row_chunk
        pieces = [sp.csr_matrix(self.evaluate(candidates[start : start + step]))
                  for start in range(0, len(candidates), step)]
        return sp.vstack(pieces, format="csr").T.tocsr()

    def design_matrix(self, candidates: np.ndarray) -> np.ndarray:
        """The LP matrix W with W[r, k] = phi_r(candidate k), shape (R, C)."""
        return self.evaluate(candidates).T

    def moments(self, points: np.ndarray) -> np.ndarray:
        """Mean of each phi_r over the rows of ``points``, shape (R,)."""
        points = np.atleast_2d(points)
        total = np.zeros(self.size)
        step = self._row_chunk
        for start in range(0, len(points), step):
            total += self.evaluate(points[start : start + step]).sum(axis=0)
        return total / len(points)
