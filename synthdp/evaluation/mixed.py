"""Distances of a synthetic table from the real one for every column type: total variation.

A mixed table (numeric, binary and categorical columns, described by a
:class:`synthdp.domain.schema.Schema`) is compared cell by cell:

* **one column**: its distribution over cells, that is the schema's levels for a binary or
  categorical column (a value outside the levels, or missing, counts as its "other" level; a
  nullable column's missing cells have a cell of their own, "(missing)") and
  :data:`BINS` equal-width bins of the bounds for a numeric column (values outside are put in
  the edge bins). The **total-variation distance** of two distributions p and q over the same
  cells is TV = ``(1/2) sum_cells |p - q|``: 0 for the same distribution, 1 for disjoint supports,
  and the largest difference, over every set of cells, between the shares of rows the two
  tables put in that set.
* **a pair of columns**: the same distance over the product cells (levels or bins of both).
  SDMetrics' pair scores are reported beside it (:func:`pair_scores`): its *contingency
  similarity* 1 - TV for a pair with a binary or categorical column (a numeric one binned), and
  its *correlation similarity* ``1 - |r_real - r_synth| / 2`` for a pair of numeric columns
  (Pearson r, 0 for a constant column), both in [0, 1], 1 the best.

:func:`sdmetrics_quality` runs SDMetrics' own QualityReport when the optional package is
installed (``pip install "synthdp[quality]"``).

Like the rest of :mod:`synthdp.evaluation`, this reads the real table: its results are not
differentially private. It never imports :mod:`synthdp.reader`.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from synthdp.checks import is_int
from synthdp.domain.box import ColumnDomain, Domain
from synthdp.domain.schema import Schema, columns_without_bounds
from synthdp.errors import SynthDPError, near_column, unknown_column

__all__ = [
    "BINS",
    "SDMETRICS_ROWS",
    "SDMETRICS_MISSING",
    "pearson",
    "numeric_schema",
    "cell_labels",
    "distribution",
    "tv_distance",
    "column_tv",
    "pair_scores",
    "sdmetrics_quality",
    "sdmetrics_shifted_bins",
]

#: Equal-width bins of a numeric column's bounds for its one-way and two-way distributions.
BINS = 16

#: At most this many rows of each table go to SDMetrics (a random sample): its pair metrics are slow.
SDMETRICS_ROWS = 2000

#: The report's "sdmetrics" entry when the optional package is missing.
SDMETRICS_MISSING = 'not installed (pip install "synthdp[quality]")'


def pearson(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pearson correlation matrix of the columns of ``values`` (n, d), with 0 for every pair
    involving a constant column; and which columns are constant. Each column is divided by its
    largest absolute value first (a correlation does not change), so that values near the largest
    floats neither overflow the mean nor the squares."""
    largest = np.max(np.abs(values), axis=0) if len(values) else np.ones(values.shape[1])
    values = values / np.where((largest > 0) & np.isfinite(largest), largest, 1.0)
    centred = values - values.mean(axis=0)
    norms = np.sqrt(np.einsum("ij,ij->j", centred, centred))
    constant = np.ptp(values, axis=0) == 0
    scaled = np.divide(centred, norms, out=np.zeros_like(centred), where=~constant)
    return np.clip(scaled.T @ scaled, -1.0, 1.0), constant


def numeric_schema(intervals: Mapping[str, Sequence[float]], types: Mapping[str, str] | None = None) -> Schema:
    """The schema of a numeric table: ``{column: [lower, upper]}``, in table order; ``types`` names
    the date and datetime columns (``{column: "date"}``), whose bounds are days or seconds."""
    types = types or {}
    columns = tuple(ColumnDomain(str(name), float(lower), float(upper), integer=types.get(name) == "date",
                                 temporal=types.get(name)) for name, (lower, upper) in intervals.items())
    return Schema(tuple(column.name for column in columns), Domain(columns, source="public"), ())


# ------------------------------------------------------------------ cells
def described_schema(schema: Schema | Mapping, real: pd.DataFrame) -> Schema:
    """A Schema of the real table's columns: ``schema`` itself, or built from a schema file's content
    (what :func:`synthdp.domain.schema.load_schema_file` returns)."""
    names = [str(c) for c in real.columns]
    schema = _as_schema(schema, names)
    unknown = [name for name in schema.names if name not in names]
    if unknown:
        raise unknown_column("the schema names", unknown[0], names)
    missing = [name for name in names if name not in schema.names]
    if missing:
        raise SynthDPError(f"the schema has no entry for column '{missing[0]}'")
    return schema


def _as_schema(schema: Schema | Mapping, names: list[str] | None = None) -> Schema:
    """``schema``, or the Schema of a schema file's content over ``names`` (default: the columns it names)."""
    if isinstance(schema, Schema):
        return schema
    if not isinstance(schema, Mapping) or not isinstance(schema.get("columns"), Mapping):
        raise SynthDPError("the schema must be a Schema or a schema file's content ({\"columns\": {...}})")
    check_schema_bounds(schema)
    return Schema.from_dict(schema, list(schema["columns"]) if names is None else names, "the schema")


def check_schema_bounds(schema: Mapping) -> None:
    """A schema mapping that leaves a numeric column's bounds out (a --bounds-share release's) is an
    error saying where the release's are: evaluation bins numeric columns on them."""
    unbounded = columns_without_bounds(schema, list(schema["columns"]))
    if unbounded:
        raise SynthDPError(f"the schema gives no bounds for column '{unbounded[0]}', which the numeric bins need: give "
                           "the release's (where --bounds-share estimated them, its report's \"bounds\" holds them)")


def _numeric_bounds(schema: Schema) -> dict[str, tuple[float, float]]:
    return {column.name: (column.lower, column.upper) for column in schema.numeric.columns}


def _codes(frame: pd.DataFrame, schema: Schema, name: str, label: str, bins: int) -> tuple[np.ndarray, int]:
    """The cell of every row of ``frame[name]`` and the number of cells of the column."""
    if name not in frame.columns:
        raise SynthDPError(f"the {label} table has no column '{name}'{near_column(name, list(frame.columns))}")
    series = frame[name]
    bounds = _numeric_bounds(schema)
    if name not in bounds:
        column = schema.column(name).scoring()
        return column.level_codes(series), len(column.all_levels)
    if not pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series):
        raise SynthDPError(f"column '{name}' of the {label} table is not numeric")
    values = series.to_numpy(dtype=float)
    if not np.isfinite(values).all():
        raise SynthDPError(f"column '{name}' of the {label} table has missing or infinite values")
    lower, upper = bounds[name]
    position = np.floor((values - lower) / (upper - lower) * bins)
    return np.clip(position, 0, bins - 1).astype(np.int64), bins


def cell_labels(schema: Schema, name: str, bins: int = BINS) -> list[str]:
    """The names of a column's cells: its levels (and "other"), or its bins as ``[lower, upper)``."""
    bounds = _numeric_bounds(schema)
    if name not in bounds:
        return list(schema.column(name).scoring().all_levels)
    edges = np.linspace(*bounds[name], bins + 1)
    return [f"[{a:.4g}, {b:.4g}" + ("]" if k == bins - 1 else ")") for k, (a, b) in enumerate(zip(edges[:-1], edges[1:]))]


def distribution(frame: pd.DataFrame, schema: Schema, name: str, bins: int = BINS, label: str = "input") -> np.ndarray:
    """The share of ``frame``'s rows in each cell of column ``name`` (see :func:`cell_labels`)."""
    _check_bins(bins)
    codes, size = _codes(frame, schema, name, label, bins)
    return np.bincount(codes, minlength=size) / max(len(codes), 1)


def tv_distance(p: Sequence[float] | np.ndarray, q: Sequence[float] | np.ndarray) -> float:
    """(1/2) sum |p - q| of two distributions over the same cells."""
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    if p.shape != q.shape:
        raise SynthDPError(f"the two distributions need the same cells; got {p.size} and {q.size}")
    return float(0.5 * np.abs(p - q).sum())


def _check_bins(bins: int) -> None:
    if not (is_int(bins) and bins >= 1):
        raise SynthDPError("bins must be an integer >= 1")


def _check_tables(real: pd.DataFrame, synth: pd.DataFrame) -> None:
    for frame, label in ((real, "real"), (synth, "synthetic")):
        if not isinstance(frame, pd.DataFrame):
            raise SynthDPError(f"the {label} table must be a pandas DataFrame")
        if len(frame) == 0:
            raise SynthDPError(f"the {label} table has no rows")


def _all_codes(real: pd.DataFrame, synth: pd.DataFrame, schema: Schema, bins: int) -> dict:
    _check_tables(real, synth)
    _check_bins(bins)
    result = {}
    for name in schema.names:
        real_codes, size = _codes(real, schema, name, "real", bins)
        synth_codes, _ = _codes(synth, schema, name, "synthetic", bins)
        result[name] = (real_codes, synth_codes, size)
    return result


# ------------------------------------------------------------------ metrics
def column_tv(real: pd.DataFrame, synth: pd.DataFrame, schema: Schema | Mapping, bins: int = BINS) -> dict:
    """Total-variation distance of each column's one-way distribution, in schema order.

    Parameters
    ----------
    real, synth : DataFrame
        The two tables, with (at least) the schema's columns.
    schema : Schema or mapping
        A :class:`synthdp.domain.schema.Schema` or a schema file's content: each column's levels,
        or a numeric column's bounds.
    bins : int, default 16
        Equal-width bins of a numeric column between its bounds (values outside go to the end bins).

    Returns
    -------
    dict
        ``bins``, ``per_column`` {column: TV}, ``max``, ``mean`` and ``worst_column``.
    """
    schema = _as_schema(schema)
    codes = _all_codes(real, synth, schema, bins)
    per_column = {}
    for name, (a, b, size) in codes.items():
        per_column[name] = tv_distance(np.bincount(a, minlength=size) / len(a), np.bincount(b, minlength=size) / len(b))
    worst = max(per_column, key=lambda name: per_column[name])
    return {"bins": int(bins), "per_column": per_column, "max": per_column[worst],
            "mean": float(np.mean(list(per_column.values()))), "worst_column": worst}


def _summary(values: dict[tuple[str, str], float], best_is_high: bool) -> dict:
    if not values:
        return {"pairs": 0, "mean": None, "worst": None, "worst_pair": None}
    worst = (min if best_is_high else max)(values, key=lambda pair: values[pair])
    return {"pairs": len(values), "mean": float(np.mean(list(values.values()))), "worst": values[worst],
            "worst_pair": list(worst)}


def pair_scores(real: pd.DataFrame, synth: pd.DataFrame, schema: Schema | Mapping, bins: int = BINS) -> dict:
    """The 2-way total-variation distance of every pair of columns, and SDMetrics' pair similarities.

    Parameters
    ----------
    real, synth : DataFrame
        The two tables, with (at least) the schema's columns.
    schema : Schema or mapping
        A :class:`synthdp.domain.schema.Schema` or a schema file's content: each column's levels,
        or a numeric column's bounds.
    bins : int, default 16
        Equal-width bins of a numeric column between its bounds (values outside go to the end bins).

    Returns
    -------
    dict
        ``tv``: ``pairs``, ``mean``, ``worst`` (the largest TV) and ``worst_pair``;
        ``contingency``: the same summary of 1 - TV over the pairs with a binary or categorical
        column (``worst``: the smallest similarity); ``correlation``: of ``1 - |r_real - r_synth| / 2``
        over the pairs of numeric columns; ``per_pair``: one entry per pair, in schema order,
        with ``columns``, ``tv``, ``metric`` ("contingency" or "correlation") and ``similarity``.
    """
    schema = _as_schema(schema)
    codes = _all_codes(real, synth, schema, bins)
    numeric = [column.name for column in schema.numeric.columns]
    correlation = {}
    if len(numeric) >= 2:
        corr_real, _ = pearson(np.column_stack([real[name].to_numpy(dtype=float) for name in numeric]))
        corr_synth, _ = pearson(np.column_stack([synth[name].to_numpy(dtype=float) for name in numeric]))
        for i, j in itertools.combinations(range(len(numeric)), 2):
            correlation[numeric[i], numeric[j]] = float(1 - abs(corr_real[i, j] - corr_synth[i, j]) / 2)
    tv, contingency, per_pair = {}, {}, []
    for first, second in itertools.combinations(schema.names, 2):
        a_real, a_synth, a_size = codes[first]
        b_real, b_synth, b_size = codes[second]
        cells = a_size * b_size
        p = np.bincount(a_real * b_size + b_real, minlength=cells) / len(a_real)
        q = np.bincount(a_synth * b_size + b_synth, minlength=cells) / len(a_synth)
        pair = (first, second)
        tv[pair] = tv_distance(p, q)
        if pair in correlation:
            entry = {"metric": "correlation", "similarity": correlation[pair]}
        else:
            contingency[pair] = 1.0 - tv[pair]
            entry = {"metric": "contingency", "similarity": contingency[pair]}
        per_pair.append({"columns": [first, second], "tv": tv[pair], **entry})
    return {"bins": int(bins), "tv": _summary(tv, best_is_high=False), "contingency": _summary(contingency, True),
            "correlation": _summary(correlation, True), "per_pair": per_pair}


# ------------------------------------------------------------------ SDMetrics
def sdmetrics_shifted_bins(real: pd.DataFrame, synthetic: pd.DataFrame, schema: Schema) -> list[str]:
    """The numeric columns whose Column Pair Trends bins differ between the two samples SDMetrics scores.

    SDMetrics' QualityReport (0.32) cuts each table's numeric columns for their pairs with a
    categorical column on that table's own 10 equal-width bins, from its own minimum and maximum,
    so where the two samples' ranges differ (a rare extreme value missing from one of them) the
    bins do not line up and those pairs score low whatever their cells (docs/relationships.md,
    "SDMetrics' bins"). Names only, never a value; empty when the schema has no binary or
    categorical column (numeric pairs are scored by correlation, without bins).
    """
    if not schema.declared:
        return []
    shifted = []
    for name in _numeric_bounds(schema):
        first, second = real[name].to_numpy(dtype=float), synthetic[name].to_numpy(dtype=float)
        first, second = first[np.isfinite(first)], second[np.isfinite(second)]
        if len(first) and len(second) and (first.min() != second.min() or first.max() != second.max()):
            shifted.append(name)
    return shifted


def _for_sdmetrics(frame: pd.DataFrame, schema: Schema, rows: np.ndarray) -> pd.DataFrame:
    """The sampled rows with numeric columns as floats and the others as their schema level."""
    numeric = set(_numeric_bounds(schema))
    columns = {}
    for name in schema.names:
        series = frame[name].iloc[rows].reset_index(drop=True)
        if name in numeric:
            columns[name] = series.to_numpy(dtype=float)
        else:
            column = schema.column(name).scoring()
            columns[name] = np.asarray(column.all_levels, dtype=object)[column.level_codes(series)]
    return pd.DataFrame(columns, columns=list(schema.names))


def sdmetrics_quality(real: pd.DataFrame, synth: pd.DataFrame, schema: Schema, *, seed: int = 0,
                      max_rows: int = SDMETRICS_ROWS) -> dict | str:
    """SDMetrics' QualityReport scores, or :data:`SDMETRICS_MISSING` when sdmetrics is not installed.

    SDMetrics (the Synthetic Data Vault's metrics) scores *Column Shapes* (mean over the columns
    of 1 - KS for a numeric column, 1 - TV for a categorical one) and *Column Pair Trends* (mean
    over pairs of the correlation or contingency similarity; recent versions count only the pairs
    whose real correlation is at least 0.5 or association at least 0.3, and report no score when
    there is none), and their mean as the overall score; each in [0, 1], 1 the best.

    Metadata come from ``schema``: numeric columns are "numerical", binary and categorical ones
    "categorical" (their values mapped to the schema's levels and "other"). SDMetrics is slow on
    many rows, so each table is cut to a random sample of ``max_rows`` rows (``seed``).

    Parameters
    ----------
    real, synth : DataFrame
        The two tables, with the schema's columns.
    schema : Schema
        The tables' schema.
    seed : int, default 0
        Seeds the samples of the rows.
    max_rows : int, default 2000
        The most rows of each table given to SDMetrics.

    Returns
    -------
    dict or str
        ``version``, ``overall``, ``column_shapes``, ``column_pair_trends`` (None where SDMetrics
        gives no number), ``rows`` ({"real": ..., "synthetic": ...}, the rows used), ``sampled``,
        ``seed`` and ``shifted_bins`` (:func:`sdmetrics_shifted_bins` of the two samples); a
        string when sdmetrics is missing or fails (naming only the error's type).
    """
    try:
        import sdmetrics  # optional (pip install "synthdp[quality]"): imported on use
    except ImportError:
        return SDMETRICS_MISSING
    _check_tables(real, synth)
    if not (is_int(max_rows) and max_rows >= 2):
        raise SynthDPError("max_rows must be an integer >= 2")
    rng = np.random.default_rng(seed)
    samples = {}
    for label, frame in (("real", real), ("synthetic", synth)):
        rows = np.arange(len(frame)) if len(frame) <= max_rows else np.sort(rng.choice(len(frame), max_rows, replace=False))
        samples[label] = _for_sdmetrics(frame, schema, rows)
    sdtypes = {name: {"sdtype": "numerical" if name in _numeric_bounds(schema) else "categorical"}
               for name in schema.names}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # its deprecation and data warnings are not ours to print
            try:
                from sdmetrics.reports import QualityReport  # the unified report (sdmetrics >= 0.18)

                report = QualityReport()
                report.generate({"table": samples["real"]}, {"table": samples["synthetic"]},
                                {"tables": {"table": {"columns": sdtypes}}}, verbose=False)
            except ImportError:
                from sdmetrics.reports.single_table import QualityReport as SingleTableReport

                report = SingleTableReport()
                report.generate(samples["real"], samples["synthetic"], {"columns": sdtypes}, verbose=False)
            properties = report.get_properties()
            scores = dict(zip(properties["Property"], properties["Score"]))
            overall = report.get_score()
    except Exception as error:  # a third-party add-on: its failure must not hide the other scores
        return f"failed ({type(error).__name__})"

    def number(value) -> float | None:
        return float(value) if value is not None and math.isfinite(float(value)) else None

    return {
        "version": str(getattr(sdmetrics, "__version__", "unknown")),
        "overall": number(overall),
        "column_shapes": number(scores.get("Column Shapes")),
        "column_pair_trends": number(scores.get("Column Pair Trends")),
        "rows": {label: int(len(sample)) for label, sample in samples.items()},
        "sampled": bool(len(real) > max_rows or len(synth) > max_rows),
        "seed": int(seed),
        "shifted_bins": sdmetrics_shifted_bins(samples["real"], samples["synthetic"], schema),
    }
