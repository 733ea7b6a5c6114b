"""The private table: the only module that reads raw rows.

Everything here handles private values, so nothing here prints, logs or raises with a value
in it. The release mechanisms (:mod:`synthdp.release`) are its only users; the stages after
the release (candidates, LP fit, sampling, decoding, summaries) never import it.

Validation errors (missing values, text in a numeric column, too few rows) necessarily
depend on the data; they reveal only a property of the file the user passed, and they
stop the run before anything is released.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Collection

import numpy as np
import pandas as pd

from .domain import ColumnDomain, Domain
from .errors import SynthDPError
from .schema import Schema


FROM_DATA = "data (NOT differentially private)"


class PrivateTable:
    """A validated table of n rows: d numeric columns, and text columns when a schema names them.

    Parameters
    ----------
    frame : pandas.DataFrame
        The sensitive data, one row per individual (the privacy unit).
    text_columns : collection of str
        Binary and categorical columns (from a public schema): kept as values, not checked
        as numbers. All the other columns must be numeric.
    """

    def __init__(self, frame: pd.DataFrame, text_columns: Collection[str] = ()) -> None:
        self.all_names, self._values = check_numeric_frame(frame, text_columns)
        self.column_names = [name for name in self.all_names if name not in text_columns]
        self._text = {str(column): frame[column].reset_index(drop=True) for column in frame.columns
                      if str(column) in text_columns}

    @classmethod
    def read_csv(cls, path: str | Path, text_columns: Collection[str] = ()) -> "PrivateTable":
        """Read a CSV file with a header row."""
        return cls(read_csv_frame(path), text_columns)

    @property
    def n_rows(self) -> int:
        return self._values.shape[0]

    @property
    def d(self) -> int:
        return self._values.shape[1]

    def domain_from_data(self) -> Domain:
        """Bounds and integer types read from the data: NOT differentially private."""
        lower, upper = self._values.min(axis=0), self._values.max(axis=0)
        integer = np.all(self._values == np.round(self._values), axis=0)
        columns = []
        for j, name in enumerate(self.column_names):
            if lower[j] == upper[j]:
                raise SynthDPError(f"column '{name}' is constant: it has no range to read bounds from")
            columns.append(ColumnDomain(name, float(lower[j]), float(upper[j]), bool(integer[j]), source=FROM_DATA))
        return Domain(tuple(columns), source=FROM_DATA)

    def column(self, name: str) -> np.ndarray:
        """One column's raw values, shape (n,). Private: for the bounds mechanism only."""
        return self._values[:, self.column_names.index(name)]

    def unit_points(self, domain: Domain) -> tuple[np.ndarray, int]:
        """Rows clipped into the domain and mapped onto [-1, 1]^d.

        Returns
        -------
        points : array, shape (n, d)
            Private: for the release mechanisms only.
        rows_clipped : int
            Private count of rows with at least one clipped value; only a noisy version
            of it may leave the release stage.
        """
        if domain.names != self.column_names:
            raise SynthDPError("the domain's columns do not match the table's")
        inside = (self._values >= domain.lower) & (self._values <= domain.upper)
        rows_clipped = int(np.count_nonzero(~inside.all(axis=1)))
        clipped = np.clip(self._values, domain.lower, domain.upper)
        return domain.to_unit(clipped), rows_clipped

    def level_counts(self, name: str) -> dict[str, int]:
        """How many rows hold each value of a text column (as text; missing values left out).

        Private: for the level-discovery mechanism only (:func:`synthdp.release.release_levels`).
        """
        return self._text[name].dropna().astype(str).value_counts(sort=False).to_dict()

    def encoded_points(self, schema: Schema) -> tuple[np.ndarray, int, int]:
        """Rows encoded as the schema says: numeric coordinates in [-1, 1], then indicator blocks.

        Returns
        -------
        points : array, shape (n, D)
            Private: for the release mechanisms only.
        rows_clipped : int
            Private count of rows with a numeric value outside its bounds.
        rows_other : int
            Private count of rows with a categorical value outside its levels (or missing).
        """
        if list(schema.names) != self.all_names:
            raise SynthDPError("the schema's columns do not match the table's")
        numeric, rows_clipped = self.unit_points(schema.numeric)
        blocks, other = [numeric], np.zeros(self.n_rows, dtype=bool)
        for column in schema.categorical:
            coordinates = column.level_codes(self._text[column.name]) - column.binary
            block = np.zeros((self.n_rows, column.width))
            coded = coordinates >= 0
            block[np.flatnonzero(coded), coordinates[coded]] = 1.0
            blocks.append(block)
            if not column.binary:
                other |= coordinates == column.width - 1
        return np.concatenate(blocks, axis=1), rows_clipped, int(np.count_nonzero(other))


def check_numeric_frame(frame: pd.DataFrame, text_columns: Collection[str] = ()) -> tuple[list[str], np.ndarray]:
    """Validate a table of numeric columns; return its column names and a float copy of its values.

    Needs at least one named column (unique names, no control characters), at least 2 rows,
    and finite numeric values. Errors name the column at fault, never a value. Columns in
    ``text_columns`` are checked for their names only, and left out of the values, shape
    (n, number of other columns).
    """
    names = [str(c) for c in frame.columns]
    if not names:
        raise SynthDPError("the input has no columns")
    for position, name in enumerate(names, start=1):
        if name.strip() == "":
            raise SynthDPError(f"column {position} has an empty name")
        if any(ord(ch) < 32 or ord(ch) == 127 for ch in name):
            raise SynthDPError(f"the name of column {position} contains a control character (e.g. a newline)")
    duplicated = sorted({n for n in names if names.count(n) > 1})
    if duplicated:
        raise SynthDPError(f"column name '{duplicated[0]}' appears more than once")
    if len(frame) == 0:
        raise SynthDPError("the input has no data rows")
    if len(frame) < 2:
        raise SynthDPError("the input needs at least 2 rows")
    numeric = [column for name, column in zip(names, frame.columns) if name not in text_columns]
    for column in numeric:
        name, series = str(column), frame[column]
        if not (pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)):
            raise SynthDPError(f"column '{name}' is not numeric")
    values = frame[numeric].to_numpy(dtype=float, copy=True)
    finite = np.isfinite(values).all(axis=0)
    if not finite.all():
        raise SynthDPError(f"column '{numeric[int(np.argmin(finite))]}' has missing or infinite values")
    return names, values


def read_csv_frame(path: str | Path, label: str = "input file") -> pd.DataFrame:
    """Read a CSV file with a header row, as pandas does; errors name the file (as ``label``), not its content.

    Only the file is checked here (it exists, is UTF-8, is a CSV, has no duplicated column
    names); :func:`check_numeric_frame` checks the table.
    """
    path = Path(path)
    if not path.is_file():
        raise SynthDPError(f"{label} '{path}' does not exist")
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            header = next(csv.reader(handle), None)
        if not header or not any(name.strip() for name in header):
            raise SynthDPError(f"{label} '{path}' is empty")
        if len(set(header)) != len(header):
            duplicated = next(n for n in header if header.count(n) > 1)
            raise SynthDPError(f"column name '{duplicated}' appears more than once")
        return pd.read_csv(path, encoding="utf-8")
    except UnicodeDecodeError:  # its message quotes the offending bytes: never show it
        raise SynthDPError(f"{label} '{path}' is not UTF-8 text") from None
    except pd.errors.EmptyDataError:
        raise SynthDPError(f"{label} '{path}' is empty") from None
    except (pd.errors.ParserError, csv.Error):
        raise SynthDPError(f"{label} '{path}' is not a well-formed CSV file") from None
