"""Candidate points: the support the LP may put weight on (post-processing of a release).

* ``grid``: all N^d grid midpoints (Algorithm 1).
* ``hypercube``: C points drawn uniformly from the N^d grid (Appendix A.5's baseline).
* ``pca``: C points uniform in the ellipsoid centred at the private mean, spanned by the
  private top-k axes, with radii sqrt(lambda) (the paper) or sqrt((k + 2) lambda): a point
  uniform in a k-ball of radius rho has variance rho^2/(k + 2) along each axis, so the
  second choice matches the data's spread. Points are clipped into [-1, 1]^d.
* ``moments``: C points from the Gaussian whose mean and covariance are those implied by
  the released moments of degree <= 2 (free: post-processing of the moment release), clipped
  into [-1, 1]^d. It needs every degree-1 and degree-2 moment, d (d + 3) / 2 of them.
* ``mixed`` (tables with binary and categorical columns, :mod:`synthdp.schema`): the numeric
  coordinates as ``moments`` (the mixed basis holds all their moments of degree <= 2), and
  each binary or categorical column independently from its noisy level frequencies (the
  degree-1 indicator moments), as a valid one-hot block. Free: post-processing. The LP then
  reweights these product-form candidates to match the released cross-column moments.
"""

from __future__ import annotations

import numpy as np

from . import grid
from .pca import PrivatePCA
from .schema import Schema


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


def moment_gaussian(indices: np.ndarray, moments: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and covariance implied by the degree-1 and degree-2 moments among ``moments``.

    T_1(x) = x gives E[x_i]; T_2(x) = 2x^2 - 1 gives E[x_i^2] = (E[T_2(x_i)] + 1)/2; the
    product T_1(x_i) T_1(x_j) gives E[x_i x_j]. The mean is clipped into the cube and the
    covariance S - mu mu^T is projected onto the positive definite matrices (eigenvalues
    floored at 1e-6), since noise can make it indefinite.

    Parameters
    ----------
    indices : int array, shape (R, d)
        Multi-indices of the moments; must include every one of degree 1 and 2.
    moments : array, shape (R,)

    Returns
    -------
    center : array, shape (d,)
    covariance : array, shape (d, d)
    """
    d = indices.shape[1]
    mean, second = np.full(d, np.nan), np.full((d, d), np.nan)
    for index, value in zip(indices, moments):
        columns = np.flatnonzero(index)
        if index.sum() == 1:
            mean[columns[0]] = value
        elif index.sum() == 2 and len(columns) == 1:
            second[columns[0], columns[0]] = (value + 1) / 2
        elif index.sum() == 2:
            second[columns[0], columns[1]] = second[columns[1], columns[0]] = value
    if np.isnan(mean).any() or np.isnan(second).any():
        raise ValueError("moment candidates need every moment of degree 1 and 2")
    mean = np.clip(mean, -1.0, 1.0)
    eigenvalues, vectors = np.linalg.eigh(second - np.outer(mean, mean))
    return mean, (vectors * np.maximum(eigenvalues, 1e-6)) @ vectors.T


def gaussian_candidates(center: np.ndarray, covariance: np.ndarray, count: int,
                        rng: np.random.Generator) -> np.ndarray:
    """``count`` draws from N(center, covariance), clipped into [-1, 1]^d, shape (count, d)."""
    return np.clip(rng.multivariate_normal(center, covariance, size=count, method="eigh"), -1.0, 1.0)


def mixed_candidates(schema: Schema, indices: np.ndarray, moments: np.ndarray, count: int,
                     rng: np.random.Generator) -> np.ndarray:
    """``count`` encoded points of a mixed table, shape (count, D): numeric part, then one-hot blocks."""
    d = schema.d_numeric
    numeric_rows = ~indices[:, d:].any(axis=1)
    parts = []
    if d:
        center, covariance = moment_gaussian(indices[numeric_rows, :d], moments[numeric_rows])
        parts.append(gaussian_candidates(center, covariance, count, rng))
    frequencies = schema.level_frequencies(indices, moments)
    for column in schema.categorical:
        probabilities = frequencies[column.name]
        chosen = rng.choice(len(probabilities), size=count, p=probabilities)
        levels = np.zeros((count, len(probabilities)))  # one-hot over all_levels
        levels[np.arange(count), chosen] = 1.0
        parts.append(levels[:, 1:] if column.binary else levels)  # a binary column's first level has no coordinate
    return np.concatenate(parts, axis=1)
