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

import numpy as np
import pandas as pd

from .domain import ColumnDomain, Domain
from .errors import SynthDPError


FROM_DATA = "data (NOT differentially private)"


class PrivateTable:
    """A validated numeric table of n rows and d columns.

    Parameters
    ----------
    frame : pandas.DataFrame
        The sensitive data, one row per individual (the privacy unit).
    """

    def __init__(self, frame: pd.DataFrame) -> None:
        self.column_names, self._values = check_numeric_frame(frame)

    @classmethod
    def read_csv(cls, path: str | Path) -> "PrivateTable":
        """Read a CSV file with a header row."""
        return cls(read_csv_frame(path))

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


def check_numeric_frame(frame: pd.DataFrame) -> tuple[list[str], np.ndarray]:
    """Validate a table of numeric columns; return its column names and a float copy of its values.

    Needs at least one named column (unique names, no control characters), at least 2 rows,
    and finite numeric values. Errors name the column at fault, never a value.
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
    for name, column in zip(names, frame.columns):
        series = frame[column]
        if not (pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)):
            raise SynthDPError(f"column '{name}' is not numeric")
    values = frame.to_numpy(dtype=float, copy=True)
    finite = np.isfinite(values).all(axis=0)
    if not finite.all():
        raise SynthDPError(f"column '{names[int(np.argmin(finite))]}' has missing or infinite values")
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
