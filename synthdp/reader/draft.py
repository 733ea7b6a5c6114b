"""Draft a schema from a table: what ``synthdp schema`` writes for the user to review and edit.

This reads the raw rows, and what it writes is NOT private: the bounds are the data's minimum
and maximum (rounded outward to round numbers) and the levels are the values seen. The draft
carries a top-level ``"draft"`` entry (:data:`DRAFT_ENTRY`) saying so; a release that uses a
schema still holding it is marked NOT differentially private
(:data:`synthdp.pipeline.run.DRAFT_SCHEMA`). The user replaces the bounds, levels and values with public
knowledge and then deletes the entry.

Types: a column with exactly 2 distinct values is ``binary``: text levels for a text column,
numbers for a numeric one (0/1 codes: ``"levels": [0, 1]``, or ``[0.0, 1.0]`` when the values
were read as floats, so that the synthetic table writes them back as the input had them). A
numeric column of a few whole, non-negative values (:func:`synthdp.domain.schema.looks_like_codes`,
SDV's rule, as ``synthdp evaluate`` types columns) is ``categorical`` with those numbers as its
levels, and a note says so. Any other numeric column whose values are all integers is
``integer``, any other ``continuous``, with
``"decimals": k`` when its values use at most :data:`MAX_DRAFT_DECIMALS` decimals (k the most
any value uses; synthetic values are rounded to them). A continuous column of few distinct values
(at most min(n / 10, :data:`synthdp.domain.schema.MAX_VALUE_BLOCK`): each seen in 10 rows on average,
as SDV's rule asks of codes) lists them as ``"values"`` instead (a design's settings, a scale's
steps: one histogram cell per value, every synthetic value one of them; docs/cli.md#declared-values),
and a note says so; an integer column never does, as its values already get a cell each where the
release affords it, and a count's gaps are rarely public. A text column of ISO dates (times, or dates
beside times) is ``date`` (``datetime``), its bounds whole years or months (times with a time zone
are refused, as a release refuses them); a text column with more than 2
distinct values is ``categorical`` (levels sorted, every value seen, so ``"other": false``: no
"other" level; a pandas category's levels are its categories, in their declared order, unused ones
included, numbers as numbers), and with more than ``max_levels`` its levels are left to DP discovery
(``"levels": "discover"``, values it leaves out becoming "other"). Empty text (a Parquet file's or
a DataFrame's; a CSV reads an empty cell as missing) is no level, which a schema refuses: its
column is ``categorical`` with an "other" level, to which a release maps it, and a note says so.
A column with missing cells gets ``"nullable": true``.

Notes and errors name columns, never a value (the values are in the draft file only).
"""

from __future__ import annotations

import calendar
import datetime as dt
import math

import numpy as np
import pandas as pd

from synthdp.domain.box import MAX_EXACT_INTEGER, _parse_column
from synthdp.domain.dates import ISO_DATETIME, iso_text_times
from synthdp.domain.schema import (
    DEFAULT_OTHER_LABEL,
    DISCOVER,
    DRAFT_KEY,
    MAX_VALUE_BLOCK,
    as_float64,
    level_text,
    looks_like_codes,
)
from synthdp.errors import SynthDPError
from synthdp.reader.numbers import decimal_floats, holds_decimals
from synthdp.reader.table import check_column_names, check_row_count

DEFAULT_MAX_LEVELS = 50
DRAFT_ENTRY = {
    "generated_by": "synthdp schema",
    "from_data": True,
    "note": "bounds, levels and values were read from the data: they are NOT protected. Replace them with "
            "public knowledge, then delete this entry.",
}
#: Most decimals a draft declares: a continuous column whose values use more (a float that was
#: never rounded, a ratio) gets no "decimals" entry, and its synthetic values are not rounded.
MAX_DRAFT_DECIMALS = 6
NICE_MANTISSAS = (1, 2, 5)
ZONED_ISO_DATETIME = ISO_DATETIME + r"\s*(?:[zZ]|[+-]\d{2}(?::?\d{2})?)"  # an ISO date-time with an offset or Z
STEPS_PER_WIDTH = 20  # the step is the largest round number <= width / 20: between width/50 and width/20


def round_step(width: float) -> float:
    """The largest 1, 2 or 5 times a power of ten that is at most ``width / 20`` (> 0, finite)."""
    if not (math.isfinite(width) and width > 0):
        raise SynthDPError("a rounding step needs a finite width > 0")
    target = width / STEPS_PER_WIDTH
    exponent = math.floor(math.log10(target))
    # the powers around log10's answer, which round-off can make one too high or too low
    steps = [mantissa * 10.0**power for power in (exponent - 1, exponent, exponent + 1) for mantissa in NICE_MANTISSAS]
    return max(step for step in steps if step <= target)


def round_bounds(lower: float, upper: float, integer: bool = False) -> tuple[float, float]:
    """``[lower, upper]`` widened to round numbers: multiples of :func:`round_step` of the width.

    The result contains ``[lower, upper]`` and adds at most one step (1/50 to 1/20 of the
    width) on each side. An integer column's bounds are integers (the step is at least 1). When
    ``lower == upper`` the interval is widened to a non-empty one around the value (a step of
    about a tenth of its magnitude, or 1 for an integer column).
    """
    if not (math.isfinite(lower) and math.isfinite(upper) and lower <= upper and math.isfinite(upper - lower)):
        raise SynthDPError("bounds to round must be finite numbers with lo <= hi")
    width = upper - lower
    if width == 0:  # a constant: a width of about the value's magnitude, so the step is about a tenth of it
        width = 2.0 * max(abs(lower), 1.0)
    step = round_step(width)
    if integer:
        step = max(step, 1.0)
    digits = max(0, -math.floor(math.log10(step)) + 1)  # enough decimals to print any multiple of step exactly

    def multiple(k: int) -> float:
        return float(round(k * step, digits))

    low_k, high_k = math.floor(lower / step), math.ceil(upper / step)
    while multiple(low_k) > lower:  # division round-off
        low_k -= 1
    while multiple(high_k) < upper:
        high_k += 1
    if low_k == high_k:  # a constant on a multiple of the step
        low_k, high_k = low_k - 1, high_k + 1
    return multiple(low_k), multiple(high_k)




def _zoned_times(series: pd.Series) -> bool:
    """Whether a column holds times with a time zone: a zoned datetime64 column (a Parquet timestamp with a
    time zone), or ISO date-times each with an offset or Z (text, or Python datetimes with a tzinfo)."""
    if isinstance(series.dtype, pd.DatetimeTZDtype):
        return True
    if pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series) \
            or pd.api.types.is_datetime64_dtype(series):
        return False
    text = series.dropna().astype(str).str.strip()
    return not text.empty and bool(text.str.fullmatch(ZONED_ISO_DATETIME).all())


def _time_spec(series: pd.Series) -> dict | None:
    """A date or datetime column's spec when every present value is ISO text (no time zone):
    bounds rounded outward to whole years (or months, for a range under three years), as ISO."""
    text = series.dropna().astype(str).str.strip()
    if text.empty:
        return None
    times = iso_text_times(text)
    if times is None:
        return None
    kind, values = times
    lower, upper = values.min(), values.max()
    # datetime.date, not Timestamps: pandas 2's hold years 1678 to 2261 only, and 9999's year end is the last
    if (upper - lower).days >= 3 * 365:
        start, end = dt.date(lower.year, 1, 1), dt.date(upper.year, 12, 31)
    else:
        start = dt.date(lower.year, lower.month, 1)
        end = dt.date(upper.year, upper.month, calendar.monthrange(upper.year, upper.month)[1])
    if kind == "datetime":
        shown = (f"{start.isoformat()}T00:00:00", f"{end.isoformat()}T23:59:59")
    else:
        shown = (start.isoformat(), end.isoformat())
    return {"type": kind, "bounds": list(shown)}


def draft_schema(frame: pd.DataFrame, max_levels: int = DEFAULT_MAX_LEVELS) -> tuple[dict, list[str]]:
    """A draft schema of ``frame`` (read from its values: NOT private), and notes for the user.

    Returns the schema mapping (with the top-level ``"draft"`` entry first) and one line per
    note (columns left to level discovery, columns with missing cells), naming columns only.
    """
    if not (isinstance(max_levels, int) and max_levels >= 2):
        raise SynthDPError("--max-levels must be an integer >= 2")
    names = check_column_names(frame.columns)
    check_row_count(len(frame))
    columns: dict[str, dict] = {}
    notes: list[str] = []
    all_levels: set[str] = set()
    closed: list[str] = []
    codes: list[str] = []
    grids: list[str] = []  # continuous columns drafted with their values
    empty: list[str] = []  # text columns holding empty text
    for name, column in zip(names, frame.columns):
        series = frame[column]
        if holds_decimals(series):  # a Parquet DECIMAL column: numbers, as a release reads them
            series = pd.Series(decimal_floats(series), index=series.index)
        if pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series):
            spec = _numeric_spec(name, series, notes)
            if spec["type"] in ("binary", "categorical"):
                all_levels.update(str(level) for level in spec["levels"])
            if spec["type"] == "categorical":
                codes.append(name)
            if "values" in spec:
                grids.append(name)
        elif _zoned_times(series):  # a release refuses them: as a categorical draft, each time would be a level
            raise SynthDPError(f"column '{name}' holds times with a time-zone offset, which releases refuse (date and "
                               "datetime columns hold naive times): convert them to one local time (or UTC) without "
                               "the offset, then draft again")
        elif (time_spec := _time_spec(series)) is not None:
            spec = time_spec
        else:
            if isinstance(series.dtype, pd.CategoricalDtype):  # a pandas category's declared levels, in their order
                categories = series.cat.categories  # numbers as numbers (codes), as a numeric column's levels
                numbers = pd.api.types.is_numeric_dtype(categories) and not pd.api.types.is_bool_dtype(categories)
                levels = categories.tolist() if numbers else list(dict.fromkeys(str(value) for value in categories))
            else:
                levels = sorted(set(level_text(series)))  # each value as a release reads it (bytes as text)
            if "" in levels:  # a Parquet file's or a DataFrame's empty text: no level (a CSV writes it as a missing cell)
                levels.remove("")
                empty.append(name)
            if not levels:
                raise SynthDPError(f"column '{name}' has no values: drop it or fill it before drafting a schema")
            if len(levels) > max_levels:
                spec = {"type": "categorical", "levels": DISCOVER}
                notes.append(f"column '{name}' has more than {max_levels} distinct values: its levels are left to "
                             "DP discovery (\"levels\": \"discover\", which needs --levels-share and --delta > 0); "
                             "list its public levels instead if you know them")
            else:
                spec = {"type": "binary" if len(levels) == 2 and name not in empty else "categorical", "levels": levels}
                all_levels.update(str(level) for level in levels)
        if spec["type"] == "categorical" and isinstance(spec["levels"], list) and name not in empty:
            spec["other"] = False  # every value it takes is listed: no "other" level in the synthetic table
            closed.append(name)
        if series.isna().any():
            spec["nullable"] = True
        columns[name] = spec
    missing = [name for name, spec in columns.items() if spec.get("nullable")]
    if missing:
        shown = ", ".join(f"'{name}'" for name in missing)
        notes.append(f"column(s) {shown} have missing cells (marked \"nullable\": true): the release "
                     "synthesizes missing cells there at a noisy rate; remove the mark where the public "
                     "description says a column has no missing values")
    if empty:
        shown = ", ".join(f"'{name}'" for name in empty)
        notes.append(f"column(s) {shown} hold empty text, which no level can be (a CSV writes it as a missing cell): "
                     "drafted as categorical, where a release maps it to the 'other' level; or make those cells "
                     "missing values (None) and mark the column \"nullable\": true")
    if codes:
        shown = ", ".join(f"'{name}'" for name in codes)
        notes.append(f"numeric column(s) {shown} take a few whole values: drafted as categorical codes (levels as "
                     "numbers, as synthdp evaluate reads them); declare a column \"integer\" with bounds instead "
                     "where it is a count or a scale whose order matters")
    if grids:
        shown = ", ".join(f"'{name}'" for name in grids)
        notes.append(f"continuous column(s) {shown} take few distinct values: drafted with the values seen "
                     "(\"values\": one histogram cell per value, and every synthetic value one of them); keep them "
                     "only where the public description lists them (a design's settings, a scale's steps), else "
                     "delete the entry")
    if closed:
        shown = ", ".join(f"'{name}'" for name in closed)
        notes.append(f"categorical column(s) {shown} list every value they take (marked \"other\": false: the "
                     "synthetic table has no 'other' level, and a value outside the levels is an error); remove "
                     "the mark where the public description allows other values")
    content: dict = {DRAFT_KEY: dict(DRAFT_ENTRY), "columns": columns}
    other_label = DEFAULT_OTHER_LABEL
    while other_label in all_levels:  # a level called "other" would collide with the "other" level
        other_label = f"({other_label})"
    if other_label != DEFAULT_OTHER_LABEL:
        content["other_label"] = other_label
    return content, notes


def _numeric_spec(name: str, series: pd.Series, notes: list[str]) -> dict:
    """The type and rounded bounds (or levels) of a numeric column, from its finite values."""
    values = series.to_numpy(dtype=float, na_value=np.nan)  # as a release reads them (a float32's 0.1 widened)
    # float32's 0.1 as 0.1, as a release matches levels and values: the levels, values and decimals the column writes
    written = as_float64(series).to_numpy(dtype=float, na_value=np.nan)
    finite = written[np.isfinite(written)]
    if len(finite) == 0:
        raise SynthDPError(f"column '{name}' has no numeric values: drop it or fill it before drafting a schema")
    infinite = len(finite) < len(values) - int(np.isnan(values).sum())
    if infinite:
        notes.append(f"column '{name}' has infinite values, which releases refuse: clean them before a release")
    integer = bool(np.all(finite == np.round(finite))) and float(np.abs(finite).max()) < MAX_EXACT_INTEGER
    distinct = np.unique(finite)
    if len(distinct) == 2 and not infinite:
        return {"type": "binary", "levels": _levels(distinct, series, integer)}
    if looks_like_codes(distinct, len(values), integer) and not infinite:
        return {"type": "categorical", "levels": _levels(distinct, series, integer)}  # codes, as evaluate types them
    try:
        read = values[np.isfinite(values)]  # bounds around the values as written and as read
        lower, upper = round_bounds(min(float(finite.min()), float(read.min())),
                                    max(float(finite.max()), float(read.max())), integer)
    except SynthDPError:
        raise SynthDPError(f"column '{name}' has a range too wide for bounds: rescale it") from None
    spec: dict = {"type": "integer" if integer else "continuous", "bounds": [_number(lower), _number(upper)]}
    if not integer and not infinite and len(distinct) <= min(round(len(values) / 10), MAX_VALUE_BLOCK):
        values_spec = {**spec, "values": [_number(float(value)) for value in distinct]}
        try:
            _parse_column(name, values_spec)  # values too close to keep a cell each are refused: then none
        except SynthDPError:
            pass
        else:
            return values_spec
    decimals = None if integer else used_decimals(finite)
    if decimals is not None:
        spec["decimals"] = decimals
    return spec


def _levels(distinct: np.ndarray, series: pd.Series, integer: bool) -> list[int | float]:
    """The two values of a binary numeric column as its levels: ints where the column holds integers
    (read as integers, or as floats only because of missing cells), else floats (``1.0`` read from
    "1.0" stays 1.0, so the synthetic table writes it back so)."""
    as_integers = integer and (pd.api.types.is_integer_dtype(series) or bool(series.isna().any()))
    return [int(value) if as_integers else float(value) for value in distinct]


def used_decimals(values: np.ndarray, most: int = MAX_DRAFT_DECIMALS) -> int | None:
    """The fewest decimals k <= ``most`` that write every one of ``values`` (finite floats) exactly,
    that is the most decimals any value uses; None when some value needs more than ``most``.

    A value read from "30.7" is the float nearest to 30.7, which is 307 / 10: a value uses k
    decimals when it is the float nearest to its multiple of 10^-k.
    """
    values = np.asarray(values, dtype=float)
    for decimals in range(most + 1):
        scale = 10.0**decimals
        if float(np.abs(values).max(initial=0.0)) * scale > MAX_EXACT_INTEGER:
            return None  # float64 holds no more decimals at this magnitude
        if np.array_equal(np.round(values * scale) / scale, values):
            return decimals
    return None


def _number(value: float) -> int | float:
    """An integral bound as an int (written 100, not 100.0), any other as a float."""
    return int(value) if value == int(value) and abs(value) < MAX_EXACT_INTEGER else value
