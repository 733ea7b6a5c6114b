"""The public shape of a privacy unit: the bins of the released contributions histogram, and
synthetic unit identifiers drawn from it (post-processing; :mod:`synthdp.reader.units` bounds
the private rows)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd


def contribution_bins(max_rows: int) -> list[tuple[int, int]]:
    """The bins of the contributions histogram: [1, 1], [2, 3], [4, 7], ... up to K (public).

    Powers of two keep the bins few (log2 K + 1), so each bin's noisy count of units keeps
    some signal where a bin per row count would not.
    """
    bins, low = [], 1
    while low <= max_rows:
        bins.append((low, min(2 * low - 1, max_rows)))
        low *= 2
    return bins


def synthetic_units(n_rows: int, contributions: np.ndarray, max_rows: int,
                    rng: np.random.Generator) -> pd.Series:
    """Post-processing: synthetic unit identifiers for ``n_rows`` synthetic rows.

    Units' row counts are drawn from the noisy contributions histogram (negative counts read
    as 0; all zero reads as uniform over the bins), each uniformly within its bin, until they
    cover the rows; the identifiers ("synthetic-1", ...) are shuffled over the rows. They hold
    no real identifier: a user who groups by unit gets groups of plausible sizes.
    """
    weights = np.clip(np.asarray(contributions, dtype=float), 0, None)
    bins = np.array(contribution_bins(max_rows))
    weights = np.ones(len(bins)) if weights.sum() <= 0 else weights
    sizes = np.zeros(0, dtype=np.int64)
    covered = 0
    while covered < n_rows:
        draws = rng.choice(len(bins), size=max(1, math.ceil((n_rows - covered) / max_rows)) * 2,
                           p=weights / weights.sum())
        # each drawn unit's size uniform within its bin, until they cover the rows: drawn for the whole
        # batch at once, then, where fewer were needed, again for those only from the same state (an
        # array of bounds draws what as many scalar draws would, so the stream is that of one draw per unit)
        state = rng.bit_generator.state
        batch = rng.integers(bins[draws, 0], bins[draws, 1] + 1)
        reached = np.flatnonzero(covered + np.cumsum(batch) >= n_rows)
        if len(reached) and reached[0] + 1 < len(batch):
            rng.bit_generator.state = state
            batch = rng.integers(bins[draws[: reached[0] + 1], 0], bins[draws[: reached[0] + 1], 1] + 1)
        batch[-1] -= max(0, covered + int(batch.sum()) - n_rows)  # the last unit holds the rows left
        sizes = np.concatenate([sizes, batch])
        covered += int(batch.sum())
    width = len(str(len(sizes)))
    labels = np.repeat([f"synthetic-{i + 1:0{width}d}" for i in range(len(sizes))], sizes)
    return pd.Series(rng.permutation(labels))
