"""The release: every differentially private statistic of a run, computed in one place.

Each function here takes exact sums over the rows (computed by :mod:`synthdp.reader.table`,
the only module that reads raw rows), a per-stage budget and the public sizes it needs, adds
the calibrated noise, and records the release in the ledger. :mod:`synthdp.pipeline.run`
calls them in order and assembles the :class:`synthdp.released.Release`; everything downstream
(candidates, LP, sampling, decoding) is post-processing of that Release.

Neighbouring tables have the same public n and differ in one row (replace-one), or, with a
privacy unit, differ by all rows of one unit, at most K (``neighbours``,
:class:`synthdp.privacy.sensitivity.Neighbours`; n is then the released noisy count of
:func:`release_units`); all rows lie in [-1, 1]^d after clipping to the public domain.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from synthdp.domain.box import ColumnDomain, Domain
from synthdp.errors import listed, warn_user
from synthdp.privacy.budget import StageBudget
from synthdp.privacy.dp_bounds import (
    detection_threshold,
    estimate_bounds,
    laplace_count_scale,
)
from synthdp.privacy.ledger import PrivacyEvent, PrivacyLedger
from synthdp.privacy.noise import (
    NoiseSampler,
    laplace_scale,
)
from synthdp.privacy.pca import PrivatePCA, private_subspace_iteration
from synthdp.privacy.sensitivity import (
    ROWS,
    Neighbours,
    bounded_means_sensitivity,
    grouped_means_sensitivity,
    histogram_sensitivity,
    level_cells_sensitivity,
    moments_sensitivity,
    per_value_sensitivity,
    quadrant_scores_sensitivity,
    row_count_sensitivity,
    score_products_sensitivity,
    top_eigenvalue_sensitivity,
    units_sensitivity,
    value_histogram_sensitivity,
)
from synthdp.stats.histograms import CellLayout
from synthdp.stats.row_sums import RowSums
from synthdp.stats.scores import pair_matrix


def release_domain(column_names: list[str], scan: RowSums, known_columns: dict[str, ColumnDomain], epsilon: float,
                   ledger: PrivacyLedger, noise: NoiseSampler, n: float, neighbours: Neighbours = ROWS) -> Domain:
    """The domain, with DP estimates of the bounds the user did not give.

    Each estimated column gets epsilon / (number of estimated columns) for one noisy
    histogram (:func:`synthdp.privacy.dp_bounds.estimate_bounds`; L1 sensitivity 2 per column), whose
    counts are ``scan["histograms"]``, one row per column without bounds, in table order;
    ``n`` is the public row count (by unit, the released noisy count; its L1 sensitivity K).
    """
    missing = [name for name in column_names if name not in known_columns]
    columns = dict(known_columns)
    if missing:
        per_column = epsilon / len(missing)
        ledger.record(PrivacyEvent(
            "bounds", "Laplace histogram over fixed power-of-two bins, per column", value_histogram_sensitivity(neighbours),
            "l1 per column",
            laplace_count_scale(per_column, neighbours), epsilon, 0.0, f"lower and upper bounds of {len(missing)} column(s)",
        ))
        threshold = detection_threshold(per_column, neighbours)
        if threshold > n / 20:
            warn_user(
                f"private bounds for {len(missing)} column(s) from epsilon = {epsilon:.3g} are unreliable at "
                f"n = {n:.0f}: a bin needs about {threshold:.0f} rows to be detected; pass public "
                "bounds (--bounds, or in the schema) or raise --bounds-share", UserWarning,
            )
        for name, counts in zip(missing, scan["histograms"]):
            lower, upper = estimate_bounds(counts, per_column, noise, n, neighbours)
            columns[name] = ColumnDomain(name, lower, upper, source="DP estimate")
    return Domain(tuple(columns[name] for name in column_names), source=_sources_summary(columns.values()))


def _sources_summary(columns) -> str:
    sources = sorted({column.source for column in columns})
    return " + ".join(sources)


def release_levels(level_counts: Mapping[str, Mapping[str, int]], epsilon: float, delta: float, ledger: PrivacyLedger,
                   noise: NoiseSampler, neighbours: Neighbours = ROWS) -> dict[str, tuple[str, ...]]:
    """DP discovery of the levels of categorical columns: a stability-based histogram per column.

    ``level_counts`` maps each column to the exact count of every value it holds (private).
    Each column gets (eps_c, delta_c) = (epsilon, delta) / len(level_counts). Every value that occurs
    in the column gets its count plus Laplace(2/eps_c) noise, and is kept when the noisy count
    exceeds tau = 1 + (2/eps_c) ln(1/delta_c).

    Privacy, for replace-one neighbours (one row's value u becomes w): the counts of the
    values present in both tables move by at most 1 each, at most two of them (l1
    sensitivity 2), so the noisy counts on the shared values are eps_c-DP. A value present in
    one table only (u, or w) has count 1 there and is kept with probability
    P(1 + Lap(2/eps_c) > tau) = exp(-(tau - 1) eps_c / 2) / 2 = delta_c / 2; two such values
    at most, so the release is (eps_c, delta_c)-DP. A noisy count per observed value without
    the threshold is not DP at all: the set of observed values itself leaks. The kept levels
    are sorted (their order must not depend on the counts) and the noisy counts dropped.

    By unit (one unit's at most K rows added or removed): the counts of the values in both
    tables move by at most K in all (l1 sensitivity K, Laplace(K/eps_c)); at most K values are
    in one table only, each with count <= K, each kept with probability
    <= exp(-(tau - K) eps_c / K) / 2, so tau = K + (K/eps_c) ln(K/delta_c) keeps any of them
    with probability <= delta_c / 2. (K = 1 is the replace-one threshold with scale 1/eps_c.)
    """
    names = list(level_counts)
    per_column, delta_per_column = epsilon / len(names), delta / len(names)
    scale = laplace_scale(value_histogram_sensitivity(neighbours), per_column)
    k = neighbours.k
    # log(k) - log(delta), not log(k / delta): 1 / delta overflows to inf below 5.6e-309 (a threshold no count passes)
    threshold = (k + scale * (math.log(k) - math.log(delta_per_column))) if neighbours.by_unit \
        else 1 + scale * -math.log(delta_per_column)
    ledger.record(PrivacyEvent("levels", "Laplace stability histogram with threshold, per column",
                               value_histogram_sensitivity(neighbours),
                               "l1 per column (values in both tables)", scale, epsilon, delta,
                               f"levels of {len(names)} categorical column(s) (counts above {threshold:.3g})"))
    levels = {}
    for name in names:
        counts = level_counts[name]
        values = sorted(counts)  # not in the rows' order: under a seed each value then gets one noise draw in any order
        noisy = noise.laplace(np.array([counts[value] for value in values], dtype=float), scale)
        levels[name] = tuple(sorted(value for value, count in zip(values, noisy) if count > threshold))
    empty = [name for name in names if not levels[name]]
    if empty:  # post-processing of the release (the threshold is public): said, as a column all "other" is a surprise
        warn_user(f"{len(empty)} column(s) kept no level in DP level discovery ({', '.join(repr(n) for n in empty[:3])}"
                  f"{', ...' if len(empty) > 3 else ''}): no value's noisy count passed the threshold of "
                  f"{threshold:.3g} rows at this budget, so every row of them comes back as the other level; raise "
                  "--levels-share or --epsilon, or declare their levels in the schema", UserWarning)
    return levels


CLIPPED_ROWS = "number of rows with a value outside the bounds"
OTHER_ROWS = "number of rows with a categorical value outside its levels"


def release_row_count(count: int, epsilon: float, stage: str, released: str, ledger: PrivacyLedger,
                      noise: NoiseSampler, neighbours: Neighbours = ROWS) -> float:
    """Noisy count of the rows with some property (a clipped value, an "other" level).

    Sensitivity: replacing one row changes the count by at most 1 (L1 = 1), so
    Laplace(1/epsilon) makes it epsilon-DP; by unit K (:func:`synthdp.privacy.sensitivity.row_count_sensitivity`).
    """
    sensitivity = row_count_sensitivity(neighbours)
    scale = laplace_scale(sensitivity, epsilon)
    ledger.record(PrivacyEvent(stage, "Laplace", sensitivity, "l1", scale, epsilon, 0.0, released))
    return float(noise.laplace(np.array([count], dtype=float), scale)[0])


def release_moments(moments: np.ndarray, indices: np.ndarray, budget: StageBudget, n: float, ledger: PrivacyLedger,
                    noise: NoiseSampler, skipped_pairs: int = 0,
                    sensitivity: tuple[float, float] | None = None, neighbours: Neighbours = ROWS) -> np.ndarray:
    """Noisy Chebyshev moments b_hat = b + noise of the basis ``indices``, shape (R, d).

    Sensitivity: :func:`synthdp.privacy.sensitivity.moments_sensitivity`, at most that of any R functions
    with values in [-1, 1] (every phi_r is a product of cosines), and below it when a column
    has several univariate functions. The constant phi_0 = 1 has sensitivity 0 and is not
    released. The paper's scale t^d/(n eps) is about half the generic 2R/(n eps).
    ``skipped_pairs``: how many pair products x_i x_j of the basis are left to the pairs
    release (for the report). ``sensitivity``: an (L1, L2) bound to calibrate to instead of the derived one
    (design studies, :class:`synthdp.pipeline.run.StudyOptions`); the release is DP only if it
    bounds the true sensitivity.
    """
    released = f"{len(moments)} Chebyshev moments"
    if skipped_pairs:
        released += f" (the basis's {skipped_pairs} pair products x_i x_j are left to the correlation release)"
    return release_bounded_means(moments, "moments", released, budget, n, ledger, noise, neighbours=neighbours,
                                 sensitivity=moments_sensitivity(indices, n, neighbours) if sensitivity is None
                                 else sensitivity)


def release_bounded_means(means: np.ndarray, stage: str, released: str, budget: StageBudget,
                          n: float, ledger: PrivacyLedger, noise: NoiseSampler, groups: int | None = None,
                          sensitivity: tuple[float, float] | None = None,
                          neighbours: Neighbours = ROWS) -> np.ndarray:
    """Noisy means over the rows of R functions with values in [-1, 1].

    Sensitivity (:func:`synthdp.privacy.sensitivity.bounded_means_sensitivity`): replacing one row moves
    each mean (1/n) sum_i f(x_i) by at most 2/n, so the vector of R means has L1
    sensitivity 2R/n and L2 sensitivity 2 sqrt(R)/n; a caller that derived a tighter
    (L1, L2) for its functions passes it as ``sensitivity``. With
    ``groups`` = G, the functions fall into G groups whose vector of means moves by at most
    2/n in l1 and l2 (at most one function of a group is non-zero on any row, as for the
    indicator products of :meth:`synthdp.stats.mixed_basis.basis_groups`); R becomes G below.

    Calibrations: pure epsilon-DP: Laplace(2R/(n eps)) per mean. (epsilon, delta) with
    Gaussian noise: sigma = L2 sensitivity / mu. (epsilon, delta) with Laplace: each mean
    (each group) is an eps0-DP Laplace release of sensitivity 2/n, eps0 from advanced
    composition over the R means (G groups; see :func:`synthdp.privacy.noise.composition_epsilon`).
    That per-value release keeps the bound 2/n of each mean and ignores ``sensitivity``: a
    joint (L1, L2) bound does not bound each value below 2/n. Where the whole vector's
    epsilon-DP release (Laplace of its L1 ``sensitivity`` over epsilon, delta not spent) has the
    smaller scale (a derived sensitivity far below 2R/n, or few values), it is that release.

    By unit (``neighbours``): the means are sums over the rows divided by the released count n,
    and every bound is the unit one of :mod:`synthdp.privacy.sensitivity` (K R/n, K sqrt(R)/n;
    K/n per value).
    """
    R = len(means) if groups is None else groups
    if sensitivity is None:
        sensitivity = (bounded_means_sensitivity(R, n, neighbours) if groups is None
                       else grouped_means_sensitivity(groups, n, neighbours))
    if budget.laplace_per_value:
        scale = budget.means_noise_scale(R, n, neighbours)
        if scale < budget.noise_scale(*sensitivity):  # else the whole vector's epsilon-DP release is less noisy
            mechanism = "Laplace per value, advanced composition over the values"
            ledger.record(PrivacyEvent(stage, mechanism, per_value_sensitivity(n, neighbours), "l1 per value", scale,
                                       budget.epsilon, budget.delta, released))
            return noise.laplace(means, scale)
    return _release(means, stage, released, *sensitivity, budget, ledger, noise)


def release_level_cells(cells: np.ndarray, k: int, budget: StageBudget, n: float, ledger: PrivacyLedger,
                        noise: NoiseSampler, neighbours: Neighbours = ROWS, stage: str = "level cells") -> np.ndarray:
    """Noisy one-way cells of k binary or categorical columns: ``cells``, the means over the rows
    of each column's level indicators (a mixed table's basis rows of one indicator,
    :func:`synthdp.stats.mixed_basis.basis_indices`), released apart from the other moments
    where those are noise, or only the cells of the columns of many levels where theirs are
    (:func:`synthdp.pipeline.plan.level_cells_apart`); k counts the columns released here.

    Sensitivity: L1 2k/n, L2 sqrt(2k)/n (by unit K k/n, K sqrt(k)/n), derived in
    :func:`synthdp.privacy.sensitivity.level_cells_sensitivity`: a column's one-way cells are its
    histogram. Gaussian noise for a Gaussian-DP budget, else Laplace.
    """
    l1, l2 = level_cells_sensitivity(k, n, neighbours)
    return _release(np.asarray(cells, dtype=float), stage,
                    f"one-way cells of {k} binary or categorical column(s) ({len(cells)} cells)",
                    l1, l2, budget, ledger, noise)


def release_marginals(counts: np.ndarray, layout: CellLayout, budget: StageBudget, ledger: PrivacyLedger,
                      noise: NoiseSampler, neighbours: Neighbours = ROWS, stage: str = "marginals"
                      ) -> tuple[np.ndarray, float]:
    """Noisy one-way histograms of every column: ``counts`` of shape (d, M) from
    :meth:`synthdp.stats.histograms.CellLayout.counts` summed over the rows.

    Sensitivity: L1 2d, L2 sqrt(2d), derived in :func:`synthdp.privacy.sensitivity.histogram_sensitivity`
    (whatever the layout: a row lies in one cell of each column); by unit L1 K d, L2 K sqrt(d).
    Padding cells (beyond a column's own) hold 0 in every table and get noise too, which
    post-processing discards. ``stage``: the ledger's name for the release ("marginals_2" for
    the second part of histograms released in two, :func:`synthdp.pipeline.run.release_tested_pairs`).
    """
    d = counts.shape[0]
    sensitivity = histogram_sensitivity(d, neighbours)
    values = layout.value_columns
    what = (f"one-way histograms of {d} columns, {layout.n_bins} bins + 2 atoms each" if values == 0 else
            f"one-way histograms of {d} columns: {d - values} in {layout.n_bins} bins + 2 atoms, "
            f"{values} with one cell per value")
    if any(layout.missing):
        what += f", a missing cell for {sum(layout.missing)} nullable column(s)"
    noisy = _release(counts, stage, what, *sensitivity, budget, ledger, noise)
    return noisy, budget.noise_sd(*sensitivity)


def release_class_histograms(counts: np.ndarray, by_level: np.ndarray, columns: np.ndarray, class_name: str,
                             layout: CellLayout, budget: StageBudget, ledger: PrivacyLedger, noise: NoiseSampler,
                             neighbours: Neighbours = ROWS, names: Sequence[str] = ()
                             ) -> tuple[np.ndarray, np.ndarray, float]:
    """Noisy histograms of every numeric column, ``columns`` of them by level of the class column:
    ``counts`` (d, M) as for :func:`release_marginals`, ``by_level`` (d, L, M) the rows per level of
    the class and cell. Returns the one-way histograms (d, M) (a conditioned column's summed over the
    levels), the conditioned columns' noisy tables (k, L, M), and the noise sd of each count.

    Sensitivity: that of the one-way histograms, L1 2d, L2 sqrt(2d)
    (:func:`synthdp.privacy.sensitivity.histogram_sensitivity`; by unit L1 K d, L2 K sqrt(d)): a row
    lies in one cell of each column's table, a conditioned column's table of L x M cells included,
    so replacing it moves two counts of each column by one. One release of a (d, L, M) array: a
    column not conditioned holds its counts at level 0 and zeros (padding, noised and discarded)
    at the others. ``names``: the numeric columns' names (public), for the report to name the
    conditioned ones where they are not all of them.
    """
    d, levels, cells = by_level.shape
    table = np.zeros((d, levels, cells))
    table[:, 0, :] = counts
    table[columns] = by_level[columns]
    sensitivity = histogram_sensitivity(d, neighbours)
    which = "all of them" if len(columns) == d else f"{len(columns)} of them"
    if len(columns) < d and len(names) == d:
        which += f" ({listed([str(names[int(j)]) for j in columns], 5)})"
    what = (f"histograms of {d} numeric columns, {which} by level of '{class_name}' ({levels} level"
            f"{'s' if levels != 1 else ''} x their cells)"
            + ("" if len(columns) == d else ", the others one-way") + f"; {layout.n_bins} bins + 2 atoms"
            + (f" or one cell per value ({layout.value_columns} columns)" if layout.value_columns else "")
            + (f", a missing cell for {sum(layout.missing)} nullable column(s)" if any(layout.missing) else ""))
    noisy = _release(table.reshape(d, levels * cells), "marginals", what, *sensitivity, budget, ledger,
                     noise).reshape(d, levels, cells)
    histograms = noisy[:, 0, :].copy()
    histograms[columns] = noisy[columns].sum(axis=1)
    return histograms, noisy[columns], budget.noise_sd(*sensitivity)


def release_score_products(score_products_sum: np.ndarray, budget: StageBudget, n: float, d: int,
                           clip_norm_sq: float, ledger: PrivacyLedger, noise: NoiseSampler,
                           neighbours: Neighbours = ROWS, mean_weight: float = 0.0) -> np.ndarray:
    """Noisy means of the products s_i s_j, i <= j, of the rows' clipped normal scores, in
    ``np.triu_indices(d)`` order, from their sums over the rows
    (:func:`synthdp.stats.scores.score_products`); with ``mean_weight`` c > 0 followed by the
    noisy means of c s_j, in the same release.

    Sensitivity: L1 (d / sqrt(2) + 1) C^2 / n, L2 sqrt(2) C^2 / n with C^2 = ``clip_norm_sq``,
    derived (L2 attained) in :func:`synthdp.privacy.sensitivity.score_products_sensitivity`;
    by unit L1 K (d + 1) C^2 / (2n), L2 K C^2 / n. With the means, L2
    sqrt(2 C^4 + 2 c^2 C^2 + c^4) / n and L1 ((d / sqrt(2) + 1) C^2 + 2 c sqrt(d) C) / n (by unit
    L2 K C sqrt(C^2 + c^2) / n), derived there too.
    """
    products = d * (d + 1) // 2
    released = (f"means of the {products} products of normal scores s_i s_j, i <= j, through the "
                f"released histograms" + (f", and of the {d} scores (times {mean_weight:.4g})" if mean_weight > 0 else "")
                + f", each row's scores clipped to squared norm {clip_norm_sq:.4g}")
    return _release(score_products_sum / n, "correlation", released,
                    *score_products_sensitivity(n, d, clip_norm_sq, neighbours, mean_weight), budget, ledger, noise)


def selection_scale(budget: StageBudget, picks: int, sensitivity: float) -> tuple[float, float]:
    """The Gumbel scale of each of ``picks`` exponential mechanisms of a selection stage, and the
    epsilon of each: k mechanisms of epsilon_1 = 2 Delta / scale (Delta the scores' l-infinity
    sensitivity) spend k epsilon_1^2 / 8 in zCDP (bounded range, Cesar & Rogers 2021), the stage's
    rho = mu^2 / 2 under zero-concentrated composition, so epsilon_1 = 2 mu / sqrt(k); under basic
    composition (pure epsilon, or Laplace noise) k epsilon_1 = the stage's epsilon."""
    if budget.mu is not None:
        per_pick = 2.0 * budget.mu / math.sqrt(picks)
    else:
        per_pick = budget.epsilon / picks
    return 2.0 * sensitivity / per_pick, per_pick


def release_pair_selection(quadrant_sums: np.ndarray, d: int, picks: int, budget: StageBudget, n: float,
                           ledger: PrivacyLedger, noise: NoiseSampler, neighbours: Neighbours = ROWS,
                           centre: np.ndarray | None = None, forest: bool = False) -> np.ndarray:
    """The pairs worth measuring: ``picks`` pairs i < j chosen one after another by the exponential
    mechanism on |q_ij - c_ij|, q_ij = (1/n) sum_rows sgn(s_i) sgn(s_j), the rows' signs through
    the released histograms (``quadrant_sums``: the sums over the rows for i <= j in
    ``np.triu_indices(d)`` order, :func:`synthdp.stats.scores.score_products` of a sign map), and
    c (``centre``, shape (d, d), public: the released histograms' product of mean signs, what
    columns without dependence would give; 0 by default). Returns an int array (picks, 2) of the
    pairs, in the order chosen.

    Each pick is report noisy max with Gumbel noise of scale 2 Delta / epsilon_1 over the pairs
    not yet chosen (:meth:`synthdp.privacy.noise.NoiseSampler.noisy_max`), Delta the scores'
    l-infinity sensitivity, 2/n (by unit K/n; derived in
    :func:`synthdp.privacy.sensitivity.quadrant_scores_sensitivity`), epsilon_1 from
    :func:`selection_scale`. Only the chosen indices are released. The ledger records the stage
    with its rho under zero-concentrated composition (the Gaussian stages then compose as zCDP
    too: :class:`synthdp.privacy.ledger.PrivacyLedger`), else its epsilon.

    ``forest`` (a design study's alternative, ``StudyOptions(forest_selection=True)``): each pick
    is among the pairs that join two columns not yet joined by the pairs chosen before (as a
    maximum spanning tree grows), and among all the pairs left only once every pair left is
    within one such group. The set each pick chooses from is a function of the earlier picks
    alone, which are released, so each pick is the same exponential mechanism over a public set.
    """
    upper = np.triu_indices(d)
    off = upper[0] < upper[1]
    first, second = upper[0][off], upper[1][off]
    scores = np.asarray(quadrant_sums, dtype=float)[off] / n
    if centre is not None:
        scores = scores - np.asarray(centre, dtype=float)[first, second]
    scores = np.abs(scores)
    sensitivity = quadrant_scores_sensitivity(n, neighbours)
    scale, per_pick = selection_scale(budget, picks, sensitivity)
    released = (f"{picks} of the {len(scores)} pairs of columns, chosen one after another by the exponential "
                "mechanism on how far how often a row's two values fall on the same side of their released "
                "medians is from what columns without dependence give")
    mechanism = f"exponential mechanism (report noisy max, Gumbel noise), {picks} picks of epsilon {per_pick:.4g}"
    ledger.record(PrivacyEvent("pair selection", mechanism, sensitivity, "l-infinity per score", scale,
                               budget.epsilon, budget.delta if budget.mu is not None else 0.0, released,
                               rho=budget.rho if budget.mu is not None else None))
    available = np.arange(len(scores))
    picked: list[int] = []
    group = np.arange(d)  # each column's group of columns joined by the picks (forest)
    for _ in range(picks):
        among = available
        if forest:
            joining = available[group[first[available]] != group[second[available]]]
            among = joining if len(joining) else available
        pick = int(among[noise.noisy_max(scores[among], scale)])
        picked.append(pick)
        available = available[available != pick]
        if forest:
            group[group == group[second[pick]]] = group[first[pick]]
    chosen = np.asarray(picked, dtype=np.int64)
    return np.stack([first[chosen], second[chosen]], axis=1)


def release_selected_pairs(quadrant_sums: np.ndarray, d: int, pairs: np.ndarray, budget: StageBudget, n: float,
                           ledger: PrivacyLedger, noise: NoiseSampler, neighbours: Neighbours = ROWS
                           ) -> tuple[np.ndarray, float]:
    """Noisy means q_ij of sgn(s_i) sgn(s_j) of the selected ``pairs`` (from the same sums as
    :func:`release_pair_selection`, after it: the pairs are public when this runs), and their
    noise sd. k means of functions with values in [-1, 1]: L1 2k/n, L2 2 sqrt(k)/n (by unit
    K k/n, K sqrt(k)/n; :func:`synthdp.privacy.sensitivity.bounded_means_sensitivity`), through
    :func:`release_bounded_means`."""
    matrix = pair_matrix(np.asarray(quadrant_sums, dtype=float) / n, d)
    means = matrix[pairs[:, 0], pairs[:, 1]]
    released = (f"means of sgn(s_i) sgn(s_j) of the {len(pairs)} selected pairs: how often a row's two values fall on "
                "the same side of their released medians, less how often on opposite sides")
    noisy = release_bounded_means(means, "correlation", released, budget, n, ledger, noise, neighbours=neighbours)
    return noisy, budget.means_noise_sd(len(pairs), n, neighbours)


def pairs_test_statistic(score_products_sum: np.ndarray, n: float, d: int) -> float:
    """T = lambda_max(S) - kappa tr(S) / d of S, the d x d matrix of the means of the products of the
    rows' clipped normal scores (``score_products_sum`` in ``np.triu_indices(d)`` order, summed
    over the rows), kappa = :func:`bulk_edge`: how far S's largest eigenvalue stands above where
    columns without any dependence would put it, the strength of the strongest block of related
    columns (about 0 for independent columns, up to about tr(S) for d copies of one column)."""
    matrix = pair_matrix(score_products_sum / n, d)
    return float(np.linalg.eigvalsh(matrix)[-1] - bulk_edge(n, d) * np.trace(matrix) / d)


def bulk_edge(n: float, d: int) -> float:
    """kappa = (1 + sqrt(d / n))^2, at most d: the largest eigenvalue of the mean of n products s s^T
    of independent columns of variance v is about kappa v (the Marchenko-Pastur law's upper edge),
    not v. Public n and d."""
    return min(float(d), (1.0 + math.sqrt(d / n)) ** 2)


def release_pairs_test(score_products_sum: np.ndarray, budget: StageBudget, n: float, d: int, clip_norm_sq: float,
                       ledger: PrivacyLedger, noise: NoiseSampler, neighbours: Neighbours = ROWS) -> tuple[float, float]:
    """The noisy statistic of the pairs test (:func:`pairs_test_statistic`) and its noise sd.

    One number from the same sums as :func:`release_score_products`. Sensitivity: L1 = L2 =
    C^2 / n with C^2 = ``clip_norm_sq`` (by unit K C^2 / n), derived in
    :func:`synthdp.privacy.sensitivity.top_eigenvalue_sensitivity`.
    """
    sensitivity = top_eigenvalue_sensitivity(n, clip_norm_sq, neighbours)
    statistic = np.array([pairs_test_statistic(score_products_sum, n, d)])
    noisy = _release(statistic, "pairs_test", "the largest eigenvalue of the matrix of the means of the products of "
                     "normal scores above the bulk edge (one number: whether the pairs are released)",
                     *sensitivity, budget, ledger, noise)
    return float(noisy[0]), budget.noise_sd(*sensitivity)


UNITS_COUNT_WEIGHT = 3.0  # the row count's weight in the units release: 3/4 of its l1 sensitivity


def release_units(rows: int, contributions: np.ndarray, budget: StageBudget, neighbours: Neighbours,
                  ledger: PrivacyLedger, noise: NoiseSampler) -> tuple[float, np.ndarray]:
    """By unit: the noisy row count n after contribution bounding, and the noisy number of
    units per contribution bin (``contributions``, the bins of
    :func:`synthdp.domain.units.contribution_bins`), released together as the vector
    (w n / K, h_1, ..., h_B), w = ``UNITS_COUNT_WEIGHT``.

    Sensitivity (:func:`synthdp.privacy.sensitivity.units_sensitivity`): one unit added or
    removed moves w n / K by at most w and one bin by 1: L1 w + 1, L2 sqrt(w^2 + 1). The noisy
    count then divides every sum of the later stages (post-processing of this release).
    """
    weight = UNITS_COUNT_WEIGHT
    values = np.concatenate([[weight * rows / neighbours.k], np.asarray(contributions, dtype=float)])
    noisy = _release(values, "units", f"number of rows after bounding each unit to {neighbours.k} rows (times "
                     f"{weight:g}/{neighbours.k}), and units per contribution bin ({len(contributions)} bins)",
                     *units_sensitivity(weight), budget, ledger, noise)
    return float(noisy[0] * neighbours.k / weight), noisy[1:]


def _release(values: np.ndarray, stage: str, released: str, l1_sensitivity: float, l2_sensitivity: float,
             budget: StageBudget, ledger: PrivacyLedger, noise: NoiseSampler) -> np.ndarray:
    """Gaussian noise sigma = l2 / mu for a Gaussian-DP budget, else Laplace l1 / epsilon (epsilon-DP)."""
    scale = budget.noise_scale(l1_sensitivity, l2_sensitivity)
    if budget.mu is not None:
        ledger.record(PrivacyEvent(stage, "Gaussian", l2_sensitivity, "l2", scale, budget.epsilon, budget.delta,
                                   released, mu=budget.mu))
        return noise.gaussian(values, scale)
    ledger.record(PrivacyEvent(stage, "Laplace", l1_sensitivity, "l1", scale, budget.epsilon, 0.0, released))
    return noise.laplace(values, scale)


def release_pca(
    column_sums: np.ndarray,
    second_moment_sum: np.ndarray,
    indices: np.ndarray,
    noisy_moments: np.ndarray,
    budget: StageBudget,
    n: int,
    components: int,
    iterations: int,
    calibration: str,
    noise_kind: str,
    ledger: PrivacyLedger,
    noise: NoiseSampler,
    rng: np.random.Generator,
    neighbours: Neighbours = ROWS,
) -> PrivatePCA:
    """Private centre and ``components`` principal axes for the ellipsoid candidates.

    ``column_sums`` (d,) and ``second_moment_sum`` (d, d) are the sums over the rows of x and
    x x^T of the unit points. The degree-1 moments are exactly the column means
    (T_1(x) = x), so when the released basis holds all of them the centre costs nothing.
    Otherwise the d column means (each of values in [-1, 1]) are released here with a
    1/(L+1) share of the PCA budget, L = ``iterations``.
    """
    d = len(second_moment_sum)
    degree_one = {int(np.flatnonzero(r)[0]): i for i, r in enumerate(indices) if r.sum() == 1}
    if len(degree_one) == d:
        center = noisy_moments[[degree_one[j] for j in range(d)]]
    else:
        share = 1 / (iterations + 1)
        center = release_bounded_means(column_sums / n, "pca_centre", f"mean of {d} columns (ellipsoid centre)",
                                       budget.part(share), n, ledger, noise, neighbours=neighbours)
        budget = budget.part(1 - share)
    pca, event = private_subspace_iteration(
        second_moment_sum / n, np.clip(center, -1, 1), n, components, iterations, budget,
        noise_kind, noise, rng, calibration, neighbours,
    )
    ledger.record(event)
    return pca
