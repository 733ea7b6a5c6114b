"""Column domains: the public box the data live in, and the affine map to [-1, 1]^d.

The mechanism is defined on [-1, 1]^d. Each column j has a *public* interval
[lower_j, upper_j]; values are clipped into it (by :mod:`synthdp.reader.table`, the only
module that sees raw rows) and mapped affinely onto [-1, 1]. Decoding maps back.

A bounds file is JSON: ``{"column": [lo, hi], ...}``, or with an explicit type,
``{"column": {"bounds": [lo, hi], "type": "integer"}}``. Whether a column is integer-valued
is metadata too, so it comes from the bounds file, never from the data. A ``"date"`` or
``"datetime"`` column has ISO bounds (``["2019-01-01", "2023-12-31"]``) and is modelled as
days or seconds since 1970-01-01 (:mod:`synthdp.domain.dates`).

A continuous column may also declare its precision, ``{"bmi": {"bounds": [15, 50], "decimals": 1}}``:
the number of decimals its values are written with, public metadata like the bounds. The
release works on the unrounded values; decoding rounds synthetic values to that many decimals
(:func:`synthdp.domain.decode.decode`). An integer column has 0 decimals already.

A numeric column may also declare the only values it takes, ``{"dose": {"values": [0.5, 1, 2.5, 5]}}``
(a designed experiment's settings, a scale's points; its bounds then default to the first and last):
public metadata too. The release counts such a column's rows value by value where the plan affords
it, as an integer column's (:meth:`synthdp.stats.histograms.CellLayout.for_domain`), and decoding
moves each synthetic value to the nearest declared one (:func:`synthdp.domain.decode.decode`).
"""

from __future__ import annotations

import collections
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from synthdp.checks import is_finite_number, is_int
from synthdp.domain.dates import TIME_TYPES, format_bound, parse_bound
from synthdp.errors import SynthDPError, absent_file, unknown_column
from synthdp.files import read_text_file

COLUMN_TYPES = ("continuous", "integer") + TIME_TYPES
MAX_EXACT_INTEGER = 2**53  # beyond it float64 skips integers and int64 conversion can overflow
#: Most decimals a column may declare: float64 holds 15 to 17 significant digits.
MAX_DECIMALS = 15
DECIMALS_HELP = f"an integer from 0 to {MAX_DECIMALS}, the number of decimals its values are written with"


def declared_values(name: str, values: object) -> tuple[float, ...]:
    """A column's declared ``"values"`` in ascending order, as floats: at least two distinct finite
    numbers, else a one-line error naming the column."""
    if isinstance(values, np.ndarray):
        values = values.tolist()
    if (not isinstance(values, (list, tuple)) or len(values) < 2
            or not all(is_finite_number(value) for value in values)):
        raise SynthDPError(f"column '{name}' has \"values\": expected a list of at least two finite numbers")
    ordered = tuple(sorted(float(value) for value in values))
    if any(a == b for a, b in zip(ordered, ordered[1:])):
        raise SynthDPError(f"column '{name}' has \"values\" with a number twice")
    return ordered


@dataclass(frozen=True)
class ColumnDomain:
    """One column's public range, in the user's units."""

    name: str
    lower: float
    upper: float
    integer: bool = False
    source: str = "public"  # "public", "DP estimate" or "data (NOT private)"
    temporal: str | None = None  # "date" (days since 1970-01-01, integer) or "datetime" (seconds since then)
    decimals: int | None = None  # the precision of a continuous column's values (public metadata); None: any
    values: tuple[float, ...] | None = None  # the only values the column takes, ascending (public metadata); None: any

    @property
    def type(self) -> str:
        """The column's type, as in a bounds file: continuous, integer, date or datetime."""
        return self.temporal or ("integer" if self.integer else "continuous")

    def __post_init__(self) -> None:
        if not (is_finite_number(self.lower) and is_finite_number(self.upper)
                and math.isfinite(float(self.upper) - float(self.lower))):
            raise SynthDPError(f"bounds for column '{self.name}' must be finite numbers with a finite width")
        if not self.lower < self.upper:
            why = (" (a constant column carries no information for this mechanism; drop it or widen its bounds)"
                   if self.lower == self.upper else " (lo is above hi: are they reversed?)")
            raise SynthDPError(f"bounds for column '{self.name}' need lo < hi{why}")
        if self.integer and max(abs(self.lower), abs(self.upper)) > MAX_EXACT_INTEGER:
            raise SynthDPError(f"bounds for integer column '{self.name}' must lie within +-2^53")
        if self.integer and math.ceil(self.lower) > math.floor(self.upper):
            raise SynthDPError(f"integer column '{self.name}' has no integer inside its bounds")
        if self.temporal is not None and (self.temporal not in TIME_TYPES or self.integer != (self.temporal == "date")):
            raise SynthDPError(f"column '{self.name}': a date column is integer-valued, a datetime column is not")
        if self.temporal == "datetime" and math.ceil(self.lower) > math.floor(self.upper):
            raise SynthDPError(f"datetime column '{self.name}' has no whole second inside its bounds")
        if self.decimals is not None:
            self._check_decimals()
        if self.values is not None:
            self._check_values()

    def _check_values(self) -> None:
        """Declared values: at least two distinct finite numbers inside the bounds, whole numbers for an
        integer column; kept as a tuple of floats in ascending order."""
        ordered = declared_values(self.name, self.values)
        if self.temporal is not None:
            raise SynthDPError(f"{self.temporal} column '{self.name}' has \"values\": declare values for continuous "
                               "or integer columns")
        if self.decimals is not None:
            raise SynthDPError(f"column '{self.name}' has both \"values\" and \"decimals\": its values are written as "
                               "declared (give one of the two)")
        if ordered[0] < self.lower or ordered[-1] > self.upper:
            raise SynthDPError(f"column '{self.name}' has \"values\" outside its bounds")
        if self.integer and not all(value.is_integer() for value in ordered):
            raise SynthDPError(f"integer column '{self.name}' has \"values\" that are not whole numbers")
        if not self._values_apart(np.asarray(ordered, dtype=float)):
            raise SynthDPError(f"column '{self.name}' has \"values\" too close together to tell apart inside its "
                               "bounds (at float64's precision): merge the closest, or narrow the bounds")
        object.__setattr__(self, "values", ordered)

    def _values_apart(self, grid: np.ndarray) -> bool:
        """Whether each declared value keeps a cell of its own as the release maps it onto [-1, 1]
        (:meth:`Domain.to_unit`; its cell the values below the next float above the midpoint with the
        next value, as :class:`synthdp.stats.histograms.CellSearch` delimits value cells) and comes
        back from it as itself (mapped back nearer to it than to its neighbours): values 1e-12
        apart inside bounds 10^6 wide are a float or two apart on [-1, 1], and one of them would
        never be drawn."""
        width = self.upper - self.lower
        unit = np.clip((grid - self.lower) / width * 2.0 - 1.0, -1.0, 1.0)
        edges = np.nextafter((unit[1:] + unit[:-1]) / 2, np.inf)
        error = self.lower + (unit + 1.0) * 0.5 * width - grid
        half = np.diff(grid) / 2
        return bool(np.all(unit[:-1] < edges) and np.all(edges <= unit[1:])
                    and np.all(error[:-1] < half) and np.all(-error[1:] < half))

    def _check_decimals(self) -> None:
        decimals = self.decimals
        if not (is_int(decimals)
                and 0 <= decimals <= MAX_DECIMALS):
            raise SynthDPError(f"column '{self.name}' has \"decimals\": expected {DECIMALS_HELP}")
        if self.temporal is not None:
            raise SynthDPError(f"{self.temporal} column '{self.name}' has \"decimals\": a date is written in whole "
                               "days and a datetime in whole seconds (declare decimals for continuous columns)")
        if self.integer and decimals != 0:
            raise SynthDPError(f"integer column '{self.name}' has \"decimals\": {decimals}: an integer column has "
                               "0 decimals (declare it continuous for values with decimals)")
        if max(abs(self.lower), abs(self.upper)) * 10.0**decimals > MAX_EXACT_INTEGER:
            raise SynthDPError(f"column '{self.name}' has \"decimals\": {decimals}, too many for its bounds "
                               f"(float64 holds no {decimals} decimals beyond 2^53 / 10^{decimals})")
        low, high = decimal_grid(self.lower, self.upper, int(decimals))
        if low > high:
            raise SynthDPError(f"column '{self.name}' has no value with {decimals} decimals inside its bounds")


@dataclass(frozen=True)
class Domain:
    """The ordered columns of a table and the box they live in."""

    columns: tuple[ColumnDomain, ...]
    source: str  # where the bounds came from: "public", "data (NOT private)", ...

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    @property
    def d(self) -> int:
        return len(self.columns)

    @property
    def lower(self) -> np.ndarray:
        return np.array([c.lower for c in self.columns], dtype=float)

    @property
    def upper(self) -> np.ndarray:
        return np.array([c.upper for c in self.columns], dtype=float)

    def to_unit(self, values: np.ndarray) -> np.ndarray:
        """Map values already inside the box, shape (n, d), onto [-1, 1]^d."""
        lower, upper = self.lower, self.upper
        unit = (values - lower) / (upper - lower) * 2.0 - 1.0  # divided first: 2 (x - lower) overflows near 1.8e308
        return np.clip(unit, -1.0, 1.0)  # guard against round-off just outside

    def from_unit(self, points: np.ndarray) -> np.ndarray:
        """Map points of [-1, 1]^d, shape (m, d), back to the user's units."""
        lower, upper = self.lower, self.upper
        return lower + (np.clip(points, -1.0, 1.0) + 1.0) * 0.5 * (upper - lower)

    def to_dict(self) -> dict:
        return {
            "source": self.source,
            "columns": {
                c.name: {"bounds": [format_bound(c.lower, c.temporal), format_bound(c.upper, c.temporal)]
                         if c.temporal else [c.lower, c.upper], "type": c.type, "source": c.source,
                         **({} if c.decimals is None else {"decimals": int(c.decimals)}),
                         **({} if c.values is None else {"values": list(c.values)})}
                for c in self.columns
            },
        }

    @classmethod
    def from_bounds(
        cls, bounds: Mapping[str, object], column_names: Sequence[str], source: str = "public"
    ) -> Domain:
        """Build the domain of ``column_names`` from a bounds mapping (the bounds file's content).

        Every column needs bounds, and every bounded name must be a column.
        """
        columns = parse_bounds(bounds, column_names)
        missing = [name for name in column_names if name not in columns]
        if missing:
            raise SynthDPError(f"no bounds for column '{missing[0]}': {MISSING_BOUNDS_HELP}")
        return cls(tuple(columns[name] for name in column_names), source)


MISSING_BOUNDS_HELP = (
    "give public bounds {column: [lo, hi]} (CLI: --bounds FILE.json), or spend a share of epsilon "
    "on DP estimates (CLI: --bounds-share S), or read them from the data with --bounds-from-data, "
    "which makes the release NOT differentially private"
)


def parse_bounds(bounds: Mapping[str, object], column_names: Sequence[str]) -> dict[str, ColumnDomain]:
    """The public bounds given for some or all of ``column_names``; unknown names are an error."""
    unknown = [name for name in bounds if name not in column_names]
    if unknown:
        raise unknown_column("bounds name", unknown[0], column_names)
    return {name: _parse_column(name, bounds[name]) for name in column_names if name in bounds}


def time_columns(columns: Mapping[str, object] | Domain | None) -> dict[str, str]:
    """The date and datetime columns declared by a bounds mapping, a schema's ``"columns"`` mapping
    or a Domain: {name: "date" or "datetime"}, what the reader converts from ISO text to numbers.

    Their bounds are checked here, so that an error in them stops the run before the data are read.
    """
    if isinstance(columns, Mapping):
        columns = Domain(tuple(_parse_column(str(name), spec) for name, spec in columns.items()
                               if isinstance(spec, Mapping) and spec.get("type") in TIME_TYPES), source="public")
    if not isinstance(columns, Domain):
        return {}
    return {column.name: column.temporal for column in columns.columns if column.temporal}


def decimal_grid(lower: float, upper: float, decimals: int) -> tuple[int, int]:
    """The first and last multiples of 10^-decimals inside [lower, upper], as integers (the
    multiples' numerators: k stands for k / 10^decimals); first > last when there is none."""
    scale = 10.0**decimals
    first, last = round(lower * scale), round(upper * scale)
    if first / scale < lower:  # round-off of lower * scale: the grid value must lie inside
        first += 1
    if last / scale > upper:
        last -= 1
    return first, last


def _decimals(name: str, spec: Mapping) -> int | None:
    """The ``"decimals"`` of a column spec (None when absent); a bad value is a one-line error."""
    if "decimals" not in spec:
        return None
    value = spec["decimals"]
    if not (is_int(value) and 0 <= value <= MAX_DECIMALS):
        raise SynthDPError(f"column '{name}' has \"decimals\": expected {DECIMALS_HELP}")
    return value


NUMERIC_KEYS = ("type", "bounds", "decimals", "values", "nullable", "source")  # a numeric column's spec (source: as the report writes it)


def check_keys(name: str, spec: Mapping, allowed: tuple[str, ...], origin: str = "bounds") -> None:
    """A column spec holds only the keys its type takes: a misspelt or misplaced key ("nulable", or
    "levels" on a numeric column) is a one-line error naming the column, its type and the key, not
    a silent default."""
    unknown = [key for key in spec if key not in allowed]
    if unknown:
        kind = spec.get("type", "continuous")
        article = "an" if str(kind)[:1] in tuple("aeiou") else "a"
        raise SynthDPError(f"{origin}: {kind} column '{name}' has \"{unknown[0]}\", which {article} {kind} column does "
                           f"not take (it takes {', '.join(allowed)})")


def _parse_column(name: str, spec: object) -> ColumnDomain:
    column_type = "continuous"
    decimals = values = None
    if isinstance(spec, Mapping):
        check_keys(name, spec, NUMERIC_KEYS)
        column_type = spec.get("type", "continuous")
        decimals = _decimals(name, spec)
        values = spec.get("values")
        spec = spec.get("bounds")
        if spec is None and values is not None and column_type not in TIME_TYPES:  # the bounds the values span
            values = declared_values(name, values)
            spec = [values[0], values[-1]]
    if column_type not in COLUMN_TYPES:
        raise SynthDPError(f"column '{name}' has type '{column_type}'; expected one of {COLUMN_TYPES}")
    if spec is None and column_type in TIME_TYPES:  # {"type": "date"} alone: --bounds-share estimates numbers only
        example = '["2019-01-01", "2023-12-31"]' if column_type == "date" else '["2019-01-01T00:00", "2023-12-31T23:59"]'
        raise SynthDPError(f"{column_type} column '{name}' has no \"bounds\": a {column_type} column needs public "
                           f"bounds, e.g. \"bounds\": {example} (--bounds-share estimates numeric columns only)")
    if isinstance(spec, np.ndarray) and spec.ndim == 1:  # a pair from Python: its numbers as Python's
        spec = spec.tolist()
    if not (isinstance(spec, (list, tuple)) and len(spec) == 2):
        raise SynthDPError(f"bounds for column '{name}' must be a pair [lo, hi]")
    if column_type in TIME_TYPES:
        lower, upper = (parse_bound(name, column_type, value) for value in spec)
        return ColumnDomain(name, lower, upper, integer=column_type == "date", temporal=column_type,
                            decimals=decimals, values=values)
    try:
        if any(isinstance(value, (bool, np.bool_)) for value in spec):  # true is 1 to float(), not a bound
            raise TypeError
        lower, upper = float(spec[0]), float(spec[1])
    except (TypeError, ValueError):
        raise SynthDPError(f"bounds for column '{name}' must be numbers") from None
    except OverflowError:  # an integer of hundreds of digits
        raise SynthDPError(f"bounds for column '{name}' must be finite numbers with a finite width") from None
    return ColumnDomain(name, lower, upper, integer=column_type == "integer", decimals=decimals, values=values)


def read_json_file(path: str | Path, label: str) -> object:
    """Parse a JSON file; errors name the file (as ``label``), never its content. A key given twice in
    one object is an error naming it (JSON readers would keep the last silently: a column's bounds
    given twice, the second by mistake)."""

    def unique(pairs: list[tuple[str, object]]) -> dict:
        content = dict(pairs)
        if len(content) < len(pairs):  # in linear time: an object of a million keys is read in a second
            counts = collections.Counter(key for key, _ in pairs)
            twice = next(key for key, _ in pairs if counts[key] > 1)
            raise SynthDPError(f"{label} '{path}' gives '{twice}' twice in one object: keep one")
        return content

    try:  # as Notepad saves it: a byte-order mark
        return json.loads(read_text_file(path, label, encoding="utf-8-sig"), object_pairs_hook=unique)
    except (FileNotFoundError, IsADirectoryError):
        raise absent_file(label, path) from None
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise SynthDPError(f"{label} '{path}' is not valid JSON") from None
    except RecursionError:  # arrays or objects nested thousands deep: no file synthdp reads is
        raise SynthDPError(f"{label} '{path}' is nested too deeply to be read") from None


def load_bounds_file(path: str | Path) -> dict:
    """Read a bounds JSON file into a mapping; errors name the file, not its content."""
    content = read_json_file(path, "bounds file")
    if not isinstance(content, dict):
        raise SynthDPError(f"bounds file '{path}' must hold a JSON object {{column: [lo, hi]}}")
    nested = content.get("columns")  # a schema's column specs, not a column called "columns" with its own bounds
    if isinstance(nested, Mapping) and any(key not in NUMERIC_KEYS for key in nested) or isinstance(
            content.get("draft"), Mapping) and "generated_by" in content["draft"]:  # a draft's entry, not a column
        raise SynthDPError(f"bounds file '{path}' is a schema ({{\"columns\": ...}}): give it with --schema")
    for name, spec in content.items():  # before any data is read
        if isinstance(spec, Mapping):
            check_keys(name, spec, NUMERIC_KEYS, f"bounds file '{path}'")
    return content
