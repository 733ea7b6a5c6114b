"""Histograms by level of a class column (``class_column``): the numeric columns released by level,
the rows per level, and the copula's marginals given a level.

On a mixed table of a few hundred rows the moments are noise (:func:`synthdp.pipeline.plan.mixed_split`
sends every one-way table apart from them), so a numeric column's dependence on a categorical one —
iris's petal sizes by species — is carried by its means per level, which are noise too (iris at
(1, 1e-10): sd 1.07 on a mean in [-1, 1]). MST and AIM measure 2-way marginals instead. The cheapest
such measurement here is each numeric column's histogram by level of one *class* column, an L x C
table in place of its C cells: a row still lies in one cell of each column's table, so the
sensitivity, and each cell's noise, are the one-way histograms'
(:func:`synthdp.privacy.sensitivity.histogram_sensitivity`), but the column's one-way histogram,
summed over the L levels, carries sqrt(L) times the noise.

The user names the class: which column separates the numeric ones is a property of the data, and a
rule from the released level counts did not find it (docs/relationships-mixed.md#conditional-histograms).
A warning says where it cannot pay, by AIM's criterion (McKenna et al. 2022: measure a marginal where
what it can correct exceeds the noise it adds) at the largest correction possible: a level's row of a
column's table adds noise of expected l1 norm sqrt(2 / pi) sd C (Gaussian noise of sd ``sd`` on each
of C cells; Laplace noise of scale b: b C), and can correct at most 2 n_l rows' worth (the l1
distance between two distributions of the level's n_l rows), n_l the released (noisy) level count,
taken as short only beyond its noise (:data:`SHORT_LEVEL_Z`); the warning names the levels.
"""

from __future__ import annotations

import math

import numpy as np

from synthdp.domain.schema import Schema
from synthdp.errors import SynthDPError
from synthdp.postprocess.copula import Marginals, level_cell_estimates
from synthdp.released import ClassHistograms
from synthdp.stats.histograms import CellLayout


def released_level_counts(schema: Schema, indices: np.ndarray, noisy_moments: np.ndarray, rows: np.ndarray,
                          n: float) -> dict[str, np.ndarray]:
    """Each declared binary or categorical column's rows per level (``all_levels`` order), from its
    released one-way cells (the ``rows`` of ``indices``: :func:`synthdp.stats.mixed_basis.one_way_cells`,
    released apart or among the moments; :func:`level_cell_estimates` makes them a distribution) times
    the public n. Post-processing of the release; a column whose cells are not all among ``rows`` is
    left out."""
    estimates = level_cell_estimates(schema, indices, noisy_moments, rows)
    counts = {}
    for column in schema.categorical:
        if column.internal:
            continue
        block = schema.block_slice(column.name)
        mine = np.flatnonzero(rows & indices[:, block].any(axis=1))
        if len(mine) != column.width:
            continue
        cells = np.empty(column.width)
        cells[np.argmax(indices[mine, block], axis=1)] = estimates[mine]
        shares = np.array([1.0 - cells[0], cells[0]]) if column.binary else cells
        counts[column.name] = shares * n
    return counts


def class_block(schema: Schema, name: str) -> int:
    """The position among the schema's binary and categorical columns of the class column ``name``
    (``class_column``); a one-line error naming the option where it is not one of the table's."""
    for block, column in enumerate(schema.categorical):
        if column.name == name and not column.internal:
            return block
    kind = "a numeric column" if name in schema.numeric.names else "not a column of the table"
    raise SynthDPError(f"class_column (--class-column) '{name}' is {kind}: name a binary or categorical column "
                       "of the schema")


def conditioned_columns(schema: Schema) -> np.ndarray:
    """The numeric columns (positions) released by level of the class: every one without a value block
    (an integer column of few values has its 2-way tables with every categorical column in the
    moments already, :data:`synthdp.domain.schema.MAX_VALUE_BLOCK`)."""
    valued = {j for _, j in schema.valued_numeric}
    return np.array([j for j in range(schema.d_numeric) if j not in valued], dtype=np.int64)


#: how many noise sds of its released count a level must lie below the line to be called short
#: (:func:`short_levels`): the minimum of noisy counts is biased low, and iris's levels of 50 rows
#: (the line 48, counts of sd 20) came out short by it in 20 of 20 releases; 2 sd below, in 3 of 200
SHORT_LEVEL_Z = 2.0


def short_levels(layout: CellLayout, columns: np.ndarray, level_rows: np.ndarray, noise_l1: float,
                 level_sd: float = 0.0) -> np.ndarray:
    """The levels of the class (positions) too rare for their histogram rows to pay: whose rows are fewer
    than half the expected l1 noise of such a row, noise_l1 C (``noise_l1`` the expected absolute noise on
    a count, C a conditioned column's cells; module docstring), so that the release's one-way histograms
    lose more than the class gains. ``level_rows`` are noisy (noise sd ``level_sd``): a level is short
    where its count lies below that line by more than SHORT_LEVEL_Z times its noise (one-sided, about
    2 % of the levels at the line are called short). Public: the layout, the budget, the released level
    counts."""
    if not len(columns) or not len(level_rows):
        return np.zeros(0, dtype=np.int64)
    cells = max(layout.column_cells(int(j)) for j in columns)
    return np.flatnonzero(noise_l1 * cells > 2.0 * (np.asarray(level_rows, dtype=float) + SHORT_LEVEL_Z * level_sd))


def margin_noise_sd(noise_sd: float, classes: ClassHistograms | None, d: int) -> float | np.ndarray:
    """The noise sd of each column's one-way histogram: ``noise_sd``, or for the columns released by
    level, sqrt(L) times it (their sum over L levels), as an array of shape (d, 1)."""
    if classes is None or not len(classes.columns):
        return noise_sd
    sd = np.full((d, 1), float(noise_sd))
    sd[classes.columns] *= math.sqrt(classes.noisy_counts.shape[1])
    return sd


def level_marginals(marginals: Marginals, classes: ClassHistograms, level: int, level_rows: float) -> Marginals:
    """The copula's marginals given the class's ``level``: the conditioned columns' rows of that level
    (noise ``classes.noise_sd`` each), projected onto ``level_rows`` rows; the other columns' as
    ``marginals`` has them, scaled to ``level_rows``."""
    counts = np.asarray(marginals.noisy_counts, dtype=float) * (level_rows / marginals.n_rows)
    sd = np.broadcast_to(np.asarray(marginals.noise_sd, dtype=float) * (level_rows / marginals.n_rows),
                         (counts.shape[0], 1)).copy()
    counts[classes.columns] = classes.noisy_counts[:, level, :]
    sd[classes.columns] = classes.noise_sd
    return Marginals(counts, level_rows, sd, marginals.atom_threshold, marginals.layout)
