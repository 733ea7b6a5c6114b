import math

import numpy as np
import pytest
from scipy import stats

from synthdp.privacy.budget import StageBudget
from synthdp.privacy.noise import NoiseSampler, SeededNoise, analytic_gaussian_sigma
from synthdp.privacy.pca import debiased_eigenvalues, private_subspace_iteration
from synthdp.privacy.sensitivity import iteration_sensitivity


class RecordingNoise(NoiseSampler):
    """Adds no noise and records the scale of every call: exact subspace iteration."""

    name = "none"
    private = False

    def __init__(self) -> None:
        self.scales: list[float] = []

    def laplace(self, values, scale):
        self.scales.append(scale)
        return np.array(values, dtype=float)

    def gaussian(self, values, sigma):
        self.scales.append(sigma)
        return np.array(values, dtype=float)

    def noisy_max(self, scores, scale):
        self.scales.append(scale)
        return int(np.argmax(scores))


def orthonormal(d: int, k: int, rng: np.random.Generator) -> np.ndarray:
    return np.linalg.qr(rng.standard_normal((d, k)))[0]


def row_pairs(d: int, rng: np.random.Generator) -> list[tuple[np.ndarray, np.ndarray]]:
    """Random corners, random interior points, and the adversarial near-orthogonal corners."""
    ones = np.ones(d)
    half = np.where(np.arange(d) < d // 2, 1.0, -1.0)  # orthogonal to `ones` when d is even
    pairs = [(ones, half), (ones, -half), (half, np.zeros(d)), (ones, np.zeros(d))]
    pairs += [tuple(rng.choice([-1.0, 1.0], size=(2, d))) for _ in range(100)]
    pairs += [tuple(rng.uniform(-1, 1, size=(2, d))) for _ in range(50)]
    return pairs


@pytest.mark.parametrize("d, k", [(1, 1), (2, 1), (2, 2), (4, 2), (5, 3), (6, 6), (8, 3)])
def test_iteration_sensitivity_bounds_every_row_replacement(d, k):
    """Brute force over row pairs (a, b) and orthonormal X, including X spanning {a, b}."""
    rng = np.random.default_rng(d * 10 + k)
    n = 7
    l2_bound = iteration_sensitivity(d, k, n, "l2")
    l1_bound = iteration_sensitivity(d, k, n, "l1")
    assert l1_bound == pytest.approx(math.sqrt(d * k) * l2_bound)
    for a, b in row_pairs(d, rng):
        change = (np.outer(a, a) - np.outer(b, b)) / n  # the change of S = D^T D / n
        adversarial = np.linalg.qr(np.column_stack([a, b, rng.standard_normal((d, k))]))[0][:, :k]
        for X in [orthonormal(d, k, rng) for _ in range(10)] + [adversarial]:
            assert np.linalg.norm(change @ X) <= l2_bound * (1 + 1e-12)
            assert np.abs(change @ X).sum() <= l1_bound * (1 + 1e-12)


@pytest.mark.parametrize("d", [2, 4, 10])
def test_l2_sensitivity_is_attained_by_orthogonal_corners(d):
    n = 3
    a = np.ones(d)
    b = np.where(np.arange(d) < d // 2, 1.0, -1.0)
    X = np.linalg.qr(np.column_stack([a, b]))[0]  # spans the range of the change
    change = (np.outer(a, a) - np.outer(b, b)) / n
    assert np.linalg.norm(change @ X) == pytest.approx(iteration_sensitivity(d, 2, n, "l2"))


def anisotropic_data(n: int, d: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Rows s v + small noise in [-1, 1]^d: one dominant direction v."""
    v = rng.standard_normal(d)
    v /= np.linalg.norm(v)
    rows = rng.uniform(-0.8, 0.8, (n, 1)) * v + rng.uniform(-0.05, 0.05, (n, d))
    assert np.all(np.abs(rows) <= 1)
    return rows, v


@pytest.mark.parametrize("noise_kind, delta", [("gaussian", 1e-6), ("laplace", 0.0)])
def test_recovers_the_top_eigenvector_when_noise_is_tiny(noise_kind, delta):
    """At epsilon = 1e4 the noise scale is below 4e-5, against a top eigenvalue of about 0.2 and
    a second one below 1e-3: the thresholds hold with a wide margin for any seed."""
    rng = np.random.default_rng(4)
    n, d = 5000, 5
    rows, v = anisotropic_data(n, d, rng)
    center = rows.mean(axis=0)
    covariance = np.cov(rows.T, bias=True)
    pca, event = private_subspace_iteration(
        rows.T @ rows / n, center, n, k=2, iterations=10, budget=StageBudget.whole(1e4, delta, noise_kind == "gaussian"),
        noise_kind=noise_kind, noise=SeededNoise(np.random.default_rng(5)), rng=rng,
    )
    top_value, top_vector = np.linalg.eigh(covariance)[0][-1], np.linalg.eigh(covariance)[1][:, -1]
    assert abs(pca.axes[:, 0] @ top_vector) > 0.999
    assert abs(pca.axes[:, 0] @ v) > 0.99
    assert pca.eigenvalues[0] == pytest.approx(top_value, rel=0.01)
    np.testing.assert_allclose(pca.center, center)
    assert event.epsilon == 1e4 and event.delta == delta and event.stage == "pca"


def test_exact_iteration_finds_the_top_k_eigenpairs():
    rng = np.random.default_rng(6)
    d, k, n = 6, 3, 1000
    scales = np.array([0.9, 0.6, 0.3, 0.05, 0.05, 0.05])
    rows = rng.uniform(-1, 1, (n, d)) * scales @ orthonormal(d, d, rng).T / math.sqrt(d)
    center = rows.mean(axis=0)
    values, vectors = np.linalg.eigh(rows.T @ rows / n - np.outer(center, center))
    # RecordingNoise adds nothing, but the eigenvalue estimate subtracts the energy d sigma^2
    # of the noise it expects; epsilon = 1e8 makes that ~1e-10, against lambda_3^2 ~ 2e-5.
    pca, _ = private_subspace_iteration(
        rows.T @ rows / n, center, n, k, iterations=60, budget=StageBudget.whole(1e8, 1e-6, True),
        noise_kind="gaussian", noise=RecordingNoise(), rng=rng,
    )
    np.testing.assert_allclose(pca.eigenvalues, values[::-1][:k], rtol=1e-4)
    np.testing.assert_allclose(np.abs(pca.axes.T @ vectors[:, ::-1][:, :k]), np.eye(k), atol=1e-4)


@pytest.mark.parametrize("noise_kind, delta", [("gaussian", 1e-5), ("laplace", 0.0)])
def test_outputs_are_orthonormal_sorted_and_clipped(noise_kind, delta):
    rng = np.random.default_rng(7)
    d, k, n = 5, 3, 200
    rows = rng.uniform(-1, 1, (n, d))
    center = np.array([1.3, -2.0, 0.1, 0.0, 0.2])  # a noisy released mean may leave the cube
    pca, _ = private_subspace_iteration(
        rows.T @ rows / n, center, n, k, iterations=4, budget=StageBudget.whole(0.5, delta, noise_kind == "gaussian"),
        noise_kind=noise_kind, noise=SeededNoise(np.random.default_rng(8)), rng=rng,
    )
    assert pca.axes.shape == (d, k)
    np.testing.assert_allclose(pca.axes.T @ pca.axes, np.eye(k), atol=1e-12)
    assert np.all(np.diff(pca.eigenvalues) <= 0) and np.all(pca.eigenvalues >= 0)
    np.testing.assert_allclose(pca.center, [1.0, -1.0, 0.1, 0.0, 0.2])


@pytest.mark.parametrize("noise_kind, delta", [("gaussian", 1e-5), ("laplace", 0.0)])
def test_noise_scale_matches_the_composed_calibration(noise_kind, delta):
    d, k, n, iterations, epsilon = 4, 2, 300, 5, 0.8
    rows = np.random.default_rng(9).uniform(-1, 1, (n, d))
    noise = RecordingNoise()
    _, event = private_subspace_iteration(
        rows.T @ rows / n, rows.mean(axis=0), n, k, iterations, StageBudget.whole(epsilon, delta, noise_kind == "gaussian"),
        noise_kind, noise, np.random.default_rng(10),
    )
    l2 = math.sqrt(2) * d / n
    if noise_kind == "gaussian":  # L releases of sensitivity l2 = one of sensitivity sqrt(L) l2
        expected = analytic_gaussian_sigma(math.sqrt(iterations) * l2, epsilon, delta)
        assert event.sensitivity == pytest.approx(l2)
        assert event.mu == pytest.approx(math.sqrt(iterations) * l2 / expected)
    else:  # epsilon / L per iteration, L1 sensitivity sqrt(d k) l2
        expected = iterations * math.sqrt(d * k) * l2 / epsilon
        assert event.sensitivity == pytest.approx(math.sqrt(d * k) * l2)
    assert noise.scales == pytest.approx([expected] * iterations)
    assert event.noise_scale == pytest.approx(expected)
    assert event.epsilon == epsilon and event.delta == delta


@pytest.mark.parametrize("noise_kind, delta", [("gaussian", 1e-5), ("laplace", 0.0)])
@pytest.mark.parametrize("d, k", [(4, 2), (60, 1)])
def test_paper_calibration_never_falls_below_the_derived_scale(noise_kind, delta, d, k):
    n, iterations, epsilon = 500, 3, 1.0
    rows = np.random.default_rng(11).uniform(-1, 1, (n, d))
    args = (rows.T @ rows / n, rows.mean(axis=0), n, k, iterations, StageBudget.whole(epsilon, delta, noise_kind == "gaussian"), noise_kind)
    derived, paper = RecordingNoise(), RecordingNoise()
    private_subspace_iteration(*args, derived, np.random.default_rng(12))
    _, event = private_subspace_iteration(*args, paper, np.random.default_rng(12), calibration="paper")
    if noise_kind == "gaussian":
        factor = 5 * d * math.sqrt(4 * k * iterations * math.log(1 / delta)) / (n * epsilon)
    else:
        factor = 50 * d**1.5 * k * iterations / (n * epsilon)
    floor = derived.scales[0]
    for scale in paper.scales:
        # Theorem 3.6 scales by ||X||_inf, which lies in [1/sqrt(d), 1] for orthonormal columns.
        assert max(floor, factor / math.sqrt(d)) * (1 - 1e-12) <= scale <= max(floor, factor) * (1 + 1e-12)
    assert event.noise_scale == max(paper.scales)
    assert "Theorem 3.6" in event.mechanism
    if noise_kind == "gaussian":  # the iterations' own scales compose: sqrt(sum (Delta / sigma_l)^2), within the budget
        spent = math.sqrt(sum((event.sensitivity / scale) ** 2 for scale in paper.scales))
        assert event.mu == pytest.approx(spent)
        assert event.mu <= args[5].mu * (1 + 1e-12)


def test_debiased_eigenvalues_are_unbiased_in_square():
    """W_s = lambda_s e_s + N(0, sigma^2 I_d): E ||W_s||^2 = lambda_s^2 + d sigma^2, so the mean
    squared estimate over T draws should be lambda_s^2. T ||W_s||^2-means / sigma^2 is exactly
    noncentral chi-square(d T, T lambda^2 / sigma^2); accepting its central 1 - 5e-7 range for
    each of 2 columns gives a false-failure rate of 1e-6 over seeds (the floor at 0 acts with
    probability below 1e-10 per draw: ||W_s||^2 has mean >= 0.16 and sd ~ 2 lambda sigma).
    The undebiased norms are off by d sigma^2 = 0.0036, outside that range."""
    d, sigma, T = 4, 0.03, 4000
    lambdas = np.array([0.5, 0.4])
    rng = np.random.default_rng(13)
    columns = np.zeros((d, 2 * T))  # T draws of the d x 2 iterate, side by side
    columns[0, 0::2], columns[1, 1::2] = lambdas
    columns += rng.normal(0, sigma, columns.shape)
    estimates = debiased_eigenvalues(columns, sigma, "gaussian").reshape(T, 2)
    for s, lam in enumerate(lambdas):
        law = stats.ncx2(df=d * T, nc=T * lam**2 / sigma**2)
        low, high = law.ppf(2.5e-7) * sigma**2 / T - d * sigma**2, law.isf(2.5e-7) * sigma**2 / T - d * sigma**2
        assert low <= np.mean(estimates[:, s] ** 2) <= high
        assert not low <= lam**2 + d * sigma**2 <= high  # the raw norm would be detectably biased
        assert low <= lam**2 <= high


@pytest.mark.parametrize("noise_kind, variance", [("gaussian", 0.04), ("laplace", 2 * 0.04)])
def test_debiased_eigenvalues_subtract_the_noise_energy_floor_at_zero_and_cap_at_d(noise_kind, variance):
    d = 3
    energy = np.array([0.09 + d * variance, 0.5 * d * variance, 100.0])  # column squared norms
    iterate = np.zeros((d, 3))
    iterate[0] = np.sqrt(energy)
    np.testing.assert_allclose(debiased_eigenvalues(iterate, 0.2, noise_kind), [0.3, 0.0, d])


def test_pca_candidates_whose_axes_lost_their_variance_to_noise_say_so():
    """400 rows at (1, 1e-6): the private PCA's noise takes two of three eigenvalues to 0, so every
    candidate lies on one line and the synthetic columns come out correlated +-1 whatever the
    data's (a and c here are independent): the fit warns, naming the dimensions left."""
    import warnings

    import pandas as pd

    from synthdp import SmoothSynthesizer

    rng = np.random.default_rng(0)
    a, c = rng.normal(size=400), rng.normal(size=400)
    frame = pd.DataFrame({"a": a, "b": a + 0.3 * rng.normal(size=400), "c": c})
    bounds = {"a": [-4, 4], "b": [-5, 5], "c": [-4, 4]}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        synth = SmoothSynthesizer(epsilon=1.0, delta=1e-6, candidates="pca", seed=2).fit(frame, bounds)
    flat = int(np.sum(synth.release_.pca.eigenvalues <= 0))
    assert flat == 2
    assert any("2 of the 3 private PCA axes have no variance" in str(w.message) for w in caught)
    centred = synth.support_points_ - synth.support_points_.mean(axis=0)
    assert np.linalg.matrix_rank(centred, tol=1e-8) == 3 - flat  # what the warning says of the candidates


@pytest.mark.parametrize("calibration", ["derived", "paper"])
@pytest.mark.parametrize("epsilon, delta", [(1e-3, 0.5), (1000.0, 1 - 2**-53)])
def test_a_pca_share_that_is_zero_epsilon_at_a_large_delta_is_calibrated(epsilon, delta, calibration):
    """At a large delta a small share's mu is (0, delta)-DP (its epsilon 0): the paper's constant,
    computed for every run, divided by that epsilon (ZeroDivisionError, e.g. generate --candidates pca
    --pca-share 0.001 --epsilon 1e-3 --delta 0.5). The derived scale, sqrt(L) Delta / mu, holds."""
    from synthdp.privacy.budget import Budget

    budget = Budget(0.0, 0.0, epsilon, delta, "gdp", (("moments", 0.999), ("pca", 0.001))).stage("pca")
    assert budget.epsilon == 0.0  # mu-GDP is (0, delta)-DP where delta >= 2 Phi(mu / 2) - 1
    assert delta >= 2 * stats.norm.cdf(budget.mu / 2) - 1
    d, k, n, iterations = 4, 2, 300, 5
    rows = np.random.default_rng(9).uniform(-1, 1, (n, d))
    noise = RecordingNoise()
    _, event = private_subspace_iteration(rows.T @ rows / n, rows.mean(axis=0), n, k, iterations, budget, "gaussian",
                                          noise, np.random.default_rng(10), calibration=calibration)
    expected = math.sqrt(iterations) * (math.sqrt(2) * d / n) / budget.mu
    assert noise.scales == pytest.approx([expected] * iterations)
    assert math.isfinite(event.noise_scale) and event.mu <= budget.mu * (1 + 1e-12)
    assert "Theorem 3.6 constants" not in event.mechanism  # the report names the scale that was used


def test_the_paper_s_constants_at_a_delta_whose_inverse_overflows_are_finite():
    """--pca-calibration paper at delta 1e-310: log(1 / delta) was inf, so the paper's scale and every
    iteration's noise were inf, and the synthetic table was all NaN, without a word."""
    from synthdp.privacy.budget import Budget

    delta = 1e-310
    budget = Budget(0.0, 0.0, 1.0, delta, "gdp", (("moments", 0.5), ("pca", 0.5))).stage("pca")
    d, k, n, iterations = 4, 2, 300, 5
    rows = np.random.default_rng(9).uniform(-1, 1, (n, d))
    noise = RecordingNoise()
    private_subspace_iteration(rows.T @ rows / n, rows.mean(axis=0), n, k, iterations, budget, "gaussian",
                               noise, np.random.default_rng(10), calibration="paper")
    factor = 5 * d * math.sqrt(4 * k * iterations * -math.log(delta)) / (n * budget.epsilon)
    assert all(math.isfinite(scale) for scale in noise.scales)
    assert max(noise.scales) <= factor  # |basis| <= 1: the paper's scale, not more
