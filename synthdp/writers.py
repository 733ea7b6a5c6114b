"""Synthetic tables written to files: CSV (pyarrow's writer where it is installed) or Parquet, by
the output's suffix (.parquet or .pq, as inputs are read), whole or chunk by chunk.

The command line writes each into a temporary file and renames it into place
(:func:`synthdp.cli._write_outputs`). Nothing here reads private data: the frames are synthetic
rows. pandas and pyarrow are imported where used, so that ``synthdp --help`` loads neither.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from synthdp.errors import SynthDPError

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd


def write_csv(frame: pd.DataFrame, path: Path) -> None:
    """Write ``frame`` as CSV: with pyarrow's writer when it is installed (8-13 times faster than
    pandas' ``to_csv`` on the benchmark tables), else with pandas'.

    Either way the header is written as pandas writes it, every float is written in its shortest
    form that reads back to the same float, text values are quoted where needed (pyarrow
    quotes every text value), and missing cells are empty: ``pandas.read_csv`` reads back the
    same table, with the same column types (a test checks it on numeric, mixed, nullable and
    date columns). A float column whose values are all whole numbers is written by pandas,
    which keeps their ".0". A column that declares k decimals (:data:`synthdp.domain.decode.DECIMALS`)
    is written with exactly k, as the input was (``43.0``; its values are already rounded to k).
    """
    with open(path, "wb") as handle:
        write_csv_rows(frame, handle, header=True)


def write_csv_rows(frame: pd.DataFrame, handle, header: bool) -> None:
    """Append ``frame``'s rows (and, with ``header``, its header) to an open binary file, as
    :func:`write_csv` writes them; chunk by chunk, a whole-number float column of one chunk is
    written by pandas (its ".0" kept), the others by pyarrow where installed."""
    import numpy as np

    from synthdp.domain.decode import DECIMALS

    try:
        import pyarrow as pa
        import pyarrow.csv as pa_csv
    except ImportError:
        pa = None
    decimals = {name: k for name, k in frame.attrs.get(DECIMALS, {}).items()
                if name in frame.columns and frame[name].dtype.kind == "f"}
    whole = [bool(np.all(np.mod(values[~np.isnan(values)], 1) == 0))
             for values in (frame[name].to_numpy(dtype=float) for name in frame.select_dtypes(include="float")
                            if name not in decimals)]
    # one column with a missing cell: pyarrow writes that row as a blank line, which CSV readers skip,
    # where pandas writes "" (an empty field, read back as missing)
    lone_missing = frame.shape[1] == 1 and bool(frame.iloc[:, 0].isna().any())
    if pa is None or any(whole) or lone_missing:
        if decimals:  # k decimals as text ("-0.0" written "0.0"); missing cells stay empty
            frame = frame.assign(**{name: [None if value != value else f"{value + 0.0:.{k}f}"
                                           for value in frame[name].tolist()] for name, k in decimals.items()})
        handle.write(frame.to_csv(index=False, header=header).encode("utf-8"))
        return
    if header:
        line = io.StringIO()
        csv.writer(line, lineterminator="\n").writerow([str(name) for name in frame.columns])
        handle.write(line.getvalue().encode("utf-8"))
    table = pa.Table.from_pandas(frame, preserve_index=False)
    for name, k in decimals.items():  # a decimal type of scale k writes exactly k decimals, unquoted
        position = table.column_names.index(name)
        table = table.set_column(position, name, table[name].cast(pa.decimal128(38, k), safe=False))
    pa_csv.write_csv(table, handle, pa_csv.WriteOptions(include_header=False))


def is_parquet(path: str | Path) -> bool:
    from synthdp.reader.table import PARQUET_SUFFIXES

    return Path(path).suffix.lower() in PARQUET_SUFFIXES


def check_table_output(path: str | Path) -> bool:
    """Whether a synthetic table goes to ``path`` as Parquet (by its suffix, .parquet or .pq, as
    inputs are read) rather than CSV; an error, before anything is read or spent, where Parquet is
    asked for and pyarrow, its writer, is not installed."""
    if not is_parquet(path):
        return False
    try:
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        raise SynthDPError(f"'{path}' asks for a Parquet file, which needs pyarrow (pip install pyarrow, or "
                           "\"synthdp[scale]\"): install it, or give the output a .csv name") from None
    return True


def table_writer(frame: pd.DataFrame, final: str | Path) -> Callable[[Path], object]:
    """Write ``frame`` to a (temporary) path as the table ``final`` names: Parquet where its suffix
    is .parquet or .pq (:func:`write_parquet`), else CSV (:func:`write_csv`)."""
    return (lambda path: write_parquet(frame, path)) if is_parquet(final) else (lambda path: write_csv(frame, path))


def write_parquet(frame: pd.DataFrame, path: Path) -> None:
    """Write ``frame`` as a Parquet file (pyarrow), without an index: ``pandas.read_parquet`` reads
    back the same table, with its column types (levels as text, as the CSV writes them). A date or
    datetime column the release wrote as ISO text (:data:`synthdp.domain.decode.TEMPORAL`) is stored
    as a Parquet timestamp (``timestamp[us]``; a date at midnight), which pandas reads back as
    ``datetime64[us]``, as a fit on a DataFrame samples it."""
    appender = ParquetAppender(path)
    try:
        appender.write(frame)
    finally:
        appender.close()


def text_levels(model) -> dict[str, dict]:
    """The columns of numeric levels that a model's rows may give as text (some support point of
    positive weight takes the "other" level, which is no number), each with its numbers' text levels:
    a chunk of a streamed Parquet output writes them as text even where it drew no "other" row, since
    every chunk takes the first one's column types (a chunk of numbers and one with "other" would
    not fit one type)."""
    import pandas as pd

    schema = model.schema
    coded = [] if schema is None else [column for column in schema.categorical if column.numbers is not None
                                       and column.values_of is None and column.indicator_of is None]
    if not coded:
        return {}
    support = model.decode(model.points[model.weights > 0])
    return {column.name: dict(zip(column.numbers, column.all_levels)) for column in coded
            if not pd.api.types.is_numeric_dtype(support[column.name])}


class ParquetAppender:
    """A Parquet file written chunk by chunk (``synthdp sample``'s streamed rows), each chunk a row
    group, every chunk in the first one's column types (a chunk whose nullable column happens to
    hold no missing cell keeps the same type). ``text_levels`` (:func:`text_levels`): the columns
    of numeric levels written as text in every chunk, each with its numbers' text. A date or
    datetime column given as ISO text (:data:`synthdp.domain.decode.TEMPORAL`) is stored as a
    Parquet timestamp (:func:`write_parquet`)."""

    def __init__(self, path: Path, text_levels: dict[str, dict] | None = None) -> None:
        self.path: Path = path
        self.writer: Any = None  # pyarrow.parquet.ParquetWriter, from the first chunk's types
        self.schema: Any = None
        self.text_levels = text_levels or {}

    def write(self, frame: pd.DataFrame) -> None:
        import pandas as pd
        import pyarrow as pa
        import pyarrow.parquet as pq

        from synthdp.domain.decode import TEMPORAL
        from synthdp.domain.schema import TEXT_DTYPE

        dates = [name for name in frame.attrs.get(TEMPORAL, {})
                 if name in frame.columns and not pd.api.types.is_datetime64_dtype(frame[name])]
        if dates:  # ISO text (NaT where missing) as datetime64[us], as a DataFrame's fit samples them
            frame = frame.assign(**{name: pd.Series(_iso_seconds(frame[name]).astype("datetime64[us]"),
                                                    index=frame.index) for name in dates})
        numbers = [name for name in self.text_levels if pd.api.types.is_numeric_dtype(frame[name])]
        if numbers:  # a chunk that drew no "other" row: its numbers as their levels' text
            frame = frame.assign(**{name: pd.Series(frame[name].map(self.text_levels[name]), dtype=TEXT_DTYPE)
                                    for name in numbers})
        table = pa.Table.from_pandas(frame, schema=self.schema, preserve_index=False)
        if self.writer is None:
            self.schema = table.schema
            self.writer = pq.ParquetWriter(self.path, self.schema)
        self.writer.write_table(table)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


def _iso_seconds(column: pd.Series) -> np.ndarray:
    """``column``'s ISO text (missing cells NaT) as datetime64[s]: parsed by Arrow's cast (about 15 times
    as fast as numpy's parsing, the whole cost of a date column in a 10^7-row Parquet output), else,
    where Arrow refuses a text (a fraction of a second, a time zone) or the column is not text, by numpy
    as before; where both parse a text they give the same moment."""
    import numpy as np
    import pyarrow as pa

    try:
        text = pa.array(column, from_pandas=True)
        if pa.types.is_string(text.type) or pa.types.is_large_string(text.type):
            return np.asarray(text.cast(pa.timestamp("s")).to_numpy(zero_copy_only=False), dtype="datetime64[s]")
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        pass
    return np.asarray(column.fillna("NaT").to_numpy(dtype=str), dtype="datetime64[s]")
