"""k-way marginal queries over binary and categorical columns: from a table, or from a release's moments.

A k-way marginal over columns (c_1..c_k) gives the fraction of rows in every cell, that is
every combination of levels (each categorical column has its "other" level too, see
:mod:`synthdp.domain.schema`). A cell's indicator is prod_i z_{c_i, l_i}, a product of the
schema's {0, 1} level indicators (the +-1 form is prod_i (1 + x_i)/2, degree k); a binary
column's first level is 1 - z.

* :func:`marginal` computes it on any table with pandas (a synthetic table, or the real
  one when the data owner evaluates a release).
* :class:`MarginalSummary` answers it from the released moments. A mixed release holds the
  moment of every product of indicators of at most ``marginal_degree`` columns: the cells of
  every marginal of that order, exactly up to the noise. A cell of a binary column's first
  level is the marginal without that column minus the cell of its second level.
* Cells of more columns than the release holds (a 3-way cell from a degree-2 release) are
  not determined by the released moments. The marginals paper (Thaler, Ullman, Vadhan)
  approximates a k-way conjunction by a polynomial of degree t < k in s = sum_i z_i; with
  t = k - 1 the best such polynomial on {0..k} has error 2^-k everywhere (1/8 for k = 3,
  equioscillation at s = 0..3), far above the frequency of most cells, because it must be
  right for every database. Here the estimate is data-dependent instead: the released
  sub-cells bound the cell (Frechet bounds: at most min_i P(S - i), at least
  P(S - i) + P(S - j) - P(S - i - j) and 0), and inside those bounds it takes the
  Kirkwood superposition ``exp(sum over proper subsets T of (-1)^(|S| - |T| + 1) log P(T))``,
  the independence-of-higher-interactions guess (the midpoint when a sub-cell is <= 0).
  Post-processing of the release: no budget. Measured (experiments/adult_marginals.py):
  docs/decisions/marginal-estimate.md.

Errors are absolute differences of cell fractions (:func:`marginal_errors`). This module
never imports the private table: it reads tables you pass it and released moments.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from synthdp.domain.schema import Schema
from synthdp.errors import SynthDPError, near_column
from synthdp.summaries.base import SummaryFile, column_order

FORMAT = "synthdp-marginal-summary"
#: 2: each moment's multi-index as its terms, ``"basis_terms"``: [[coordinate, degree], ...] of its
#: nonzero entries, with ``"n_coordinates"`` (D). Version 1 listed every multi-index in full,
#: ``"basis_indices"`` (R x D numbers: 25 000 x 5 005 for a column of 5 000 levels); it is still read.
FORMAT_VERSION = 2
#: The most moments x coordinates a version-2 file's dense multi-indices may hold when read (int8: 2 GB).
#: The release held them as one (R, D) array too (R at most the plan's MAX_MOMENTS, 10^6); a file claiming
#: more is refused before the array is allocated, not read into memory it may not have.
MAX_INDEX_ENTRIES = 2**31
READ_VERSIONS = (1, 2)


def marginal(table: pd.DataFrame, columns: Sequence[str], schema: Schema) -> pd.Series:
    """The fraction of ``table``'s rows in every cell of the marginal over ``columns``.

    Parameters
    ----------
    table : DataFrame
        Rows with (at least) ``columns``; values outside a column's levels count as "other" (an
        error for a column without one, ``"other": false``).
    columns : sequence of str
        Binary or categorical columns of ``schema``, distinct.
    schema : Schema
        The schema that describes ``columns``.

    Returns
    -------
    Series
        Indexed by every combination of the columns' ``all_levels`` (a MultiIndex, first
        column slowest), values summing to 1 (0 for an empty table).
    """
    described = _asked(schema, columns)
    absent = [column.name for column in described if column.name not in table.columns]
    if absent:
        raise SynthDPError(f"the table has no column '{absent[0]}'{near_column(absent[0], list(table.columns))}")
    codes = [column.level_codes(table[column.name]) for column in described]
    levels = [column.all_levels for column in described]
    shape = tuple(len(names) for names in levels)
    cells = np.ravel_multi_index(codes, shape)
    counts = np.bincount(cells, minlength=math.prod(shape)).astype(float)
    return _as_series(counts / max(len(table), 1), columns, levels)


@dataclass(frozen=True, eq=False)
class MarginalSummary(SummaryFile):
    """Answers marginals of a mixed table's binary and categorical columns from its released moments.

    Parameters
    ----------
    schema : Schema
        The release's public schema.
    basis_indices : int array, shape (R, D)
        Multi-indices of the released moments (over the schema's encoded coordinates).
    noisy_moments : array, shape (R,)
        The released (noisy) moments, in the order of ``basis_indices``.
    report : mapping, optional
        The privacy report of the release (JSON types), saved with the summary.

    Examples
    --------
    >>> summary = SmoothSynthesizer(epsilon=1).fit(df, schema=schema, synthesize=False).marginal_summary()
    >>> summary.marginal(["sex", "race"])        # a Series over all 2 x 6 cells
    """

    FORMAT: ClassVar[str] = FORMAT

    schema: Schema
    basis_indices: np.ndarray
    noisy_moments: np.ndarray
    report: Mapping | None = None
    _released: dict = field(init=False, repr=False)  # coordinates -> released cell
    _estimated: dict = field(init=False, repr=False)  # coordinates -> estimate of an unreleased cell (a cache)

    def __post_init__(self) -> None:
        d = self.schema.d_numeric
        indices = np.asarray(self.basis_indices)
        released: dict[frozenset, float] = {frozenset(): 1.0}
        # each moment's coordinates from one np.nonzero (row by row, ascending), not one numpy call per moment:
        # R of them (300 000 for two columns of 1 000 and 300 levels) took seconds
        rows, coordinates = np.nonzero(indices)
        ends = np.cumsum(np.bincount(rows, minlength=len(indices))).tolist()
        starts = [0] + ends[:-1]
        listed, values = coordinates.tolist(), np.asarray(self.noisy_moments, dtype=float).tolist()
        for k in np.flatnonzero(~indices[:, :d].any(axis=1)).tolist():
            released[frozenset(listed[starts[k]:ends[k]])] = values[k]
        object.__setattr__(self, "_released", released)
        object.__setattr__(self, "_estimated", {})

    def to_dict(self) -> dict:
        """The summary as plain JSON types: the schema, every released multi-index and moment, the report.

        Returns
        -------
        dict
            What :meth:`save` writes and :meth:`from_dict` reads.
        """
        from synthdp._version import __version__

        indices = np.asarray(self.basis_indices)
        rows, coordinates = np.nonzero(indices)  # row by row, coordinates ascending
        terms: list[list[list[int]]] = [[] for _ in range(len(indices))]
        for row, coordinate, degree in zip(rows.tolist(), coordinates.tolist(), indices[rows, coordinates].tolist()):
            terms[row].append([coordinate, degree])
        return {
            "format": FORMAT, "format_version": FORMAT_VERSION, "synthdp_version": __version__,
            "column_order": list(self.schema.names),  # JSON objects are unordered: "schema" alone may lose it
            "schema": self.schema.to_dict(), "n_coordinates": int(indices.shape[1]), "basis_terms": terms,
            "noisy_moments": np.asarray(self.noisy_moments, dtype=float).tolist(), "privacy_report": self.report,
        }

    @classmethod
    def from_dict(cls, content: Mapping, origin: str = "summary", **options: Any) -> MarginalSummary:
        """Rebuild a summary from :meth:`to_dict`'s output.

        Parameters
        ----------
        content : mapping
            :meth:`to_dict`'s output, or a summary file's JSON.
        origin : str, default "summary"
            Names the content in errors.
        **options
            None: a marginal summary has no evaluation options, and any is refused.

        Returns
        -------
        MarginalSummary
        """
        if options:
            raise SynthDPError(f"a marginal summary takes no options; got {sorted(options)}")
        if not isinstance(content, Mapping) or content.get("format") != FORMAT:
            raise SynthDPError(f"{origin} is not a synthdp marginal summary (no \"format\": \"{FORMAT}\")")
        version = content.get("format_version")
        if version not in READ_VERSIONS:
            raise SynthDPError(f"{origin} has format_version {version!r}; "
                               f"this synthdp reads {READ_VERSIONS[0]} to {READ_VERSIONS[-1]}")
        try:
            order = column_order(content.get("column_order"), content["schema"]["columns"], origin)
            schema = Schema.from_dict(content["schema"], order, origin)
            moments = np.array(content["noisy_moments"], dtype=float)
            # the schema the release had: a summary-only release has no value blocks, one written before the
            # binned blocks has only the blocks of single values, one written before value blocks none
            layouts = (schema, schema.without_binned_blocks(), schema.without_value_blocks())
            indices = (_indices(content["basis_indices"], origin) if version == 1
                       else _terms_indices(content["basis_terms"], content["n_coordinates"], origin,
                                           [layout.n_coordinates for layout in layouts], len(moments)))
        except SynthDPError:
            raise
        except KeyError as error:
            raise SynthDPError(f"{origin} is malformed (missing field {error})") from None
        except (TypeError, ValueError, AttributeError, OverflowError):  # 10**400: OverflowError; the message of a
            # ValueError quotes the value ("could not convert string to float: 'x'"): never printed
            raise SynthDPError(f"{origin} is malformed (a field of the wrong type)") from None
        if not (moments.ndim == 1 and np.isfinite(moments).all()):
            raise SynthDPError(f"{origin} is malformed (noisy_moments must be finite numbers)")
        if indices.ndim == 2:
            schema = next((layout for layout in layouts if layout.n_coordinates == indices.shape[1]), schema)
        if indices.ndim != 2 or indices.shape != (len(moments), schema.n_coordinates):
            field = "basis_indices" if version == 1 else "basis_terms"  # the field the file holds
            raise SynthDPError(f"{origin} is malformed ({field} do not match the schema and the moments)")
        if (indices[:, schema.d_numeric:] > 1).any():
            raise SynthDPError(f"{origin} is malformed (a level's indicator has a degree above 1)")
        if not (np.bincount(np.nonzero(indices)[0], minlength=len(indices)) > 0).all():
            raise SynthDPError(f"{origin} is malformed (a moment's multi-index has no term: the constant 1 is no "
                               "released moment)")
        if len({row.tobytes() for row in np.ascontiguousarray(indices)}) < len(indices):  # not np.unique: R x D sorts
            raise SynthDPError(f"{origin} is malformed (a moment's multi-index is listed twice)")
        ones = indices[indices.sum(axis=1) == 1]
        if not np.array_equal(np.sort(np.flatnonzero(ones[:, schema.d_numeric:].any(axis=0))),
                              np.flatnonzero(indices[:, schema.d_numeric:].any(axis=0))):
            raise SynthDPError(f"{origin} is malformed (a level's one-way cell is missing)")
        return cls(schema, indices, moments, content.get("privacy_report"))

    @property
    def released_degree(self) -> int:
        """The largest number of columns whose cells the release holds."""
        return max(len(cell) for cell in self._released)

    def marginal(self, columns: Sequence[str], clip: bool = True) -> pd.Series:
        """The marginal over ``columns``, as :func:`marginal` returns it.

        Exact up to the noise for at most :attr:`released_degree` columns; beyond, every
        cell of coded levels is estimated within the Frechet bounds of its released
        sub-cells (module docstring). ``clip`` (default) puts every cell into [0, 1]: most
        cells of a wide marginal are empty and the noise makes half of them negative, and on a
        small table a cell's noise can take it past 1 (a share no cell can have).
        The clipped table is not rescaled to sum to 1: that would move every large cell by
        the positive noise of all the small ones, so where the noise is large (the report's
        stages: on a table of a few thousand rows at epsilon = 1, 2-way cells with noise sd
        above 0.1 are mostly noise) the cells can sum to well over 1. Measured:
        docs/decisions/marginal-clip.md. ``clip=False`` gives the raw answers: unbiased for the
        released cells; a cell estimated from them (beyond :attr:`released_degree` columns) is
        biased down where a sub-cell's noise is negative (it takes the smallest sub-cell).

        Parameters
        ----------
        columns : sequence of str
            Binary or categorical columns of the schema, distinct.
        clip : bool, default True
            Put every cell into [0, 1].

        Returns
        -------
        Series
            A share per cell, indexed by every combination of the columns' ``all_levels``
            (a MultiIndex, first column slowest).
        """
        described = _asked(self.schema, columns)
        columns = [column.name for column in described]
        return _as_series(self.cells(columns, clip), columns, [column.all_levels for column in described])

    def cells(self, columns: Sequence[str], clip: bool = True) -> np.ndarray:
        """:meth:`marginal`'s values without its index, shape (prod of the columns' level counts,),
        in the same order (the first column's levels slowest): for callers that read the cells as
        an array (the candidates' trees), without building a pandas MultiIndex for each.

        Parameters
        ----------
        columns : sequence of str
            As in :meth:`marginal`.
        clip : bool, default True
            As in :meth:`marginal`.

        Returns
        -------
        ndarray, shape (prod of the columns' level counts,)
            A share per cell.
        """
        columns = _distinct(columns)
        blocks = [range(self.schema.block_slice(name).start, self.schema.block_slice(name).stop) for name in columns]
        # The cells of coded levels, with the last position of each axis meaning "any level" (the
        # column marginalised out): every entry is a product of indicators, released or estimated.
        shape = tuple(len(block) + 1 for block in blocks)
        table = np.empty(shape)
        for position in itertools.product(*(range(size) for size in shape)):
            coordinates = frozenset(block[p] for block, p in zip(blocks, position) if p < len(block))
            table[position] = self._cell(coordinates)
        described = [self.schema.column(name) for name in columns]
        for axis, column in enumerate(described):
            moved = np.moveaxis(table, axis, 0)
            if column.binary:  # "any" minus the second level is the first: move it to the front
                moved[-1] -= moved[0]
                moved[[0, 1]] = moved[[1, 0]]
        keep = tuple(slice(None) if column.binary else slice(0, -1) for column in described)  # drop "any"
        cells = table[keep].reshape(-1)
        return np.clip(cells, 0.0, 1.0) if clip else cells

    def _cell(self, coordinates: frozenset) -> float:
        """P(every indicator in ``coordinates`` is 1): released, or estimated and memoised."""
        if coordinates in self._released:
            return self._released[coordinates]
        if coordinates not in self._estimated:
            self._estimated[coordinates] = self._estimate(coordinates)
        return self._estimated[coordinates]

    def _estimate(self, coordinates: frozenset) -> float:
        members = sorted(coordinates)
        drop_one = {i: self._cell(coordinates - {i}) for i in members}
        upper = min(drop_one.values())
        lower = max([0.0] + [drop_one[i] + drop_one[j] - self._cell(coordinates - {i, j})
                             for i, j in itertools.combinations(members, 2)])
        lower = min(lower, upper)
        proper = [frozenset(subset) for size in range(1, len(members)) for subset in itertools.combinations(members, size)]
        values = [self._cell(subset) for subset in proper]
        if min(values) <= 0:
            return (lower + upper) / 2
        log_estimate = sum((-1) ** (len(members) - len(subset) + 1) * math.log(value)
                           for subset, value in zip(proper, values))
        return float(np.clip(math.exp(log_estimate), lower, upper))


def marginal_errors(reference: Callable[[Sequence[str]], pd.Series], estimate: Callable[[Sequence[str]], pd.Series],
                    column_sets: Iterable[Sequence[str]]) -> dict:
    """Worst-case and mean absolute cell error over every cell of every marginal in ``column_sets``.

    Parameters
    ----------
    reference, estimate : callables
        columns -> the marginal Series (e.g. ``lambda c: marginal(real, c, schema)`` and
        ``summary.marginal``).
    column_sets : iterable of column sequences

    Returns
    -------
    dict
        ``worst`` and ``mean`` (fractions of rows), ``marginals`` and ``cells`` counted.
    """
    errors = []
    for columns in column_sets:
        truth, answer = reference(columns), estimate(columns)
        errors.append(np.abs(truth.to_numpy() - answer.reindex(truth.index).to_numpy()))
    if not errors:
        raise SynthDPError("no marginals to compare")
    cells = np.concatenate(errors)
    return {"worst": float(cells.max()), "mean": float(cells.mean()), "marginals": len(errors), "cells": int(len(cells))}


def column_sets(schema: Schema, k: int) -> list[tuple[str, ...]]:
    """All k-way sets of the schema's binary and categorical columns, in schema order (not the value blocks
    of its integer columns, which are no columns of the table)."""
    return list(itertools.combinations([column.name for column in schema.categorical if column.values_of is None], k))


def _asked(schema: Schema, columns: Sequence[str]) -> list:
    """The schema's columns a marginal asks for: distinct binary or categorical columns of the table
    (not the internal ones the schema adds: a nullable numeric column's missingness, an integer
    column's values, which no table holds)."""
    described = [schema.column(name) for name in _distinct(columns)]
    internal = [column.name for column in described if column.indicator_of is not None or column.values_of is not None]
    if internal:
        raise SynthDPError(f"'{internal[0]}' is not a column of the table (the schema's internal coordinates of a "
                           "numeric column): ask for binary or categorical columns")
    return described


def _distinct(columns: Sequence[str]) -> list[str]:
    columns = list(columns)
    if not columns:
        raise SynthDPError("a marginal needs one or more distinct columns")
    twice = next((name for i, name in enumerate(columns) if name in columns[:i]), None)
    if twice is not None:  # --columns sex,sex: name the column, as every other error of --columns does
        raise SynthDPError(f"column '{twice}' is asked for twice: a marginal needs distinct columns")
    return columns


def _full_index(columns: Sequence[str], levels: Sequence[Sequence[str]]) -> pd.MultiIndex:
    return pd.MultiIndex.from_product([list(names) for names in levels], names=list(columns))


def _indices(given: Any, origin: str) -> np.ndarray:
    """Version 1's multi-indices, listed in full (R x D)."""
    values = np.array(given, dtype=float)
    if not (np.isfinite(values).all() and (values == np.round(values)).all() and (values >= 0).all()):
        raise SynthDPError(f"{origin} is malformed (basis_indices must be integers >= 0)")
    return values.astype(np.int64)


def _terms_indices(terms: Any, n_coordinates: Any, origin: str, layouts: Sequence[int],
                   moments: int | None = None) -> np.ndarray:
    """Version 2's multi-indices from their terms (:data:`FORMAT_VERSION`), as an (R, D) array of
    the smallest integer type that holds their degrees; ``layouts``: the D a layout of the summary's
    schema has, which ``n_coordinates`` must be, and ``moments`` the number of noisy moments, which R
    must be, and R x D at most MAX_INDEX_ENTRIES (all checked before an (R, D) array is made of it: a
    file of 15 MB, a million levels and 200 000 terms, would otherwise allocate 200 GB)."""
    if not (isinstance(n_coordinates, int) and not isinstance(n_coordinates, bool) and n_coordinates >= 1
            and isinstance(terms, list) and all(isinstance(term, list) for term in terms)):
        raise SynthDPError(f"{origin} is malformed (basis_terms must be a list of lists, n_coordinates a count)")
    if n_coordinates not in layouts:
        raise SynthDPError(f"{origin} is malformed (n_coordinates does not match the schema)")
    pairs = [pair for term in terms for pair in term]
    if not all(isinstance(pair, list) and len(pair) == 2 and all(
            isinstance(value, int) and not isinstance(value, bool) for value in pair) for pair in pairs):
        raise SynthDPError(f"{origin} is malformed (basis_terms must be [coordinate, degree] pairs of integers)")
    if moments is not None and len(terms) != moments:
        raise SynthDPError(f"{origin} is malformed (basis_terms do not match the schema and the moments)")
    if len(terms) * n_coordinates > MAX_INDEX_ENTRIES:
        raise SynthDPError(f"{origin} is malformed ({len(terms)} moments x {n_coordinates} coordinates are more than "
                           f"a release holds: at most {MAX_INDEX_ENTRIES:.0e} of them)")
    rows = np.repeat(np.arange(len(terms)), [len(term) for term in terms])
    coordinates, degrees = (np.array([pair[k] for pair in pairs], dtype=np.int64).reshape(-1) for k in (0, 1))
    if not (((coordinates >= 0) & (coordinates < n_coordinates)).all() and (degrees >= 1).all()):
        raise SynthDPError(f"{origin} is malformed (a term's coordinate is outside n_coordinates, or its degree "
                           "below 1)")
    if len(np.unique(rows * n_coordinates + coordinates)) < len(rows):
        raise SynthDPError(f"{origin} is malformed (a moment lists a coordinate twice)")
    indices = np.zeros((len(terms), n_coordinates), dtype=np.int8 if degrees.max(initial=0) <= 127 else np.int64)
    indices[rows, coordinates] = degrees
    return indices


def _as_series(values: np.ndarray, columns: Sequence[str], levels: Sequence[Sequence[str]]) -> pd.Series:
    return pd.Series(values, index=_full_index(columns, levels), name="fraction")
