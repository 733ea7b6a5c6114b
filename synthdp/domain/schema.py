"""Mixed tables: the public schema of continuous, integer, binary and categorical columns.

A schema file is JSON::

    {"columns": {"age": {"type": "continuous", "bounds": [17, 90]},
                 "hours": {"type": "integer", "bounds": [1, 99]},
                 "sex": {"type": "binary", "levels": ["Female", "Male"]},
                 "workclass": {"type": "categorical", "levels": ["Private", "State-gov"]}},
     "other_label": "other"}

Types, bounds and levels are metadata: they come from the schema, never from the data. A
continuous column may declare ``"decimals": k``, the precision its values are written with
(synthetic values are rounded to it, :func:`synthdp.domain.decode.decode`). Levels may be
numbers, ``{"type": "binary", "levels": [0, 1]}``: values then match them as numbers (1, "1" and
"1.0" are the level 1) and decode to numbers (int64 for integer levels), so that 0/1 codes are
written back as the input had them.

Encoding (the coordinates the release works on, numeric columns first, then the blocks):

* a continuous or integer column: one coordinate in [-1, 1] (:class:`synthdp.domain.box.Domain`);
* a binary column with levels (a, b): one indicator z = 1 for b, 0 for a;
* a categorical column with L levels: a one-hot block of L + 1 indicators, the last for
  ``other_label``, which every value outside the levels (or missing) maps to. The "other"
  level is always there, so its cell is released like any other; as the all-zero vector of
  an L-wide block it would be 1 minus the L others, with the noise of all of them
  (measured: docs/decisions/schema-other-level.md). A binary column has no room for it, so
  a value outside its two levels is an input error (declare the column categorical to map
  such values to "other"). A categorical column declared ``"other": false`` (its levels are
  every value it takes, public like them) has no "other" indicator: a block of L, no synthetic
  row takes a level no real row has, and a value outside the levels is an input error, as in a
  binary column (a nullable binary column is such a block: its two levels and "missing").

* an integer column of at most MAX_VALUE_BLOCK values, in a table with binary or categorical
  columns, also has a *value block*: an internal categorical column (``values_of``) with one
  indicator per integer value in its bounds, 1 where the (clipped, rounded) value is that value.
  It is not a column of the table (nothing decodes from it); it lets the release hold the 2-way
  table of that column's values against each binary or categorical column, as for two
  categorical columns (:func:`synthdp.stats.mixed_basis.basis_indices`), so that a pair such as
  education x education-num, one a function of the other, can be kept cell by cell. An
  integer column of more than MAX_VALUE_BLOCK and at most MAX_BINNED_BLOCK values (ages, hours
  a week, percentages) has a *binned* value block instead: one indicator per bin of
  consecutive integers, at most BLOCK_BINS bins of equal width (the last may be narrower),
  each level named by its bin's first value. A numeric column with either block releases its
  dependence on each binary or categorical column as their 2-way table, not as its means per
  level.

The indicators z are the {0, 1} form of the +-1 coordinates x = 2z - 1 of docs/mechanism.md §7.
Per coordinate the affine map is invertible, so products of at most one indicator per
column span exactly the products of the +-1 coordinates (T_r(+-1) = (+-1)^r makes higher
degrees redundant, and two coordinates of one block multiply to 0). The {0, 1} form is
chosen because a product of indicators of different columns is a marginal cell, so its
moment is that cell's frequency, and because a row has at most one non-zero indicator per
block, which keeps the sensitivity of a whole marginal table at 2/n
(:func:`synthdp.stats.mixed_basis.basis_groups`). Indicators lie in [0, 1], inside [-1, 1],
so the Chebyshev machinery (:class:`synthdp.stats.chebyshev.ChebyshevBasis`, T_1(z) = z)
evaluates these products unchanged and every ``|phi_r| <= 1`` still holds.

This module holds public metadata and pure maps; it never imports the private table.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from synthdp.checks import is_finite_number
from synthdp.domain.box import (
    COLUMN_TYPES,
    NUMERIC_KEYS,
    Domain,
    _parse_column,
    check_keys,
    read_json_file,
    time_columns,
)
from synthdp.domain.decode import decode
from synthdp.domain.encoded import EncodedPoints
from synthdp.errors import SynthDPError, near_column, unknown_column

LEVEL_TYPES = ("binary", "categorical")
DEFAULT_OTHER_LABEL = "other"
DEFAULT_MARGINAL_DEGREE = 2
DISCOVER = "discover"  # "levels": "discover" asks for DP discovery of a categorical column's levels
#: A numeric column of whole, non-negative values is a code (categorical) with at most
#: min(round(n / 10), MAX_CODE_LEVELS) distinct values: SDV's metadata detection's rule.
MAX_CODE_LEVELS = 10
#: ... and only in a table of more than this many rows (SDV's ``_MIN_ROWS_FOR_PREDICTION``).
MIN_ROWS_FOR_CODES = 5


def looks_like_codes(distinct: np.ndarray, n_rows: int, whole: bool) -> bool:
    """Whether a numeric column with these sorted ``distinct`` values over ``n_rows`` rows reads as
    categorical codes (SDV's rule: whole, non-negative, at most min(round(n / 10), 10) values), as
    ``synthdp evaluate`` types it and ``synthdp schema`` drafts it."""
    return bool(n_rows > MIN_ROWS_FOR_CODES and whole and len(distinct) and distinct[0] >= 0
                and len(distinct) <= min(round(n_rows / 10), MAX_CODE_LEVELS))


TEXT_DTYPE = pd.Series(["text"]).dtype  # what pandas makes of text: str (pandas 3) or object (pandas 2)
MISSING_LABEL = "(missing)"  # the level a nullable categorical column's missing cells take; decoded as a missing cell
INDICATOR_SUFFIX = " (missing)"  # the internal binary column of a nullable numeric column: 1 where the cell is missing
VALUES_SUFFIX = " (values)"  # the internal categorical column of an integer column's values (its value block)
#: Most values an integer column may have for a value block (its 2-way tables with the categorical
#: columns): a column of so few values is read as codes (grades, ratings, levels of schooling, months,
#: hours of the day), and each of its tables costs one sensitivity group whatever its size, but adds
#: values x levels rows to the LP. docs/decisions/value-blocks.md.
MAX_VALUE_BLOCK = 32
#: Most values an integer column may have for a binned value block (BLOCK_BINS bins of consecutive
#: values): a count or a scale whose values spread over its bounds (ages, hours a week, percentages,
#: years), not a money amount, whose equal-width bins would hold nearly every row in one.
#: docs/decisions/binned-blocks.md.
MAX_BINNED_BLOCK = 128
#: Most bins of a binned value block: as many as the copula's histograms may have
#: (synthdp.pipeline.plan.MARGINAL_BINS_RANGE's top). docs/decisions/binned-blocks.md.
BLOCK_BINS = 16
DRAFT_KEY = "draft"  # top-level entry of a schema drafted from the data (synthdp schema); ignored by from_dict


@dataclass(frozen=True)
class CategoricalColumn:
    """A column of public levels: ``binary`` (exactly two, one indicator) or categorical.

    A categorical column has one indicator per level plus one for ``other_label``: any value
    outside the levels, or missing. Unless ``other`` is False (the schema's ``"other": false``:
    the levels are every value the column takes, public like them): then it has no "other" level,
    and a value outside the levels (or a missing cell, unless nullable) is an input error, as in
    a binary column. A binary column's first level is its indicator's 0.

    A ``nullable`` categorical column has one more indicator, for MISSING_LABEL: its missing
    cells (kept apart from "other", and decoded as missing cells). ``indicator_of`` names the
    nullable numeric column whose missingness this internal binary column encodes (levels
    "present", "missing"); it is not a column of the table. ``values_of`` names the integer
    column whose values this internal categorical column encodes (its value block: one level per
    integer in the bounds, or per bin of consecutive integers, named by its first value; no
    "other" level, since a value is clipped into them); not a column of the table either.
    """

    name: str
    levels: tuple[str, ...]
    binary: bool = False
    other_label: str = DEFAULT_OTHER_LABEL
    nullable: bool = False
    indicator_of: str | None = None
    values_of: str | None = None
    numbers: tuple[int | float, ...] | None = None  # the levels as numbers, when the schema gives numbers
    other: bool = True  # False: no "other" level (the levels are every value; one outside them is an error)

    def __post_init__(self) -> None:
        if self.binary and len(self.levels) != 2:
            raise SynthDPError(f"binary column '{self.name}' needs exactly 2 levels")
        if len(set(self.all_levels)) != len(self.all_levels):
            raise SynthDPError(f"column '{self.name}' lists a level twice (or one named like other_label)")
        if "" in self.all_levels:  # a CSV writes it as an empty cell: a missing value
            raise SynthDPError(f"column '{self.name}' has an empty level (or an empty other_label): an empty cell "
                               "reads as a missing value")
        if self.numbers is not None:
            object.__setattr__(self, "numbers", tuple(self.numbers))  # a list, from a JSON document
            if len(self.numbers) != len(self.levels) or len({float(number) for number in self.numbers}) != len(
                    self.numbers):
                raise SynthDPError(f"column '{self.name}' lists a level twice (1 and 1.0 are the same number)")

    @property
    def read_as_missing(self) -> str | None:
        """The first of its levels (other_label included) a CSV reader takes for a missing value
        (:data:`CSV_MISSING_MARKS`: "NA", "null", ...), or None. Public: the schema's own text."""
        return next((level for level in self.all_levels if level in CSV_MISSING_MARKS), None)

    def _missing_mark_hint(self) -> str:
        """What a code error adds where a level is :attr:`read_as_missing` (else nothing)."""
        marked = self.read_as_missing
        return (f" (its level '{marked}' is read from a CSV file as a missing value, as pandas reads it: rename "
                "that level in the data and the schema)" if marked else "")

    @property
    def all_levels(self) -> tuple[str, ...]:
        """Every level a value decodes to: the levels, then ``other_label`` for a categorical
        column with an "other" level, then MISSING_LABEL for a nullable one."""
        if self.values_of is not None:
            return self.levels
        levels = self.levels if self.binary or not self.other else self.levels + (self.other_label,)
        return levels + (MISSING_LABEL,) if self.nullable else levels

    def scoring(self) -> CategoricalColumn:
        """The column as the evaluation scores it: with its "other" level, so that a synthetic
        table's value outside the levels (another tool's, or one edited) is a cell of its own, not
        an error; a binary column's too (a real table's two values, typed binary by
        ``synthdp evaluate`` without a schema, and a third in the synthetic one)."""
        if (self.other and not self.binary) or self.values_of is not None:
            return self
        label = self.other_label
        while label in self.levels:  # a level may be named like other_label where there is no "other" level
            label = f"({label})"
        return replace(self, binary=False, other=True, other_label=label)

    @property
    def internal(self) -> bool:
        """Whether the column is the schema's own (a missingness indicator or a value block), not the table's."""
        return self.indicator_of is not None or self.values_of is not None

    @property
    def coded_levels(self) -> tuple[str, ...]:
        """The levels that have an indicator coordinate, in coordinate order."""
        return self.levels[1:] if self.binary else self.all_levels

    @property
    def width(self) -> int:
        """Number of indicator coordinates."""
        return len(self.coded_levels)

    @property
    def binned(self) -> bool:
        """Whether this value block's levels are bins of several consecutive integers."""
        return self.values_of is not None and len(self.levels) > 1 and int(self.levels[1]) - int(self.levels[0]) > 1

    def value_codes(self, values: np.ndarray) -> np.ndarray:
        """A value block's level index of each value of its integer column (in the column's units), shape (n,):
        the value rounded to an integer and clipped into the bounds, as the release clips it, then the
        level (value or bin) it falls in."""
        values = np.rint(values)
        if not self.binned:
            first, last = int(self.levels[0]), int(self.levels[-1])
            return (np.clip(values, first, last) - first).astype(np.int64)
        starts = np.array([int(level) for level in self.levels], dtype=float)
        return (np.searchsorted(starts, np.maximum(values, starts[0]), side="right") - 1).astype(np.int64)

    def level_codes(self, values: pd.Series) -> np.ndarray:
        """Index of each value in ``all_levels``, shape (n,); its coordinate is the index minus ``self.binary``.

        A text value is compared as text; a number (of a numeric column, or in an object column)
        with the first level that reads as that number (1 and 1.0 are the level "1", or "1.0" where
        that is the level): value by value, so that one row's code never depends on another row
        (a column of whole numbers that holds one missing cell is a float column: its 1.0 is still
        the level "1"). For levels the schema gives as numbers (``numbers``), every value is compared
        as a number (so 1, "1" and "1.0" are the level 1). In a
        categorical column a value outside the levels, or missing, is "other"; in a binary column,
        or one without an "other" level, it is an error (a missing cell of a nullable column is
        MISSING_LABEL in every kind). The error names the column, never the value.
        """
        if self.numbers is not None:
            codes = _number_codes(values, self.numbers)
        else:
            codes = _text_level_codes(values, self.levels)
        missing = values.isna().to_numpy() if self.nullable else np.zeros(len(codes), dtype=bool)
        if self.binary and (codes < 0).any():
            raise SynthDPError(f"binary column '{self.name}' has a value outside its 2 levels (or a missing "
                               "value); declare it categorical to map such values to 'other', or "
                               "\"nullable\": true for missing values" + self._missing_mark_hint())
        if not self.other and (codes[~missing] < 0).any():
            raise SynthDPError(f"column '{self.name}' has a value outside its levels"
                               + ("" if self.nullable else " (or a missing value)")
                               + f" and no '{self.other_label}' level to map it to; list the value among the "
                               "levels of a categorical column"
                               + ("" if self.nullable else ", give it \"nullable\": true for missing values")
                               + ", or declare it categorical without \"other\": false to map such values to "
                               f"'{self.other_label}'" + self._missing_mark_hint())
        codes[codes < 0] = len(self.levels)
        codes[missing] = len(self.all_levels) - 1
        return codes


# the marks pandas.read_csv reads as a missing value by default (its documented na_values)
CSV_MISSING_MARKS = frozenset({"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND",
                               "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"})


def _text_level_codes(values: pd.Series, levels: Sequence[str]) -> np.ndarray:
    """Index of each value among text ``levels`` (-1 where it is none of them, or missing), shape (n,):
    text as text, a number with the first level that reads as that number, a date or time by its
    ISO text (see :meth:`CategoricalColumn.level_codes`), each value by itself."""
    lookup = {level: code for code, level in enumerate(levels)}
    by_number: dict[float, int] = {}
    for code, level in enumerate(levels):
        number = pd.to_numeric(level, errors="coerce")
        if pd.notna(number) and math.isfinite(float(number)):
            by_number.setdefault(float(number), code)
    if isinstance(values.dtype, pd.CategoricalDtype):  # a pandas category: its values, one by one
        values = values.astype(object)
    if pd.api.types.is_string_dtype(values):  # text only (an object column is looked at value by value)
        return values.map(lookup).fillna(-1).to_numpy(dtype=np.int64, copy=True)
    if pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
        return as_float64(values).map(by_number).fillna(-1).to_numpy(dtype=np.int64, copy=True)

    def code_of(value: object) -> int:
        text = _value_text(value)
        if text is None:
            return -1
        if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_)):
            return by_number.get(float(text), -1)
        return lookup.get(text, -1)

    return np.fromiter((code_of(value) for value in values.to_numpy()), dtype=np.int64, count=len(values))


def _value_text(value: object) -> str | None:
    """One value as the text a level is compared with, from the value alone: text as it is; a whole
    number within int64's range as an integer ("1" for 1 and 1.0; a float of 2**60 as the int64 of it
    is, so that a column of large whole numbers writes a level alike whether one missing cell made
    pandas hold it as float64 or none left it int64); another number in its shortest form (float32's
    0.1 as "0.1"); a date at midnight as "2020-01-01", another time as "2020-01-01 10:30:00"; None
    where missing; bytes (a Parquet BINARY column's) as their UTF-8 text."""
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray)):  # a Parquet BINARY column's cells: their UTF-8 text, as Dask reads them
        return bytes(value).decode("utf-8", errors="backslashreplace")
    if value is None or (not isinstance(value, (bool, np.bool_)) and pd.isna(value)):
        return None
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        if not math.isfinite(float(value)):
            return None
        if float(value).is_integer() and abs(float(value)) < 2**63:
            return str(int(value))
        return str(value) if isinstance(value, np.floating) else repr(float(value))
    if isinstance(value, (dt.date, np.datetime64)):
        moment = pd.Timestamp(value)
        return moment.date().isoformat() if moment == moment.normalize() else str(moment)  # ("%Y": no zeros before 1000)
    return str(value)


def level_text(values: pd.Series) -> pd.Series:
    """Each value of a text column as the text a discovered level takes, value by value (never from
    the column's type, :func:`_value_text`); missing values left out."""
    texts = [_value_text(value) for value in values.to_numpy()]
    present = [text is not None for text in texts]
    return pd.Series([text for text in texts if text is not None], index=values.index[present], dtype=object)


def _number_codes(values: pd.Series, numbers: Sequence[int | float]) -> np.ndarray:
    """Index of each value among ``numbers`` (-1 where it is none of them, or not a number), shape (n,).
    A truth value is 0 or 1 wherever it is: in a bool column, and beside other values in an object
    column (as pandas holds True and False beside a missing cell: read as text there, "True", every
    one of them was other than 1 because of one other row)."""
    if pd.api.types.is_bool_dtype(values):
        values = values.astype(float)
    if values.dtype == object:
        kind = pd.api.types.infer_dtype(values, skipna=True)  # a scan in C: most object columns hold no truth value
        if kind == "boolean":
            values = values.astype(float)
        elif kind.startswith("mixed"):  # truth values among numbers or text: each one by itself
            values = values.map(lambda value: float(value) if isinstance(value, (bool, np.bool_)) else value)
    if not pd.api.types.is_numeric_dtype(values):
        text = values.astype("string").str.strip()
        values = pd.to_numeric(text, errors="coerce")
        comma = values.isna() & text.str.contains(",", regex=False).fillna(False)
        if comma.any():  # "1,0" from a file with a decimal comma: text columns are read as written
            values = values.astype(float)
            values[comma] = pd.to_numeric(text[comma].str.replace(",", ".", regex=False), errors="coerce")
    lookup = {float(number): code for code, number in enumerate(numbers)}
    return as_float64(values).map(lookup).fillna(-1).to_numpy(dtype=np.int64, copy=True)


def as_float64(values: pd.Series) -> pd.Series:
    """A numeric column as float64 (missing: NaN), a float narrower than 64 bits (numpy's, pandas'
    ``Float32`` or Arrow's ``float``/``halffloat``) value by value as its shortest decimal in its own
    precision: float32's 0.1 is 0.1, the level 0.1 or "0.1", not 0.10000000149011612, which is none."""
    if pd.api.types.is_float_dtype(values) and values.dtype.itemsize < 8:
        narrow = values.to_numpy(dtype=f"float{8 * values.dtype.itemsize}", na_value=np.nan)
        return pd.Series(narrow.astype(str).astype(float), index=values.index)
    return values.astype(float)


def level_numbers(levels: Sequence) -> tuple[int | float, ...] | None:
    """The levels as numbers when every one is a (finite) JSON number, else None (levels as text)."""
    if levels and all(isinstance(level, (int, float)) and is_finite_number(level) for level in levels):
        return tuple(levels)
    return None


def _decode_numbers(column: CategoricalColumn, choice: np.ndarray) -> np.ndarray | pd.arrays.IntegerArray | None:
    """A column with numeric levels decoded to numbers, written back as the input had them: int64
    for integer levels (Int64 with missing cells), else float64 (NaN in missing cells). None when a
    row took the "other" level, which is not a number (the column is then decoded as text)."""
    numbers = column.numbers or ()
    missing = (choice == len(column.all_levels) - 1) if column.nullable else np.zeros(len(choice), dtype=bool)
    if ((choice >= len(numbers)) & ~missing).any():
        return None
    integers = all(isinstance(number, int) for number in numbers)
    values = np.array(numbers, dtype=np.int64 if integers else float)[np.where(missing, 0, choice)]
    if not missing.any():
        return values
    return pd.arrays.IntegerArray(values, missing) if integers else np.where(missing, np.nan, values)


@dataclass(frozen=True)
class Schema:
    """The public description of a mixed table and the layout of its encoded coordinates.

    Built by :meth:`from_dict` from a schema file's content, rather than by hand.

    Parameters
    ----------
    names : tuple of str
        All columns, in the table's order.
    numeric : Domain
        Bounds of the continuous and integer columns (possibly none), in table order.
    categorical : tuple of CategoricalColumn
        The binary and categorical columns, in table order.
    other_label : str, default "other"
        The name of every categorical column's "other" level.
    """

    names: tuple[str, ...]
    numeric: Domain
    categorical: tuple[CategoricalColumn, ...]
    other_label: str = DEFAULT_OTHER_LABEL

    @property
    def d_numeric(self) -> int:
        """The number of numeric columns, the first coordinates of the encoding."""
        return self.numeric.d

    @property
    def nullable_numeric(self) -> tuple[str, ...]:
        """The numeric columns declared nullable (each has an internal missingness indicator)."""
        return tuple(column.indicator_of for column in self.categorical if column.indicator_of is not None)

    @property
    def nullable(self) -> tuple[str, ...]:
        """Every column declared nullable, in table order."""
        declared = set(self.nullable_numeric) | {column.name for column in self.categorical if column.nullable}
        return tuple(name for name in self.names if name in declared)

    @property
    def declared(self) -> tuple[CategoricalColumn, ...]:
        """The binary and categorical columns of the table (without the internal ones)."""
        return tuple(column for column in self.categorical if not column.internal)

    @property
    def value_blocks(self) -> tuple[CategoricalColumn, ...]:
        """The value blocks of the integer columns (:data:`MAX_VALUE_BLOCK`), in table order."""
        return tuple(column for column in self.categorical if column.values_of is not None)

    def without_value_blocks(self) -> Schema:
        """The same schema without its value blocks (the table's columns and levels unchanged).

        Returns
        -------
        Schema
            A new schema; this one is unchanged.
        """
        return replace(self, categorical=tuple(column for column in self.categorical if column.values_of is None))

    def without_binned_blocks(self) -> Schema:
        """The same schema without its binned value blocks (its blocks of single values kept).

        Returns
        -------
        Schema
            A new schema; this one is unchanged.
        """
        return replace(self, categorical=tuple(column for column in self.categorical if not column.binned))

    @property
    def valued_numeric(self) -> tuple[tuple[CategoricalColumn, int], ...]:
        """Each value block with the index of its integer column among the numeric columns."""
        names = self.numeric.names
        return tuple((column, names.index(str(column.values_of))) for column in self.value_blocks)

    @property
    def n_coordinates(self) -> int:
        """D, the encoded width: numeric coordinates then the indicator blocks."""
        return self.d_numeric + sum(column.width for column in self.categorical)

    @property
    def block_of_coordinate(self) -> np.ndarray:
        """Column number of each coordinate in the encoding (numeric columns, then blocks), shape (D,)."""
        widths = [1] * self.d_numeric + [column.width for column in self.categorical]
        return np.repeat(np.arange(len(widths)), widths)

    def block_slice(self, name: str) -> slice:
        """The coordinates of a binary or categorical column.

        Parameters
        ----------
        name : str
            A binary or categorical column; any other name is an error.

        Returns
        -------
        slice
            Its indicator block among the encoded coordinates (after the ``d_numeric`` numeric ones).
        """
        start = self.d_numeric
        for column in self.categorical:
            if column.name == name:
                return slice(start, start + column.width)
            start += column.width
        raise self._not_categorical(name)

    def _not_categorical(self, name: str) -> SynthDPError:
        """The error for ``name``, which is no binary or categorical column: a numeric column is said to be
        one; another name gets the table column spelt nearly alike (a column of the table, never an
        internal one such as a nullable column's 'x (missing)')."""
        if name in self.numeric.names:
            return SynthDPError(f"'{name}' is a numeric column: binary or categorical columns only here")
        return SynthDPError(f"'{name}' is not a binary or categorical column of the schema"
                            f"{near_column(name, list(self.names))}")

    def column(self, name: str) -> CategoricalColumn:
        """The binary or categorical column called ``name``.

        Parameters
        ----------
        name : str
            A binary or categorical column; any other name is an error.

        Returns
        -------
        CategoricalColumn
            Its levels and encoding.
        """
        for column in self.categorical:
            if column.name == name:
                return column
        raise self._not_categorical(name)

    # -------------------------------------------------------------- decoding
    def decode(self, points: np.ndarray | EncodedPoints, mixed_levels: bool = False) -> pd.DataFrame:
        """Encoded points, shape (m, D) (an array, or :class:`~synthdp.domain.encoded.EncodedPoints`),
        back to the table's columns, units and levels.

        Numeric columns as :func:`synthdp.domain.decode.decode` (rounded to their declared
        ``"decimals"``); a categorical block decodes to the level of its largest indicator, a binary
        indicator to its second level when > 1/2. Levels the schema gives as numbers decode to
        numbers (``[0, 1]`` to int64 0 and 1, ``[0.0, 1.0]`` to floats), so that a 0/1 column is
        written back as the input had it; as text where a row takes the "other" level, or with
        ``mixed_levels`` as an object column of the numbers and "other" (a condition such as
        ``code == 401`` then compares numbers with numbers, whatever other rows hold).

        Parameters
        ----------
        points : ndarray or EncodedPoints, shape (m, D)
            Points in the encoded coordinates.
        mixed_levels : bool, default False
            Numeric levels as an object column of the numbers and "other", rather than text
            where a row takes "other".

        Returns
        -------
        DataFrame, shape (m, len(names))
            The table's columns, in its order.
        """
        encoded = points if isinstance(points, EncodedPoints) else None  # each column's level held as it is
        frame = decode(points[:, : self.d_numeric] if encoded is None else encoded.numeric, self.numeric)
        columns = {name: frame[name] for name in frame.columns}
        for b, column in enumerate(self.categorical):
            if column.values_of is not None:  # the numeric coordinate holds the value
                continue
            if encoded is not None:  # what the one-hot block below gives: its set coordinate (0 where none)
                coordinate = encoded.coordinates(b)
                choice = (coordinate == 0).astype(np.int64) if column.binary else np.maximum(coordinate, 0)
            else:
                block = points[:, self.block_slice(column.name)]
                choice = (block[:, 0] > 0.5).astype(np.int64) if column.binary else block.argmax(axis=1)
            if column.indicator_of is not None:  # a nullable numeric column: missing where its indicator is 1
                values = columns[column.indicator_of]
                missing = choice.astype(bool)
                if pd.api.types.is_integer_dtype(values):
                    values = values.astype("Int64")  # an integer column with missing cells
                elif pd.api.types.is_numeric_dtype(values):
                    values = values.astype(float)
                columns[column.indicator_of] = values.mask(missing)  # dates: ISO text, missing cells empty
                continue
            numbers = None if column.numbers is None else _decode_numbers(column, choice)
            if numbers is not None:
                columns[column.name] = numbers
                continue
            labels: tuple[str | int | float, ...] = column.all_levels
            if mixed_levels and column.numbers is not None:  # the numbers, then the "other" and missing labels
                labels = (*column.numbers, *column.all_levels[len(column.numbers):])
            decoded = np.array(labels, dtype=object)[choice]
            if mixed_levels and column.numbers is not None:
                if column.nullable:
                    decoded[choice == len(column.all_levels) - 1] = None
                columns[column.name] = pd.Series(decoded, dtype=object)
                continue
            if column.nullable:
                decoded[choice == len(column.all_levels) - 1] = None
            # the type pandas gives text, whichever rows were drawn (all missing, or none, would be object)
            columns[column.name] = pd.Series(decoded, dtype=TEXT_DTYPE)
        result = pd.DataFrame(columns, columns=list(self.names))
        result.attrs.update(frame.attrs)  # the numeric columns' declared decimals, for the CSV writer
        return result

    def with_sources(self, names: Sequence[str], source: str) -> Schema:
        """The schema with the bounds of numeric columns ``names`` marked as from ``source``, as the
        report shows them.

        Parameters
        ----------
        names : sequence of str
            Numeric columns.
        source : str
            Where their bounds came from, say ``"DP estimate"``.

        Returns
        -------
        Schema
            A new schema; this one is unchanged.
        """
        columns = tuple(replace(column, source=source) if column.name in names else column
                        for column in self.numeric.columns)
        sources = sorted({column.source for column in columns})
        return replace(self, numeric=replace(self.numeric, columns=columns, source=" + ".join(sources)))

    def to_dict(self) -> dict:
        """The schema as JSON types (the format of the schema file, plus bound sources).

        Returns
        -------
        dict
            What :meth:`from_dict` reads back.
        """
        numeric = self.numeric.to_dict()["columns"]
        columns = {}
        nullable = set(self.nullable)
        for name in self.names:
            if name in numeric:
                columns[name] = numeric[name]
            else:
                column = self.column(name)
                columns[name] = {"type": "binary" if column.binary else "categorical",
                                 "levels": list(column.levels if column.numbers is None else column.numbers),
                                 **({} if column.binary or column.other else {"other": False})}
            if name in nullable:
                columns[name] = {**columns[name], "nullable": True}
        return {"columns": columns, "other_label": self.other_label}

    @classmethod
    def from_dict(cls, content: Mapping, column_names: Sequence[str], origin: str = "schema",
                  value_blocks: bool = True, binned_blocks: bool = True) -> Schema:
        """Build the schema of ``column_names`` (the table's columns, in order) from a schema mapping.

        Every column needs an entry, and every entry must name a column. ``value_blocks=False``
        leaves out the integer columns' value blocks, ``binned_blocks=False`` the binned ones
        (design studies' variants, :class:`synthdp.pipeline.run.StudyOptions`).

        Parameters
        ----------
        content : mapping
            A schema file's content (:func:`load_schema_file`).
        column_names : sequence of str
            The table's columns, in order.
        origin : str, default "schema"
            Names the content in errors.
        value_blocks, binned_blocks : bool, default True
            Keep the integer columns' value blocks, and the binned ones among them.

        Returns
        -------
        Schema
            A new schema; this one is unchanged.
        """
        check_schema_names(content, column_names, origin)
        specs = content["columns"]
        other_label = _other_label(content, origin)
        numeric, categorical, indicators = [], [], []
        for name in column_names:
            spec = specs[name]
            nullable = isinstance(spec, Mapping) and spec.get("nullable", False)  # a bool: checked above
            column_type = spec.get("type", "continuous") if isinstance(spec, Mapping) else "continuous"  # checked above
            if column_type in LEVEL_TYPES:  # its keys checked above: no "decimals" (its values are its levels)
                categorical.append(_level_column(name, spec, other_label, origin))
            else:
                numeric.append(_parse_column(name, spec))
                if nullable:
                    if name + INDICATOR_SUFFIX in column_names:
                        raise SynthDPError(f"{origin}: nullable column '{name}' needs the name "
                                           f"'{name + INDICATOR_SUFFIX}' for its missingness, which a column has")
                    indicators.append(CategoricalColumn(name + INDICATOR_SUFFIX, ("present", "missing"), True,
                                                        other_label, indicator_of=name))
        values = []
        if categorical and value_blocks:  # only beside declared binary or categorical columns: their 2-way tables
            with_missing = {column.indicator_of for column in indicators}
            for column in numeric:
                integers = range(math.ceil(column.lower), math.floor(column.upper) + 1)
                limit = MAX_BINNED_BLOCK if binned_blocks else MAX_VALUE_BLOCK
                if (column.integer and column.temporal is None and column.values is None
                        and column.name not in with_missing and len(integers) <= limit):
                    if column.name + VALUES_SUFFIX in column_names:
                        raise SynthDPError(f"{origin}: integer column '{column.name}' needs the name "
                                           f"'{column.name + VALUES_SUFFIX}' for its value block, which a column has")
                    width = 1 if len(integers) <= MAX_VALUE_BLOCK else math.ceil(len(integers) / BLOCK_BINS)
                    values.append(CategoricalColumn(column.name + VALUES_SUFFIX,
                                                    tuple(str(value) for value in integers[::width]),
                                                    False, other_label, values_of=column.name))
        return cls(tuple(column_names), Domain(tuple(numeric), source="public"),
                   tuple(categorical + indicators + values), other_label)


def check_schema_names(content: Mapping, column_names: Sequence[str], origin: str = "schema") -> None:
    """A schema mapping's entries are the table's columns (``column_names``, its header: public),
    each once: checked before any release, so that a schema for another table costs nothing."""
    check_schema_columns(content, origin)
    specs = content["columns"]
    header = set(column_names)  # a set: a schema and a header of 10^5 columns each are compared in linear time
    unknown = [name for name in specs if name not in header]
    if unknown:
        raise unknown_column(f"{origin} names", unknown[0], column_names)
    missing = [name for name in column_names if name not in specs]
    if missing:
        raise SynthDPError(f"{origin} has no entry for column '{missing[0]}'")


def check_numeric_specs(content: Mapping, estimated: Sequence[str] = ()) -> None:
    """A schema mapping's numeric columns parsed as :meth:`Schema.from_dict` parses them (type,
    bounds, decimals), but for the columns whose bounds are to be ``estimated``: checked before any
    release (the units' count, level discovery, the bounds' estimates come before the schema is
    built), so that a schema's bad bounds cost nothing."""
    for name, spec in content["columns"].items():
        if name not in estimated and not (isinstance(spec, Mapping) and spec.get("type") in LEVEL_TYPES):
            _parse_column(name, spec)


def _other_label(content: Mapping, origin: str) -> str:
    other_label = content.get("other_label", DEFAULT_OTHER_LABEL)
    if not isinstance(other_label, str):
        raise SynthDPError(f"{origin}: other_label must be a string")
    return other_label


def _level_column(name: str, spec: Mapping, other_label: str, origin: str) -> CategoricalColumn:
    """A binary or categorical column of a schema mapping (``spec``: its entry, whose keys
    :func:`check_schema_columns` checked), with its levels given."""
    levels = spec.get("levels")
    if levels == DISCOVER:
        raise SynthDPError(f"{origin}: the levels of column '{name}' are to be discovered: give them, "
                           "or a share of the budget to discover them (levels_share, with delta > 0)")
    if not (isinstance(levels, list) and all(isinstance(level, (str, int, float)) for level in levels)):
        raise SynthDPError(f"{origin}: column '{name}' needs \"levels\": a list of strings (or numbers)")
    nullable = bool(spec.get("nullable", False))
    binary = spec["type"] == "binary"
    try:  # a nullable binary column needs a third cell for its missing values: a categorical block,
        # still without an "other" level (a value outside its two levels is an error, as in a binary one)
        return CategoricalColumn(name, tuple(str(level) for level in levels), binary and not nullable, other_label,
                                 nullable=nullable, numbers=level_numbers(levels),
                                 other=bool(spec.get("other", True)) and not (binary and nullable))
    except SynthDPError as error:
        raise SynthDPError(f"{origin}: {error}") from None


def closed_level_columns(content: Mapping | Schema) -> tuple[CategoricalColumn, ...]:
    """The binary and categorical columns whose levels are every value they may take (binary, or
    ``"other": false``), given in the schema: a value outside them is an input error
    (:meth:`CategoricalColumn.level_codes`). A pass that comes before any release (the rows per
    privacy unit, :class:`synthdp.reader.units.UnitBound`) checks them, so that such a file fails
    before anything is spent. Columns whose levels are to be discovered are not among them."""
    if isinstance(content, Schema):
        return tuple(column for column in content.declared if column.binary or not column.other)
    check_schema_columns(content)
    other_label = _other_label(content, "schema")
    columns = (_level_column(name, spec, other_label, "schema") for name, spec in content["columns"].items()
               if isinstance(spec, Mapping) and spec.get("type") in LEVEL_TYPES and spec.get("levels") != DISCOVER)
    return tuple(column for column in columns if column.binary or not column.other)


def load_schema_file(path: str | Path) -> dict:
    """Read a schema JSON file into a mapping; errors name the file, not its content.

    Parameters
    ----------
    path : str or Path
        The schema file.

    Returns
    -------
    dict
        Its content, checked to be a schema (``"columns"`` and each column's entry), for
        :meth:`Schema.from_dict` or :meth:`synthdp.SmoothSynthesizer.fit`'s ``schema``.
    """
    content = read_json_file(path, "schema file")
    check_schema_columns(content, f"schema file '{path}'", given=True)  # before any data is read
    assert isinstance(content, dict)  # a JSON object, checked above
    return content


SCHEMA_KEYS = ("columns", "other_label", DRAFT_KEY)  # a schema's top-level entries
LEVEL_KEYS = ("type", "levels", "nullable", "other")  # what a binary or categorical column's spec may hold


def check_schema_columns(content: object, origin: str = "schema", given: bool = False) -> None:
    """What a schema mapping says of each column, checked without the table (so before it is read):
    the top-level entries, each column's type, the keys its type takes (a misspelt "nulable" or a
    categorical column's "bounds" is an error, not ignored) and, where the user ``given`` the
    mapping, at least one level for a categorical column (an empty list would map every value to
    "other"; level discovery may find none, and says so in the report). The rest (levels' content,
    bounds' values) is :meth:`Schema.from_dict`'s, the columns against the table's
    :func:`check_schema_names`'s."""
    if not isinstance(content, Mapping) or not isinstance(content.get("columns"), Mapping):
        raise SynthDPError(f"{origin} must hold a JSON object {{\"columns\": {{column: {{\"type\": ...}}}}}}")
    unknown = [key for key in content if key not in SCHEMA_KEYS]
    if unknown:
        raise SynthDPError(f"{origin} has the entry '{unknown[0]}' (it takes {', '.join(SCHEMA_KEYS)})")
    for name, spec in content["columns"].items():
        if not isinstance(spec, Mapping):
            continue  # [lo, hi]: a continuous column's bounds, as in a bounds file
        column_type = spec.get("type", "continuous")
        if column_type not in COLUMN_TYPES + LEVEL_TYPES:
            raise SynthDPError(f"{origin}: column '{name}' has type '{column_type}'; expected one of "
                               f"{COLUMN_TYPES + LEVEL_TYPES}")
        check_keys(name, spec, LEVEL_KEYS if column_type in LEVEL_TYPES else NUMERIC_KEYS, origin)
        for key in ("nullable", "other"):
            if key in spec and not isinstance(spec[key], bool):  # 0 and 1 are not false and true here
                raise SynthDPError(f"{origin}: column '{name}' has \"{key}\": expected true or false")
        if column_type == "binary" and "other" in spec:
            raise SynthDPError(f"{origin}: binary column '{name}' has \"other\": a binary column has no 'other' "
                               "level (declare it categorical for one)")
        if given and column_type == "categorical" and isinstance(spec.get("levels"), list) and not spec["levels"]:
            raise SynthDPError(f"{origin}: categorical column '{name}' needs at least one level")
        if spec.get("other") is False and spec.get("levels") == DISCOVER:
            raise SynthDPError(f"{origin}: column '{name}' has \"other\": false and levels to discover: the values "
                               "discovery leaves out go to the 'other' level (give the levels, or leave out \"other\")")


def is_draft(content: Mapping | Schema | None) -> bool:
    """Whether a schema mapping still carries the ``"draft"`` entry of ``synthdp schema``: its
    bounds, levels and values were read from the data, so a release that uses it is NOT private."""
    return isinstance(content, Mapping) and DRAFT_KEY in content


def columns_to_discover(content: Mapping | Schema) -> list[str]:
    """The categorical columns of a schema mapping whose levels are to be discovered with DP."""
    columns = content.get("columns") if isinstance(content, Mapping) else None
    return [name for name, spec in (columns or {}).items()
            if isinstance(spec, Mapping) and spec.get("type") == "categorical" and spec.get("levels") == DISCOVER]


def columns_without_bounds(content: Mapping, numeric_names: Sequence[str]) -> list[str]:
    """The numeric columns of a schema mapping whose spec gives no ``"bounds"`` (nor ``"values"``, which
    imply them), in table order (``numeric_names``): their bounds are to be estimated with DP, or their
    absence is an error."""
    columns = content.get("columns")
    if not isinstance(columns, Mapping):
        return []
    return [name for name in numeric_names if isinstance(columns.get(name), Mapping)
            and columns[name].get("type", "continuous") not in LEVEL_TYPES
            and "bounds" not in columns[name] and "values" not in columns[name]]


def with_levels(content: Mapping, levels: Mapping[str, Sequence[str]]) -> dict:
    """A copy of a schema mapping with the given (discovered) levels filled in."""
    columns = {name: ({**spec, "levels": list(levels[name])} if name in levels else spec)
               for name, spec in content["columns"].items()}
    return {**content, "columns": columns}


def nullable_numeric_columns(content: Mapping | Schema | None) -> tuple[str, ...]:
    """The numeric columns a schema (or schema or bounds mapping) declares nullable."""
    if isinstance(content, Schema):
        return content.nullable_numeric
    columns = content.get("columns") if isinstance(content, Mapping) else None
    if not isinstance(columns, Mapping):
        return ()
    return tuple(name for name, spec in columns.items() if isinstance(spec, Mapping) and spec.get("nullable") is True
                 and spec.get("type", "continuous") not in LEVEL_TYPES)


def bounds_schema(bounds: Mapping) -> dict | None:
    """A bounds mapping that declares a nullable column, as the schema mapping it amounts to
    (missing cells are modelled with indicator columns, as in mixed tables); None otherwise.
    A ``"nullable"`` that is not true or false (1, "yes") is an error, not a column left non-nullable."""
    for name, spec in bounds.items():
        if isinstance(spec, Mapping) and "nullable" in spec and not isinstance(spec["nullable"], bool):
            raise SynthDPError(f"bounds: column '{name}' has \"nullable\": expected true or false")
    if not any(isinstance(spec, Mapping) and spec.get("nullable") is True for spec in bounds.values()):
        return None
    return {"columns": {name: ({"type": "continuous", **spec} if isinstance(spec, Mapping)
                               else {"type": "continuous", "bounds": spec}) for name, spec in bounds.items()}}


def schema_text_columns(content: Mapping | Schema) -> tuple[str, ...]:
    """The binary and categorical columns a schema (or schema mapping) declares: read as levels, not numbers."""
    if isinstance(content, Schema):
        return tuple(column.name for column in content.declared)
    columns = content.get("columns") if isinstance(content, Mapping) else None
    if not isinstance(columns, Mapping):
        return ()
    return tuple(name for name, spec in columns.items() if isinstance(spec, Mapping) and spec.get("type") in LEVEL_TYPES)


def declared_time_columns(bounds: Mapping[str, object] | Domain | None,
                          schema: Mapping | Schema | None) -> dict[str, str]:
    """The date and datetime columns the bounds or the schema declare (public metadata): the
    reader turns their ISO values into days or seconds since 1970-01-01."""
    if isinstance(schema, Schema):
        return time_columns(schema.numeric)
    if schema is not None:
        return time_columns(schema.get("columns") if isinstance(schema, Mapping) else None)
    return time_columns(bounds)
