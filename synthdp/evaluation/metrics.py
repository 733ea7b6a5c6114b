"""Utility of a synthetic table beyond smooth queries, and one report with all of it.

docs/mechanism.md §6 asks that query errors be reported next to what a user notices first in a
synthetic table: how many distinct rows it has, how far each column's distribution is from
the real one, how well it keeps pairwise correlations, and whether a model trained on it
predicts the real data. This module computes those metrics, and :func:`utility_report`
puts them together with the worst-case errors of the papers' smooth-query protocol
(:mod:`synthdp.evaluation.queries`). ``synthdp evaluate`` prints that report.

Every function here **reads the real table**: this is evaluation code, run by the data
owner to judge a release, not part of a release. Its results are not differentially
private and must not be published as if they were. The module never takes part in a
release, and must not import :mod:`synthdp.reader.table`, :mod:`synthdp.privacy.release` or
:mod:`synthdp.cli`.

Natural targets of the benchmark data (the repository's ``data/``, see data/README.md) for
:func:`model_accuracy`:

* ``pks.csv``: ``total_UPDRS`` (and ``motor_UPDRS``), regression. They are kept as columns,
  and each is nearly a linear function of the other, so predicting one with the other among
  the features is easy; drop one from both tables to predict from the voice measures alone.
* ``adult.csv``: ``income`` (``<=50K`` / ``>50K``), classification. Its categorical features
  (and a categorical target) are taken when the schema is given (``configs/adult_schema.json``).
* ``crm.csv`` (goal ``ViolentCrimesPerPop``), ``ctg.csv`` (``CLASS``, ``NSP``) and
  ``wdbc.csv`` (diagnosis) had their natural targets dropped, so they have none.

With a schema (:class:`synthdp.domain.schema.Schema`), the tables may hold binary and categorical
columns: :mod:`synthdp.evaluation.mixed` compares every column and every pair of columns by
total-variation distance, and the numeric metrics run on the numeric columns.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from synthdp.checks import is_int
from synthdp.domain.box import ColumnDomain, parse_bounds
from synthdp.domain.schema import Schema
from synthdp.errors import SynthDPError, near_column
from synthdp.evaluation.mixed import (
    SDMETRICS_ROWS,
    column_tv,
    described_schema,
    numeric_schema,
    pair_scores,
    pearson,
    sdmetrics_quality,
)
from synthdp.evaluation.options import DEFAULT_QUERIES, TASKS
from synthdp.evaluation.queries import (
    SIGMAS,
    answer_queries,
    gaussian_kernel_queries,
    to_unit,
    worst_case_errors,
)

__all__ = [
    "TASKS",
    "MAX_CLASSES",
    "DEFAULT_QUERIES",
    "distinct_rows",
    "ks_distances",
    "correlation_error",
    "STRONG_R",
    "WEAK_R",
    "INVENTED_R",
    "invented_pairs",
    "strong_pairs",
    "model_accuracy",
    "utility_report",
    "format_report",
]

#: ``task="auto"``: a numeric target with integer values and at most this many distinct
#: values in the real table is a class label; any other numeric target is regressed.
MAX_CLASSES = 10

FROM_BOUNDS, FROM_REAL, FROM_SCHEMA = "given bounds", "real min/max", "schema bounds"


# ------------------------------------------------------------------ inputs
def _frame(table, label: str) -> pd.DataFrame:
    if not isinstance(table, pd.DataFrame):
        raise SynthDPError(f"the {label} table must be a pandas DataFrame")
    if len(table) == 0:
        raise SynthDPError(f"the {label} table has no rows")
    if len(table.columns) == 0:
        raise SynthDPError(f"the {label} table has no columns")
    if table.columns.has_duplicates:
        raise SynthDPError(f"the {label} table has a duplicated column name")
    return table


def check_same_columns(real: Sequence[str], synth: Sequence[str]) -> None:
    """The two tables' column names are the same, in any order; else an error naming the first that
    one of them lacks, and how many the two do not share."""
    missing = [name for name in real if name not in synth]
    extra = [name for name in synth if name not in real]
    if missing or extra:
        table, name = ("synthetic", missing[0]) if missing else ("real", extra[0])
        counts = (f"{len(missing)} of the real table's columns are not in the synthetic one, {len(extra)} of the "
                  "synthetic table's not in the real one: " if len(missing) + len(extra) > 1 else "")
        raise SynthDPError(f"the {table} table has no column '{name}' ({counts}the two tables need the same columns)")


def _pair(real, synth) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Both tables with the synthetic columns in the real table's order; the names must match."""
    real, synth = _frame(real, "real"), _frame(synth, "synthetic")
    check_same_columns(list(real.columns), list(synth.columns))
    return real, synth[list(real.columns)]


def _numeric(frame: pd.DataFrame, label: str, columns: Sequence | None = None) -> np.ndarray:
    """The values of ``columns`` (default: all) as floats; every one must be numeric and finite."""
    columns = list(frame.columns) if columns is None else list(columns)
    for name in columns:
        series = frame[name]
        if not pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series):
            raise SynthDPError(f"column '{name}' of the {label} table is not numeric")
    values = frame[columns].to_numpy(dtype=float)
    finite = np.isfinite(values).all(axis=0)
    if not finite.all():
        raise SynthDPError(f"column '{columns[int(np.argmin(finite))]}' of the {label} table has missing or infinite values")
    return values


def _features(frame: pd.DataFrame, label: str, columns: Sequence, levels: Mapping) -> np.ndarray:
    """``columns`` as floats: numeric ones as they are, those in ``levels`` as the index of their level."""
    numeric = [name for name in columns if name not in levels]
    values = np.empty((len(frame), len(columns)))
    if numeric:
        values[:, [list(columns).index(name) for name in numeric]] = _numeric(frame, label, numeric)
    for j, name in enumerate(columns):
        if name in levels:
            values[:, j] = levels[name].level_codes(frame[name])
    return values


def _seed(seed) -> int:
    if not (is_int(seed) and 0 <= seed < 2**32):
        raise SynthDPError("seed must be an integer in [0, 2^32)")
    return int(seed)


# ------------------------------------------------------------------ metrics
def distinct_rows(frame: pd.DataFrame) -> int:
    """The number of distinct rows of a table (rows equal in every column count once).

    Parameters
    ----------
    frame : DataFrame
        The table.

    Returns
    -------
    int
        At most the table's number of rows.
    """
    return int(len(_frame(frame, "input").drop_duplicates()))


def ks_distances(real: pd.DataFrame, synth: pd.DataFrame) -> dict[str, float]:
    """Two-sample Kolmogorov-Smirnov distance of each column, in the real table's column order.

    The distance is ``scipy.stats.ks_2samp(real[c], synth[c]).statistic``: the largest
    difference between the two empirical CDFs, 0 for the same distribution of values and 1
    when every synthetic value lies outside the range of the real ones (or vice versa).

    Parameters
    ----------
    real, synth : DataFrame
        Tables with the same column names (in any order), numeric and finite.

    Returns
    -------
    dict
        Column name to its distance, in [0, 1].
    """
    from scipy.stats import (
        ks_2samp,  # imported on use: scipy.stats slows the command line's start-up (docs/decisions/lazy-imports.md)
    )

    real, synth = _pair(real, synth)
    a, b = _numeric(real, "real"), _numeric(synth, "synthetic")
    return {str(name): float(ks_2samp(a[:, j], b[:, j], method="asymp").statistic)
            for j, name in enumerate(real.columns)}


_correlations = pearson  # Pearson correlation matrix, with 0 for every pair involving a constant column


def correlation_error(real: pd.DataFrame, synth: pd.DataFrame) -> dict:
    """How far the synthetic table's pairwise Pearson correlations are from the real ones.

    Over the d(d-1)/2 pairs of distinct columns, the absolute difference
    ``|corr_real(a, b) - corr_synth(a, b)|`` (between 0 and 2).

    Convention: the correlation of a constant column with any other is undefined; it is
    taken as 0 here. A column constant in the synthetic table but not in the real one (a
    common effect of few distinct rows) so counts its real correlations as the error.

    Parameters
    ----------
    real, synth : DataFrame
        Tables with the same column names (in any order), numeric and finite.

    Returns
    -------
    dict
        ``max``, ``mean`` (None when d = 1: no pair), ``pairs`` (the number of pairs),
        ``worst_pair`` (the two column names of the max, or None), and
        ``constant_columns``: ``{"real": [...], "synthetic": [...]}``.
    """
    real, synth = _pair(real, synth)
    names = [str(c) for c in real.columns]
    corr_real, constant_real = _correlations(_numeric(real, "real"))
    corr_synth, constant_synth = _correlations(_numeric(synth, "synthetic"))
    rows, cols = np.triu_indices(len(names), k=1)
    errors = np.abs(corr_real - corr_synth)[rows, cols]
    worst = int(np.argmax(errors)) if errors.size else None
    return {
        "max": float(errors[worst]) if errors.size else None,
        "mean": float(errors.mean()) if errors.size else None,
        "pairs": int(errors.size),
        "worst_pair": [names[rows[worst]], names[cols[worst]]] if errors.size else None,
        "constant_columns": {"real": [n for n, c in zip(names, constant_real) if c],
                             "synthetic": [n for n, c in zip(names, constant_synth) if c]},
    }


#: A pair of numeric columns is "strong" when its real |Pearson r| exceeds this (issue 18).
STRONG_R = 0.5
WEAK_R = 0.1  # invented_pairs: a real pair below this |r| is unrelated
INVENTED_R = 0.3  # ... and shown as related above this synthetic |r| (Cohen's medium effect)


def _abs_pair_correlations(real: pd.DataFrame, synth: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """|Pearson r| of every pair of distinct columns, real and synthetic, in ``np.triu_indices`` order
    (a constant column's correlations 0)."""
    real, synth = _pair(real, synth)
    corr_real, _ = _correlations(_numeric(real, "real"))
    corr_synth, _ = _correlations(_numeric(synth, "synthetic"))
    rows, cols = np.triu_indices(len(real.columns), k=1)
    return np.abs(corr_real[rows, cols]), np.abs(corr_synth[rows, cols])


def strong_pairs(real: pd.DataFrame, synth: pd.DataFrame, threshold: float = STRONG_R) -> dict:
    """How much of the strong pairwise correlation the synthetic table keeps: the strong-pair ratio.

    Over the pairs of distinct columns whose real ``|Pearson r|`` exceeds ``threshold``, the mean
    ``|r|`` of the synthetic table divided by the mean ``|r|`` of the real one (same pairs): 1 when the
    synthetic table keeps their strength, about 0 when its columns are independent. It counts
    strength only: a pair whose synthetic r has the wrong sign still counts its ``|r|`` (the
    correlation error, :func:`correlation_error`, sees the sign). A constant column's
    correlations are 0, as there.

    Parameters
    ----------
    real, synth : DataFrame
        Tables with the same column names (in any order), numeric and finite.
    threshold : float, default 0.5
        The real ``|r|`` above which a pair is strong, in [0, 1).

    Returns
    -------
    dict
        ``threshold``, ``pairs`` (the number of strong pairs), ``real_mean_abs_r``,
        ``synthetic_mean_abs_r`` and ``ratio`` (the last three None when there is no strong pair).
    """
    if not (isinstance(threshold, (int, float)) and 0 <= threshold < 1):
        raise SynthDPError("threshold must lie in [0, 1)")
    real_r, synth_r = _abs_pair_correlations(real, synth)
    strong = real_r > threshold
    if not strong.any():
        return {"threshold": float(threshold), "pairs": 0, "real_mean_abs_r": None,
                "synthetic_mean_abs_r": None, "ratio": None}
    real_mean, synth_mean = float(real_r[strong].mean()), float(synth_r[strong].mean())
    return {"threshold": float(threshold), "pairs": int(strong.sum()), "real_mean_abs_r": real_mean,
            "synthetic_mean_abs_r": synth_mean, "ratio": synth_mean / real_mean}


def invented_pairs(real: pd.DataFrame, synth: pd.DataFrame, weak: float = WEAK_R, shown: float = INVENTED_R) -> dict:
    """Correlations the synthetic table shows that the real one does not have.

    Over the pairs of distinct columns whose real ``|Pearson r|`` is below ``weak``, how many have
    a synthetic ``|r|`` above ``shown``, and the largest synthetic ``|r|`` among them: 0 and about the
    sampling noise (1 / sqrt(rows)) when the synthetic table invents no relationship. The
    strong-pair ratio (:func:`strong_pairs`) does not see these; a pandas user reading
    ``df.corr()`` does.

    Parameters
    ----------
    real, synth : DataFrame
        Tables with the same column names (in any order), numeric and finite.
    weak : float, default 0.1
        The real ``|r|`` below which a pair is unrelated.
    shown : float, default 0.3
        The synthetic ``|r|`` above which such a pair counts as invented; 0 < ``weak`` <= ``shown`` < 1.

    Returns
    -------
    dict
        ``weak``, ``shown``, ``pairs`` (the number of real pairs below ``weak``), ``invented``
        (how many of them the synthetic table shows above ``shown``) and ``largest_abs_r``
        (None when no pair is below ``weak``).
    """
    if not (isinstance(weak, (int, float)) and isinstance(shown, (int, float)) and 0 < weak <= shown < 1):
        raise SynthDPError("invented_pairs needs 0 < weak <= shown < 1")
    real_r, synth_r = _abs_pair_correlations(real, synth)
    free = real_r < weak
    synth_r = synth_r[free]
    return {"weak": float(weak), "shown": float(shown), "pairs": int(free.sum()),
            "invented": int((synth_r > shown).sum()),
            "largest_abs_r": float(synth_r.max()) if free.any() else None}


def _task(labels: pd.Series, task: str) -> str:
    if task not in TASKS:
        raise SynthDPError(f"task must be one of {TASKS}; got '{task}'")
    if task != "auto":
        return task
    if not pd.api.types.is_numeric_dtype(labels) or pd.api.types.is_bool_dtype(labels):
        return "classification"
    values = labels.to_numpy(dtype=float)
    if np.isfinite(values).all() and (values == np.round(values)).all() and len(np.unique(values)) <= MAX_CLASSES:
        return "classification"
    return "regression"


def _snap(labels: pd.Series, classes: np.ndarray) -> np.ndarray:
    """Numeric labels moved to the nearest class (e.g. a synthetic 0.83 of a 0/1 column -> 1)."""
    values = labels.to_numpy(dtype=float)
    right = np.clip(np.searchsorted(classes, values), 1, len(classes) - 1) if len(classes) > 1 else np.zeros(len(values), int)
    left = np.maximum(right - 1, 0)
    nearer_left = np.abs(values - classes[left]) <= np.abs(values - classes[right])
    return np.where(nearer_left, classes[left], classes[right])


def model_accuracy(
    real: pd.DataFrame,
    synth: pd.DataFrame,
    target: str,
    *,
    task: str = "auto",
    test_share: float = 0.3,
    seed: int = 0,
    schema: Schema | Mapping | None = None,
) -> dict:
    """Train on synthetic rows, test on real rows; and train on real rows for comparison.

    The real rows are split once (``seed``) into a training part (70 % by default) and a
    held-out test part (30 %). Two models of the same kind predict ``target`` from every
    other column:

    * ``train_synth_test_real``: trained on all synthetic rows, scored on the held-out real rows;
    * ``train_real_test_real``: trained on the real training part, scored on the same rows.

    The synthetic table was generated from every real row, held-out ones included (as a
    released table would be), so the first number is not a clean out-of-sample score: read it
    against the second. ``baseline`` is the score of a constant prediction learnt from the
    real training part (the mean, for regression: R^2 about 0; the most frequent class).

    Parameters
    ----------
    real, synth : DataFrame
        The same column names; every column but the target numeric and finite (but the binary
        and categorical columns of ``schema``).
    target : str
        The column to predict.
    task : {"auto", "regression", "classification"}, default "auto"
        "auto": classification if the real target is not numeric or is a binary or categorical
        column of ``schema``, or has integer values only
        and at most :data:`MAX_CLASSES` distinct ones; regression otherwise. Regression scores
        are R^2 (1 is perfect, 0 is predicting the mean); classification scores are accuracy.
        For classification with numeric labels, synthetic labels are moved to the nearest
        class seen in the real table (a synthesiser may return 0.8 for a 0/1 column).
    test_share : float, default 0.3
        Share of the real rows held out for testing, in (0, 1).
    seed : int, default 0
        Seed of the split and of the models.
    schema : Schema or mapping, optional
        The tables' schema (or a schema file's content): its binary and categorical columns
        are features coded by their levels (a value outside them is "other") and given to the
        model as categorical features; such a target is a class label.

    Returns
    -------
    dict
        ``target``, ``task``, ``metric`` ("R^2" or "accuracy"), ``model`` (the class name
        of the scikit-learn estimator), the three scores, and the row counts ``train_synth_rows``,
        ``train_real_rows``, ``test_rows``.

    Notes
    -----
    The models are scikit-learn's histogram gradient boosting (``HistGradientBoostingRegressor``
    or ``...Classifier``, default settings): they need no scaling and capture non-linear
    effects. When the synthetic (or real training) labels hold a single class, that model
    predicts it for every row.
    """
    from sklearn.dummy import DummyClassifier, DummyRegressor
    from sklearn.ensemble import (
        HistGradientBoostingClassifier,
        HistGradientBoostingRegressor,
    )
    from sklearn.metrics import accuracy_score, r2_score
    from sklearn.model_selection import train_test_split
    from threadpoolctl import threadpool_limits  # a dependency of scikit-learn

    real, synth = _pair(real, synth)
    if target not in real.columns:
        raise SynthDPError(f"target column '{target}' is not a column of the tables{near_column(target, list(real.columns))}")
    if not (isinstance(test_share, (int, float)) and 0 < test_share < 1):
        raise SynthDPError("test_share must lie in (0, 1)")
    seed = _seed(seed)
    levels = {} if schema is None else {column.name: column.scoring()
                                        for column in described_schema(schema, real).categorical}
    features = [c for c in real.columns if c != target]
    if not features:
        raise SynthDPError("model accuracy needs at least one column besides the target")
    x_real, x_synth = _features(real, "real", features, levels), _features(synth, "synthetic", features, levels)
    # categorical features the histogram models can take as such (at most 255 levels)
    categorical = [name in levels and len(levels[name].all_levels) <= 255 for name in features]
    y_real, y_synth = real[target], synth[target]
    if target in levels:
        if task == "regression":
            raise SynthDPError(f"task 'regression' needs a numeric target; column '{target}' is categorical")
        names = np.asarray(levels[target].all_levels, dtype=object)
        y_real = pd.Series(names[levels[target].level_codes(y_real)], dtype=object)
        y_synth = pd.Series(names[levels[target].level_codes(y_synth)], dtype=object)
    if y_real.isna().any() or y_synth.isna().any():
        raise SynthDPError(f"target column '{target}' has missing values")
    task = _task(y_real, task)
    n_test = int(math.ceil(test_share * len(real)))
    if n_test < 1 or len(real) - n_test < 1:
        raise SynthDPError("the real table needs at least 2 rows for a train/test split")

    if task == "regression":
        y_real = _numeric(real, "real", [target])[:, 0]
        y_synth = _numeric(synth, "synthetic", [target])[:, 0]
        stratify = None
    else:
        numeric_labels = pd.api.types.is_numeric_dtype(y_real) and not pd.api.types.is_bool_dtype(y_real)
        if numeric_labels and not np.all(np.mod(y_real.to_numpy(dtype=float), 1) == 0):
            raise SynthDPError(f"task 'classification' needs class labels; column '{target}' has fractional "
                               "values: use task 'regression' (or give no task)")
        if numeric_labels and pd.api.types.is_numeric_dtype(y_synth) and not pd.api.types.is_bool_dtype(y_synth):
            y_real = y_real.to_numpy(dtype=float)
            y_synth = _snap(y_synth, np.unique(y_real))
        else:  # labels compared as text
            y_real, y_synth = y_real.astype(str).to_numpy(), y_synth.astype(str).to_numpy()
        classes, counts = np.unique(y_real, return_counts=True)
        # stratify when every class can appear on both sides of the split
        can_stratify = counts.min() >= 2 and n_test >= len(classes) and len(real) - n_test >= len(classes)
        stratify = y_real if can_stratify and len(classes) > 1 else None
    x_train, x_test, y_train, y_test = train_test_split(
        x_real, y_real, test_size=n_test, random_state=seed, stratify=stratify)

    kinds = {"categorical_features": categorical} if any(categorical) else {}

    def fit_score(x, y) -> tuple[float, str]:
        if task == "regression":
            model = HistGradientBoostingRegressor(random_state=seed, **kinds)
            return float(r2_score(y_test, model.fit(x, y).predict(x_test))), type(model).__name__
        if len(np.unique(y)) < 2:
            model = DummyClassifier(strategy="most_frequent")
        else:
            model = HistGradientBoostingClassifier(random_state=seed, **kinds)
        return float(accuracy_score(y_test, model.fit(x, y).predict(x_test))), type(model).__name__

    # One OpenMP thread: on tables of this size the thread start-up costs more than it saves,
    # and the scores do not change (measured: docs/decisions/metrics-openmp.md).
    with threadpool_limits(limits=1, user_api="openmp"):
        synth_score, synth_model = fit_score(x_synth, y_synth)
        real_score, real_model = fit_score(x_train, y_train)
    dummy = DummyRegressor() if task == "regression" else DummyClassifier(strategy="most_frequent")
    predictions = dummy.fit(x_train, y_train).predict(x_test)
    baseline = r2_score(y_test, predictions) if task == "regression" else accuracy_score(y_test, predictions)
    return {
        "target": str(target),
        "task": task,
        "metric": "R^2" if task == "regression" else "accuracy",
        "model": real_model if real_model == synth_model else f"{real_model} (synthetic: {synth_model})",
        "train_synth_test_real": synth_score,
        "train_real_test_real": real_score,
        "baseline": float(baseline),
        "train_synth_rows": int(len(x_synth)),
        "train_real_rows": int(len(x_train)),
        "test_rows": int(len(x_test)),
    }


# ------------------------------------------------------------------ the report
def _time_type(column: ColumnDomain) -> dict:
    """``{"type": "date"}`` (or datetime) for a date or datetime column, whose bounds are days or
    seconds since 1970-01-01 (the HTML page draws them as dates); nothing for the others."""
    return {"type": column.temporal} if column.temporal else {}


def _normalisation(real: pd.DataFrame, values: np.ndarray, bounds: Mapping | None) -> dict[str, dict]:
    """Per column: the interval mapped onto [-1, 1], where it came from and, for a date or datetime
    column, its ``type``."""
    names = [str(c) for c in real.columns]
    given = parse_bounds(bounds, names) if bounds is not None else {}
    result = {}
    for j, name in enumerate(names):
        if name in given:
            result[name] = {"bounds": [given[name].lower, given[name].upper], "source": FROM_BOUNDS,
                            **_time_type(given[name])}
            continue
        lower, upper = float(values[:, j].min()), float(values[:, j].max())
        if lower == upper:  # constant in the real table: an interval centred on its value
            lower, upper = lower - 1.0, upper + 1.0
        if not math.isfinite(upper - lower):  # values near +-1.8e308: no width to map onto [-1, 1]
            raise SynthDPError(f"column '{name}' of the real table has a range too wide to compare (its max minus its "
                               "min overflows): rescale it, or give its bounds (--bounds)")
        result[name] = {"bounds": [lower, upper], "source": FROM_REAL}
    return result


NOT_PRIVATE_SCORES = ("these scores are computed from the real table and are NOT differentially private: share them "
                      "only as you would share the real table")


def utility_report(
    real: pd.DataFrame,
    synth: pd.DataFrame,
    bounds: Mapping[str, object] | None = None,
    target: str | None = None,
    *,
    task: str = "auto",
    n_queries: int = DEFAULT_QUERIES,
    n_kernels: int = 10,
    sigmas: Sequence[float] = SIGMAS,
    seed: int = 0,
    n_jobs: int | None = None,
    schema: Schema | Mapping | None = None,
    sdmetrics: bool = True,
) -> dict:
    """Every utility metric of a synthetic table against the real one, as a plain dict.

    This reads the real table, including (without ``bounds``) its min and max: it is
    evaluation by the data owner, not a release, and its output is not differentially private
    (it says so: ``differentially_private`` False and a ``note``, which ``synthdp evaluate`` prints first).

    Parameters
    ----------
    real, synth : DataFrame
        Tables with the same column names (in any order; the report uses the real table's
        order): numeric and finite, but the binary and categorical columns of ``schema``.
    bounds : mapping, optional
        Per-column intervals, as in a bounds file (``{"age": [0, 120], "visits": {"bounds":
        [0, 50], "type": "integer"}}``), used to map BOTH tables onto [-1, 1]^d for the smooth
        queries (values outside are clipped). Columns it omits use the real table's min and max
        (a column constant in the real table, of value v, uses [v - 1, v + 1]). Use the bounds
        of the release, so that the queries are those the mechanism was built for.
    target : str, optional
        A column to predict (see :func:`model_accuracy`); None skips the model.
    task : {"auto", "regression", "classification"}, default "auto"
        Passed to :func:`model_accuracy`.
    n_queries, n_kernels : int, default 1000 and 10
        The smooth-query protocol (:mod:`synthdp.evaluation.queries`): Q random queries of J Gaussian
        kernels each (the paper: Q = 10 000, J = 10), at each width in ``sigmas``.
    sigmas : sequence of float, default (2.0, 4.0, 6.0, 8.0, 10.0)
        Kernel widths sigma > 0, in the units of [-1, 1]^d (both tables mapped there by the bounds).
    seed : int, default 0
        Seeds the queries and the model's train/test split: the same seed gives the same report.
    n_jobs : int, optional
        Threads for answering the queries (default: every CPU).
    schema : Schema or mapping, optional
        For a table with binary or categorical columns (instead of ``bounds``): a
        :class:`synthdp.domain.schema.Schema` or a schema file's content. Its numeric columns'
        bounds normalise them; the numeric metrics (KS, correlation, smooth queries) run on the
        numeric columns only, and are None when there is none.
    sdmetrics : bool, default True
        Also run SDMetrics' QualityReport when the optional package is installed
        (:func:`synthdp.evaluation.mixed.sdmetrics_quality`, on at most 2000 rows of each table).

    Returns
    -------
    dict
        ``rows`` and ``distinct_rows`` ({"real": ..., "synthetic": ...}); ``columns``
        ({"numeric": [...], "categorical": [...]}); ``ks`` (``per_column``, ``max``, ``mean``,
        ``worst_column``); ``correlation`` (:func:`correlation_error`, with
        ``strong_pairs``: :func:`strong_pairs`, and ``invented_pairs``: :func:`invented_pairs`); ``model``
        (:func:`model_accuracy`, or None); ``smooth_queries`` (``n_queries``, ``n_kernels``,
        ``seed``, ``sigmas``, the worst-case ``absolute``, ``absolute_scaled`` and ``relative``
        errors per sigma, and the ``normalisation`` of each numeric column); ``tv``
        (:func:`synthdp.evaluation.mixed.column_tv`: each column over its levels or 16 bins of
        its normalisation bounds); ``pairs`` (:func:`synthdp.evaluation.mixed.pair_scores`);
        ``similarity`` (``column_shapes``: the mean over columns of 1 - KS for a numeric column
        and 1 - TV for a categorical one; ``column_pair_trends``: the mean pair similarity;
        SDMetrics' scores of the same names, computed here on every row); ``sdmetrics``
        (SDMetrics' own scores, a string saying why there are none, or None when not asked).
    """
    real, synth = _pair(real, synth)
    seed = _seed(seed)
    if schema is not None and bounds is not None:
        raise SynthDPError("give bounds or a schema, not both (the schema holds the numeric columns' bounds)")
    described = described_schema(schema, real) if schema is not None else None
    # the table's binary and categorical columns (not a schema's internal ones, if it has any)
    categorical = [] if described is None else [column.name for column in described.categorical
                                                if column.name in real.columns]
    numeric = [str(c) for c in real.columns if c not in categorical]
    for name, value in (("n_queries", n_queries), ("n_kernels", n_kernels)):
        if not (is_int(value) and value >= 1):
            raise SynthDPError(f"{name} must be an integer >= 1")
    sigma_list = [float(s) for s in sigmas]
    if not sigma_list or not all(math.isfinite(s) and s > 0 for s in sigma_list):
        raise SynthDPError("sigmas must be a non-empty list of numbers > 0")
    real_values, synth_values = _numeric(real, "real", numeric), _numeric(synth, "synthetic", numeric)
    if target is not None and target not in real.columns:
        raise SynthDPError(f"target column '{target}' is not a column of the tables{near_column(target, list(real.columns))}")

    ks_section = correlation = smooth = None
    normalisation: dict[str, dict] = {}
    ks_values: dict[str, float] = {}
    if numeric:
        if described is None:
            normalisation = _normalisation(real, real_values, bounds)
        else:
            given = {column.name: column for column in described.numeric.columns}
            normalisation = {name: {"bounds": [given[name].lower, given[name].upper], "source": FROM_SCHEMA,
                                    **_time_type(given[name])} for name in numeric}
        lower = [column["bounds"][0] for column in normalisation.values()]
        upper = [column["bounds"][1] for column in normalisation.values()]
        queries = gaussian_kernel_queries(len(numeric), int(n_queries), np.random.default_rng(seed), int(n_kernels))
        true = answer_queries(to_unit(real_values, lower, upper), queries, sigma_list, n_jobs=n_jobs)
        answers = answer_queries(to_unit(synth_values, lower, upper), queries, sigma_list, n_jobs=n_jobs)
        errors = worst_case_errors(true, answers, queries.alpha)
        smooth = {"n_queries": int(n_queries), "n_kernels": int(n_kernels), "seed": seed, "sigmas": sigma_list,
                  **errors.to_dict(), "normalisation": normalisation}
        ks = ks_values = ks_distances(real[numeric], synth[numeric])
        worst_column = max(ks, key=lambda name: ks[name])
        ks_section = {"per_column": ks, "max": ks[worst_column], "mean": float(np.mean(list(ks.values()))),
                      "worst_column": worst_column}
        correlation = correlation_error(real[numeric], synth[numeric])
        correlation["strong_pairs"] = strong_pairs(real[numeric], synth[numeric])
        correlation["invented_pairs"] = invented_pairs(real[numeric], synth[numeric])

    if described is None:
        described = numeric_schema({name: column["bounds"] for name, column in normalisation.items()})
    tv = column_tv(real, synth, described)
    pairs = pair_scores(real, synth, described)
    shapes = [1 - ks_values.get(name, value) for name, value in tv["per_column"].items()]
    similarities = [pair["similarity"] for pair in pairs["per_pair"]]
    return {
        "differentially_private": False, "note": NOT_PRIVATE_SCORES,
        "rows": {"real": int(len(real)), "synthetic": int(len(synth))},
        "distinct_rows": {"real": distinct_rows(real), "synthetic": distinct_rows(synth)},
        "columns": {"numeric": numeric, "categorical": categorical},
        "ks": ks_section,
        "correlation": correlation,
        "model": None if target is None else model_accuracy(real, synth, target, task=task, seed=seed,
                                                            schema=None if schema is None else described),
        "smooth_queries": smooth,
        "tv": tv,
        "pairs": pairs,
        "similarity": {"column_shapes": float(np.mean(shapes)),
                       "column_pair_trends": float(np.mean(similarities)) if similarities else None},
        "sdmetrics": sdmetrics_quality(real, synth, described, seed=seed) if sdmetrics else None,
    }


# ------------------------------------------------------------------ text
def _number(value) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, (int, np.integer)):
        return str(value)
    if not math.isfinite(value):
        return "inf" if value > 0 else ("-inf" if value < 0 else "nan")
    return f"{value:.4f}" if abs(value) >= 1e-4 or value == 0 else f"{value:.2e}"


def _table(header: list[str], rows: list[list], indent: str = "  ", text_columns: int = 1) -> list[str]:
    """The first ``text_columns`` columns left-aligned, the others right-aligned, two spaces apart."""
    widths = [max(len(str(row[k])) for row in [header, *rows]) for k in range(len(header))]
    lines = []
    for row in [header, *rows]:
        cells = [str(c).ljust(w) if k < text_columns else str(c).rjust(w)
                 for k, (c, w) in enumerate(zip(row, widths))]
        lines.append(indent + "  ".join(cells).rstrip())
    return lines


INTERVAL_COLUMNS = ["statistic", "real", "estimate", "lower", "upper", "holds", "pair measured"]


def interval_row(row: dict, number: Callable[[Any], Any] = lambda value: value) -> list:
    """A row of the copies' intervals as the printed report and the page show it (:data:`INTERVAL_COLUMNS`),
    from a row of :func:`synthdp.evaluation.inference.check_against_real`; ``number`` formats the numbers.

    Parameters
    ----------
    row : dict
        ``statistic``, ``real``, ``estimate``, ``lower``, ``upper``, ``holds`` (None: the real value
        or the interval is undefined) and ``measured``.
    number : callable, optional
        How a number is shown (default: as it is).

    Returns
    -------
    list
        The cells, the verdicts as "yes", "NO" or "n/a".
    """
    holds = "n/a" if row["holds"] is None else "yes" if row["holds"] else "NO"
    return [row["statistic"], *(number(row[key]) for key in ("real", "estimate", "lower", "upper")), holds,
            "yes" if row.get("measured", True) else "no"]


def format_report(report: dict) -> str:
    """The report of :func:`utility_report` as an aligned text table (what ``synthdp evaluate`` prints).

    Parameters
    ----------
    report : dict
        :func:`utility_report`'s output.

    Returns
    -------
    str
        Lines of text, the real and synthetic values side by side.
    """
    lines = _table(["", "real", "synthetic"], [
        ["rows", report["rows"]["real"], report["rows"]["synthetic"]],
        ["distinct rows", report["distinct_rows"]["real"], report["distinct_rows"]["synthetic"]],
    ], indent="")
    lines += _format_distances(report)

    ks = report["ks"]
    if ks is not None:
        lines += ["", "Kolmogorov-Smirnov distance per numeric column (0: same distribution, 1: disjoint)",
                  f"  max {_number(ks['max'])} ({ks['worst_column']}), mean {_number(ks['mean'])}"]
        lines += _table(["column", "KS"], [[name, _number(value)] for name, value in ks["per_column"].items()])

    corr = report["correlation"]
    if corr is not None:
        lines += ["", f"pairwise correlation error, |Pearson real - synthetic| over {corr['pairs']} pairs of numeric "
                      "columns (0 to 2)"]
    if corr is not None and corr["pairs"]:
        a, b = corr["worst_pair"]
        lines.append(f"  max {_number(corr['max'])} ({a}, {b}), mean {_number(corr['mean'])}")
    strong = None if corr is None else corr.get("strong_pairs")
    if strong is not None:
        if strong["pairs"]:
            lines.append(f"  strong pairs (real |r| > {strong['threshold']:g}): {strong['pairs']}; mean |r| real "
                         f"{_number(strong['real_mean_abs_r'])}, synthetic {_number(strong['synthetic_mean_abs_r'])}, "
                         f"ratio {_number(strong['ratio'])}")
        else:
            lines.append(f"  strong pairs (real |r| > {strong['threshold']:g}): none")
    invented = None if corr is None else corr.get("invented_pairs")
    if invented is not None and invented["pairs"]:
        lines.append(f"  invented pairs (real |r| < {invented['weak']:g}, synthetic |r| > {invented['shown']:g}): "
                     f"{invented['invented']} of {invented['pairs']}; largest synthetic |r| of those pairs "
                     f"{_number(invented['largest_abs_r'])}")
    for side, label in (("real", "real"), ("synthetic", "synthetic")):
        if corr is not None and corr["constant_columns"][side]:
            lines.append(f"  constant in the {label} table (correlations taken as 0): "
                         + ", ".join(corr["constant_columns"][side]))

    model = report["model"]
    if model is not None:
        lines += ["", f"model: predict {model['target']} ({model['task']}, {model['metric']}; {model['model']})"]
        lines += _table(["train on", "test on", model["metric"]], [
            [f"synthetic ({model['train_synth_rows']} rows)", f"real held out ({model['test_rows']} rows)",
             _number(model["train_synth_test_real"])],
            [f"real ({model['train_real_rows']} rows)", f"real held out ({model['test_rows']} rows)",
             _number(model["train_real_test_real"])],
            ["constant prediction", f"real held out ({model['test_rows']} rows)", _number(model["baseline"])],
        ], text_columns=2)

    queries = report["smooth_queries"]
    if queries is not None:
        used = {column["source"] for column in queries["normalisation"].values()}
        sources = [label for source, label in ((FROM_BOUNDS, "the given bounds"), (FROM_SCHEMA, "the schema's bounds"),
                                               (FROM_REAL, "the real min/max")) if source in used]
        lines += ["", f"smooth queries: worst case over {queries['n_queries']} random sums of {queries['n_kernels']} "
                      f"Gaussian kernels on [-1, 1]^d of the numeric columns (seed {queries['seed']}; columns mapped "
                      f"to [-1, 1] by {' and '.join(sources)})"]
        lines += _table(["sigma", "absolute", "absolute / sum(alpha)", "relative"], [
            [f"{sigma:g}", _number(a), _number(s), _number(r)]
            for sigma, a, s, r in zip(queries["sigmas"], queries["absolute"], queries["absolute_scaled"],
                                      queries["relative"])
        ])
    lines += _format_sdmetrics(report.get("sdmetrics"))
    lines += _format_intervals(report.get("intervals"))
    return "\n".join(lines) + "\n"


def _format_intervals(intervals: dict | None) -> list[str]:
    """The check of the copies' intervals against the real table (evaluate --copies)."""
    if intervals is None:
        return []
    lines = ["", f"intervals from {intervals['copies']} copies ({intervals['level']:.0%}, synthdp.infer): "
                 f"{intervals['held']} of {intervals['checked']} hold the real table's value"]
    lines += _table(INTERVAL_COLUMNS, [interval_row(row, _number) for row in intervals["statistics"]
    ], text_columns=1)
    return lines


#: Pairs listed by the text report, the worst first.
WORST_PAIRS = 5


def _format_distances(report: dict) -> list[str]:
    """The total-variation sections of the text report."""
    tv, pairs, similarity = report.get("tv"), report.get("pairs"), report.get("similarity")
    if tv is None or pairs is None or similarity is None:
        return []
    categorical = set(report["columns"]["categorical"])
    lines = ["", "total-variation distance per column (0: same distribution, 1: disjoint), over the levels of a",
             f"categorical column and {tv['bins']} equal-width bins of a numeric column's bounds",
             f"  max {_number(tv['max'])} ({tv['worst_column']}), mean {_number(tv['mean'])}"]
    lines += _table(["column", "type", "TV"], [[name, "categorical" if name in categorical else "numeric", _number(value)]
                                               for name, value in tv["per_column"].items()], text_columns=2)
    lines += ["", f"column pairs: 2-way total-variation distance over {pairs['tv']['pairs']} pairs (same cells)"]
    if pairs["tv"]["pairs"]:
        a, b = pairs["tv"]["worst_pair"]
        lines.append(f"  max {_number(pairs['tv']['worst'])} ({a}, {b}), mean {_number(pairs['tv']['mean'])}")
        for key, text in (("contingency", "contingency similarity, 1 - TV, over the pairs with a categorical column"),
                          ("correlation", "correlation similarity, 1 - |r real - r synthetic| / 2, over numeric pairs")):
            section = pairs[key]
            if section["pairs"]:
                a, b = section["worst_pair"]
                lines.append(f"  {text} ({section['pairs']}): mean {_number(section['mean'])}, "
                             f"min {_number(section['worst'])} ({a}, {b})")
        worst = sorted(pairs["per_pair"], key=lambda pair: -pair["tv"])[:WORST_PAIRS]
        lines += _table(["column", "column", "TV", "similarity"], [
            [*pair["columns"], _number(pair["tv"]), f"{_number(pair['similarity'])} ({pair['metric']})"]
            for pair in worst], text_columns=2)
    lines += ["", "similarity scores in the manner of SDMetrics, computed here on every row (0 to 1, 1 the best)"]
    lines += [f"  column shapes       {_number(similarity['column_shapes']):>6}  (mean of 1 - KS, numeric columns, "
              "and 1 - TV, categorical columns)",
              f"  column pair trends  {_number(similarity['column_pair_trends']):>6}  (mean pair similarity)"]
    return lines


def _format_sdmetrics(scores) -> list[str]:
    if scores is None:
        return []
    if isinstance(scores, str):
        return ["", f"SDMetrics QualityReport: {scores}"]
    rows = scores["rows"]
    sample = (f"a random sample of {rows['real']} real and {rows['synthetic']} synthetic rows, at most "
              f"{SDMETRICS_ROWS} of each, seed {scores['seed']}" if scores["sampled"] else "every row")
    lines = ["", f"SDMetrics QualityReport (sdmetrics {scores['version']}; on {sample}; 0 to 1, 1 the best)"]
    lines += _table(["score", ""], [["overall", _number(scores["overall"])],
                                    ["Column Shapes", _number(scores["column_shapes"])],
                                    ["Column Pair Trends", _number(scores["column_pair_trends"])]])
    if scores.get("shifted_bins"):
        lines.append(f"  note: SDMetrics bins each table's numeric columns on its own range, and the samples' ranges "
                     f"differ for {', '.join(scores['shifted_bins'])}: their pairs with categorical columns may score "
                     "low for that alone (docs/relationships.md, SDMetrics' bins)")
    return lines
