import math

import numpy as np
import pytest

from synthdp.config import SynthConfig
from synthdp.errors import SynthDPError
from synthdp.pipeline.plan import (
    MAX_AUTO_N_BASIS,
    MOMENT_NOISE_LIMIT,
    TheoryParameters,
    auto_n_basis,
    copula_shares,
    make_plan,
    paper_n_basis,
    theory_parameters,
)
from synthdp.privacy.budget import Budget
from synthdp.privacy.noise import gdp_mu
from synthdp.privacy.sensitivity import bounded_means_sensitivity
from synthdp.stats.chebyshev import lowest_degree_indices


def ceil_power(n: int, p: int, q: int) -> int:
    """ceil(n^(p/q)) in exact integer arithmetic: the smallest c with c^q >= n^p."""
    target = n**p
    c = max(1, math.floor(n ** (p / q)) - 1)
    while c**q < target:
        c += 1
    while c > 1 and (c - 1) ** q >= target:
        c -= 1
    return c


def expected_pure(n: int, d: int, K: int) -> TheoryParameters:
    """Algorithm 1: t = n^{1/(2d+K)}, N = n^{K/(2d+K)}, m = n^{1+(K+1)/(2d+K)}, L = n^{(d+K)/(2d+K)}."""
    base = 2 * d + K
    return TheoryParameters(
        t=ceil_power(n, 1, base),
        N=ceil_power(n, K, base),
        m=ceil_power(n, base + K + 1, base),
        L=ceil_power(n, d + K, base),
    )


def expected_approx(n: int, d: int, K: int, delta: float) -> TheoryParameters:
    """Section 3.2 with l = ln(1/delta), written as exp((a ln n - b ln l) / (3d + 2K))."""
    base = 3 * d + 2 * K
    log_n, log_l = math.log(n), math.log(math.log(1 / delta))

    def size(a: float, b: float) -> int:
        return math.ceil(math.exp((a * log_n - b * log_l) / base))

    return TheoryParameters(
        t=size(2, 1), N=size(2 * K, K), m=size(4 * d + 4 * K + 2, 2 * d + 2 * K + 1), L=size(2 * d + 2 * K, d + K)
    )


@pytest.mark.parametrize("n, d, K", [(1000, 2, 4), (5000, 3, 2), (400, 1, 1), (777, 3, 8), (123_456, 4, 5)])
def test_theory_parameters_pure(n, d, K):
    assert theory_parameters(n, d, K, 0.0) == expected_pure(n, d, K)


@pytest.mark.parametrize(
    "n, d, K, delta", [(1000, 2, 4, 1e-6), (20_000, 5, 3, 1e-10), (777, 3, 8, 0.01), (50, 1, 1, 0.5)]
)
def test_theory_parameters_approximate(n, d, K, delta):
    assert theory_parameters(n, d, K, delta) == expected_approx(n, d, K, delta)


@pytest.mark.parametrize("n, d, K", [(100_000, 2, 1), (3125, 1, 3)])
def test_theory_parameters_at_perfect_powers(n, d, K):
    assert theory_parameters(n, d, K, 0.0) == expected_pure(n, d, K)


@pytest.mark.parametrize(
    "n, d, K, delta, expected",
    [
        (1000, 2, 4, 0.0, round(0.5 * 1000 ** (2 / 8))),
        (20_000, 5, 3, 1e-10, round(0.5 * 20_000 ** (10 / 21))),
        (10, 3, 4, 0.0, 1),  # 0.5 * 10^0.3 rounds to 1
        (2, 1, 9, 1e-5, 1),  # 0.5 * 2^(2/21) rounds to 1 (would be 0 without the floor)
    ],
)
def test_paper_n_basis(n, d, K, delta, expected):
    assert paper_n_basis(n, d, K, delta) == expected


@pytest.mark.parametrize(
    "config, public",
    [
        (SynthConfig(epsilon=1.3), True),
        (SynthConfig(epsilon=1.3, delta=1e-6, pca_share=0.4, clip_count_share=0.1, candidates="pca"), True),
        (SynthConfig(epsilon=1.3, delta=1e-6, noise="laplace", candidates="pca"), True),
        (SynthConfig(epsilon=1.3, delta=1e-6), True),
        (SynthConfig(epsilon=2.0, delta=1e-6, candidates="hypercube"), True),
        (SynthConfig(epsilon=0.7), False),
        (SynthConfig(epsilon=0.7, mode="exact"), True),
    ],
)
def test_budget_split_sums_to_the_budget(config, public):
    plan = make_plan(config, 1000, 2, bounds_are_public=public)
    budget = plan.budget
    assert budget.clip_count == pytest.approx(config.epsilon * config.clip_count_share if public else 0.0)
    assert budget.remaining_epsilon == pytest.approx(config.epsilon - budget.clip_count, rel=1e-12)
    assert sum(share for _, share in budget.shares) == pytest.approx(1.0, rel=1e-12)
    stages = [budget.stage(name) for name, _ in budget.shares]
    if config.noise_kind == "gaussian":  # mu^2 adds up to that of the remaining budget
        assert budget.composition == "gdp"
        assert math.hypot(*(stage.mu for stage in stages)) == pytest.approx(gdp_mu(budget.remaining_epsilon, config.delta))
    else:
        assert budget.composition == "basic"
        assert sum(stage.epsilon for stage in stages) == pytest.approx(budget.remaining_epsilon, rel=1e-12)
        assert sum(stage.delta for stage in stages) == pytest.approx(config.delta, rel=1e-12)
    copula = {name for name, share in copula_shares(config, 1000, 2, plan.n_basis, budget.remaining_epsilon).items()
              if share}
    expected = {"pca": {"moments", "pca"}, "copula": {"moments"} | copula}.get(config.candidate_kind, {"moments"})
    assert {name for name, _ in budget.shares} == expected
    if config.candidate_kind == "pca":
        assert budget.share("pca") == config.pca_share


def test_exact_plan_uses_the_full_tensor_basis_and_grid():
    plan = make_plan(SynthConfig(mode="exact"), 1000, 2, True)
    theory = theory_parameters(1000, 2, 4, 0.0)
    assert plan.theory == theory
    assert plan.n_basis == theory.t**2 - 1
    assert plan.n_candidates == theory.N**2
    assert plan.candidates == "grid" and plan.round_to_lattice and plan.noise == "laplace"


@pytest.mark.parametrize(
    "n, d, K, delta, expected",
    [
        (100, 3, 4, 1e-6, 6),  # the paper's R = round(0.5 * 100^(6/17)) = 2 < d
        (10**6, 2, 4, 1e-6, round(0.5 * (10**6) ** (4 / 14))),  # the paper's R = 26 > 2d
        (1000, 30, 4, 0.0, 60),  # the paper's R = round(0.5 * 1000^(30/64)) = 13 < 2d
        (10, 2, 4, 0.0, 4),  # the paper's R = 1 < 2d
    ],
)
def test_auto_n_basis_is_the_paper_r_raised_to_2d(n, d, K, delta, expected):
    """At least 2d, so that every column's T_1 and T_2 moments are released."""
    assert auto_n_basis(n, d, K, delta) == expected
    plan = make_plan(SynthConfig(delta=delta, smoothness=K), n, d, True)
    assert plan.n_basis + plan.skipped_pairs == expected  # pair products are left to a pairs release
    indices = lowest_degree_indices(d, expected)
    per_column = {(int(np.flatnonzero(index)[0]), int(index.sum())) for index in indices if np.count_nonzero(index) == 1}
    assert {(column, degree) for column in range(d) for degree in (1, 2)} <= per_column


@pytest.mark.parametrize("n, d, delta", [(4_000_000, 10, 1e-10), (200_000, 20, 1e-10), (10**9, 10, 0.0)])
def test_auto_n_basis_is_capped_where_the_paper_r_exceeds_the_cap(n, d, delta):
    """At large n the paper's R exceeds MAX_AUTO_N_BASIS; the automatic R stops there, an explicit R does not."""
    assert paper_n_basis(n, d, 4, delta) > MAX_AUTO_N_BASIS
    assert auto_n_basis(n, d, 4, delta) == MAX_AUTO_N_BASIS
    plan = make_plan(SynthConfig(delta=delta), n, d, True)
    assert plan.n_basis + plan.skipped_pairs == MAX_AUTO_N_BASIS
    explicit = make_plan(SynthConfig(delta=delta, n_basis=MAX_AUTO_N_BASIS + 50), n, d, True)
    assert explicit.n_basis + explicit.skipped_pairs == MAX_AUTO_N_BASIS + 50


def test_the_2d_floor_stands_above_the_cap():
    """Every column keeps its T_1 and T_2 moments even when 2d exceeds the cap."""
    d = MAX_AUTO_N_BASIS // 2 + 10
    assert auto_n_basis(10**7, d, 4, 1e-10) == 2 * d


def test_practical_plan_sizes():
    plan = make_plan(SynthConfig(delta=1e-6, n_candidates=500), 1000, 3, True)
    assert plan.n_candidates == 500 and plan.candidates == "copula" and plan.noise == "gaussian"
    assert not plan.round_to_lattice
    assert make_plan(SynthConfig(n_basis=17, correlation_share=0.0), 1000, 3, True).n_basis == 17
    with_pairs = make_plan(SynthConfig(n_basis=17, correlation_share=0.3), 1000, 3, True)
    assert with_pairs.skipped_pairs == 3 and with_pairs.n_basis == 14  # the 3 pair products left to the pairs
    grid_plan = make_plan(SynthConfig(candidates="grid"), 1000, 3, True)
    assert grid_plan.n_candidates == theory_parameters(1000, 3, 4, 0.0).N ** 3


def test_to_dict_flattens_the_theory_parameters():
    plan = make_plan(SynthConfig(), 1000, 3, True)
    out = plan.to_dict()
    assert (out["t"], out["N"], out["m"], out["L"]) == (plan.theory.t, plan.theory.N, plan.theory.m, plan.theory.L)
    assert (out["R"], out["C"], out["K"]) == (plan.n_basis, plan.n_candidates, plan.smoothness)
    assert out["budget"]["stages"]["moments"]["epsilon"] == plan.budget.stage("moments").epsilon
    assert "theory" not in out


@pytest.mark.parametrize(
    "config, d, message",
    [
        (SynthConfig(n_basis=10, n_candidates=100, max_lp_entries=999), 3, "n-candidates"),
        # R = 3^2 - 1, C = 32^2: column generation holds at least 2 x 256 columns
        (SynthConfig(mode="exact", max_lp_entries=8 * 512 - 1), 2, "--mode practical"),
        (SynthConfig(mode="exact"), 100, "--mode practical"),  # N^d = 16^100 is capped, not built
        (SynthConfig(n_candidates=10**7), 30, "candidate values"),  # 3e8 coordinates
        # practical mode's grid candidates: N^d capped, the fix is other candidates, not a mode
        (SynthConfig(candidates="grid"), 100, "--candidates other than grid"),
        (SynthConfig(candidates="grid", n_basis=10, max_lp_entries=99), 2, "other than grid, or lower --n-basis"),
        (SynthConfig(n_basis=10, n_candidates=1000, spread=0.1, max_lp_entries=9999), 3, "spread"),
    ],
)
def test_make_plan_refuses_lps_over_the_memory_bound(config, d, message):
    with pytest.raises(SynthDPError, match=message):
        make_plan(config, 1000, d, True)


def test_make_plan_accepts_a_million_candidates_for_column_generation():
    plan = make_plan(SynthConfig(n_basis=1000, n_candidates=10**6), 10**5, 100, True)
    assert (plan.n_basis, plan.n_candidates) == (1000, 10**6)  # W itself would be 8 GB


def test_make_plan_accepts_an_lp_exactly_at_the_memory_bound():
    plan = make_plan(SynthConfig(n_basis=10, n_candidates=100, max_lp_entries=1000, correlation_share=0.0), 1000, 3, True)
    assert plan.n_basis * plan.n_candidates == 1000


@pytest.mark.parametrize(
    "config, n, message",
    [
        (SynthConfig(), 1, "at least 2 rows"),
        (SynthConfig(mode="exact", delta=1e-10), 2, "no non-constant function"),  # t = ceil((2^2 / ln 1e10)^{1/17}) = 1
    ],
)
def test_make_plan_refuses_tiny_inputs(config, n, message):
    with pytest.raises(SynthDPError, match=message):
        make_plan(config, n, 3, True)


@pytest.mark.parametrize(
    "n, d, delta, correlation, marginals",
    [(5875, 20, 1e-10, 0.3, 0.3), (2126, 20, 1e-10, 0.5, 0.3), (569, 30, 1e-10, 0.0, 0.9), (5875, 20, 0.0, 0.0, 0.5),
     (1993, 100, 0.0, 0.0, 0.9), (10**6, 20, 0.0, 0.3, 0.3)],
)
def test_copula_shares_follow_the_public_noise_of_pairs_and_moments(n, d, delta, correlation, marginals):
    """Pairs only when their noise on a correlation is at most 0.25 (0.5 of the budget where at 0.3 it
    is above half that: CTG's size); the histograms take 0.9 when the moments' is large."""
    config = SynthConfig(delta=delta)
    n_basis = auto_n_basis(n, d, config.smoothness, delta)
    shares = copula_shares(config, n, d, n_basis, 0.98)
    assert shares == {"marginals": pytest.approx(marginals), "correlation": correlation}
    moments = Budget(0.0, 0.0, 0.98, delta, "gdp" if delta else "basic", (("moments", 1 - marginals - correlation),))
    moment_sd = moments.stage("moments").means_noise_sd(n_basis, n)
    assert (moment_sd > MOMENT_NOISE_LIMIT) == (marginals == 0.9)  # the limit holds at the share the rule gives
    set_by_user = copula_shares(SynthConfig(delta=delta, correlation_share=0.2, marginals_share=0.1), n, d, n_basis, 0.98)
    assert set_by_user == {"marginals": 0.1, "correlation": 0.2}
    with pytest.raises(SynthDPError, match="leave a share"):
        copula_shares(SynthConfig(delta=delta, correlation_share=0.8), n, d, n_basis, 0.98)


def test_copula_shares_judge_laplace_moments_by_the_calibration_the_release_uses():
    """Laplace noise with delta > 0 releases each moment alone, composed by advanced composition
    (synthdp.privacy.release.release_bounded_means): less noise than one Laplace release of the whole
    vector. At n = 3500, d = 20 (R = 61) the two sit on either side of the limit, and the rule
    must keep the moments' share of 0.5."""
    config, n, d = SynthConfig(delta=1e-10, noise="laplace"), 3500, 20
    n_basis = auto_n_basis(n, d, config.smoothness, config.delta)
    moments = Budget(0.0, 0.0, 0.98, config.delta, "basic", (("moments", 0.5),)).stage("moments")
    assert moments.noise_sd(*bounded_means_sensitivity(n_basis, n)) > MOMENT_NOISE_LIMIT >= moments.means_noise_sd(n_basis, n)
    assert copula_shares(config, n, d, n_basis, 0.98) == {"marginals": 0.5, "correlation": 0.0}


@pytest.mark.parametrize("n, d, delta", [(1993, 100, 1e-10), (2126, 20, 0.0), (569, 30, 1e-10), (10**6, 5, 1e-10)])
def test_auto_marginal_bins_keep_each_cell_above_twice_its_noise(n, d, delta):
    plan = make_plan(SynthConfig(delta=delta), n, d, True)
    stage = plan.budget.stage("marginals")
    noise_sd = math.sqrt(2 * d) / stage.mu if delta else math.sqrt(2) * 2 * d / stage.epsilon
    bins = plan.marginal_bins
    assert 4 <= bins <= 16
    assert bins == 4 or n / (bins + 2) >= 2 * noise_sd  # fewer than 4 bins only at the floor
    assert bins == 16 or n / (bins + 3) < 2 * noise_sd  # one more bin would break the rule
    assert make_plan(SynthConfig(delta=delta, marginal_bins=9), n, d, True).marginal_bins == 9
    assert make_plan(SynthConfig(delta=delta, candidates="pca"), n, d, True).marginal_bins == 0


def test_mixed_tables_plan_histograms_and_the_smallest_quiet_pairs_share():
    """mixed_shares: the numeric histograms get MIXED_MARGINALS_SHARE; the pairs the smallest share
    whose noise on a correlation is at most half the limit (else 0.3 within the limit, else none);
    the user's shares are kept; a table without numeric columns gets neither."""
    from synthdp.pipeline.plan import (
        CORRELATION_NOISE_LIMIT,
        MIXED_CORRELATION_SHARES,
        MIXED_MARGINALS_SHARE,
        mixed_shares,
    )
    from synthdp.privacy.sensitivity import score_products_sensitivity
    from synthdp.stats.scores import default_clip_norm_sq

    config = SynthConfig(epsilon=1.0, delta=1e-10)

    def noise(n, d, share):
        budget = Budget(0.0, 0.0, 1.0, 1e-10, "gdp", (("correlation", share),))
        return budget.stage("correlation").noise_sd(*score_products_sensitivity(n, d, default_clip_norm_sq(d)))

    for n, d in [(32561, 6), (5875, 20), (569, 30), (2000, 3)]:
        shares = mixed_shares(config, n, d, 1.0)
        assert shares["marginals"] == MIXED_MARGINALS_SHARE
        quiet = [s for s in MIXED_CORRELATION_SHARES if noise(n, d, s) <= CORRELATION_NOISE_LIMIT / 2]
        expected = quiet[0] if quiet else (0.3 if noise(n, d, 0.3) <= CORRELATION_NOISE_LIMIT else 0.0)
        assert shares["correlation"] == expected
    assert mixed_shares(config, 32561, 6, 1.0)["correlation"] == 0.1  # adult: the smallest share is enough
    assert mixed_shares(config, 569, 30, 1.0)["correlation"] == 0.0  # WDBC-sized: too noisy
    assert mixed_shares(SynthConfig(marginals_share=0.4, correlation_share=0.2), 1000, 3, 1.0) == {
        "marginals": 0.4, "correlation": 0.2}
    assert mixed_shares(config, 1000, 0, 1.0) == {}


def test_theory_parameters_at_a_delta_whose_inverse_overflows():
    """log(1 / delta) is inf below 5.6e-309: each parameter's power of it was 0, so t = N = m = L = 0."""
    tiny, least_normal = theory_parameters(1000, 2, 2, 1e-310), theory_parameters(1000, 2, 2, 1e-308)
    assert all(value >= 1 for value in tiny.__dict__.values())
    assert tiny.t == least_normal.t and tiny.L == least_normal.L and tiny.m <= least_normal.m
