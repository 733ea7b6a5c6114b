"""The private table: the only module that reads raw rows.

Everything here handles private values, so nothing here prints, logs or raises with a value
in it. The release mechanisms (:mod:`synthdp.privacy.release`) are its only users; the stages after
the release (candidates, LP fit, sampling, decoding, summaries) never import it.

Every statistic the release needs is a sum over rows (:mod:`synthdp.stats.row_sums`), so a table is
read as validated chunks by one of three engines, which all hand the same per-chunk function
(:func:`chunk_values` then :func:`synthdp.stats.row_sums.chunk_sums`; a numeric Parquet file's
chunks come as float arrays, :func:`_parquet_arrays`, checked alike) its rows:

* in memory (the default for a DataFrame and for CSV files up to ``STREAM_CSV_BYTES``): one chunk;
* streaming (numpy engine; CSV files with ``chunk_rows`` or larger than ``STREAM_CSV_BYTES``,
  and every Parquet file): pandas CSV chunks or Parquet chunks (read row group by row group,
  :func:`_parquet_frames`, or :func:`_parquet_arrays` for numeric columns only) of ``chunk_rows``
  rows, so memory is bounded by a few chunks whatever the file's size;
* Dask (``engine="dask"``): dask.dataframe partitions of a CSV or Parquet file (or a Dask
  DataFrame; a file's partitions of about DASK_BLOCK_BYTES, a Parquet one's at least a row
  group), each summed in blocks of the streamed chunks' size (:func:`_partition_sums`), reduced
  by a tree of Dask tasks on the local threads or on the dask.distributed scheduler at
  ``scheduler``.

A run makes two or three passes (row count, histograms or ranges first; then the sums with the
domain; then the pairs' products): files and Dask inputs are read again rather than held in
memory, but for the cells of the one-way histograms, which a streamed file's second pass keeps
for the third, in memory or in an anonymous temporary file (:class:`_KeptCells`), so a streamed
file's rows are read once for both. The row count n is counted in each pass that reads the
rows (it is public in the replace-one model) and the counts must agree. A streamed CSV file's
row-count-only pass converts one column (:func:`_count_csv_rows`); a Parquet file's footer
holds it. Every pass parses the
next chunks in a thread while it sums SUM_WORKERS chunks at once (:func:`_read_ahead`,
:func:`_in_order`), adding their sums in the file's order.

With a privacy unit (:class:`synthdp.reader.units.UnitBound`) every engine first counts each
unit's rows, then keeps at most K rows per unit, the same rows in every engine and pass
(:mod:`synthdp.reader.units`), and drops the unit column: every statistic is of the bounded
table, whose row count is then private. The pass that counts reads every column and checks every
numeric and date cell of every row, and every cell of a column whose levels are all its values
(those of rows the bound leaves out too, :func:`_checked_units`; the levels are the bound's,
:attr:`synthdp.reader.units.UnitBound.levels`), and the bounded table's row count: such a bad
file fails before the units' noisy count, the first release, in every engine, and whether it
fails does not depend on the random choice of the kept rows.

Validation errors (missing values, text in a numeric column, too few rows) necessarily
depend on the data; they reveal only a property of the file the user passed, and they
stop the run before anything is released. Every engine applies the same checks, chunk by
chunk, so a streamed file fails with the message of the first chunk at fault.
"""

from __future__ import annotations

import collections
import csv
import importlib
import math
import queue
import tempfile
import threading
import warnings
from collections import deque
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, TypeVar

import numpy as np
import pandas as pd

from synthdp.config import STREAM_CSV_BYTES, CsvFormat
from synthdp.domain.box import ColumnDomain, Domain
from synthdp.domain.encoded import EncodedPoints
from synthdp.domain.schema import Schema, level_text
from synthdp.errors import SynthDPError, absent_file, near_column
from synthdp.reader.dates import with_time_values
from synthdp.reader.numbers import (
    EXACT_FLOATS,
    CsvNumbers,
    arrow_decimals,
    decimal_floats,
    holds_decimals,
    not_numeric,
    with_columns,
)
from synthdp.reader.units import Contributions, UnitBound, bounded_frame, count_units, unit_values
from synthdp.stats.histograms import CellLayout
from synthdp.stats.row_sums import (
    RowSums,
    SumRequest,
    cell_sums,
    chunk_sums,
    clip_to_unit,
    combine,
    encoded_sums,
    reuses_cells,
    total,
)
from synthdp.stats.scores import ScoreMap
from synthdp.stats.threads import WORKERS

FROM_DATA = "data (NOT differentially private)"
DEFAULT_CSV = CsvFormat()
NULLABLE_HINT = " (to synthesize missing cells, declare the column \"nullable\": true in the schema or bounds file)"
PARQUET_SUFFIXES = (".parquet", ".pq")
CHUNK_VALUES = 2**22  # default chunk: 2^22 values (32 MB of float64), whatever d
SCHEDULER_TIMEOUT = "10s"  # to connect to a dask.distributed scheduler
READ_AHEAD_CHUNKS = 2  # chunks read ahead of the one being summed (measured: 2 smooths the parser's pace best)
READ_AHEAD_POLL = 0.05  # seconds between the read-ahead thread's checks for a stop
SUM_WORKERS = WORKERS  # chunks summed at once by the streamed and blocked passes
PARQUET_BUFFER_BYTES = 2**20  # a Parquet column chunk is read through a buffer of 1 MB (_open_parquet)
DASK_BLOCK_BYTES = "64MB"  # a Dask partition of a file: CSV bytes, or Parquet row groups (at least one) up to it
# pandas 3.1's deprecation of a keyword Dask's Parquet reader uses (reset_index(inplace=True)): not the user's to fix
DASK_RESET_INDEX = r"The inplace keyword in DataFrame\.reset_index is deprecated"
KEPT_CELLS_BYTES = 2**26  # at most 64 MB of histogram cells kept in memory between two passes over a file (_KeptCells)
T = TypeVar("T")
R = TypeVar("R")


class PrivateTable:
    """A validated table of n rows, read through one engine: d numeric columns, and text
    columns when a schema names them (mixed tables).

    Parameters
    ----------
    frame : pandas.DataFrame
        The sensitive data, one row per individual (the privacy unit), held in memory.
        :meth:`open` reads files and Dask DataFrames.
    text_columns : collection of str
        Binary and categorical columns (from a public schema): kept as values, not checked
        as numbers. All the other columns must be numeric.
    nullable : collection of str
        Numeric columns the public schema declares nullable: their missing cells are kept (as
        NaN, encoded with a missingness indicator by :meth:`encoded_points`); a missing cell
        in any other numeric column is an error.
    time_columns : mapping of str to str
        Date and datetime columns (from public bounds or a schema), {name: "date" or "datetime"}:
        ISO text or datetime64 values, read as days or seconds since 1970-01-01.
    unit : UnitBound or None
        The privacy unit: its column identifies the unit of each row, and at most
        ``unit.max_rows`` rows of each unit are kept (:mod:`synthdp.reader.units`); the column
        is not part of the table.
    """

    def __init__(self, frame: pd.DataFrame, text_columns: Collection[str] = (), nullable: Collection[str] = (),
                 time_columns: Mapping[str, str] | None = None, unit: UnitBound | None = None) -> None:
        self.contributions: Contributions | None = None
        keep: np.ndarray | None = None
        if unit is not None:  # every row's cells are checked, those the bound leaves out too (as every engine does)
            frame, self.contributions, keep = _frame_units(frame, unit)
        self.all_names = check_column_names(frame.columns)
        if keep is None:
            check_row_count(len(frame))
        frame = with_time_values(frame, self.all_names, time_columns or {})
        self.column_names = [name for name in self.all_names if name not in text_columns]
        # by place: a list of labels would be a mask where the labels are True and False
        numeric = [place for place, name in enumerate(self.all_names) if name not in text_columns]
        values = chunk_values(frame.iloc[:, numeric], self.column_names, missing_allowed=nullable)
        if keep is not None:
            values, frame = values[keep], frame.loc[keep].reset_index(drop=True)
            check_row_count(len(values))
        self._values: np.ndarray | None = values
        self._text = {name: frame[column].reset_index(drop=True)
                      for name, column in zip(self.all_names, frame.columns) if name in text_columns}
        text, numeric_names = self._text, self.column_names
        self._reader = _Reader({"engine": "numpy", "input": "in memory"},
                               lambda request: _blocked_sums(values, text, numeric_names, request))
        self._n_rows: int | None = None

    @classmethod
    def read_csv(cls, path: str | Path, text_columns: Collection[str] = (),
                 csv_format: CsvFormat = DEFAULT_CSV, nullable: Collection[str] = (),
                 time_columns: Mapping[str, str] | None = None, unit: UnitBound | None = None) -> PrivateTable:
        """Read a CSV file with a header row into memory (a unit column as text, as the streams read it)."""
        # as text, as the streams read them: a categorical column's values as written, never typed by the
        # whole column (one missing cell would make its 1 a 1.0 for every row)
        as_text = (*(time_columns or ()), *((unit.column,) if unit else ()), *text_columns)
        frame = CsvNumbers(csv_format, as_text).chunk(read_csv_frame(path, csv_format=csv_format, as_text=as_text))
        return cls(frame, text_columns, nullable, time_columns, unit)

    @classmethod
    def open(cls, source, engine: str = "numpy", chunk_rows: int | None = None,
             scheduler: str | None = None, csv_format: CsvFormat = DEFAULT_CSV,
             time_columns: Mapping[str, str] | None = None, text_columns: Collection[str] = (),
             nullable: Collection[str] = (), unit: UnitBound | None = None) -> PrivateTable:
        """A table read by ``engine`` from a DataFrame, a CSV or Parquet path, or a Dask DataFrame.

        Parameters
        ----------
        source : pandas.DataFrame, str, Path or dask.dataframe.DataFrame
            A Dask DataFrame is always read by the Dask engine.
        engine : "numpy" or "dask"
            (validated with the other options by :class:`synthdp.config.SynthConfig`)
        chunk_rows : int or None
            Rows per chunk (numpy engine) or per partition (Dask engine); None: 2^22 values
            per chunk, and in memory for a DataFrame or a CSV file up to 256 MB (numpy engine).
        scheduler : str or None
            Address of a dask.distributed scheduler; None: the current Dask client, if one
            is active, else local threads.
        csv_format : CsvFormat
            Separator, encoding, decimal mark and thousands separator of a CSV file.
        time_columns : mapping of str to str
            Date and datetime columns, {name: "date" or "datetime"} (see :class:`PrivateTable`).
        text_columns, nullable : collections of str
            A mixed table's binary and categorical columns, and the numeric columns that may
            have missing cells (see :class:`PrivateTable`): every engine reads them.
        unit : UnitBound or None
            The privacy unit and its contribution bound (see :class:`PrivateTable`).
        """
        times = dict(time_columns or {})
        text, nulls = tuple(text_columns), tuple(nullable)
        if is_dask_frame(source):
            return cls._from_reader(*_dask_reader(source, "Dask DataFrame", scheduler, None, times, text, nulls, unit),
                                    text_columns)
        if isinstance(source, pd.DataFrame):
            if engine == "numpy":
                return cls(source, text_columns, nullable, time_columns=times, unit=unit)
            dd = _optional("dask.dataframe", "the Dask engine")
            check_column_names(source.columns)
            rows = chunk_rows or _default_chunk_rows(source.shape[1])
            partitions = dd.from_pandas(arrow_decimals(source, text), chunksize=rows, sort=False)
            return cls._from_reader(*_dask_reader(partitions, "DataFrame",
                                                  scheduler,
                                                  None, times, text, nulls, unit), text_columns)
        if not isinstance(source, (str, Path)):
            raise SynthDPError("the input must be a DataFrame, a Dask DataFrame or the path of a CSV or Parquet file")
        path = Path(source)
        if not path.is_file():
            raise absent_file("input file", path)
        parquet = path.suffix.lower() in PARQUET_SUFFIXES
        if engine == "dask":
            return cls._from_reader(*_dask_file_reader(path, parquet, chunk_rows, scheduler, csv_format, times, text,
                                                       nulls, unit), text_columns)
        if parquet:
            return cls._from_reader(*_parquet_reader(path, chunk_rows, times, text, nulls, unit), text_columns)
        if chunk_rows is not None:
            return cls._from_reader(*_csv_reader(path, chunk_rows, csv_format, times, text, nulls, unit), text_columns)
        # in memory up to STREAM_CSV_BYTES, else streamed: the file's size is the values', so the report says the
        # rule, not which way it went (nor where a streamed file's cells were kept)
        table = (cls.read_csv(path, text_columns, csv_format, nullable, time_columns=times, unit=unit)
                 if path.stat().st_size <= STREAM_CSV_BYTES else
                 cls._from_reader(*_csv_reader(path, None, csv_format, times, text, nulls, unit), text_columns))
        table._reader = replace(table._reader, description=dict(AUTOMATIC_CSV), kept=None)
        return table

    @classmethod
    def _from_reader(cls, names: list[str], reader: _Reader,
                     text_columns: Collection[str] = ()) -> PrivateTable:  # streamed: no values held
        table = cls.__new__(cls)
        table.column_names = [name for name in names if name not in text_columns]
        table._reader, table._n_rows = reader, None
        table.all_names, table._values, table._text = names, None, {}
        table.contributions = reader.contributions
        return table

    @property
    def d(self) -> int:
        return len(self.column_names)

    @property
    def engine(self) -> dict:
        """How the table is read (engine, input, chunking; where a streamed file's histogram cells
        were kept for the pairs' pass): public, for the report."""
        kept = self._reader.kept
        return {**self._reader.description, **({"kept_cells": kept.where} if kept is not None and kept.where else {})}

    def row_sums(self, request: SumRequest) -> RowSums:
        """One pass over the rows: the statistics of ``request`` (:mod:`synthdp.stats.row_sums`). Private.

        Checks the row count (at least 2 rows, the same in every pass).
        """
        sums = self._reader.reduce(request)
        n_rows = sums.n_rows
        if self._n_rows is not None and n_rows != self._n_rows:
            raise SynthDPError("the input changed between two passes over it")
        check_row_count(n_rows)
        self._n_rows = n_rows
        return sums


    def level_counts(self, name: str) -> dict[str, int]:
        """How many rows hold each value of a text column (as text; missing values left out).

        Private: for the level-discovery mechanism only (:func:`synthdp.privacy.release.release_levels`).
        """
        self.check_level_counts([name])
        return level_text(self._text[name]).value_counts(sort=False).to_dict()

    def check_level_counts(self, names: Sequence[str]) -> None:
        """That :meth:`level_counts` can count the columns ``names`` of the table (one held in memory):
        public (how the table is read), checked before any release."""
        if any(name not in self._text for name in names):
            raise SynthDPError("DP discovery of levels reads the table in memory, and this one streams (a Parquet "
                               "file, a CSV file over the in-memory size, --chunk-rows or --engine dask): give the "
                               "column's levels in the schema, or a CSV file read whole")

    def encoded_moments(self, schema: Schema, indices: np.ndarray, layout: CellLayout | None = None,
                        n: float | None = None, compiled: bool = False) -> tuple[np.ndarray, np.ndarray | None, int, int]:
        """Exact means over the encoded rows of the basis functions ``indices`` (shape (R,)), the
        numeric columns' rows per histogram cell of ``layout`` (shape (d_numeric, M); None without
        a layout; a nullable column's missing cells in its missing cell), and the counts of
        :func:`encode_rows`: what a mixed table's release adds noise to. One pass through the
        table's engine (in memory, streamed or Dask).

        Private: for the release mechanisms only (:mod:`synthdp.pipeline.run` hands them to
        :mod:`synthdp.privacy.release`). ``n``: the public denominator of the means (by unit the
        released noisy count); None: the row count (public under replace-one). ``compiled``: as
        :class:`synthdp.stats.row_sums.SumRequest`'s.
        """
        self._check_schema(schema)
        sums = self.row_sums(SumRequest(basis_indices=indices, cell_layout=layout, schema=schema,
                                               compiled=compiled))
        n_rows = sums.n_rows if n is None else n
        counts = sums["cell_counts"] if layout is not None else None
        return sums["moments"] / n_rows, counts, int(sums["rows_clipped"]), int(sums["rows_other"])

    def encoded_class_counts(self, schema: Schema, layout: CellLayout, class_block: int,
                             compiled: bool = False) -> np.ndarray:
        """The numeric columns' rows per level of the ``class_block``-th binary or categorical column
        and cell of ``layout``, shape (d_numeric, L, M) (:func:`synthdp.stats.row_sums.class_cell_counts`).

        Private: for the histograms' release only (:func:`synthdp.privacy.release.release_class_histograms`).
        ``compiled``: as :class:`synthdp.stats.row_sums.SumRequest`'s.
        """
        self._check_schema(schema)
        return self.row_sums(SumRequest(cell_layout=layout, schema=schema, class_block=class_block,
                                        compiled=compiled))["class_cell_counts"]

    def encoded_score_products(self, schema: Schema, score_map: ScoreMap, compiled: bool = False) -> np.ndarray:
        """Sum over rows of the products of the numeric columns' clipped normal scores, shape
        (d (d + 1) / 2,) or (d (d + 3) / 2,) (:func:`synthdp.stats.scores.score_products`; a missing cell scores 0).

        Private: for the pairs release only (:func:`synthdp.privacy.release.release_score_products`).
        ``compiled``: as :class:`synthdp.stats.row_sums.SumRequest`'s.
        """
        self._check_schema(schema)
        return self.row_sums(SumRequest(score_map=score_map, schema=schema, compiled=compiled))["score_products"]

    def _check_schema(self, schema: Schema) -> None:
        if list(schema.names) != self.all_names:
            raise SynthDPError("the schema's columns do not match the table's")

    def encoded_points(self, schema: Schema) -> tuple[np.ndarray, int, int]:
        """Rows encoded as the schema says: numeric coordinates in [-1, 1], then indicator blocks.

        The table in memory only (a streamed table's statistics come from :meth:`row_sums`
        with a schema, chunk by chunk).

        Returns
        -------
        points : array, shape (n, D)
            Private: for the release mechanisms only.
        rows_clipped : int
            Private count of rows with a numeric value outside its bounds.
        rows_other : int
            Private count of rows with a categorical value outside its levels (or missing, in
            a column not declared nullable).
        """
        self._check_schema(schema)
        if self._values is None:
            raise SynthDPError("a streamed table has no rows in memory: its statistics come from row_sums")
        points, rows_clipped, rows_other, _ = encode_rows(self._values, self._text, self.column_names, schema)
        return points, rows_clipped, rows_other


def _frame_units(frame: pd.DataFrame, unit: UnitBound) -> tuple[pd.DataFrame, Contributions, np.ndarray]:
    """An in-memory table without its unit column, its rows per unit, and which of its rows the bound keeps."""
    names = check_column_names(frame.columns)
    check_unit_column(unit, names)
    column = frame.columns[names.index(unit.column)]
    units = unit_values(frame[column], unit.column)
    _checked_levels(frame, unit)
    contributions = Contributions(unit, count_units([units]), names.index(unit.column))
    keep = contributions.select(units, np.zeros(len(contributions.units), dtype=np.int64))
    return frame.drop(columns=[column]), contributions, keep


def _checked_units(frame: pd.DataFrame, unit: UnitBound, names: list[str], time_columns: Mapping[str, str] | None,
                   text_columns: Collection[str], nullable: Collection[str]) -> pd.Series:
    """One chunk's unit identifiers (:func:`unit_values`), after checking every cell of its other columns
    (``names``) as a pass that sums checks them (:func:`_checked_chunk`): a streamed engine's count of the
    rows per unit, which comes before any release, checks every row, so that a bad file fails before the
    units' noisy count is released, as the in-memory table does."""
    column = next(label for label in frame.columns if str(label) == unit.column)  # a DataFrame's label may be no str
    _checked_chunk(frame.drop(columns=[column]), names, time_columns, text_columns, nullable)
    _checked_levels(frame, unit)
    return unit_values(frame[column], unit.column)


def _checked_levels(frame: pd.DataFrame, unit: UnitBound) -> None:
    """Every cell of the columns whose levels are all their values (``unit.levels``) is one of them
    (or missing in a nullable one), as encoding the rows checks it (:meth:`CategoricalColumn.level_codes`,
    whose error names the column); a column the table lacks is left to the schema's check."""
    labels = {str(label): label for label in frame.columns}
    for column in unit.levels:
        if column.name in labels:
            column.level_codes(frame[labels[column.name]])


def _unit_contributions(unit: UnitBound, counts: Mapping[str, int], names: list[str]) -> Contributions:
    """The rows per unit of a table (``names``: its columns, the unit column among them), whose bounded
    table has at least 2 rows."""
    contributions = Contributions(unit, counts, names.index(unit.column))
    check_row_count(contributions.n_rows)
    return contributions


def check_unit_column(unit: UnitBound, names: list[str]) -> None:
    """The unit column is one of the table's columns (and not its only one)."""
    if unit.column not in names:
        raise SynthDPError(f"privacy unit column '{unit.column}' is not a column of the input"
                           f"{near_column(unit.column, names)}")
    if len(names) < 2:
        raise SynthDPError(f"privacy unit column '{unit.column}' is the input's only column: nothing to synthesize")


AUTOMATIC_CSV = {"engine": "numpy", "input": f"CSV file, in memory up to {STREAM_CSV_BYTES // 2**20} MB, else streamed"}


@dataclass(frozen=True)
class _Reader:
    """An engine: its public description and the pass computing a request's statistics."""

    description: dict
    reduce: Callable[[SumRequest], RowSums]
    contributions: Contributions | None = None  # with a privacy unit: rows per unit (private)
    kept: _KeptCells | None = None  # a streamed file's kept histogram cells (where they went is public)


def domain_from_data(column_names: list[str], sums: RowSums) -> Domain:
    """Bounds and integer types read from the data: NOT differentially private.

    ``sums`` holds the statistics of a ``SumRequest(data_range=True)`` pass.
    """
    columns = []
    for j, name in enumerate(column_names):
        lower, upper = float(sums["minimum"][j]), float(sums["maximum"][j])
        if lower == upper:
            raise SynthDPError(f"column '{name}' is constant: it has no range to read bounds from")
        columns.append(ColumnDomain(name, lower, upper, bool(sums["integer"][j]), source=FROM_DATA))
    return Domain(tuple(columns), source=FROM_DATA)


# ------------------------------------------------------------------------- validation
def check_numeric_frame(frame: pd.DataFrame) -> tuple[list[str], np.ndarray]:
    """Validate a table of numeric columns; return its column names and a float copy of its values.

    Needs at least one named column (unique names, no control characters), at least 2 rows,
    and finite numeric values. Errors name the column at fault, never a value.
    """
    names = check_column_names(frame.columns)
    check_row_count(len(frame))
    return names, chunk_values(frame, names)


def check_column_names(columns) -> list[str]:
    """The column names as strings: at least one, none empty, no control characters, no repeats."""
    names = [str(c) for c in columns]
    if not names:
        raise SynthDPError("the input has no columns")
    for position, name in enumerate(names, start=1):
        if name.strip() == "":
            raise SynthDPError(f"column {position} has an empty name")
        if any(ord(ch) < 32 or ord(ch) == 127 for ch in name):
            raise SynthDPError(f"the name of column {position} contains a control character (e.g. a newline)")
    counts = collections.Counter(names)  # not names.count per name: a header of 10^5 names would take minutes
    duplicated = sorted(n for n, count in counts.items() if count > 1)
    if duplicated:
        raise SynthDPError(f"column name '{duplicated[0]}' appears more than once")
    return names


def check_row_count(n_rows: int) -> None:
    if n_rows == 0:
        raise SynthDPError("the input has no data rows")
    if n_rows < 2:
        raise SynthDPError("the input needs at least 2 rows")


def chunk_values(frame: pd.DataFrame, names: list[str], missing_allowed: Collection[str] = ()) -> np.ndarray:
    """A float copy of one chunk's values, shape (rows, d), after checking every column is numeric
    and finite (missing cells, as NaN, allowed in the ``missing_allowed`` columns only)."""
    if len(frame) == 0:  # a header-only file parses as text columns: it is empty, not text
        return np.empty((0, len(names)))
    decimals = {}
    for name, column in zip(names, frame.columns):
        series = frame[column]
        if isinstance(series.dtype, pd.CategoricalDtype) and pd.api.types.is_numeric_dtype(series.cat.categories) \
                and not pd.api.types.is_bool_dtype(series.cat.categories):
            continue  # numbers kept as a category (a Parquet round trip): to_numpy reads them as numbers
        if holds_decimals(series):
            decimals[column] = decimal_floats(series)
            continue
        if series.dtype == object and series.isna().all():
            continue  # every cell missing (a Parquet column of Arrow's null type reads as None): NaN, as a CSV's
        if not (pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)):
            raise not_numeric(name, pd.api.types.is_bool_dtype(series))
        if pd.api.types.is_complex_dtype(series):  # read as floats, numpy would drop the imaginary parts with a warning
            raise SynthDPError(f"column '{name}' holds complex numbers: give a real number of each (its real part, "
                               "its modulus) as the column")
    frame = with_columns(frame, decimals)
    return _finite_values(frame.to_numpy(dtype=float, copy=True, na_value=np.nan), names, missing_allowed)


def _finite_values(values: np.ndarray, names: list[str], missing_allowed: Collection[str]) -> np.ndarray:
    """``values`` (rows, d), after checking that every value is finite (missing cells, as NaN, allowed in
    the ``missing_allowed`` columns only): :func:`chunk_values`' check, shared with :func:`_parquet_arrays`' chunks."""
    if np.isfinite(values).all():  # the common case, in one pass
        return values
    allowed = np.array([name in missing_allowed for name in names], dtype=bool)
    finite = (np.isfinite(values) | (np.isnan(values) & allowed)).all(axis=0)
    if not finite.all():
        raise SynthDPError(f"column '{names[int(np.argmin(finite))]}' has missing or infinite values{NULLABLE_HINT}")
    return values


def encode_rows(values: np.ndarray, text: Mapping[str, pd.Series], column_names: list[str],
                schema: Schema) -> tuple[np.ndarray, int, int, np.ndarray]:
    """Rows of a mixed table encoded as the schema says (one chunk, or the whole table in memory).

    Parameters
    ----------
    values : array, shape (rows, d_numeric)
        The numeric columns (``column_names``, the schema's numeric columns in order), NaN in
        the missing cells of nullable columns.
    text : mapping of str to Series
        The binary and categorical columns' values, each of ``rows`` entries.

    Returns
    -------
    points : array, shape (rows, D)
        Numeric coordinates in [-1, 1] (a missing cell at its column's centre, 0), then the
        indicator blocks. Private: for the release mechanisms only.
    rows_clipped : int
        Rows with a numeric value outside its bounds (private).
    rows_other : int
        Rows with a categorical value outside its levels, or missing in a column not declared
        nullable (private).
    missing : bool array, shape (rows, d_numeric)
        The missing cells of the numeric columns.
    """
    points, rows_clipped, rows_other, missing = encode_levels(values, text, column_names, schema)
    return points.toarray(), rows_clipped, rows_other, missing


def encode_levels(values: np.ndarray, text: Mapping[str, pd.Series], column_names: list[str],
                  schema: Schema) -> tuple[EncodedPoints, int, int, np.ndarray]:
    """:func:`encode_rows` with each binary or categorical column's level rather than its block of
    indicators (:class:`~synthdp.domain.encoded.EncodedPoints`): rows x (d + k) numbers rather than
    rows x D (20 000 rows of a column of 5 000 levels: 0.8 GB). The same coordinates where read."""
    missing = np.isnan(values)  # only in nullable columns: chunk_values refused the others
    centres = np.array([(column.lower + column.upper) / 2 for column in schema.numeric.columns])
    # a missing cell sits at its column's centre (0 in unit coordinates) and its indicator says so
    numeric = np.where(missing, centres, values)
    numeric, rows_clipped = clip_to_unit(numeric, schema.numeric, out=numeric)
    levels, other = [], np.zeros(len(values), dtype=bool)
    for column in schema.categorical:
        if column.indicator_of is not None:
            codes = missing[:, column_names.index(column.indicator_of)].astype(np.int64)
        elif column.values_of is not None:  # a non-nullable integer column: no missing cell
            codes = column.value_codes(values[:, column_names.index(str(column.values_of))])
        else:
            codes = column.level_codes(text[column.name].reset_index(drop=True))
            if not column.binary and column.other:
                other |= codes == len(column.levels)
        codes = np.asarray(codes, dtype=np.int64)
        if codes.max(initial=-1) - column.binary >= column.width:  # as the block's assignment refused it
            raise IndexError(f"a level code of column '{column.name}' is past its {column.width} coordinates")
        levels.append(codes)
    return EncodedPoints.of(schema, numeric, levels), rows_clipped, int(np.count_nonzero(other)), missing


def _values_sums(values: np.ndarray, text: Mapping[str, pd.Series], names: list[str], request: SumRequest,
                 kept_cells: list[np.ndarray] | None = None, overwrite: bool = False) -> RowSums:
    """One chunk's sums: of its numeric values, or, for a request with a schema, of its encoded rows
    (``kept_cells``, ``overwrite``: see :func:`synthdp.stats.row_sums.chunk_sums`)."""
    if request.schema is None:
        return chunk_sums(values, request, kept_cells, overwrite)
    if len(values) == 0:
        return RowSums({"rows": np.array(0)})
    points, rows_clipped, rows_other, missing = encode_levels(values, text, names, request.schema)
    return encoded_sums(points, missing, rows_clipped, rows_other, request, kept_cells)


def _blocked_sums(values: np.ndarray, text: Mapping[str, pd.Series], names: list[str],
                  request: SumRequest) -> RowSums:
    """An in-memory table's sums, block by block of the streamed chunks' rows (CHUNK_VALUES values).

    Each pass then holds one block's temporaries (its clipped copy, cells, Chebyshev tables)
    rather than the whole table's: an in-memory fit needs about the table's values once more
    (their float copy) instead of about four times (4*10**6 x 20: 9.5 bytes per value above the
    frame against 33 before, docs/performance.md). A table of at most one block (every benchmark table)
    is summed in one call, as before, so its sums are unchanged to the bit; a larger one
    gets the streamed engines' sums, which agree to about 1e-12.
    """
    rows = _default_chunk_rows(values.shape[1])  # chunk_values: always (rows, numeric columns)
    if len(values) <= rows:
        return _values_sums(values, text, names, request)
    return total(_in_order(lambda start: _values_sums(values[start : start + rows],
                                                      {name: column.iloc[start : start + rows]
                                                       for name, column in text.items()}, names, request),
                           range(0, len(values), rows)))


def _frame_sums(frame: pd.DataFrame, names: list[str], request: SumRequest,
                time_columns: Mapping[str, str] | None = None, text_columns: Collection[str] = (),
                nullable: Collection[str] = (), kept_cells: list[np.ndarray] | None = None) -> RowSums:
    """The per-chunk function every engine applies: dates to numbers, validate, then sum (the
    ``text_columns`` of a mixed table are kept as values; ``nullable`` columns may have missing cells)."""
    numeric, values, text = _checked_chunk(frame, names, time_columns, text_columns, nullable)
    return _values_sums(values, text, numeric, request, kept_cells, overwrite=True)  # values: the chunk's own copy


def _checked_chunk(frame: pd.DataFrame, names: list[str], time_columns: Mapping[str, str] | None,
                   text_columns: Collection[str], nullable: Collection[str]
                   ) -> tuple[list[str], np.ndarray, dict[str, pd.Series]]:
    """One chunk's numeric column names, their values (dates as numbers, every cell checked by
    :func:`chunk_values`) and its text columns."""
    frame = with_time_values(frame, names, time_columns or {})
    numeric = [name for name in names if name not in text_columns]
    values = chunk_values(frame.iloc[:, [names.index(name) for name in numeric]], numeric, missing_allowed=nullable)
    text = {name: frame.iloc[:, names.index(name)] for name in names if name in text_columns}
    return numeric, values, text


def _chunk_sums_and_cells(counting: bool, names: list[str], request: SumRequest,
                          time_columns: Mapping[str, str] | None, text_columns: Collection[str],
                          nullable: Collection[str]) -> Callable[[pd.DataFrame], tuple[RowSums, list[np.ndarray] | None]]:
    """A streamed pass's per-chunk function: the chunk's sums (:func:`_frame_sums`) and, when the pass
    counts cells worth keeping (``counting``, :meth:`_KeptCells.start`), a list of the chunk's own holding
    its cells, for :meth:`_KeptCells.add` in the file's order."""
    def chunk(frame: pd.DataFrame) -> tuple[RowSums, list[np.ndarray] | None]:
        cells: list[np.ndarray] | None = [] if counting else None
        return _frame_sums(frame, names, request, time_columns, text_columns, nullable, cells), cells

    return chunk


def _array_sums_and_cells(counting: bool, names: list[str], request: SumRequest,
                          nullable: Collection[str]) -> Callable[[np.ndarray], tuple[RowSums, list[np.ndarray] | None]]:
    """:func:`_chunk_sums_and_cells` for chunks that are already float arrays (:func:`_parquet_arrays`: a
    Parquet file of numeric columns only): checked as :func:`chunk_values` checks them, then summed
    in place (each array is the chunk's own)."""
    def chunk(values: np.ndarray) -> tuple[RowSums, list[np.ndarray] | None]:
        cells: list[np.ndarray] | None = [] if counting else None
        return _values_sums(_finite_values(values, names, nullable), {}, names, request, cells, overwrite=True), cells

    return chunk


class _KeptCells:
    """The histogram cells of every row, kept from the pass that counts them (the copula's
    one-way histograms) for the pass of the pairs' products, which needs nothing else of the
    rows (:func:`synthdp.stats.row_sums.reuses_cells`): a streamed file is then read once for
    both instead of twice. One or two bytes per value (the cells, not the values), private,
    freed once used. Up to ``KEPT_CELLS_BYTES`` they stay in memory; past it (or from the start,
    when the row count of the pass before says they will not fit) they go to an anonymous
    temporary file (:func:`tempfile.TemporaryFile`: no name in any folder, readable by this
    process only, gone when closed or when the process ends, however it ends), written and read
    back chunk by chunk, so memory stays at a chunk's cells: at 10^8 x 10, 1 GB of cells on disk
    instead of a second parse of an 8 GB file. Should the file fail (a full disk), nothing is
    kept and the file is read again. The products from kept cells are those from the rows, bit
    for bit (a test), summed SUM_WORKERS chunks at once as a pass's chunks are.
    """

    def __init__(self) -> None:
        self._request: SumRequest | None = None
        # per chunk, in the file's order: its cells (or None when they are in the spill file) and row counts
        self._chunks: list[tuple[np.ndarray | None, dict[str, np.ndarray]]] = []
        self._shapes: list[tuple[int, int]] = []  # the spilled chunks' cell shapes, in order
        self._in_memory = 0  # chunks before this one have their cells in the spill file
        self._spill: IO[bytes] | None = None
        self._dtype: np.dtype = np.dtype(np.int32)
        self._bytes = 0
        self._keeping = False
        self._to_disk = False
        self._rows: int | None = None  # rows of the last complete pass (finish)
        # public, for the report: where the cells of the last pass that counted them went
        self.where = ""  # "memory", "temporary file", or "not kept" (the next pass reads the rows again)

    def sums(self, request: SumRequest) -> RowSums | None:
        """The statistics of ``request`` from the kept cells (which are then freed), or None
        when the request needs the rows."""
        if self._request is None or not reuses_cells(request, self._request):
            return None
        chunks, spill, shapes = self._chunks, self._spill, self._shapes
        self._request, self._chunks, self._spill, self._shapes, self._in_memory = None, [], None, [], 0

        def items() -> Iterator[tuple[np.ndarray, dict[str, np.ndarray]]]:
            spilled = iter(shapes)
            if spill is not None:
                spill.seek(0)
            for cells, counts in chunks:
                if cells is None:
                    assert spill is not None
                    shape = next(spilled)
                    cells = np.fromfile(spill, dtype=self._dtype, count=shape[0] * shape[1]).reshape(shape)
                yield cells, counts

        try:
            return total(_in_order(lambda item: cell_sums(item[0], item[1], request), items()))
        finally:
            if spill is not None:
                spill.close()

    def start(self, request: SumRequest) -> bool:
        """Begin a pass: forget what was kept; whether its chunks count cells worth keeping (then
        each chunk's sums get a list of their own to add their cells to, see :meth:`add`)."""
        self._discard()
        layout = request.cell_layout
        self._keeping = layout is not None and request.snap_cells is None
        self._to_disk = False
        if layout is not None:
            self._dtype = layout.cell_dtype
            if self._rows is not None and self._rows * layout.d * self._dtype.itemsize > KEPT_CELLS_BYTES:
                self._to_disk = True  # they would not fit (if the rows have not changed): to disk from the start
        return self._keeping

    def add(self, sums: RowSums, cells: list[np.ndarray] | None) -> RowSums:
        """After each chunk of the pass, in the file's order: keep its cells (compactly) and its row counts."""
        if cells and self._keeping:
            compact = cells.pop().astype(self._dtype, copy=False)  # the compiled pass writes them so
            counts: dict[str, np.ndarray] = {name: sums.values[name] for name in ("rows", "rows_clipped", "rows_other")
                                             if name in sums.values}
            self._chunks.append((compact, counts))
            self._bytes += compact.nbytes
            if self._to_disk or self._bytes > KEPT_CELLS_BYTES:
                self._to_disk = True
                self._write_out()
        return sums

    def _write_out(self) -> None:
        """Move the cells held in memory to the spill file (opened on first use); on failure keep nothing."""
        try:
            if self._spill is None:
                self._spill = tempfile.TemporaryFile(prefix="synthdp-cells-")
            for i in range(self._in_memory, len(self._chunks)):  # the chunks since the last write, in order
                cells, counts = self._chunks[i]
                assert cells is not None
                cells.tofile(self._spill)
                self._shapes.append((int(cells.shape[0]), int(cells.shape[1])))
                self._chunks[i] = (None, counts)
            self._in_memory, self._bytes = len(self._chunks), 0
        except OSError:  # no room for them: the next pass reads the rows again
            self._discard()
            self._keeping = False

    def _discard(self) -> None:
        if self._spill is not None:
            self._spill.close()
        self._request, self._chunks, self._shapes, self._spill, self._bytes = None, [], [], None, 0
        self._in_memory = 0

    def finish(self, request: SumRequest, n_rows: int) -> None:
        """The pass is complete, over ``n_rows`` rows: its cells can serve the next pass (if they
        were all kept)."""
        if self._keeping:
            self._request = request
            self.where = "temporary file" if self._spill is not None else "memory"
        elif request.cell_layout is not None:
            self.where = "not kept"
        self._keeping = False
        self._rows = n_rows


def read_table_frame(path: str | Path, label: str = "input file", csv_format: CsvFormat = DEFAULT_CSV,
                     as_text: Collection[str] = (), options: str = "--") -> pd.DataFrame:
    """A whole table in memory from a CSV file (:func:`read_csv_frame`, with ``as_text`` and
    ``options``) or a Parquet file (by its suffix, :data:`PARQUET_SUFFIXES`; its columns as
    :func:`pandas.read_parquet` gives them, a stored index not among them): ``synthdp schema``
    drafts from either, and ``synthdp evaluate`` compares either. Errors name the file."""
    path = Path(path)
    if path.suffix.lower() not in PARQUET_SUFFIXES:
        return read_csv_frame(path, label, csv_format, as_text, options)
    if not path.is_file():
        raise absent_file(label, path)
    pq = _optional("pyarrow.parquet", "Parquet input")
    with _parquet_errors(path):
        _parquet_data_columns(pq.read_schema(path))  # a column of nested values: refused by name
        frame = pd.read_parquet(path).reset_index(drop=True)
    check_column_names(frame.columns)
    return frame


# ------------------------------------------------------------------------ CSV files
def read_csv_frame(path: str | Path, label: str = "input file", csv_format: CsvFormat = DEFAULT_CSV,
                   as_text: Collection[str] = (), options: str = "--") -> pd.DataFrame:
    """Read a CSV file with a header row, as pandas does; errors name the file (as ``label``), not its content.

    Only the file is checked here (it exists, is UTF-8, is a CSV, has no duplicated column
    names); :func:`check_numeric_frame` checks the table. The ``as_text`` columns (dates) are
    read as text, not numbers. ``options`` is how the hints name the command's CSV options
    (``--`` for ``--sep``, ``--synth-`` for ``--synth-sep``).
    """
    path = Path(path)
    if not path.is_file():
        raise absent_file(label, path)
    with _csv_errors(path, label, csv_format, options):
        _csv_header(path, label, csv_format, options)
        return pd.read_csv(path, **_pandas_options(csv_format, as_text))


COMPRESSED_MAGIC = {b"\x1f\x8b": "gzip", b"BZh": "bzip2", b"PK\x03\x04": "zip", b"\xfd7zXZ": "xz",
                    b"\x28\xb5\x2f\xfd": "zstd"}


def _refuse_compressed(path: Path | str, label: str) -> None:
    """A one-line error where a file's first bytes show a compression ("gzip", ...): CSV files are read as
    plain text. Nothing for a file of none known, or a path that cannot be read (its reader says why)."""
    try:
        with open(path, "rb") as handle:
            start = handle.read(6)
    except (OSError, TypeError):
        return
    compressed = next((name for magic, name in COMPRESSED_MAGIC.items() if start.startswith(magic)), "")
    if compressed:
        raise SynthDPError(f"{label} '{path}' is {compressed}-compressed: decompress it first (CSV files are read "
                           "as plain text)")


@contextmanager
def _csv_errors(path: Path | str, label: str, csv_format: CsvFormat = DEFAULT_CSV,
                options: str = "--") -> Iterator[None]:
    """Turn the errors of reading a CSV file into one-line errors that name the file, not its content."""
    try:
        yield
    except UnicodeError:  # a decoding error's message quotes the offending bytes: never show it
        hint = (f" (pass its encoding with {options}encoding, e.g. latin-1)"
                if csv_format.encoding.lower() in ("utf-8", "utf8") else "")
        raise SynthDPError(f"{label} '{path}' is not {csv_format.encoding} text{hint}") from None
    except pd.errors.EmptyDataError:
        raise SynthDPError(f"{label} '{path}' is empty") from None
    except (pd.errors.ParserError, csv.Error):
        raise SynthDPError(f"{label} '{path}' is not a well-formed CSV file") from None


def _csv_header(path: Path, label: str, csv_format: CsvFormat = DEFAULT_CSV, options: str = "--") -> list[str]:
    """The header row of a CSV file: not empty, no repeated names (pandas would rename them),
    and not one name that holds another likely separator (the file's separator is another;
    the hint names ``{options}sep``), and a first data row with no more fields than the header has names
    (pandas would make the extra ones the index)."""
    _refuse_compressed(path, label)
    with path.open(newline="", encoding=csv_format.encoding) as handle:
        records = csv.reader(handle, delimiter=csv_format.sep)
        header = next(records, None)
        try:
            first = next((record for record in records if record), None)  # pandas skips blank lines
        except csv.Error:  # a field past the csv module's limit (128 KB; pandas has none): left to pandas
            first = None
    if header and header[0].startswith("\ufeff") and csv_format.encoding.lower().replace("_", "-") in (
            "utf-8", "utf8"):
        header[0] = header[0][1:]  # a byte-order mark (as spreadsheets write UTF-8): not part of the first name
    if not header or not any(name.strip() for name in header):
        raise SynthDPError(f"{label} '{path}' is empty")
    empty = next((position for position, name in enumerate(header, start=1) if not name.strip()), None)
    if empty is not None:  # pandas would call it "Unnamed: k", which no bounds or schema name
        raise SynthDPError(f"column {empty} of {label} '{path}' has an empty name")
    if len(header) == 1:
        other = next((sep for sep in (";", "\t", ",", "|") if sep != csv_format.sep and sep in header[0]), None)
        if other is not None:
            shown = "tab" if other == "\t" else other
            raise SynthDPError(f"{label} '{path}' has a one-column header that contains '{shown}': if its fields "
                               f"are separated by '{shown}', pass {options}sep '{shown}'")
    if len(set(header)) != len(header):
        counts = collections.Counter(header)
        duplicated = next(n for n in header if counts[n] > 1)
        raise SynthDPError(f"column name '{duplicated}' appears more than once in {label} '{path}'")
    if first is not None and len(first) > len(header):
        # pandas would take the first data row's extra fields as the index: every column shifted one to the left
        raise SynthDPError(f"the first data row of {label} '{path}' has more fields than its header has names "
                           "(a separator at the end of every line?): pandas would read the first field as row "
                           "labels and shift the columns; remove the trailing separators, or name every column "
                           "in the header")
    return header


def csv_header(path: str | Path, label: str, csv_format: CsvFormat = DEFAULT_CSV, options: str = "--") -> list[str]:
    """The column names of a CSV file (one-line errors that name the file, as every read here)."""
    path = Path(path)
    if not path.is_file():
        raise absent_file(label, path)
    with _csv_errors(path, label, csv_format, options):
        return _csv_header(path, label, csv_format, options)


def _default_chunk_rows(d: int) -> int:
    return max(1, CHUNK_VALUES // max(d, 1))


def _pandas_options(csv_format: CsvFormat, as_text: Collection[str] = ()) -> dict:
    """pandas.read_csv's keywords for the file's separator, encoding, decimal mark and thousands
    separator (and the ``as_text`` columns, dates, read as text); every value parsed to the float
    nearest to it."""
    options = {"sep": csv_format.sep, "encoding": csv_format.encoding, "decimal": csv_format.decimal,
               "thousands": csv_format.thousands, **EXACT_FLOATS}
    return {**options, "dtype": {name: str for name in as_text}} if as_text else options


def _csv_reader(path: Path, chunk_rows: int | None, csv_format: CsvFormat = DEFAULT_CSV,
                time_columns: Mapping[str, str] | None = None, text_columns: Collection[str] = (),
                nullable: Collection[str] = (), unit: UnitBound | None = None) -> tuple[list[str], _Reader]:
    """Stream a CSV file in pandas chunks of ``chunk_rows`` rows (text columns read as text)."""
    label = "input file"
    with _csv_errors(path, label, csv_format):
        names = check_column_names(_csv_header(path, label, csv_format))
    rows = chunk_rows or _default_chunk_rows(len(names))
    as_text = (*(time_columns or ()), *text_columns, *((unit.column,) if unit else ()))
    numbers = CsvNumbers(csv_format, as_text)
    contributions = None
    columns = _unit_dropped(names, unit)
    if unit is not None:
        check_unit_column(unit, names)
        with _csv_errors(path, label, csv_format), \
                pd.read_csv(path, chunksize=rows, **_pandas_options(csv_format, as_text)) as chunks, \
                _read_ahead(map(numbers.chunk, chunks)) as frames:
            contributions = _unit_contributions(unit, count_units(_in_order(
                lambda frame: _checked_units(frame, unit, columns, time_columns, text_columns, nullable), frames)),
                names)

    kept = _KeptCells()

    def reduce(request: SumRequest) -> RowSums:
        if request.counts_only and unit is None:  # the rows only: one column converted, none checked
            n_rows = _count_csv_rows(path, names, rows, csv_format, as_text)
            kept.finish(request, n_rows)
            return RowSums({"rows": np.array(n_rows)})
        from_cells = kept.sums(request)
        if from_cells is not None:
            return from_cells
        chunk = _chunk_sums_and_cells(kept.start(request), columns, request, time_columns, text_columns, nullable)
        with _csv_errors(path, label, csv_format), \
                pd.read_csv(path, chunksize=rows, **_pandas_options(csv_format, as_text)) as chunks, \
                _read_ahead(map(numbers.chunk, chunks)) as frames:
            sums = total(kept.add(*result) for result in _in_order(chunk, _bounded_chunks(frames, unit, contributions)))
        kept.finish(request, sums.n_rows)
        return sums

    return columns, _Reader({"engine": "numpy", "input": "CSV file, streamed", "chunk_rows": rows}, reduce,
                            contributions, kept)


def _count_csv_rows(path: Path, names: list[str], chunk_rows: int, csv_format: CsvFormat,
                    as_text: Collection[str]) -> int:
    """The data rows of a CSV file, as pandas reads them (blank lines skipped, quoted line breaks
    kept), converting one column only: a numeric one where there is one (no text to build).
    Counting the line breaks in Python instead was measured slower (10^7 x 10 from the page
    cache: 4.3 s against 1.0 s) and was taken out.

    For a pass that needs nothing else (:attr:`SumRequest.counts_only`): its values are not
    checked here but by the next pass, which reads every column, so a malformed file fails
    there with the same message.
    """
    position = next((j for j, name in enumerate(names) if name not in as_text), 0)  # by position: names may differ
    options = _pandas_options(csv_format)  # from pandas' by a byte-order mark, which pandas drops
    if names[position] in as_text:
        options["dtype"] = str
    try:
        with pd.read_csv(path, chunksize=chunk_rows, usecols=[position], **options) as chunks:
            return sum(len(chunk) for chunk in chunks)
    except ValueError:  # pandas' errors (and its own failures with usecols, e.g. on an unnamed index column)
        pass
    with _csv_errors(path, "input file", csv_format), \
            pd.read_csv(path, chunksize=chunk_rows, **_pandas_options(csv_format, as_text)) as chunks:
        return sum(len(chunk) for chunk in chunks)  # every column parsed: pandas' count, or its error


@contextmanager
def _read_ahead(chunks: Iterator[T]) -> Iterator[Iterator[T]]:
    """The items of ``chunks``, the next one read by a thread while the caller works on this one.

    Parsing a CSV chunk (pandas' tokenizer and number conversion) and summing one (numpy)
    both run without Python's global lock for most of their time, so on two cores the reading
    of a pass mostly hides behind its sums. The order is kept, and so is the error that stops a
    pass: the reader's error comes when its chunk is asked for, after every chunk before it was
    summed and checked. On leaving the block the thread is stopped (a few chunks read in vain)
    and joined, before the caller closes ``chunks``. Memory: ``READ_AHEAD_CHUNKS`` more chunks.
    """
    slot: queue.Queue = queue.Queue(maxsize=READ_AHEAD_CHUNKS)
    stop = threading.Event()
    end = object()

    def read() -> None:
        try:
            for item in chunks:
                while not stop.is_set():
                    try:
                        slot.put((item, None), timeout=READ_AHEAD_POLL)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            slot.put((end, None))
        except BaseException as error:  # handed to the caller, at the chunk it stopped at
            slot.put((end, error))

    def items() -> Iterator[T]:
        while True:
            item, error = slot.get()
            if error is not None:
                raise error
            if item is end:
                return
            yield item

    reader = threading.Thread(target=read, name="synthdp-read-ahead", daemon=True)
    reader.start()
    try:
        yield items()
    finally:
        stop.set()
        while reader.is_alive():
            try:
                slot.get(timeout=READ_AHEAD_POLL)
            except queue.Empty:
                pass
        reader.join()


def _in_order(function: Callable[[T], R], items: Iterable[T], workers: int | None = None) -> Iterator[R]:
    """``function(item)`` for each item, in the items' order, up to ``workers`` (SUM_WORKERS) at once.

    A pass's chunks are summed on several cores (numpy's work on a chunk runs without Python's
    global lock for most of its time), and their sums come back in order, so that
    :func:`synthdp.stats.row_sums.total` adds them exactly as one thread would: the sums are
    the same to the bit. Errors keep their order too: a chunk's error (or the items' own, e.g.
    the reader's) is raised after the results of every chunk before it, and the chunks after
    it are not waited for beyond those already started. BLAS is held at one thread for the
    whole pass (threadpoolctl's limit is process-wide, and the chunks' own limits would
    otherwise restore each other's settings out of order). Memory: ``workers`` chunks' temporaries.
    """
    from threadpoolctl import threadpool_limits  # a dependency of scikit-learn

    workers = SUM_WORKERS if workers is None else workers
    if workers <= 1:
        yield from map(function, items)
        return
    with threadpool_limits(1, user_api="blas"), ThreadPoolExecutor(workers, thread_name_prefix="synthdp-sum") as pool:
        pending: deque[Future] = deque()
        iterator, failure = iter(items), None
        try:
            while True:
                try:
                    item = next(iterator)
                except StopIteration:
                    break
                except Exception as error:  # the items' own (the reader's): after the chunks before it
                    failure = error
                    break
                pending.append(pool.submit(function, item))
                if len(pending) >= workers:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
            if failure is not None:
                raise failure
        finally:
            for future in pending:  # a chunk failed or the caller stopped: start no more
                future.cancel()


def _unit_dropped(names: list[str], unit: UnitBound | None) -> list[str]:
    return [name for name in names if unit is None or name != unit.column]


def _bounded_chunks(chunks: Iterator[pd.DataFrame], unit: UnitBound | None,
                    contributions: Contributions | None) -> Iterator[pd.DataFrame]:
    """The chunks of one pass, each with only its kept rows when there is a privacy unit (the
    running count of each unit's rows starts at 0 in every pass)."""
    if unit is None or contributions is None:
        yield from chunks
        return
    seen = np.zeros(len(contributions.units), dtype=np.int64)
    for chunk in chunks:
        yield bounded_frame(chunk, unit.column, contributions, seen)


# -------------------------------------------------------------------- Parquet files
@contextmanager
def _parquet_errors(path: Path, label: str = "input file") -> Iterator[None]:
    import pyarrow as pa

    try:
        yield
    except (pa.ArrowException, OSError):  # e.g. not a Parquet file; messages may quote content
        raise SynthDPError(f"{label} '{path}' is not a well-formed Parquet file") from None


def table_header(path: str | Path, label: str, csv_format: CsvFormat = DEFAULT_CSV, options: str = "--") -> list[str]:
    """The column names of a CSV file (:func:`csv_header`) or of a Parquet file (by its suffix: its
    footer's, as ``pandas.read_parquet`` gives the columns, :func:`_parquet_data_columns`); no row
    is read. The names are checked as every read checks them (:func:`check_column_names`), before a
    caller names one in an error: a name with a newline would split that error over two lines."""
    path = Path(path)
    if path.suffix.lower() not in PARQUET_SUFFIXES:
        names = csv_header(path, label, csv_format, options)
    else:
        if not path.is_file():
            raise absent_file(label, path)
        pq = _optional("pyarrow.parquet", "Parquet input")
        with _parquet_errors(path, label):
            schema = pq.read_schema(path)
        names = _parquet_data_columns(schema)
    try:
        return check_column_names(names)
    except SynthDPError as error:
        raise SynthDPError(f"{label} '{path}': {error}") from None


def _parquet_reader(path: Path, chunk_rows: int | None, time_columns: Mapping[str, str] | None = None,
                    text_columns: Collection[str] = (), nullable: Collection[str] = (),
                    unit: UnitBound | None = None) -> tuple[list[str], _Reader]:
    """Stream a Parquet file in chunks of ``chunk_rows`` rows (:func:`_parquet_frames`)."""
    pq = _optional("pyarrow.parquet", "Parquet input")

    with _parquet_errors(path):
        names = check_column_names(_parquet_data_columns(pq.read_schema(path)))
    rows = chunk_rows or _default_chunk_rows(len(names))
    contributions = None
    columns = _unit_dropped(names, unit)
    if unit is not None:
        check_unit_column(unit, names)
        with _parquet_errors(path), _open_parquet(path) as parquet:
            _check_parquet_footer(parquet, columns, time_columns or {}, text_columns, nullable)
            with _read_ahead(_parquet_frames(parquet, rows)) as frames:
                contributions = _unit_contributions(unit, count_units(_in_order(
                    lambda frame: _checked_units(frame, unit, columns, time_columns, text_columns, nullable),
                    frames)), names)

    kept = _KeptCells()

    def reduce(request: SumRequest) -> RowSums:
        from_cells = kept.sums(request)
        if from_cells is not None:
            return from_cells
        with _parquet_errors(path):
            with _open_parquet(path) as parquet:
                if request.counts_only and unit is None:  # the footer holds the row count: no batch is read
                    _check_parquet_footer(parquet, names, time_columns or {}, text_columns, nullable)
                    kept.finish(request, parquet.metadata.num_rows)
                    return RowSums({"rows": np.array(parquet.metadata.num_rows)})
                if unit is None and not time_columns and not text_columns:  # numbers only: no DataFrame
                    chunk = _array_sums_and_cells(kept.start(request), columns, request, nullable)
                    with _read_ahead(_parquet_arrays(parquet, rows, columns, nullable)) as arrays:
                        sums = total(kept.add(*result) for result in _in_order(chunk, arrays))
                else:
                    chunk = _chunk_sums_and_cells(kept.start(request), columns, request, time_columns, text_columns,
                                                  nullable)
                    with _read_ahead(_parquet_frames(parquet, rows)) as frames:
                        sums = total(kept.add(*result)
                                     for result in _in_order(chunk, _bounded_chunks(frames, unit, contributions)))
        kept.finish(request, sums.n_rows)
        return sums

    return columns, _Reader({"engine": "numpy", "input": "Parquet file, streamed", "chunk_rows": rows}, reduce,
                            contributions, kept)


def _open_parquet(path: Path):
    """The file for :func:`_parquet_frames`: column chunks read through a buffer of
    PARQUET_BUFFER_BYTES, page by page, rather than whole (see there)."""
    pq = _optional("pyarrow.parquet", "Parquet input")
    return pq.ParquetFile(path, buffer_size=PARQUET_BUFFER_BYTES, pre_buffer=False)


def stored_parquet_index(data: object) -> tuple[str, ...]:
    """The named pandas index a Parquet file stores (``df.set_index("id").to_parquet(path)``: "id"),
    which :func:`_parquet_data_columns` leaves out as ``pandas.read_parquet`` does; () for anything
    else (another input, an unnamed index, a file that cannot be read: its reader says why). From
    the footer's metadata: no row is read."""
    if not isinstance(data, (str, Path)) or Path(data).suffix.lower() not in PARQUET_SUFFIXES:
        return ()
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:  # the reader says pyarrow is needed
        return ()
    try:
        stored = _stored_index_columns(pq.read_schema(data))
    except (pa.ArrowException, OSError):  # the reader reports a bad file in one line (_parquet_errors)
        return ()
    return tuple(name for name in stored if not name.startswith("__index_level_"))


def _stored_index_columns(schema) -> list[str]:
    """The columns of a Parquet file's Arrow schema that hold a stored pandas index (a RangeIndex is
    stored as a description, a dict: no column)."""
    index = (schema.pandas_metadata or {}).get("index_columns", [])
    return [entry for entry in index if isinstance(entry, str)]


def _parquet_data_columns(schema) -> list[str]:
    """A Parquet file's columns as ``pandas.read_parquet`` (and the Dask engine) gives them: its Arrow schema's
    names without the columns that hold a pandas index (``df.set_index("id").to_parquet(path)`` stores
    ``id`` as one, and reading the file makes it the index again, not a column)."""
    import pyarrow as pa

    stored = set(_stored_index_columns(schema))
    for field in schema:  # a list, struct or map per cell: no value synthdp can bound or count
        if field.name not in stored and pa.types.is_nested(field.type):
            raise SynthDPError(f"column '{field.name}' holds nested values ({field.type}), not one value per cell: "
                               "synthdp reads columns of numbers, text or dates; flatten it or leave it out")
    return [name for name in schema.names if name not in stored]


def _parquet_frames(parquet, rows: int, columns: list[str] | None = None) -> Iterator[pd.DataFrame]:
    """The rows of an open Parquet file (:func:`_open_parquet`) as DataFrames of ``rows`` rows, the
    last one shorter: the chunks ``iter_batches(batch_size=rows)`` cuts, across row groups, so
    every chunk's sums and the release are the same to the bit. Only ``columns`` (None: all).

    Memory is a few chunks whatever the file's size (benchmarks/big_files.py): each row group
    gets a reader of its own, which is freed before the next one starts, and reads its column
    chunks page by page through a buffer. One reader over the whole file (pyarrow 26's
    ``iter_batches``, column chunks read whole) kept every row group it had decoded: 8.9 GB
    for an 8.1 GB file. A chunk that spans two row groups holds the end of one and the start
    of the next (slices of at most two batches, no copy until the DataFrame).
    """
    return map(_pieces_frame, _parquet_pieces(parquet, rows, columns))


def _parquet_arrays(parquet, rows: int, names: list[str], nullable: Collection[str] = ()) -> Iterator[np.ndarray]:
    """The chunks of :func:`_parquet_frames` as float64 arrays (rows, d) in column order, for a file of numeric
    columns only: each column's values copied once from its Arrow batches into the chunk's array
    (a null as NaN, an integer as the float pandas would give), instead of into a DataFrame and
    from it into the float copy that the sums take. The same values, so the same sums to the bit (a
    test); one copy fewer of each chunk in flight. The footer is checked first
    (:func:`_check_parquet_footer`, as the pass that counts the rows checks it), so a column of
    another type never reaches the conversion."""
    _check_parquet_footer(parquet, names, nullable=nullable)
    return map(_pieces_array, _parquet_pieces(parquet, rows, names))


def _parquet_pieces(parquet, rows: int, columns: list[str] | None = None) -> Iterator[list]:
    """:func:`_parquet_frames`' chunks before conversion: each the list of batch slices that hold its rows
    (one or two where row groups are larger than a chunk, more where they are smaller), one row group's
    reader after another."""
    pieces: list = []  # slices of batches, ``held`` rows, not yet handed out
    held = 0
    for group in range(parquet.metadata.num_row_groups):
        for batch in parquet.iter_batches(batch_size=rows, row_groups=[group], columns=columns):
            start = 0
            while start < batch.num_rows:
                take = min(rows - held, batch.num_rows - start)
                pieces.append(batch.slice(start, take))
                held, start = held + take, start + take
                if held == rows:
                    held = 0
                    yield pieces
                    pieces = []
    if held:
        yield pieces


def _pieces_array(pieces: list) -> np.ndarray:
    """One float64 array (rows, d), column-major as a chunk's values are, of the record batches ``pieces``,
    which it empties (the batches are freed as soon as the array holds their rows)."""
    import pyarrow as pa

    values = np.empty((sum(piece.num_rows for piece in pieces), pieces[0].num_columns), order="F")
    start = 0
    for piece in pieces:
        stop = start + piece.num_rows
        for j in range(piece.num_columns):
            column = piece.column(j)
            values[start:stop, j] = (decimal_floats(column) if pa.types.is_decimal(column.type)
                                     else np.nan if pa.types.is_null(column.type)  # a column of nulls only
                                     else column.to_numpy(zero_copy_only=False))
        start = stop
    pieces.clear()
    return values


def _pieces_frame(pieces: list) -> pd.DataFrame:
    """One DataFrame of the record batches ``pieces``, which it empties (the frame holds the rows then).
    A decimal column stays Arrow decimals, as the Dask engine reads it (not a Python Decimal per cell)."""
    import pyarrow as pa

    table = pa.Table.from_batches(pieces)
    pieces.clear()
    return table.to_pandas(types_mapper=lambda kind: pd.ArrowDtype(kind) if pa.types.is_decimal(kind) else None)


def _check_parquet_footer(parquet, names: list[str], time_columns: Mapping[str, str] | None = None,
                          text_columns: Collection[str] = (), nullable: Collection[str] = ()) -> None:
    """What the footer tells without reading a batch: every column numeric (or a date, time or
    text column where ``time_columns`` names a date or datetime column), and no nulls where
    the row groups' statistics count them (infinite values, and nulls in files without
    statistics, are caught by the pass that sums the values, before any release)."""
    import pyarrow as pa

    schema = parquet.schema_arrow
    position = {arrow_field.name: j for j, arrow_field in enumerate(schema)}  # a stored index may sit anywhere
    for name in names:
        kind = schema.field(position[name]).type
        if name in text_columns:
            continue  # a binary or categorical column: any value is a level or "other"
        stored = kind.value_type if pa.types.is_dictionary(kind) else kind  # a category's values, as pandas writes it
        times = time_columns or {}
        if name in times:
            if (pa.types.is_date(stored) or pa.types.is_timestamp(stored) or pa.types.is_string(stored)
                    or pa.types.is_large_string(stored) or pa.types.is_string_view(stored)
                    or pa.types.is_null(stored)):  # (Arrow's null type: missing cells only, as for a number)
                continue  # read as days or seconds by the pass that sums (which refuses time zones)
            raise SynthDPError(f"{times[name]} column '{name}' holds neither dates nor ISO text")
        if not (pa.types.is_integer(stored) or pa.types.is_floating(stored) or pa.types.is_decimal(stored)
                or pa.types.is_null(stored)):  # Arrow's null type: a column of missing cells only (checked below)
            raise not_numeric(name, pa.types.is_boolean(stored))
    metadata = parquet.metadata
    for group in range(metadata.num_row_groups):
        row_group = metadata.row_group(group)
        for name in names:
            statistics = row_group.column(position[name]).statistics
            if name in text_columns or name in nullable:
                continue
            if statistics is not None and statistics.has_null_count and statistics.null_count > 0:
                raise SynthDPError(f"column '{name}' has missing or infinite values{NULLABLE_HINT}")


# ----------------------------------------------------------------------------- Dask
def _optional(module: str, feature: str):
    """Import an optional dependency (the ``scale`` extra), or stop with a one-line error."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise SynthDPError(f"{feature} needs the optional package '{module.split('.')[0]}': "
                           'pip install "synthdp[scale]"') from None


def is_dask_frame(source) -> bool:
    """Whether ``source`` is a Dask DataFrame (without importing Dask)."""
    return type(source).__module__.split(".")[0] in ("dask", "dask_expr") and hasattr(source, "to_delayed")


def _dask_file_reader(path: Path, parquet: bool, chunk_rows: int | None, scheduler: str | None,
                      csv_format: CsvFormat = DEFAULT_CSV, time_columns: Mapping[str, str] | None = None,
                      text_columns: Collection[str] = (), nullable: Collection[str] = (),
                      unit: UnitBound | None = None) -> tuple[list[str], _Reader]:
    """dask.dataframe partitions of a CSV file (``chunk_rows`` sets the block size) or a Parquet file.

    Partitions of about DASK_BLOCK_BYTES: a Parquet file's are its row groups, those smaller than
    that put together (dask's own default, 256 MiB, made partitions of three 10**6-row groups of
    the 10**7 x 10 file of benchmarks/big_files.py: each worker peaked at 1.2 GB, against 0.7 GB).
    """
    dd = _optional("dask.dataframe", "the Dask engine")
    if parquet:
        pq = _optional("pyarrow.parquet", "Parquet input")
        with _parquet_errors(path):
            arrow = pq.read_schema(path)
            data_columns = _parquet_data_columns(arrow)  # a column of nested values: refused by name
        check_column_names(data_columns)  # a name twice: as the numpy engine says it, before Dask fails on it
        if unit is not None:  # the footer check of the streamed engine's pass that counts the rows per unit
            check_unit_column(unit, data_columns)
            with _parquet_errors(path), _open_parquet(path) as parquet:
                _check_parquet_footer(parquet, _unit_dropped(data_columns, unit), time_columns or {}, text_columns,
                                      nullable)
        with _parquet_errors(path), warnings.catch_warnings():  # a stored pandas index left out: no column, as
            warnings.filterwarnings("ignore", message=DASK_RESET_INDEX)  # pandas reads the file (_dask_errors)
            frame = dd.read_parquet(path, columns=data_columns if len(data_columns) < len(arrow.names) else None,
                                    blocksize=DASK_BLOCK_BYTES, index=False)
        if any(not isinstance(label, str) for label in frame.columns):  # Dask's reader then fails on its partitions
            raise SynthDPError(f"Parquet file '{path}' stores column labels that are not text, which the Dask engine "
                               "cannot read: write it with text labels (df.columns = df.columns.astype(str)), or "
                               "leave --engine at numpy")
        columns, reader = _dask_reader(frame, "Parquet file", scheduler, path, time_columns, text_columns, nullable,
                                       unit)
        if unit is not None:
            return columns, reader

        def reduce(request: SumRequest) -> RowSums:
            if not request.counts_only:
                return reader.reduce(request)
            with _parquet_errors(path), _open_parquet(path) as parquet:  # the footer holds the row count, as
                _check_parquet_footer(parquet, columns, time_columns or {}, text_columns, nullable)  # streamed
                return RowSums({"rows": np.array(parquet.metadata.num_rows)})

        return columns, replace(reader, reduce=reduce)
    label = "input file"
    with path.open("rb") as handle:  # Dask cuts a file's blocks at \n: lines ending in \r alone would be read again
        start = handle.read(2**16)   # in every block (three times the rows, 12 000 read as 36 000)
    if b"\r" in start and b"\n" not in start:
        raise SynthDPError(f"{label} '{path}' ends its lines with a carriage return alone (old Mac style), which the "
                           "Dask engine cannot cut into blocks: convert its line endings (tr '\\r' '\\n') or use "
                           "the default engine")
    with _csv_errors(path, label, csv_format):
        check_column_names(_csv_header(path, label, csv_format))
        # A block of about chunk_rows rows: the bytes per row of the file's start, times chunk_rows.
        blocksize = DASK_BLOCK_BYTES if chunk_rows is None else max(2**16, chunk_rows * _bytes_per_row(path))
        # Integer columns read as floats, so that a later block with a missing or fractional value
        # is checked like any other (Dask fixes every column's dtype from the first block).
        as_text = (*(time_columns or ()), *text_columns, *((unit.column,) if unit else ()))
        try:
            frame = _optional("dask.dataframe.io.csv", "the Dask engine").read_pandas(
                CsvNumbers(csv_format, as_text), path, blocksize=blocksize, assume_missing=True,
                **_pandas_options(csv_format, as_text))
        except ValueError as error:  # Dask's sample of the file ends inside a quoted value: its parser's error, retold
            if not isinstance(error.__cause__, pd.errors.ParserError):
                raise
            raise SynthDPError(f"{label} '{path}' is not a well-formed CSV file{DASK_CSV_HINT}") from None
    return _dask_reader(frame, "CSV file", scheduler, path, time_columns, text_columns, nullable, unit)


def _bytes_per_row(path: Path, sample_rows: int = 1000) -> int:
    with path.open("rb") as handle:
        lines = [len(line) for _, line in zip(range(sample_rows + 1), handle)][1:]
    return max(1, math.ceil(sum(lines) / max(len(lines), 1)))


def _dask_reader(frame, kind: str, scheduler: str | None, path: Path | None = None,
                 time_columns: Mapping[str, str] | None = None, text_columns: Collection[str] = (),
                 nullable: Collection[str] = (), unit: UnitBound | None = None) -> tuple[list[str], _Reader]:
    """Sums over the partitions of a Dask DataFrame: one task per partition, then a tree of combines.

    ``kind`` describes the input in the report; errors name ``path`` (a file's) or ``kind``.
    With a privacy unit, a first computation counts each partition's rows per unit, so that
    each partition knows every unit's rows before it (:meth:`Contributions.start_counts`).
    """
    import dask

    names = check_column_names(frame.columns)

    @contextmanager
    def reading() -> Iterator[None]:
        """Dask's errors as one line naming the input, while it computes on the scheduler."""
        hint = (lambda: DASK_CSV_HINT if _holds_a_quote(path) else "") if kind == "CSV file" and path else ""
        with _dask_errors(str(path) if path else kind, "input file" if path else "input", names, hint), \
                _dask_client(scheduler):
            yield

    # No partition count here: for a CSV file it follows the file's byte size, which depends on the values.
    description = {"engine": "dask", "input": kind, "scheduler": scheduler or "current Dask client, else local threads"}
    contributions, starts = None, []
    columns = _unit_dropped(names, unit)
    if unit is not None:
        check_unit_column(unit, names)
        # the partitions the sums read, every cell of them checked (:func:`_checked_units`)
        rows = _default_chunk_rows(len(names))
        per_part = [dask.delayed(_partition_units)(part, rows, unit, columns, time_columns, text_columns, nullable)
                    for part in frame.to_delayed()]
        with reading():
            part_counts = list(dask.compute(*per_part))
        merged: dict[str, int] = {}
        for counts in part_counts:
            for key, count in counts.items():
                merged[key] = merged.get(key, 0) + count
        contributions = _unit_contributions(unit, merged, names)
        starts = contributions.start_counts(part_counts)

    def reduce(request: SumRequest) -> RowSums:
        parts = frame.to_delayed()
        rows = _default_chunk_rows(len(names))  # a partition is summed in blocks of the numpy engine's chunks
        if unit is None:
            partial = [dask.delayed(_partition_sums)(part, rows, columns, request, time_columns, text_columns,
                                                     nullable)
                       for part in parts]
        else:
            if len(parts) != len(starts):  # the partitions the rows per unit were counted on
                raise SynthDPError("the input changed between two passes over it")
            partial = [dask.delayed(_bounded_frame_sums)(part, rows, unit.column, contributions, start, columns,
                                                         request, time_columns, text_columns, nullable)
                       for part, start in zip(parts, starts)]
        while len(partial) > 1:  # a binary tree: depth log2(partitions), no single huge reduce task
            pairs = [dask.delayed(combine)(*partial[i:i + 2]) for i in range(0, len(partial) - 1, 2)]
            partial = pairs + partial[len(partial) - len(partial) % 2:]
        with reading():
            return dask.compute(partial[0])[0]

    return columns, _Reader(description, reduce, contributions)


def _partition_units(part: pd.DataFrame, rows: int, unit: UnitBound, names: list[str],
                     time_columns: Mapping[str, str] | None, text_columns: Collection[str],
                     nullable: Collection[str]) -> dict[str, int]:
    """A Dask partition's rows per unit, every cell checked, block by block of ``rows`` rows as it is summed."""
    return count_units(_checked_units(block, unit, names, time_columns, text_columns, nullable)
                       for block in _row_blocks(part, rows))


def _row_blocks(frame: pd.DataFrame, rows: int) -> Iterator[pd.DataFrame]:
    """The rows of ``frame`` in order, ``rows`` at a time (the last block shorter): slices, no copy;
    a frame of at most ``rows`` rows (an empty one too) is its only block."""
    if len(frame) <= rows:
        yield frame
        return
    for start in range(0, len(frame), rows):
        yield frame.iloc[start : start + rows]


def _partition_sums(part: pd.DataFrame, rows: int, names: list[str], request: SumRequest,
                    time_columns: Mapping[str, str] | None = None, text_columns: Collection[str] = (),
                    nullable: Collection[str] = ()) -> RowSums:
    """A Dask partition's sums, block by block of ``rows`` rows (the numpy engine's chunk, 2^22 values).

    Each block is validated and summed by :func:`_frame_sums`, as a streamed chunk, and the blocks'
    sums are added in the partition's order (:func:`synthdp.stats.row_sums.total`, as the streamed
    chunks'), so a worker holds the partition and one block's temporaries (its float copy, its
    cells, its scores) rather than the whole partition's, whatever the partition's size (a
    Parquet partition is at least one row group, of whatever size its writer chose). A partition
    of at most one block is summed in one call, as before; a larger one gets the sums of its
    blocks, equal to the whole partition's up to the order of summation. The first block at fault
    decides an error.
    """
    return total(_frame_sums(block, names, request, time_columns, text_columns, nullable)
                 for block in _row_blocks(part, rows))


def _bounded_frame_sums(part: pd.DataFrame, rows: int, column: str, contributions: Contributions,
                        start: np.ndarray, names: list[str], request: SumRequest,
                        time_columns: Mapping[str, str] | None, text_columns: Collection[str],
                        nullable: Collection[str]) -> RowSums:
    """A Dask partition's sums over its kept rows (``start``: each unit's rows in the partitions before it),
    block by block of ``rows`` rows as :func:`_partition_sums`: the running count of each unit's rows
    goes from block to block in the partition's order, as from chunk to chunk in a streamed file
    (:func:`_bounded_chunks`), so the kept rows are those of the whole partition."""
    seen = start.copy()
    return total(_frame_sums(bounded_frame(block, column, contributions, seen), names, request, time_columns,
                             text_columns, nullable)
                 for block in _row_blocks(part, rows))


@contextmanager
def _dask_client(scheduler: str | None) -> Iterator[None]:
    """Connect to the scheduler at ``scheduler`` for the block's computations (None: keep the current one)."""
    if scheduler is None:
        yield
        return
    distributed = _optional("distributed", "a Dask scheduler address")
    try:
        client = distributed.Client(scheduler, timeout=SCHEDULER_TIMEOUT, set_as_default=True)
    except (OSError, TimeoutError, ValueError):
        raise SynthDPError(f"cannot connect to the Dask scheduler at '{scheduler}'") from None
    with client:
        yield


DASK_CSV_HINT = ("; if a quoted value of the file holds a line break, that is the cause: the Dask engine cuts a CSV "
                 "file into blocks at line breaks, those inside quotes too (leave --engine at numpy, or write it as "
                 "Parquet)")


def _holds_a_quote(path: str | Path) -> bool:
    """Whether a file holds a double quote anywhere (read in blocks, up to the first): without one, no
    value of it is quoted, so none holds a line break that would cut Dask's blocks mid-row."""
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            if b'"' in block:
                return True
    return False


@contextmanager
def _dask_errors(source: str, label: str, names: list[str], hint: str | Callable[[], str] = "") -> Iterator[None]:
    """One-line errors for what Dask raises while reading ``source``; its own messages may quote values.
    ``hint``, added to an error of the file's content (or a function giving it, called only then): the
    CSV file's quoted line breaks, where it has a quote.
    Dask's use of a pandas keyword that pandas 3.1 deprecates (reset_index(inplace=True), in its
    Parquet reader) is not the user's to fix: that warning is left out."""
    try:
        with _csv_errors(source, label), warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=DASK_RESET_INDEX)
            yield
    except SynthDPError as error:
        hint = hint() if callable(hint) else hint
        if not hint:
            raise
        raise SynthDPError(f"{error}{hint}") from None
    except ValueError as error:  # dask.dataframe.read_csv: a later block's dtype differs from the first's
        hint = hint() if callable(hint) else hint
        cells = [line.split("|")[1].strip() for line in str(error).splitlines() if line.startswith("| ")]
        column = next((name for name in cells if name in names), None)
        raise SynthDPError((str(not_numeric(column)) if column
                            else f"{label} '{source}' could not be read as a numeric table") + hint) from None
    except OSError:  # a damaged file (Arrow's read errors are OSErrors): not an output's failure
        raise SynthDPError(f"{label} '{source}' could not be read: it is damaged, truncated or not a table") from None
    except (KeyError, TypeError, IndexError, AttributeError):  # Dask's own failures on a file it misreads
        raise SynthDPError(f"{label} '{source}' could not be read by the Dask engine (leave --engine at numpy)") \
            from None
