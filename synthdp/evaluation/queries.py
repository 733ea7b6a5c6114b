"""Smooth-query evaluation protocol of the paper's experiments (Section 4; docs/mechanism.md §5).

This is post-release code: it compares a synthetic table with the real one on random
smooth queries and never takes part in a release. It must not import
:mod:`synthdp.reader.table`, :mod:`synthdp.privacy.release` or :mod:`synthdp.cli`.

The query class is linear combinations of J Gaussian kernels on [-1, 1]^d,

    f(x) = sum_{j=1..J} alpha_j * exp(-||x - x_j||^2 / (2 sigma^2)),

with alpha_j ~ U[0, 1] and centres x_j ~ U[-1, 1]^d. The answer of f on a table D of n rows
(already mapped to [-1, 1]^d) is q_f(D) = (1/n) sum_i f(x_i). The paper reports, over 10 000
random queries and for sigma in {2, 4, 6, 8, 10}, the worst-case absolute error
max_f |q_f(D) - q_f(D~)| and the worst-case relative error max_f |(q_f(D) - q_f(D~)) / q_f(D)|.

Its absolute errors appear to be for f divided by sum_j alpha_j (so that f lies in [0, 1]),
see docs/mechanism.md §5, so :func:`worst_case_errors` reports both scalings. The relative error
does not depend on that scaling.

Typical use::

    rng = np.random.default_rng(0)
    queries = gaussian_kernel_queries(d, 10_000, rng)
    real = to_unit(real_frame, lower, upper)
    synth = to_unit(synthetic_frame, lower, upper)
    true = answer_queries(real, queries, SIGMAS)
    errors = worst_case_errors(true, answer_queries(synth, queries, SIGMAS), queries.alpha)
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import pandas as pd

from synthdp.checks import is_int
from synthdp.errors import SynthDPError

__all__ = [
    "SIGMAS",
    "KernelQueries",
    "WorstCaseErrors",
    "gaussian_kernel_queries",
    "answer_queries",
    "worst_case_errors",
    "to_unit",
]

#: The kernel widths of the paper's Tables 3-6.
SIGMAS: tuple[float, ...] = (2.0, 4.0, 6.0, 8.0, 10.0)

#: Default memory bound (bytes) of one block of squared distances in :func:`answer_queries`.
DEFAULT_BLOCK_BYTES = 2**20

#: Most rows in one tile of :func:`answer_queries`.
ROW_TILE = 512


def _n_workers(n_jobs: int | None, n_tasks: int) -> int:
    if n_jobs is None:
        try:
            n_jobs = len(os.sched_getaffinity(0))
        except AttributeError:  # not on Linux
            n_jobs = os.cpu_count() or 1
    if not (is_int(n_jobs) and n_jobs >= 1):
        raise SynthDPError("n_jobs must be None or an integer >= 1")
    return max(1, min(int(n_jobs), n_tasks))


@contextmanager
def _single_threaded_blas() -> Iterator[None]:
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # optional: without it the BLAS keeps its own threads
        yield
        return
    with threadpool_limits(limits=1, user_api="blas"):
        yield


def _readonly(array: np.ndarray) -> np.ndarray:
    array = np.array(array, dtype=float, copy=True)
    array.setflags(write=False)
    return array


@dataclass(frozen=True, eq=False)
class KernelQueries:
    """A set of Q random queries, each a sum of J weighted Gaussian kernels on [-1, 1]^d.

    The kernel width sigma is not part of a query: the same weights and centres are
    evaluated for every sigma (see :func:`answer_queries`).

    Attributes
    ----------
    alpha : ndarray, shape (Q, J)
        Non-negative kernel weights alpha_{q, j}.
    centres : ndarray, shape (Q, J, d)
        Kernel centres x_{q, j} in [-1, 1]^d.

    Both arrays are copied and made read-only.
    """

    alpha: np.ndarray
    centres: np.ndarray

    def __post_init__(self) -> None:
        alpha, centres = _readonly(self.alpha), _readonly(self.centres)
        if alpha.ndim != 2 or centres.ndim != 3 or centres.shape[:2] != alpha.shape:
            raise SynthDPError(
                f"alpha must have shape (Q, J) and centres (Q, J, d); got {alpha.shape} and {centres.shape}"
            )
        if not (np.isfinite(alpha).all() and np.isfinite(centres).all()):
            raise SynthDPError("alpha and centres must be finite")
        object.__setattr__(self, "alpha", alpha)
        object.__setattr__(self, "centres", centres)

    @property
    def n_queries(self) -> int:
        """Q, the number of queries."""
        return self.alpha.shape[0]

    @property
    def n_kernels(self) -> int:
        """J, the number of kernels per query."""
        return self.alpha.shape[1]

    @property
    def d(self) -> int:
        """The dimension of the data the queries act on."""
        return self.centres.shape[2]

    def __len__(self) -> int:
        return self.n_queries


def gaussian_kernel_queries(
    d: int, n_queries: int, rng: np.random.Generator, n_kernels: int = 10
) -> KernelQueries:
    """Draw the paper's random smooth queries.

    Parameters
    ----------
    d : int
        Dimension of the data (number of columns).
    n_queries : int
        Q, the number of queries (the paper uses 10 000).
    rng : numpy.random.Generator
        Source of randomness; the queries are public, so a fixed seed is fine.
    n_kernels : int, default 10
        J, kernels per query (the paper uses 10).

    Returns
    -------
    KernelQueries
        ``alpha`` of shape (Q, J) with entries ~ U[0, 1] and ``centres`` of shape (Q, J, d)
        with entries ~ U[-1, 1]. ``alpha`` is drawn first, then ``centres``.
    """
    for name, value in (("d", d), ("n_queries", n_queries), ("n_kernels", n_kernels)):
        if not (is_int(value) and value >= 1):
            raise SynthDPError(f"{name} must be an integer >= 1")
    alpha = rng.uniform(0.0, 1.0, size=(n_queries, n_kernels))
    centres = rng.uniform(-1.0, 1.0, size=(n_queries, n_kernels, d))
    return KernelQueries(alpha, centres)


def _as_points(points: np.ndarray | pd.DataFrame, d: int) -> np.ndarray:
    values = np.asarray(points, dtype=float)
    if values.ndim != 2 or values.shape[1] != d:
        raise SynthDPError(f"points must have shape (n, {d}); got {values.shape}")
    if values.shape[0] == 0:
        raise SynthDPError("points must have at least one row")
    if not np.isfinite(values).all():
        raise SynthDPError("points must be finite")
    return values


def answer_queries(
    points: np.ndarray | pd.DataFrame,
    queries: KernelQueries,
    sigmas: Sequence[float] = SIGMAS,
    weights: np.ndarray | None = None,
    *,
    deduplicate: bool = True,
    block_bytes: int = DEFAULT_BLOCK_BYTES,
    n_jobs: int | None = None,
) -> np.ndarray:
    """Answer every query for every kernel width: q_f(D) = mean over rows of f(x).

    Parameters
    ----------
    points : array-like, shape (n, d)
        The table, already mapped to [-1, 1]^d (see :func:`to_unit`).
    queries : KernelQueries
        Q queries of J kernels each, on the same d.
    sigmas : sequence of float, length S
        Kernel widths sigma > 0.
    weights : array-like, shape (n,), optional
        Non-negative row weights; the answer is then the weighted mean
        sum_i w_i f(x_i) / sum_i w_i. None means every row counts once. Integer weights
        express a multiset, e.g. a bootstrap resample as counts over the real rows.
    deduplicate : bool, default True
        Merge identical rows first (adding their weights). The result is the same up to
        round-off; synthetic tables with few distinct rows become much cheaper.
    block_bytes : int, default 1 MiB
        Memory bound for one tile of squared distances (rows x kernel centres, float64).
        Peak extra memory is about 2 x n_jobs tiles, plus S x Q x J floats for the
        per-kernel means (and a copy of the distinct rows).
    n_jobs : int, optional
        Worker threads; None means the number of CPUs available to the process.

    Returns
    -------
    ndarray, shape (S, Q)
        ``answers[s, q]`` is q_f(D) for query q with width ``sigmas[s]``.

    Notes
    -----
    The work is tiled over rows and over the flattened Q*J kernel centres. Each tile's
    squared distances ||x||^2 + ||c||^2 - 2 x.c are computed once, by one matrix product,
    and reused for every sigma; only the exponential is evaluated per sigma. Per-kernel
    weighted means are accumulated and combined with ``alpha`` at the end. While it runs,
    the BLAS thread pool is limited to one thread (if ``threadpoolctl`` is installed),
    since the tiles are parallelised by ``n_jobs`` threads instead.
    """
    d = queries.d
    values = _as_points(points, d)
    sigma_array = np.asarray(sigmas, dtype=float).reshape(-1)
    if sigma_array.size == 0 or not (np.isfinite(sigma_array).all() and (sigma_array > 0).all()):
        raise SynthDPError("sigmas must be a non-empty sequence of finite numbers > 0")
    if weights is None:
        row_weights = np.ones(values.shape[0])
    else:
        row_weights = np.asarray(weights, dtype=float).reshape(-1)
        if row_weights.shape[0] != values.shape[0]:
            raise SynthDPError(f"weights must have shape ({values.shape[0]},); got {np.shape(weights)}")
        if not (np.isfinite(row_weights).all() and (row_weights >= 0).all()) or row_weights.sum() <= 0:
            raise SynthDPError("weights must be finite, >= 0 and not all zero")
    if not (is_int(block_bytes) and block_bytes >= 8):
        raise SynthDPError("block_bytes must be an integer >= 8")
    _n_workers(n_jobs, 1)  # validate before any work

    keep = row_weights > 0
    values, row_weights = values[keep], row_weights[keep]
    if deduplicate and values.shape[0] > 1:
        values, inverse = np.unique(values, axis=0, return_inverse=True)
        row_weights = np.bincount(inverse.reshape(-1), weights=row_weights, minlength=values.shape[0]).astype(float)
    row_weights = row_weights / row_weights.sum()

    n = values.shape[0]
    centres = queries.centres.reshape(-1, d)  # (Q*J, d), a view
    n_centres = centres.shape[0]
    # Tiles of at most block_bytes of float64: up to ROW_TILE rows, as many centres as fit.
    # Small tiles stay in cache, so the per-sigma passes (scale, exp, weighted sum) are cheap.
    max_entries = max(1, block_bytes // 8)
    row_block = max(1, min(n, ROW_TILE, max_entries))
    centre_block = max(1, min(n_centres, max_entries // row_block))
    point_norms = np.einsum("ij,ij->i", values, values)
    scales = -0.5 / sigma_array**2  # kernel = exp(scale * squared distance)
    kernel_means = np.zeros((sigma_array.size, n_centres))

    def centre_range(c0: int) -> None:
        block_centres = centres[c0:c0 + centre_block]
        centre_norms = np.einsum("ij,ij->i", block_centres, block_centres)
        width = block_centres.shape[0]
        sq_buffer = np.empty((row_block, width))
        scratch_buffer = np.empty((row_block, width))
        for r0 in range(0, n, row_block):
            rows = values[r0:r0 + row_block]
            sq, scratch = sq_buffer[:rows.shape[0]], scratch_buffer[:rows.shape[0]]
            np.matmul(rows, block_centres.T, out=sq)
            sq *= -2.0
            sq += point_norms[r0:r0 + row_block, None]
            sq += centre_norms[None, :]
            np.maximum(sq, 0.0, out=sq)  # round-off can make tiny distances negative
            w = row_weights[r0:r0 + row_block]
            for s, scale in enumerate(scales):
                np.multiply(sq, scale, out=scratch)
                np.exp(scratch, out=scratch)
                kernel_means[s, c0:c0 + width] += w @ scratch

    starts = range(0, n_centres, centre_block)
    workers = _n_workers(n_jobs, len(starts))
    # Tiles are small, so a multi-threaded BLAS only adds synchronisation (and oversubscribes
    # the cores when we run our own threads): run it single-threaded here.
    with _single_threaded_blas():
        if workers == 1:
            for c0 in starts:
                centre_range(c0)
        else:  # numpy releases the GIL in matmul and ufuncs; the slices written are disjoint
            with ThreadPoolExecutor(max_workers=workers) as pool:
                for future in [pool.submit(centre_range, c0) for c0 in starts]:
                    future.result()
    per_kernel = kernel_means.reshape(sigma_array.size, queries.n_queries, queries.n_kernels)
    return np.einsum("sqj,qj->sq", per_kernel, queries.alpha)


@dataclass(frozen=True)
class WorstCaseErrors:
    """Worst-case errors over a query set, one entry per kernel width.

    Attributes
    ----------
    absolute : ndarray, shape (S,)
        max_q |q(D) - q(D~)| for f as written (values up to sum_j alpha_j, about J/2).
    absolute_scaled : ndarray, shape (S,)
        The same with each f divided by its sum_j alpha_j, so every query lies in [0, 1]
        (the scaling the paper's absolute errors appear to use).
    relative : ndarray, shape (S,)
        max_q |(q(D) - q(D~)) / q(D)|; the same under both scalings. A query with
        q(D) = 0 counts as 0 if q(D~) = 0 too and as infinity otherwise.
    """

    absolute: np.ndarray
    absolute_scaled: np.ndarray
    relative: np.ndarray

    def to_dict(self) -> dict[str, list[float]]:
        """Plain lists, e.g. for JSON."""
        return {
            "absolute": self.absolute.tolist(),
            "absolute_scaled": self.absolute_scaled.tolist(),
            "relative": self.relative.tolist(),
        }


def worst_case_errors(
    true_answers: np.ndarray, synth_answers: np.ndarray, alpha: np.ndarray
) -> WorstCaseErrors:
    """Worst absolute (both scalings) and relative error per kernel width.

    Parameters
    ----------
    true_answers : array-like, shape (S, Q) or (Q,)
        q(D) on the real table, from :func:`answer_queries`.
    synth_answers : array-like, same shape
        q(D~) on the synthetic table, for the same queries and widths.
    alpha : array-like, shape (Q, J)
        The queries' kernel weights (``KernelQueries.alpha``), for the 1 / sum_j alpha_j
        scaling.

    Returns
    -------
    WorstCaseErrors
        Arrays of shape (S,) (shape (1,) for 1-d input).
    """
    true = np.atleast_2d(np.asarray(true_answers, dtype=float))
    synth = np.atleast_2d(np.asarray(synth_answers, dtype=float))
    alpha = np.asarray(alpha, dtype=float)
    if true.shape != synth.shape or true.ndim != 2:
        raise SynthDPError(f"answers must have the same shape (S, Q); got {true.shape} and {synth.shape}")
    if alpha.ndim != 2 or alpha.shape[0] != true.shape[1]:
        raise SynthDPError(f"alpha must have shape (Q, J) with Q = {true.shape[1]}; got {alpha.shape}")
    totals = alpha.sum(axis=1)
    if not (totals > 0).all():
        raise SynthDPError("every query needs sum_j alpha_j > 0 for the scaled error")
    difference = np.abs(true - synth)
    with np.errstate(divide="ignore", invalid="ignore"):
        relative = np.where(true != 0, difference / np.abs(true), np.where(difference == 0, 0.0, np.inf))
    return WorstCaseErrors(
        absolute=difference.max(axis=1),
        absolute_scaled=(difference / totals[None, :]).max(axis=1),
        relative=relative.max(axis=1),
    )


def _per_column(bound: Mapping[str, float] | Sequence[float] | np.ndarray, names: list | None,
                d: int, label: str) -> np.ndarray:
    if isinstance(bound, Mapping):
        if names is None:
            raise SynthDPError(f"{label} given by column name needs a DataFrame")
        missing = [name for name in names if name not in bound]
        if missing:
            raise SynthDPError(f"{label} has no value for column '{missing[0]}'")
        array = np.array([bound[name] for name in names], dtype=float)
    else:
        array = np.asarray(bound, dtype=float).reshape(-1)
    if array.shape != (d,):
        raise SynthDPError(f"{label} must have one value per column ({d}); got {array.shape[0]}")
    if not np.isfinite(array).all():
        raise SynthDPError(f"{label} must be finite")
    return array


def to_unit(
    frame: pd.DataFrame | np.ndarray,
    lower: Mapping[str, float] | Sequence[float] | np.ndarray,
    upper: Mapping[str, float] | Sequence[float] | np.ndarray,
) -> np.ndarray:
    """Map a table affinely onto [-1, 1]^d with the given per-column bounds, clipping.

    Use the same bounds for the real and the synthetic table so that both are evaluated in
    the same normalisation (``lower -> -1``, ``upper -> 1``; values outside are clipped).

    Parameters
    ----------
    frame : DataFrame or array-like, shape (n, d)
        Numeric table in original units.
    lower, upper : sequence of float (length d) or mapping {column: value}
        Bounds per column, in column order; a mapping needs a DataFrame. ``upper > lower``.

    Returns
    -------
    ndarray, shape (n, d)
        The table in [-1, 1]^d, float64.
    """
    if isinstance(frame, pd.DataFrame):
        names = list(frame.columns)
        values = frame.to_numpy(dtype=float)
    else:
        names, values = None, np.asarray(frame, dtype=float)
    if values.ndim != 2:
        raise SynthDPError(f"the table must be 2-dimensional; got shape {values.shape}")
    if not np.isfinite(values).all():
        raise SynthDPError("the table has missing or infinite values")
    d = values.shape[1]
    lo = _per_column(lower, names, d, "lower")
    hi = _per_column(upper, names, d, "upper")
    if not (hi > lo).all():
        raise SynthDPError("every column needs upper > lower")
    # clipped into the bounds first: a value near +-1.8e308 then maps to -1 or 1, not through an overflow
    return np.clip(2.0 * (np.clip(values, lo, hi) - lo) / (hi - lo) - 1.0, -1.0, 1.0)
