"""Noise: calibration of Laplace and Gaussian scales, and the samplers that draw the noise.

Calibration
-----------
* Laplace: a statistic with L1 sensitivity Delta released as value + Lap(b) is eps-DP for
  b = Delta / eps.
* Gaussian: the analytic Gaussian mechanism (Balle & Wang 2018, Theorem 8): value + N(0, s^2)
  with L2 sensitivity Delta is (eps, delta)-DP iff
  Phi(Delta/(2s) - eps s/Delta) - e^eps Phi(-Delta/(2s) - eps s/Delta) <= delta;
  we take the smallest such s. Unlike the classical sqrt(2 ln(1.25/delta)) rule it is exact
  and valid for every eps > 0.
* Advanced composition (Dwork, Rothblum & Vadhan 2010): k eps0-DP mechanisms compose to
  (sqrt(2k ln(1/delta)) eps0 + k eps0 (e^eps0 - 1), delta)-DP. Basic composition gives
  (k eps0, 0). Either theorem is valid, so the per-mechanism eps0 is the larger of the two.

Sampling
--------
Floating-point noise from numpy leaks through the low bits of its output (Mironov 2012).
:class:`OpenDPNoise` uses OpenDP's samplers, which are built to resist that, and is used
for every private run. :class:`SeededNoise` draws from a seeded numpy Generator so tests
and ``--seed`` runs are reproducible; it is not private against anyone who knows the seed.
"""

from __future__ import annotations

import functools
import math
import threading
from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
from scipy import special

from synthdp.errors import SynthDPError
from synthdp.stats.roots import brentq


def laplace_scale(l1_sensitivity: float, epsilon: float) -> float:
    """Laplace scale b making a statistic of L1 sensitivity ``l1_sensitivity`` epsilon-DP."""
    return l1_sensitivity / epsilon


def analytic_gaussian_sigma(l2_sensitivity: float, epsilon: float, delta: float) -> float:
    """Smallest sigma making the Gaussian mechanism (epsilon, delta)-DP (Balle & Wang 2018)."""
    if not (epsilon > 0 and 0 < delta < 1):
        raise SynthDPError("the Gaussian mechanism needs epsilon > 0 and 0 < delta < 1")

    def excess(log_s: float) -> float:  # delta(s) - delta, decreasing in s = sigma/Delta
        return _gdp_excess(math.exp(-log_s), epsilon, delta)

    low, high = -20.0, 20.0  # log(sigma/Delta); widened until the root is inside
    while excess(low) < 0:
        low -= 20.0
    while excess(high) > 0:
        high += 20.0
    log_s = brentq(excess, low, high, what="the noise calibration")
    s = math.exp(log_s) * (1 + 1e-9)  # stay on the private side of the root
    return s * l2_sensitivity


def _gdp_points(mu: float, epsilon: float) -> tuple[float, float]:
    """a = mu / 2 - epsilon / mu and b = a - mu: mu-GDP is (epsilon, delta)-DP at delta = Phi(a) -
    e^epsilon Phi(b) (Balle & Wang 2018, Theorem 8; sigma = 1 / mu)."""
    return mu / 2 - epsilon / mu, -mu / 2 - epsilon / mu


def _log_gdp_delta(mu: float, epsilon: float) -> float:
    """log of the delta at which mu-GDP is (epsilon, delta)-DP (:func:`_gdp_points`; -inf where it is 0).

    With a < 0 both terms are far in the tail and nearly equal when mu is small (epsilon = 1e-6,
    delta = 1e-300: 1e-291 each), and the difference of two rounded values loses every digit of
    it. Phi(x) = erfcx(-x / sqrt2) e^(-x^2 / 2) / 2, and b^2 - a^2 = 2 epsilon exactly, so the
    difference is e^(-a^2 / 2) / 2 (erfcx(-a / sqrt2) - erfcx(-b / sqrt2)): only erfcx's values,
    of order 1, are subtracted; in logs, so that a delta near the least normal float does not
    underflow to a few bits.
    """
    a, b = _gdp_points(mu, epsilon)
    if a < 0:
        u, width = -a / math.sqrt(2), mu / math.sqrt(2)  # erfcx's arguments -a / sqrt2 and -b / sqrt2 = u + width
        if width < 1e-3 * u:  # so close that erfcx's values share most digits: Simpson's rule on -erfcx'
            def slope(t: float) -> float:  # -erfcx'(t) = 2 / sqrt(pi) - 2 t erfcx(t), relative error ~ t^2 1e-16
                return 2 / math.sqrt(math.pi) - 2 * t * special.erfcx(t)

            difference = width / 6 * (slope(u) + 4 * slope(u + width / 2) + slope(u + width))
        else:
            difference = special.erfcx(u) - special.erfcx(u + width)
        return -a * a / 2 + math.log(difference / 2) if difference > 0 else -math.inf
    delta = special.ndtr(a) - math.exp(epsilon + special.log_ndtr(b))
    return math.log(delta) if delta > 0 else -math.inf


def _gdp_excess(mu: float, epsilon: float, delta: float) -> float:
    """A number of the sign of delta(mu, epsilon) - delta (:func:`_log_gdp_delta`), for a root search: the
    difference of their logs; for delta above 1/2, (1 - delta) less 1 - delta(mu, epsilon) = Phi(-a) +
    e^epsilon Phi(b), a sum: near 1 (delta = 1 - 1e-16) the deltas themselves differ only in their last
    bit, and the calibration and the ledger's conversion back disagreed by 1 %."""
    if delta <= 0.5:
        return _log_gdp_delta(mu, epsilon) - math.log(delta)
    a, b = _gdp_points(mu, epsilon)
    return (1 - delta) - (special.ndtr(-a) + math.exp(epsilon + special.log_ndtr(b)))


def gdp_mu(epsilon: float, delta: float) -> float:
    """The largest mu such that mu-GDP implies (epsilon, delta)-DP.

    mu-Gaussian differential privacy (Dong, Roth & Su 2022) is the privacy of one Gaussian
    mechanism with sensitivity / sigma = mu; it implies (epsilon, delta(epsilon))-DP for
    every epsilon, with exactly the curve the analytic Gaussian mechanism inverts, so
    mu = 1 / (sigma for sensitivity 1).
    """
    return 1.0 / analytic_gaussian_sigma(1.0, epsilon, delta)


def gdp_epsilon(mu: float, delta: float) -> float:
    """The smallest epsilon such that mu-GDP is (epsilon, delta)-DP (the inverse of :func:`gdp_mu`)."""
    if mu <= 0:
        return 0.0

    def excess(epsilon: float) -> float:  # delta(epsilon) - delta, decreasing in epsilon
        return _gdp_excess(mu, epsilon, delta)

    if excess(0.0) <= 0:
        return 0.0
    high = 0.0  # log(epsilon): searched in logs, to 1e-12 relative whatever epsilon's size (1e-6 and less)
    while excess(math.exp(high)) > 0:
        high += 1.0
    low = high - 1.0
    while excess(math.exp(low)) <= 0:
        low -= 20.0
    return math.exp(brentq(lambda t: excess(math.exp(t)), low, high, what="the noise calibration")) * (1 + 1e-9)


def zcdp_delta(rho: float, epsilon: float) -> float:
    """The delta at which rho-zCDP is (epsilon, delta)-DP: Canonne, Kamath & Steinke (2020,
    Corollary 13), the infimum over alpha > 1 of

        exp((alpha - 1) (alpha rho - epsilon)) / (alpha - 1) * (1 - 1 / alpha)^alpha,

    each alpha a valid bound (from the Renyi divergence of order alpha, alpha rho), so an
    approximate minimiser errs on the private side. Its log is convex in alpha on the range
    searched; golden-section search on log(alpha - 1), then the best point seen.
    """
    if rho <= 0:
        return 0.0

    def log_delta(alpha: float) -> float:
        return (alpha - 1) * (alpha * rho - epsilon) - math.log(alpha - 1) + alpha * math.log1p(-1 / alpha)

    low, high = math.log(1e-9), math.log(max(2.0, 4.0 * (epsilon + 1.0) / rho))
    golden = (math.sqrt(5.0) - 1.0) / 2.0
    a, b = high - golden * (high - low), low + golden * (high - low)
    fa, fb = log_delta(1 + math.exp(a)), log_delta(1 + math.exp(b))
    best = min(fa, fb)
    for _ in range(200):
        if fa <= fb:
            high, b, fb = b, a, fa
            a = high - golden * (high - low)
            fa = log_delta(1 + math.exp(a))
        else:
            low, a, fa = a, b, fb
            b = low + golden * (high - low)
            fb = log_delta(1 + math.exp(b))
        best = min(best, fa, fb)
        if high - low < 1e-10:
            break
    return min(1.0, math.exp(best))


def zcdp_epsilon(rho: float, delta: float) -> float:
    """The smallest epsilon (to 1e-9 relative, rounded up) at which rho-zCDP is (epsilon, delta)-DP
    (:func:`zcdp_delta`)."""
    if rho <= 0:
        return 0.0
    low, high = 0.0, rho + 2.0 * math.sqrt(rho * -math.log(delta)) + 1.0  # Bun & Steinke's bound; -log(delta): 1 / delta overflows below 5.6e-309
    while zcdp_delta(rho, high) > delta:
        high *= 2.0
    for _ in range(200):
        middle = (low + high) / 2.0
        if zcdp_delta(rho, middle) > delta:
            low = middle
        else:
            high = middle
        if high - low <= 1e-12 * high:
            break
    return high * (1 + 1e-9)


@functools.lru_cache(maxsize=256)
def zcdp_rho(epsilon: float, delta: float) -> float:
    """The largest rho (to 1e-9 relative, rounded down) such that rho-zCDP is (epsilon, delta)-DP:
    zcdp_delta(rho, epsilon) <= delta, increasing in rho (:func:`zcdp_delta`). At (1, 1e-10):
    0.013243, the rho of OpenDP's conversion (and smartnoise-synth's)."""
    low, high = 0.0, epsilon
    while zcdp_delta(high, epsilon) <= delta:
        high *= 2.0
    for _ in range(200):
        middle = (low + high) / 2.0
        if zcdp_delta(middle, epsilon) <= delta:
            low = middle
        else:
            high = middle
        if high - low <= 1e-12 * high:
            break
    return low * (1 - 4e-9)  # so that zcdp_epsilon, rounded up, stays within the ledger's slack


def composition_epsilon(count: int, epsilon: float, delta: float) -> float:
    """Per-mechanism eps0 such that ``count`` eps0-DP mechanisms are (epsilon, delta)-DP."""
    basic = epsilon / count
    if delta <= 0 or count == 1:
        return basic
    # log(1 / delta), rounded up near delta = 1 (the private side), but -log(delta) where 1 / delta overflows (below 5.6e-309)
    log_term = math.sqrt(2 * count * (math.log(1 / delta) if delta > 1e-300 else -math.log(delta)))

    def total(eps0: float) -> float:  # expm1 overflows past 709.78, where the sum is far above any epsilon <= 1e6
        return log_term * eps0 + count * eps0 * math.expm1(min(eps0, 700.0)) - epsilon

    high = epsilon  # delta near 1 makes log_term small: the root can then lie above epsilon
    while total(high) < 0:
        high *= 2
    advanced = brentq(total, 0.0, high, xtol=1e-15, what="the noise calibration") * (1 - 1e-9)  # private side of the root
    return max(basic, advanced)


def expected_l1_norm(kind: str, scale: float, count: int) -> float:
    """E ||noise||_1 of ``count`` draws: Laplace(b) has E|X| = b, N(0, s^2) has E|X| = s sqrt(2/pi)."""
    return count * scale * (math.sqrt(2 / math.pi) if kind == "gaussian" else 1.0)


def noise_standard_deviation(kind: str, scale: float) -> float:
    """Standard deviation of one draw: N(0, s^2) has s, Laplace(b) has sqrt(2) b."""
    return scale if kind == "gaussian" else math.sqrt(2) * scale


class NoiseSampler(ABC):
    """Adds calibrated noise to a vector of statistics."""

    name: str
    private: bool

    @abstractmethod
    def laplace(self, values: np.ndarray, scale: float) -> np.ndarray: ...

    @abstractmethod
    def gaussian(self, values: np.ndarray, sigma: float) -> np.ndarray: ...

    @abstractmethod
    def noisy_max(self, scores: np.ndarray, scale: float) -> int:
        """The index of the largest of ``scores`` + independent Gumbel(``scale``) noise: the
        exponential mechanism with weights exp(score / scale) (report noisy max; McSherry & Talwar
        2007, the Gumbel-max form). For scores of l-infinity sensitivity Delta it is
        (2 Delta / scale)-DP and, bounded range, (2 Delta / scale)^2 / 8-zCDP (Cesar & Rogers 2021)."""


def _drawable(scale: float) -> float:
    """``scale`` as a float, where it is a finite number >= 0; else refused before any noise is drawn: an
    infinite scale (a calibration that overflowed) made a table of NaN without a word."""
    scale = float(scale)
    if not (math.isfinite(scale) and scale >= 0):
        raise SynthDPError(f"a noise scale of {scale} is not a finite number >= 0 (a synthdp bug: nothing was "
                           "released; please report it with the command)")
    return scale


_FEATURES_LOCK = threading.Lock()  # OpenDP's features are process-wide: one switch at a time


@contextmanager
def _contrib(mod) -> Iterator[None]:
    """OpenDP's "contrib" feature, which its samplers' constructors ask for, enabled while inside and switched
    off again after where the process had not enabled it: a fit does not opt the user's own OpenDP code into
    it (``opendp.mod.GLOBAL_FEATURES`` is the process's). A measurement made inside runs outside alike."""
    with _FEATURES_LOCK:
        features = getattr(mod, "GLOBAL_FEATURES", None)  # None: an OpenDP that does not say (left enabled)
        switch = features is not None and "contrib" not in features
        if switch or features is None:
            mod.enable_features("contrib")
        try:
            yield
        finally:
            if switch:
                mod.disable_features("contrib")


class OpenDPNoise(NoiseSampler):
    """OpenDP's floating-point-safe Laplace and Gaussian samplers.

    Measured: docs/decisions/opendp-noise.md.
    """

    name = "opendp"
    private = True

    def __init__(self) -> None:
        # opendp's modules, not opendp.prelude: the prelude also loads scikit-learn (docs/decisions/lazy-imports.md)
        from opendp import domains, measurements, metrics, mod

        self._measurements, self._metrics, self._domains, self._mod = measurements, metrics, domains, mod
        with _contrib(mod):
            self._domain = domains.vector_domain(domains.atom_domain(T=float, nan=False))

    def laplace(self, values: np.ndarray, scale: float) -> np.ndarray:
        scale = _drawable(scale)
        with _contrib(self._mod):
            measurement = self._measurements.make_laplace(self._domain, self._metrics.l1_distance(T=float), scale=scale)
        return self._apply(measurement, values)

    def gaussian(self, values: np.ndarray, sigma: float) -> np.ndarray:
        sigma = _drawable(sigma)
        with _contrib(self._mod):
            measurement = self._measurements.make_gaussian(self._domain, self._metrics.l2_distance(T=float), scale=sigma)
        return self._apply(measurement, values)

    def noisy_max(self, scores: np.ndarray, scale: float) -> int:
        import warnings

        with _contrib(self._mod), warnings.catch_warnings():  # deprecated from OpenDP 0.14 for make_noisy_max, the same Gumbel noise
            warnings.simplefilter("ignore", DeprecationWarning)
            domain = self._domains.vector_domain(self._domains.atom_domain(T=float, nan=False))
            metric = self._metrics.linf_distance(T=float)
            measurement = self._measurements.make_report_noisy_max_gumbel(domain, metric, scale=float(scale),
                                                                          optimize="max")
        return int(measurement([float(v) for v in np.asarray(scores, dtype=float).ravel()]))

    @staticmethod
    def _apply(measurement, values: np.ndarray) -> np.ndarray:
        values = np.asarray(values, dtype=float)
        noisy = measurement([float(v) for v in values.ravel()])
        return np.asarray(noisy, dtype=float).reshape(values.shape)


class SeededNoise(NoiseSampler):
    """numpy noise from a seeded Generator: reproducible, for testing only."""

    private = False

    def __init__(self, rng: np.random.Generator) -> None:
        self.name = "numpy (seeded; for testing: not private against anyone who knows the seed)"
        self._rng = rng

    def laplace(self, values: np.ndarray, scale: float) -> np.ndarray:
        values = np.asarray(values, dtype=float)
        return values + self._rng.laplace(0.0, _drawable(scale), size=values.shape)

    def gaussian(self, values: np.ndarray, sigma: float) -> np.ndarray:
        values = np.asarray(values, dtype=float)
        return values + self._rng.normal(0.0, _drawable(sigma), size=values.shape)

    def noisy_max(self, scores: np.ndarray, scale: float) -> int:
        scores = np.asarray(scores, dtype=float).ravel()
        return int(np.argmax(scores + self._rng.gumbel(0.0, scale, size=scores.shape)))
