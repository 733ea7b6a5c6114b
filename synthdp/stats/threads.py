"""Work split across the machine's cores, with the same result as one thread to the bit.

numpy's and scipy.sparse's loops release Python's global lock for most of their time, so two
threads on two cores do two pieces of one computation at once. A helper here splits a
computation into pieces whose results do not depend on how it is split (the rows of a
product), so a seeded release is the same on one core or two (tests).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import scipy.sparse as sp


def available_cpus() -> int:
    """CPUs this process may run on (its affinity where the system tells it, else the machine's)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


WORKERS = min(2, available_cpus())  # threads the helpers use: at most two, as many as the machines measured had
SPLIT_NONZEROS = 500_000  # a sparse product is split across threads from this many stored entries


def split_product(matrix: sp.csr_matrix, pool: ThreadPoolExecutor | None) -> Callable[[np.ndarray], np.ndarray]:
    """``x -> matrix @ x`` for a CSR matrix, its rows in two parts on two threads where ``pool`` is given.

    Each entry of the product is one row's sum, taken in the same order whichever part the row
    is in, so the product is the single call's to the bit (a test). The parts hold about half
    the stored entries each; below SPLIT_NONZEROS entries, or without a pool, it is one call.
    Measured (the tilt's products on adult, W and its transpose with 2.5 million entries each,
    two cores): 1.8 and 1.0 ms a product against 0.9 and 0.6 (docs/performance.md).
    """
    if pool is None or matrix.nnz < SPLIT_NONZEROS or matrix.shape[0] < 2:
        return matrix.__matmul__
    middle = int(np.clip(np.searchsorted(matrix.indptr, matrix.nnz / 2), 1, matrix.shape[0] - 1))
    first, second = _rows_view(matrix, 0, middle), _rows_view(matrix, middle, matrix.shape[0])

    def product(x: np.ndarray) -> np.ndarray:
        pending = pool.submit(first.__matmul__, x)
        rest = second @ x
        return np.concatenate([pending.result(), rest])

    return product


def _rows_view(matrix: sp.csr_matrix, start: int, stop: int) -> sp.csr_matrix:
    """Rows start:stop of a CSR matrix sharing its entries (slicing would copy them), in their stored order."""
    first, last = matrix.indptr[start], matrix.indptr[stop]
    view = sp.csr_matrix((stop - start, matrix.shape[1]), dtype=matrix.dtype)
    # set directly: the constructor from (data, indices, indptr) copies them
    view.data, view.indices, view.indptr = (matrix.data[first:last], matrix.indices[first:last],
                                            matrix.indptr[start : stop + 1] - first)
    return view
