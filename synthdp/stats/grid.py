"""Grid discretisation of [-1, 1]^d (Algorithm 1, steps 3-6, 10 and 15).

Per axis the grid has the N cell midpoints a_k = (2k + 1 - N)/N, k = 0..N-1; every value
snaps to the nearest one. The exact mode also rounds the noisy moments and the LP matrix
onto the lattice {i/L : i = -L..L}, which exists for the paper's LP complexity bound.
"""

from __future__ import annotations

import numpy as np


def midpoints(n_cells: int) -> np.ndarray:
    """The N cell midpoints of [-1, 1], shape (N,)."""
    k = np.arange(n_cells)
    return (2.0 * k + 1.0 - n_cells) / n_cells


def snap(points: np.ndarray, n_cells: int) -> np.ndarray:
    """Replace every coordinate of ``points`` (in [-1, 1]) by its nearest midpoint."""
    cell = np.floor((np.asarray(points) + 1.0) * n_cells / 2.0)
    cell = np.clip(cell, 0, n_cells - 1)  # x = 1 belongs to the last cell
    return (2.0 * cell + 1.0 - n_cells) / n_cells


def full_grid(n_cells: int, d: int) -> np.ndarray:
    """All N^d grid points, shape (N^d, d), the first axis varying slowest."""
    axes = np.meshgrid(*([midpoints(n_cells)] * d), indexing="ij")
    return np.stack([a.ravel() for a in axes], axis=1)


def random_grid_points(n_cells: int, d: int, count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` points drawn uniformly from the N^d grid, shape (count, d)."""
    return midpoints(n_cells)[rng.integers(0, n_cells, size=(count, d))]


def round_to_lattice(values: np.ndarray, resolution: int) -> np.ndarray:
    """Round to the nearest multiple of 1/L (Algorithm 1, steps 10 and 15)."""
    return np.round(np.asarray(values) * resolution) / resolution
