"""The column types of a real table, inferred from its values: ``synthdp evaluate`` without a schema.

``synthdp evaluate`` compares a synthetic table with the real one column by column, and needs
to know which columns are numbers and which are levels. Given neither ``--bounds`` nor
``--schema``, it infers them from the REAL table, the way SDMetrics' (SDV's) metadata detection
does (``SingleTableMetadata.detect_from_dataframe``), and says so:

* a column with exactly 2 distinct values is ``binary`` (0/1 codes, "yes"/"no", booleans);
* a numeric column of whole, non-negative values with at most min(round(n / 10), 10) distinct
  values (n rows; tables of more than 5 rows) is ``categorical``, its values the levels: codes
  such as a chest-pain type 1-4 or a number of vessels 0-3 (SDV's rule for numbers);
* any other numeric column is ``integer`` (every value whole) or ``continuous``, its bounds the
  real table's min and max (a constant column's value +- 1), as evaluate's smooth queries take
  them without bounds;
* a text column whose every value is an ISO date is a ``date`` column, one of ISO date-times (dates
  among them or not) a ``datetime`` column, bounded by its first and last value; datetime64
  columns of a DataFrame likewise;
* any other text column is ``categorical`` (``binary`` with 2 values), its levels the values
  seen, sorted; above :data:`MAX_INFERRED_LEVELS` distinct values (an identifier, free text) the
  most frequent :data:`MAX_INFERRED_LEVELS` are kept and the others count as "other", so the
  pair tables stay small;
* a column with missing cells is ``"nullable": true``.

Levels of numeric columns are numbers, which match values by number (so a real "1.0" and a
synthetic "1" are the same level, :class:`synthdp.domain.schema.CategoricalColumn`).

The result is a schema mapping, ``{"columns": {...}}`` (plus ``"other_label"`` when a level is
called "other"), which :class:`synthdp.domain.schema.Schema` and
:func:`synthdp.evaluation.metrics.utility_report` accept. Like the rest of
:mod:`synthdp.evaluation`, this reads the real table: it is for the data owner, and its result is
not private (never use it as the schema of a release: ``synthdp schema`` drafts one, marked as such).
It never imports :mod:`synthdp.reader`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd

from synthdp.domain.box import MAX_EXACT_INTEGER
from synthdp.domain.dates import SECONDS_PER_DAY, format_bound, iso_text_times
from synthdp.domain.schema import (
    DEFAULT_OTHER_LABEL,
    LEVEL_TYPES,
    MAX_CODE_LEVELS,
    MIN_ROWS_FOR_CODES,
    looks_like_codes,
)
from synthdp.errors import SynthDPError

__all__ = ["MAX_CODE_LEVELS", "MAX_INFERRED_LEVELS", "MIN_ROWS_FOR_CODES", "infer_schema", "inference_note",
           "needs_schema"]

#: A text column keeps at most this many levels (the most frequent); its other values are "other".
MAX_INFERRED_LEVELS = 50


def infer_schema(real: pd.DataFrame) -> dict:
    """A schema mapping of ``real`` with each column's type inferred from its values (see the module).

    Parameters
    ----------
    real : DataFrame
        The real table, as read (numbers as numbers, text as text; datetime64 columns are dates).

    Returns
    -------
    dict
        ``{"columns": {name: spec}}`` in the table's order, each spec as in a schema file:
        ``{"type": "continuous" | "integer", "bounds": [min, max]}``, ``{"type": "date" |
        "datetime", "bounds": [first, last]}`` (ISO text), ``{"type": "binary" | "categorical",
        "levels": [...]}``, with ``"nullable": true`` for a column with missing cells; and
        ``"other_label"`` when a level is named like the default "other".
    """
    if not isinstance(real, pd.DataFrame):
        raise SynthDPError("the real table must be a pandas DataFrame")
    if len(real) == 0 or len(real.columns) == 0:
        raise SynthDPError("the real table has no rows or no columns: nothing to infer")
    if real.columns.has_duplicates:
        raise SynthDPError("the real table has a duplicated column name")
    columns: dict[str, dict] = {}
    levels_seen: set[str] = set()
    for column in real.columns:
        name, series = str(column), real[column]
        present = series.dropna()
        if len(present) == 0:
            raise SynthDPError(f"column '{name}' of the real table has no values: its type cannot be inferred")
        spec = _spec(name, series, present, len(real))
        if spec["type"] in LEVEL_TYPES:
            levels_seen.update(str(level) for level in spec["levels"])
        if len(present) < len(series):
            spec["nullable"] = True
        columns[name] = spec
    content: dict = {"columns": columns}
    other_label = DEFAULT_OTHER_LABEL
    while other_label in levels_seen:  # a level called "other" would collide with the "other" level
        other_label = f"({other_label})"
    if other_label != DEFAULT_OTHER_LABEL:
        content["other_label"] = other_label
    return content


def needs_schema(content: Mapping) -> bool:
    """Whether an inferred schema says more than evaluate's numeric path assumes without one: a
    binary, categorical, date or datetime column, or missing cells. When it does not (every column
    a number, none missing), the real min/max normalise the columns as before."""
    return any(spec.get("type") not in ("continuous", "integer") or spec.get("nullable")
               for spec in content["columns"].values())


def inference_note(content: Mapping) -> str:
    """One line for stderr saying that the types were inferred, and how many of each."""
    counts: dict[str, int] = {}
    for spec in content["columns"].values():
        kind = "numeric" if spec["type"] in ("continuous", "integer") else spec["type"]
        counts[kind] = counts.get(kind, 0) + 1
    shown = ", ".join(f"{counts[kind]} {kind}" for kind in ("numeric", "binary", "categorical", "date", "datetime")
                      if kind in counts)
    return (f"no --bounds or --schema: the column types were inferred from the real table ({shown}); "
            "pass --schema (the release's) to compare the columns as the release declared them")


# ------------------------------------------------------------------ one column
def _spec(name: str, series: pd.Series, present: pd.Series, n_rows: int) -> dict:
    if isinstance(series.dtype, pd.DatetimeTZDtype):
        raise SynthDPError(f"column '{name}' of the real table has times with a time-zone offset: convert them "
                           "to one local time first")
    if pd.api.types.is_datetime64_dtype(series):
        return _time_spec(pd.to_datetime(present), None)
    if pd.api.types.is_bool_dtype(series):
        return {"type": "binary", "levels": ["False", "True"]}
    if pd.api.types.is_numeric_dtype(series):
        return _numeric_spec(name, present.to_numpy(dtype=float), n_rows)
    text = present.astype("string").str.strip()
    time_spec = _text_time_spec(text)
    if time_spec is not None:
        return time_spec
    counts = present.astype(str).value_counts(sort=False)
    if len(counts) == 2:
        return {"type": "binary", "levels": sorted(counts.index)}
    kept = counts.sort_values(ascending=False, kind="stable").index[:MAX_INFERRED_LEVELS]
    return {"type": "categorical", "levels": sorted(kept)}


def _numeric_spec(name: str, values: np.ndarray, n_rows: int) -> dict:
    if not np.isfinite(values).all():
        raise SynthDPError(f"column '{name}' of the real table has infinite values")
    distinct = np.unique(values)
    whole = bool(np.all(values == np.round(values))) and float(np.abs(values).max()) < MAX_EXACT_INTEGER
    if len(distinct) == 2:
        return {"type": "binary", "levels": _numbers(distinct, whole)}
    if looks_like_codes(distinct, n_rows, whole):
        return {"type": "categorical", "levels": _numbers(distinct, whole)}
    lower, upper = float(distinct[0]), float(distinct[-1])
    if lower == upper:  # constant: an interval centred on its value, as evaluate's real min/max would give
        lower, upper = lower - 1.0, upper + 1.0
    bounds = [int(lower), int(upper)] if whole else [lower, upper]
    return {"type": "integer" if whole else "continuous", "bounds": bounds}


def _numbers(values: np.ndarray, whole: bool) -> list[int | float]:
    return [int(value) if whole else float(value) for value in values]


def _text_time_spec(text: pd.Series) -> dict | None:
    """A date or datetime spec when every value is ISO text without a time zone and a calendar
    time, else None (then levels)."""
    times = iso_text_times(text)
    return None if times is None else _time_spec(times[1], times[0])


def _time_spec(parsed: pd.Series, kind: str | None) -> dict:
    """Bounds of a date or datetime column: its first and last value, as ISO text (a constant
    column gets a day or a second on either side)."""
    micro = parsed.to_numpy(dtype="datetime64[us]").astype(np.int64)
    if kind is None:  # datetime64 values: dates when every one is midnight
        kind = "date" if bool(np.all(micro % (SECONDS_PER_DAY * 10**6) == 0)) else "datetime"
    if kind == "date":
        days = micro // (SECONDS_PER_DAY * 10**6)
        lower, upper = float(days.min()), float(days.max())
        if lower == upper:
            lower, upper = lower - 1, upper + 1
    else:
        seconds = micro / 10**6
        lower, upper = math.floor(float(seconds.min())), math.ceil(float(seconds.max()))
        if lower == upper:
            lower, upper = lower - 1, upper + 1
    return {"type": kind, "bounds": [format_bound(lower, kind), format_bound(upper, kind)]}
