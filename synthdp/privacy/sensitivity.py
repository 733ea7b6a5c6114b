"""Every sensitivity bound of synthdp's releases, each derived in its docstring.

Two neighbouring relations (:class:`Neighbours`). By default neighbouring tables have the same
public n and differ in one row (replace-one). With a privacy unit (``--privacy-unit``), they
differ by all the rows of one unit (a person), added or removed, after each unit's rows were
bounded to K (``--max-rows-per-unit``; :mod:`synthdp.reader.units`); n is then private, and
every mean is a sum over the rows divided by the released noisy count (a public number). Either
way every row lies in [-1, 1]^d after clipping to the public domain. A test checks each bound
on extreme rows (tests/test_privacy.py, tests/test_units.py, tests/test_audit.py).

Under add/remove of K rows, a release of sums S = sum_rows f(x) moves by the sum of at most K
rows' vectors f(x), so its sensitivity is K times the largest norm of one row's f(x) (not of
the difference of two rows, as under replace-one): the unit bounds below are derived that way.
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np


@dataclass(frozen=True)
class Neighbours:
    """The neighbouring relation the bounds are derived for.

    ``rows_per_unit`` None (:data:`ROWS`): neighbouring tables have the same public n and differ
    in one row. ``rows_per_unit`` = K: they differ by all the rows of one privacy unit (the
    values of ``column``), added or removed, and every unit has at most K rows (contribution
    bounding, :mod:`synthdp.reader.units`); n is private, and the n of every bound below is the
    released noisy count that divides the sums.
    """

    rows_per_unit: int | None = None
    column: str | None = None

    @property
    def by_unit(self) -> bool:
        return self.rows_per_unit is not None

    @property
    def k(self) -> int:
        """K, the most rows one unit adds or removes (1 for rows)."""
        return 1 if self.rows_per_unit is None else self.rows_per_unit

    def describe(self) -> str:
        """The relation in words, for the privacy report."""
        if self.rows_per_unit is None:
            return "replace one row; n is public"
        return (f"add or remove all rows of one privacy unit (column '{self.column}'), at most "
                f"{self.rows_per_unit} rows per unit after contribution bounding; n is not public (a noisy count)")


ROWS = Neighbours()


def bounded_means_sensitivity(count: int, n: float, neighbours: Neighbours = ROWS) -> tuple[float, float]:
    """(L1, L2) sensitivity of the means over n rows of ``count`` functions with values in [-1, 1].

    Replacing one row moves each mean (1/n) sum_i f(x_i) by at most 2/n, so the vector of
    means moves by at most 2 count/n in l1 and 2 sqrt(count)/n in l2. Every product
    Chebyshev function is such a function (a product of cosines).

    By unit: one row's vector (f(x))_k has l1 norm <= count and l2 norm <= sqrt(count), so
    adding or removing K rows moves the sums by K count and K sqrt(count), the means (sums
    over the released count n) by K count/n and K sqrt(count)/n. Attained by K rows at the
    corner (1, ..., 1), where every Chebyshev product is 1.
    """
    if neighbours.by_unit:
        return neighbours.k * count / n, neighbours.k * count**0.5 / n
    return 2 * count / n, 2 * count**0.5 / n


def per_value_sensitivity(n: float, neighbours: Neighbours = ROWS) -> float:
    """Sensitivity of one mean over n rows of a function with values in [-1, 1]: 2/n
    (replace one row), K/n by unit (K rows added or removed, each moving the sum by <= 1)."""
    return neighbours.k / n if neighbours.by_unit else 2 / n


SPREAD_GRID = 2000  # intervals of the grid on [-1, 1] over which univariate_spread maximises


def moments_sensitivity(indices: np.ndarray, n: float, neighbours: Neighbours = ROWS) -> tuple[float, float]:
    """(L1, L2) sensitivity of the means over n rows of the Chebyshev products ``indices``, shape (R, d).

    Replacing row x by y moves mean k by (phi_k(x) - phi_k(y))/n. Split the functions into
    each column's univariate ones (one non-zero entry, in column i; their degrees D_i) and
    the M others. For p = 1 and 2,

        sum_k |phi_k(x) - phi_k(y)|^p  <=  sum_i S_p(D_i) + 2^p M,

    because the univariate terms of column i depend on (x_i, y_i) alone, so together they
    are at most S_p(D_i) = :func:`univariate_spread`, and every other term is at most 2^p
    (two values in [-1, 1]). Hence L1 = (sum_i S_1(D_i) + 2M)/n and
    L2 = sqrt(sum_i S_2(D_i) + 4M)/n, never above :func:`bounded_means_sensitivity`: T_1 and
    T_2 of one variable cannot both move by 2 at once (T_2 takes the same value at x and -x),
    so with each column's T_1 and T_2 (R = 2d) the bound is 3.13 d/n and 2.27 sqrt(d)/n
    against 4 d/n and 2.83 sqrt(d)/n. With degree-1 functions only it is the generic bound,
    attained by rows at opposite corners.

    By unit: the spread argument needs two rows; one row's vector is at most 1 in every
    entry and is 1 in all of them at the corner (1, ..., 1), so the bound is
    :func:`bounded_means_sensitivity` by unit (K R/n, K sqrt(R)/n), attained.
    """
    indices = np.asarray(indices)
    if neighbours.by_unit:
        return bounded_means_sensitivity(len(indices), n, neighbours)
    univariate = np.count_nonzero(indices, axis=1) == 1
    spread_l1 = spread_l2 = 0.0
    for column in range(indices.shape[1]):
        degrees = tuple(sorted(int(r) for r in indices[univariate, column] if r > 0))
        if degrees:
            spread_l1 += univariate_spread(degrees, 1)
            spread_l2 += univariate_spread(degrees, 2)
    others = int(np.count_nonzero(~univariate))
    return (spread_l1 + 2 * others) / n, float(np.sqrt(spread_l2 + 4 * others)) / n


SPREAD_TABLE = Path(__file__).with_name("spread_table.json")  # univariate_spread of (1, ..., k), computed once
SPREAD_TABLE_MAX_DEGREE = 16


@functools.cache
def _spread_table() -> dict[str, float]:
    """The stored values of :func:`univariate_spread` for the degrees (1, ..., k), k <= 16:
    every basis synthdp builds gives each column such a prefix of degrees. Written by
    ``python -m synthdp.privacy.sensitivity``; a test recomputes entries and compares."""
    try:
        return dict(json.loads(SPREAD_TABLE.read_text()))
    except (OSError, ValueError):
        return {}


def univariate_spread(degrees: tuple[int, ...], power: int) -> float:
    """:func:`compute_univariate_spread`, read from the stored table when it holds these degrees."""
    stored = _spread_table().get(f"{','.join(map(str, degrees))}|{power}")
    return stored if stored is not None else compute_univariate_spread(degrees, power)


@functools.cache
def compute_univariate_spread(degrees: tuple[int, ...], power: int) -> float:
    """An upper bound on the maximum over x, y in [-1, 1] of sum_{r in degrees} |T_r(x) - T_r(y)|^power.

    The maximum over a grid of spacing h = 2/SPREAD_GRID, plus L h: every (x, y) lies within
    h/2 of a grid point in each coordinate, and the sum moves by at most L = sum_r power
    2^(power - 1) r^2 per unit move of either coordinate (|T_r'| <= r^2 by Markov's
    inequality, and |T_r(x) - T_r(y)| <= 2). Never above the trivial 2^power len(degrees).
    For degrees (1, 2): 3.13 (power 1; the maximum is 3.125, at x = 1, y = -1/4) and 5.165
    (power 2), against 4 and 8.
    """
    grid = np.linspace(-1.0, 1.0, SPREAD_GRID + 1)
    values = np.cos(np.outer(degrees, np.arccos(grid)))  # (len(degrees), grid points)
    largest = 0.0
    for start in range(0, len(grid), 256):
        terms = np.abs(values[:, start:start + 256, None] - values[:, None, :]) ** power
        largest = max(largest, float(terms.sum(axis=0).max()))
    lipschitz = sum(power * 2 ** (power - 1) * r * r for r in degrees)
    return min(largest + lipschitz * 2.0 / SPREAD_GRID, 2.0**power * len(degrees))


def histogram_sensitivity(d: int, neighbours: Neighbours = ROWS) -> tuple[float, float]:
    """L1 and L2 sensitivity of the d x (B + 2) counts of :func:`cell_counts`.

    Replacing one row takes one unit from one cell of each column and adds it to another (or
    the same) cell: L1 2d, L2 sqrt(2d). The same for a column's histogram by level of a class
    column (:func:`synthdp.stats.row_sums.class_cell_counts`, L x (B + 2) counts): a row lies in
    one (level, cell) of it, so a table of d columns, some by level and some one-way, moves as
    d one-way histograms do (checked on extreme rows in tests/test_class_histograms.py).

    By unit: one row adds 1 to one cell of each column (l1 d, l2 sqrt(d)); K rows, all in the
    same cells at worst: L1 K d, L2 K sqrt(d).
    """
    if neighbours.by_unit:
        return float(neighbours.k * d), neighbours.k * math.sqrt(d)
    return 2.0 * d, math.sqrt(2.0 * d)


def level_cells_sensitivity(k: int, n: float, neighbours: Neighbours = ROWS) -> tuple[float, float]:
    """L1 and L2 sensitivity of the one-way cells of k binary or categorical columns, released as
    means over n rows (:func:`synthdp.privacy.release.release_level_cells`).

    A row has at most one non-zero indicator per column (its level; a binary column, and a
    nullable column's missing indicator, have one coordinate, 1 for the second level).
    Replacing the row moves, in each column, at most one indicator from 1 to 0 and one from 0
    to 1, each mean by 1/n: L1 2k/n, L2 sqrt(2k)/n, attained when every column's level
    changes (to and from levels with an indicator). That is :func:`histogram_sensitivity` of
    k columns over n: a column's one-way cells are its histogram.

    By unit: one row adds 1/n to at most one cell of each column; K rows, all in the same
    cells at worst: L1 K k/n, L2 K sqrt(k)/n.
    """
    l1, l2 = histogram_sensitivity(k, neighbours)
    return l1 / n, l2 / n


def score_products_sensitivity(n: float, d: int, clip_norm_sq: float,
                               neighbours: Neighbours = ROWS, mean_weight: float = 0.0) -> tuple[float, float]:
    """L1 and L2 sensitivity of the means of s_i s_j, i <= j (and of c s_j), of score vectors with ||s||^2 <= C^2.

    :func:`synthdp.stats.scores.score_products` shrinks each row's normal scores onto the
    ball ||s||^2 <= C^2 (``clip_norm_sq``) whatever the row's values, so a row contributes
    v(s) = (s_i s_j)_{i <= j} / n with s in that ball. Replacing a row with score vector s
    by one with s' changes the release by v(s) - v(s').

    L2: ||v(s)||^2 n^2 = sum_i s_i^4 + sum_{i<j} s_i^2 s_j^2 <= (sum_i s_i^2)^2 <= C^4. And
    <v(s), v(s')> n^2 = sum_i a_i^2 + sum_{i<j} a_i a_j with a_i = s_i s'_i, which is
    ((sum_i a_i)^2 + sum_i a_i^2) / 2 >= 0. So ||v(s) - v(s')||^2 <= ||v(s)||^2 + ||v(s')||^2
    <= 2 C^4 / n^2: L2 = sqrt(2) C^2 / n, attained by s = C e_1, s' = C e_2 (each a row with
    one extreme score and every other score 0, the median).

    L1: with Delta = s s^T - s' s'^T (the full symmetric d x d change),
    sum_{i<=j} |Delta_ij| = (sum_{i,j} |Delta_ij| + sum_i |Delta_ii|) / 2. By Cauchy-Schwarz
    over the d^2 entries, sum_{i,j} |Delta_ij| <= d ||Delta||_F, and ||Delta||_F^2 =
    ||s||^4 + ||s'||^4 - 2 (s . s')^2 <= 2 C^4; and sum_i |s_i^2 - s'_i^2| <= ||s||^2 + ||s'||^2
    <= 2 C^2. So L1 = (d / sqrt(2) + 1) C^2 / n: an upper bound, within 8 % of the maximum
    at d = 2, which is sqrt(5) C^2 / n (s = C (cos a, sin a), s' = C (-sin a, cos a) with
    tan 2a = 1/2; tests/test_audit.py releases that pair).

    By unit: one row's v(s) n has l2 norm <= C^2 (above) and l1 norm
    sum_{i<=j} |s_i s_j| = ((sum_i |s_i|)^2 + sum_i s_i^2) / 2 <= (d + 1) C^2 / 2 (Cauchy-Schwarz:
    (sum_i |s_i|)^2 <= d ||s||^2); K rows: L1 K (d + 1) C^2 / (2n), L2 K C^2 / n.

    With the scores' means (``mean_weight`` c > 0, :attr:`synthdp.stats.scores.ScoreMap.mean_weight`),
    a row also contributes c s / n: v(s) = ((s_i s_j)_{i <= j}, c s) / n, and the change is
    Delta_p (the products', above) beside c (s - s') / n.

    L2: with t = s . s', the products' inner product above is ((sum_i a_i)^2 + sum_i a_i^2) / 2
    >= t^2 / 2 (sum_i a_i = t), so ||Delta_p||^2 n^2 <= ||s||^4 + ||s'||^4 - t^2 <= 2 C^4 - t^2,
    and the means' part is c^2 ||s - s'||^2 = c^2 (||s||^2 + ||s'||^2 - 2 t) <= 2 c^2 C^2 - 2 c^2 t.
    Their sum, -t^2 - 2 c^2 t + 2 C^4 + 2 c^2 C^2, is largest at t = -min(c^2, C^2): for
    c^2 <= C^2, L2 = sqrt(2 C^4 + 2 c^2 C^2 + c^4) / n, sqrt(2) C^2 / n at c = 0. Nearly
    attained: s = C e_1 and s' = C (cos a e_1 + sin a e_2) with a just past a right angle give
    2 C^4 + 2 c^2 C^2 + O(c^4) (tests/test_privacy.py).
    L1: the products' part as above, and the means' sum_j c |s_j - s'_j| <= c sqrt(d) ||s - s'||
    <= 2 c sqrt(d) C: L1 = ((d / sqrt(2) + 1) C^2 + 2 c sqrt(d) C) / n.
    By unit: one row's v(s) n has l2 norm sqrt(||(s_i s_j)_{i <= j}||^2 + c^2 ||s||^2) <= C sqrt(C^2 + c^2)
    and l1 norm at most (d + 1) C^2 / 2 + c sqrt(d) C; K rows: K times each, over n.
    """
    c2 = float(mean_weight) ** 2
    if neighbours.by_unit:
        if c2 == 0:
            return neighbours.k * (d + 1) * clip_norm_sq / (2 * n), neighbours.k * clip_norm_sq / n
        return (neighbours.k * ((d + 1) * clip_norm_sq / 2 + math.sqrt(d * c2 * clip_norm_sq)) / n,
                neighbours.k * math.sqrt(clip_norm_sq * (clip_norm_sq + c2)) / n)
    if c2 == 0:
        return (d / math.sqrt(2.0) + 1.0) * clip_norm_sq / n, math.sqrt(2.0) * clip_norm_sq / n
    t = -min(c2, clip_norm_sq)  # s . s' where the change is largest
    l2 = math.sqrt(2 * clip_norm_sq**2 + 2 * c2 * clip_norm_sq - t**2 - 2 * c2 * t) / n
    return ((d / math.sqrt(2.0) + 1.0) * clip_norm_sq + 2 * math.sqrt(d * c2 * clip_norm_sq)) / n, l2


def quadrant_scores_sensitivity(n: float, neighbours: Neighbours = ROWS) -> float:
    """l-infinity sensitivity of the pairs' selection scores |q_ij - c_ij|, q_ij = (1/n) sum_rows
    sgn(s_i) sgn(s_j) over the pairs i < j (:func:`synthdp.privacy.release.release_pair_selection`).

    The signs go through the released histograms (a public map: :class:`synthdp.stats.scores.ScoreMap`
    with ``signs``), so a row's product sgn(s_i) sgn(s_j) is a fixed function of that row with
    values in [-1, 1]. Replacing one row moves q_ij by at most 2/n, and |q_ij - c_ij| (c public,
    1-Lipschitz in q) by at most as much, for every pair at once: each score moves by 2/n, the l-infinity bound the
    exponential mechanism needs. By unit: K rows added or removed move the sum by at most K,
    q_ij by K/n (n the released noisy count). Attained: a row at (+, +) replaced by one at (+, -).
    """
    return per_value_sensitivity(n, neighbours)


def top_eigenvalue_sensitivity(n: float, clip_norm_sq: float, neighbours: Neighbours = ROWS) -> tuple[float, float]:
    """L1 (= L2) sensitivity of T(S) = lambda_max(S) - kappa tr(S) / d, 0 <= kappa <= d, of
    S = (1/n) sum_rows s s^T with scores ||s||^2 <= C^2: the pairs test's statistic
    (:func:`synthdp.privacy.release.pairs_test_statistic`, kappa its bulk edge).

    Replacing a row with score vector s by one with s' adds A = (s' s'^T - s s^T) / n to S. A is
    the difference of two positive semi-definite rank-one matrices, so its eigenvalues lie in
    [-||s||^2 / n, ||s'||^2 / n], and by Weyl's inequality lambda_max(S + A) - lambda_max(S) lies in
    [lambda_min(A), lambda_max(A)], while tr(A) = (||s'||^2 - ||s||^2) / n. Hence, with k = kappa / d
    in [0, 1], T(S + A) - T(S) <= (||s'||^2 (1 - k) + ||s||^2 k) / n <= C^2 / n, and
    T(S + A) - T(S) >= -(||s||^2 (1 - k) + ||s'||^2 k) / n >= -C^2 / n: L1 = L2 = C^2 / n.
    Attained: with every other row's scores C e_1, moving one row from C e_2 to C e_1 leaves
    the trace and raises lambda_max by C^2 / n (tests/test_privacy.py and the audit's
    ``pairs_test_samples`` release such rows).

    By unit: A is a sum of at most K such terms; the same steps with sum ||s'_k||^2 <= K C^2 and
    sum ||s_k||^2 <= K C^2 give K C^2 / n.
    """
    bound = neighbours.k * clip_norm_sq / n
    return bound, bound


def iteration_sensitivity(d: int, k: int, n: float, norm: str, neighbours: Neighbours = ROWS) -> float:
    """Sensitivity of one iterate A X, derived in :mod:`synthdp.privacy.pca` (docs/mechanism.md §4).

    By unit: A = (1/n) sum_i x_i x_i^T moves by the sum of at most K terms x x^T / n, and
    ||x x^T X||_F <= ||x||^2 ||X||_2 <= d for orthonormal X and x in [-1, 1]^d: L2 K d / n
    (against sqrt(2) d / n for one replaced row).
    """
    l2 = neighbours.k * d / n if neighbours.by_unit else math.sqrt(2.0) * d / n
    return l2 if norm == "l2" else math.sqrt(k * d) * l2


def row_count_sensitivity(neighbours: Neighbours = ROWS) -> float:
    """L1 sensitivity of a count of rows with some property (a clipped value, an "other" level).

    Replacing one row changes the count by at most 1: L1 = 1 (Laplace(1/epsilon) makes it
    epsilon-DP; :func:`synthdp.privacy.release.release_row_count`). By unit: K rows added or
    removed change it by at most K.
    """
    return float(neighbours.k) if neighbours.by_unit else 1.0


def value_histogram_sensitivity(neighbours: Neighbours = ROWS) -> float:
    """L1 sensitivity of a histogram of one column's values: the power-of-two bins of the DP
    bounds (:mod:`synthdp.privacy.dp_bounds`) or the counts of the observed levels of a
    categorical column (:func:`synthdp.privacy.release.release_levels`).

    Replacing one row moves its value from one bin (level) to another: one count falls by 1
    and one rises by 1, L1 = 2. (For the levels, this bounds the values present in both
    neighbouring tables; a value present in one table only is handled by the threshold, see
    :func:`synthdp.privacy.release.release_levels`.)

    By unit: K rows added or removed add or remove K values, one count each: L1 K.
    """
    return float(neighbours.k) if neighbours.by_unit else 2.0


def grouped_means_sensitivity(groups: int, n: float, neighbours: Neighbours = ROWS) -> tuple[float, float]:
    """(L1, L2) sensitivity of the means over n rows of functions with values in [-1, 1] that
    fall into ``groups`` groups, at most one function of a group non-zero on any row (the
    indicator products of a mixed table, :func:`synthdp.stats.mixed_basis.basis_groups`).

    Replacing the row changes a group's vector of means by at most 2/n in l1 and in l2 (one
    entry by <= 2/n, or two entries by <= 1/n each), so G groups have l1 sensitivity 2G/n and
    l2 sensitivity 2 sqrt(G)/n: :func:`bounded_means_sensitivity` with G in place of R. A
    table of numeric columns only has one function per group: 2R/n, the usual bound.

    By unit: one row's vector has at most one non-zero entry per group, each in [-1, 1]: l1
    <= G, l2 <= sqrt(G); K rows: K G/n and K sqrt(G)/n, :func:`bounded_means_sensitivity`
    by unit with G in place of R.
    """
    return bounded_means_sensitivity(groups, n, neighbours)


def units_sensitivity(count_weight: float) -> tuple[float, float]:
    """(L1, L2) sensitivity of the units release (by unit only,
    :func:`synthdp.privacy.release.release_units`): the vector (w n / K, h_1, ..., h_B) of the
    bounded row count n, weighted by w / K, and the counts of units per contribution bin.

    Adding or removing one unit with c <= K rows moves w n / K by w c / K <= w and one bin of h
    by 1: L1 w + 1, L2 sqrt(w^2 + 1). (The weight w gives the count, which divides every later
    sum, the larger part of the stage's budget under Laplace noise: its noise is (w + 1) / w
    times the stage's 1/epsilon, the bins' w + 1 times.)
    """
    return count_weight + 1.0, math.sqrt(count_weight**2 + 1.0)


def write_spread_table() -> None:
    """Store :func:`compute_univariate_spread` for the degrees (1, ..., k), k <= SPREAD_TABLE_MAX_DEGREE."""
    table = {f"{','.join(map(str, range(1, k + 1)))}|{power}": compute_univariate_spread(tuple(range(1, k + 1)), power)
             for k in range(1, SPREAD_TABLE_MAX_DEGREE + 1) for power in (1, 2)}
    SPREAD_TABLE.write_text(json.dumps(table, indent=1) + "\n")


if __name__ == "__main__":
    write_spread_table()
