"""Compiled kernels for the row sums of large tables, where numpy's general loops are the cost.

A large file's data pass is mostly the moments: at d = 10 and R = 355, numpy forms every
product of 64 prefixes with 50 Chebyshev values per row (one BLAS product, 3 200 multiplications)
to keep the 355 the basis uses. :func:`moment_sums` computes only those, in a compiled loop
(numba, ``pip install "synthdp[scale]"``): 4 times as fast on one core (a chunk of 419 430 rows,
0.022 against 0.114 s). The clip into the domain, the histograms' cells and counts, and the
pairs' score products have compiled loops too; where a chunk's points serve only its moments and
cells (a large file's moments pass), :func:`unit_sums` takes all of them in one pass over its
values, block by block in cache, instead of three passes over its points.
Measured: docs/decisions/compiled-kernels.md.

Which path a pass takes is decided once per table from its public row count
(:func:`use_compiled`), so every engine and every chunk of one table takes the same one. The
compiled sums equal numpy's up to the order of the additions (a test: 1e-12 relative); small
tables keep numpy's, without importing numba (about 0.25 s) or compiling (about 3 s the first
time on a machine, then read from numba's cache).

Private values pass through here (unit points handed down by :mod:`synthdp.stats.row_sums`);
nothing here prints, logs or raises with a value in it.
"""

from __future__ import annotations

import functools
import importlib.util

import numpy as np

# Rows from which a table's passes use the compiled kernels: numba's import and its cached
# kernels' load (about 0.3 s) against the 0.2 s per 10^6 rows the moments save on one core.
COMPILED_FROM_ROWS = 2_000_000
BLOCK_ROWS = 256  # rows per block of the kernels' tables (d = 10, R = 355: 256-1 024 within 20 %, 4 096 1.5 x slower)
# rows per block of the pairs' scores: their (d, block) buffer in the core's first-level cache up to d = 50
# (a chunk on one thread, d = 10 / 20 / 50 / 100: 7.5 / 8.0 / 15.5 / 22.4 ms at 64 rows, 7.4 / 12.0 / 40 / 50 at 256)
SCORE_BLOCK_ROWS = 64


@functools.cache
def available() -> bool:
    """Whether numba is installed (the ``scale`` extra)."""
    return importlib.util.find_spec("numba") is not None


def use_compiled(n_rows: float) -> bool:
    """Whether a table of ``n_rows`` rows (public: its count, or its noisy count) is summed by the
    compiled kernels: from COMPILED_FROM_ROWS rows, where numba is installed."""
    return n_rows >= COMPILED_FROM_ROWS and available()


def describe(n_rows: float) -> str:
    """The kernels a table of ``n_rows`` rows is summed by, for the report's engine entry."""
    if n_rows < COMPILED_FROM_ROWS:
        return f"numpy (below {COMPILED_FROM_ROWS:,} rows)"
    return "compiled (numba)" if available() else 'numpy (numba not installed: pip install "synthdp[scale]")'


def moment_sums(points: np.ndarray, used: np.ndarray, width: int, prefix_factors: np.ndarray,
                prefix_lengths: np.ndarray, moment_prefix: np.ndarray, moment_last: np.ndarray) -> np.ndarray:
    """sum over the rows of ``points`` (rows, d) of each basis function, shape (R,).

    The basis as :class:`synthdp.stats.chebyshev.ChebyshevBasis` lays it out: T_0..T_{width-1}
    of the ``used`` columns, flat factor c * width + k; prefix p is the product of the flat
    factors ``prefix_factors[p, :prefix_lengths[p]]``; function r is prefix ``moment_prefix[r]``
    times factor ``moment_last[r]``. The kernel takes the functions grouped by prefix.
    """
    from synthdp.stats import _numba_kernels

    order, group_start = _grouped(moment_prefix, len(prefix_factors))
    grouped = _numba_kernels.moment_sums(points, used, width, prefix_factors, prefix_lengths, group_start,
                                         moment_last[order], BLOCK_ROWS)
    sums = np.empty_like(grouped)
    sums[order] = grouped
    return sums


def _grouped(moment_prefix: np.ndarray, prefixes: int) -> tuple[np.ndarray, np.ndarray]:
    """The functions in the kernels' order (grouped by prefix, stably) and where each prefix's group starts."""
    order = np.argsort(moment_prefix, kind="stable")
    return order, np.searchsorted(moment_prefix[order], np.arange(prefixes + 1))


def unit_sums(values: np.ndarray, lower: np.ndarray, upper: np.ndarray, basis: tuple | None, cell_maps: tuple | None,
              n_cells: int, keep_cells: bool, cell_dtype: np.dtype | None = None
              ) -> tuple[int, np.ndarray | None, np.ndarray | None, np.ndarray | None]:
    """A chunk's clip, moment sums and cells in one compiled pass over its ``values`` (rows, d), block by
    block in cache (:func:`synthdp.stats._numba_kernels.unit_sums`): the same rows clipped, points
    (never written out), cells and counts to the bit as :func:`clip_to_unit`, :func:`column_cells` and
    :func:`cell_counts`, and the same moment sums as :func:`moment_sums` up to the order of additions
    (the same blocks; a test).

    ``basis``: ``(used, width, prefix_factors, prefix_lengths, moment_prefix, moment_last)`` as
    :func:`moment_sums` takes them, or None for no moments; ``cell_maps``: the cells' search tables
    (:meth:`synthdp.stats.histograms.CellSearch.compiled_maps`), or None for no cells, ``n_cells`` of
    them per column. Returns the rows clipped, the moment sums (R,), the cells (d, rows) where
    ``keep_cells``, of ``cell_dtype`` (default int32; :attr:`synthdp.stats.histograms.CellLayout.cell_dtype`
    writes them as a pass keeps them, without a copy to convert), and the counts (d, ``n_cells``).
    """
    from synthdp.stats import _numba_kernels

    rows, d = values.shape
    none_int, none_float = np.zeros((0, 1), dtype=np.int64), np.zeros((0, 1))
    if basis is None:
        used, width, factors, lengths, group_start, last = (np.zeros(0, dtype=np.int64), 2, none_int,
                                                             np.zeros(0, dtype=np.int64), np.zeros(1, dtype=np.int64),
                                                             np.zeros(0, dtype=np.int64))
        order = None
    else:
        used, width, factors, lengths, moment_prefix, moment_last = basis
        order, group_start = _grouped(moment_prefix, len(factors))
        last = moment_last[order]
    moments = np.zeros(len(last))
    if cell_maps is None:
        boundaries, slopes, intercepts, tops, binned = (none_float, np.zeros(0), np.zeros(0),
                                                        np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.bool_))
        counts = np.zeros((0, 1))
    else:
        boundaries, slopes, intercepts, tops, binned = cell_maps
        counts = np.zeros((d, n_cells))
    keep = keep_cells and cell_maps is not None
    cells = np.empty((d, rows) if keep else (0, 0), dtype=np.int32 if cell_dtype is None else cell_dtype)
    rows_clipped = _numba_kernels.unit_sums(values, lower, upper, upper - lower, used, width, factors, lengths,
                                            group_start, last, moments, boundaries, slopes, intercepts, tops, binned,
                                            cells, counts, keep, BLOCK_ROWS)
    sums = None
    if order is not None:
        sums = np.empty_like(moments)
        sums[order] = moments
    return (int(rows_clipped), sums, cells if keep else None, counts if cell_maps is not None else None)


def column_cells(columns: np.ndarray, boundaries: np.ndarray, slopes: np.ndarray, intercepts: np.ndarray,
                 tops: np.ndarray, binned: np.ndarray) -> np.ndarray:
    """The cells of :meth:`synthdp.stats.histograms.CellSearch.cells_by_column`, the same to the bit
    (integers: a test), shape (d, rows) int32, of ``columns`` (d, rows): column j's boundaries are
    ``boundaries[j, 1 : tops[j] + 1]``, NaN around them; its guess ``slopes[j] x + intercepts[j]``."""
    from synthdp.stats import _numba_kernels

    out = np.empty(columns.shape, dtype=np.int32)
    _numba_kernels.column_cells(columns, boundaries, slopes, intercepts, tops, binned, out)
    return out


def score_statistic(cells: np.ndarray, table: np.ndarray, clip_norm_sq: float, signs: bool,
                    mean_weight: float) -> np.ndarray:
    """:func:`synthdp.stats.scores.clipped_score_statistic` of the scores ``table[j, cells[j, i]]``
    (cells (d, rows), table (d, M)), each row's shrunk onto ||s||^2 <= ``clip_norm_sq`` unless they
    are ``signs``: gathered, shrunk and multiplied in one compiled pass, block by block of
    SCORE_BLOCK_ROWS rows in cache (:func:`synthdp.stats._numba_kernels.score_products`), without
    the chunk's scores written out; the same sums as numpy's up to the order of additions (a test)."""
    from synthdp.stats import _numba_kernels

    d = len(cells)
    products, column_sums = np.zeros((-(-d // 4) * 4,) * 2), np.zeros(d)
    _numba_kernels.score_products(cells, table, clip_norm_sq, signs, SCORE_BLOCK_ROWS, products, column_sums)
    upper = products[np.triu_indices(d)]  # scores.pair_order, of the d x d corner (the rest is padding)
    return upper if mean_weight <= 0 else np.concatenate([upper, mean_weight * column_sums])


def cell_counts(cells: np.ndarray, n_cells: int) -> np.ndarray:
    """Rows per cell and column of ``cells`` (d, rows), shape (d, ``n_cells``): numpy's bincounts
    exactly (integers held in float64)."""
    from synthdp.stats import _numba_kernels

    counts = np.zeros((len(cells), n_cells))
    _numba_kernels.cell_counts(cells, counts)
    return counts


def clip_to_unit(values: np.ndarray, lower: np.ndarray, upper: np.ndarray, out: np.ndarray) -> int:
    """:func:`synthdp.stats.row_sums.clip_to_unit` into ``out`` (may be ``values``), the same
    operations in the same order, so the same points to the bit (a test); returns the rows clipped."""
    from synthdp.stats import _numba_kernels

    return _numba_kernels.clip_to_unit(values, lower, upper, upper - lower, out)
