"""Row sums: every private statistic synthdp uses, as a sum over rows of a per-row function.

The releases need, of the table clipped into its public domain and mapped onto [-1, 1]^d:
the moment sums sum_i phi_r(x_i), the column sums sum_i x_i and the second-moment sum
sum_i x_i x_i^T (private PCA), the number of clipped rows, and the row count n; and, of the
raw values, the per-column histogram counts of the DP bounds (:mod:`synthdp.privacy.dp_bounds`) and,
for the non-private ``bounds_from_data`` opt-out, each column's min, max and integrality.
Each is a sum (or a min, max or "all") over rows, so it can be computed chunk by chunk and
combined in any order (:func:`combine`): that is what lets the engines of
:mod:`synthdp.reader.table` stream a file or spread it over a Dask cluster with the result
of the in-memory path up to floating-point summation order.

This module handles private values (validated chunks handed to it by
:mod:`synthdp.reader.table`); only the private table and the release import it. Nothing
here prints, logs or raises with a value in it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace

import numpy as np

from synthdp.domain.box import Domain
from synthdp.domain.encoded import EncodedPoints
from synthdp.domain.schema import Schema
from synthdp.stats import compiled as kernels
from synthdp.stats import grid
from synthdp.stats.chebyshev import ChebyshevBasis
from synthdp.stats.histograms import CellLayout, histogram_counts
from synthdp.stats.scores import ScoreMap, clipped_score_statistic, score_products

# How two chunks' partial results combine, per named statistic.
COMBINE: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "rows": np.add, "rows_clipped": np.add, "moments": np.add, "column_sums": np.add,
    "second_moment": np.add, "histograms": np.add, "cell_counts": np.add, "score_products": np.add,
    "minimum": np.minimum, "maximum": np.maximum, "integer": np.logical_and, "rows_other": np.add,
    "class_cell_counts": np.add,
}


@dataclass(frozen=True)
class SumRequest:
    """Which statistics one pass over the rows computes.

    Attributes
    ----------
    domain : Domain or None
        Public bounds to clip into and map onto [-1, 1]^d; None: no statistic of the unit
        points (the first pass, which only counts rows, histograms and ranges).
    basis_indices : int array, shape (R, d), or None
        Multi-indices r of the moment sums sum_i phi_r(x_i).
    snap_cells : int or None
        Exact mode: snap the unit points to the grid of N cells per axis first.
    column_sums, second_moment : bool
        Also sum_i x_i, shape (d,), and sum_i x_i x_i^T, shape (d, d) (private PCA).
    cell_layout : CellLayout or None
        Also the rows per cell of each unit column, shape (d, M), for the copula's one-way
        histograms (:meth:`synthdp.stats.histograms.CellLayout.counts`).
    score_map : ScoreMap or None
        Also the sums of the products of the rows' clipped normal scores, shape
        (d (d + 1) / 2,), or (d (d + 3) / 2,) with the scores' sums beside them
        (:func:`synthdp.stats.scores.score_products`): the pairwise statistic,
        whose map comes from the released histograms.
    schema : Schema or None
        A mixed table: the rows are encoded as the schema says (numeric coordinates in
        [-1, 1], then indicator blocks; :func:`encoded_sums`), ``basis_indices`` run over the
        encoded coordinates, ``cell_layout`` and ``score_map`` over the numeric ones; ``domain``
        is then unused.
    histogram_columns : tuple of int
        Positions of the columns whose raw values are counted in the bounds bins.
    data_range : bool
        Also each column's min, max and whether all its values are integers (NOT private:
        for the ``bounds_from_data`` opt-out only).
    compiled : bool
        Clip, and sum the moments, cells and pairs' scores, with the compiled kernels
        (:mod:`synthdp.stats.compiled`; the same sums up to the order of additions, the same
        points and cells), as decided for the table from its public row count.
    class_block : int or None
        A mixed table: also count ``cell_layout``'s cells of every numeric column by level of the
        schema's ``class_block``-th binary or categorical column, "class_cell_counts" (d, L, M)
        (:func:`class_cell_counts`).
    """

    domain: Domain | None = None
    basis_indices: np.ndarray | None = None
    snap_cells: int | None = None
    column_sums: bool = False
    second_moment: bool = False
    cell_layout: CellLayout | None = None
    score_map: ScoreMap | None = None
    schema: Schema | None = None
    histogram_columns: tuple[int, ...] = ()
    data_range: bool = False
    compiled: bool = False
    class_block: int | None = None

    @property
    def compiled_here(self) -> bool:
        """Whether this process sums with the compiled kernels: as ``compiled`` asks, where numba is
        installed (a Dask worker without it sums with numpy: the same sums up to the order of additions)."""
        return self.compiled and kernels.available()

    @functools.cached_property
    def basis(self) -> ChebyshevBasis | None:
        """The basis of ``basis_indices`` (None without them), built once per request rather than once per
        chunk (its tables of products take about 2 ms at R = 355)."""
        return None if self.basis_indices is None else ChebyshevBasis(self.basis_indices)

    @property
    def counts_only(self) -> bool:
        """Whether the pass only counts the rows (every statistic left out)."""
        values = (getattr(self, item.name) for item in fields(self) if item.name != "compiled")  # not the cached basis
        return all(value is None or value is False or (isinstance(value, tuple) and not value) for value in values)


@dataclass(frozen=True)
class RowSums:
    """The statistics of a :class:`SumRequest` over some rows, by name.

    ``values`` maps "rows" (the row count, public), "rows_clipped" (rows with a value outside
    the domain), "moments" (R,), "column_sums" (d,), "second_moment" (d, d),
    "cell_counts" (d, M), "score_products" (d (d + 1) / 2,) or (d (d + 3) / 2,), "histograms"
    (len(histogram_columns), N_BINS), "minimum", "maximum" and "integer" (d,)
    to arrays; only the requested ones are present.
    """

    values: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def n_rows(self) -> int:
        return int(self.values["rows"])

    def __getitem__(self, name: str) -> np.ndarray:
        return self.values[name]


BLOCK_VALUES = 2**16  # values per block of clip_to_unit: its temporaries stay in the processor's cache


def clip_to_unit(values: np.ndarray, domain: Domain, out: np.ndarray | None = None,
                 compiled: bool = False) -> tuple[np.ndarray, int]:
    """Rows clipped into the domain and mapped onto [-1, 1]^d.

    Parameters
    ----------
    values : array, shape (rows, d)
        Validated private values in the user's units.
    out : array or None
        Where to write the points: may be ``values`` itself (a chunk's own copy); None: a new
        array, in the layout of ``values``.

    Returns
    -------
    points : array, shape (rows, d)
        ``domain.to_unit(np.clip(values, domain.lower, domain.upper))``, bit for bit (the same
        operations in the same order, block by block of rows in a cached scratch block).
    rows_clipped : int
        Rows with at least one value outside the domain (private).

    ``compiled``: by :func:`synthdp.stats.compiled.clip_to_unit` (large tables), the same points.
    """
    values = np.asarray(values, dtype=float)
    lower, upper = domain.lower, domain.upper
    width = upper - lower
    points = np.empty_like(values) if out is None else out  # a chunk's values are column-major: so are its points
    if compiled:
        return points, kernels.clip_to_unit(values, lower, upper, points)
    rows_clipped = 0
    step = max(1, BLOCK_VALUES // max(values.shape[1], 1))
    scratch = np.empty_like(values[:step])
    for start in range(0, len(values), step):
        block = values[start : start + step]
        unit = scratch[: len(block)]
        np.clip(block, lower, upper, out=unit)
        changed = unit != block  # outside the domain (or NaN, which is never inside)
        if changed.any():
            rows_clipped += int(np.count_nonzero(changed.any(axis=1)))
        unit -= lower  # Domain.to_unit: (x - lower) / (upper - lower) * 2 - 1, kept within [-1, 1]
        unit /= width  # before the doubling, which overflows near the largest floats (the same bits elsewhere)
        unit *= 2.0
        unit -= 1.0
        np.clip(unit, -1.0, 1.0, out=points[start : start + step])
    return points, rows_clipped


def chunk_sums(values: np.ndarray, request: SumRequest, kept_cells: list[np.ndarray] | None = None,
               overwrite: bool = False) -> RowSums:
    """The requested statistics of one chunk of validated rows, shape (rows, d).

    ``kept_cells``: a list to append the chunk's histogram cells to (:meth:`CellLayout.cells_by_column`,
    shape (d, rows)) when the request counts them, for :func:`cell_sums` in a later pass.
    ``overwrite``: the values are the chunk's own copy, which may hold its unit points.
    """
    sums: dict[str, np.ndarray] = {"rows": np.array(len(values))}
    if len(values) == 0:  # an empty partition has no min, max or mean to contribute
        return RowSums(sums)
    if request.histogram_columns:
        sums["histograms"] = np.array([histogram_counts(values[:, column]) for column in request.histogram_columns])
    if request.data_range:
        sums["minimum"], sums["maximum"] = values.min(axis=0), values.max(axis=0)
        sums["integer"] = np.all(values == np.round(values), axis=0)
    if request.domain is not None and _one_compiled_pass(request):
        return RowSums({**sums, **_unit_sums(values, request, kept_cells)})
    if request.domain is not None:
        points, rows_clipped = clip_to_unit(values, request.domain, out=values if overwrite else None,
                                            compiled=request.compiled_here)
        sums["rows_clipped"] = np.array(rows_clipped)
        if request.snap_cells is not None:
            points = grid.snap(points, request.snap_cells)
        if request.basis is not None:
            # moments() is the mean over the chunk's rows; times their count it is their sum.
            sums["moments"] = request.basis.moments(points, request.compiled_here) * len(points)
        if request.column_sums:
            sums["column_sums"] = points.sum(axis=0)
        if request.second_moment:
            sums["second_moment"] = points.T @ points
        if request.cell_layout is not None:
            cells = request.cell_layout.cells_by_column(points, compiled=request.compiled_here)
            sums["cell_counts"] = request.cell_layout.count(cells, request.compiled_here)
            if kept_cells is not None:
                kept_cells.append(cells)
        if request.score_map is not None:
            sums["score_products"] = _score_products(points, request.score_map, None, request.compiled_here)
    return RowSums(sums)


def _one_compiled_pass(request: SumRequest) -> bool:
    """Whether a chunk's unit points serve only its moments and cells, summed by the compiled kernels: then
    :func:`_unit_sums` takes them in one pass over the values, without writing the points out."""
    return (request.compiled_here and request.snap_cells is None and not request.column_sums
            and not request.second_moment and request.score_map is None
            and (request.basis_indices is not None or request.cell_layout is not None))


def _unit_sums(values: np.ndarray, request: SumRequest, kept_cells: list[np.ndarray] | None) -> dict[str, np.ndarray]:
    """:func:`chunk_sums`' "rows_clipped", "moments" and "cell_counts" (and kept cells) of a request that
    :func:`_one_compiled_pass` takes, by :func:`synthdp.stats.compiled.unit_sums`: the same rows clipped,
    cells and counts to the bit as the passes one after another, the same moments up to the order of
    additions (the same blocks)."""
    assert request.domain is not None
    values = np.asarray(values, dtype=float)
    layout, basis = request.cell_layout, request.basis
    rows_clipped, moments, cells, counts = kernels.unit_sums(
        values, request.domain.lower, request.domain.upper, None if basis is None else basis.compiled_parts,
        None if layout is None else layout.compiled_maps, 0 if layout is None else layout.n_cells,
        kept_cells is not None, None if layout is None else layout.cell_dtype)
    sums = {"rows_clipped": np.array(rows_clipped)}
    if moments is not None:
        sums["moments"] = moments / len(values) * len(values)  # as ChebyshevBasis.moments' mean times the rows
    if counts is not None:
        sums["cell_counts"] = counts
        if kept_cells is not None and cells is not None:
            kept_cells.append(cells)
    return sums


def encoded_sums(points: np.ndarray | EncodedPoints, missing: np.ndarray, rows_clipped: int, rows_other: int,
                 request: SumRequest, kept_cells: list[np.ndarray] | None = None) -> RowSums:
    """The requested statistics of one chunk of a mixed table's encoded rows.

    Parameters
    ----------
    points : array, shape (rows, D), or EncodedPoints
        The chunk's rows encoded by ``request.schema`` (numeric coordinates first), or each
        column's level as :func:`synthdp.reader.table.encode_levels` holds them.
    missing : bool array, shape (rows, d_numeric)
        Missing cells of the nullable numeric columns (their coordinate sits at 0).
    rows_clipped, rows_other : int
        The chunk's rows with a numeric value outside its bounds, and with a categorical value
        outside its levels.

    kept_cells : list or None
        As in :func:`chunk_sums` (the numeric columns' cells, missing cells included).

    Returns "rows", "rows_clipped", "rows_other", and as requested "moments" (R,),
    "cell_counts" (d_numeric, M), "class_cell_counts" (d_numeric, L, M) and "score_products"
    (d_numeric (d_numeric + 1) / 2,).
    """
    sums = {"rows": np.array(len(points)), "rows_clipped": np.array(rows_clipped), "rows_other": np.array(rows_other)}
    if len(points) == 0 or request.schema is None:
        return RowSums(sums)
    numeric = points[:, : request.schema.d_numeric]
    if request.basis is not None:
        sums["moments"] = request.basis.moments(points, request.compiled_here) * len(points)
    if request.cell_layout is not None:
        cells = request.cell_layout.cells_by_column(numeric, missing, request.compiled_here)
        sums["cell_counts"] = request.cell_layout.count(cells, request.compiled_here)
        if request.class_block is not None:
            sums["class_cell_counts"] = class_cell_counts(points, request.schema, request.class_block, cells,
                                                          request.cell_layout.n_cells)
        if kept_cells is not None:
            kept_cells.append(cells)
    if request.score_map is not None:
        sums["score_products"] = _score_products(numeric, request.score_map, missing, request.compiled_here)
    return RowSums(sums)


def block_levels(points: np.ndarray | EncodedPoints, schema: Schema, block: int) -> np.ndarray:
    """Each row's level (an index into ``all_levels``) of the schema's ``block``-th binary or categorical column."""
    if isinstance(points, EncodedPoints):
        return points.levels[:, block]
    column = schema.categorical[block]
    coordinates = np.asarray(points[:, schema.block_slice(column.name)])
    if column.binary:
        return (coordinates[:, 0] > 0.5).astype(np.int64)
    return np.argmax(coordinates, axis=1).astype(np.int64)


def class_cell_counts(points: np.ndarray | EncodedPoints, schema: Schema, block: int, cells: np.ndarray,
                      n_cells: int) -> np.ndarray:
    """Rows per (level, cell) of every numeric column, shape (d, L, M): each column's histogram
    conditioned on the levels of the ``block``-th binary or categorical column."""
    levels = block_levels(points, schema, block)
    n_levels = len(schema.categorical[block].all_levels)
    d = cells.shape[0]
    counts = np.zeros((d, n_levels * n_cells))
    for j in range(d):
        counts[j] = np.bincount(levels * n_cells + cells[j], minlength=n_levels * n_cells)
    return counts.reshape(d, n_levels, n_cells)


def _score_products(points: np.ndarray, score_map: ScoreMap, missing: np.ndarray | None, compiled: bool) -> np.ndarray:
    """:func:`synthdp.stats.scores.score_products`, or with ``compiled`` the same sums up to the order
    of additions, from the map's cells (:func:`synthdp.stats.compiled.score_statistic`)."""
    if not compiled:
        return score_products(points, score_map, missing)
    return _compiled_score_statistic(score_map.cells.cells_by_column(points, missing, compiled=True), score_map)


def _compiled_score_statistic(cells: np.ndarray, score_map: ScoreMap) -> np.ndarray:
    """The score statistic of cells shaped (d, rows), by :func:`synthdp.stats.compiled.score_statistic`."""
    table = score_map.cell_signs() if score_map.signs else score_map.cell_scores()
    return kernels.score_statistic(cells, table, score_map.clip_norm_sq, score_map.signs, score_map.mean_weight)


def reuses_cells(request: SumRequest, earlier: SumRequest) -> bool:
    """Whether ``request`` needs only the histogram cells that the pass of ``earlier`` counted:
    the pairs' products (``score_map``) over the cells of ``earlier.cell_layout``, of the same
    rows mapped the same way (same domain or schema). Such a pass can run on kept cells
    (:func:`cell_sums`) instead of the rows."""
    if request.score_map is None or earlier.cell_layout is None or earlier.snap_cells is not None:
        return False
    only_scores = replace(request, domain=None, schema=None, score_map=None).counts_only
    same_rows = request.schema is earlier.schema and (request.schema is not None or request.domain == earlier.domain)
    return only_scores and same_rows and request.score_map.cells.same_cells(earlier.cell_layout)


def cell_sums(cells: np.ndarray, counts: dict[str, np.ndarray], request: SumRequest) -> RowSums:
    """A chunk's statistics for a request that :func:`reuses_cells`, from the chunk's cells.

    Parameters
    ----------
    cells : int array, shape (d, rows)
        The chunk's histogram cells, as :func:`chunk_sums` or :func:`encoded_sums` kept them.
    counts : dict
        The chunk's "rows", "rows_clipped" (and "rows_other") from the same pass.

    The score products are those of :func:`synthdp.stats.scores.score_products`, bit for bit
    (the same operations on the same cells, in rows); with the compiled kernels, up to the order
    of additions (:func:`synthdp.stats.compiled.score_statistic`).
    """
    score_map = request.score_map
    assert score_map is not None
    sums = dict(counts)
    if int(counts["rows"]) == 0 or cells.shape[1] == 0:
        return RowSums(sums)
    if request.compiled_here:
        sums["score_products"] = _compiled_score_statistic(cells, score_map)
        return RowSums(sums)
    # (d, M): ScoreMap.scores takes table.T[cell, column] = table[column, cell]; with signs, unclipped
    table = score_map.cell_signs() if score_map.signs else score_map.cell_scores()
    d, rows = cells.shape
    offsets = np.arange(d) * table.shape[1]
    scores = np.empty((rows, d))  # in rows, as ScoreMap.scores has them
    step = max(1, BLOCK_VALUES // max(d, 1))
    for start in range(0, rows, step):  # row by row, so block by block (in cache)
        block = scores[start : start + step]
        np.take(table.reshape(-1), cells[:, start : start + step].T + offsets, out=block)
        if score_map.signs:
            continue
        norm_sq = np.einsum("ij,ij->i", block, block)  # ScoreMap.clipped_scores
        block *= np.sqrt(np.minimum(1.0, score_map.clip_norm_sq / np.maximum(norm_sq, 1e-300)))[:, None]
    sums["score_products"] = clipped_score_statistic(scores, score_map.mean_weight)
    return RowSums(sums)


def combine(first: RowSums, second: RowSums) -> RowSums:
    """The statistics of the rows of both (a statistic missing from one, as from an empty chunk, is the other's)."""
    merged = {**first.values, **second.values}
    for name in first.values.keys() & second.values.keys():
        merged[name] = COMBINE[name](first[name], second[name])
    return RowSums(merged)


def total(chunks) -> RowSums:
    """Combine the statistics of an iterable of chunks, in order (the streaming engines)."""
    result = RowSums({"rows": np.array(0)})
    for sums in chunks:
        result = combine(result, sums)
    return result
