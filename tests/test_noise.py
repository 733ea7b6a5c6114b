import math

import numpy as np
import pytest
from scipy import stats

from synthdp.privacy.noise import (
    OpenDPNoise,
    SeededNoise,
    analytic_gaussian_sigma,
    composition_epsilon,
    laplace_scale,
)


def balle_wang_delta(sigma: float, sensitivity: float, epsilon: float) -> float:
    """delta of the Gaussian mechanism (Balle & Wang 2018, Theorem 8), via scipy.stats."""
    a = sensitivity / (2 * sigma)
    b = epsilon * sigma / sensitivity
    return stats.norm.cdf(a - b) - math.exp(epsilon) * stats.norm.cdf(-a - b)


def advanced_composition(count: int, eps0: float, delta: float) -> float:
    """Total epsilon of ``count`` eps0-DP mechanisms (Dwork, Rothblum & Vadhan 2010)."""
    return math.sqrt(2 * count * math.log(1 / delta)) * eps0 + count * eps0 * (math.exp(eps0) - 1)


def test_laplace_scale():
    assert laplace_scale(0.5, 2.0) == pytest.approx(0.25)


@pytest.mark.parametrize("sensitivity", [0.01, 1.0, 30.0])
@pytest.mark.parametrize("epsilon", [0.05, 1.0, 10.0])
@pytest.mark.parametrize("delta", [1e-10, 1e-5, 0.1])
def test_analytic_gaussian_sigma_is_the_smallest_private_sigma(sensitivity, epsilon, delta):
    sigma = analytic_gaussian_sigma(sensitivity, epsilon, delta)
    assert balle_wang_delta(sigma, sensitivity, epsilon) <= delta
    assert balle_wang_delta(0.99 * sigma, sensitivity, epsilon) > delta


@pytest.mark.parametrize("delta", [1e-10, 1e-5])
def test_analytic_gaussian_sigma_beats_the_classical_rule_for_epsilon_below_one(delta):
    classical = math.sqrt(2 * math.log(1.25 / delta)) / 0.5
    assert analytic_gaussian_sigma(1.0, 0.5, delta) < classical


def test_analytic_gaussian_sigma_is_linear_in_sensitivity():
    assert analytic_gaussian_sigma(7.0, 1.0, 1e-6) == pytest.approx(7 * analytic_gaussian_sigma(1.0, 1.0, 1e-6))


@pytest.mark.parametrize("epsilon, delta", [(0.0, 1e-5), (-1.0, 1e-5), (1.0, 0.0), (1.0, 1.0)])
def test_analytic_gaussian_sigma_rejects_invalid_budgets(epsilon, delta):
    with pytest.raises(ValueError):
        analytic_gaussian_sigma(1.0, epsilon, delta)


@pytest.mark.parametrize("count", [2, 5, 10, 50, 100, 1000])
@pytest.mark.parametrize("epsilon", [0.1, 1.0, 5.0])
@pytest.mark.parametrize("delta", [1e-10, 1e-5, 0.1])
def test_composition_epsilon_is_the_largest_eps0_either_theorem_allows(count, epsilon, delta):
    eps0 = composition_epsilon(count, epsilon, delta)
    basic_ok = count * eps0 <= epsilon * (1 + 1e-12)
    advanced_ok = advanced_composition(count, eps0, delta) <= epsilon * (1 + 1e-12)
    assert basic_ok or advanced_ok
    bigger = eps0 * (1 + 1e-6)
    assert count * bigger > epsilon and advanced_composition(count, bigger, delta) > epsilon


def test_composition_epsilon_never_exceeds_the_target():
    eps0 = composition_epsilon(100, 0.1, 1e-5)  # advanced composition is the binding theorem here
    assert advanced_composition(100, eps0, 1e-5) <= 0.1


def test_composition_epsilon_falls_back_to_basic_composition():
    assert composition_epsilon(1, 0.7, 1e-5) == 0.7
    assert composition_epsilon(10, 1.0, 0.0) == pytest.approx(0.1)
    # Few mechanisms: basic composition wins; many: advanced composition wins.
    assert composition_epsilon(5, 1.0, 1e-10) == pytest.approx(0.2)
    assert composition_epsilon(1000, 1.0, 1e-5) > 1.0 / 1000


def test_seeded_noise_is_reproducible_and_keeps_shapes():
    values = np.arange(6.0).reshape(2, 3)
    first = SeededNoise(np.random.default_rng(5)).laplace(values, 1.0)
    second = SeededNoise(np.random.default_rng(5)).laplace(values, 1.0)
    np.testing.assert_array_equal(first, second)
    assert first.shape == (2, 3)
    assert not SeededNoise(np.random.default_rng(5)).private


@pytest.mark.parametrize(
    "kind, distribution",
    [("laplace", stats.laplace(scale=2.0)), ("gaussian", stats.norm(scale=2.0))],
)
def test_seeded_noise_distribution(kind, distribution):
    """KS test at level 1e-6 (false-failure rate 1e-6 over seeds; deterministic for this seed)."""
    values = np.full(5000, 3.0)
    noisy = getattr(SeededNoise(np.random.default_rng(6)), kind)(values, 2.0)
    assert stats.kstest(noisy - 3.0, distribution.cdf).pvalue > 1e-6


@pytest.mark.parametrize(
    "kind, distribution",
    [("laplace", stats.laplace(scale=0.5)), ("gaussian", stats.norm(scale=0.5))],
)
def test_opendp_noise_distribution(kind, distribution):
    """KS test at level 1e-6. OpenDP cannot be seeded, so this test is random: under a correct
    sampler its p-value is uniform and it fails falsely with probability 1e-6 per run."""
    sampler = OpenDPNoise()
    assert sampler.private
    values = np.full((40, 50), -1.0)
    noisy = getattr(sampler, kind)(values, 0.5)
    assert noisy.shape == (40, 50)
    assert stats.kstest((noisy + 1.0).ravel(), distribution.cdf).pvalue > 1e-6


def test_the_root_finder_is_scipys_brentq_to_the_last_bit():
    """stats.roots.brentq ports scipy.optimize.brentq so that the command line need not import
    scipy.optimize: on the calibration's own equations and on random cubics the roots agree exactly."""
    import math

    from scipy.optimize import brentq
    from scipy.special import ndtr

    from synthdp.stats.roots import brentq as _brentq

    rng = np.random.default_rng(1)
    compared = 0
    for _ in range(300):
        eps, delta = float(rng.uniform(0.01, 20)), float(10 ** rng.uniform(-12, -2))

        def excess(mu, eps=eps, delta=delta):
            return ndtr(-eps / mu + mu / 2) - math.exp(eps) * ndtr(-eps / mu - mu / 2) - delta

        if (excess(1e-6) > 0) != (excess(100.0) > 0):
            assert _brentq(excess, 1e-6, 100.0) == brentq(excess, 1e-6, 100.0, xtol=1e-12)
            compared += 1
        c = rng.normal(size=4)

        def cubic(x, c=c):
            return ((c[0] * x + c[1]) * x + c[2]) * x + c[3]

        if cubic(-10) * cubic(10) < 0:
            assert _brentq(cubic, -10.0, 10.0, xtol=1e-15) == brentq(cubic, -10.0, 10.0, xtol=1e-15)
            compared += 1
    assert compared > 300


@pytest.mark.parametrize("count, epsilon, delta", [
    (2, 1000.0, 1e-10), (100, 1000.0, 1e-300), (10_000, 1000.0, 0.5),  # expm1 overflowed past eps0 = 709.78
    (2, 1e-6, 1 - 1e-16), (100, 1e-3, 0.9999999), (7, 0.1, 0.9999999),  # the root above epsilon: "no sign change"
])
def test_composition_epsilon_at_extreme_budgets(count, epsilon, delta):
    """Laplace noise with advanced composition at epsilon = 1000 (math.expm1 raised OverflowError) and
    at delta just below 1 (the root lies above epsilon, outside the bracket searched), checked
    against the two theorems."""
    def composed(eps0: float) -> float:
        return min(count * eps0, math.sqrt(2 * count * math.log(1 / delta)) * eps0 + count * eps0 * math.expm1(eps0))

    eps0 = composition_epsilon(count, epsilon, delta)
    assert 0 < eps0 < math.inf
    assert composed(eps0) <= epsilon * (1 + 1e-12)
    assert composed(eps0 * (1 + 1e-6)) > epsilon


@pytest.mark.parametrize("delta", [1e-310, 5e-324])
def test_conversions_at_a_delta_whose_inverse_overflows(delta):
    """log(1 / delta) is inf below 5.6e-309: zcdp_epsilon's bracket was inf and its search never ended,
    and advanced composition's term was inf (so only basic composition was ever used)."""
    from synthdp.privacy.noise import zcdp_delta, zcdp_epsilon

    rho = 0.01
    epsilon = zcdp_epsilon(rho, delta)
    assert epsilon <= rho + 2 * math.sqrt(rho * -math.log(delta))  # Bun & Steinke's bound
    assert zcdp_delta(rho, epsilon) <= delta
    count, total = 10**6, 1.0
    eps0 = composition_epsilon(count, total, delta)
    assert eps0 > total / count  # advanced composition, the better here
    assert math.sqrt(2 * count * -math.log(delta)) * eps0 + count * eps0 * math.expm1(eps0) <= total * (1 + 1e-12)


@pytest.mark.parametrize("scale", [math.inf, math.nan, -1.0])
@pytest.mark.parametrize("kind", ["laplace", "gaussian"])
def test_a_noise_scale_that_is_not_finite_is_refused_before_any_draw(scale, kind):
    """A calibration that overflowed gave an infinite scale, and the release a table of NaN without a word:
    every sampler refuses a scale that is not a finite number >= 0, in one line, before it draws."""
    from synthdp.errors import SynthDPError
    from synthdp.privacy.noise import OpenDPNoise, SeededNoise

    for sampler in (OpenDPNoise(), SeededNoise(np.random.default_rng(0))):
        with pytest.raises(SynthDPError, match="is not a finite number >= 0") as refused:
            getattr(sampler, kind)(np.zeros(3), scale)
        assert "\n" not in str(refused.value)


def test_opendp_noise_leaves_opendps_features_as_it_found_them():
    """OpenDP's features are process-wide: drawing noise enabled "contrib" for good, opting the user's own
    OpenDP code into it. It is enabled while a sampler is made, and off again after where it was off."""
    from opendp import mod

    was_on = "contrib" in mod.GLOBAL_FEATURES
    try:
        for enabled in (False, True):
            (mod.enable_features if enabled else mod.disable_features)("contrib")
            sampler = OpenDPNoise()
            assert sampler.laplace(np.zeros(3), 1.0).shape == (3,) and sampler.gaussian(np.zeros(3), 1.0).shape == (3,)
            assert 0 <= sampler.noisy_max(np.arange(4.0), 1.0) < 4
            assert ("contrib" in mod.GLOBAL_FEATURES) is enabled
    finally:
        (mod.enable_features if was_on else mod.disable_features)("contrib")
