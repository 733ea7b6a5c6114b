"""Resampling: draw synthetic rows from the LP's distribution over candidates."""

from __future__ import annotations

import numpy as np

from synthdp.errors import SynthDPError


def clean_weights(weights: np.ndarray) -> np.ndarray:
    """Turn solver output into a probability vector (drop round-off negatives, renormalise)."""
    weights = np.clip(np.asarray(weights, dtype=float), 0.0, None)
    total = weights.sum()
    if not total > 0:
        raise SynthDPError("the LP returned no weight")
    return weights / total


def sample_rows(points: np.ndarray, weights: np.ndarray, count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` i.i.d. draws from the distribution ``weights`` over ``points``, shape (count, d)."""
    chosen = rng.choice(len(points), size=count, p=clean_weights(weights))
    return points[chosen]
