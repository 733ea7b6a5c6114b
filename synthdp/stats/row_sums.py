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

from dataclasses import dataclass, field

import numpy as np

from synthdp.domain.box import Domain
from synthdp.domain.schema import Schema
from synthdp.stats import grid
from synthdp.stats.chebyshev import ChebyshevBasis
from synthdp.stats.histograms import CellLayout, histogram_counts
from synthdp.stats.scores import ScoreMap, score_products

# How two chunks' partial results combine, per named statistic.
COMBINE = {
    "rows": np.add, "rows_clipped": np.add, "moments": np.add, "column_sums": np.add,
    "second_moment": np.add, "histograms": np.add, "cell_counts": np.add, "score_products": np.add,
    "minimum": np.minimum, "maximum": np.maximum, "integer": np.logical_and, "rows_other": np.add,
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
        (d (d + 1) / 2,) (:func:`synthdp.stats.scores.score_products`): the pairwise statistic,
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

    @property
    def counts_only(self) -> bool:
        """Whether the pass only counts the rows (every statistic left out)."""
        return all(value is None or value is False or (isinstance(value, tuple) and not value)
                   for value in vars(self).values())


@dataclass(frozen=True)
class RowSums:
    """The statistics of a :class:`SumRequest` over some rows, by name.

    ``values`` maps "rows" (the row count, public), "rows_clipped" (rows with a value outside
    the domain), "moments" (R,), "column_sums" (d,), "second_moment" (d, d),
    "cell_counts" (d, M), "score_products" (d (d + 1) / 2,), "histograms" (len(histogram_columns), N_BINS), "minimum", "maximum" and "integer" (d,)
    to arrays; only the requested ones are present.
    """

    values: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def n_rows(self) -> int:
        return int(self.values["rows"])

    def __getitem__(self, name: str) -> np.ndarray:
        return self.values[name]


def clip_to_unit(values: np.ndarray, domain: Domain) -> tuple[np.ndarray, int]:
    """Rows clipped into the domain and mapped onto [-1, 1]^d.

    Parameters
    ----------
    values : array, shape (rows, d)
        Validated private values in the user's units.

    Returns
    -------
    points : array, shape (rows, d)
    rows_clipped : int
        Rows with at least one value outside the domain (private).
    """
    inside = (values >= domain.lower) & (values <= domain.upper)
    rows_clipped = int(np.count_nonzero(~inside.all(axis=1)))
    return domain.to_unit(np.clip(values, domain.lower, domain.upper)), rows_clipped


def chunk_sums(values: np.ndarray, request: SumRequest) -> RowSums:
    """The requested statistics of one chunk of validated rows, shape (rows, d)."""
    sums: dict[str, np.ndarray] = {"rows": np.array(len(values))}
    if len(values) == 0:  # an empty partition has no min, max or mean to contribute
        return RowSums(sums)
    if request.histogram_columns:
        sums["histograms"] = np.array([histogram_counts(values[:, column]) for column in request.histogram_columns])
    if request.data_range:
        sums["minimum"], sums["maximum"] = values.min(axis=0), values.max(axis=0)
        sums["integer"] = np.all(values == np.round(values), axis=0)
    if request.domain is not None:
        points, rows_clipped = clip_to_unit(values, request.domain)
        sums["rows_clipped"] = np.array(rows_clipped)
        if request.snap_cells is not None:
            points = grid.snap(points, request.snap_cells)
        if request.basis_indices is not None:
            # moments() is the mean over the chunk's rows; times their count it is their sum.
            sums["moments"] = ChebyshevBasis(request.basis_indices).moments(points) * len(points)
        if request.column_sums:
            sums["column_sums"] = points.sum(axis=0)
        if request.second_moment:
            sums["second_moment"] = points.T @ points
        if request.cell_layout is not None:
            sums["cell_counts"] = request.cell_layout.counts(points)
        if request.score_map is not None:
            sums["score_products"] = score_products(points, request.score_map)
    return RowSums(sums)


def encoded_sums(points: np.ndarray, missing: np.ndarray, rows_clipped: int, rows_other: int,
                 request: SumRequest) -> RowSums:
    """The requested statistics of one chunk of a mixed table's encoded rows.

    Parameters
    ----------
    points : array, shape (rows, D)
        The chunk's rows encoded by ``request.schema`` (numeric coordinates first).
    missing : bool array, shape (rows, d_numeric)
        Missing cells of the nullable numeric columns (their coordinate sits at 0).
    rows_clipped, rows_other : int
        The chunk's rows with a numeric value outside its bounds, and with a categorical value
        outside its levels.

    Returns "rows", "rows_clipped", "rows_other", and as requested "moments" (R,),
    "cell_counts" (d_numeric, M) and "score_products" (d_numeric (d_numeric + 1) / 2,).
    """
    sums = {"rows": np.array(len(points)), "rows_clipped": np.array(rows_clipped), "rows_other": np.array(rows_other)}
    if len(points) == 0 or request.schema is None:
        return RowSums(sums)
    numeric = points[:, : request.schema.d_numeric]
    if request.basis_indices is not None:
        sums["moments"] = ChebyshevBasis(request.basis_indices).moments(points) * len(points)
    if request.cell_layout is not None:
        sums["cell_counts"] = request.cell_layout.counts(numeric, missing)
    if request.score_map is not None:
        sums["score_products"] = score_products(numeric, request.score_map, missing)
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
