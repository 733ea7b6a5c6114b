"""Summaries: answer smooth queries straight from the released moments, without sampling.

The noisy Chebyshev moments of a release *are* a summary of the table (docs/mechanism.md §7;
Wang, Fan, Zhang & Wang, "Efficient algorithm for privately releasing smooth queries").
A query q_f(D) = (1/n) sum_i f(x_i) is answered as

    q_f ~ c_0 + sum_r c_r b_hat_r,

where b_hat_r are the released moments of phi_r(x) = prod_i T_{r_i}(x_i) (x in the [-1, 1]^d
coordinates of the release; the constant phi_0 = 1 has moment 1) and c_r are Chebyshev
coefficients of f in those coordinates:

    a_r = 2^{s(r)} E_theta[ f(cos theta) prod_i cos(r_i theta_i) ],   theta ~ U[0, pi]^d,

with s(r) the number of non-zero entries of r (a_0 = E_theta[f(cos theta)]), and

* ``damping="none"`` (default): c_r = a_r, the truncated Chebyshev series. The answer is
  exact, up to the noise and the quadrature, for every f in the span of the released basis
  and the constant, and the coefficients obey |c_r| <= 2^{s(r)} max|f| (Lemma 4.3's bound,
  without the damping).
* ``damping="jackson"``: c_r = mu_r a_r with mu_r = prod_i mu_{r_i}, the multipliers of the
  paper's operator I_{t,K} (Section 4.1: generalised Jackson kernel of order
  ceil((K + 3)/2) and a (K+1)-th difference), t the highest released degree and K the
  release's smoothness. Theorem 4.1 bounds its error by C / t^(K+1); for smooth f it
  decays like t^-(K+2) (K even), measured in tests/test_summary.py.

Why truncation is the default: the operator I_{t,K} is built for a worst-case rate over
all K-smooth f, and pays for it at every finite t. Its multipliers vanish for every degree
>= 1 when t < ceil((K + 3)/2) (t <= 3 for K = 4), so on the releases synthdp makes by
default (degrees 1-2) it answers every query with the constant c_0 and ignores the data;
it multiplies middle degrees by up to ~2 (more noise); and on a Gaussian (sigma = 0.5, one
variable) its L-infinity error at t = 8 is 0.31 against 7e-4 for the truncated series
(exact to 1e-15 from t = 32). On the paper's benchmark queries it was less accurate than
the truncated series in every setting and width but one. Measured:
docs/decisions/summary-damping.md. Truncation keeps Jackson's rate up to the Lebesgue
constant, a (log t)^d factor, and the trivial coefficient bound above.

Quadrature (the expectations over theta), on N nodes shared by every query of a summary:

* up to a few dimensions, the Gauss-Chebyshev product rule: M nodes per axis at
  theta_j = pi (j + 1/2) / M, M = floor(N^(1/d)), used when M >= max(8, 2 (t + 1)). It is
  exact for polynomials of degree < 2M - t per axis; the projections are DCTs
  (scipy.fft.dctn), which keeps full tensor bases (exact mode) cheap;
* otherwise, scrambled Sobol' points u (scipy.stats.qmc, 2^ceil(log2 N) points, fixed
  ``seed``) with theta = pi u. In theta the Chebyshev weight is uniform, so this is plain
  quasi-Monte Carlo on a smooth integrand; its error does not grow with d the way a product
  rule's does. tests/test_summary.py checks it on a quadratic; measured against an exact
  reference on the benchmark summaries: docs/decisions/summary-quadrature.md. The answers
  are deterministic for a given ``seed``; answering again with other seeds estimates the
  quadrature error.

Because the coefficients are linear in f, every answer is a weighted sum over the nodes,
answer(f) = sum_j w_j f(x_j), with signed weights w_j = (1 + sum_r 2^{s(r)} mu_r b_hat_r
phi_r(x_j)) / N fixed by the summary (:attr:`Summary.node_weights`). Answering costs N
evaluations of f and a dot product.

This module reads only the summary: it never imports the private table, the release or
the CLI.
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import KW_ONLY, dataclass, replace
from functools import cached_property
from typing import ClassVar, TypeGuard

import numpy as np
import pandas as pd

from synthdp.checks import is_finite_number, is_int
from synthdp.config import MAX_JACKSON_SMOOTHNESS, MAX_SMOOTHNESS
from synthdp.domain.box import Domain
from synthdp.domain.dates import SECONDS_PER_DAY
from synthdp.domain.decode import nearest_values
from synthdp.errors import SynthDPError, near_column
from synthdp.stats.chebyshev import ChebyshevBasis
from synthdp.summaries.base import SummaryFile, column_order

FORMAT = "synthdp-summary"
FORMAT_VERSION = 1
BASIS_DESCRIPTION = (
    "product Chebyshev polynomials of the first kind, phi_r(x) = prod_i T_{r_i}(x_i), on the "
    "[-1, 1]^d image of the bounds; the constant phi_0 = 1 has moment 1 and is not listed"
)
DAMPINGS = ("none", "jackson")
DEFAULT_NODES = 2**13
MAX_DEGREE = 4096  # a basis degree a summary may hold (a release's are a few tens; the Jackson studies 512): past it, an edited file
DESIGN_ENTRIES = 2**22  # values of the basis at the nodes held at once (32 MB)
MIN_TENSOR_NODES = 8  # fewer nodes per axis than this: the product rule is too coarse, use Sobol'

Query = Callable[[pd.DataFrame], object]


def jackson_multipliers(t: int, smoothness: int) -> np.ndarray:
    """Multipliers mu_0..mu_t of the paper's approximation operator I_{t,K} (Section 4.1).

    I_{t,K} g(x) = -int H(s) sum_{l=1}^{K+1} (-1)^l C(K+1, l) g(x + l s) ds, with H the
    generalised Jackson kernel J_{t',r}(s) = (sin(t's/2) / sin(s/2))^{2r} / lambda of order
    r = ceil((K + 3)/2) and t' = floor(t/r) + 1. Acting on cos(n x) it multiplies by
    mu_n = -sum_{l=1}^{K+1} (-1)^l C(K+1, l) h(n l), where h(m) = int H(s) cos(m s) ds.
    (sin(t's/2) / sin(s/2))^2 has Fourier coefficients t' - |j| (|j| < t'), so h is the r-fold
    self-convolution of that triangle, normalised to h(0) = 1 (int H = 1), and 0 beyond
    degree r (t' - 1) <= t.

    Parameters
    ----------
    t : int
        Highest degree, >= 0.
    smoothness : int
        K, 1 to :data:`synthdp.config.MAX_JACKSON_SMOOTHNESS` (31): the alternating sum's float64
        rounding grows as 2^(K + 1) 2^-52.

    Returns
    -------
    ndarray, shape (t + 1,)
        mu_n for n = 0..t; mu_0 = 1.
    """
    order = math.ceil((smoothness + 3) / 2)
    width = t // order + 1
    triangle = width - np.abs(np.arange(1 - width, width, dtype=float))
    power = np.ones(1)
    for _ in range(order):
        power = np.convolve(power, triangle)
    centre = len(power) // 2
    h = np.zeros(t * (smoothness + 1) + 1)
    top = min(len(h), centre + 1)
    h[:top] = power[centre:centre + top] / power[centre]
    degrees = np.arange(t + 1)
    return -sum((-1) ** l * math.comb(smoothness + 1, l) * h[degrees * l] for l in range(1, smoothness + 2))


@dataclass(frozen=True)
class _TensorRule:
    """Gauss-Chebyshev product rule: ``per_axis`` nodes theta_j = pi (j + 1/2) / M per axis.

    Uniform weights in theta (the midpoint rule), exact for cos(k theta) with k < 2M. The
    projections onto phi_r are a type-II DCT and the expansion a type-III DCT, O(N log N)
    whatever the number of basis functions.
    """

    d: int
    per_axis: int

    @property
    def description(self) -> str:
        return f"Gauss-Chebyshev product rule, {self.per_axis}^{self.d} nodes"

    @cached_property
    def nodes(self) -> np.ndarray:
        """Node coordinates x = cos(theta), shape (M^d, d), in the C order of an (M,)*d grid."""
        axis = np.cos(np.pi * (np.arange(self.per_axis) + 0.5) / self.per_axis)
        grids = np.meshgrid(*([axis] * self.d), indexing="ij")
        return np.stack([g.reshape(-1) for g in grids], axis=1)

    def project(self, values: np.ndarray, indices: np.ndarray) -> np.ndarray:
        """(1/N) sum_j values_j phi_r(x_j) for each r: (N,) or (N, k) -> (R,) or (R, k)."""
        from scipy.fft import (
            dctn,  # imported on use: scipy.fft and scipy.stats slow the CLI's start-up (docs/decisions/lazy-imports.md)
        )

        M, d = self.per_axis, self.d
        grid = values.reshape((M,) * d + values.shape[1:])
        # scipy's unnormalised DCT-II is 2 sum_j v_j cos(k theta_j) along each axis.
        spectrum = dctn(grid, type=2, axes=tuple(range(d))) / (2.0 * M) ** d
        return spectrum[tuple(indices.T)]

    def expand(self, coefficients: np.ndarray, indices: np.ndarray) -> np.ndarray:
        """sum_r coefficients_r phi_r(x_j) at every node, shape (N,)."""
        from scipy.fft import dctn

        spectrum = np.zeros((self.per_axis,) * self.d)
        # DCT-III is v_0 + 2 sum_{k>=1} v_k cos(k theta_j) along each axis: halve per non-zero degree.
        spectrum[tuple(indices.T)] = coefficients / 2.0 ** _support_sizes(indices)
        return dctn(spectrum, type=3, axes=tuple(range(self.d))).reshape(-1)


@dataclass(frozen=True)
class _SobolRule:
    """Scrambled Sobol' points u on [0, 1)^d, theta = pi u, equal weights 1/N (N = 2^log2_nodes).

    E[phi_r] = 0 is known exactly for r != 0, so the rule projects onto phi_r minus its
    average over the nodes (a control variate): constants are then answered exactly, the
    weights sum to 1, and answer(f + k) = answer(f) + k.
    """

    d: int
    log2_nodes: int
    seed: int

    @property
    def description(self) -> str:
        return f"scrambled Sobol' points, {2 ** self.log2_nodes} nodes, seed {self.seed}"

    @cached_property
    def nodes(self) -> np.ndarray:
        """Node coordinates x = cos(pi u), shape (N, d)."""
        from scipy.stats import qmc

        u = qmc.Sobol(self.d, scramble=True, seed=self.seed).random_base2(self.log2_nodes)
        return np.cos(np.pi * u)

    def project(self, values: np.ndarray, indices: np.ndarray) -> np.ndarray:
        """(1/N) sum_j values_j (phi_r(x_j) - mean phi_r) for each r: (N,) or (N, k) -> (R,) or (R, k).

        By blocks of nodes (:func:`_design_blocks`): sum_j v_j phi_r(x_j) - mean phi_r sum_j v_j."""
        raw: np.ndarray | float = 0.0
        sums: np.ndarray | float = 0.0
        for rows, design in _design_blocks(ChebyshevBasis(indices), self.nodes):
            raw = raw + design.T @ values[rows]
            sums = sums + design.sum(axis=0)
        n = len(self.nodes)
        return (raw - np.multiply.outer(np.asarray(sums) / n, values.sum(axis=0))) / n

    def expand(self, coefficients: np.ndarray, indices: np.ndarray) -> np.ndarray:
        """sum_r coefficients_r (phi_r(x_j) - mean phi_r) at every node, shape (N,)."""
        out = np.empty(len(self.nodes))
        sums: np.ndarray | float = 0.0
        for rows, design in _design_blocks(ChebyshevBasis(indices), self.nodes):
            out[rows] = design @ coefficients
            sums = sums + design.sum(axis=0)
        return out - (np.asarray(sums) / len(self.nodes)) @ coefficients


def _design_blocks(basis: ChebyshevBasis, points: np.ndarray) -> Iterator[tuple[slice, np.ndarray]]:
    """``basis.evaluate(points)`` by blocks of rows, (rows, their values), at most :data:`DESIGN_ENTRIES` values at
    once: the whole (N, R) array of a large basis (``--n-basis 100000``: 6 GB at N = 8192) was a MemoryError."""
    step = max(1, DESIGN_ENTRIES // basis.size)
    for start in range(0, len(points), step):
        yield slice(start, start + step), basis.evaluate(points[start:start + step])


def _basis_products(basis: ChebyshevBasis, points: np.ndarray, coefficients: np.ndarray) -> np.ndarray:
    """``basis.evaluate(points) @ coefficients``, by :func:`_design_blocks`."""
    out = np.empty((len(points),) + coefficients.shape[1:])
    for rows, design in _design_blocks(basis, points):
        out[rows] = design @ coefficients
    return out


def _support_sizes(indices: np.ndarray) -> np.ndarray:
    """s(r), the number of non-zero entries of each multi-index, shape (R,)."""
    return (indices > 0).sum(axis=1)


def _quadrature_rule(d: int, max_degree: int, n_nodes: int, seed: int) -> _TensorRule | _SobolRule:
    per_axis = int(round(n_nodes ** (1 / d)))
    while per_axis > 1 and per_axis**d > n_nodes:  # the float root can overshoot
        per_axis -= 1
    if per_axis >= max(MIN_TENSOR_NODES, 2 * (max_degree + 1)):
        return _TensorRule(d, per_axis)
    return _SobolRule(d, math.ceil(math.log2(n_nodes)), seed)


@dataclass(frozen=True, eq=False)
class Summary(SummaryFile):
    """The released moments of a table, and the evaluator that answers smooth queries from them.

    Parameters
    ----------
    domain : Domain
        The public bounds: the map between the user's units and [-1, 1]^d.
    basis_indices : int array-like, shape (R, d)
        Multi-indices r of the released moments (none all-zero, no repeats).
    noisy_moments : array-like, shape (R,)
        b_hat_r, the released (noisy) moments, in the order of ``basis_indices``.
    smoothness : int, default 4
        K of the release; sets the Jackson operator when ``damping="jackson"``.
    report : mapping, optional
        The privacy report of the release (JSON-compatible); stored and saved as is.
    damping : {"none", "jackson"}, default "none"
        Truncated Chebyshev series, or the paper's Jackson-damped coefficients (module
        docstring). Evaluation option: not saved.
    n_nodes : int, default 8192
        Quadrature nodes N shared by all queries (a product rule when that is fine enough,
        else 2^ceil(log2 N) scrambled Sobol' points). Evaluation option: not saved.
    seed : int, default 0
        Scrambling seed of the Sobol' points (public randomness: answers are
        deterministic). Evaluation option: not saved.
    nullable : tuple of str, default ()
        The columns with missing cells (declared nullable). Their moments count a missing cell
        at the centre of the column's bounds, so a query that reads such a column is answered as
        if its missing cells held that value: such an answer warns (f is evaluated a second time
        with those columns' values shuffled between the nodes, to see whether it reads them; a
        query that is not deterministic warns as one that reads them; a sampled table holds the
        missing cells as missing).

    Notes
    -----
    Change an evaluation option with ``dataclasses.replace(summary, damping="jackson")``.

    Examples
    --------
    >>> summary = SmoothSynthesizer(epsilon=1.0).fit(df, bounds, synthesize=False).summary()
    >>> summary.answer(lambda rows: np.exp(-((rows["age"] - 50) / 10) ** 2))
    >>> summary.save("summary.json"); Summary.load("summary.json").answer(lambda rows: rows["bmi"])
    """

    FORMAT: ClassVar[str] = FORMAT

    domain: Domain
    basis_indices: np.ndarray
    noisy_moments: np.ndarray
    _: KW_ONLY
    smoothness: int = 4
    report: Mapping | None = None
    damping: str = "none"
    n_nodes: int = DEFAULT_NODES
    seed: int = 0
    nullable: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        try:
            given = np.array(self.basis_indices, dtype=float)
            moments = np.array(self.noisy_moments, dtype=float)
        except (TypeError, ValueError, OverflowError):  # OverflowError: an integer of hundreds of digits
            raise SynthDPError("basis_indices must be integers and noisy_moments numbers") from None
        if not (np.isfinite(given).all() and (given == np.round(given)).all()):
            raise SynthDPError("basis_indices must be integers and noisy_moments numbers")
        indices = given.astype(np.int64)
        if indices.ndim != 2 or indices.shape[0] == 0 or indices.shape[1] != self.domain.d:
            raise SynthDPError(f"basis_indices must have shape (R, {self.domain.d}) with R >= 1; got {indices.shape}")
        if (indices < 0).any() or (indices.sum(axis=1) == 0).any():
            raise SynthDPError("basis_indices must be non-negative and none all-zero (the constant is implicit)")
        if len({index.tobytes() for index in indices}) != len(indices):  # np.unique(axis=0) sorted 4 000 x 2 000 in 4 s
            raise SynthDPError("basis_indices must not repeat a multi-index")
        if moments.shape != (len(indices),) or not np.isfinite(moments).all():
            raise SynthDPError(f"noisy_moments must be {len(indices)} finite numbers, one per multi-index")
        _require(is_int(self.smoothness) and 1 <= self.smoothness <= MAX_SMOOTHNESS,
                 f"smoothness must be an integer from 1 to {MAX_SMOOTHNESS}")
        _require(self.damping in DAMPINGS, f"damping must be one of {list(DAMPINGS)}")
        _require(self.damping != "jackson" or self.smoothness <= MAX_JACKSON_SMOOTHNESS,
                 f"damping='jackson' needs smoothness of at most {MAX_JACKSON_SMOOTHNESS} (its multipliers, an "
                 "alternating sum of binomials, lose their digits in float64 beyond); use damping='none'")
        _require(is_int(self.n_nodes) and self.n_nodes >= 2, "n_nodes must be an integer >= 2")
        _require(is_int(self.seed) and self.seed >= 0, "seed must be an integer >= 0")
        _require(isinstance(self.nullable, (tuple, list)) and all(name in self.domain.names for name in self.nullable),
                 "nullable must name columns of the summary")
        object.__setattr__(self, "nullable", tuple(self.nullable))
        _require(int(indices.max()) <= MAX_DEGREE, f"basis_indices must have degrees of at most {MAX_DEGREE}")
        indices.setflags(write=False)
        moments.setflags(write=False)
        object.__setattr__(self, "basis_indices", indices)
        object.__setattr__(self, "noisy_moments", moments)
        _require(self.report is None or isinstance(self.report, Mapping), "report must be a mapping (the privacy "
                 "report) or None")
        if self.report is not None:  # a private, JSON-plain copy: the caller's dict may change
            object.__setattr__(self, "report", json.loads(json.dumps(self.report, default=_plain)))

    # ------------------------------------------------------------- structure
    @property
    def d(self) -> int:
        """Number of columns."""
        return self.domain.d

    @property
    def n_basis(self) -> int:
        """R, the number of released (non-constant) moments."""
        return len(self.basis_indices)

    @property
    def max_degree(self) -> int:
        """t, the highest degree of any variable in the released basis."""
        return int(self.basis_indices.max())

    @property
    def quadrature(self) -> str:
        """The quadrature rule in words (which rule, how many nodes)."""
        return self._rule.description

    @cached_property
    def _rule(self) -> _TensorRule | _SobolRule:
        return _quadrature_rule(self.d, self.max_degree, self.n_nodes, self.seed)

    @cached_property
    def _damping_factors(self) -> np.ndarray:
        """mu_r for every released r, shape (R,): all ones without damping."""
        if self.damping == "none":
            return np.ones(self.n_basis)
        per_degree = jackson_multipliers(self.max_degree, self.smoothness)
        return per_degree[self.basis_indices].prod(axis=1)

    @cached_property
    def _node_values(self) -> np.ndarray:
        values = self.domain.from_unit(self._rule.nodes)
        values.setflags(write=False)
        return values

    @property
    def nodes(self) -> pd.DataFrame:
        """The quadrature nodes in the user's units, shape (N, d), one column per column.

        Integer columns take non-integer values here: f is treated as a smooth function on
        the box.
        """
        return self._frame(self._node_values.copy())

    @cached_property
    def node_weights(self) -> np.ndarray:
        """Signed weights w, shape (N,), with answer(f) = sum_j w_j f(nodes_j).

        w_j = (1 + sum_r 2^{s(r)} mu_r b_hat_r phi_r(x_j)) / N (phi_r centred on Sobol'
        points); they sum to 1, so constants are answered exactly.
        """
        rule, indices = self._rule, self.basis_indices
        dual = 2.0 ** _support_sizes(indices) * self._damping_factors * self.noisy_moments
        weights = (1.0 + rule.expand(dual, indices)) / len(rule.nodes)
        weights.setflags(write=False)
        return weights

    # --------------------------------------------------------------- answers
    def answer(self, f: Query) -> float | np.ndarray:
        """Answer the smooth query q_f(D) = (1/n) sum_i f(x_i) from the summary alone.

        Parameters
        ----------
        f : callable
            Vectorised query on the ORIGINAL units: called once with a DataFrame of shape
            (N, d) (the quadrature nodes, columns named as the table's) and returning one
            value per row, shape (N,) (a Series or array), or k values per row, shape
            (N, k), for k queries at once (the fastest way to answer many queries). It must
            not modify its input (the frame is backed by read-only memory).

        Returns
        -------
        float, or ndarray of shape (k,)
            c_0 + sum_r c_r b_hat_r for each query.
        """
        return self._combine(self._evaluate(f))

    def answer_many(self, fs: Iterable[Query]) -> np.ndarray:
        """Answer several scalar queries on the same nodes.

        Parameters
        ----------
        fs : iterable of callables
            Each as in :meth:`answer`, returning shape (N,).

        Returns
        -------
        ndarray, shape (Q,)
            One answer per query, in the order of ``fs``.
        """
        answers = []
        for f in fs:
            values = self._evaluate(f)
            if values.ndim != 1:
                raise SynthDPError("answer_many takes scalar queries (one value per row); use answer() for a vector-valued one")
            answers.append(self._combine(values))
        return np.array(answers, dtype=float)

    def coefficients(self, f: Query) -> tuple[float | np.ndarray, np.ndarray]:
        """The coefficients of f that the summary uses.

        Parameters
        ----------
        f : callable
            As in :meth:`answer`.

        Returns
        -------
        c0 : float, or ndarray of shape (k,)
            The constant term (its moment is 1).
        c : ndarray, shape (R,) or (R, k)
            c_r for each released multi-index, in the order of ``basis_indices``
            (damped by mu_r when ``damping="jackson"``); answer(f) = c0 + c . b_hat.
        """
        return self._coefficients_of(self._evaluate(f))

    def _coefficients_of(self, values: np.ndarray) -> tuple[float | np.ndarray, np.ndarray]:
        """:meth:`coefficients` from f's values at the nodes, shape (N,) or (N, k)."""
        indices = self.basis_indices
        raw = self._rule.project(values, indices)
        scale = (2.0 ** _support_sizes(indices) * self._damping_factors).reshape((-1,) + (1,) * (values.ndim - 1))
        c0 = values.mean(axis=0)
        return (float(c0) if values.ndim == 1 else c0), scale * raw

    def answer_interval(self, f: Query, level: float = 0.95, check_points: int = 2**14) -> pd.DataFrame:
        """Answer a smooth query with an interval that covers the table's value.

        The table's value is q_f(D) = (1/n) sum_i f(x_i) over its rows (clipped into the bounds).
        With p(x) = c0 + sum_r c_r phi_r(x) the polynomial the summary uses for f
        (:meth:`coefficients`), b_r(D) the exact moments and eta_r = b_hat_r - b_r their noise::

            answer(f) - q_f(D) = sum_r c_r eta_r - (1/n) sum_i (f - p)(x_i),

        two terms this method bounds separately:

        * **noise**: eta is the moments stage's noise, read from the summary's privacy report:
          independent Gaussian(0, sigma^2) or Laplace(b) values (every calibration synthdp uses,
          by row or by unit). Gaussian: sum_r c_r eta_r ~ N(0, sigma^2 ||c||^2), so the noise
          half-width is z sigma ||c||_2 (``std_error`` = sigma ||c||_2). Laplace: its ``level``
          quantile of ``|sum_r c_r eta_r|`` is taken from 2^16 draws of the noise (public
          randomness, seeded by ``seed``: about 1 % relative error at level 0.95);
          ``std_error`` = b sqrt(2) ||c||_2.
        * **approximation**: ``|(1/n) sum_i (f - p)(x_i)|`` <= sup over the box of ``|f - p|``, estimated by
          the largest ``|f - p|`` on the quadrature nodes, ``check_points`` more scrambled Sobol'
          points of the box and its vertices (all 2^d of them, or ``check_points`` at random). An estimate of the sup-norm, not a proof of it: a query with a spike
          between the points (a kernel far narrower than the box / ``check_points`` ^ (1/d)) can
          exceed it. It is 0, to rounding, for every f in the span of the released basis.

        * **the row count, by unit**: a release by privacy unit divides every sum by its noisy row
          count n~ (the report's ``privacy_unit``: ``rows_noisy`` and ``rows_noise_scale``), so
          ``answer - c0 = (n / n~) A + sum_r c_r eta_r`` with ``A = sum_r c_r b_r``. With
          ``abs(n - n~) <= t`` (the count noise's 1 - alpha/2 quantile, alpha = 1 - ``level``; the
          moments' noise then taken at 1 - alpha/2 too, a union bound),
          ``abs(A (n / n~ - 1)) <= (abs(answer - c0) + noise half-width) t / (n~ - t)``: added to
          the noise half-width (infinite where t >= n~).

        The interval is answer +- (noise half-width + approximation error): it covers q_f(D) with
        probability at least ``level`` over the noise, whatever the table, when the approximation
        error is the sup-norm. It is about the table the summary was made of, not its population
        (add the sampling error, sd(f) / sqrt(n), for that).

        Parameters
        ----------
        f : callable
            A scalar query, as in :meth:`answer` (one value per row, shape (N,)), or k queries
            (shape (N, k)).
        level : float, default 0.95
            Coverage probability over the noise, in (0, 1).
        check_points : int, default 16384
            Extra points of the box on which ``|f - p|`` is checked (and at most as many vertices),
            rounded up to a power of 2.

        Returns
        -------
        DataFrame, one row per query (index 0..k-1)
            ``estimate`` (the answer), ``std_error`` (of the noise term), ``noise_half_width``,
            ``approximation_error``, ``lower``, ``upper``.

        Raises
        ------
        SynthDPError
            The summary has no privacy report with its moments stage (a summary built by hand),
            or ``level`` is not in (0, 1).
        """
        if not (isinstance(level, (int, float, np.floating)) and not isinstance(level, bool) and 0 < level < 1):
            raise SynthDPError("level must be a number in (0, 1)")
        _require(is_int(check_points) and check_points >= 1, "check_points must be an integer >= 1")
        mechanism, scale = self._moment_noise()
        count = self._count_noise()
        noise_level = level if count is None else 1 - (1 - level) / 2  # a union bound with the count's noise
        at_nodes = self._evaluate(f)
        c0, c = self._coefficients_of(at_nodes)
        c = c.reshape(self.n_basis, -1)
        c0 = np.atleast_1d(np.asarray(c0, dtype=float))
        estimate = c0 + c.T @ self.noisy_moments
        norm = np.sqrt((c**2).sum(axis=0))
        if mechanism == "Gaussian":
            from scipy.stats import norm as normal

            std_error = scale * norm
            half = normal.ppf(0.5 + noise_level / 2) * std_error
        else:
            std_error = scale * np.sqrt(2.0) * norm
            rng = np.random.default_rng(self.seed)
            chunk = max(64, min(2**16, 2**22 // self.n_basis))  # bounded memory whatever R
            draws = np.concatenate([np.abs(rng.laplace(0.0, scale, (chunk, self.n_basis)) @ c)
                                    for _ in range(-(-2**16 // chunk))])
            half = np.quantile(draws, noise_level, axis=0)
        if count is not None:
            count_mechanism, count_scale, noisy_rows = count
            alpha = (1 - level) / 2
            if count_mechanism == "Gaussian":
                from scipy.stats import norm as normal

                t = count_scale * normal.ppf(1 - alpha / 2)
            else:
                t = count_scale * math.log(1 / alpha)  # P(|Laplace(b)| > t) = exp(-t / b)
            factor = t / (noisy_rows - t) if noisy_rows > t else math.inf
            half = half + (np.abs(estimate - c0) + half) * factor
        approximation = self._residual_sup(f, at_nodes, c0, c, check_points)
        return pd.DataFrame({"estimate": estimate, "std_error": std_error, "noise_half_width": half,
                             "approximation_error": approximation, "lower": estimate - half - approximation,
                             "upper": estimate + half + approximation})

    def _count_noise(self) -> tuple[str, float, float] | None:
        """("Gaussian" or "Laplace", scale in rows, the noisy row count) of a release by privacy unit,
        from the privacy report; None by row."""
        unit = self._privacy().get("privacy_unit")
        if not isinstance(unit, Mapping):
            return None
        scale, rows = unit.get("rows_noise_scale"), unit.get("rows_noisy")
        if not (_positive_number(scale) and _positive_number(rows)):
            raise SynthDPError("the summary's privacy report has no noise scale for its noisy row count (a release "
                               "by privacy unit divides every moment by it): write the summary again with this synthdp")
        mechanism = unit.get("rows_noise", "Laplace")
        if mechanism not in ("Gaussian", "Laplace"):  # an edited report: not read as Laplace without a word
            raise SynthDPError("the summary's privacy report is malformed (its privacy unit's rows_noise is neither "
                               "'Gaussian' nor 'Laplace')")
        return mechanism, float(scale), float(rows)

    def _privacy(self) -> Mapping:
        """The privacy report's ``privacy`` section ({} without one); a report of another shape is an error."""
        report = self.report or {}
        privacy = report.get("privacy") if isinstance(report, Mapping) else None
        if privacy is None:
            return {}
        if not isinstance(privacy, Mapping):
            raise SynthDPError("the summary's privacy report is malformed (its privacy section is not an object)")
        return privacy

    def _moment_noise(self) -> tuple[str, float]:
        """("Gaussian" or "Laplace", sigma or b) of each released moment, from the privacy report."""
        stages = self._privacy().get("stages") or []
        if not isinstance(stages, list):
            raise SynthDPError("the summary's privacy report is malformed (its stages are not a list)")
        stage = next((s for s in stages if isinstance(s, Mapping) and s.get("stage") == "moments"), None)
        if stage is None:
            raise SynthDPError("this summary has no privacy report with a moments stage, so the noise of its moments is "
                               "unknown: intervals need a summary written by synthdp (summarize, or generate --summary-out)")
        mechanism, scale = str(stage.get("mechanism", "")), stage.get("noise_scale")
        if not _positive_number(scale, zero=True):
            raise SynthDPError("the summary's privacy report has no valid noise_scale for its moments stage")
        for name in ("Gaussian", "Laplace"):
            if mechanism.startswith(name):
                return name, float(scale)
        raise SynthDPError("the summary's moments stage has an unknown mechanism; intervals know Gaussian and Laplace")

    def _residual_sup(self, f: Query, at_nodes: np.ndarray, c0: np.ndarray, c: np.ndarray,
                      check_points: int) -> np.ndarray:
        """max |f - p| over the quadrature nodes (where f's values are ``at_nodes``), ``check_points``
        Sobol' points, the same points with their integer and date columns rounded to whole numbers
        and their columns with declared values moved to the nearest declared one (where a table's
        rows lie: an equality on an integer column, age == 40, is 0 at every point between them,
        and its misfit showed as 0) and the vertices of the box, per query."""
        from scipy.stats import qmc

        log2 = max(0, math.ceil(math.log2(check_points)))
        u = qmc.Sobol(self.d, scramble=True, seed=self.seed + 1).random_base2(log2)
        if self.d <= log2:  # every vertex of the box (a polynomial's misfit is often largest there)
            vertices = 1.0 - 2.0 * ((np.arange(2**self.d)[:, None] >> np.arange(self.d)) & 1)
        else:  # as many vertices, drawn at random (public randomness)
            vertices = np.random.default_rng(self.seed + 1).choice([-1.0, 1.0], size=(2**log2, self.d))
        basis = ChebyshevBasis(self.basis_indices)
        worst = np.zeros(c.shape[1])
        checks = [(self._rule.nodes, at_nodes), (2.0 * u - 1.0, None), (vertices.astype(float), None)]
        whole = [j for j, column in enumerate(self.domain.columns)
                 if column.integer and column.values is None]  # integers and dates
        declared = [(j, column.values) for j, column in enumerate(self.domain.columns) if column.values is not None]
        if whole or declared:
            rounded = self.domain.from_unit(2.0 * u - 1.0)
            rounded[:, whole] = np.clip(np.round(rounded[:, whole]), self.domain.lower[whole], self.domain.upper[whole])
            for j, grid in declared:  # a column's declared values, where its rows lie
                rounded[:, j] = nearest_values(rounded[:, j], grid)
            checks.append((self.domain.to_unit(rounded), None))
        for unit, values in checks:
            if values is None:
                values = self._evaluate_at(f, self.domain.from_unit(unit))
            values = values.reshape(len(unit), -1)
            residual = values - c0 - _basis_products(basis, unit, c)
            worst = np.maximum(worst, np.abs(residual).max(axis=0))
        return worst

    def _evaluate(self, f: Query) -> np.ndarray:
        values = self._evaluate_at(f, self._node_values)
        if self.nullable:
            # does f read them? its values with those columns' nodes shuffled (a fixed, public permutation: not
            # the reverse order, which mirrors the symmetric nodes about the centre); any other query: the same
            moved = self._node_values.copy()
            order = np.random.default_rng(0).permutation(len(moved))
            for name in self.nullable:
                j = self.domain.names.index(name)
                moved[:, j] = moved[order, j]
            if not np.array_equal(self._evaluate_at(f, moved), values):
                warnings.warn(f"column(s) {', '.join(repr(name) for name in self.nullable)} have missing cells, which "
                              "the summary's moments count at the centre of their bounds: this query reads them and is "
                              "biased by that (sample a table for such queries)", UserWarning, stacklevel=3)
        return values

    def _frame(self, points: np.ndarray) -> pd.DataFrame:
        """Points in the user's units as the query's DataFrame: a date or datetime column as datetime64
        (its days or seconds since 1970-01-01, fractions included), as a table holds it."""
        frame = pd.DataFrame(points, columns=self.domain.names, copy=False)
        for j, column in enumerate(self.domain.columns):
            if column.temporal:
                unit = "D" if column.temporal == "date" else "s"
                try:
                    frame[column.name] = pd.to_datetime(points[:, j], unit=unit)
                except pd.errors.OutOfBoundsDatetime:  # a year before 1678 or past 2262 (datetime64[ns], to_datetime's unit)
                    scale = (SECONDS_PER_DAY if unit == "D" else 1) * 10**6
                    frame[column.name] = np.round(points[:, j] * scale).astype(np.int64).astype("datetime64[us]")
        return frame

    def _evaluate_at(self, f: Query, points: np.ndarray) -> np.ndarray:
        frame = self._frame(points)
        try:
            result = f(frame)
        except KeyError as error:  # rows["agee"]: a column the summary does not hold (a bare KeyError: 'agee')
            key = error.args[0] if len(error.args) == 1 else None
            if not isinstance(key, str) or key in frame.columns:
                raise
            raise SynthDPError(f"the query raised KeyError({key!r}): the summary's columns are "
                               f"{', '.join(repr(name) for name in self.domain.names)}"
                               f"{near_column(key, self.domain.names)}") from error
        if isinstance(result, (pd.Series, pd.DataFrame)) and not result.index.equals(frame.index):
            if len(result.index) != len(frame.index) or not result.index.sort_values().equals(frame.index):
                raise SynthDPError("the query must return one value per row of its input, indexed as its input is")
            result = result.reindex(frame.index)  # rows in another order: each value back at its own node
        try:
            given = np.asarray(result)
            if np.iscomplexobj(given):  # float() would drop the imaginary part with only a numpy warning
                raise TypeError
            values = np.asarray(given, dtype=float)
        except (TypeError, ValueError):
            raise SynthDPError("the query must return real numbers") from None
        n_nodes = len(points)
        if values.ndim not in (1, 2) or values.shape[0] != n_nodes:
            raise SynthDPError(
                f"the query must return one value per row of its input, shape ({n_nodes},) or ({n_nodes}, k); "
                f"got shape {values.shape}"
            )
        if not np.isfinite(values).all():
            raise SynthDPError("the query returned a missing or infinite value at a point inside the bounds")
        return values

    def _combine(self, values: np.ndarray) -> float | np.ndarray:
        answer = values.T @ self.node_weights
        return float(answer) if values.ndim == 1 else answer

    # ------------------------------------------------------------------- I/O
    def to_dict(self) -> dict:
        """The summary as plain JSON types (evaluation options are not part of it).

        Returns
        -------
        dict
            What :meth:`save` writes and :meth:`from_dict` reads.
        """
        from synthdp._version import __version__

        return {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "synthdp_version": __version__,
            "basis": BASIS_DESCRIPTION,
            "column_order": list(self.domain.names),  # JSON objects are unordered: "bounds" alone may lose it
            "bounds": self.domain.to_dict(),
            "parameters": {"smoothness": self.smoothness, "d": self.d, "n_basis": self.n_basis,
                           "max_degree": self.max_degree},
            "basis_indices": self.basis_indices.tolist(),
            "noisy_moments": self.noisy_moments.tolist(),
            "privacy_report": self.report,
            **({"nullable": list(self.nullable)} if self.nullable else {}),
        }

    @classmethod
    def from_dict(cls, content: Mapping, origin: str = "summary", **options) -> Summary:
        """Rebuild a summary from :meth:`to_dict`'s output.

        Parameters
        ----------
        content : mapping
            :meth:`to_dict`'s output, or a summary file's JSON.
        origin : str, default "summary"
            Names the content in errors.
        **options
            Evaluation options (``damping``, ``n_nodes``, ``seed``), as in the class.

        Returns
        -------
        Summary
        """
        if not isinstance(content, Mapping) or content.get("format") != FORMAT:
            raise SynthDPError(f"{origin} is not a synthdp summary (no \"format\": \"{FORMAT}\")")
        if content.get("format_version") != FORMAT_VERSION:
            raise SynthDPError(f"{origin} has format_version {content.get('format_version')!r}; "
                               f"this synthdp reads {FORMAT_VERSION}")
        try:
            return cls(_domain_from_dict(content["bounds"], content.get("column_order")), content["basis_indices"],
                       content["noisy_moments"],
                       smoothness=content["parameters"]["smoothness"],
                       report=content.get("privacy_report"), nullable=_names(content.get("nullable", [])), **options)
        except KeyError as error:
            raise SynthDPError(f"{origin} is malformed (missing field {error})") from None
        except TypeError:  # its message may quote a value of the file
            raise SynthDPError(f"{origin} is malformed (a field of the wrong type)") from None
        except SynthDPError as error:
            raise SynthDPError(f"{origin}: {error}") from None


def _positive_number(value: object, zero: bool = False) -> TypeGuard[float]:
    """A finite number above 0 (or 0 where ``zero``), not a boolean (true is 1 to Python): a noise
    scale or a row count."""
    return is_finite_number(value) and (value > 0 or zero and value == 0)


def _names(value: object) -> tuple[str, ...]:
    """A list of column names from a file (a string is not one: "bmi" is not ("b", "m", "i"))."""
    if not (isinstance(value, list) and all(isinstance(name, str) for name in value)):
        raise SynthDPError("nullable must be a list of column names")
    return tuple(value)


def _domain_from_dict(content: Mapping, order: object = None) -> Domain:
    """The inverse of :meth:`Domain.to_dict`, keeping where each column's bounds came from; ``order``: the
    summary's ``"column_order"`` (see :func:`column_order`)."""
    columns = content["columns"]
    domain = Domain.from_bounds(columns, column_order(order, columns), source=content["source"])
    sources = {name: spec.get("source") for name, spec in columns.items() if isinstance(spec, Mapping)}
    return Domain(tuple(replace(column, source=sources.get(column.name) or column.source)
                        for column in domain.columns), domain.source)


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise SynthDPError(message)


def _plain(value):
    """JSON fallback for numpy scalars and arrays."""
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"cannot serialise {type(value).__name__}")
