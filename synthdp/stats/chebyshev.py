"""Chebyshev product basis and its moments.

The basis functions are phi_r(x) = prod_i T_{r_i}(x_i) for multi-indices r, where
T_k(x) = cos(k arccos x) is the Chebyshev polynomial of the first kind. T_k is evaluated by
the three-term recurrence T_{k+1} = 2x T_k - T_{k-1} on the columns the basis uses, and each
product runs only over the non-zero degrees of r, so a basis of R functions on n points costs
O(n * (u * g + R * s)) for u used columns, maximal degree g and at most s non-zero degrees
per multi-index. benchmarks/run.py measures it against the naive cos(r arccos x).
Measured: docs/decisions/chebyshev-evaluation.md.

Every |phi_r| <= 1 on [-1, 1]^d; the moment sensitivity in :mod:`synthdp.privacy.sensitivity` rests on it.
The constant phi_0 = 1 is never part of an index set here: its moment is exactly 1.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterator

import numpy as np
import scipy.sparse as sp

from synthdp.domain.encoded import EncodedPoints
from synthdp.errors import SynthDPError

ROW_CHUNK = 4096  # rows evaluated at once: bounds the (rows, R) block; larger blocks measured slower
CHUNK_ENTRIES = 4_000_000  # ... and so does this, for large bases (mixed tables: R in the thousands)
SPARSE_TABLE_ENTRIES = 4_000_000  # entries (32 MB) of the factors' table sparse_design_matrix holds at once
# The most entries (128 MB) of moments' dense (prefixes, table columns) product; a larger one (a mixed table's
# column of thousands of levels: each level a prefix and a table column, 20 000 of them 9 GB) is summed sparse
DENSE_PRODUCT_ENTRIES = 16_000_000


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


def pair_product_rows(indices: np.ndarray) -> np.ndarray:
    """Which multi-indices are pair products T_1(x_i) T_1(x_j) = x_i x_j, shape (R,)."""
    return (indices.sum(axis=1) == 2) & (indices.max(axis=1) == 1)


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
        indices = np.asarray(indices)
        if indices.dtype.kind not in "iu":  # an integer type is kept (a mixed basis's int8), not copied to int64
            indices = indices.astype(np.int64)
        if indices.ndim != 2 or indices.shape[0] == 0:
            raise SynthDPError("indices must be a non-empty (R, d) array")
        if np.any(indices.sum(axis=1) == 0):
            raise SynthDPError("the constant function is not part of a basis")
        self.indices = indices
        self.max_degree = int(indices.max())
        # Only the columns some function uses get a Chebyshev table.
        self._used_columns = np.flatnonzero(indices.any(axis=0))
        # phi_r is the product of its factors T_degree(x_column) over its non-zero degrees,
        # each a flat position in a (rows, used columns x (max_degree + 1)) table whose
        # position 0 is T_0 = 1. From the non-zero degrees (row by row, each row's columns in
        # order), not from a copy of the used columns: a mixed basis is mostly zeros (R x D).
        rows, columns = np.nonzero(indices)
        flat = np.searchsorted(self._used_columns, columns) * (self.max_degree + 1) + indices[rows, columns]
        factors = [part.tolist() for part in np.split(flat, np.cumsum(np.bincount(rows, minlength=len(indices)))[:-1])]
        self._factors = factors
        order, self._slots = _product_slots(factors)
        # sorted position of each function; None when sorting changes nothing (e.g. R <= d)
        self._unsort = None if np.array_equal(order, np.arange(len(order))) else np.argsort(order)
        # Moments: phi_r = (product of all its factors but the last) x (last factor), so
        # grouping functions by that prefix turns a sum over rows into one matrix product,
        # sum_rows prefix_p(x) T_f(x) = (prefixes^T table)[p, f]. The empty prefix is [0] (T_0).
        prefixes = sorted({tuple(f[:-1]) or (0,) for f in factors})
        prefix_order, self._prefix_slots = _product_slots([list(p) for p in prefixes])
        position = {prefixes[i]: sorted_at for sorted_at, i in enumerate(prefix_order)}
        self._moment_prefix = np.array([position[tuple(f[:-1]) or (0,)] for f in factors], dtype=np.int64)
        self._moment_last = np.array([f[-1] for f in factors], dtype=np.int64)

    @property
    def size(self) -> int:
        return len(self.indices)

    @property
    def d(self) -> int:
        return self.indices.shape[1]

    def evaluate(self, points: np.ndarray) -> np.ndarray:
        """phi_r at each point, shape (len(points), R).

        Per block of rows: T_0..T_max_degree by the recurrence on the used columns only, then
        for each function the product of its factors over its non-zero degrees.
        """
        points = np.atleast_2d(np.asarray(points, dtype=float))
        out = np.empty((len(points), self.size))
        step = self._row_chunk
        for start in range(0, len(points), step):
            block = out[start : start + step]
            values = _slot_products(self._table(points[start : start + step]), self._slots,
                                    out=block if self._unsort is None else None)
            if self._unsort is not None:
                np.take(values, self._unsort, axis=1, out=block)
        return out

    @property
    def _row_chunk(self) -> int:
        return max(1, min(ROW_CHUNK, CHUNK_ENTRIES // self.size))

    def _table(self, points: np.ndarray) -> np.ndarray:
        """T_0..T_max_degree of the used columns, shape (rows, used columns x (max_degree + 1))."""
        table = chebyshev_table(points[:, self._used_columns], self.max_degree)
        return table.reshape(len(table), -1)

    def sparse_design_matrix(self, candidates: np.ndarray | EncodedPoints) -> sp.csr_matrix:
        """W as a sparse matrix, shape (R, C), sorted indices: for bases whose functions vanish on most candidates.

        Indicator products (mixed tables) are 0 unless the candidate has every level they
        name, so W has at most one non-zero per candidate and sensitivity group. Each function
        is evaluated only at the candidates where its sparsest factor is non-zero, its factors
        multiplied in the order :meth:`evaluate` multiplies them: the same values to the bit
        (a test), without the dense (C, R) values (adult: 20 532 x 6 844 values, 1.1 s; now
        0.08 s, docs/performance.md).
        """
        if isinstance(candidates, EncodedPoints):
            return self._encoded_design_matrix(candidates)
        points = _points(candidates)
        # the factors some function uses, T_k(x_j) for k >= 1, each a row of the table below
        needed = sorted({f for factors in self._factors for f in factors})
        row_of = {f: i for i, f in enumerate(needed)}
        factor_rows = [[row_of[f] for f in factors] for factors in self._factors]
        blocks = []
        step = max(1, min(len(points), SPARSE_TABLE_ENTRIES // max(1, len(needed))))
        for start in range(0, len(points), step):
            table = self._factor_table(points[start : start + step], needed)
            nonzero = [np.flatnonzero(row).astype(np.int32) for row in table]
            columns, values = [], []
            for factors in factor_rows:
                at = min((nonzero[f] for f in factors), key=len)
                product = table[factors[0]][at]
                for f in factors[1:]:
                    product = product * table[f][at]
                keep = product != 0
                columns.append(at[keep])
                values.append(product[keep])
            indptr = np.concatenate([[0], np.cumsum([len(c) for c in columns])])
            blocks.append(sp.csr_matrix((np.concatenate(values), np.concatenate(columns), indptr),
                                        shape=(self.size, table.shape[1])))
        if len(blocks) <= 1:
            return blocks[0] if blocks else sp.csr_matrix((self.size, 0))
        return sp.hstack(blocks, format="csr")  # each row's entries by candidate, block after block: sorted

    def _encoded_design_matrix(self, points: EncodedPoints) -> sp.csr_matrix:
        """:meth:`sparse_design_matrix` of points held per column: an indicator factor's candidates
        are those of its level (from the levels, sorted once per column), not the non-zeros of a
        dense row over every candidate, so there is no (factors, candidates) table to fill in
        blocks (a column of 5 000 levels: 94 blocks, each a loop over the 25 000 functions). Each
        function's values are those of :meth:`sparse_design_matrix`, to the bit: the same factors
        multiplied in the same order at candidates that hold all of its non-zeros (any such set
        gives the same entries, the zeros dropped), an indicator's factor being 1.0 or 0.0."""
        width = self.max_degree + 1
        count, d = len(points), points.numeric.shape[1]
        needed = sorted({f for factors in self._factors for f in factors})
        values: dict[int, np.ndarray] = {}  # a factor's values at every candidate (numeric columns)
        nonzero: dict[int, np.ndarray] = {}
        indicator: dict[int, tuple[np.ndarray, int]] = {}  # a level's factor: its column's coordinates, its own
        by_level: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}  # per block: coordinates, sorted, edges
        for position, items in itertools.groupby(needed, key=lambda flat: flat // width):
            group = list(items)
            j = int(self._used_columns[position])
            if j >= d and group == [position * width + 1]:  # an indicator, at degree 1: T_1 = itself
                block = int(np.searchsorted(points.starts, j, side="right")) - 1
                if block not in by_level:
                    coordinate = points.coordinates(block)
                    order = np.argsort(coordinate, kind="stable").astype(np.int32)  # ascending within a level
                    by_level[block] = (coordinate, order, np.searchsorted(coordinate[order],
                                                                          np.arange(int(points.widths[block]) + 1)))
                coordinate, order, edges = by_level[block]
                level = j - int(points.starts[block])
                indicator[group[0]] = (coordinate, level)
                nonzero[group[0]] = order[edges[level] : edges[level + 1]]
                continue
            x = np.ascontiguousarray(points.numeric[:, j]) if j < d else points.column(j)
            degrees = chebyshev_table(x, group[-1] % width)
            for flat in group:
                values[flat] = degrees[:, flat % width]
                nonzero[flat] = np.flatnonzero(values[flat]).astype(np.int32)

        def factor(flat: int, at: np.ndarray) -> np.ndarray:
            if flat in values:
                return values[flat][at]
            coordinate, level = indicator[flat]
            return (coordinate[at] == level).astype(np.float64)

        columns, entries = [], []
        for factors in self._factors:
            at = min((nonzero[f] for f in factors), key=len)
            product = factor(factors[0], at)
            for f in factors[1:]:
                product = product * factor(f, at)
            keep = product != 0
            columns.append(at[keep])
            entries.append(product[keep])
        indptr = np.concatenate([[0], np.cumsum([len(c) for c in columns])])
        return sp.csr_matrix((np.concatenate(entries), np.concatenate(columns), indptr), shape=(self.size, count))

    def _factor_table(self, points: np.ndarray, needed: list[int]) -> np.ndarray:
        """The rows of :meth:`_table`'s transpose at the flat positions ``needed``, shape (len(needed), rows).

        Each column's T_k by :func:`chebyshev_table`'s recurrence, as far as its highest needed
        degree (an indicator's: T_1, itself), so the values are the table's to the bit.
        """
        out = np.empty((len(needed), len(points)))
        width = self.max_degree + 1
        for position, items in itertools.groupby(enumerate(needed), key=lambda item: item[1] // width):
            group = list(items)
            x = np.ascontiguousarray(points[:, self._used_columns[position]])
            degrees = chebyshev_table(x, group[-1][1] % width)
            for row, flat in group:
                out[row] = degrees[:, flat % width]
        return out

    def design_matrix(self, candidates: np.ndarray) -> np.ndarray:
        """The LP matrix W with W[r, k] = phi_r(candidate k), shape (R, C)."""
        return self.evaluate(candidates).T

    def moments(self, points: np.ndarray | EncodedPoints, compiled: bool = False) -> np.ndarray:
        """Mean of each phi_r over the rows of ``points``, shape (R,).

        Per block of rows, one matrix product of the prefix products with the Chebyshev table
        (BLAS) instead of the (rows, R) values of :meth:`evaluate`. The products are small,
        so BLAS runs on one thread: a thread pool's synchronisation costs more than it saves on
        them. Measured: docs/decisions/chebyshev-moments.md. ``compiled``: only the R products
        the basis uses, in :func:`synthdp.stats.compiled.moment_sums` (numba; large tables). A
        product over DENSE_PRODUCT_ENTRIES (a column of thousands of levels) is summed sparse
        (:meth:`_sparse_moments`).
        """
        from threadpoolctl import threadpool_limits

        points = _points(points)
        if compiled:
            from synthdp.stats import compiled as kernels

            return kernels.moment_sums(np.asarray(points, dtype=float), *self.compiled_parts) / len(points)
        if len(self._prefix_slots[0]) * len(self._used_columns) * (self.max_degree + 1) > DENSE_PRODUCT_ENTRIES:
            return self._sparse_moments(points)
        sums: np.ndarray | float = 0.0
        with threadpool_limits(1, user_api="blas"):
            step = self._row_chunk
            for start in range(0, len(points), step):
                table = self._table_by_rows(points[start : start + step])  # (table columns, rows)
                sums = sums + _slot_products_by_rows(table, self._prefix_slots) @ table.T  # (prefixes, table columns)
        return np.asarray(sums)[self._moment_prefix, self._moment_last] / len(points)

    def _sparse_moments(self, points: np.ndarray | EncodedPoints) -> np.ndarray:
        """:meth:`moments` where its dense (prefixes, table columns) product would be over
        DENSE_PRODUCT_ENTRIES: the same sums as sparse products, sum_rows prefix_p(x) T_f(x) only
        where both are non-zero on a row (a level's indicator on its level's rows), each block of
        rows' prefixes and table at most CHUNK_ENTRIES entries. Memory linear in the prefixes, the
        table's columns and the non-zero products, not their product; equal to the dense sums up to
        the order of additions."""
        # the table's columns some function ends with: an indicator's T_1 (itself; its T_0 and T_2 are
        # non-zero on every row)
        last, at_last = np.unique(self._moment_last, return_inverse=True)
        prefixes = len(self._prefix_slots[0])
        sums = sp.csr_matrix((prefixes, len(last)))
        step = max(1, CHUNK_ENTRIES // (prefixes + len(self._used_columns) * (self.max_degree + 1)))
        for start in range(0, len(points), step):
            table = self._table_by_rows(points[start : start + step])  # (table columns, rows)
            products = sp.csr_matrix(_slot_products_by_rows(table, self._prefix_slots))  # (prefixes, rows)
            sums = sums + products @ sp.csr_matrix(table[last].T)
        return np.asarray(sums[self._moment_prefix, at_last.reshape(-1)]).reshape(-1) / len(points)

    @property
    def compiled_parts(self) -> tuple[np.ndarray, int, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The basis as the compiled kernels take it (:func:`synthdp.stats.compiled.moment_sums`): the used
        columns, the table's width (max_degree + 1), the prefixes' flat factors and lengths, and each
        function's prefix and last factor."""
        factors, lengths = self._prefix_factors
        return self._used_columns, self.max_degree + 1, factors, lengths, self._moment_prefix, self._moment_last

    @functools.cached_property
    def _prefix_factors(self) -> tuple[np.ndarray, np.ndarray]:
        """The prefixes of :meth:`moments` in their sorted order as a padded table: the flat
        factors of prefix p, ``factors[p, :lengths[p]]``; shapes (prefixes, longest) and (prefixes,)."""
        slots = self._prefix_slots
        factors = np.zeros((len(slots[0]), len(slots)), dtype=np.int64)
        lengths = np.zeros(len(slots[0]), dtype=np.int64)
        for k, slot in enumerate(slots):
            factors[: len(slot), k] = slot
            lengths[: len(slot)] += 1
        return factors, lengths

    def _table_by_rows(self, points: np.ndarray | EncodedPoints) -> np.ndarray:
        """:meth:`_table` transposed, shape (used columns x (max_degree + 1), rows), each T_k(x_j) a
        contiguous row: the same values to the bit, about 5 times as fast as the table in rows
        (the recurrence on whole rows, in place; docs/decisions/chebyshev-moments.md).

        2 x T is exact, so x T_{k-1} doubled is the rounding of 2 x T_{k-1}, as in
        :func:`chebyshev_table`.
        """
        width = self.max_degree + 1
        out = np.empty((len(self._used_columns), width, len(points)))
        out[:, 0] = 1.0
        if width > 1:
            out[:, 1] = points[:, self._used_columns].T
        for k in range(2, width):
            step = out[:, k]
            np.multiply(out[:, 1], out[:, k - 1], out=step)
            step *= 2.0
            step -= out[:, k - 2]
        return out.reshape(-1, len(points))


def _points(points: np.ndarray | EncodedPoints) -> np.ndarray | EncodedPoints:
    """Points as an (m, d) float array, or as they are where they are a mixed table's
    :class:`~synthdp.domain.encoded.EncodedPoints` (whose rows and coordinates read as that array's)."""
    if isinstance(points, EncodedPoints):
        return points
    return np.atleast_2d(np.asarray(points, dtype=float))


def _product_slots(factor_lists: list[list[int]]) -> tuple[np.ndarray, list[np.ndarray]]:
    """Products of many factor lists without padding: their order and per-slot factors.

    Sorted by length, longest first, the lists with more than k factors are a prefix of
    the order; slot k holds their k-th factors. Every list needs at least one factor.
    """
    order = np.argsort([-len(factors) for factors in factor_lists], kind="stable")
    slots = []
    for k in range(len(factor_lists[order[0]])):
        slots.append(np.array([factor_lists[i][k] for i in order if len(factor_lists[i]) > k], dtype=np.int64))
    return order, slots


def _slot_products_by_rows(table: np.ndarray, slots: list[np.ndarray]) -> np.ndarray:
    """:func:`_slot_products` of a transposed table (one row per table column), transposed:
    shape (lists, rows), each product a contiguous row."""
    values = np.take(table, slots[0], axis=0)
    for factors in slots[1:]:
        values[: len(factors)] *= np.take(table, factors, axis=0)
    return values


def _slot_products(table: np.ndarray, slots: list[np.ndarray], out: np.ndarray | None = None) -> np.ndarray:
    """The products of :func:`_product_slots` at each row of ``table``, shape (rows, lists), sorted order."""
    values = np.take(table, slots[0], axis=1, out=out)
    for factors in slots[1:]:
        values[:, : len(factors)] *= np.take(table, factors, axis=1)
    return values
