"""How the privacy budget is split between stages, and the noise each stage's share calibrates."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from synthdp.privacy.noise import (
    composition_epsilon,
    gdp_epsilon,
    gdp_mu,
    laplace_scale,
    noise_standard_deviation,
    zcdp_epsilon,
    zcdp_rho,
)
from synthdp.privacy.sensitivity import ROWS, Neighbours, bounded_means_sensitivity, per_value_sensitivity


@dataclass(frozen=True)
class StageBudget:
    """The budget of one stage.

    ``mu`` is set for Gaussian noise: the stage's Gaussian-DP parameter, which the ledger
    composes exactly with the other Gaussian stages; ``epsilon`` and ``delta`` are then what
    the stage alone would cost at the run's delta. Otherwise the stage spends
    (``epsilon``, ``delta``) under basic composition. Under zero-concentrated composition
    (:class:`Budget`'s "zcdp") ``mu`` stands for the stage's rho = mu^2 / 2: a Gaussian release of
    sensitivity / sigma = mu is exactly that rho-zCDP, and a stage of exponential mechanisms
    spends it (:func:`synthdp.privacy.release.release_pair_selection`).
    """

    epsilon: float
    delta: float
    mu: float | None = None

    @classmethod
    def whole(cls, epsilon: float, delta: float, gaussian: bool) -> StageBudget:
        """All of (epsilon, delta) for a single stage (as its mu if the noise is Gaussian)."""
        return cls(epsilon, delta, gdp_mu(epsilon, delta)) if gaussian else cls(epsilon, delta)

    def noise_scale(self, l1_sensitivity: float, l2_sensitivity: float) -> float:
        """The noise calibrated to a release with these sensitivities: the Gaussian sigma
        l2 / mu under Gaussian DP, else the Laplace scale l1 / epsilon."""
        if self.mu is not None:
            return l2_sensitivity / self.mu
        return laplace_scale(l1_sensitivity, self.epsilon)

    def noise_sd(self, l1_sensitivity: float, l2_sensitivity: float) -> float:
        """Standard deviation of the noise on each value of a release with these sensitivities."""
        return noise_standard_deviation(self.noise_kind, self.noise_scale(l1_sensitivity, l2_sensitivity))

    @property
    def noise_kind(self) -> str:
        """The noise this budget calibrates: Gaussian with a mu, else Laplace."""
        return "gaussian" if self.mu is not None else "laplace"

    @property
    def laplace_per_value(self) -> bool:
        """Laplace noise with delta > 0: each value is released alone, and the values compose
        by the better of basic and advanced composition (:func:`synthdp.privacy.noise.composition_epsilon`)."""
        return self.mu is None and self.delta > 0

    def means_noise_scale(self, count: int, n: float, neighbours: Neighbours = ROWS) -> float:
        """The noise scale on each of ``count`` means over n rows of any functions with values
        in [-1, 1], as :func:`synthdp.privacy.release.release_bounded_means` calibrates it: per value
        (sensitivity 2/n, by unit K/n: :func:`synthdp.privacy.sensitivity.per_value_sensitivity`) with advanced composition when :attr:`laplace_per_value`, else
        :meth:`noise_scale` of the whole vector's sensitivities
        (:func:`synthdp.privacy.sensitivity.bounded_means_sensitivity`; the Chebyshev moments' derived
        sensitivity can be lower, :func:`synthdp.privacy.sensitivity.moments_sensitivity`)."""
        if self.laplace_per_value:
            return laplace_scale(per_value_sensitivity(n, neighbours), composition_epsilon(count, self.epsilon, self.delta))
        return self.noise_scale(*bounded_means_sensitivity(count, n, neighbours))

    def means_noise_sd(self, count: int, n: float, neighbours: Neighbours = ROWS) -> float:
        """Standard deviation of the noise on each mean of :meth:`means_noise_scale`."""
        return noise_standard_deviation(self.noise_kind, self.means_noise_scale(count, n, neighbours))

    @property
    def rho(self) -> float:
        """The zCDP rho of a stage with a mu (mu^2 / 2); 0 without one."""
        return 0.0 if self.mu is None else self.mu**2 / 2

    def part(self, fraction: float) -> StageBudget:
        """A fraction of this budget for a sub-release (mu composes in squares, so sqrt)."""
        if self.mu is None:
            return StageBudget(self.epsilon * fraction, self.delta * fraction)
        mu = self.mu * math.sqrt(fraction)
        return StageBudget(gdp_epsilon(mu, self.delta), self.delta, mu)


@dataclass(frozen=True)
class Budget:
    """How (epsilon, delta) is split between the stages.

    ``bounds`` and ``clip_count`` are Laplace releases that spend that much epsilon. The
    rest, ``remaining_epsilon`` with all of delta, is shared by the stages of ``shares``
    (pairs of stage name and share, summing to 1). With Gaussian noise
    (``composition = "gdp"``) stage s gets mu_s = sqrt(share_s) mu, where mu-GDP is exactly
    (remaining_epsilon, delta)-DP, so the stages together spend exactly that. Where a stage
    is not Gaussian but has a zCDP guarantee (the exponential mechanisms of the pairs'
    selection), ``composition = "zcdp"``: rho-zCDP is (remaining_epsilon, delta)-DP
    (:func:`synthdp.privacy.noise.zcdp_rho`; 0.0132 at (1, 1e-10), where mu-GDP allows the
    Gaussian stages mu^2 / 2 = 0.0140), and stage s gets rho_s = share_s rho, carried as
    mu_s = sqrt(2 rho_s). Otherwise (``"basic"``) it gets share_s (remaining_epsilon, delta)
    by basic composition.
    """

    bounds: float  # epsilon for DP estimates of missing bounds
    clip_count: float
    remaining_epsilon: float
    delta: float
    composition: str  # "gdp", "zcdp" or "basic"
    shares: tuple[tuple[str, float], ...]

    def share(self, stage: str) -> float:
        return dict(self.shares).get(stage, 0.0)

    def stage(self, stage: str) -> StageBudget:
        share = self.share(stage)
        if self.composition == "gdp":
            mu = math.sqrt(share) * gdp_mu(self.remaining_epsilon, self.delta)
            return StageBudget(gdp_epsilon(mu, self.delta), self.delta, mu)
        if self.composition == "zcdp":
            rho = share * zcdp_rho(self.remaining_epsilon, self.delta)
            return StageBudget(zcdp_epsilon(rho, self.delta), self.delta, math.sqrt(2 * rho))
        return StageBudget(self.remaining_epsilon * share, self.delta * share)

    def to_dict(self) -> dict:
        return {"bounds_epsilon": self.bounds, "clip_count_epsilon": self.clip_count,
                "composition": self.composition,
                "stages": {name: {"share": share, **asdict(self.stage(name))} for name, share in self.shares}}
