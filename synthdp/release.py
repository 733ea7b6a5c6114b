"""The release: every differentially private statistic of a run, computed in one place.

This module and :mod:`synthdp.private_table` are the privacy boundary. They turn the private
table into a :class:`Release` of noisy statistics, recording every release in the ledger;
everything downstream (candidates, LP, sampling, decoding) is post-processing of a Release.

Neighbouring tables have the same public n and differ in one row (replace-one); all rows
lie in [-1, 1]^d after clipping to the public domain.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from .basis import ChebyshevBasis, bounded_means_sensitivity, lowest_degree_indices, moments_sensitivity, tensor_indices
from .bounds import detection_threshold, estimate_bounds, laplace_count_scale
from .config import SynthConfig
from .copula import Marginals, histogram_sensitivity, products_sensitivity
from .domain import ColumnDomain, Domain
from .ledger import PrivacyEvent, PrivacyLedger
from .noise import NoiseSampler, expected_l1_norm, laplace_scale, noise_standard_deviation
from .params import Plan, StageBudget
from .pca import PrivatePCA, private_subspace_iteration
from .private_table import PrivateTable
from .schema import Schema, groups_count
from .progress import StageTracker
from .row_sums import RowSums, SumRequest

DEFAULT_PCA_COMPONENTS = 5


@dataclass(frozen=True)
class Release:
    """The noisy statistics of one run: all that post-processing may read.

    Attributes
    ----------
    domain : Domain
        Public column bounds.
    plan : Plan
        Public sizes and budget split.
    basis_indices : int array, shape (R, d)
        Multi-indices of the released moments (public, fixed by R and d).
    noisy_moments : array, shape (R,)
        b_hat, the noisy moments.
    moment_noise_l1 : float
        Expected l1 norm of the noise added to the moments (public: from the calibration).
    moment_noise_sd : array, shape (R,)
        Standard deviation of each moment's noise (public: from the calibration). The
        moments taken from the products release (:func:`pair_product_rows`) have the
        products' noise, the others the moments'.
    pca : PrivatePCA or None
        Released principal axes when candidates are "pca".
    marginals : Marginals or None
        Released one-way histograms when candidates are "copula".
    noisy_products : array, shape (d (d - 1) / 2,), or None
        Released E[x_i x_j], i < j, when candidates are "copula" with a correlation share.
    products_noise_sd : float
        Standard deviation of the noise on each of them (public: from the calibration).
    noisy_rows_clipped : float or None
        Noisy count of rows with a value outside the bounds (None: not released).
    schema : Schema or None
        Mixed tables: the public schema; the basis then runs over its encoded coordinates
        and ``domain`` holds its numeric columns only.
    noisy_rows_other : float or None
        Mixed tables: noisy count of rows with a categorical value outside its levels.
    """

    domain: Domain
    plan: Plan
    basis_indices: np.ndarray
    noisy_moments: np.ndarray
    moment_noise_l1: float
    moment_noise_sd: np.ndarray
    pca: PrivatePCA | None
    marginals: Marginals | None
    noisy_products: np.ndarray | None
    products_noise_sd: float
    noisy_rows_clipped: float | None
    schema: Schema | None = None
    noisy_rows_other: float | None = None


def release_statistics(
    table: PrivateTable,
    scan: RowSums,
    known_columns: dict[str, ColumnDomain],
    plan: Plan,
    config: SynthConfig,
    ledger: PrivacyLedger,
    noise: NoiseSampler,
    rng: np.random.Generator,
    stages: StageTracker,
) -> Release:
    """Run every private stage once and return the release.

    ``scan`` holds the statistics of the first pass over the table (the row count, and the
    histograms of the columns without bounds); ``known_columns`` holds the bounds the user
    gave (or read from the data); the bounds of the other columns are estimated here with DP.
    The second pass sums what the moments and the private PCA need, with the domain.
    """
    domain = release_domain(table.column_names, scan, known_columns, plan.budget.bounds, ledger, noise)
    with stages.stage("moments"):
        if plan.mode == "exact":
            indices = tensor_indices(plan.d, plan.theory.t)
        else:
            indices = lowest_degree_indices(plan.d, plan.n_basis)
        pca_wanted, copula_wanted = plan.candidates == "pca", plan.candidates == "copula"
        products_wanted = copula_wanted and plan.budget.share("correlation") > 0
        # pair moments T_1(x_i) T_1(x_j) are means of x_i x_j, which the products release measures
        from_products = pair_product_rows(indices) if products_wanted else np.zeros(len(indices), dtype=bool)
        measured = ~from_products
        sums = table.row_sums(SumRequest(domain, indices[measured], plan.theory.N if plan.mode == "exact" else None,
                                         column_sums=pca_wanted, second_moment=pca_wanted or products_wanted,
                                         marginal_bins=plan.marginal_bins if copula_wanted else None))
        noisy_rows_clipped = None
        if plan.budget.clip_count > 0:
            noisy_rows_clipped = release_row_count(int(sums["rows_clipped"]), plan.budget.clip_count, "clip_count",
                                                   CLIPPED_ROWS, ledger, noise)
        noisy_moments = np.empty(len(indices))
        noisy_moments[measured] = release_moments(sums["moments"] / plan.n, indices[measured], plan,
                                                  ledger, noise, shared=int(from_products.sum()))
        moment_noise_scale = np.full(len(indices), ledger.event("moments").noise_scale)
    pca = marginals = noisy_products = None
    products_noise_sd = 0.0
    if pca_wanted:
        with stages.stage("private PCA"):
            pca = release_pca(sums, indices, noisy_moments, plan, config, ledger, noise, rng)
    if copula_wanted:
        with stages.stage("marginals"):
            marginals = release_marginals(sums["cell_counts"], plan, ledger, noise)
            if products_wanted:
                noisy_products = release_products(sums["second_moment"], plan, ledger, noise)
                products_scale = ledger.event("correlation").noise_scale
                products_noise_sd = noise_standard_deviation(plan.noise, products_scale)
                noisy_moments[from_products] = noisy_products[pair_positions(indices[from_products], plan.d)]
                moment_noise_scale[from_products] = products_scale
    moment_noise_l1 = expected_l1_norm(plan.noise, float(moment_noise_scale.sum()), 1)  # the sum of each E|noise|
    moment_noise_sd = noise_standard_deviation(plan.noise, 1.0) * moment_noise_scale
    return Release(domain, plan, indices, noisy_moments, moment_noise_l1, moment_noise_sd, pca, marginals,
                   noisy_products, products_noise_sd, noisy_rows_clipped)


def pair_product_rows(indices: np.ndarray) -> np.ndarray:
    """Which moments of the basis are pair products T_1(x_i) T_1(x_j) = x_i x_j, shape (R,).

    When the copula's products are released, these moments are taken from that release (the
    mean of x_i x_j is one of its values) instead of being measured a second time: the
    moments' budget then goes to the moments no other release measures, and the LP weights
    each row by the precision of its noise (:func:`synthdp.lp.precision_weighted`). Measured
    (experiments/results/design_products.md, 10 seeded rounds) against measuring them again:
    PKS at (1, 1e-10), where 42 of its 82 moments are pairs and the univariate moments' noise
    sd falls from 0.027 to 0.016, 22-29 % lower error at sigma = 4-10 (.0058 -> .0044 at
    sigma = 4) and 18 % higher at sigma = 2 (.0331 -> .0390); PKS at (4, 1e-10) 11-19 % lower
    at sigma = 4-8, 14 % higher at sigma = 2; CTG at (4, 1e-10) 3-14 % lower at every sigma;
    at (16, 1e-10) within 6 % (CTG sigma = 6-8 lower, sigma = 2 4 % higher).
    """
    return (indices.sum(axis=1) == 2) & (indices.max(axis=1) == 1)


def pair_positions(pair_indices: np.ndarray, d: int) -> np.ndarray:
    """Positions of the pairs (i < j) of ``pair_indices`` (rows with two ones) in ``np.triu_indices(d, 1)`` order."""
    i, j = (np.nonzero(pair_indices)[1].reshape(-1, 2)).T
    return i * d - i * (i + 1) // 2 + (j - i - 1)


def release_domain(column_names: list[str], scan: RowSums, known_columns: dict[str, ColumnDomain], epsilon: float,
                   ledger: PrivacyLedger, noise: NoiseSampler) -> Domain:
    """The domain, with DP estimates of the bounds the user did not give.

    Each estimated column gets epsilon / (number of estimated columns) for one noisy
    histogram (:func:`synthdp.bounds.estimate_bounds`; L1 sensitivity 2 per column), whose
    counts are ``scan["histograms"]``, one row per column without bounds, in table order.
    """
    missing = [name for name in column_names if name not in known_columns]
    columns = dict(known_columns)
    if missing:
        per_column = epsilon / len(missing)
        ledger.record(PrivacyEvent(
            "bounds", "Laplace histogram over fixed power-of-two bins, per column", 2.0, "l1 per column",
            laplace_count_scale(per_column), epsilon, 0.0, f"lower and upper bounds of {len(missing)} column(s)",
        ))
        threshold = detection_threshold(per_column)
        if threshold > scan.n_rows / 20:
            warnings.warn(
                f"private bounds for {len(missing)} column(s) from epsilon = {epsilon:.3g} are unreliable at "
                f"n = {scan.n_rows}: a bin needs about {threshold:.0f} rows to be detected; pass public "
                "bounds (--bounds) or raise --bounds-share", UserWarning, stacklevel=4,
            )
        for name, counts in zip(missing, scan["histograms"]):
            lower, upper = estimate_bounds(counts, per_column, noise)
            columns[name] = ColumnDomain(name, lower, upper, source="DP estimate")
    return Domain(tuple(columns[name] for name in column_names), source=_sources_summary(columns.values()))


def _sources_summary(columns) -> str:
    sources = sorted({column.source for column in columns})
    return " + ".join(sources)


def release_mixed_statistics(table: PrivateTable, schema: Schema, plan: Plan, config: SynthConfig,
                             ledger: PrivacyLedger, noise: NoiseSampler, stages: StageTracker) -> Release:
    """The release of a mixed table: grouped moments of its encoded rows, and the noisy row counts.

    The moments are those of ``schema.basis_indices(config.marginal_degree)``, released with
    the grouped sensitivity of :meth:`synthdp.schema.Schema.basis_groups` (2G/n in l1). The
    clip-count share of epsilon is split evenly between the count of rows with a clipped
    numeric value and the count of rows with an "other" level, for the kinds of columns the
    table has.
    """
    with stages.stage("moments"):
        points, rows_clipped, rows_other = table.encoded_points(schema)
        counts = {"clip_count": (rows_clipped, CLIPPED_ROWS) if schema.d_numeric else None,
                  "other_count": (rows_other, OTHER_ROWS) if any(not c.binary for c in schema.categorical) else None}
        wanted = {stage: count for stage, count in counts.items() if count is not None and plan.budget.clip_count > 0}
        noisy = {stage: release_row_count(count, plan.budget.clip_count / len(wanted), stage, released, ledger, noise)
                 for stage, (count, released) in wanted.items()}
        indices = schema.basis_indices(config.marginal_degree)
        groups = groups_count(schema, indices)
        noisy_moments = release_bounded_means(
            ChebyshevBasis(indices).moments(points), "moments",
            f"{len(indices)} moments of the encoded rows in {groups} sensitivity groups",
            plan.budget.stage("moments"), plan, ledger, noise, groups=groups)
        scale = ledger.event("moments").noise_scale
        moment_noise_l1 = expected_l1_norm(plan.noise, scale, len(noisy_moments))
        moment_noise_sd = np.full(len(noisy_moments), noise_standard_deviation(plan.noise, scale))
    return Release(schema.numeric, plan, indices, noisy_moments, moment_noise_l1, moment_noise_sd, pca=None,
                   marginals=None, noisy_products=None, products_noise_sd=0.0, noisy_rows_clipped=noisy.get("clip_count"),
                   schema=schema, noisy_rows_other=noisy.get("other_count"))


def release_levels(table: PrivateTable, names: list[str], epsilon: float, delta: float, ledger: PrivacyLedger,
                   noise: NoiseSampler) -> dict[str, tuple[str, ...]]:
    """DP discovery of the levels of categorical columns: a stability-based histogram per column.

    Each column gets (eps_c, delta_c) = (epsilon, delta) / len(names). Every value that occurs
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
    """
    per_column, delta_per_column = epsilon / len(names), delta / len(names)
    scale = laplace_scale(2.0, per_column)
    threshold = 1 + scale * math.log(1 / delta_per_column)
    ledger.record(PrivacyEvent("levels", "Laplace stability histogram with threshold, per column", 2.0,
                               "l1 per column (values in both tables)", scale, epsilon, delta,
                               f"levels of {len(names)} categorical column(s) (counts above {threshold:.3g})"))
    levels = {}
    for name in names:
        counts = table.level_counts(name)
        values = list(counts)
        noisy = noise.laplace(np.array([counts[value] for value in values], dtype=float), scale)
        levels[name] = tuple(sorted(value for value, count in zip(values, noisy) if count > threshold))
    return levels


CLIPPED_ROWS = "number of rows with a value outside the bounds"
OTHER_ROWS = "number of rows with a categorical value outside its levels"


def release_row_count(count: int, epsilon: float, stage: str, released: str, ledger: PrivacyLedger,
                      noise: NoiseSampler) -> float:
    """Noisy count of the rows with some property (a clipped value, an "other" level).

    Sensitivity: replacing one row changes the count by at most 1 (L1 = 1), so
    Laplace(1/epsilon) makes it epsilon-DP.
    """
    scale = laplace_scale(1.0, epsilon)
    ledger.record(PrivacyEvent(stage, "Laplace", 1.0, "l1", scale, epsilon, 0.0, released))
    return float(noise.laplace(np.array([count], dtype=float), scale)[0])


def release_moments(moments: np.ndarray, indices: np.ndarray, plan: Plan, ledger: PrivacyLedger,
                    noise: NoiseSampler, shared: int = 0) -> np.ndarray:
    """Noisy Chebyshev moments b_hat = b + noise of the basis ``indices``, shape (R, d).

    Sensitivity: :func:`synthdp.basis.moments_sensitivity`, at most that of any R functions
    with values in [-1, 1] (every phi_r is a product of cosines), and below it when a column
    has several univariate functions. The constant phi_0 = 1 has sensitivity 0 and is not
    released. The paper's scale t^d/(n eps) is about half the generic 2R/(n eps).
    ``shared``: how many further moments of the basis the products release supplies (for
    the report).
    """
    released = f"{len(moments)} Chebyshev moments"
    if shared:
        released += f" (the basis's {shared} pair products x_i x_j come from the correlation release)"
    return release_bounded_means(moments, "moments", released, plan.budget.stage("moments"), plan, ledger, noise,
                                 sensitivity=moments_sensitivity(indices, plan.n))


def release_bounded_means(means: np.ndarray, stage: str, released: str, budget: StageBudget,
                          plan: Plan, ledger: PrivacyLedger, noise: NoiseSampler, groups: int | None = None,
                          sensitivity: tuple[float, float] | None = None) -> np.ndarray:
    """Noisy means over the rows of R functions with values in [-1, 1].

    Sensitivity (:func:`synthdp.basis.bounded_means_sensitivity`): replacing one row moves
    each mean (1/n) sum_i f(x_i) by at most 2/n, so the vector of R means has L1
    sensitivity 2R/n and L2 sensitivity 2 sqrt(R)/n; a caller that derived a tighter
    (L1, L2) for its functions passes it as ``sensitivity``. With
    ``groups`` = G, the functions fall into G groups whose vector of means moves by at most
    2/n in l1 and l2 (at most one function of a group is non-zero on any row, as for the
    indicator products of :meth:`synthdp.schema.Schema.basis_groups`); R becomes G below.

    Calibrations: pure epsilon-DP: Laplace(2R/(n eps)) per mean. (epsilon, delta) with
    Gaussian noise: sigma = L2 sensitivity / mu. (epsilon, delta) with Laplace: each mean
    (each group) is an eps0-DP Laplace release of sensitivity 2/n, eps0 from advanced
    composition over the R means (G groups; see :func:`synthdp.noise.composition_epsilon`).
    That per-value release keeps the bound 2/n of each mean and ignores ``sensitivity``: a
    joint (L1, L2) bound does not bound each value below 2/n.
    """
    R, n = len(means) if groups is None else groups, plan.n
    if budget.laplace_per_value:
        scale = budget.means_noise_scale(R, n)
        mechanism = "Laplace per value, advanced composition over the values"
        ledger.record(PrivacyEvent(stage, mechanism, 2 / n, "l1 per value", scale, budget.epsilon, budget.delta, released))
        return noise.laplace(means, scale)
    return _release(means, stage, released, *(sensitivity or bounded_means_sensitivity(R, n)), budget, ledger, noise)


def release_marginals(counts: np.ndarray, plan: Plan, ledger: PrivacyLedger, noise: NoiseSampler) -> Marginals:
    """Noisy one-way histograms of every column: ``counts`` of shape (d, B + 2) from
    :func:`synthdp.copula.cell_counts` summed over the rows.

    Sensitivity: L1 2d, L2 sqrt(2d), derived in :func:`synthdp.copula.histogram_sensitivity`.
    """
    d, n_bins = counts.shape[0], counts.shape[1] - 2
    budget, sensitivity = plan.budget.stage("marginals"), histogram_sensitivity(d)
    noisy = _release(counts, "marginals", f"one-way histograms of {d} columns, {n_bins} bins + 2 atoms each",
                     *sensitivity, budget, ledger, noise)
    return Marginals(noisy, plan.n, budget.noise_sd(*sensitivity))


def release_products(second_moment_sum: np.ndarray, plan: Plan, ledger: PrivacyLedger, noise: NoiseSampler) -> np.ndarray:
    """Noisy E[x_i x_j] for every pair i < j, in ``np.triu_indices(d, 1)`` order, from the
    sum over the rows of x x^T, shape (d, d).

    Sensitivity: L1 2 floor(d^2/4)/n, L2 2 sqrt(floor(d^2/4))/n, derived (and attained) in
    :func:`synthdp.copula.products_sensitivity`.
    """
    n, d = plan.n, plan.d
    products = (second_moment_sum / n)[np.triu_indices(d, 1)]
    return _release(products, "correlation", f"means of the {len(products)} products x_i x_j, i < j",
                    *products_sensitivity(n, d), plan.budget.stage("correlation"), ledger, noise)


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
    sums: RowSums,
    indices: np.ndarray,
    noisy_moments: np.ndarray,
    plan: Plan,
    config: SynthConfig,
    ledger: PrivacyLedger,
    noise: NoiseSampler,
    rng: np.random.Generator,
) -> PrivatePCA:
    """Private centre and principal axes for the ellipsoid candidates.

    ``sums`` holds the column sums and the second-moment sum of the unit points. The degree-1
    moments are exactly the column means (T_1(x) = x), so when the released basis holds all
    of them the centre costs nothing. Otherwise the d column means (each of values in
    [-1, 1]) are released here with a 1/(L+1) share of the PCA budget.
    """
    n, d = plan.n, plan.d
    budget = plan.budget.stage("pca")
    iterations = config.pca_iterations
    degree_one = {int(np.flatnonzero(r)[0]): i for i, r in enumerate(indices) if r.sum() == 1}
    if len(degree_one) == d:
        center = noisy_moments[[degree_one[j] for j in range(d)]]
    else:
        share = 1 / (iterations + 1)
        center = release_bounded_means(sums["column_sums"] / n, "pca_centre", f"mean of {d} columns (ellipsoid centre)",
                                       budget.part(share), plan, ledger, noise)
        budget = budget.part(1 - share)
    k = min(d, config.pca_components or DEFAULT_PCA_COMPONENTS)
    second_moment = sums["second_moment"] / n
    pca, event = private_subspace_iteration(
        second_moment, np.clip(center, -1, 1), n, k, iterations, budget,
        plan.noise, noise, rng, config.pca_calibration,
    )
    ledger.record(event)
    return pca
