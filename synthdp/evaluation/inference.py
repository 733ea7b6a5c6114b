"""Intervals for what analysts compute on synthetic tables: ``synthdp.infer``.

The usual standard error of a statistic computed on one synthetic table ignores the privacy
noise and the synthesis: on PKS at (1, 1e-10), the usual 95 % interval of a column's mean
covered the population mean in 40 % of releases. ``infer`` takes copies of the release that
carry its uncertainty (:meth:`synthdp.SmoothSynthesizer.sample_copies`: a parametric bootstrap
of the whole mechanism, :mod:`synthdp.pipeline.copies`) and combines them by the bootstrap's
rules, which are valid here because each copy is the release's mechanism run again on the fitted
distribution (the bootstrap principle), not an imputation:

* the estimate corrects the fitted distribution's value theta_0 (on the copies' reference
  sample, 20 times the release's rows) by the copies' mean departure from it (a bias the
  mechanism adds, such as the attenuation of a correlation by noise): estimate = 2 theta_0 -
  mean(theta_i);
* the standard error is the copies' standard deviation, sqrt(1 + 1/m) times to count the
  bias correction's own noise;
* the interval is the estimate +- z se (normal; ``level`` two-sided).

Any statistic of a DataFrame that returns a number, a Series, or a one-row or
one-column DataFrame (a mean, ``groupby(...).mean()``, ``corr()``, a fitted model's
coefficients) works; the result has one row per element. Post-processing of released tables.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from synthdp.errors import SynthDPError

REFERENCE_FACTOR = 20  # the reference sample has this many times the release's n rows (its own noise 1/20 of a copy's)


@dataclass(frozen=True)
class Copies:
    """Copies of a release (:func:`synthdp.pipeline.copies.release_copies`) and what :func:`infer` needs beside them.

    Attributes
    ----------
    tables : list of DataFrame
        The copies: each the mechanism run again on a population drawn from the fitted
        distribution, then fitted and sampled.
    reference : DataFrame
        A large sample (REFERENCE_FACTOR x n rows) of the release's own fitted distribution: a
        statistic on it is the fitted distribution's, to within 1/20 of a copy's sampling noise.
    seconds_per_copy : float
        The time each copy took (the release's post-processing, and the statistics of its population).
    """

    tables: list[pd.DataFrame]
    reference: pd.DataFrame
    seconds_per_copy: float

    def __len__(self) -> int:
        return len(self.tables)

    def __iter__(self) -> Iterator[pd.DataFrame]:
        return iter(self.tables)

    def __getitem__(self, index: int) -> pd.DataFrame:
        return self.tables[index]


def _as_series(value: Any) -> pd.Series:
    if isinstance(value, pd.DataFrame):
        return value.stack(future_stack=True) if value.shape[0] > 1 and value.shape[1] > 1 else value.squeeze(
            axis=1 if value.shape[1] == 1 else 0)
    if isinstance(value, pd.Series):
        return value
    array = np.asarray(value, dtype=float)
    if array.ndim == 0:
        return pd.Series([float(array)], index=["value"])
    return pd.Series(array.ravel())


def infer(copies: Copies, statistic: Callable[[pd.DataFrame], Any], level: float = 0.95) -> pd.DataFrame:
    """Estimate, standard error and interval of ``statistic`` from a release's copies.

    Parameters
    ----------
    copies : Copies
        What :meth:`synthdp.SmoothSynthesizer.sample_copies` returns: at least two copies of the
        release and the reference sample of its fitted distribution.
    statistic : callable
        A function of a DataFrame returning a number, a Series or a DataFrame (flattened to
        its elements).
    level : float
        The intervals' two-sided coverage, in (0, 1).

    Returns
    -------
    DataFrame
        One row per element of the statistic: ``estimate``, ``std_error``, ``lower``, ``upper``,
        and ``naive``, the value on the fitted distribution (the reference) before the bias correction.
    """
    if not 0 < level < 1:
        raise SynthDPError("level must be in (0, 1), e.g. 0.95")
    tables = list(getattr(copies, "tables", []))
    reference = getattr(copies, "reference", None)
    if len(tables) < 2 or reference is None:
        raise SynthDPError("infer takes what SmoothSynthesizer.sample_copies returns (at least two copies)")
    own = _as_series(statistic(reference)).astype(float)
    values = pd.concat([_as_series(statistic(table)).reindex(own.index) for table in tables], axis=1).astype(float)
    m = values.shape[1]
    estimate = 2 * own - values.mean(axis=1)
    se = values.std(axis=1, ddof=1) * np.sqrt(1 + 1 / m)
    z = stats.norm.ppf(0.5 + level / 2)
    return pd.DataFrame({"estimate": estimate, "std_error": se, "lower": estimate - z * se,
                         "upper": estimate + z * se, "naive": own})


def copy_paths(output: Path, count: int) -> list[Path]:
    """The files ``synthdp generate --copies`` writes beside OUTPUT.csv: OUTPUT.1.csv ... OUTPUT.M.csv,
    then OUTPUT.reference.csv (the reference sample)."""
    stem, suffix = output.stem, output.suffix or ".csv"
    return [output.with_name(f"{stem}.{k}{suffix}") for k in range(1, count + 1)] + [
        output.with_name(f"{stem}.reference{suffix}")]


def load_copies(output: str | Path, **read_csv: Any) -> Copies:
    """The copies ``synthdp generate --copies M -o OUTPUT.csv`` wrote, as :func:`infer` takes them
    (``read_csv``: keywords for :func:`pandas.read_csv`, e.g. dtypes)."""
    output = Path(output)
    paths = sorted(output.parent.glob(f"{output.stem}.*{output.suffix or '.csv'}"))
    numbered = sorted((int(p.stem.rsplit(".", 1)[1]), p) for p in paths if p.stem.rsplit(".", 1)[1].isdigit())
    reference = output.with_name(f"{output.stem}.reference{output.suffix or '.csv'}")
    if len(numbered) < 2 or not reference.exists():
        raise SynthDPError(f"no copies of '{output}' found (synthdp generate --copies M -o {output.name} writes them)")
    return Copies([pd.read_csv(p, **read_csv) for _, p in numbered], pd.read_csv(reference, **read_csv), float("nan"))
