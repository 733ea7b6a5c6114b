"""Date and datetime columns: public ISO bounds and the numbers the mechanism works on.

A ``"date"`` column is modelled as the number of days since 1970-01-01 (integer-valued, so
decoded values are whole days); a ``"datetime"`` column as the number of seconds since
1970-01-01T00:00:00 (continuous; decoded values are rounded to whole seconds). Times are
naive: a bound (or a value, :mod:`synthdp.reader.dates`) with a time-zone offset is an error.

This module holds the public side: parsing bounds and formatting numbers as ISO text. Errors
name the column, never the value.
"""

from __future__ import annotations

import datetime as dt

import numpy as np

from synthdp.errors import SynthDPError

TIME_TYPES = ("date", "datetime")
EPOCH = dt.datetime(1970, 1, 1)
SECONDS_PER_DAY = 86_400
EXAMPLES = {"date": "2021-03-04", "datetime": "2021-03-04T05:06:07"}
#: Patterns of the ISO text that schema drafting and evaluation's type inference read as a date or a datetime.
ISO_DATE = r"\d{4}-\d{2}-\d{2}"
ISO_DATETIME = r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?"


def iso_text_times(text):
    """("date", values) or ("datetime", values) when every value of ``text`` (a pandas Series of
    strings) is ISO text of that kind (:data:`ISO_DATE`, :data:`ISO_DATETIME`: no time zone) and a
    real calendar time (not 2021-02-30); else None. Dates beside date-times (a writer that leaves
    out a midnight's time) are datetimes, as a date column would drop the times of the others.
    ``values`` are the parsed times. For schema drafting and evaluation's type inference, which
    read the data (not private)."""
    dates = text.str.fullmatch(ISO_DATE)
    if dates.all():
        kind = "date"
    elif (dates | text.str.fullmatch(ISO_DATETIME)).all():
        kind = "datetime"
    else:
        return None
    values = iso_times(text)
    return None if values.isna().any() else (kind, values)


def iso_times(text):
    """``pd.to_datetime(text, format="ISO8601", errors="coerce")`` of a pandas Series of ISO text,
    with the years pandas 2 cannot hold.

    pandas 3 parses text at the resolution it needs (years 1 to 9999); pandas 2, which the
    dependencies admit (and the ``quality`` extra's SDMetrics needs), parses it as datetime64[ns],
    whose range is 1677-09-21 to 2262-04-11, and makes a time outside it NaT, so that a date of
    2300 read as "not an ISO date". Such values, where they are plain ISO dates or times
    (:data:`ISO_DATE`, :data:`ISO_DATETIME`: no time zone), are parsed again by numpy, at
    microseconds (digits past them dropped), and the result is datetime64[us]."""
    import pandas as pd  # on use: the CLI imports this module at start-up

    parsed = pd.to_datetime(text, format="ISO8601", errors="coerce")
    if isinstance(parsed.dtype, pd.DatetimeTZDtype) or not parsed.isna().any():
        return parsed
    unread = np.flatnonzero(parsed.isna().to_numpy())  # (missing cells among them: a nullable column's)
    text = text.iloc[unread].astype("string")  # (a column of missing cells may be float)
    plain = (text.str.fullmatch(ISO_DATE) | text.str.fullmatch(ISO_DATETIME)).fillna(False).to_numpy(dtype=bool)
    if not plain.any():
        return parsed
    again, text = unread[plain], text[plain]
    values = parsed.to_numpy(dtype="datetime64[us]").copy()  # (pandas 3 may give a read-only view)
    try:
        values[again] = np.array(text.tolist(), dtype="datetime64[us]")
    except ValueError:  # one is not a calendar time (2021-02-30): it stays NaT, the others are read
        for i, value in zip(again, text.tolist()):
            try:
                values[i] = np.datetime64(value, "us")
            except ValueError:
                pass
    return pd.Series(values, index=parsed.index, name=parsed.name)


def parse_bound(name: str, kind: str, value: object) -> float:
    """One ISO bound of a ``kind`` column as days (date) or seconds (datetime) since 1970-01-01.

    Accepts ISO text, or a ``datetime.date`` / ``datetime.datetime`` (naive) from Python.
    """
    if isinstance(value, str):
        try:
            value = dt.date.fromisoformat(value.strip()) if kind == "date" else dt.datetime.fromisoformat(value.strip())
        except ValueError:
            raise SynthDPError(f"bounds for {kind} column '{name}' must be ISO {kind}s like "
                               f"\"{EXAMPLES[kind]}\"") from None
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            raise SynthDPError(f"bounds for {kind} column '{name}' have a time-zone offset: "
                               "give naive times (no offset, no Z)")
        if kind == "date" and value.time() != dt.time():
            raise SynthDPError(f"bounds for date column '{name}' must be whole days like \"{EXAMPLES['date']}\"")
        value = value if kind == "datetime" else value.date()
    elif isinstance(value, dt.date):
        value = value if kind == "date" else dt.datetime.combine(value, dt.time())
    else:
        raise SynthDPError(f"bounds for {kind} column '{name}' must be ISO {kind}s like \"{EXAMPLES[kind]}\"")
    if isinstance(value, dt.datetime):
        return (value - EPOCH).total_seconds()
    return float((value - EPOCH.date()).days)


def format_bound(value: float, kind: str) -> str:
    """The ISO text of a bound (days or seconds since 1970-01-01): the inverse of :func:`parse_bound`."""
    if kind == "date":
        return (EPOCH.date() + dt.timedelta(days=round(value))).isoformat()
    moment = EPOCH + dt.timedelta(microseconds=round(value * 1e6))
    return moment.isoformat(timespec="seconds" if moment.microsecond == 0 else "microseconds")


def format_values(values: np.ndarray, kind: str) -> np.ndarray:
    """ISO text of whole days (date) or whole seconds (datetime) since 1970-01-01, shape (m,)."""
    dtype = np.dtype("datetime64[D]" if kind == "date" else "datetime64[s]")
    moments: np.ndarray = np.asarray(values, dtype=np.int64).astype(dtype)
    return np.datetime_as_string(moments, unit="D" if kind == "date" else "s")
