"""Privacy: sensitivities hold on adversarial neighbours, noise has the calibrated scale,
and the ledger accounts for every stage."""

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy import special

from synthdp import SmoothSynthesizer
from synthdp.config import SynthConfig
from synthdp.domain.box import Domain
from synthdp.pipeline.plan import make_plan
from synthdp.privacy.ledger import PrivacyLedger
from synthdp.privacy.noise import OpenDPNoise, SeededNoise
from synthdp.privacy.release import release_moments
from synthdp.privacy.sensitivity import moments_sensitivity, per_value_sensitivity
from synthdp.reader.table import PrivateTable
from synthdp.stats.chebyshev import ChebyshevBasis, lowest_degree_indices, pair_product_rows, tensor_indices
from synthdp.stats.histograms import CellLayout
from synthdp.stats.row_sums import SumRequest

D = 3
BOUNDS = {f"c{j}": [-5.0, 5.0] for j in range(D)}
CORNERS = [np.array(c) for c in itertools.product([-5.0, 5.0], repeat=D)]


def _released_moments(rows: np.ndarray, basis: ChebyshevBasis, n_cells: int | None = None) -> np.ndarray:
    """Moments exactly as the release computes them: through PrivateTable and the domain."""
    frame = pd.DataFrame(rows, columns=list(BOUNDS))
    table = PrivateTable(frame)
    request = SumRequest(Domain.from_bounds(BOUNDS, table.column_names), basis.indices, n_cells)
    return table.row_sums(request)["moments"] / len(rows)


def _neighbour_pairs(rng: np.random.Generator):
    """Replace-one neighbours: a random table, with one row swapped among corners,
    far-outside values (clipped to corners) and random interior rows."""
    n = 25
    base = rng.uniform(-5, 5, size=(n, D))
    extremes = CORNERS + [np.full(D, 1e6), np.full(D, -1e6)]
    replacements = list(itertools.product(extremes, repeat=2)) + [
        (rng.uniform(-5, 5, D), rng.uniform(-5, 5, D)) for _ in range(20)
    ]
    for old, new in replacements:
        first, second = base.copy(), base.copy()
        first[0], second[0] = old, new
        yield first, second


@pytest.mark.parametrize("n_cells", [None, 5])
@pytest.mark.parametrize("basis", [ChebyshevBasis(lowest_degree_indices(D, 19)), ChebyshevBasis(tensor_indices(D, 3))],
                         ids=["lowest-degree", "tensor"])
def test_moment_sensitivity_bound_holds_and_is_attained(basis, n_cells):
    """The moments' (L1, L2) bound (moments_sensitivity) and each single moment's bound
    (per_value_sensitivity, 2/n: the per-value Laplace release's) hold on corners and
    far-outside rows; opposite corners attain the per-value bound."""
    rng = np.random.default_rng(0)
    n, R = 25, basis.size
    worst_inf = worst_l1 = worst_l2 = 0.0
    for first, second in _neighbour_pairs(rng):
        change = _released_moments(first, basis, n_cells) - _released_moments(second, basis, n_cells)
        worst_inf = max(worst_inf, np.abs(change).max())
        worst_l1 = max(worst_l1, np.abs(change).sum())
        worst_l2 = max(worst_l2, np.linalg.norm(change))
    slack = 1 + 1e-12
    derived_l1, derived_l2 = moments_sensitivity(basis.indices, n)
    assert worst_inf <= per_value_sensitivity(n) * slack
    assert worst_l1 <= derived_l1 * slack <= 2 * R / n * slack
    assert worst_l2 <= derived_l2 * slack <= 2 * math.sqrt(R) / n * slack
    if n_cells is None:  # opposite corners flip every odd-degree function: the per-moment bound is tight
        assert worst_inf == pytest.approx(per_value_sensitivity(n))


def _cell_counts(rows: np.ndarray, layout: CellLayout) -> np.ndarray:
    """The cell counts exactly as the release computes them."""
    table = PrivateTable(pd.DataFrame(rows, columns=list(BOUNDS)))
    return table.row_sums(SumRequest(Domain.from_bounds(BOUNDS, table.column_names), cell_layout=layout))["cell_counts"]


@pytest.mark.parametrize("values", [False, True], ids=["bins", "value cells"])
def test_marginal_sensitivity_holds_and_is_attained(values):
    """release_marginals: L1 2d, L2 sqrt(2d) (each row is in one cell of each column), with every
    column in bins and atoms, or half of them with one cell per value (of a 5-value grid)."""
    rng = np.random.default_rng(2)
    grid_values = tuple(np.linspace(-1.0, 1.0, 5) if values and j % 2 else None for j in range(D))
    layout = CellLayout(4, grid_values, (False,) * D)
    worst_l1 = worst_l2 = 0.0
    for first, second in _neighbour_pairs(rng):
        change = _cell_counts(first, layout) - _cell_counts(second, layout)
        worst_l1, worst_l2 = max(worst_l1, np.abs(change).sum()), max(worst_l2, np.linalg.norm(change))
    assert worst_l1 == pytest.approx(2 * D) and worst_l2 == pytest.approx(math.sqrt(2 * D))


def _score_sums(rows: np.ndarray, score_map) -> np.ndarray:
    """The pairs release's sums exactly as the release computes them (through PrivateTable)."""
    table = PrivateTable(pd.DataFrame(rows, columns=list(BOUNDS)))
    return table.row_sums(SumRequest(Domain.from_bounds(BOUNDS, table.column_names), score_map=score_map))["score_products"]


@pytest.mark.parametrize("bound", ["default", "lowered"])
@pytest.mark.parametrize("probabilities", ["extreme", "random"])
def test_score_products_sensitivity_holds_on_extreme_rows(probabilities, bound):
    """release_score_products: the change of the means of s_i s_j when one row is replaced stays
    within score_products_sensitivity, over corners, far-outside values and random rows, for a
    score map whose outer cells score +-4.75 (rows at the corners are clipped to norm C) and
    for a random one; the L2 bound is attained by rows with one extreme score each. At the
    default norm bound and at the lowest a release read pair by pair gets, C^2 = d
    (:func:`synthdp.pipeline.plan.pairs_clip_norm_sq`), where most rows are shrunk."""
    from synthdp.privacy.sensitivity import score_products_sensitivity
    from synthdp.stats.scores import ScoreMap, default_clip_norm_sq

    rng = np.random.default_rng(3)
    n, clip = 25, default_clip_norm_sq(D) if bound == "default" else float(D)
    if probabilities == "extreme":  # atoms of mass 2e-6: scores -4.75 and +4.75; the two bins +-0.67
        cells = np.tile([2e-6, 0.5 - 2e-6, 0.5 - 2e-6, 2e-6], (D, 1))
    else:
        cells = rng.dirichlet(np.ones(6), size=D)
    score_map = ScoreMap(cells, clip)
    l1, l2 = score_products_sensitivity(n, D, clip)
    worst_l1 = worst_l2 = 0.0
    for first, second in _neighbour_pairs(rng):
        change = (_score_sums(first, score_map) - _score_sums(second, score_map)) / n
        worst_l1, worst_l2 = max(worst_l1, np.abs(change).sum()), max(worst_l2, np.linalg.norm(change))
    slack = 1 + 1e-12
    assert worst_l1 <= l1 * slack and worst_l2 <= l2 * slack
    if probabilities == "extreme":
        # one row scores (4.75, 0-ish, ...) and the other (0-ish, 4.75, ...): a score of exactly 0 needs a
        # cell whose middle probability is 1/2, so use a map with that cell and check the attained L2
        middle = np.tile([2e-6, 1 - 4e-6, 2e-6], (D, 1))  # one bin, middle 1/2: score 0; atoms +-4.75
        attained = ScoreMap(middle, clip)
        base = np.zeros((n, D))
        first, second = base.copy(), base.copy()
        first[0, 0], second[0, 1] = 5.0, 5.0  # the +1 atom in column 0, resp. column 1; 0 elsewhere
        change = (_score_sums(first, attained) - _score_sums(second, attained)) / n
        assert np.linalg.norm(change) == pytest.approx(l2)


@pytest.mark.parametrize("probabilities", ["extreme", "random"])
def test_score_products_with_means_sensitivity_holds_on_extreme_rows(probabilities):
    """release_score_products with the scores' means (a map's ``mean_weight`` c): the change of the
    means of s_i s_j and c s_j when one row is replaced stays within score_products_sensitivity's
    bounds with c, over corners, far-outside values and random rows; and the L2 bound is nearly
    attained (within 1 %) by two rows whose clipped scores are C e_1 and C (cos a, sin a) with
    cos a = -c^2 / C^2, the worst case of its derivation."""
    from synthdp.privacy.sensitivity import score_products_sensitivity
    from synthdp.stats.scores import ScoreMap, default_clip_norm_sq

    rng = np.random.default_rng(4)
    n, clip = 25, default_clip_norm_sq(D)
    weight = math.sqrt(0.125 * clip)
    if probabilities == "extreme":
        cells = np.tile([2e-6, 0.5 - 2e-6, 0.5 - 2e-6, 2e-6], (D, 1))
    else:
        cells = rng.dirichlet(np.ones(6), size=D)
    score_map = ScoreMap(cells, clip, mean_weight=weight)
    l1, l2 = score_products_sensitivity(n, D, clip, mean_weight=weight)
    assert l2 > score_products_sensitivity(n, D, clip)[1]
    worst_l1 = worst_l2 = 0.0
    for first, second in _neighbour_pairs(rng):
        change = (_score_sums(first, score_map) - _score_sums(second, score_map)) / n
        assert len(change) == D * (D + 1) // 2 + D
        worst_l1, worst_l2 = max(worst_l1, np.abs(change).sum()), max(worst_l2, np.linalg.norm(change))
    slack = 1 + 1e-12
    assert worst_l1 <= l1 * slack and worst_l2 <= l2 * slack
    if probabilities == "extreme":
        # one row scores C e_1, the other C (cos a, sin a, 0): cells of three (the -1 atom, one bin, the +1
        # atom) whose middles sit at the wanted normal quantiles; a value -5 or +5 falls in an atom, 0 in the bin
        root, cos_a = math.sqrt(clip), -weight**2 / clip
        sin_a = math.sqrt(1 - cos_a**2)
        column_0 = [2 * special.ndtr(root * cos_a), 0.0, 2 * (1 - special.ndtr(root))]  # atoms score C cos a and C
        top = 2 * (1 - special.ndtr(root * sin_a))
        column_1 = [top, 0.0, top]  # the bin's middle 1/2 scores 0, the +1 atom C sin a
        cells = [column_0, column_1] + [[2e-6, 0.0, 2e-6]] * (D - 2)
        cells = np.array([[low, 1 - low - high, high] for low, _, high in cells])
        attained = ScoreMap(cells, clip, mean_weight=weight)
        first, second = np.zeros((n, D)), np.zeros((n, D))
        first[0, 0], second[0, :2] = 5.0, [-5.0, 5.0]
        sums = [_score_sums(table, attained) for table in (first, second)]
        np.testing.assert_allclose(sums[0][-D:][:2] - sums[1][-D:][:2],
                                   weight * root * np.array([1 - cos_a, -sin_a]), rtol=1e-6)
        change = (_score_sums(first, attained) - _score_sums(second, attained)) / n
        assert 0.99 * l2 <= np.linalg.norm(change) <= l2 * slack


@pytest.mark.parametrize("probabilities", ["extreme", "random"])
def test_pairs_test_sensitivity_holds_on_extreme_rows(probabilities):
    """release_pairs_test: the change of its statistic T = lambda_max(S) - kappa tr(S) / d when one
    row is replaced stays within top_eigenvalue_sensitivity (C^2 / n), over corners, far-outside
    values and random rows, for the extreme and a random score map; the bound is attained by a
    table whose other rows all score C e_1, one row moving from C e_2 to C e_1 (the largest
    eigenvalue grows by C^2 / n, the trace stays)."""
    from synthdp.privacy.release import pairs_test_statistic
    from synthdp.privacy.sensitivity import top_eigenvalue_sensitivity
    from synthdp.stats.scores import ScoreMap, default_clip_norm_sq

    rng = np.random.default_rng(4)
    n, clip = 25, default_clip_norm_sq(D)
    if probabilities == "extreme":
        cells = np.tile([2e-6, 0.5 - 2e-6, 0.5 - 2e-6, 2e-6], (D, 1))
    else:
        cells = rng.dirichlet(np.ones(6), size=D)
    score_map = ScoreMap(cells, clip)
    bound = top_eigenvalue_sensitivity(n, clip)
    assert bound[0] == bound[1] == pytest.approx(clip / n)
    worst = 0.0
    for first, second in _neighbour_pairs(rng):
        change = (pairs_test_statistic(_score_sums(first, score_map), n, D)
                  - pairs_test_statistic(_score_sums(second, score_map), n, D))
        worst = max(worst, abs(change))
    assert worst <= bound[0] * (1 + 1e-12)
    if probabilities == "extreme":
        middle = ScoreMap(np.tile([2e-6, 1 - 4e-6, 2e-6], (D, 1)), clip)  # scores -4.75, 0, +4.75: clipped to norm C
        first = np.zeros((n, D))
        first[:, 0] = 5.0  # every row scores C e_1
        second = first.copy()
        first[0] = [0.0, 5.0, 0.0]  # row 0 scores C e_2
        change = (pairs_test_statistic(_score_sums(second, middle), n, D)
                  - pairs_test_statistic(_score_sums(first, middle), n, D))
        assert change == pytest.approx(bound[0])


def test_clipped_count_changes_by_at_most_one():
    rng = np.random.default_rng(1)
    domain = Domain.from_bounds(BOUNDS, list(BOUNDS))
    for first, second in _neighbour_pairs(rng):
        counts = [PrivateTable(pd.DataFrame(t, columns=list(BOUNDS))).row_sums(SumRequest(domain))["rows_clipped"]
                  for t in (first, second)]
        assert abs(counts[0] - counts[1]) <= 1


def _plan(n: int, R: int, **config):
    return make_plan(SynthConfig(n_basis=R, candidates="hypercube", clip_count_share=0.0, **config), n, 4, True)


@pytest.mark.parametrize(
    "config, expected_scale",
    [
        (dict(epsilon=0.5), lambda n, indices: moments_sensitivity(indices, n)[0] / 0.5),
        (dict(epsilon=2.0, delta=1e-6), None),  # analytic Gaussian: checked through the ledger
        (dict(epsilon=2.0, delta=1e-6, noise="laplace"), None),
    ],
    ids=["laplace", "gaussian", "laplace-advanced-composition"],
)
def test_noise_has_the_calibrated_scale(config, expected_scale):
    """The empirical scale of 40 000 seeded draws matches the scale the ledger records.

    For Laplace(b), E|X| = b and sd|X| = b; for N(0, s^2), E X^2 = s^2 and sd X^2 = sqrt(2) s^2.
    The test allows 5 standard errors of the mean: a false failure has probability
    below 6e-7 per case (normal approximation, exact enough at 40 000 draws).
    """
    n, R, repeats = 500, 40, 1000
    plan = _plan(n, R, **config)
    indices = lowest_degree_indices(4, R)
    moments = plan.budget.stage("moments")
    ledger = PrivacyLedger(moments.epsilon, moments.delta)
    noise = SeededNoise(np.random.default_rng(3))
    draws = np.concatenate([release_moments(np.zeros(R), indices, plan.budget.stage("moments"), plan.n, PrivacyLedger(1e9, 0.5), noise)
                            for _ in range(repeats)])
    release_moments(np.zeros(R), indices, plan.budget.stage("moments"), plan.n, ledger, noise)
    (event,) = ledger.events
    scale = event.noise_scale
    whole = moments.noise_scale(*moments_sensitivity(indices, n))  # the whole vector, derived sensitivity
    if moments.laplace_per_value:  # the smaller of the per-value release (what copula_shares predicts) and the whole's
        assert scale == pytest.approx(min(moments.means_noise_scale(R, n), whole))
        assert (event.delta == 0) == (scale == pytest.approx(whole))  # delta spent only by the per-value release
    else:  # the derived sensitivity, below the generic one that copula_shares compares with its limit
        assert scale == pytest.approx(whole)
        assert scale < moments.means_noise_scale(R, n)
    if expected_scale is not None:
        assert scale == pytest.approx(expected_scale(n, indices))
    count = len(draws)
    if "gaussian" in event.mechanism.lower():
        statistic, spread = np.mean(draws**2) / scale**2, math.sqrt(2)
    else:
        statistic, spread = np.mean(np.abs(draws)) / scale, 1.0
    assert abs(statistic - 1) < 5 * spread / math.sqrt(count)


@pytest.mark.parametrize("kind", ["laplace", "gaussian"])
def test_opendp_sampler_has_the_requested_scale(kind):
    """OpenDP's samplers (the private path): same 5-standard-error rule. Unseeded: the mean of 20 000
    draws of |X| / b is Gamma(20 000) / 20 000 and of X^2 / s^2 chi-square(20 000) / 20 000, so a false
    failure has probability 5.9e-7 (Laplace) and 6.1e-7 (Gaussian) per run, the exact two tails."""
    count, scale = 20_000, 0.7
    sampler = OpenDPNoise()
    draws = getattr(sampler, kind)(np.zeros(count), scale)
    if kind == "gaussian":
        statistic, spread = np.mean(draws**2) / scale**2, math.sqrt(2)
    else:
        statistic, spread = np.mean(np.abs(draws)) / scale, 1.0
    assert abs(statistic - 1) < 5 * spread / math.sqrt(count)


@pytest.mark.parametrize(
    "config",
    [dict(), dict(delta=1e-8), dict(delta=1e-8, noise="laplace"), dict(candidates="hypercube"),
     dict(n_basis=40), dict(mode="exact", smoothness=2)],
)
def test_ledger_spends_exactly_the_budget(clinic_like, config):
    frame, bounds = clinic_like
    synth = SmoothSynthesizer(epsilon=0.8, seed=5, **config).fit(frame, bounds=bounds)
    privacy = synth.privacy_report()["privacy"]
    assert privacy["epsilon_spent"] == pytest.approx(0.8)
    assert privacy["delta_spent"] <= config.get("delta", 0.0) * (1 + 1e-9)
    stages = {event["stage"] for event in privacy["stages"]}
    assert {"moments", "clip_count"} <= stages
    assert ("pca" in stages) == (synth.release_.plan.candidates == "pca")
    for event in privacy["stages"]:
        assert event["sensitivity"] > 0 and event["noise_scale"] > 0 and event["epsilon"] > 0


def test_noise_scale_follows_the_derived_sensitivity_not_the_papers(clinic_like):
    """docs/mechanism.md §2: the paper's t^d/(n eps) is about half of the generic 2R/(n eps);
    the derived sensitivity (synthdp.privacy.sensitivity.moments_sensitivity) lies between the two."""
    frame, bounds = clinic_like
    synth = SmoothSynthesizer(epsilon=1.0, candidates="hypercube", n_basis=30, clip_count_share=0.0, seed=1)
    synth.fit(frame, bounds=bounds)
    (event,) = synth.privacy_report()["privacy"]["stages"]
    n, d = frame.shape
    derived = moments_sensitivity(lowest_degree_indices(d, 30), n)[0]
    assert event["noise_scale"] == pytest.approx(derived / 1.0)
    assert synth.release_.plan.theory.t ** d / n < derived < 2 * 30 / n


@pytest.mark.parametrize("correlation_share", [0.3, 0.0])
def test_pair_moments_are_left_to_the_pairs_release(clinic_like, correlation_share):
    """With the pairs release, the basis's pair products x_i x_j are not measured by the moments
    release (its budget goes to the others); without it they are."""
    frame, bounds = clinic_like
    n, d = frame.shape
    synth = SmoothSynthesizer(epsilon=1.0, delta=1e-8, candidates="copula", n_basis=2 * d + 3, seed=2,
                              correlation_share=correlation_share).fit(frame, bounds=bounds)
    release = synth.release_
    pairs = pair_product_rows(release.basis_indices)
    events = {event["stage"]: event for event in synth.privacy_report()["privacy"]["stages"]}
    if correlation_share:
        assert pairs.sum() == 0 and release.plan.skipped_pairs == 3  # 2d univariate moments, the 3 pairs left out
        assert len(release.basis_indices) == 2 * d
        assert "left to the correlation release" in events["moments"]["released"]
        assert release.noisy_scores is not None and len(release.noisy_scores) == d * (d + 1) // 2
    else:
        assert pairs.sum() == 3 and release.plan.skipped_pairs == 0
        assert "correlation" not in events and release.noisy_scores is None
    assert events["moments"]["sensitivity"] == pytest.approx(moments_sensitivity(release.basis_indices, n)[1])
    assert release.moment_noise_sd == pytest.approx(events["moments"]["noise_scale"])


def test_value_histogram_and_row_count_sensitivities_hold_and_are_attained_on_extreme_rows():
    """The DP bounds' histogram and the levels' counts move by 2 in l1 when one row moves
    between the extreme bins; a row count moves by 1 (privacy.sensitivity)."""
    from synthdp.privacy.sensitivity import row_count_sensitivity, value_histogram_sensitivity
    from synthdp.stats.histograms import histogram_counts

    base = np.random.default_rng(3).normal(0, 1, 200)
    for low, high in ((-1e300, 1e300), (0.0, 1e-300), (-5.0, 5.0)):
        first, second = base.copy(), base.copy()
        first[0], second[0] = low, high
        change = np.abs(histogram_counts(first) - histogram_counts(second)).sum()
        assert change <= value_histogram_sensitivity()
    assert change == value_histogram_sensitivity()  # attained: the two values lie in different bins
    frame = pd.DataFrame({"job": ["a"] * 50 + ["b"] * 50})
    other = frame.copy()
    other.loc[0, "job"] = "b"
    counts = [PrivateTable(f, ["job"]).level_counts("job") for f in (frame, other)]
    assert sum(abs(counts[0].get(k, 0) - counts[1].get(k, 0)) for k in {"a", "b"}) == value_histogram_sensitivity()
    assert row_count_sensitivity() == 1.0  # one row in or out of a property: the count moves by 1


def test_grouped_means_sensitivity_holds_and_is_attained_on_extreme_rows():
    """Mixed tables: the moments of the encoded rows, grouped, move by at most 2G/n (l1) and
    2 sqrt(G)/n (l2) when one row changes, and an extreme pair of rows attains the l1 bound."""
    from synthdp.domain.schema import Schema
    from synthdp.privacy.sensitivity import grouped_means_sensitivity
    from synthdp.stats.mixed_basis import basis_indices, groups_count

    schema_content = {"columns": {"x": {"type": "continuous", "bounds": [0, 1]},
                                  "c": {"type": "categorical", "levels": ["p", "q", "r"]},
                                  "s": {"type": "binary", "levels": ["no", "yes"]}}}
    rng = np.random.default_rng(4)
    n = 40
    frame = pd.DataFrame({"x": rng.uniform(0, 1, n), "c": rng.choice(["p", "q", "r"], n), "s": rng.choice(["no", "yes"], n)})
    schema = Schema.from_dict(schema_content, list(frame.columns))
    indices = basis_indices(schema, 2)
    groups = groups_count(schema, indices)
    l1, l2 = grouped_means_sensitivity(groups, n)
    largest = 0.0
    for first_row, second_row in (((0.0, "p", "no"), (1.0, "q", "yes")), ((1.0, "r", "yes"), (0.0, "p", "no")),
                                  ((1.0, "zzz", "yes"), (0.0, "q", "no"))):
        tables = []
        for row in (first_row, second_row):
            changed = frame.copy()
            changed.loc[0] = row
            tables.append(PrivateTable(changed, ["c", "s"]).encoded_moments(schema, indices)[0])
        difference = tables[0] - tables[1]
        assert np.abs(difference).sum() <= l1 + 1e-12 and np.linalg.norm(difference) <= l2 + 1e-12
        largest = max(largest, np.abs(difference).sum())
    assert largest >= 0.5 * l1  # not loose by more than 2 here: the groups without a numeric factor move by 2/n


@pytest.mark.parametrize("degrees, power", [((1,), 1), ((1, 2), 1), ((1, 2), 2), ((1, 2, 3), 2), (tuple(range(1, 9)), 1)])
def test_the_stored_spread_table_holds_what_the_computation_gives(degrees, power):
    """privacy/spread_table.json saves each process the grid search; it must be the same bound, up to
    the last bits in which numpy's cos and sums differ between builds and CPUs (1e-16 relative: the
    bound's own slack, the grid's Lipschitz term, is above 1e-4 of it)."""
    from synthdp.privacy.sensitivity import _spread_table, compute_univariate_spread, univariate_spread

    key = f"{','.join(map(str, degrees))}|{power}"
    assert key in _spread_table()
    assert univariate_spread(degrees, power) == pytest.approx(compute_univariate_spread(degrees, power), rel=1e-12)


def test_mixed_score_products_sensitivity_holds_with_missing_and_value_cells():
    """The pairs release of a mixed table's numeric columns (PrivateTable.encoded_score_products):
    an integer column counted value by value, a nullable continuous one (a missing cell scores 0)
    and a categorical column; replacing one row among extreme, missing, outside and random values
    moves the means of s_i s_j within score_products_sensitivity (d = 2 numeric columns)."""
    from synthdp.domain.schema import Schema
    from synthdp.privacy.sensitivity import score_products_sensitivity
    from synthdp.stats.scores import ScoreMap, default_clip_norm_sq

    schema = Schema.from_dict({"columns": {"k": {"type": "integer", "bounds": [0, 4]},
                                           "x": {"type": "continuous", "bounds": [0, 1], "nullable": True},
                                           "c": {"type": "categorical", "levels": ["a", "b"]}}}, ["k", "x", "c"])
    clip = default_clip_norm_sq(2)
    layout = CellLayout(4, (np.linspace(-1.0, 1.0, 5), None), (False, True))
    # value cells (and padding); atoms, bins and the missing cell
    cells = np.array([[0.2] * 5 + [0.0, 0.0], [2e-6, 0.2, 0.2, 0.2, 0.2 - 4e-6, 2e-6, 0.2]])
    score_map = ScoreMap(cells, clip, layout)
    n = 20
    rng = np.random.default_rng(4)
    base = pd.DataFrame({"k": rng.integers(0, 5, n), "x": rng.uniform(0, 1, n), "c": rng.choice(["a", "b", "z"], n)})
    extremes = [(0, 0.0, "a"), (4, 1.0, "b"), (4, np.nan, "z"), (0, np.nan, "a"), (9, 7.0, "a"), (-3, -2.0, "b"),
                (2, 0.5, "a")]
    l1, l2 = score_products_sensitivity(n, 2, clip)
    worst_l1 = worst_l2 = 0.0
    for old, new in itertools.product(extremes, repeat=2):
        sums = []
        for row in (old, new):
            frame = base.copy()
            frame.loc[0] = row
            sums.append(PrivateTable(frame, ["c"], nullable=["x"]).encoded_score_products(schema, score_map))
        change = (sums[0] - sums[1]) / n
        worst_l1, worst_l2 = max(worst_l1, np.abs(change).sum()), max(worst_l2, np.linalg.norm(change))
    assert 0 < worst_l1 <= l1 * (1 + 1e-12) and 0 < worst_l2 <= l2 * (1 + 1e-12)


def test_level_cells_sensitivity_holds_and_is_attained_on_extreme_rows():
    """The one-way cells of k binary and categorical columns (released apart where a mixed
    table's moments are noise) move by at most 2k/n (l1) and sqrt(2k)/n (l2) when one row
    changes: every column's level changed attains both; an 'other' value, a missing cell and a
    binary column's first level (no indicator) stay within them."""
    from synthdp.domain.schema import Schema
    from synthdp.privacy.sensitivity import level_cells_sensitivity
    from synthdp.stats.mixed_basis import basis_indices, one_way_cells

    content = {"columns": {"x": {"type": "continuous", "bounds": [0, 1]},
                           "c": {"type": "categorical", "levels": ["p", "q", "r"], "nullable": True},
                           "s": {"type": "binary", "levels": ["no", "yes"]},
                           "t": {"type": "categorical", "levels": ["u", "v"]}}}
    rng = np.random.default_rng(5)
    n = 40
    frame = pd.DataFrame({"x": rng.uniform(0, 1, n), "c": rng.choice(["p", "q", "r"], n),
                          "s": rng.choice(["no", "yes"], n), "t": rng.choice(["u", "v"], n)})
    schema = Schema.from_dict(content, list(frame.columns))
    indices = basis_indices(schema, 2)
    rows = one_way_cells(schema, indices)
    k = len(schema.categorical)
    l1, l2 = level_cells_sensitivity(k, n)
    assert (l1, l2) == (2 * k / n, math.sqrt(2 * k) / n)
    seen = []
    for first_row, second_row in (((0.0, "p", "no", "u"), (1.0, "q", "yes", "v")),  # every level changes
                                  ((0.5, "zzz", "yes", "u"), (0.5, None, "no", "v")),  # other -> missing
                                  ((0.5, "r", "no", "u"), (0.5, "r", "no", "u"))):  # the same row
        cells = []
        for row in (first_row, second_row):
            changed = frame.copy()
            changed.loc[0] = row
            cells.append(PrivateTable(changed, ["c", "s", "t"]).encoded_moments(schema, indices)[0][rows])
        difference = cells[0] - cells[1]
        assert np.abs(difference).sum() <= l1 + 1e-12 and np.linalg.norm(difference) <= l2 + 1e-12
        seen.append((np.abs(difference).sum(), np.linalg.norm(difference)))
    # attained, but for the binary column, whose one indicator moves one cell only (k - 1 columns by 2, one by 1)
    assert np.isclose(seen[0][0], (2 * (k - 1) + 1) / n) and np.isclose(seen[0][1], math.sqrt(2 * (k - 1) + 1) / n)


@pytest.mark.parametrize("groups, per_value", [(5, False), (400, True)])
def test_laplace_with_delta_takes_the_less_noisy_calibration_and_spends_delta_only_for_it(groups, per_value):
    """(epsilon, delta) with Laplace noise: per value with advanced composition (which spends delta) where that is
    less noisy than the whole vector's epsilon-DP release (many groups), else the latter, with delta 0 (few)."""
    from synthdp.privacy.budget import StageBudget
    from synthdp.privacy.release import release_bounded_means
    from synthdp.privacy.sensitivity import grouped_means_sensitivity

    budget, n = StageBudget(1.0, 1e-6), 1000
    ledger = PrivacyLedger(1.0, 1e-6)
    release_bounded_means(np.zeros(groups), "moments", "test", budget, n, ledger, SeededNoise(np.random.default_rng(0)),
                          groups=groups)
    (event,) = ledger.events
    whole = budget.noise_scale(*grouped_means_sensitivity(groups, n))
    assert event.noise_scale == pytest.approx(min(whole, budget.means_noise_scale(groups, n)))
    assert (event.delta > 0) == per_value and (event.noise_scale < whole) == per_value


def test_other_count_changes_by_at_most_one_and_attains_it_on_extreme_rows():
    """The other_count stage (release_row_count on a mixed table's rows with a categorical value
    outside its levels, PrivateTable.encoded_moments' fourth value): replacing one row among rows
    with no, one or two "other" values (an undeclared level, a missing cell of a non-nullable
    column), with and without a clipped number, moves the count by at most row_count_sensitivity()
    = 1; a row with every value declared against one with two "other" values attains it."""
    from synthdp.domain.schema import Schema
    from synthdp.privacy.sensitivity import row_count_sensitivity
    from synthdp.stats.mixed_basis import basis_indices

    schema = Schema.from_dict({"columns": {"x": {"type": "continuous", "bounds": [0, 1]},
                                           "c": {"type": "categorical", "levels": ["p", "q", "r"]},
                                           "t": {"type": "categorical", "levels": ["u", "v"]},
                                           "s": {"type": "binary", "levels": ["no", "yes"]}}}, ["x", "c", "t", "s"])
    indices = basis_indices(schema, 1)
    rng = np.random.default_rng(6)
    n = 30
    frame = pd.DataFrame({"x": rng.uniform(0, 1, n), "c": rng.choice(["p", "q", "r", "zzz"], n),
                          "t": rng.choice(["u", "v", "w"], n), "s": rng.choice(["no", "yes"], n)})
    extremes = [(0.5, "p", "u", "no"), (0.5, "zzz", "u", "no"), (0.5, "zzz", "w", "yes"), (0.5, None, None, "no"),
                (1e6, "zzz", "w", "yes"), (-1e6, "q", "v", "no")]
    worst = 0
    for old, new in itertools.product(extremes, repeat=2):
        counts = []
        for row in (old, new):
            changed = frame.copy()
            changed.loc[0] = row
            counts.append(PrivateTable(changed, ["c", "t", "s"]).encoded_moments(schema, indices)[3])
        worst = max(worst, abs(counts[0] - counts[1]))
    assert worst == row_count_sensitivity() == 1.0


def test_pca_centre_sensitivity_holds_and_is_attained_on_extreme_rows():
    """The pca_centre stage (release_pca's column means where the basis lacks some degree-1 moment,
    through release_bounded_means at bounded_means_sensitivity(d, n)): the means of the reader's
    column sums move by at most 2d/n (l1) and 2 sqrt(d)/n (l2) when one row is replaced among
    corners, far-outside values and random rows, and opposite corners attain both."""
    from synthdp.privacy.sensitivity import bounded_means_sensitivity

    rng = np.random.default_rng(7)
    n = 25
    domain = Domain.from_bounds(BOUNDS, list(BOUNDS))
    l1, l2 = bounded_means_sensitivity(D, n)
    worst_l1 = worst_l2 = 0.0
    for first, second in _neighbour_pairs(rng):
        sums = [PrivateTable(pd.DataFrame(t, columns=list(BOUNDS))).row_sums(
            SumRequest(domain, column_sums=True))["column_sums"] for t in (first, second)]
        change = (sums[0] - sums[1]) / n
        worst_l1, worst_l2 = max(worst_l1, np.abs(change).sum()), max(worst_l2, np.linalg.norm(change))
    assert worst_l1 == pytest.approx(l1) and worst_l2 == pytest.approx(l2)
    assert worst_l1 <= l1 * (1 + 1e-12) and worst_l2 <= l2 * (1 + 1e-12)
