"""Private bounds: a column's range estimated with DP when the user has no public bounds.

Each column without public bounds gets a noisy histogram over fixed, data-independent
bins: edges 0 and +-2^(k/2) for k/2 in [-32, 64] (half-octave steps from 2e-10 to 1.8e19),
plus the two unbounded outer bins, so every value, however huge, falls in exactly one bin.
Laplace noise of scale b = 2/epsilon is added to every count: replacing one row moves one
count down and one up, an L1 sensitivity of 2. The range runs from the lower edge of the
lowest bin to the upper edge of the highest bin whose noisy count exceeds
max(tau, 0.5% of n): tau = b ln(#bins / beta) is a threshold that an empty bin crosses with
probability below beta / #bins (beta = 5%), and the 0.5% share (n is public) keeps a few
extreme rows from stretching the range. If no bin crosses it, the range is the fullest
bin's. All of this after the noise is post-processing.

Unlike a rank-based quantile over candidates, this cannot land far outside the data: every
bin beyond the data is empty, so it is as unlikely as any other empty bin to be chosen.
Cost: a column needs about tau rows in its outermost occupied bins, and tau grows like
d/epsilon when epsilon is split over d columns, so private bounds are reliable only when n
is large against d/epsilon; :func:`detection_threshold` lets the caller warn from public
quantities alone. Values outside the estimated range are clipped (and counted).
"""

from __future__ import annotations

import math

import numpy as np

from synthdp.privacy.noise import NoiseSampler
from synthdp.privacy.sensitivity import ROWS, Neighbours, value_histogram_sensitivity
from synthdp.stats.histograms import EDGES, N_BINS

FAILURE_PROBABILITY = 0.05
OUTLIER_SHARE = 0.005  # bins holding fewer rows than this share of n are not part of the range


def laplace_count_scale(epsilon: float, neighbours: Neighbours = ROWS) -> float:
    """Laplace scale of each histogram count: L1 sensitivity 2 under replace-one, K by unit
    (:func:`synthdp.privacy.sensitivity.value_histogram_sensitivity`) over epsilon."""
    return value_histogram_sensitivity(neighbours) / epsilon


def detection_threshold(epsilon: float, neighbours: Neighbours = ROWS) -> float:
    """Noisy count above which a bin is taken as occupied."""
    return laplace_count_scale(epsilon, neighbours) * math.log(N_BINS / FAILURE_PROBABILITY)


def estimate_bounds(counts: np.ndarray, epsilon: float, noise: NoiseSampler, n: float | None = None,
                    neighbours: Neighbours = ROWS) -> tuple[float, float]:
    """An epsilon-DP range [lo, hi] of one private column, from its histogram.

    Parameters
    ----------
    counts : int array, shape (N_BINS,)
        :func:`histogram_counts` of the private column; they add up to n (public).
    epsilon : float
        Budget for this column.
    n : float or None
        The public row count (by unit: the released noisy count); None: the counts' sum, which
        is n, public, under replace-one.
    neighbours : Neighbours
        The neighbouring relation (by unit the counts' sensitivity is K).
    """
    if n is None and neighbours.by_unit:
        raise ValueError("by unit, n is private: pass the released count")
    n_rows = int(counts.sum()) if n is None else n
    noisy = noise.laplace(np.asarray(counts, dtype=float), laplace_count_scale(epsilon, neighbours))
    occupied = np.flatnonzero(noisy > max(detection_threshold(epsilon, neighbours), OUTLIER_SHARE * n_rows))
    if len(occupied) == 0:
        occupied = np.array([int(np.argmax(noisy))])
    # Edges of the outermost occupied bins; the unbounded outer bins end at the last edge.
    lower = EDGES[max(occupied[0] - 1, 0)]
    upper = EDGES[min(occupied[-1], len(EDGES) - 1)]
    if lower == upper:  # only an outer bin is occupied: widen by one bin inwards
        lower, upper = (EDGES[0], EDGES[1]) if occupied[0] == 0 else (EDGES[-2], EDGES[-1])
    return float(lower), float(upper)
