import math

import pytest

from synthdp.errors import SynthDPError
from synthdp.privacy.ledger import PrivacyEvent, PrivacyLedger
from synthdp.privacy.noise import gdp_epsilon, gdp_mu


def event(stage: str, epsilon: float, delta: float = 0.0) -> PrivacyEvent:
    return PrivacyEvent(stage, "Laplace", 0.1, "l1", 0.2, epsilon, delta, "3 moments")


def test_spending_is_the_sum_of_the_events():
    ledger = PrivacyLedger(1.0, 1e-6)
    ledger.record(event("pca", 0.3, 4e-7))
    ledger.record(event("moments", 0.5, 5e-7))
    assert ledger.spent_epsilon == pytest.approx(0.8)
    assert ledger.spent_delta == pytest.approx(9e-7)
    assert [e.stage for e in ledger.events] == ["pca", "moments"]


def test_the_whole_budget_can_be_spent_despite_round_off():
    ledger = PrivacyLedger(0.3, 0.0)
    ledger.record(event("pca", 0.1))
    ledger.record(event("moments", 0.2))  # 0.1 + 0.2 > 0.3 in floating point
    assert len(ledger.events) == 2


@pytest.mark.parametrize("epsilon, delta", [(0.61, 0.0), (0.5, 1e-7), (0.6 * (1 + 1e-6), 0.0)])
def test_overdraw_is_refused_and_not_recorded(epsilon, delta):
    ledger = PrivacyLedger(1.0, 0.0)
    ledger.record(event("pca", 0.4))
    with pytest.raises(SynthDPError, match="budget exceeded"):
        ledger.record(event("moments", epsilon, delta))
    assert len(ledger.events) == 1
    assert ledger.spent_epsilon == pytest.approx(0.4)


def test_to_dict_reports_budget_spending_stages_and_caveats():
    ledger = PrivacyLedger(2.0, 1e-5)
    ledger.record(event("moments", 1.5, 1e-5))
    report = ledger.to_dict()
    assert report["differentially_private"] is True
    assert report["epsilon_budget"] == 2.0 and report["delta_budget"] == 1e-5
    assert report["epsilon_spent"] == 1.5 and report["delta_spent"] == 1e-5
    assert report["stages"] == [
        {
            "stage": "moments",
            "mechanism": "Laplace",
            "sensitivity": 0.1,
            "sensitivity_norm": "l1",
            "noise_scale": 0.2,
            "epsilon": 1.5,
            "delta": 1e-5,
            "released": "3 moments",
            "mu": None,
        }
    ]
    ledger.add_caveat("bounds read from the data")
    report = ledger.to_dict()
    assert report["differentially_private"] is False
    assert report["caveats"] == ["bounds read from the data"]


def gaussian(stage: str, mu: float) -> PrivacyEvent:
    return PrivacyEvent(stage, "Gaussian", 0.1, "l2", 0.1 / mu, 0.0, 1e-6, "3 moments", mu=mu)


def test_gaussian_events_compose_in_gdp_and_laplace_events_add():
    epsilon, delta, laplace = 1.0, 1e-6, 0.1
    mu = gdp_mu(epsilon - laplace, delta)
    ledger = PrivacyLedger(epsilon, delta)
    ledger.record(event("clip_count", laplace))
    for stage, share in (("moments", 0.4), ("marginals", 0.3), ("correlation", 0.3)):
        ledger.record(gaussian(stage, math.sqrt(share) * mu))
    assert ledger.gaussian_mu == pytest.approx(mu)
    assert ledger.spent_epsilon == pytest.approx(epsilon, rel=1e-8) and ledger.spent_delta == delta
    # the same three stages under basic composition would each get a third of the epsilon,
    # which needs more noise than sqrt(3) times that of one stage with all of it
    assert gdp_mu((epsilon - laplace) / 3, delta / 3) < mu / math.sqrt(3)
    with pytest.raises(SynthDPError, match="budget exceeded"):
        ledger.record(gaussian("more", 0.01 * mu))
    assert "Gaussian DP" in ledger.to_dict()["composition"]


def test_gaussian_events_need_delta_left():
    ledger = PrivacyLedger(1.0, 1e-6)
    ledger.record(event("approximate", 0.1, 1e-6))
    with pytest.raises(SynthDPError, match="budget exceeded"):
        ledger.record(gaussian("moments", 0.01))


@pytest.mark.parametrize("epsilon, delta", [(0.1, 1e-10), (1.0, 1e-10), (1.0, 1e-5), (8.0, 1e-6), (1000.0, 0.5)])
def test_gdp_conversions_invert_each_other(epsilon, delta):
    assert gdp_epsilon(gdp_mu(epsilon, delta), delta) == pytest.approx(epsilon, rel=1e-7)
    assert gdp_epsilon(gdp_mu(epsilon, delta), delta) <= epsilon * (1 + 1e-8)  # never reports less than spent
