"""Date and datetime columns of the private table: ISO text (or datetime64) to numbers.

A date becomes days since 1970-01-01, a datetime seconds since 1970-01-01T00:00:00
(:mod:`synthdp.domain.dates`); missing cells stay missing (NaN), for the checks of
:func:`synthdp.reader.table.chunk_values`. These are private values: errors name the column,
never a value or a row.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from synthdp.domain.dates import EXAMPLES, SECONDS_PER_DAY, iso_times
from synthdp.errors import SynthDPError

MICROSECONDS = 10**6
# A time-zone designator after a time: "Z", or an offset "+02", "+0200", "+02:00", "-05:00".
TIME_ZONE = r"(?:\d[zZ]|[T ]\d{2}(?::?\d{2}){0,2}(?:[.,]\d+)?\s*[+-]\d{2}(?::?\d{2})?)\s*$"
# The digits of a fraction of a second past its microseconds ("07.123456789": 789), cut before parsing.
PAST_MICROSECONDS = r"(\d[.,]\d{6})\d+$"


def with_time_values(frame: pd.DataFrame, names: list[str], time_columns: Mapping[str, str]) -> pd.DataFrame:
    """A copy of one chunk whose date and datetime columns (``time_columns``: name -> kind) hold numbers."""
    if not any(name in time_columns for name in names):
        return frame
    converted = frame.copy(deep=False)
    for name, column in zip(names, frame.columns):
        if name in time_columns:
            converted[column] = time_values(frame[column], name, time_columns[name])
    return converted


def time_values(series: pd.Series, name: str, kind: str) -> np.ndarray:
    """Days (date) or seconds (datetime) since 1970-01-01 of a column's values, float, NaN where missing.

    Values are ISO 8601 text (``2021-03-04``, ``2021-03-04T05:06:07``), or datetime64 in a
    DataFrame; a date column keeps the date of a value with a time of day. A value with a
    time-zone offset, a value that is not an ISO date or time, and numbers are errors.
    """
    example = EXAMPLES[kind]
    offset_error = SynthDPError(f"column '{name}' has a value with a time-zone offset: {kind} columns hold "
                                "naive times (no offset, no Z); convert them to one local time first")
    if isinstance(series.dtype, pd.DatetimeTZDtype):
        raise offset_error
    if pd.api.types.is_datetime64_dtype(series):
        parsed = series
    elif series.isna().all():  # e.g. a chunk of empty cells, read as floats
        return np.full(len(series), np.nan)
    elif pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series):
        raise SynthDPError(f"column '{name}' is a {kind} column but holds numbers: write its values as ISO "
                           f"{kind}s like {example}")
    else:
        text = series.astype("string").str.strip()
        if text.str.contains(TIME_ZONE, regex=True, na=False).any():
            raise offset_error
        try:
            parsed = iso_times(microsecond_text(text))
        except (ValueError, TypeError, OverflowError):  # e.g. mixed offsets; the message may quote values
            raise SynthDPError(f"column '{name}' has a value that is not an ISO {kind} like {example}") from None
        if isinstance(parsed.dtype, pd.DatetimeTZDtype):
            raise offset_error
        if (parsed.isna() & text.notna()).any():
            raise SynthDPError(f"column '{name}' has a value that is not an ISO {kind} like {example}")
    missing = parsed.isna().to_numpy()  # (datetime64[ns] values are floored to microseconds, as cut text is)
    micro = parsed.to_numpy(dtype="datetime64[us]").astype(np.int64)
    values = (micro // (SECONDS_PER_DAY * MICROSECONDS)).astype(float) if kind == "date" else micro / MICROSECONDS
    values[missing] = np.nan
    return values


def microsecond_text(text: pd.Series) -> pd.Series:
    """ISO text with every fraction of a second cut to microseconds (its digits past the sixth dropped).

    pandas parses a batch of text at the finest resolution any value of it needs: a value with
    nanoseconds makes it datetime64[ns], whose range ends in 2262, so a value of a later year in
    the same batch would fail while it parses in a batch of its own. Cut to microseconds (the
    resolution of the numbers read, :func:`time_values`), every batch parses at most at
    datetime64[us] (years 1 to 9999), and each value gives the same number whichever chunk holds
    it. Cutting the digits floors the time, as the cast of a datetime64[ns] value to microseconds does.
    """
    return text.str.replace(PAST_MICROSECONDS, r"\1", regex=True)
