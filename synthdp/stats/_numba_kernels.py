"""The compiled loops of :mod:`synthdp.stats.compiled` (numba). Imported only through it, on use.

Each function releases Python's global lock (``nogil``), so the reader's threads sum two
chunks on two cores at once, and is cached on disk after its first compilation (``cache``).
``fastmath={"reassoc"}`` lets the compiler reorder a sum over rows into vector lanes: the sums
differ from numpy's in their last digits (the order of additions), never in what is summed.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(nogil=True, cache=True, fastmath={"reassoc"})
def moment_sums(points, used, width, prefix_factors, prefix_lengths, moment_prefix, moment_last,
                block):  # pragma: no cover - compiled; tests call it through synthdp.stats.compiled
    """sum over rows of phi_r(x) for every r: :meth:`ChebyshevBasis.moments` times the rows.

    Per block of ``block`` rows: the table T_k(x_j), k < ``width``, of the ``used`` columns
    (one row of the table per flat factor c * width + k), the products of each prefix's
    factors, then each moment's sum of its prefix's product times its last factor.
    """
    n = points.shape[0]
    n_prefixes = prefix_factors.shape[0]
    n_moments = moment_prefix.shape[0]
    table = np.empty((used.shape[0] * width, block))
    products = np.empty((n_prefixes, block))
    sums = np.zeros(n_moments)
    for start in range(0, n, block):
        m = min(block, n - start)
        for c in range(used.shape[0]):
            column, base = used[c], c * width
            for i in range(m):
                table[base, i] = 1.0
                table[base + 1, i] = points[start + i, column]
            for k in range(2, width):
                for i in range(m):
                    table[base + k, i] = 2.0 * table[base + 1, i] * table[base + k - 1, i] - table[base + k - 2, i]
        for p in range(n_prefixes):
            first = prefix_factors[p, 0]
            for i in range(m):
                products[p, i] = table[first, i]
            for f in range(1, prefix_lengths[p]):
                factor = prefix_factors[p, f]
                for i in range(m):
                    products[p, i] *= table[factor, i]
        for r in range(n_moments):
            p, last = moment_prefix[r], moment_last[r]
            total = 0.0
            for i in range(m):
                total += products[p, i] * table[last, i]
            sums[r] += total
    return sums
