"""Numbers as every engine reads them: a Parquet DECIMAL column, CSV integers past 64 bits, and the
one error for a column that holds no numbers.

A column must give the same values whichever engine reads it (in memory, streamed in chunks, or
Dask's partitions) and however it is cut into chunks; pandas and Arrow type some columns by the
values they happen to see (a chunk's integers past 2^63 as text, a DECIMAL column as Python
Decimals or Arrow decimals). The functions here read such columns as the float64 nearest to each
value as written, in every engine (:mod:`synthdp.reader.table` calls them).
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from synthdp.config import CsvFormat
from synthdp.errors import SynthDPError

# pandas before 3 parses floats with a converter that is not correctly rounded (on CTG, 4 766 of
# 42 520 values one ulp off, some of them moved across a histogram edge and so changed a release):
# its round-trip converter is; pandas 3's default one is.
EXACT_FLOATS = {"float_precision": "round_trip"} if int(pd.__version__.split(".")[0]) < 3 else {}


def not_numeric(name: str, boolean: bool = False) -> SynthDPError:
    """The error for a column read as numbers that holds something else (``boolean``: true/false
    values), and what to declare instead: the same words whichever engine or check finds it."""
    kind = "true/false values" if boolean else "text, dates or integers past 64 bits"
    return SynthDPError(f"column '{name}' is not numeric (it holds {kind}: a date or time column needs \"type\": "
                        "\"date\" or \"datetime\" in the bounds or schema file; a text or true/false column needs a "
                        "schema, with an entry for it of type binary or categorical)")


def arrow_decimals(frame: pd.DataFrame, text_columns: Collection[str]) -> pd.DataFrame:
    """``frame`` with its numeric columns of Python Decimals as Arrow decimals, for Dask, which would
    make them text (:func:`decimal_floats` reads either alike); a column Arrow cannot hold (a Decimal
    NaN) is left as it is, and refused as the in-memory table refuses its NaN."""
    import pyarrow as pa

    converted = {}
    for column in frame.columns:
        series = frame[column]
        if str(column) not in text_columns and series.dtype == object and holds_decimals(series):
            try:
                converted[column] = pd.Series(pd.arrays.ArrowExtensionArray(pa.array(series, from_pandas=True)),
                                              index=series.index)
            except pa.ArrowException:
                continue
    return with_columns(frame, converted)


def with_columns(frame: pd.DataFrame, replaced: Mapping) -> pd.DataFrame:
    """``frame`` with the columns of ``replaced`` (label to values) replaced, on a shallow copy (the
    caller's frame is left as it is); ``frame`` itself where there are none."""
    if not replaced:
        return frame
    frame = frame.copy(deep=False)
    for column, values in replaced.items():
        frame[column] = values
    return frame


def holds_decimals(series: pd.Series) -> bool:
    """Whether a column holds decimal numbers: Arrow decimals (a Parquet DECIMAL column as Dask, or
    ``dtype_backend="pyarrow"``, reads it), or Python Decimals (as pandas reads it by default)."""
    if isinstance(series.dtype, pd.ArrowDtype):
        import pyarrow as pa

        return pa.types.is_decimal(series.dtype.pyarrow_dtype)
    return series.dtype == object and pd.api.types.infer_dtype(series, skipna=True) == "decimal"


def _missing(value) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))


def decimal_floats(values) -> np.ndarray:
    """The float64 nearest to each decimal number of ``values`` (an Arrow decimal array, or a pandas
    Series of Arrow decimals or of Python Decimals), NaN where missing: the same conversion in every
    engine (a Parquet DECIMAL column is read as Arrow decimals by the streamed engine and by Dask, as
    Python Decimals by pandas). Through the exact text of each value, which Arrow parses correctly
    rounded; Arrow's own cast of a decimal to a float is not (an ulp off for some values), and
    ``float(Decimal)`` is correctly rounded too, so the result is that of ``float(value)``."""
    python = isinstance(values, pd.Series) and not isinstance(values.dtype, pd.ArrowDtype)
    try:
        import pyarrow as pa
        import pyarrow.compute as pc
    except ImportError:  # the scale extra's: Python Decimals (a DataFrame from a database) need no pyarrow
        if not python:
            raise
        return np.array([np.nan if _missing(value) else float(value) for value in values], dtype=float)
    if python:
        text = pa.array([None if _missing(value) else str(value) for value in values], type=pa.string())
    else:
        text = pc.cast(pa.array(values) if isinstance(values, pd.Series) else values, pa.string())
    floats = pc.cast(text, pa.float64())
    return np.asarray(floats.to_numpy(zero_copy_only=False), dtype=float)


@dataclass(frozen=True)
class CsvNumbers:
    """A CSV chunk with its numeric columns (all but ``as_text``) that pandas left as text read as
    numbers, where they hold numbers only; called on a chunk, or as Dask's reader of a block.

    pandas reads an integer past 64 bits (or one past 2^63 beside a negative number, a missing cell
    or a fraction in the same chunk) as text, or as Python ints: whether such a column was numbers
    depended on the chunk (the one at 2^63 beside a -1 in one chunk but not in another), and Dask,
    which types a column from the file's first rows, refused a later block of it. Such a column's
    cells are read again by pandas' own float64 parser, with the file's options, so every engine
    reads the nearest float64 to each number as written, as a column of floats is read. A column
    with a cell that is no number stays text: :func:`chunk_values` refuses it, naming the column.
    """

    csv_format: CsvFormat
    as_text: Collection[str]
    __name__ = "read_csv"  # Dask's reader: the name its messages give

    def __call__(self, *args, **kwargs) -> pd.DataFrame:
        """``pandas.read_csv(*args, **kwargs)`` with its numbers read as numbers: Dask's reader of a block."""
        return self.chunk(pd.read_csv(*args, **kwargs))

    def chunk(self, frame: pd.DataFrame) -> pd.DataFrame:
        """A chunk that pandas read, with its numbers read as numbers."""
        floats = {}
        for column in frame.columns:
            series = frame[column]
            if column not in self.as_text and len(series) and not (
                    pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series)):
                parsed = _csv_floats(series, self.csv_format)
                if parsed is not None:
                    floats[column] = parsed
        return with_columns(frame, floats)


def _csv_floats(series: pd.Series, csv_format: CsvFormat) -> np.ndarray | None:
    """The cells of a CSV column that pandas read as text (or Python ints) through its float64 parser
    (a missing cell as NaN); None when one is no number."""
    cells = "\n".join("" if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))
                      else str(value) for value in series.to_numpy(dtype=object))
    # a thousands separator that is the field separator stands in quoted cells of numbers ("1,234.5"):
    # the cells are parsed with another separator, which no number holds
    sep = "\x1f" if csv_format.thousands == csv_format.sep else csv_format.sep
    if any(mark in cells for mark in (sep, '"', "\r")) or cells.count("\n") != len(series) - 1:
        return None  # a quoted cell (a separator, a quote or a line break in it) is no number
    try:  # a first line "0" so that a column of empty cells is not an empty file
        parsed = pd.read_csv(io.StringIO(f"0\n{cells}\n"), header=None, sep=sep, decimal=csv_format.decimal,
                             thousands=csv_format.thousands, dtype=np.float64, skip_blank_lines=False,
                             quoting=csv.QUOTE_NONE, **EXACT_FLOATS)
    except (ValueError, pd.errors.ParserError):
        return None
    if parsed.shape != (len(series) + 1, 1):
        return None
    return parsed.iloc[1:, 0].to_numpy(dtype=float)
