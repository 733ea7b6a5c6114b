"""The fit pipeline: open the table, first pass, plan, release, then post-processing."""

from __future__ import annotations

import numpy as np

from synthdp.config import SynthConfig
from synthdp.domain.box import ColumnDomain
from synthdp.domain.schema import Schema
from synthdp.pipeline.plan import Plan
from synthdp.pipeline.progress import StageTracker
from synthdp.privacy.ledger import PrivacyLedger
from synthdp.privacy.noise import (
    NoiseSampler,
    expected_l1_norm,
    noise_standard_deviation,
)
from synthdp.privacy.release import (
    CLIPPED_ROWS,
    OTHER_ROWS,
    pair_positions,
    pair_product_rows,
    release_bounded_means,
    release_domain,
    release_marginals,
    release_moments,
    release_pca,
    release_products,
    release_row_count,
)
from synthdp.reader.table import PrivateTable
from synthdp.released import Release
from synthdp.stats.chebyshev import (
    ChebyshevBasis,
    lowest_degree_indices,
    tensor_indices,
)
from synthdp.stats.mixed_basis import groups_count
from synthdp.stats.row_sums import RowSums, SumRequest
from synthdp.stats.mixed_basis import basis_indices


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


def release_mixed_statistics(table: PrivateTable, schema: Schema, plan: Plan, config: SynthConfig,
                             ledger: PrivacyLedger, noise: NoiseSampler, stages: StageTracker) -> Release:
    """The release of a mixed table: grouped moments of its encoded rows, and the noisy row counts.

    The moments are those of :func:`synthdp.stats.mixed_basis.basis_indices` at ``config.marginal_degree``, released with
    the grouped sensitivity of :meth:`synthdp.stats.mixed_basis.basis_groups` (2G/n in l1). The
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
        indices = basis_indices(schema, config.marginal_degree)
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
