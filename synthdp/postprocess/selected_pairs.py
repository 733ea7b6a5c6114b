"""The model of the selected pairs: the copula's latent correlation from the pairs chosen and measured.

Where a table has few rows for its columns, no single pair stands out of the noise of a release
of all d (d - 1) / 2 pairs (docs/relationships-few-rows.md). The plan then buys fewer, better measured
pairs (:func:`synthdp.pipeline.plan.selected_pair_count`): the exponential mechanism chooses the
k pairs whose rows most often fall on the same (or on opposite) sides of their columns' released
medians (:func:`synthdp.privacy.release.release_pair_selection`), and only those k are measured
(:func:`synthdp.privacy.release.release_selected_pairs`), each with the noise one pair read one by
one would have. Post-processing of that release, here:

1. each column's sign, -1, 0 or +1, is its value's cell below, at or holding the released
   median (:func:`quadrant_score_map`, in fine cells); in the copula, a latent normal z_j gives
   -1 below a threshold a_j and +1 above b_j (:func:`sign_thresholds`), public numbers of the
   released histograms;
2. the copula with latent correlation r on a pair gives E[sgn sgn] a closed form in bivariate
   normal probabilities (:func:`sign_product_model`; (2 / pi) arcsin r for columns cut at their
   medians), increasing in r, so each measured mean gives back r (:func:`invert_sign_products`);
3. a measured pair is kept where its mean stands THRESHOLD noise sd from the model's at r = 0 and
   the Benjamini-Hochberg procedure at false discovery rate PAIR_FDR selects it, as a pair read
   one by one is (:func:`synthdp.postprocess.pairs.false_discovery_keep`);
4. the latent correlation is the matrix of largest entropy (determinant) within boxes around the
   nearest correlation matrix that holds the kept pairs at their reading (the others give way
   as little as a correlation matrix allows): the kept pairs within KEPT_BOX noise sd, the
   others, measured and not kept or not measured, within FREE_BOX noise sd (of a measured pair
   at independence), as the pairs read one by one treat a pair not kept
   (:func:`synthdp.postprocess.pairs.max_entropy_correlation`). A pair not measured gets what
   its kept neighbours force (on a chain i - j - l of strong pairs, r_il at least
   2 r_ij r_jl - 1) and may move a noise sd toward what they imply; left free, such pairs
   took every value the chains implied, and on CRM 89 pairs of real |r| < .1 came out above .3
   (docs/decisions/selected-pairs.md).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from synthdp.postprocess.copula import Marginals, nearest_correlation
from synthdp.postprocess.pairs import (
    FREE_BOX,
    KEPT_BOX,
    PAIR_FDR,
    THRESHOLD,
    false_discovery_keep,
    max_entropy_correlation,
)
from synthdp.released import SelectedPairs
from synthdp.stats.scores import MATRIX_SCORE_BINS, ScoreMap

LATENT_LIMIT = 8.0  # |thresholds| beyond this many sd are the same as infinite (Phi(-8) = 6e-16)
BISECTIONS = 60  # halvings of [-1, 1] when a measured mean is turned back into a correlation
NEAREST_ITERATIONS = 500  # alternating projections that complete the kept pairs into a correlation matrix


def quadrant_score_map(marginals: Marginals) -> ScoreMap:
    """The public map of the selected pairs' release: each value's sign through its column's
    released histogram (:meth:`synthdp.stats.scores.ScoreMap.cell_signs`), in bins refined to at
    least MATRIX_SCORE_BINS (:meth:`synthdp.stats.scores.ScoreMap.refined`), so that the cell
    that holds the median, signed 0, is a sliver of a bin: a bin that holds half a column's rows
    (WDBC's and a normal column's at few bins) would otherwise sign them all alike, and a sign
    that splits the rows unevenly carries less of their dependence."""
    return ScoreMap(marginals.probabilities(), 0.0, marginals.layout, signs=True).refined(MATRIX_SCORE_BINS)


def independent_sign_products(score_map: ScoreMap) -> np.ndarray:
    """E[sgn_i] E[sgn_j], shape (d, d): the sign products of columns without dependence, from the
    released histograms (public); what the selection's scores are measured from."""
    layout = score_map.cells
    values = layout.exists() & ~layout.missing_cells()
    p = np.where(values, score_map.probabilities, 0.0)
    p = p / np.maximum(p.sum(axis=1, keepdims=True), 1e-300)
    mean_sign = (p * score_map.cell_signs()).sum(axis=1)
    return np.outer(mean_sign, mean_sign)


def sign_thresholds(score_map: ScoreMap) -> tuple[np.ndarray, np.ndarray]:
    """Per column (a, b), shape (d,) each: the copula's latent normal z_j gives the sign -1 below
    a_j, +1 above b_j, 0 between (a cell whose middle is exactly the median). A candidate
    x_j = F_j^{-1}(Phi(z_j)) falls in the cell whose probability interval holds Phi(z_j), and the
    cells' signs follow their order, so a_j = Phi^{-1}(mass of the cells signed -1) and
    b_j = Phi^{-1}(1 - mass of the cells signed +1). Public: the released histograms."""
    layout = score_map.cells
    values = layout.exists() & ~layout.missing_cells()
    p = np.where(values, score_map.probabilities, 0.0)
    p = p / np.maximum(p.sum(axis=1, keepdims=True), 1e-300)
    signs = score_map.cell_signs()
    below = np.where(signs < 0, p, 0.0).sum(axis=1)
    above = np.where(signs > 0, p, 0.0).sum(axis=1)
    return (np.clip(special.ndtri(below), -LATENT_LIMIT, LATENT_LIMIT),
            np.clip(special.ndtri(1.0 - above), -LATENT_LIMIT, LATENT_LIMIT))


def bivariate_normal_cdf(h: np.ndarray | float, k: np.ndarray | float, r: np.ndarray | float) -> np.ndarray:
    """P(X <= h, Y <= k) for standard normals of correlation r (|r| < 1), elementwise, by Owen's T
    function: Phi2 = (Phi(h) + Phi(k)) / 2 - T(h, a_h) - T(k, a_k) - beta, a_h = (k - r h) /
    (h sqrt(1 - r^2)), a_k likewise, beta = 1/2 where h k < 0 or (h k = 0 and h + k < 0), else 0
    (Owen 1956). A zero h or k is moved to 1e-12, which changes the value by less than 1e-12."""
    h, k, r = np.broadcast_arrays(np.asarray(h, float), np.asarray(k, float), np.asarray(r, float))
    beta = np.where((h * k < 0) | ((h * k == 0) & (h + k < 0)), 0.5, 0.0)
    h = np.where(h == 0, 1e-12, h)
    k = np.where(k == 0, 1e-12, k)
    root = np.sqrt(np.maximum(1.0 - r * r, 1e-300))
    return (0.5 * (special.ndtr(h) + special.ndtr(k)) - special.owens_t(h, (k - r * h) / (h * root))
            - special.owens_t(k, (h - r * k) / (k * root)) - beta)


def sign_product_model(r: np.ndarray, first: tuple[np.ndarray, np.ndarray],
                       second: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """E[sgn(z_i) sgn(z_j)] for latent normals of correlation ``r`` cut at ``first`` = (a_i, b_i)
    and ``second`` = (a_j, b_j) (:func:`sign_thresholds`): P(+, +) + P(-, -) - P(+, -) - P(-, +),
    each a bivariate normal probability. Increasing in r (Slepian's inequality); (2 / pi) arcsin r
    at a = b = 0."""
    (a_i, b_i), (a_j, b_j) = first, second
    both_low = bivariate_normal_cdf(a_i, a_j, r)
    both_high = bivariate_normal_cdf(-b_i, -b_j, r)
    low_high = special.ndtr(a_i) - bivariate_normal_cdf(a_i, b_j, r)
    high_low = special.ndtr(a_j) - bivariate_normal_cdf(b_i, a_j, r)
    return both_high + both_low - low_high - high_low


def invert_sign_products(means: np.ndarray, first: tuple[np.ndarray, np.ndarray],
                         second: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """The latent correlation r at which :func:`sign_product_model` gives each of ``means``, by
    bisection on [-1, 1]; a mean beyond what any r gives takes the nearest end."""
    low, high = np.full(len(means), -1.0 + 1e-9), np.full(len(means), 1.0 - 1e-9)
    for _ in range(BISECTIONS):
        middle = (low + high) / 2
        above = sign_product_model(middle, first, second) > means
        high = np.where(above, middle, high)
        low = np.where(above, low, middle)
    return (low + high) / 2


def selected_latent_correlation(score_map: ScoreMap, selected: SelectedPairs, d: int, noise: str = "gaussian",
                                threshold: float = THRESHOLD, fdr: float | None = PAIR_FDR) -> np.ndarray:
    """The copula's latent correlation, shape (d, d), from the selected pairs' release (steps 2-4
    of the module's docstring). ``score_map``: the release's sign map (:func:`quadrant_score_map`
    of the copula's marginals); ``noise``: the calibration's kind, for the p-values."""
    a, b = sign_thresholds(score_map)
    i, j = selected.pairs[:, 0], selected.pairs[:, 1]
    first, second = (a[i], b[i]), (a[j], b[j])
    means = np.asarray(selected.noisy_means, dtype=float)
    independent = sign_product_model(np.zeros(len(means)), first, second)
    z = (means - independent) / selected.noise_sd
    kept = false_discovery_keep(z, np.ones(len(means), dtype=bool), threshold, fdr, noise)
    r = invert_sign_products(means, first, second)
    step = 1e-4  # the slope of the model at r, for each pair's noise in correlation units
    slope = (sign_product_model(np.clip(r + step, -1 + 1e-9, 1 - 1e-9), first, second)
             - sign_product_model(np.clip(r - step, -1 + 1e-9, 1 - 1e-9), first, second)) / (2 * step)
    r_sd = np.minimum(selected.noise_sd / np.maximum(slope, 1e-6), 2.0)
    center = np.eye(d)
    center[i, j] = center[j, i] = np.where(kept, r, 0.0)
    held = np.zeros((d, d), dtype=bool)
    held[i[kept], j[kept]] = held[j[kept], i[kept]] = True
    center = nearest_correlation(center, held=held, iterations=NEAREST_ITERATIONS)  # the others give way
    upper = np.triu_indices(d, 1)
    position = {(int(p), int(q)): t for t, (p, q) in enumerate(zip(*upper))}
    box = np.full(len(upper[0]), FREE_BOX * math.pi / 2 * selected.noise_sd)  # a pair not measured: as one not kept
    box[[position[(int(p), int(q))] for p, q in zip(i, j)]] = np.where(kept, KEPT_BOX, FREE_BOX) * r_sd
    return max_entropy_correlation(center, box)
