"""Intervals for what analysts compute on synthetic tables: ``synthdp.infer``.

The usual standard error of a statistic computed on one synthetic table ignores the privacy
noise and the synthesis: on PKS at (1, 1e-10), the usual 95 % interval of a column's mean
covered the population mean in 40 % of releases. ``infer`` takes copies of the release that
carry its uncertainty (:meth:`synthdp.SmoothSynthesizer.sample_copies`: a parametric bootstrap
of the whole mechanism, :mod:`synthdp.pipeline.copies`) and combines them by the bootstrap's
rules, which are valid here because each copy is the release's mechanism run again on the fitted
distribution (the bootstrap principle), not an imputation:

* the estimate corrects the fitted distribution's value theta_0 (the statistic's mean over the
  copies' reference sample cut into blocks of a copy's rows, 20 blocks at the default: the value a
  table of that many rows drawn from the fitted distribution has on average, so that a statistic
  that grows with the rows, a sum or a group's count, is compared like with like) by the copies'
  mean departure from it (a bias the mechanism adds, such as the attenuation of a correlation by
  noise): estimate = 2 theta_0 - mean(theta_i);
* the standard error is the copies' standard deviation, sqrt(1 + 1/m) times to count the
  bias correction's own noise;
* the interval is the estimate +- t se, t the ``level`` two-sided quantile of Student's t with
  m - 1 degrees of freedom: the standard error is itself estimated from the m copies (with
  m = 20, t = 2.09 where the normal's z = 1.96 would cover about 94 %).

Any statistic of a DataFrame that returns a number, a Series, or a one-row or
one-column DataFrame (a mean, ``groupby(...).mean()``, ``corr()``, a fitted model's
coefficients) works; the result has one row per element. Post-processing of released tables.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import numbers
import re
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from synthdp.checks import is_finite_number, is_int
from synthdp.errors import InferenceWarning, SynthDPError, listed, near_column
from synthdp.evaluation.options import MAX_COPIES
from synthdp.files import read_text_file

REFERENCE_FACTOR = 20  # the reference sample has this many times the release's n rows (its own noise 1/20 of a copy's)
NO_DEPENDENCE = (
    "the release measured no dependence between columns (no pairs release, no moment of two columns with noise "
    "below any relation: at this n and budget its columns are drawn independently, or related by noise alone), "
    "and so are its copies': a correlation, a regression, a group mean or any statistic of two or more columns "
    "has no interval (NaN: the release holds nothing above its noise on it, and copies drawn independently by "
    "construction would centre one on independence); intervals of one column's statistics are valid "
    "(docs/inference.md)")
UNMEASURED = ("the release measured no dependence between {pairs} above its noise (at this n and budget; "
              "synthdp.infer's 'measured' column is False where a statistic reads such a pair), and neither do its "
              "copies: {elements} read such a pair and have no interval (NaN; the estimate is the model's value, "
              "which sets that dependence from the measured pairs or to none, not from the data: docs/inference.md)")


@dataclass(frozen=True)
class Copies:
    """Copies of a release (:func:`synthdp.pipeline.copies.release_copies`) and what :func:`infer` needs beside them.

    Parameters
    ----------
    tables : list of DataFrame
        The copies: each the mechanism run again on a population drawn from the fitted
        distribution, then fitted and sampled.
    reference : DataFrame
        A large sample (REFERENCE_FACTOR x the larger of n and a copy's rows) of the release's own
        fitted distribution: a statistic's mean over its blocks of a copy's rows is the fitted
        distribution's value for a table of that size, to within 1/20 of a copy's sampling noise.
    seconds_per_copy : float
        The time each copy took (the release's post-processing, and the statistics of its population).
    dependence : bool
        Whether the release measured any dependence between columns (a pairs release, selected
        pairs, or a moment of two or more columns). Where it measured none, every copy's columns
        are independent too: :func:`infer` then warns (NO_DEPENDENCE) that intervals of
        correlations, regressions and group statistics say nothing about the data.
    measured : frozenset of frozensets of two column names, or None
        The pairs of columns whose dependence the release measured
        (:func:`synthdp.pipeline.copies.measured_pairs`); every other pair is independent in the
        fitted distribution and in every copy, and :func:`infer` marks the statistics that read one.
        None: not known (copies written before it was recorded), taken as every pair where
        ``dependence`` and none where not.
    """

    tables: list[pd.DataFrame]
    reference: pd.DataFrame
    seconds_per_copy: float
    dependence: bool = True
    measured: frozenset[frozenset[str]] | None = None

    def __len__(self) -> int:
        return len(self.tables)

    def __iter__(self) -> Iterator[pd.DataFrame]:
        return iter(self.tables)

    def __getitem__(self, index: int) -> pd.DataFrame:
        return self.tables[index]


def _as_series(value: Any, where: str = "a table") -> pd.Series:
    """The statistic's ``value`` on ``where`` as a float Series, one element each: a missing result (``None``,
    pandas' ``NA``, as a mean of an ``Int64`` column with no cell gives it; ``NaN``) as NaN, as a float
    column's; a value that is no number (a date, a duration, text) a one-line error naming ``where``."""
    if isinstance(value, pd.DataFrame):
        series = value.stack(future_stack=True) if value.shape[0] > 1 and value.shape[1] > 1 else value.squeeze(
            axis=1 if value.shape[1] == 1 else 0)
    elif isinstance(value, pd.Series):
        series = value
    elif value is None or value is pd.NA:
        return pd.Series([np.nan], index=["value"])
    else:
        try:
            array = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            raise _not_numbers(value, where) from None
        if array.ndim == 0:
            return pd.Series([float(array)], index=["value"])
        return pd.Series(array.ravel())
    if series.dtype == object:  # pandas' NA beside numbers (an Int64 group mean stacked with others): NaN
        series = series.where(series.notna(), np.nan)
    try:
        return series.astype(float)
    except (TypeError, ValueError):
        raise _not_numbers(series, where) from None


def _not_numbers(value: Any, where: str) -> SynthDPError:
    """The error for a statistic whose value on ``where`` is no number (its type named, not its value)."""
    kind = value.dtype if isinstance(value, pd.Series) else type(value).__name__
    return SynthDPError(f"the statistic returned {kind} on {where}, not numbers: infer takes a number, a Series or a "
                        "DataFrame of numbers (a date as a number, e.g. (t['day'] - pd.Timestamp('1970-01-01')).dt.days)")


def _aligned(series: pd.Series, index: pd.Index, where: str) -> pd.Series:
    """``series`` (the statistic's elements on ``where``) on the elements ``index``: by name, or by
    place where two elements share a name and both have the same names in the same order; elements
    of one name that do not line up (a group absent from one of two group statistics) are an error."""
    if not (series.index.has_duplicates or index.has_duplicates):
        return series.reindex(index)
    if series.index.equals(index):
        return series
    shared = index if index.has_duplicates else series.index
    name = shared[shared.duplicated()][0]
    raise SynthDPError(f"the statistic has two or more elements named '{name}', and its elements on {where} are "
                       "not those on the first block of the copies' reference sample: give each element its own name "
                       "(pd.concat([...], keys=[...]) names each part's elements by its key)")


def _on(statistic: Callable[[pd.DataFrame], Any], table: pd.DataFrame, where: str) -> pd.Series:
    """The statistic's elements on ``table``; an error the statistic raises keeps its type and says
    ``where`` (which copy) in a note."""
    try:
        value = statistic(table)
    except Exception as error:
        error.add_note(f"(synthdp.infer: the statistic raised this on {where})")
        raise
    return _as_series(value, where)


def infer(copies: Copies, statistic: Callable[[pd.DataFrame], Any], level: float = 0.95,
          limits: tuple[float, float] | Mapping[Any, tuple[float, float]] | None = None) -> pd.DataFrame:
    """Estimate, standard error and interval of ``statistic`` from a release's copies.

    Parameters
    ----------
    copies : Copies
        What :meth:`synthdp.SmoothSynthesizer.sample_copies` returns: at least two copies of the
        release and the reference sample of its fitted distribution.
    statistic : callable
        A function of a DataFrame returning a number, a Series or a DataFrame (flattened to
        its elements).
    level : float, default 0.95
        The intervals' two-sided coverage, in (0, 1).
    limits : (low, high), or a mapping from an element's name to its (low, high), optional
        The values the statistic can take (a share: (0, 1); a correlation: (-1, 1)): the estimate
        and the interval's ends are put into them. The bias correction below can carry an
        estimate past them (a correlation of 1.1 where the copies attenuate a strong one), and an
        interval end past them holds no value the statistic can take, so the coverage is the
        same. Default: the statistic's own ``limits`` attribute, as :func:`common_statistics`
        sets it, else none.

    Returns
    -------
    DataFrame
        One row per element of the statistic: ``estimate``, ``std_error``, ``lower``, ``upper``;
        ``naive``, the value on the fitted distribution (the mean over the reference's blocks of a
        copy's rows) before the bias correction; and ``measured``, False where the element reads
        two columns whose dependence the release did not measure (:func:`read_pairs`), and
        :func:`infer` warns: such an element has no standard error or interval (NaN), the release
        holding nothing above its noise on that dependence, and its estimate is the model's value
        (what the measured pairs imply for it, or independence). An element some
        copies have no value of (a group absent from them) takes its mean, standard error and t
        from the copies that have one, and has no interval (NaN) where fewer than two do; infer
        warns, naming it. One the reference sample has no finite value of (a group only copies have,
        a nullable column the fitted distribution leaves all missing) has no estimate or interval;
        infer warns, naming it.
    """
    if isinstance(level, bool) or not isinstance(level, numbers.Real) or not 0 < level < 1:
        raise SynthDPError("level must be a number in (0, 1), e.g. 0.95")
    tables = list(getattr(copies, "tables", []))
    reference = getattr(copies, "reference", None)
    if len(tables) < 2 or reference is None:
        raise SynthDPError("infer takes what SmoothSynthesizer.sample_copies returns (at least two copies)")
    rows = len(tables[0])
    own, block = _fitted_value(statistic, reference, rows)
    m = len(tables)
    on_copies = [_on(statistic, table, f"copy {k} of {m}") for k, table in enumerate(tables, start=1)]
    if not own.index.has_duplicates:  # an element only copies have (a group too rare to show in the reference):
        extra = pd.Index([name for series in on_copies if not series.index.has_duplicates  # a row of its own, NaN
                          for name in series.index if name not in own.index]).unique()  # (warned of below)
        own = own.reindex(own.index.append(extra).set_names(own.index.names)) if len(extra) else own
    measured = _unmeasured_reads(copies, statistic,
                                 reference.iloc[block * rows:(block + 1) * rows].reset_index(drop=True), own.index)
    values = pd.DataFrame(np.column_stack([_aligned(series, own.index, f"copy {k} of {m}").to_numpy(dtype=float)
                                           for k, series in enumerate(on_copies, start=1)]), index=own.index)
    # each element over the copies that have a finite value of it (a group absent from some copies has fewer;
    # an infinite one, a ratio over a zero, would make its mean and standard error infinite or NaN)
    values = values.where(np.isfinite(values))
    counts = values.notna().sum(axis=1)
    estimate = 2 * own - values.mean(axis=1)
    se = values.std(axis=1, ddof=1) * np.sqrt(1 + 1 / counts.clip(lower=1))
    from scipy import stats  # here, not at import: scipy.stats alone takes 0.3 s, and every command imports this module

    z = pd.Series(stats.t.ppf(0.5 + level / 2, df=(counts - 1).where(counts >= 2).to_numpy(dtype=float)),
                  index=own.index)
    short = counts[counts < m]
    if len(short):
        named = listed([f"'{name}' ({count} of the {m} copies)" for name, count in short.items()])
        warnings.warn(f"only some copies have a value of {named}: a group absent from some copies, or a missing "
                      "or infinite result; each such element's standard error and interval come from the copies that have one "
                      "(Student's t on their number less one), and it has none (NaN) where fewer than two do",
                      InferenceWarning, stacklevel=2)
    unknown = own.index[~np.isfinite(own.to_numpy(dtype=float))]
    if len(unknown):  # no theta_0: nothing to centre the estimate on (a column the fitted distribution leaves missing)
        named = listed([f"'{name}'" for name in unknown])
        warnings.warn(f"the copies' reference sample (the fitted distribution) has no finite value of {named} (a "
                      "group too rare to show in it, or a column it leaves missing): no estimate or interval (NaN), "
                      "whatever the copies give", InferenceWarning, stacklevel=2)
    se = se.where(measured)  # a dependence the release did not measure: it holds nothing above its noise on it
    result = pd.DataFrame({"estimate": estimate, "std_error": se, "lower": estimate - z * se,
                           "upper": estimate + z * se, "naive": own, "measured": measured})
    limits = getattr(statistic, "limits", None) if limits is None else limits
    if limits is not None:
        low, high = _limits(limits, result.index)
        for name in ("estimate", "lower", "upper"):
            result[name] = result[name].clip(low, high)
    return result


def _fitted_value(statistic: Callable[[pd.DataFrame], Any], reference: pd.DataFrame, rows: int
                  ) -> tuple[pd.Series, int]:
    """The statistic's mean over the reference cut into whole blocks of ``rows`` rows (a copy's), each
    element over the blocks that have it; on the whole reference where it holds less than one block.
    And the first block with a value of the most elements (every one, where a block has): the one
    :func:`read_pairs` reorders, where an element without a value would count as reading every column."""
    blocks = len(reference) // max(rows, 1)
    if blocks < 1:
        return _on(statistic, reference, "the copies' reference sample").astype(float), 0
    parts = [_on(statistic, reference.iloc[k * rows:(k + 1) * rows].reset_index(drop=True),
                 f"block {k + 1} of the copies' reference sample").astype(float) for k in range(blocks)]
    if any(part.index.has_duplicates for part in parts):  # elements told apart by place: the same in every block
        values = pd.DataFrame(np.column_stack([_aligned(part, parts[0].index, f"block {k + 1} of the copies' "
                                                        "reference sample").to_numpy() for k, part in enumerate(parts)]),
                              index=parts[0].index)
    else:
        values = pd.concat(parts, axis=1)
        values = values.iloc[values.index.get_indexer(_in_order(parts))]  # pandas puts a later block's new elements last
    return values.mean(axis=1), int(np.argmax(values.notna().sum(axis=0).to_numpy()))


def _in_order(parts: Sequence[pd.Series]) -> pd.Index:
    """The elements of ``parts`` (one statistic on several blocks, each element named once) in the order
    the blocks give them: each block's order kept (a group mean's groups by value), ties broken by first
    appearance, and where blocks disagree (a cycle) the first seen first. pandas' union would put an
    element only a later block has (a group absent from the first) at the end, after an OLS model's
    coefficients, and one seen in a block without its neighbours before them."""
    import heapq

    # each element's place by first appearance, found by pandas (a dict missed a float NaN group: each
    # NaN read from a float index is another object, so the lookup raised KeyError)
    names = parts[0].index
    for part in parts[1:]:
        names = names.append(part.index[~part.index.isin(names)])
    follows: list[set[int]] = [set() for _ in names]
    waiting = [0] * len(names)  # each element's predecessors not yet placed
    for part in parts:
        places = names.get_indexer(part.index).tolist()
        for a, b in zip(places, places[1:]):
            if b not in follows[a]:
                follows[a].add(b)
                waiting[b] += 1
    ready = [place for place in range(len(names)) if waiting[place] == 0]
    heapq.heapify(ready)
    placed: list[int] = []
    done = [False] * len(names)
    while len(placed) < len(names):
        place = heapq.heappop(ready) if ready else min(p for p in range(len(names)) if not done[p])  # a cycle
        if done[place]:
            continue
        done[place] = True
        placed.append(place)
        for after in follows[place]:
            waiting[after] -= 1
            if waiting[after] == 0 and not done[after]:
                heapq.heappush(ready, after)
    return names[placed]


def _unmeasured_reads(copies: Copies, statistic: Callable[[pd.DataFrame], Any], block: pd.DataFrame,
                      index: pd.Index) -> pd.Series:
    """``measured`` of :func:`infer`'s result: per element, whether every pair of columns it reads
    (:func:`read_pairs`, on ``block``, a copy's rows of the reference) is a pair whose dependence
    the release measured (``copies.measured``). Where one is not, the fitted distribution and every
    copy set that dependence by the model (what the measured pairs imply for it, a Gaussian copula's
    largest-entropy completion, or none) but for noise, whatever the data, so the copies' spread says
    nothing reliable of it: :func:`infer` gives such an element no interval. Warns once, naming the
    elements."""
    columns = [str(name) for name in block.columns]
    measured = getattr(copies, "measured", None)
    if measured is None:  # not recorded: every pair, or none where the release measured no dependence
        measured = frozenset() if not getattr(copies, "dependence", True) else None
    unmeasured = [] if measured is None else [
        frozenset((a, b)) for i, a in enumerate(columns) for b in columns[i + 1:] if frozenset((a, b)) not in measured]
    if not unmeasured:  # every pair measured (or not known): no statistic to try
        return pd.Series(True, index=index, dtype=bool)
    reads = read_pairs(statistic, block, index, sorted({name for pair in unmeasured for name in pair}, key=columns.index))
    unmeasured_set = set(unmeasured)
    missed = [sorted({tuple(sorted(pair, key=columns.index)) for pair in pairs if pair in unmeasured_set})
              for pairs in reads]
    flagged = {position: pairs for position, pairs in enumerate(missed) if pairs}
    if flagged:
        if measured:
            pairs = sorted({pair for found in flagged.values() for pair in found})
            message = UNMEASURED.format(pairs=listed([f"{a} and {b}" for a, b in pairs], more="pairs"),
                                        elements=listed([f"'{index[position]}'" for position in flagged]))
        else:
            message = NO_DEPENDENCE
        warnings.warn(message, InferenceWarning, stacklevel=3)
    return pd.Series([position not in flagged for position in range(len(index))], index=index, dtype=bool)


def read_pairs(statistic: Callable[[pd.DataFrame], Any], table: pd.DataFrame, index: pd.Index,
               columns: Sequence[str]) -> list[set[frozenset[str]]]:
    """The pairs of ``columns`` each element of ``statistic`` (by position in ``index``) reads together,
    found by shuffling.

    A column's values shuffled among the rows keep every statistic of that column alone (a mean, a
    share, a quantile) and change any that pairs its rows with another column's (a correlation, a
    group mean, a regression coefficient). So an element reads column c jointly when its value on
    ``table`` with c's values reordered differs from its value on ``table`` (beyond rounding,
    relative 1e-9), under any of these orders: two random permutations, and c's values sorted in the
    order of each other column tried (a statistic of few values, a median of whole numbers per
    group, can keep its value under a permutation, not when c follows the group column); it reads
    the pairs of those columns. An element with no value on ``table`` (a group absent from it), a
    statistic that fails on a reordered table, or one that draws its own randomness, is taken to
    read every column tried. ``index``: the statistic's elements, as :func:`infer` names them;
    ``columns``: the columns to try (up to len(columns) + 1 evaluations of the statistic each, on
    ``table``, fewer once every element has changed). Public randomness (a fixed seed) on synthetic
    rows.

    Parameters
    ----------
    statistic : callable
        DataFrame to its values, as :func:`infer` takes it.
    table : DataFrame
        Synthetic rows to evaluate it on.
    index : Index
        The statistic's elements, as :func:`infer` names them.
    columns : sequence of str
        The columns to try: up to ``len(columns) + 1`` evaluations of the statistic each, fewer
        once every element has changed.

    Returns
    -------
    list of set of frozenset of str
        For each element of ``index``, in order, the pairs of columns it reads together.
    """
    names = {str(name): name for name in table.columns}
    baseline = _as_series(statistic(table)).reindex(index).astype(float).to_numpy()
    rng = np.random.default_rng(0)
    joint: list[list[str]] = [[] for _ in range(len(index))]
    unknown = np.isnan(baseline)
    sorting: dict[str, np.ndarray] = {}  # each column's rows in the order of its values, once
    for name in columns:
        with contextlib.suppress(TypeError, ValueError):  # text beside missing cells has no order: skipped
            sorting[name] = np.argsort(table[names[name]].to_numpy(), kind="stable")
    ranks = {name: np.argsort(order, kind="stable") for name, order in sorting.items()}  # each row's place in it
    for name in columns:
        values = table[names[name]]
        changed = unknown.copy()
        orders = [rng.permutation(len(table)), rng.permutation(len(table))]
        if name in sorting:  # c's values in the order of each other column tried: the two as related as can be
            orders += [sorting[name][ranks[other]] for other in columns if other != name and other in ranks]
        for order in orders:
            moved = values.iloc[order].set_axis(table.index)  # its own dtype kept
            reordered = pd.DataFrame({column: moved if column == names[name] else table[column]
                                      for column in table.columns})  # the other columns not copied
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    value = _as_series(statistic(reordered)).reindex(index).astype(float).to_numpy()
                changed |= ~(np.isclose(value, baseline, rtol=1e-9, atol=1e-12) | (np.isnan(value) & unknown))
            except Exception:  # a statistic the reordering breaks reads the column
                changed[:] = True
            if changed.all():
                break
        for position in np.flatnonzero(changed):
            joint[position].append(name)
    return [{frozenset((a, b)) for i, a in enumerate(found) for b in found[i + 1:]} for found in joint]


def _limits(limits: tuple[float, float] | Mapping[Any, tuple[float, float]], index: pd.Index
            ) -> tuple[pd.Series, pd.Series]:
    """The lower and upper limit of each element of ``index`` (-inf, inf for an element the mapping does not name)."""
    if isinstance(limits, Mapping):
        pairs = [limits.get(name, (-np.inf, np.inf)) for name in index]
    else:
        pairs = [limits] * len(index)
    try:
        low, high = (np.array(side, dtype=float) for side in zip(*pairs)) if pairs else (np.array([]),) * 2
    except (TypeError, ValueError):
        raise SynthDPError("limits must be a (low, high) pair of numbers, or a mapping to such pairs") from None
    if (low > high).any():
        raise SynthDPError("limits must have low <= high")
    return pd.Series(low, index=index), pd.Series(high, index=index)


def copy_paths(output: Path, count: int) -> list[Path]:
    """The files ``synthdp generate --copies`` writes beside OUTPUT.csv: OUTPUT.1.csv ... OUTPUT.M.csv,
    then OUTPUT.reference.csv (the reference sample), then OUTPUT.copies.json (:func:`copies_info_path`)."""
    stem, suffix = output.stem, output.suffix or ".csv"
    return [output.with_name(f"{stem}.{k}{suffix}") for k in range(1, count + 1)] + [
        output.with_name(f"{stem}.reference{suffix}"), copies_info_path(output)]


def copies_info_path(output: str | Path) -> Path:
    """OUTPUT.copies.json beside the copies of ``synthdp generate --copies M -o OUTPUT.csv``: what the
    report's ``copies`` entry says of them (how they were made, the seconds per copy, whether the
    release measured any dependence), so that :func:`load_copies` and ``synthdp infer`` know it
    without the report. Public: it holds no value of the data."""
    output = Path(output)
    return output.with_name(f"{output.stem}.copies.json")


def copy_files(output: str | Path, info: Mapping[str, Any] | None = None) -> list[Path]:
    """The files of the copies ``synthdp generate --copies M -o OUTPUT.csv`` wrote, in order:
    OUTPUT.1.csv ... OUTPUT.M.csv, then OUTPUT.reference.csv. M is OUTPUT.copies.json's ``count``
    where that file says it (a run with fewer copies, --overwrite, leaves an earlier run's higher
    numbers beside them: not read), else every numbered file. An error if there are not at least
    two copies and the reference, or fewer than the count.

    Parameters
    ----------
    output : str or Path
        The ``-o`` path given to ``synthdp generate --copies``.
    info : mapping, optional
        OUTPUT.copies.json as :func:`_copies_info` reads it, where the caller has read it already.

    Returns
    -------
    list of Path
        The copies' files, then the reference's.
    """
    output = Path(output)
    suffix = output.suffix or ".csv"
    paths = sorted(output.parent.glob(f"{glob.escape(output.stem)}.*{glob.escape(suffix)}"))  # [ in a name: literal
    # OUTPUT.<digits>.csv only: not the copies of a release beside it (OUTPUT.5.csv's OUTPUT.5.1.csv), nor OUTPUT.².csv
    middles = [(p.stem[len(output.stem) + 1:], p) for p in paths]
    numbered = sorted((int(middle), p) for middle, p in middles if re.fullmatch("0|[1-9][0-9]*", middle))  # not 007
    count = (_copies_info(copies_info_path(output)) if info is None else info).get("count")
    if count is not None:
        numbered = [(k, p) for k, p in numbered if k <= count]
        if [k for k, _ in numbered] != list(range(1, count + 1)):
            raise SynthDPError(f"copies of '{output}': {copies_info_path(output).name} says {count} copies, and some "
                               "are missing: write the copies again")
    reference = output.with_name(f"{output.stem}.reference{suffix}")
    if len(numbered) < 2:
        raise SynthDPError(f"no copies of '{output}' found (synthdp generate --copies M -o {output.name} writes them)")
    if not reference.exists():
        raise SynthDPError(f"the reference sample of the copies of '{output}', {reference.name}, is missing: write the "
                           "copies again")
    return [p for _, p in numbered] + [reference]


def load_copies(output: str | Path, reader: Callable[[Path], pd.DataFrame] | None = None, **read_csv: Any) -> Copies:
    """The copies ``synthdp generate --copies M -o OUTPUT.csv`` wrote, as :func:`infer` takes them
    (``read_csv``: keywords for :func:`pandas.read_csv`, e.g. dtypes; ``reader``: a function reading
    one copy's path instead, as ``synthdp evaluate`` reads the synthetic table), with what OUTPUT.copies.json
    says of them (:func:`copies_info_path`): whether the release measured any dependence, so that
    :func:`infer` warns where it did not, and the seconds per copy. Copies written without that
    file (before it existed, or with it lost) are taken as measuring dependence, their time unknown, and
    load_copies warns that it is missing.

    Parameters
    ----------
    output : str or Path
        The ``-o`` path given to ``synthdp generate --copies``.
    reader : callable, optional
        Reads one copy's path into a DataFrame, instead of :func:`pandas.read_csv` (CSV copies)
        or the Parquet reader (copies written as Parquet).
    **read_csv
        Keywords for :func:`pandas.read_csv` (say, ``dtype``), for CSV copies without ``reader``.

    Returns
    -------
    Copies
        The copies, the reference table and what OUTPUT.copies.json records.
    """
    info = _copies_info(copies_info_path(output))  # read once: the files listed and checked by the same record
    *numbered, reference = copy_files(output, info)
    if not info:  # copies written before the record existed, or the record lost: nothing says which pairs
        warnings.warn(f"{copies_info_path(output).name}, the record of the copies of '{Path(output).name}', is missing: "
                      "the copies are not checked against it, and which pairs the release measured is unknown, so every "
                      "statistic shows measured True and none is warned of (write the copies again)", InferenceWarning,
                      stacklevel=2)

    written = info.get("sha256", {})
    # each file's digest by its place in the record's list of files, where it has one for each: a set of
    # copies moved to another name as a whole is checked all the same; else by name
    recorded = [Path(name).name for name in info.get("files", [])][:-1]  # the last: OUTPUT.copies.json itself
    if len(recorded) == len(numbered) + 1 and all(name in written for name in recorded):
        written = {path.name: written[name] for path, name in zip([*numbered, reference], recorded)}

    def read(path: Path) -> pd.DataFrame:
        if path.exists() and not path.is_file():  # /dev/zero would be hashed and read without end
            raise SynthDPError(f"copy '{path}' is not a regular file (generate --copies writes files): write the "
                               "copies again")
        try:
            if path.name in written and file_sha256(path) != written[path.name]:  # a copy of another release
                raise SynthDPError(f"copy '{path}' is not what this release's generate --copies wrote (its content "
                                   f"differs from {copies_info_path(output).name}'s record): write the copies again")
            if reader is not None:
                return reader(path)
            if path.suffix.lower() in (".parquet", ".pq"):  # generate -o OUTPUT.parquet writes Parquet copies
                return _read_parquet_copy(path)
            # a one-column table writes a row whose only cell is missing as a blank line: a row, not a gap
            return pd.read_csv(path, **{"skip_blank_lines": False, **read_csv})
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError):  # the message may quote content
            raise SynthDPError(f"copy '{path}' is not a CSV table with a header row: write the copies again "
                               "(synthdp generate --copies)") from None
        except OSError as error:  # a dangling link, a folder: reading, not writing
            raise SynthDPError(f"copy '{path}' cannot be read: {error.strerror or 'unreadable'}") from None

    tables, reference_table = [read(path) for path in numbered], read(reference)
    # a copy cut short (or edited) would be read as if it were one: each has the rows OUTPUT.copies.json
    # says, and the reference its reference_rows (files written before it said so: the first copy's rows)
    rows = info.get("rows", len(tables[0]))
    short = [(path, len(table)) for path, table in zip(numbered, tables) if len(table) != rows]
    if len(reference_table) != info.get("reference_rows", len(reference_table)):
        short.append((reference, len(reference_table)))
    if short or rows < 2:
        path, found = short[0] if short else (numbered[0], rows)
        raise SynthDPError(f"copy '{path}' has {found} rows, not what was written: write the copies again")
    for path, table in zip(numbered, tables):  # one release's copies have its columns, in its order
        if list(table.columns) != list(reference_table.columns):
            raise SynthDPError(f"copy '{path}' has other columns than the reference sample '{reference.name}': "
                               "write the copies again")
    measured = info.get("measured_pairs")
    return Copies(tables, reference_table, info.get("seconds_per_copy", float("nan")),
                  info.get("measures_dependence", True),
                  None if measured is None else frozenset(frozenset(pair) for pair in measured))


def _read_parquet_copy(path: Path) -> pd.DataFrame:
    """A copy written as Parquet; a file that is not one is an error naming it (pyarrow's message may
    quote its bytes)."""
    try:
        import pyarrow as pa
    except ImportError:
        raise SynthDPError(f"copy '{path}' is a Parquet file, which needs pyarrow to read (pip install pyarrow)") from None
    try:
        return pd.read_parquet(path)
    except pa.ArrowException:
        raise SynthDPError(f"copy '{path}' is not a Parquet table: write the copies again (synthdp generate "
                           "--copies)") from None


def _copies_info(path: Path) -> dict[str, Any]:
    """OUTPUT.copies.json's ``seconds_per_copy`` (float), ``measures_dependence`` (bool) and, where it
    holds them, the ``count`` of copies, each copy's ``rows`` and the reference's ``reference_rows``
    (ints), the ``measured_pairs`` (lists of two column names), the ``files`` written (paths, in
    order: the copies, the reference, this file) and each file's ``sha256`` (name to hex digest);
    {} where the file is absent. A file of another shape is an error, not a guess (its
    content is not quoted)."""
    import json

    if not path.exists():
        return {}
    try:
        info = json.loads(read_text_file(path, "record of the copies"))
        digests = {"sha256": info["sha256"]} if "sha256" in info else {}
        if not (isinstance(digests.get("sha256", {}), dict)
                and all(isinstance(value, str) for value in digests.get("sha256", {}).values())):
            raise TypeError
        seconds, dependence = info["seconds_per_copy"], info["measures_dependence"]
        counts = {key: info[key] for key in ("count", "rows", "reference_rows") if key in info}
        pairs = {"measured_pairs": info["measured_pairs"]} if "measured_pairs" in info else {}
        files = {"files": info["files"]} if "files" in info else {}
        if not (isinstance(files.get("files", []), list) and all(isinstance(name, str) for name in files.get("files", []))):
            raise TypeError
        # a count within what generate --copies writes (2 to MAX_COPIES): the copies' numbers are listed from it
        if not (is_finite_number(seconds) and seconds >= 0 and isinstance(dependence, bool) and all(
                is_int(value) and value >= 2 for value in counts.values())
                and counts.get("count", 2) <= MAX_COPIES
                and all(isinstance(pair, list) and len(pair) == 2 and all(isinstance(name, str) for name in pair)
                        for pair in pairs.get("measured_pairs", []))):
            raise TypeError
    except (ValueError, KeyError, TypeError, AttributeError, UnicodeDecodeError, OSError, RecursionError):
        raise SynthDPError(f"'{path}' is not what synthdp generate --copies writes: write the copies again") from None
    return {"seconds_per_copy": float(seconds), "measures_dependence": dependence, **counts, **pairs, **files,
            **digests}


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file's bytes, hex: OUTPUT.copies.json records each copy's, so that a copy of
    another release put in its place is refused rather than combined."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def common_statistics(means: Sequence[str] = (), proportions: Sequence[tuple[str, str]] = (),
                      group_means: Sequence[tuple[str, str]] = (), correlations: Sequence[tuple[str, str]] = (),
                      ols: Sequence[Sequence[str]] = ()) -> Callable[[pd.DataFrame], pd.Series]:
    """The statistics ``synthdp infer`` offers, as one function of a DataFrame for :func:`infer`.

    Parameters
    ----------
    means : column names
        Each column's mean (``"mean COL"``).
    proportions : (column, value) pairs
        The share of rows whose column equals the value, compared as text (``"share COL == VALUE"``).
    group_means : (column, by) pairs
        The mean of the column within each value of ``by`` (``"mean COL | BY == LEVEL"``); a level
        absent from a copy gives that copy no value (it is left out of the standard error).
    correlations : (column, column) pairs
        Pearson's correlation (``"corr A ~ B"``).
    ols : sequences (target, predictor, ...)
        Ordinary least-squares coefficients of the target on the predictors and an intercept
        (``"ols Y ~ X"``, ``"ols Y ~ (intercept)"``); NaN on a table where they are not determined (fewer
        rows with every value present than coefficients, or a constant or collinear predictor).

    Returns
    -------
    callable
        statistic(frame) -> Series, one element per statistic, named as above. Raises
        :class:`~synthdp.errors.SynthDPError` naming a column that is missing or not numeric.
    """
    if not (means or proportions or group_means or correlations or ols):
        raise SynthDPError("no statistic asked for: give a mean, share, group mean, correlation or OLS model "
                           "(synthdp infer: --mean, --share, --group-mean, --corr, --ols)")
    for model in ols:
        if len(model) < 2:
            raise SynthDPError("an OLS model takes a target and at least one predictor (synthdp infer: --ols Y X [X ...])")

    def column(frame: pd.DataFrame, name: str) -> pd.Series:
        if name not in frame.columns:
            raise SynthDPError(f"column '{name}' is not in the table{near_column(name, list(frame.columns))}")
        return _iso_text(frame[name])

    def numeric(frame: pd.DataFrame, name: str) -> pd.Series:
        given = column(frame, name)  # a date column is its ISO text, as a CSV copy holds it: not numeric
        values = pd.to_numeric(given, errors="coerce")
        if values.isna().sum() > given.isna().sum():
            raise SynthDPError(f"column '{name}' is not numeric")
        return values.astype(float)

    def statistic(frame: pd.DataFrame) -> pd.Series:
        values: dict[str, float] = {}
        for name in means:
            values[f"mean {name}"] = numeric(frame, name).mean()
        for name, level in proportions:
            values[f"share {name} == {level}"] = float(_equals(column(frame, name), str(level)).mean())
        for name, by in group_means:
            groups = numeric(frame, name).groupby(column(frame, by)).mean()  # sorted by value: 2 before 10
            values.update({f"mean {name} | {by} == {_level_text(level)}": value for level, value in groups.items()})
        for first, second in correlations:
            values[f"corr {first} ~ {second}"] = numeric(frame, first).corr(numeric(frame, second))
        for target, *predictors in ols:
            y = numeric(frame, target)
            x = pd.concat([numeric(frame, p) for p in predictors], axis=1)
            keep = y.notna() & x.notna().all(axis=1)
            design = np.column_stack([np.ones(int(keep.sum())), x[keep].to_numpy()])
            beta, _, rank, _ = np.linalg.lstsq(design, y[keep].to_numpy(), rcond=None)
            if rank < design.shape[1]:  # fewer complete rows than coefficients, a constant or a repeated predictor:
                beta = np.full(design.shape[1], np.nan)  # no least-squares coefficients (lstsq's minimum norm: 0s)
            values[f"ols {target} ~ (intercept)"] = beta[0]
            values.update({f"ols {target} ~ {p}": b for p, b in zip(predictors, beta[1:])})
        return pd.Series(values, dtype=float)

    # the values a share and a correlation can take, for infer's estimate and interval
    limits = {**{f"share {name} == {level}": (0.0, 1.0) for name, level in proportions},
              **{f"corr {first} ~ {second}": (-1.0, 1.0) for first, second in correlations}}
    statistic.limits = limits  # type: ignore[attr-defined]
    return statistic


def _iso_text(values: pd.Series) -> pd.Series:
    """A date or datetime column (a Parquet copy's timestamps, ``sample_copies``' datetime64) as the ISO
    text a CSV copy holds (``2021-03-04``, or ``2021-03-04T05:06:07`` where a value has a time of day),
    missing cells missing; any other column as it is. pd.to_numeric read a timestamp as its nanoseconds,
    and a missing one as -2^63."""
    if not pd.api.types.is_datetime64_any_dtype(values):
        return values
    present = values.dropna()
    layout = "%Y-%m-%d" if (present == present.dt.normalize()).all() else "%Y-%m-%dT%H:%M:%S"
    return values.dt.strftime(layout).astype(object).where(values.notna(), None)


def _equals(values: pd.Series, level: str) -> pd.Series:
    """Rows equal to ``level``: as numbers when both are numbers (``1`` matches 1.0), else as text."""
    if pd.api.types.is_numeric_dtype(values):
        try:
            return values == float(level)
        except ValueError:
            pass
    return values.astype(str) == level


def share_value_occurs(values: pd.Series, level: str) -> bool:
    """Whether any of ``values`` equals ``level`` as ``--share COL=VALUE`` compares them (:func:`_equals`)."""
    return bool(_equals(_iso_text(values), str(level)).any())


def _level_text(level: Any) -> str:
    """A group's level as the CSV wrote it: 3.0 read back from a column with a missing cell is 3."""
    if isinstance(level, (float, np.floating)) and float(level).is_integer():
        return str(int(level))
    return str(level)


#: Correlations are checked between at most this many numeric columns (the first ones): d (d - 1) / 2 pairs.
CHECKED_CORRELATION_COLUMNS = 15


def check_against_real(real: pd.DataFrame, copies: Copies, numeric: Sequence[str], level: float = 0.95) -> dict:
    """Do the copies' intervals hold the real table's values? For the data owner (reads the real table).

    The intervals of every numeric column's mean and of the correlations between the first
    :data:`CHECKED_CORRELATION_COLUMNS` numeric columns (:func:`infer` on ``copies``), each with
    the real table's own value and whether the interval holds it. The intervals are for the
    population the real table was drawn from, so they hold the real table's value at least as
    often as they hold the population's; a statistic the release did not model (a pair the
    release measured nothing of) shows up as one they miss.

    Parameters
    ----------
    real : DataFrame
        The real table.
    copies : Copies
        The release's copies (:meth:`synthdp.SmoothSynthesizer.sample_copies`, :func:`load_copies`).
    numeric : sequence of str
        The numeric columns to check; those the table lacks are skipped.
    level : float, default 0.95
        The intervals' confidence level, as in :func:`infer`.

    Returns
    -------
    dict
        ``copies`` (m), ``level``, ``statistics``: one dict per statistic (``statistic``, ``real``,
        ``estimate``, ``lower``, ``upper``, ``holds`` (None where the real value or the interval is
        undefined, as a correlation with a constant column: neither held nor missed), and ``measured``, :func:`infer`'s:
        False where it reads a pair of columns the release did not measure), ``held`` and ``checked``
        (counts, of the statistics whose real value is defined).
    """
    columns = [name for name in numeric if name in real.columns]
    if not columns:
        raise SynthDPError("the copies' intervals are checked on numeric columns, and the table has none")
    pairs = [(a, b) for i, a in enumerate(columns[:CHECKED_CORRELATION_COLUMNS])
             for b in columns[i + 1:CHECKED_CORRELATION_COLUMNS]]
    statistic = common_statistics(means=columns, correlations=pairs)
    result = infer(copies, statistic, level=level)
    truth = statistic(real).reindex(result.index)
    holds = (result["lower"] <= truth) & (truth <= result["upper"])
    # a correlation with a constant column (real, or in every copy): no value or no interval to hold or miss
    defined = truth.notna() & result["lower"].notna() & result["upper"].notna()
    rows = [{"statistic": name, "real": float(truth[name]), "estimate": float(result.loc[name, "estimate"]),
             "lower": float(result.loc[name, "lower"]), "upper": float(result.loc[name, "upper"]),
             "holds": bool(holds[name]) if defined[name] else None, "measured": bool(result.loc[name, "measured"])}
            for name in result.index]
    return {"copies": len(copies), "level": level, "statistics": rows, "held": int(holds[defined].sum()),
            "checked": int(defined.sum())}
