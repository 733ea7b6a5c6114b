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
* ``mixed`` (tables with binary and categorical columns, :mod:`synthdp.domain.schema`): the numeric
  coordinates from the copula of their released histograms (with the latent correlation of
  the pairs release, or from their moments of degree <= 2), the binary columns drawn with them
  (:func:`binary_latent`), the categorical columns tied to a numeric one as ordered latent normals
  with them (:func:`ordinal_latent`), and the other categorical columns along a Chow-Liu tree of
  the released 2-way tables grown from those, as valid one-hot blocks. Free: post-processing. The LP then
  tilts the weights of these candidates toward all the released moments.

Each kind is registered by name (:func:`register_candidates`); :func:`make_candidates` builds
the kind a plan names. Experiments may register kinds of their own. A maker also gets the
:class:`CandidateOptions`: alternatives to the product's post-processing rules for design
studies (the defaults are the product; today only the copula's rules have alternatives).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import special

from synthdp.config import SynthConfig
from synthdp.domain.encoded import EncodedPoints
from synthdp.domain.schema import Schema
from synthdp.errors import SynthDPError, warn_user
from synthdp.postprocess.class_histograms import level_marginals, margin_noise_sd
from synthdp.postprocess.copula import (
    ATOM_THRESHOLD,
    Marginals,
    copula_candidates,
    nearest_correlation,
    normal_draws,
)
from synthdp.postprocess.pairs import PAIR_FDR, THRESHOLD, entropy_boxes, latent_correlation, marginal_score_map
from synthdp.postprocess.selected_pairs import bivariate_normal_cdf, quadrant_score_map, selected_latent_correlation
from synthdp.released import ClassHistograms, PrivatePCA, Release
from synthdp.stats import grid
from synthdp.stats.mixed_basis import apart_cells
from synthdp.stats.roots import brentq
from synthdp.summaries.marginal import MarginalSummary


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


def marginal_quadrature(marginals: Marginals) -> tuple[np.ndarray, np.ndarray]:
    """The LATENT_GRID mid-point probabilities, shape (LATENT_GRID,), and every numeric column's
    quantile at each under the copula's marginals, shape (LATENT_GRID, d): a quadrature of the
    released histograms. Post-processing."""
    grid = (np.arange(LATENT_GRID) + 0.5) / LATENT_GRID
    return grid, marginals.quantiles(np.repeat(grid[:, None], marginals.noisy_counts.shape[0], axis=1))


def histogram_gaussian(marginals: Marginals) -> tuple[np.ndarray, np.ndarray]:
    """Mean and (diagonal) covariance of the unit values under the released histograms
    (:func:`marginal_quadrature`): :func:`moment_gaussian` for a release whose moments leave the
    numeric columns to the histograms. Post-processing."""
    values = marginal_quadrature(marginals)[1]
    return values.mean(axis=0), np.diag(np.maximum(values.var(axis=0), 1e-6))


def gaussian_candidates(center: np.ndarray, covariance: np.ndarray, count: int,
                        rng: np.random.Generator) -> np.ndarray:
    """``count`` draws from N(center, covariance), clipped into [-1, 1]^d, shape (count, d)."""
    return np.clip(normal_draws(center, covariance, count, rng), -1.0, 1.0)


def mixed_candidates(schema: Schema, indices: np.ndarray, moments: np.ndarray, count: int,
                     rng: np.random.Generator, marginals: Marginals | None = None,
                     moment_noise_sd: float = 0.0, correlation: np.ndarray | None = None,
                     join_ratio: float | None = None, ordinal_levels: str = "shrunk",
                     noise_kind: str = "gaussian", edge_z: float | None = None,
                     classes: ClassHistograms | None = None) -> EncodedPoints:
    """``count`` encoded points of a mixed table, shape (count, D): numeric part, then one-hot blocks,
    held as each column's level (:class:`~synthdp.domain.encoded.EncodedPoints`; ``numpy.asarray`` of
    them is the dense array, which for a column of 5 000 levels took 3 GB).

    The numeric columns are drawn from the Gaussian copula of their released histograms
    (``marginals``), so that every column keeps its shape, its atoms and the spikes of its
    integer values, with the latent ``correlation`` fitted to the pairs release, or without
    one the latent correlation of :func:`moment_correlation`; without
    histograms (a release from before them), from the Gaussian of their moments of degree
    <= 2. With histograms, the binary columns are drawn with the numeric ones, as latent
    normals above thresholds (:func:`binary_latent`), and so are the categorical columns tied
    to a numeric one, as latent normals cut into ordered intervals (:func:`ordinal_latent`).
    Every binary or categorical column is then a node of a tree of the released 2-way tables
    (:func:`tree_levels`) grown from the value blocks of the integer columns (each its column's
    drawn value; :data:`synthdp.domain.schema.MAX_VALUE_BLOCK`), so that a column tied to such
    a column cell by cell (education to education-num) follows its released 2-way table
    (without value blocks, rooted at the first joined column, else the first column); a joined
    column is drawn from its table with its parent by its latent uniform where that table is
    mostly signal, else it keeps its latent draw (:class:`JoinedColumn`). The other columns
    depend on the numeric part only through the tree: the LP's tilt then weighs the candidates
    to the released means of each numeric column per level. Drawing each categorical column
    independently from its noisy level frequencies instead left near-deterministic pairs
    (relationship x sex) short of candidates (measured: docs/decisions/mixed-tree-candidates.md).
    ``join_ratio``, ``ordinal_levels``: :func:`ordinal_latent`'s ``join_ratio`` (None: ``JOIN_RATIO``)
    and ``levels``; ``noise_kind`` ("gaussian" or "laplace"): the moments' noise, which
    :func:`tree_levels` simulates to tell a table's dependence from its noise; ``edge_z``: its
    threshold (None: ``EDGE_Z``). ``classes``: numeric columns released by level of a class column
    (:mod:`synthdp.postprocess.class_histograms`); each such column's value is then drawn, after the
    tree has drawn the class, as the quantile of its latent uniform in its histogram at the
    candidate's level, so that the columns keep their latent correlation and follow the class.
    """
    d = schema.d_numeric
    numeric_rows = ~indices[:, d:].any(axis=1)
    parts = []
    drawn: dict[str, np.ndarray] = {}
    joined: dict[str, JoinedColumn] = {}
    if d:
        if numeric_rows.any() or marginals is None:
            center, covariance = moment_gaussian(indices[numeric_rows, :d], moments[numeric_rows])
        else:  # the numeric moments left to the histograms (synthdp.pipeline.plan.mixed_numeric_moments)
            center, covariance = histogram_gaussian(marginals)
        if marginals is None:
            parts.append(gaussian_candidates(center, covariance, count, rng))
        else:
            if correlation is None:
                correlation = moment_correlation(center, covariance, moment_noise_sd)
            binaries = binary_latent(schema, indices, moments, center, covariance, correlation, moment_noise_sd)
            ordinals, joint = ordinal_latent(schema, indices, moments, center, binaries, moment_noise_sd, marginals,
                                             join_ratio, ordinal_levels)
            latent = normal_draws(np.zeros(len(joint)), joint, count, rng)
            uniforms = special.ndtr(latent[:, :d])
            parts.append(marginals.quantiles(uniforms))
            k = len(binaries.names)
            joined = {name: JoinedColumn((latent[:, d + b] > binaries.thresholds[b]).astype(np.int64),
                                         special.ndtr(latent[:, d + b]), np.array([0, 1]))
                      for b, name in enumerate(binaries.names)}
            joined |= {ordinal.name: JoinedColumn(ordinal.draw(latent[:, d + k + o]),
                                                  special.ndtr(latent[:, d + k + o]), np.asarray(ordinal.order))
                       for o, ordinal in enumerate(ordinals)}
        values = schema.numeric.from_unit(parts[0])  # each value block is its integer column's drawn value
        drawn |= {column.name: column.value_codes(values[:, j]) for column, j in schema.valued_numeric}
    chosen = tree_levels(schema, indices, moments, count, rng, drawn, moment_noise_sd, noise_kind, edge_z, joined)
    if classes is not None and marginals is not None and len(classes.columns):
        for level, rows in enumerate(classes.level_rows):
            mine = chosen[classes.column] == level
            if mine.any():
                given = level_marginals(marginals, classes, level, max(float(rows), 1.0))
                parts[0][np.ix_(mine, classes.columns)] = given.quantiles(uniforms[mine])[:, classes.columns]
    # each column's level rather than its one-hot block (a binary column's first level has no coordinate)
    return EncodedPoints.of(schema, parts[0] if parts else np.zeros((count, 0)),
                            [chosen[column.name] for column in schema.categorical])


def moment_correlation(center: np.ndarray, covariance: np.ndarray, noise_sd: float,
                       threshold: float = THRESHOLD) -> np.ndarray:
    """The copula's latent correlation for a mixed table's numeric columns, from the Gaussian of
    their released moments (:func:`moment_gaussian`), shape (d, d).

    The Pearson correlation of the unit values stands in for the latent one (they differ by
    the marginals' shapes; the LP's tilt fits the released products afterwards). A covariance
    within ``threshold`` (THRESHOLD) noise standard deviations of the product moment
    (``noise_sd``, in the moments' units) is set to 0, as the pairs model drops the pairs noise
    could explain (:func:`synthdp.postprocess.pairs.latent_correlation`); the result is
    projected onto the correlation matrices. Post-processing.
    """
    scale = np.sqrt(np.maximum(np.diag(covariance), 1e-12))
    correlation = covariance / np.outer(scale, scale)
    weak = np.abs(covariance - np.diag(np.diag(covariance))) < threshold * noise_sd
    correlation[weak] = 0.0
    np.fill_diagonal(correlation, 1.0)
    return nearest_correlation(correlation)


def _moment_lookup(indices: np.ndarray, moments: np.ndarray) -> Callable[..., float | None]:
    """``moment(c_1, c_2, ...)``: the released moment of the product of those coordinates (each once
    more in the multi-index per mention), or None when the release does not hold it."""
    indices = np.asarray(indices)
    rows, columns = np.nonzero(indices)  # row-major: each row's coordinates in order
    keys = np.split(np.repeat(columns, indices[rows, columns]),
                    np.cumsum(np.bincount(rows, weights=indices[rows, columns], minlength=len(indices)))[:-1]
                    .astype(np.int64))
    # keyed by the multi-index's coordinates, each once per power: a dense key would cost R x D
    # (a categorical column of 2 000 levels: seconds) where the multi-indices hold a few each
    value = {tuple(key.tolist()): float(moment) for key, moment in zip(keys, np.asarray(moments))}

    def moment(*coordinates: int) -> float | None:
        return value.get(tuple(sorted(coordinates)))

    return moment


MAX_JOINED_BINARIES = 16  # binary columns joined to the copula (each pair's tetrachoric solve takes ~20 ms)


@dataclass(frozen=True)
class LatentBinaries:
    """The binary columns joined to the copula (:func:`binary_latent`), k of them.

    Attributes
    ----------
    names : list of str
        The columns, in schema order.
    coordinates : list of int
        Each column's encoded coordinate (its second level's indicator).
    frequencies : array, shape (k,)
        The released frequency p of each column's second level, clipped to [0.01, 0.99].
    thresholds : array, shape (k,)
        Phi^{-1}(1 - p): the second level where the latent normal is above it.
    correlation : array, shape (d + k, d + k)
        The latent correlation: the numeric columns, then the k binary columns.
    """

    names: list[str]
    coordinates: list[int]
    frequencies: np.ndarray
    thresholds: np.ndarray
    correlation: np.ndarray


def binary_latent(schema: Schema, indices: np.ndarray, moments: np.ndarray, center: np.ndarray,
                  covariance: np.ndarray, correlation: np.ndarray,
                  noise_sd: float) -> LatentBinaries:
    """The binary columns joined to the numeric columns' Gaussian copula (post-processing).

    A binary column is the latent normal z_b above the threshold Phi^{-1}(1 - p), p its released
    frequency of the second level. Its latent correlation with numeric column j follows from
    the released mean of x_j per level, E[x_j z_b]: the point-biserial correlation
    r = (E[x_j z_b] - E[x_j] p) / sqrt(Var x_j p (1 - p)), made latent by the biserial formula
    r sqrt(p (1 - p)) / phi(Phi^{-1}(p)); two binary columns get the tetrachoric correlation
    whose orthant probability is their released joint cell. A covariance within two noise
    sd of 0 gives 0, and the whole matrix is projected onto the correlation matrices. The
    numeric values and the binary levels are then drawn together, so that income, sex or any
    binary column keeps its dependence on every numeric column, which the tree over the
    binary and categorical columns cannot carry (docs/decisions/binary-latent.md). Binary
    columns that are nullable, and a nullable numeric column's missing indicator, stay with
    the tree, and so do all but the MAX_JOINED_BINARIES binary columns most correlated with a
    numeric one.

    Returns
    -------
    LatentBinaries
        The columns joined, their frequencies and thresholds, and the latent correlation:
        the numeric columns' ``correlation``, then the k binary columns.
    """
    d = schema.d_numeric
    moment = _moment_lookup(indices, moments)

    columns = [column for column in schema.categorical
               if column.binary and not column.nullable and column.indicator_of is None]
    coordinates = [schema.block_slice(column.name).start for column in columns]
    frequencies = np.array([float(np.clip(moment(c) or 0.0, 0.01, 0.99)) for c in coordinates])
    thresholds = special.ndtri(1.0 - frequencies)
    k = len(columns)
    joint = np.eye(d + k)
    joint[:d, :d] = correlation
    for b, (coordinate, p) in enumerate(zip(coordinates, frequencies)):
        for j in range(d):
            product = moment(j, coordinate)
            if product is None or abs(product - center[j] * p) < 2 * noise_sd:
                continue
            point_biserial = (product - center[j] * p) / np.sqrt(max(covariance[j, j], 1e-12) * p * (1 - p))
            density = math.exp(-thresholds[b] ** 2 / 2) / math.sqrt(2 * math.pi)  # the normal's at the threshold
            latent = point_biserial * np.sqrt(p * (1 - p)) / density
            joint[j, d + b] = joint[d + b, j] = float(np.clip(latent, -0.99, 0.99))
    if k > MAX_JOINED_BINARIES:  # keep the binary columns most tied to the numeric ones; the rest stay in the tree
        strength = np.abs(joint[:d, d:]).max(axis=0) if d else np.zeros(k)
        keep = np.sort(np.argsort(-strength, kind="stable")[:MAX_JOINED_BINARIES])
        joint = joint[np.ix_([*range(d), *(d + keep)], [*range(d), *(d + keep)])]
        columns, coordinates = [columns[b] for b in keep], [coordinates[b] for b in keep]
        frequencies, thresholds, k = frequencies[keep], thresholds[keep], len(keep)
    for a, b in itertools.combinations(range(k), 2):
        both = moment(coordinates[a], coordinates[b])
        if both is None or abs(both - frequencies[a] * frequencies[b]) < 2 * noise_sd:
            continue
        joint[d + a, d + b] = joint[d + b, d + a] = _tetrachoric(both, thresholds[a], thresholds[b])
    return LatentBinaries([column.name for column in columns], coordinates, frequencies, thresholds,
                          nearest_correlation(joint))


JOIN_RATIO = 0.3  # correlation ratio (a medium effect, Cohen) from which a categorical column joins the copula


@dataclass(frozen=True)
class OrdinalLevels:
    """A categorical column drawn as a latent normal cut into intervals, one level per interval.

    Attributes
    ----------
    name : str
        The column.
    order : array of int, shape (L,)
        Level codes (indices into ``all_levels``) from the lowest interval to the highest.
    cuts : array, shape (L - 1,)
        Increasing latent thresholds: level ``order[i]`` for z in (cuts[i - 1], cuts[i]].
    """

    name: str
    order: np.ndarray
    cuts: np.ndarray

    def draw(self, latent: np.ndarray) -> np.ndarray:
        """The level codes of latent normal values, shape like ``latent``."""
        return self.order[np.searchsorted(self.cuts, latent)]


ORDINAL_LEVELS = ("shrunk", "thresholded")  # ordinal_latent's rules for a joined column's levels: the product first
LATENT_GRID = 4096  # normal quantiles of the quadrature that normalises the latent correlations


def ordinal_latent(schema: Schema, indices: np.ndarray, moments: np.ndarray, center: np.ndarray,
                   binaries: LatentBinaries, noise_sd: float, marginals: Marginals,
                   join_ratio: float | None = None,
                   levels: str = "shrunk") -> tuple[list[OrdinalLevels], np.ndarray]:
    """The categorical columns tied to a numeric column, joined to the copula as ordered latent normals.

    Post-processing of the released level frequencies p_l, means per level E[x_j 1{l}] and
    2-way cells. For a categorical column c and a numeric column j, each level has a released
    deviation E[x_j 1{l}] - E[x_j] p_l with noise sd ``noise`` (the level's mean: noise / p_l).

    *Whether c joins* (thresholded, so that noise cannot make a column look tied): a level's
    deviation counts where it stands two noise sd from 0 and noise / p_l is at most half of
    x_j's sd, else 0. c joins, ordered by the numeric column of the largest correlation
    ratio computed so, when that ratio is at least ``join_ratio`` (None: JOIN_RATIO, 0.3, a
    medium effect) with a covariance out of the noise.

    *Its order and latent correlations* (``levels="shrunk"``, the product): the levels are
    ordered by their posterior means under a normal prior of the level means (empirical
    Bayes, :func:`_posterior_means`): a rare level's noisy mean is pulled toward E[x_j] by
    its own noise, instead of being put there outright, so that the 9th grade, 2 % of adult,
    stays below HS-grad. c becomes a latent normal z_c cut at the normal quantiles of the
    cumulative frequencies in that order, each level scored s_l = E[z_c | l]. The released
    covariance of x_j and the scores, sum_l deviation_l s_l over every level (unbiased: the
    noise adds variance, not bias; zeroing the unclear levels took their share of the
    covariance away), divided by the covariance the copula gives at latent correlation 1
    (or -1), E[F_j^{-1}(Phi(z)) s(z)] by quadrature over the copula's marginal of x_j, is the
    latent correlation: 1 when c is a monotone function of x_j, first-order exact near 0. It
    is capped in size by the correlation ratio of x_j on c (the between-level share of x_j's
    sd, less the noise's expected share), so that a column with a spike (capital-gain: 0 in
    92 % of rows) cannot turn a small covariance into a strong link, and set to 0 within two
    noise sd. ``levels="thresholded"`` (before; design studies) orders by the thresholded
    deviations and computes the latent correlations from them.

    A weaker tie is left to the tree, which keeps a categorical parent's whole 2-way table, e.g.
    region as a fixed grouping of states; joined, marital status follows age, which neither the
    tree of the categorical 2-way tables nor the tilt's means per level could make. An integer
    column with a value block is no tie for this: its 2-way table with c is released, and the
    tree draws c from it given the drawn value (education from education-num, a function of
    it, which a latent correlation of .93 left mixed between neighbouring levels). With a joined
    binary or categorical column, its latent correlation is the same normalisation of the
    covariance of their scores over the released 2-way cells. The joined columns become roots
    of the tree (:func:`tree_levels`), from which the other categorical columns grow; nullable
    columns and missing indicators stay with the tree (measured: docs/decisions/ordinal-latent.md
    and #level-order).

    Returns
    -------
    ordinals : list of OrdinalLevels
        The joined columns, in schema order.
    correlation : array, shape (d + k + len(ordinals),)^2
        ``binaries.correlation`` (the numeric and k binary columns) extended by the joined
        columns and projected onto the correlation matrices; itself when no column joins.
    """
    if levels not in ORDINAL_LEVELS:
        raise ValueError(f"levels must be one of {ORDINAL_LEVELS}, got {levels!r}")
    d, joint = schema.d_numeric, binaries.correlation
    if not d:
        return [], joint
    join_ratio = JOIN_RATIO if join_ratio is None else join_ratio
    moment = _moment_lookup(indices, moments)

    grid, numeric = marginal_quadrature(marginals)
    z = special.ndtri(grid)  # symmetric: z[::-1] = -z
    numeric -= numeric.mean(axis=0)
    variances = (numeric**2).mean(axis=0)

    def normalised(covariance_ab: float, first: np.ndarray, second: np.ndarray) -> float:
        """The latent correlation whose covariance at +-1 (by quadrature on the grid) scales to ``covariance_ab``."""
        extreme = float(first @ (second if covariance_ab >= 0 else second[::-1])) / LATENT_GRID
        if abs(extreme) < 1e-12:
            return 0.0
        return float(np.clip(covariance_ab / abs(extreme), -0.99, 0.99))

    def released(coordinates: range, frequencies: np.ndarray, j: int) -> tuple[np.ndarray, float] | None:
        """Every level's released deviation (0 for a level of frequency 0) and their noise sd."""
        products = [moment(j, coordinate) for coordinate in coordinates]
        if any(product is None for product in products):
            return None
        noise = noise_sd * float(np.sqrt(1 + center[j] ** 2))
        return np.where(frequencies > 0, np.array(products) - center[j] * frequencies, 0.0), noise

    def deviations(coordinates: range, frequencies: np.ndarray, j: int) -> tuple[np.ndarray, float] | None:
        """The thresholded deviations: the whether-it-joins test."""
        found = released(coordinates, frequencies, j)
        if found is None:
            return None
        deviation, noise = found
        # a level's mean m_l counts where its deviation stands two noise sd from 0 and its own noise,
        # noise / p_l, is at most half the column's sd (rare levels' means are mostly noise)
        unclear = (np.abs(deviation) < 2 * noise) | (noise > 0.5 * np.sqrt(variances[j]) * frequencies)
        return np.where(unclear, 0.0, deviation), noise

    def ratio(deviation: np.ndarray, noise: float, frequencies: np.ndarray, j: int) -> float:
        """The correlation ratio of x_j on the column, sqrt(sum_l p_l (m_l - E x_j)^2 / Var x_j), less the
        noise's expected share of the kept levels."""
        between = _between_levels(deviation, noise, frequencies)
        return float(np.sqrt(np.clip(between / max(variances[j], 1e-12), 0.0, 1.0)))

    def polyserial(deviation: np.ndarray, noise: float, frequencies: np.ndarray, scores: np.ndarray,
                   on_grid: np.ndarray, j: int) -> tuple[float, float]:
        """Latent correlation of x_j and the scored column (at most the correlation ratio in size), and the
        correlation ratio."""
        eta = ratio(deviation, noise, frequencies, j)
        kept = deviation != 0
        covariance_js = float(deviation @ scores)
        if abs(covariance_js) < 2 * noise * float(np.sqrt(scores[kept] @ scores[kept])):
            return 0.0, eta
        latent = normalised(covariance_js, numeric[:, j], on_grid)
        return float(np.sign(latent) * min(abs(latent), eta)), eta

    ordinals: list[OrdinalLevels] = []
    joined = []  # (coordinates, scores, scores on the grid) of each joined column
    rows = []
    # a numeric column with a value block has its 2-way table with each categorical column released:
    # a column tied to it follows that table along the tree (tree_levels), not a latent order
    blocked = {j for _, j in schema.valued_numeric}
    for column in schema.categorical:
        if column.binary or column.nullable or column.internal:
            continue
        block = schema.block_slice(column.name)
        coordinates = range(block.start, block.stop)
        raw = np.array([max(moment(coordinate) or 0.0, 0.0) for coordinate in coordinates])
        if raw.sum() <= 0:
            continue
        frequencies = raw / raw.sum()
        found = [deviations(coordinates, frequencies, j) for j in range(d)]
        best: tuple[float, int] = (0.0, -1)
        for j, deviation_noise in enumerate(found):
            if deviation_noise is None or not deviation_noise[0].any() or j in blocked:
                continue
            deviation, noise = deviation_noise
            means = np.divide(deviation, frequencies, out=np.zeros(len(frequencies)), where=frequencies > 0)
            order = np.argsort(means, kind="stable")
            _, scores, on_grid = _ordered_scores(frequencies, order, z)
            latent, eta = polyserial(deviation, noise, frequencies, scores, on_grid, j)
            if latent != 0 and eta > best[0]:
                best = (eta, j)
        if best[1] < 0 or best[0] < join_ratio:
            continue
        if levels == "shrunk":  # every level's released deviation, the order from their posterior means
            found = [released(coordinates, frequencies, j) for j in range(d)]
        chosen = found[best[1]]
        assert chosen is not None  # the joining column's deviations exist
        if levels == "shrunk":
            means = _posterior_means(chosen[0], chosen[1], frequencies)
        else:  # before: the thresholded deviations
            means = np.divide(chosen[0], frequencies, out=np.zeros(len(frequencies)), where=frequencies > 0)
        order = np.argsort(means, kind="stable")
        cuts, scores, on_grid = _ordered_scores(frequencies, order, z)
        row = np.zeros(d)
        for j, deviation_noise in enumerate(found):
            if deviation_noise is not None:
                row[j] = polyserial(*deviation_noise, frequencies, scores, on_grid, j)[0]
        ordinals.append(OrdinalLevels(column.name, order, cuts))
        joined.append((coordinates, scores, on_grid))
        rows.append(row)
    if not ordinals:
        return [], joint
    k, m = len(binaries.names), len(ordinals)
    extended = np.eye(d + k + m)
    extended[: d + k, : d + k] = joint
    binary_parts = []  # coordinate, score step s(second) - s(first), scores on the grid
    for coordinate, p, threshold in zip(binaries.coordinates, binaries.frequencies, binaries.thresholds):
        density = float(np.exp(-0.5 * threshold**2) / np.sqrt(2 * np.pi))
        binary_parts.append((coordinate, density / p + density / (1 - p),
                             np.where(z > threshold, density / p, -density / (1 - p))))
    for o, (row, (coordinates, scores, on_grid)) in enumerate(zip(rows, joined)):
        a = d + k + o
        extended[a, :d] = extended[:d, a] = row
        for b, (coordinate, step, binary_grid) in enumerate(binary_parts):
            cells = [moment(level, coordinate) for level in coordinates]
            if any(cell is None for cell in cells):
                continue
            covariance_ab = step * float(np.array(cells) @ scores)  # sum_l s_l P(l, second) (s(second) - s(first))
            if abs(covariance_ab) >= 2 * noise_sd * step * float(np.sqrt(scores @ scores)):
                extended[a, d + b] = extended[d + b, a] = normalised(covariance_ab, on_grid, binary_grid)
        for other in range(o):
            other_coordinates, other_scores, other_grid = joined[other]
            pairs = [moment(x, y) for x in coordinates for y in other_coordinates]
            if any(cell is None for cell in pairs):
                continue
            table = np.array(pairs, dtype=float).reshape(len(coordinates), len(other_coordinates))
            covariance_ab = float(scores @ table @ other_scores)
            if abs(covariance_ab) >= 2 * noise_sd * float(np.sqrt(np.outer(scores**2, other_scores**2).sum())):
                extended[a, d + k + other] = extended[d + k + other, a] = normalised(covariance_ab, on_grid, other_grid)
    return ordinals, nearest_correlation(extended)


def _between_levels(deviation: np.ndarray, noise: float, frequencies: np.ndarray) -> float:
    """sum_l p_l (m_l - E[x])^2 estimated without bias from the released deviations p_l (m_l - E[x]):
    sum_l deviation_l^2 / p_l less the noise's expected share sum_l noise^2 / p_l, over the levels
    with a deviation (not zeroed) and a frequency. May be negative (noise alone)."""
    kept = (deviation != 0) & (frequencies > 0)
    return float((deviation[kept] ** 2 / frequencies[kept]).sum() - (noise**2 / frequencies[kept]).sum())


def _posterior_means(deviation: np.ndarray, noise: float, frequencies: np.ndarray) -> np.ndarray:
    """The levels' mean offsets m_l - E[x], shrunk by empirical Bayes, shape (L,): the order of the levels.

    A level's released mean offset deviation_l / p_l has noise sd noise / p_l. Under a normal
    prior m_l - E[x] ~ N(0, tau^2), its posterior mean is that offset times tau^2 / (tau^2 +
    (noise / p_l)^2), with tau^2 the between-level variance sum_l p_l (m_l - E[x])^2 estimated
    without bias from the released values, sum_l deviation_l^2 / p_l less the noise's
    sum_l noise^2 / p_l (at least 0). A frequent level keeps its mean, a level whose mean is
    mostly noise moves toward E[x]: ranking by the posterior means errs less than by the noisy
    means (a rare level's noise can throw it anywhere) and less than putting every unclear
    level at E[x] (the thresholded rule before, which put adult's 9th grade above
    Some-college, Prof-school and Assoc-voc). A level of frequency 0 sits at E[x].
    """
    present = frequencies > 0
    prior = max(_between_levels(deviation, noise, frequencies), 0.0)
    offset = np.divide(deviation, frequencies, out=np.zeros(len(frequencies)), where=present)
    level_noise = np.divide(noise**2, frequencies**2, out=np.full(len(frequencies), np.inf), where=present)
    return np.where(present, offset * prior / np.maximum(prior + level_noise, 1e-300), 0.0)


def _ordered_scores(frequencies: np.ndarray, order: np.ndarray,
                    z: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Levels cut in ``order``: the latent cuts, each level's normal score (per level code), and the
    score at each grid point z."""
    cuts = special.ndtri(np.clip(np.cumsum(frequencies[order])[:-1], 0.0, 1.0))
    density = np.concatenate([[0.0], np.exp(-0.5 * cuts**2) / np.sqrt(2 * np.pi), [0.0]])
    ordered = np.divide(density[:-1] - density[1:], frequencies[order], out=np.zeros(len(order)),
                        where=frequencies[order] > 0)
    scores = np.empty(len(order))
    scores[order] = ordered
    return cuts, scores, ordered[np.searchsorted(cuts, z)]


def _tetrachoric(both: float, first: float, second: float) -> float:
    """The correlation r of a standard bivariate normal with P(Z_1 > first, Z_2 > second) = ``both``
    (clipped to what some r in [-0.99, 0.99] attains). The orthant probability is Owen's closed form
    (:func:`synthdp.postprocess.selected_pairs.bivariate_normal_cdf`; scipy.stats' numerical
    integration, to 1e-5, took half a second to import on every mixed table's fit; its root by
    scipy's Brent method ported, :func:`synthdp.stats.roots.brentq`, as scipy.optimize took 0.1 s)."""
    def orthant(r: float) -> float:
        return float(bivariate_normal_cdf(-first, -second, r))

    low, high = orthant(-0.99), orthant(0.99)
    if both <= low:
        return -0.99
    if both >= high:
        return 0.99
    return brentq(lambda r: orthant(r) - both, -0.99, 0.99, xtol=1e-4, what="a latent correlation")


EDGE_Z = 3.0  # noise-only excess sds by which a table's excess must exceed their mean to be a tree edge
NULL_DRAWS = 32  # noise draws of the simulated noise-only excess
NULL_SEED = 20261127  # fixed: the simulation is public post-processing and does not touch the candidates' draws
COUPLE_SHARE = 0.9  # share of a table's deviation from independence that must be signal to draw a joined column from it
RAKE_STEPS = 50  # iterative proportional fitting steps of a tree table to its columns' one-way tables


@dataclass(frozen=True)
class JoinedColumn:
    """A binary or categorical column joined to the copula (:func:`binary_latent`, :func:`ordinal_latent`).

    Attributes
    ----------
    levels : array of int, shape (count,)
        Its latent draw: the level of each candidate's latent normal (a threshold or the
        ordered intervals), index into ``all_levels``.
    uniform : array, shape (count,)
        Phi of the same latent normal.
    order : array of int
        The level codes from the lowest latent interval to the highest (binary: 0, 1).
    """

    levels: np.ndarray
    uniform: np.ndarray
    order: np.ndarray


def tree_levels(schema: Schema, indices: np.ndarray, moments: np.ndarray, count: int,
                rng: np.random.Generator, drawn: dict[str, np.ndarray] | None = None,
                noise_sd: float = 0.0, noise_kind: str = "gaussian",
                edge_z: float | None = None, joined: dict[str, JoinedColumn] | None = None) -> dict[str, np.ndarray]:
    """Levels drawn along a maximum-mutual-information spanning tree of the released 2-way tables.

    Post-processing: the 2-way tables are the marginal summary's answers (noisy, negative
    cells set to 0). The tree (Chow-Liu, by Prim's algorithm on the mutual information of
    those tables, :func:`tree_parents`) grows from the columns already ``drawn`` (the value
    blocks, as level codes), else from the first ``joined`` column (drawn from its latent),
    else from the first column (drawn from its one-way table). Every other column is drawn from
    its table with its parent, given the parent's drawn level, the table first raked to both
    columns' released one-way tables (iterative proportional fitting): the clipped noise of a
    sparse table would otherwise spread a many-level column's draws over its rare levels.

    Only a table whose dependence stands out of its noise is an edge (:func:`table_dependence`:
    at least ``edge_z`` (None: EDGE_Z) standard deviations above what ``noise_sd`` of
    ``noise_kind`` alone gives a table of the same margins). The mutual information of a sparse noisy table is
    mostly its clipped noise: on adult at (1, 1e-10), workclass x native-country (378 cells)
    measured .51 against a true .009 and made native-country workclass's parent, over
    occupation (.33 true). A column with no such table is drawn from its one-way table.

    A ``joined`` column keeps its tie to the numeric columns either way. Where at least
    COUPLE_SHARE of its table with its parent's deviation from independence is signal
    (:func:`signal_share`), it is drawn from that table with its latent uniform as the random
    number, its levels in their latent order: the tie to the numeric columns stays monotone
    and the pair's cells follow the table (relationship x sex on adult). Otherwise it keeps its
    latent draw, whose one-way frequencies are its released ones, and its children still grow
    from it.

    Returns
    -------
    dict
        Column name -> index into its ``all_levels``, shape (count,).
    """
    summary = MarginalSummary(schema, indices, moments)
    names = [column.name for column in schema.categorical]
    joined = joined or {}
    drawn = dict(drawn or {})
    roots = [name for name in names if name in drawn]
    if not roots:
        first = next((name for name in names if name in joined), None)
        if first is not None:
            roots, drawn[first] = [first], joined[first].levels
        else:
            roots = [names[0]]
            root = summary.cells([names[0]])
            drawn[names[0]] = rng.choice(len(root), size=count, p=_normalised(root))
    parent = tree_parents(schema, summary, roots, noise_sd, noise_kind, EDGE_Z if edge_z is None else edge_z)
    for child, chosen_parent in parent.items():
        one_way = summary.cells([child])
        if chosen_parent is None:  # no table of it stands out of the noise: its one-way table
            joint, given = one_way[None, :], np.zeros(count, dtype=np.int64)
        else:
            rows = len(schema.column(chosen_parent).all_levels)
            raw = summary.cells([chosen_parent, child], clip=False).reshape(rows, -1)
            joint = _raked(raw, summary.cells([chosen_parent]), one_way)  # raking clips it
            given = drawn[chosen_parent]
        column = joined.get(child)
        if column is not None and (chosen_parent is None or signal_share(raw, noise_sd, noise_kind) < COUPLE_SHARE):
            drawn[child] = column.levels  # its latent draw
            continue
        conditional = np.array([_normalised(row if row.sum() > 0 else joint.sum(axis=0)) for row in joint])
        if column is None:
            uniform, order = rng.random(count)[:, None], np.arange(joint.shape[1])
        else:  # the latent uniform through the levels in their latent order
            uniform, order = column.uniform[:, None], column.order
        drawn[child] = order[np.minimum(_levels_below(conditional[:, order].cumsum(axis=1), given, uniform[:, 0]),
                                        len(order) - 1)]
    return drawn


def _levels_below(cumulative: np.ndarray, given: np.ndarray, uniform: np.ndarray) -> np.ndarray:
    """For each candidate, how many entries of its parent level's row of ``cumulative`` (shape
    (parent levels, levels): non-decreasing rows, the cumulative conditional distributions) lie
    below its ``uniform``: ``(uniform[:, None] > cumulative[given]).sum(axis=1)``, without that
    (candidates, levels) array (3 GB for a column of 5 000 levels), by a binary search in each row."""
    below = np.empty(len(given), dtype=np.int64)
    by_parent = np.argsort(given, kind="stable")
    edges = np.searchsorted(given[by_parent], np.arange(len(cumulative) + 1))
    for level in range(len(cumulative)):
        at = by_parent[edges[level] : edges[level + 1]]
        if len(at):
            below[at] = np.searchsorted(cumulative[level], uniform[at], side="left")
    return below


def _raked(joint: np.ndarray, rows: np.ndarray, columns: np.ndarray, steps: int = RAKE_STEPS) -> np.ndarray:
    """A 2-way table (negative cells set to 0) scaled by iterative proportional fitting until its
    margins are ``rows`` and ``columns`` (one-way tables, negative cells set to 0, each floored
    at 1e-9 and normalised): the released one-way tables are less noisy than the 2-way table's
    own margins, which its clipped noise inflates. Post-processing."""
    row_target, column_target = (_normalised(np.clip(margin, 0.0, None) + 1e-9) for margin in (rows, columns))
    table = np.clip(joint, 0.0, None) + 1e-12
    for _ in range(steps):
        table *= (row_target / table.sum(axis=1))[:, None]
        table *= (column_target / table.sum(axis=0))[None, :]
    return table


def tree_parents(schema: Schema, summary: MarginalSummary, roots: list[str], noise_sd: float = 0.0,
                 noise_kind: str = "gaussian", edge_z: float = EDGE_Z) -> dict[str, str | None]:
    """Each non-root binary or categorical column's parent in :func:`tree_levels`'s tree, in the
    order the columns join it (Prim's algorithm from ``roots`` on the mutual information of the
    released 2-way tables whose dependence stands ``edge_z`` standard deviations out of the
    noise, :func:`table_dependence`); None for a column none of whose tables does."""
    names = [column.name for column in schema.categorical]
    weight = {}
    for a, b in itertools.combinations(names, 2):
        if a in roots and b in roots:  # no edge between two drawn columns (two value blocks have no table)
            continue
        rows = len(schema.column(a).all_levels)
        raw = summary.cells([a, b], clip=False).reshape(rows, -1)
        if edge_z > -math.inf and table_dependence(raw, noise_sd, noise_kind) < edge_z:
            weight[a, b] = weight[b, a] = 0.0
        else:  # of the table with its negative cells set to 0 (MarginalSummary's clip), as the draws use it
            weight[a, b] = weight[b, a] = _mutual_information(np.clip(raw, 0.0, None))
    parent: dict[str, str | None] = {}
    in_tree = list(roots)
    while len(in_tree) < len(names):
        chosen_parent, child = max(((p, c) for p in in_tree for c in names if c not in in_tree),
                                   key=lambda pair: weight[pair])
        parent[child] = chosen_parent if weight[chosen_parent, child] > 0 else None
        in_tree.append(child)
    return parent


def quiet_block_tables(schema: Schema, indices: np.ndarray, moments: np.ndarray, noise_sd: float,
                       noise_kind: str = "gaussian", edge_z: float = EDGE_Z) -> np.ndarray:
    """Which released moments are cells of a value block's 2-way table (with a binary or categorical
    column) whose dependence does not stand ``edge_z`` noise standard deviations out
    (:func:`table_dependence`, the rule of :func:`tree_parents`), shape (R,) bool.

    Such a table is no edge of the candidates' tree, and the LP and the tilt leave its cells out
    (:func:`synthdp.pipeline.run.mixed_design`): what it holds beyond the two columns' one-way
    tables is mostly noise, which its bins x levels cells would otherwise impose on the weights
    (an integer column of 100 values independent of three categorical columns: 2-way TV .0737
    fitted against .0652 before the binned blocks, one seed; docs/decisions/binned-blocks.md).
    Post-processing of released values.
    """
    summary = MarginalSummary(schema, indices, moments)
    touched = {column.name: indices[:, schema.block_slice(column.name)].any(axis=1) for column in schema.categorical}
    blocks_touched = np.sum(list(touched.values()), axis=0)
    quiet = np.zeros(len(indices), dtype=bool)
    for block in schema.value_blocks:
        for column in schema.declared:
            cells = touched[block.name] & touched[column.name] & (blocks_touched == 2)
            if not cells.any():
                continue
            raw = summary.cells([block.name, column.name], clip=False).reshape(len(block.all_levels), -1)
            if table_dependence(raw, noise_sd, noise_kind) < edge_z:
                quiet |= cells
    return quiet


def signal_share(table: np.ndarray, noise_sd: float, noise_kind: str = "gaussian") -> float:
    """The share of a noisy 2-way table's excess (:func:`table_dependence`) that is not the noise's:
    max(0, 1 - mean noise-only excess / excess), the positive-part James-Stein factor toward
    independence; 1 without noise. Post-processing with the fixed public seed NULL_SEED."""
    table = np.asarray(table, dtype=float)
    observed = _excess(table)
    if noise_sd <= 0:
        return 1.0
    if observed <= 0:
        return 0.0
    null_mean, _ = _noise_only_excess(table, noise_sd, noise_kind)
    return max(0.0, 1.0 - null_mean / observed)


def _excess(values: np.ndarray) -> float:
    """sum_ij (y_ij - y_i. y_.j / y..)^2, 0 for a table whose total is not positive."""
    total = values.sum()
    if total <= 0:
        return 0.0
    return float(((values - np.outer(values.sum(axis=1), values.sum(axis=0)) / total) ** 2).sum())


def _noise_only_excess(table: np.ndarray, noise_sd: float, noise_kind: str) -> tuple[float, float]:
    """Mean and sd of the excess of NULL_DRAWS tables of independent columns with ``table``'s margins
    plus noise of sd ``noise_sd`` per cell (``noise_kind``), drawn with the fixed seed NULL_SEED."""
    total = table.sum()
    independent = np.clip(np.outer(table.sum(axis=1), table.sum(axis=0)) / total, 0.0, None)
    generator = np.random.default_rng(NULL_SEED)
    shape = (NULL_DRAWS, *table.shape)
    draws = (generator.standard_normal(shape) * noise_sd if noise_kind == "gaussian"
             else generator.laplace(0.0, noise_sd / math.sqrt(2), shape))
    null = np.array([_excess(independent + draw) for draw in draws])
    return float(null.mean()), float(null.std())


def table_dependence(table: np.ndarray, noise_sd: float, noise_kind: str = "gaussian") -> float:
    """How far a noisy 2-way table's dependence stands out of its noise, in standard deviations.

    The excess is the squared distance of the table (unclipped, shape (a, b)) from the product
    of its own margins, sum_ij (y_ij - y_i. y_.j / y..)^2. The same excess is computed for
    NULL_DRAWS tables of independent columns with the same margins plus noise of sd
    ``noise_sd`` per cell (``noise_kind``, as the release's: "gaussian" or "laplace"), and the
    result is (excess - their mean) / their sd. Noise alone gives about 0 (a noise-only table's
    excess grows with its cells, so a raw threshold would favour the large tables); a real
    dependence, its strength over the noise's spread. Post-processing of released values with
    a fixed public seed (NULL_SEED): the candidates' generator is not used. Without noise
    (``noise_sd`` 0), +inf where the table departs from independence at all. Every cell gets
    the same noise here; a binary column's first-level cells are derived (P(a) - P(a, b)) with
    twice the variance, so its tables' noise is understated a little and their edges (and
    :func:`signal_share`'s couplings) come slightly easier.
    """
    table = np.asarray(table, dtype=float)
    observed = _excess(table)
    if noise_sd <= 0:
        return math.inf if observed > 1e-15 else 0.0
    if table.sum() <= 0:
        return 0.0
    null_mean, spread = _noise_only_excess(table, noise_sd, noise_kind)
    return (observed - null_mean) / spread if spread > 0 else 0.0


def _mutual_information(table: np.ndarray) -> float:
    joint = _normalised(table.reshape(-1)).reshape(table.shape)
    outer = np.outer(joint.sum(axis=1), joint.sum(axis=0))
    positive = joint > 0
    return float((joint[positive] * np.log(joint[positive] / outer[positive])).sum())


def _normalised(values: np.ndarray) -> np.ndarray:
    values = np.clip(values, 0.0, None)
    total = values.sum()
    return values / total if total > 0 else np.full(len(values), 1 / len(values))


# ------------------------------------------------------------------ registry
@dataclass(frozen=True)
class CandidateOptions:
    """Alternatives to the product's post-processing rules of the candidate makers, for design studies.

    The defaults are the product; :class:`synthdp.pipeline.run.StudyOptions` builds other
    values for ``experiments/design_choices.py``. Every maker gets them and reads the fields
    that concern it (all post-processing of the release: none changes what is private).

    Attributes
    ----------
    atom_threshold : float
        The copula marginals' :attr:`synthdp.postprocess.copula.Marginals.atom_threshold`.
    pair_threshold : float
        Noise standard deviations a released score correlation must reach to be kept
        (:data:`synthdp.postprocess.pairs.THRESHOLD`).
    nearest : callable
        The final projection of :func:`synthdp.postprocess.pairs.latent_correlation`.
    join_ratio : float
        The correlation ratio from which a categorical column joins a mixed table's copula
        (:func:`ordinal_latent`; :data:`JOIN_RATIO`).
    spectral_pairs : bool or None
        Denoise the released score correlations as a matrix
        (:func:`synthdp.postprocess.pairs.spectral_denoise`); None: :func:`spectral_pairs`' rule.
    pair_variances : {"released", "model"}
        The variances that put the released score products in correlation units
        (:func:`synthdp.postprocess.pairs.latent_correlation`): the released ones (the product,
        within the noise limit) or the copula's (before).
    ordinal_levels : {"shrunk", "thresholded"}
        How a joined categorical column's levels are ordered and correlated
        (:func:`ordinal_latent`'s ``levels``): by their posterior means and every level's
        released deviation (the product), or by the thresholded deviations (before).
    edge_z : float
        How far a 2-way table's dependence must stand out of its noise to be an edge of the
        categorical candidates' tree (:func:`tree_parents`; :data:`EDGE_Z`; ``-inf``: every
        table, the rule before).
    matrix_scores : bool or (int, float)
        Where the plan denoises the pairs as a matrix, the release scored its rows in finer cells
        with a smaller norm bound (:func:`synthdp.postprocess.pairs.marginal_score_map`), and
        the model of the release must do the same (True, the product; a pair (bins, clip share):
        those); False: the release and its model as for pairs read one by one (before).
    matrix_means : bool or float
        There, the release also held the scores' means, and the model compares covariances
        (True or a share c^2 / C^2: :func:`synthdp.postprocess.pairs.marginal_score_map`; a design
        study's); False: the products only (the product).
    block_edges : bool
        Pairs read one by one: a column's pairs into a block of tied columns are read from the
        block as a whole (:func:`synthdp.postprocess.pairs.block_edges_pooled`; True, the
        product), or as selected one by one (False, before).
    extend_blocks : {"laplace", "always", "never"}
        There, where the columns selected for a block count as members for the columns not
        selected: under Laplace noise (the product), under either noise, or nowhere (the rule
        before commit d4409c8 of 2026-11-28) (:func:`synthdp.postprocess.pairs.latent_correlation`).
    pair_entropy : bool
        Pairs read one by one: replace the fixed point's matrix by the correlation matrix of
        largest entropy near it (:func:`synthdp.postprocess.pairs.max_entropy_correlation`; True,
        the product), or keep it (False, before).
    pair_boxes : (float, float) or None
        The noise sd the kept pairs and the others may then move; None: the plan's
        (:func:`synthdp.postprocess.pairs.entropy_boxes`, the product).
    pair_fdr : float or None
        Pairs read one by one: keep a pair only where the Benjamini–Hochberg procedure at this
        false discovery rate also selects it (:func:`synthdp.postprocess.pairs.false_discovery_keep`;
        :data:`synthdp.postprocess.pairs.PAIR_FDR`, the product), or None: the threshold alone (before).
    """

    atom_threshold: float = ATOM_THRESHOLD
    pair_threshold: float = THRESHOLD
    nearest: Callable[[np.ndarray], np.ndarray] = nearest_correlation
    join_ratio: float = JOIN_RATIO
    spectral_pairs: bool | None = None
    pair_variances: str = "released"
    ordinal_levels: str = "shrunk"
    edge_z: float = EDGE_Z
    matrix_scores: bool | tuple[int, float] = True
    pair_entropy: bool = True
    pair_boxes: tuple[float, float] | None = None
    pair_fdr: float | None = PAIR_FDR
    matrix_means: bool | float = False
    block_edges: bool = True
    extend_blocks: str = "laplace"


def spectral_pairs(release: Release, options: CandidateOptions) -> bool:
    """Whether the pairs release is denoised as a matrix rather than pair by pair: the design
    study's choice, else the plan's (``Plan.pairs_as_matrix``: :func:`synthdp.postprocess.pairs.denoised_as_matrix`
    of the noise at the default norm bound)."""
    if options.spectral_pairs is not None:
        return options.spectral_pairs
    return release.noisy_scores is not None and release.plan.pairs_as_matrix


def _pair_correlation(release: Release, marginals: Marginals, rng: np.random.Generator,
                      options: CandidateOptions) -> np.ndarray:
    """The copula's latent correlation from the pairs release (:func:`latent_correlation`), modelled
    with the score map the release used (:func:`marginal_score_map`)."""
    as_matrix = release.plan.pairs_as_matrix
    boxes = None
    if options.pair_entropy:
        boxes = entropy_boxes(release.plan.lp_fits_pairs) if options.pair_boxes is None else options.pair_boxes
    return latent_correlation(marginal_score_map(marginals, as_matrix, options.matrix_scores, options.matrix_means,
                                                 release.plan.pairs_clip_norm_sq),
                              release.noisy_scores, release.scores_noise_sd, rng, threshold=options.pair_threshold,
                              fdr=options.pair_fdr, noise=release.plan.noise,
                              nearest=options.nearest, spectral=spectral_pairs(release, options),
                              variances=options.pair_variances, as_matrix=as_matrix, boxes=boxes,
                              block_edges=options.block_edges, extend_blocks=options.extend_blocks)


CandidateMaker = Callable[[Release, np.random.Generator, SynthConfig, CandidateOptions], np.ndarray | EncodedPoints]
CANDIDATE_KINDS: dict[str, CandidateMaker] = {}


def register_candidates(kind: str) -> Callable[[CandidateMaker], CandidateMaker]:
    """Register a maker of candidate points for ``kind``: ``maker(release, rng, config, options)``
    returns the (C, D) candidates of that release (post-processing: it may read only the
    :class:`synthdp.released.Release`, the public configuration, public randomness and the
    :class:`CandidateOptions`, which a kind without alternatives ignores)."""
    def register(maker: CandidateMaker) -> CandidateMaker:
        CANDIDATE_KINDS[kind] = maker
        return maker
    return register


def make_candidates(kind: str, release: Release, rng: np.random.Generator, config: SynthConfig,
                    options: CandidateOptions | None = None) -> np.ndarray | EncodedPoints:
    """The candidate points of kind ``kind`` for ``release``, shape (C, D) (a mixed table's as
    :class:`~synthdp.domain.encoded.EncodedPoints`).

    ``options``: alternatives for design studies (:class:`CandidateOptions`); None is the product.
    """
    if kind not in CANDIDATE_KINDS:
        raise SynthDPError(f"unknown candidate kind '{kind}'; known: {sorted(CANDIDATE_KINDS)}")
    return CANDIDATE_KINDS[kind](release, rng, config, CandidateOptions() if options is None else options)


@register_candidates("grid")
def _grid(release: Release, rng: np.random.Generator, config: SynthConfig, options: CandidateOptions) -> np.ndarray:
    return grid_candidates(release.plan.theory.N, release.plan.d)


@register_candidates("hypercube")
def _hypercube(release: Release, rng: np.random.Generator, config: SynthConfig,
               options: CandidateOptions) -> np.ndarray:
    plan = release.plan
    return hypercube_candidates(plan.theory.N, plan.d, plan.n_candidates, rng)


@register_candidates("copula")
def _copula(release: Release, rng: np.random.Generator, config: SynthConfig, options: CandidateOptions) -> np.ndarray:
    marginals = copula_marginals(release, options.atom_threshold)
    correlation = np.eye(release.plan.d)
    if release.noisy_scores is not None:
        correlation = _pair_correlation(release, marginals, rng, options)
    elif release.selected_pairs is not None:
        correlation = selected_latent_correlation(quadrant_score_map(marginals), release.selected_pairs,
                                                  release.plan.d, release.plan.noise, options.pair_threshold,
                                                  options.pair_fdr)
    return copula_candidates(marginals, correlation, release.plan.n_candidates, rng)


def moments_noise_sd(release: Release) -> float:
    """The largest noise sd of a mixed table's moments proper, which the candidates' tests and the
    value blocks' gate read (2-way cells, means per level): not that of the one-way cells released
    apart in a stage of their own (:func:`synthdp.stats.mixed_basis.apart_cells`), whose noise can be
    the larger where only a column of many levels went apart. 0 without moments."""
    sd = np.asarray(release.moment_noise_sd)
    if release.schema is not None and release.plan.apart_levels:
        held = ~apart_cells(release.schema, release.basis_indices, release.plan.apart_levels)
        sd = sd[held] if held.any() else sd
    return float(np.max(sd)) if len(sd) else 0.0


@register_candidates("mixed")
def _mixed(release: Release, rng: np.random.Generator, config: SynthConfig,
           options: CandidateOptions) -> EncodedPoints:
    if release.schema is None:
        raise SynthDPError("mixed candidates need a release with a schema")
    marginals = None if release.noisy_histograms is None else copula_marginals(release, options.atom_threshold)
    noise_sd = moments_noise_sd(release)
    correlation = None
    if marginals is not None and release.noisy_scores is not None:
        correlation = _pair_correlation(release, marginals, rng, options)
    return mixed_candidates(release.schema, release.basis_indices, release.noisy_moments,
                            release.plan.tilted_candidates, rng, marginals, noise_sd, correlation, options.join_ratio,
                            options.ordinal_levels, release.plan.noise, options.edge_z, release.class_histograms)


@register_candidates("moments")
def _moments(release: Release, rng: np.random.Generator, config: SynthConfig, options: CandidateOptions) -> np.ndarray:
    center, covariance = moment_gaussian(release.basis_indices, release.noisy_moments)
    return gaussian_candidates(center, covariance, release.plan.n_candidates, rng)


@register_candidates("pca")
def _pca(release: Release, rng: np.random.Generator, config: SynthConfig, options: CandidateOptions) -> np.ndarray:
    if release.pca is None:
        raise SynthDPError("pca candidates need a release with private PCA")
    flat = int(np.sum(release.pca.eigenvalues <= 0))
    if flat:  # a released (noisy) value: public, and what the user needs to know of this output
        k = len(release.pca.eigenvalues)
        warn_user(f"{flat} of the {k} private PCA axes have no variance after their noise (eigenvalue 0): the "
                  f"candidates lie in {k - flat} dimension(s), so the synthetic columns are as related as a "
                  f"{k - flat}-dimensional cloud makes them (on a line: correlations of +-1) whatever the data's; "
                  "at this n and budget use the default candidates (copula)", UserWarning)
    return ellipsoid_candidates(release.pca, release.plan.n_candidates, rng, config.ellipsoid_radius)


def copula_marginals(release: Release, atom_threshold: float = ATOM_THRESHOLD) -> Marginals:
    """The copula's one-way marginals, built from the release's noisy histograms
    (``atom_threshold``: :attr:`synthdp.postprocess.copula.Marginals.atom_threshold`)."""
    if release.noisy_histograms is None:
        raise SynthDPError("copula candidates need a release with one-way histograms")
    noise_sd = margin_noise_sd(release.histogram_noise_sd, release.class_histograms,
                               release.noisy_histograms.shape[0])
    return Marginals(release.noisy_histograms, release.plan.n, noise_sd, atom_threshold, release.cell_layout)
