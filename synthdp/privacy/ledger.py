"""The privacy ledger: every use of private data is recorded here as an event.

Two kinds of event compose into the totals:

* Laplace (and other (epsilon, delta)) releases add up by basic composition.
* Gaussian releases carry mu, their Gaussian-DP parameter (sensitivity / sigma; Dong, Roth
  & Su 2022). Gaussian releases compose exactly in GDP, adaptively too: together they are
  sqrt(sum mu_i^2)-GDP, which is converted once into epsilon at the delta left over by the
  other events. Splitting one Gaussian budget over k stages this way costs each stage a
  factor sqrt(k) in noise, against about k under basic composition.
* Exponential mechanisms (the pairs' selection) carry rho, their zero-concentrated DP
  parameter (Bun & Steinke 2016; (2 Delta / scale)^2 / 8 each, bounded range: Cesar & Rogers
  2021). Where one is recorded, every Gaussian release counts as the rho-zCDP it is exactly
  (mu^2 / 2), the rhos add, adaptively too, and their sum is converted once into epsilon at the
  delta the basic events leave (Canonne, Kamath & Steinke 2020).

A stage that would overdraw the budget is refused before it touches the data.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from synthdp.errors import SynthDPError
from synthdp.privacy.noise import gdp_epsilon, zcdp_epsilon

_SLACK = 1e-9  # relative tolerance for float round-off in budget sums


@dataclass(frozen=True)
class PrivacyEvent:
    """One release of private information.

    Attributes
    ----------
    stage : str
        Pipeline stage ("moments", "pca", "clip_count", "bounds").
    mechanism : str
        How the noise was added, e.g. "Laplace", "Gaussian (analytic)".
    sensitivity : float
        Sensitivity of the released statistic under replace-one neighbours.
    sensitivity_norm : str
        "l1" or "l2" (for matrices, the Frobenius norm is the l2 norm of the entries).
    noise_scale : float
        Laplace scale b or Gaussian standard deviation sigma of each released value.
    epsilon, delta : float
        The budget this event spends under basic composition. For a Gaussian event
        (``mu`` set) they are what the event alone would cost at the run's delta, for
        information: the ledger composes Gaussian events through mu instead.
    released : str
        What was released, in words (shapes and counts, never values).
    mu : float or None
        Gaussian-DP parameter of a Gaussian release (its l2 sensitivity over sigma,
        combined over its iterations); None for other mechanisms.
    rho : float or None
        zCDP parameter of a non-Gaussian release that has one (the exponential mechanisms of
        the pairs' selection), composed with the Gaussian ones as zCDP; None for others.
    """

    stage: str
    mechanism: str
    sensitivity: float
    sensitivity_norm: str
    noise_scale: float
    epsilon: float
    delta: float
    released: str
    mu: float | None = None
    rho: float | None = None


class PrivacyLedger:
    """Tracks spending against a total (epsilon, delta) budget."""

    def __init__(self, epsilon: float, delta: float) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.events: list[PrivacyEvent] = []
        self.caveats: list[str] = []  # reasons the release is weaker than (epsilon, delta)-DP

    @property
    def spent_epsilon(self) -> float:
        return self._totals(self.events)[0]

    @property
    def spent_delta(self) -> float:
        return self._totals(self.events)[1]

    @property
    def gaussian_mu(self) -> float:
        """mu of all Gaussian events together (0 if there are none)."""
        return math.sqrt(sum(e.mu**2 for e in self.events if e.mu is not None))

    @property
    def concentrated(self) -> bool:
        """Whether the Gaussian events compose as zCDP with an exponential mechanism's rho."""
        return any(e.rho is not None for e in self.events)

    def _totals(self, events: list[PrivacyEvent]) -> tuple[float, float]:
        basic = [e for e in events if e.mu is None and e.rho is None]
        epsilon, delta = sum(e.epsilon for e in basic), sum(e.delta for e in basic)
        mus = [e.mu for e in events if e.mu is not None]
        rhos = [e.rho for e in events if e.rho is not None]
        if mus or rhos:  # the Gaussian (and zCDP) events get all the delta the others leave
            gaussian_delta = self.delta - delta
            if gaussian_delta <= 0:
                return math.inf, self.delta
            if rhos:
                epsilon += zcdp_epsilon(sum(rhos) + sum(mu**2 / 2 for mu in mus), gaussian_delta)
            else:
                epsilon += gdp_epsilon(math.sqrt(sum(mu**2 for mu in mus)), gaussian_delta)
            delta = self.delta
        return epsilon, delta

    def record(self, event: PrivacyEvent) -> None:
        """Add an event; refuse it if the totals would exceed the budget."""
        epsilon, delta = self._totals([*self.events, event])
        if epsilon > self.epsilon * (1 + _SLACK) or delta > self.delta * (1 + _SLACK):
            raise SynthDPError(f"privacy budget exceeded at stage '{event.stage}': the stages would spend epsilon "
                               f"{epsilon:.6g}, delta {delta:.3g} of epsilon {self.epsilon:.6g}, delta {self.delta:.3g} "
                               "(a check the plan should have made before the data was read: please report it)")
        self.events.append(event)

    def event(self, stage: str) -> PrivacyEvent:
        """The event recorded for ``stage`` (each stage is recorded once)."""
        (found,) = [e for e in self.events if e.stage == stage]
        return found

    def _composition_text(self) -> str:
        if self.concentrated:
            rho = sum(e.rho for e in self.events if e.rho is not None) + self.gaussian_mu**2 / 2
            return ("Gaussian and exponential-mechanism stages: zero-concentrated DP, rho = the sum of the "
                    f"stages' rho (mu^2 / 2 for a Gaussian one) = {rho:.6g}, converted to epsilon at the delta the "
                    "other stages leave; other stages: basic (sum)")
        if not any(e.mu is not None for e in self.events):
            return "basic (sum over stages)"
        return ("Gaussian stages: Gaussian DP, mu = sqrt(sum of the stages' mu^2) = "
                f"{self.gaussian_mu:.6g}, converted to epsilon at the delta the other stages "
                "leave; other stages: basic (sum)")

    def add_caveat(self, text: str) -> None:
        self.caveats.append(text)

    def to_dict(self) -> dict:
        return {
            "differentially_private": not self.caveats,
            "caveats": list(self.caveats),
            "epsilon_budget": self.epsilon,
            "delta_budget": self.delta,
            "epsilon_spent": self.spent_epsilon,
            "delta_spent": self.spent_delta,
            "composition": self._composition_text(),
            "stages": [{key: value for key, value in asdict(e).items() if key != "rho" or value is not None}
                       for e in self.events],
        }
