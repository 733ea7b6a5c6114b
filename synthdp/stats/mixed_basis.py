"""The basis of a mixed table: which Chebyshev and indicator products its release holds.

A mixed table's rows are encoded (:mod:`synthdp.domain.schema`): numeric columns in [-1, 1],
each binary or categorical column as a block of level indicators. Its release holds the moments
of the multi-indices below, grouped for the sensitivity (:func:`basis_groups`).
"""

from __future__ import annotations

import itertools

import numpy as np

from synthdp.domain.schema import DEFAULT_MARGINAL_DEGREE, CategoricalColumn, Schema
from synthdp.errors import SynthDPError
from synthdp.stats.chebyshev import count_indices_up_to_degree, lowest_degree_indices

BASIS_DTYPE = np.int8  # the multi-indices' type: degrees of at most 2 (sums and products widen it, as numpy does)


def basis_indices(schema: Schema, marginal_degree: int = DEFAULT_MARGINAL_DEGREE,
                  block_means: bool = False, numeric_moments: bool = True) -> np.ndarray:
    """The released multi-indices of a mixed table, shape (R, D), of type BASIS_DTYPE (int8).

    * every Chebyshev product of total degree <= 2 of the numeric coordinates (the moment
      candidates need all of them), unless ``numeric_moments`` is False;
    * every product of one numeric coordinate (degree 1) and one indicator (column
      means per level), except for a numeric column with a value block (at marginal degree
      >= 2): its 2-way tables with the same columns hold its dependence on them, finer than a
      mean per level (a mean per level is a weighted sum of a value block's cells, and within
      a bin's width of a binned block's), for the same sensitivity groups;
      ``block_means=True`` keeps them (a design study's variant, before the binned blocks);
      none where ``numeric_moments`` is False;
    * every product of indicators of at most ``marginal_degree`` distinct binary or
      categorical columns: the cells of all marginals of that order (a binary column's
      first level excluded: it is 1 minus its indicator);
    * every cell of the 2-way table of an integer column's value block (:data:`synthdp.domain.schema.MAX_VALUE_BLOCK`)
      and one binary or categorical column (at marginal degree >= 2): that column's
      levels against the integer's values, and its one-way cells (the frequency of each
      value, which a binary column's first level needs: P(v, a) = P(v) - P(v, b)); nothing
      at marginal degree 1. A binned block (:data:`synthdp.domain.schema.MAX_BINNED_BLOCK`)
      likewise, over its bins. Not the
      numeric means per value, which the pairs release and the copula cover, nor its table
      with another value block (two numeric columns: the copula's). Each table is one
      sensitivity group (a row has one value, in one bin, and one level), so it adds 2/n to
      the l1 sensitivity whatever its size.

    ``numeric_moments`` False leaves out both (the cells only): the plan's choice under Laplace
    noise (:func:`synthdp.pipeline.plan.mixed_numeric_moments`).

    Degree <= 1 per indicator and at most one indicator per column in a product: z^2 = z
    and, within a block, z_a z_b = 0.
    """
    if not (isinstance(marginal_degree, int) and marginal_degree >= 1):
        raise SynthDPError("marginal_degree must be an integer >= 1")
    D, d = schema.n_coordinates, schema.d_numeric
    numeric = (lowest_degree_indices(d, count_indices_up_to_degree(d, 2)) if d and numeric_moments
               else np.zeros((0, d), dtype=np.int64))
    rows: list[tuple[int, ...]] = []  # the other multi-indices' coordinates (each of degree 1), not R rows of D
    blocks = [range(schema.block_slice(c.name).start, schema.block_slice(c.name).stop) for c in schema.categorical]
    value_block = {block.start for block, c in zip(blocks, schema.categorical) if c.values_of is not None}
    tabled = set() if block_means or marginal_degree < 2 else {j for _, j in schema.valued_numeric}
    for size in range(1, min(marginal_degree, len(blocks)) + 1):
        for chosen in itertools.combinations(blocks, size):
            values = sum(block.start in value_block for block in chosen)
            if values and (size > 2 or values > 1 or marginal_degree < 2):  # its cells and 2-way tables only
                continue
            for coordinates in itertools.product(*chosen):
                rows.append(coordinates)
                if size == 1 and not values and numeric_moments:  # the numeric means of this level
                    rows.extend(coordinates + (j,) for j in range(d) if j not in tabled)
    # int8: the degrees are at most 2, and R x D of them is 1 GB as int64 for a column of 5 000 levels
    indices = np.zeros((len(numeric) + len(rows), D), dtype=BASIS_DTYPE)
    indices[: len(numeric), :d] = numeric
    at = np.repeat(np.arange(len(numeric), len(indices)), [len(coordinates) for coordinates in rows])
    indices[at, np.fromiter(itertools.chain.from_iterable(rows), dtype=np.int64, count=len(at))] = 1
    return indices


def basis_count(schema: Schema, marginal_degree: int = DEFAULT_MARGINAL_DEGREE,
                block_means: bool = False, numeric_moments: bool = True) -> int:
    """R, the number of multi-indices :func:`basis_indices` returns, without building them (an (R, D)
    array: 4 GB of int8 for 2 000 binary columns at marginal degree 2), so the plan can refuse a basis
    too large before it is built. Exact: a product of block sizes per choice of columns, summed as the
    elementary symmetric polynomials of the sizes."""
    if not (isinstance(marginal_degree, int) and marginal_degree >= 1):
        raise SynthDPError("marginal_degree must be an integer >= 1")
    d = schema.d_numeric
    count = count_indices_up_to_degree(d, 2) if d and numeric_moments else 0
    plain = [column.width for column in schema.categorical if column.values_of is None]
    valued = [column.width for column in schema.categorical if column.values_of is not None]
    tabled = set() if block_means or marginal_degree < 2 else {j for _, j in schema.valued_numeric}
    largest = min(marginal_degree, len(plain) + len(valued))
    symmetric = [1] + [0] * largest  # e_k of the plain blocks' sizes: the cells of every k of them
    for width in plain:
        for k in range(largest, 0, -1):
            symmetric[k] += symmetric[k - 1] * width
    count += sum(symmetric[1:])
    if numeric_moments:  # the numeric means of each plain block's levels
        count += sum(plain) * (d - len(tabled))
    if marginal_degree >= 2:  # a value block's cells, and its 2-way tables with each plain block
        count += sum(valued) + (sum(valued) * sum(plain) if largest >= 2 else 0)
    return count


def basis_groups(schema: Schema, indices: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
    """Group number of each multi-index, shape (R,); the release's sensitivity counts groups.

    Two multi-indices are in the same group when they have the same numeric part and
    involve the same binary or categorical columns, differing only in the levels chosen.
    Sensitivity, derived for the encoded case: a row has at most one non-zero indicator
    per column, so within a group at most one function is non-zero on it, with
    |value| = |prod_j T_{r_j}(x_j)| <= 1. Replacing the row changes a group's vector of
    means by at most 2/n in l1 and in l2 (one entry by <= 2/n, or two entries by <= 1/n
    each), so G groups have l1 sensitivity 2G/n and l2 sensitivity 2 sqrt(G)/n. A table
    of numeric columns only has one function per group: 2R/n, the usual bound.
    """
    indices = np.asarray(indices)
    numeric = indices[:, : schema.d_numeric]
    touched = np.zeros((len(indices), len(schema.categorical)), dtype=bool)
    for b, column in enumerate(schema.categorical):
        touched[:, b] = indices[:, schema.block_slice(column.name)].any(axis=1)
    if rows is not None:  # those of indices[rows], without that copy of the rows (R x D)
        numeric, touched = numeric[rows], touched[rows]
    signature = np.concatenate([numeric, touched], axis=1)
    return np.unique(signature, axis=0, return_inverse=True)[1].reshape(-1)


def one_way_cells(schema: Schema, indices: np.ndarray) -> np.ndarray:
    """Which multi-indices are one-way cells of a binary or categorical column (one indicator,
    no numeric part), shape (R,) bool: the rows :func:`synthdp.privacy.release.release_level_cells`
    releases apart where a mixed table's moments are noise."""
    indices = np.asarray(indices)
    numeric = indices[:, : schema.d_numeric].any(axis=1)
    return ~numeric & (nonzero_counts(indices[:, schema.d_numeric:]) == 1)


def apart_columns(schema: Schema, apart_levels: int) -> tuple[CategoricalColumn, ...]:
    """The declared binary and categorical columns of at least ``apart_levels`` levels (with "other"
    and "missing"): those whose one-way cells are released apart alone
    (:func:`synthdp.pipeline.plan.level_cells_apart`); none for ``apart_levels`` 0."""
    if apart_levels <= 0:
        return ()
    return tuple(column for column in schema.declared if len(column.all_levels) >= apart_levels)


def apart_cells(schema: Schema, indices: np.ndarray, apart_levels: int) -> np.ndarray:
    """The one-way cells released apart (:func:`synthdp.pipeline.plan.level_cells_apart`), shape (R,) bool:
    none for ``apart_levels`` 0, every one of :func:`one_way_cells` for 1, else those of
    :func:`apart_columns`."""
    if apart_levels <= 0:
        return np.zeros(len(indices), bool)
    rows = one_way_cells(schema, indices)
    if apart_levels == 1:
        return rows
    indices = np.asarray(indices)
    named = np.zeros(len(indices), bool)
    for column in apart_columns(schema, apart_levels):
        named |= indices[:, schema.block_slice(column.name)].any(axis=1)
    return rows & named


def nonzero_counts(indices: np.ndarray) -> np.ndarray:
    """``np.count_nonzero(indices, axis=1)`` without its (R, D) array of booleans (a mixed basis
    is mostly zeros: 125 MB for a column of 5 000 levels), shape (R,)."""
    return np.bincount(np.nonzero(indices)[0], minlength=len(indices))


def groups_count(schema: Schema, indices: np.ndarray, rows: np.ndarray | None = None) -> int:
    """G, the number of sensitivity groups of ``indices`` (see :func:`basis_groups`), or of
    ``indices[rows]`` (``rows``: a boolean mask or positions)."""
    return int(basis_groups(schema, indices, rows).max()) + 1
