import math

import pytest

from synthdp.config import SynthConfig
from synthdp.errors import SynthDPError
from synthdp.params import TheoryParameters, auto_n_basis, make_plan, paper_n_basis, theory_parameters


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
        (SynthConfig(epsilon=1.3, delta=1e-6, pca_share=0.4, clip_count_share=0.1), True),
        (SynthConfig(epsilon=2.0, delta=1e-6, candidates="hypercube"), True),
        (SynthConfig(epsilon=0.7), False),
        (SynthConfig(epsilon=0.7, mode="exact"), True),
    ],
)
def test_budget_split_sums_to_the_budget(config, public):
    budget = make_plan(config, 1000, 2, bounds_are_public=public).budget
    assert budget.clip_count + budget.pca_epsilon + budget.moments_epsilon == pytest.approx(config.epsilon, rel=1e-12)
    assert budget.pca_delta + budget.moments_delta == pytest.approx(config.delta, rel=1e-12)
    assert budget.clip_count == pytest.approx(config.epsilon * config.clip_count_share if public else 0.0)
    if config.candidate_kind == "pca":
        assert budget.pca_epsilon == pytest.approx((config.epsilon - budget.clip_count) * config.pca_share)
    else:
        assert budget.pca_epsilon == 0 and budget.pca_delta == 0


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
        (1000, 3, 4, 1e-6, round(0.5 * 1000 ** (6 / 17))),  # the paper's R = 6 > d
        (1000, 30, 4, 0.0, 30),  # the paper's R = round(0.5 * 1000^(30/64)) = 13 < d
        (10, 2, 4, 0.0, 2),  # the paper's R = 1 < d
    ],
)
def test_auto_n_basis_is_the_paper_r_raised_to_d(n, d, K, delta, expected):
    """At least d, so that the degree-1 moments (the column means) are all released."""
    assert auto_n_basis(n, d, K, delta) == expected
    assert make_plan(SynthConfig(delta=delta, smoothness=K), n, d, True).n_basis == expected


def test_practical_plan_sizes():
    plan = make_plan(SynthConfig(delta=1e-6, n_candidates=500), 1000, 3, True)
    assert plan.n_candidates == 500 and plan.candidates == "pca" and plan.noise == "gaussian"
    assert not plan.round_to_lattice
    assert make_plan(SynthConfig(n_basis=17), 1000, 3, True).n_basis == 17
    grid_plan = make_plan(SynthConfig(candidates="grid"), 1000, 3, True)
    assert grid_plan.n_candidates == theory_parameters(1000, 3, 4, 0.0).N ** 3


def test_to_dict_flattens_the_theory_parameters():
    plan = make_plan(SynthConfig(), 1000, 3, True)
    out = plan.to_dict()
    assert (out["t"], out["N"], out["m"], out["L"]) == (plan.theory.t, plan.theory.N, plan.theory.m, plan.theory.L)
    assert (out["R"], out["C"], out["K"]) == (plan.n_basis, plan.n_candidates, plan.smoothness)
    assert out["budget"]["moments_epsilon"] == plan.budget.moments_epsilon
    assert "theory" not in out


@pytest.mark.parametrize(
    "config, d, message",
    [
        (SynthConfig(n_basis=10, n_candidates=100, max_lp_entries=999), 3, "n-candidates"),
        # R = 3^2 - 1, C = 32^2: column generation holds at least 2 x 256 columns
        (SynthConfig(mode="exact", max_lp_entries=8 * 512 - 1), 2, "--mode practical"),
        (SynthConfig(mode="exact"), 100, "--mode practical"),  # N^d = 16^100 is capped, not built
        (SynthConfig(n_candidates=10**7), 30, "candidate values"),  # 3e8 coordinates
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
    plan = make_plan(SynthConfig(n_basis=10, n_candidates=100, max_lp_entries=1000), 1000, 3, True)
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
