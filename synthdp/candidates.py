"""Candidate points: the support the LP may put weight on (post-processing of a release).

* ``grid``: all N^d grid midpoints (Algorithm 1).
* ``hypercube``: C points drawn uniformly from the N^d grid (Appendix A.5's baseline).
* ``pca``: C points uniform in the ellipsoid centred at the private mean, spanned by the
  private top-k axes, with radii sqrt(lambda) (the paper) or sqrt((k + 2) lambda): a point
  uniform in a k-ball of radius rho has variance rho^2/(k + 2) along each axis, so the
  second choice matches the data's spread. Points are clipped into [-1, 1]^d.
"""

from __future__ import annotations

import numpy as np

from . import grid
from .pca import PrivatePCA


def grid_candidates(n_cells: int, d: int) -> np.ndarray:
    return grid.full_grid(n_cells, d)


def hypercube_candidates(n_cells: int, d: int, count: int, rng: np.random.Generator) -> np.ndarray:
    return grid.random_grid_points(n_cells, d, count, rng)


def ellipsoid_candidates(pca: PrivatePCA, count: int, rng: np.random.Generator, radius: str = "paper") -> np.ndarray:
    """``count`` points uniform in the private PCA ellipsoid, shape (count, d)."""
    k = pca.axes.shape[1]
    directions = rng.standard_normal((count, k))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    ball = directions * rng.random((count, 1)) ** (1.0 / k)  # uniform in the unit k-ball
    radii = np.sqrt(np.maximum(pca.eigenvalues, 0.0))
    if radius == "spread":
        radii = radii * np.sqrt(k + 2.0)
    points = pca.center + (ball * radii) @ pca.axes.T
    return np.clip(points, -1.0, 1.0)
