import pytest

from synthdp.errors import SynthDPError
from synthdp.ledger import PrivacyEvent, PrivacyLedger


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
    with pytest.raises(SynthDPError):
        ledger.check(epsilon, delta)
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
        }
    ]
    ledger.add_caveat("bounds read from the data")
    report = ledger.to_dict()
    assert report["differentially_private"] is False
    assert report["caveats"] == ["bounds read from the data"]
