"""The privacy ledger: every use of private data is recorded here as an event.

Stages compose by basic composition: the totals are the sums of the events' epsilons and
deltas, and a stage that would overdraw the budget is refused before it touches the data.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from .errors import SynthDPError

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
        The budget this event spends.
    released : str
        What was released, in words (shapes and counts, never values).
    """

    stage: str
    mechanism: str
    sensitivity: float
    sensitivity_norm: str
    noise_scale: float
    epsilon: float
    delta: float
    released: str


class PrivacyLedger:
    """Tracks spending against a total (epsilon, delta) budget."""

    def __init__(self, epsilon: float, delta: float) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.events: list[PrivacyEvent] = []
        self.caveats: list[str] = []  # reasons the release is weaker than (epsilon, delta)-DP

    @property
    def spent_epsilon(self) -> float:
        return sum(e.epsilon for e in self.events)

    @property
    def spent_delta(self) -> float:
        return sum(e.delta for e in self.events)

    def check(self, epsilon: float, delta: float) -> None:
        """Refuse a spend that would exceed the budget."""
        if self.spent_epsilon + epsilon > self.epsilon * (1 + _SLACK) or (
            self.spent_delta + delta > self.delta * (1 + _SLACK)
        ):
            raise SynthDPError("privacy budget exceeded: the stages ask for more than epsilon/delta")

    def record(self, event: PrivacyEvent) -> None:
        self.check(event.epsilon, event.delta)
        self.events.append(event)

    def event(self, stage: str) -> PrivacyEvent:
        """The event recorded for ``stage`` (each stage is recorded once)."""
        (found,) = [e for e in self.events if e.stage == stage]
        return found

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
            "composition": "basic (sum over stages)",
            "stages": [asdict(e) for e in self.events],
        }
