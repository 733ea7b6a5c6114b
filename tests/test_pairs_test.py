"""The pairs test, a design study's alternative (StudyOptions(pairs_test=True), not the product):
where the default releases no pairs but a block of related columns could show, a private test
decides whether they are released (synthdp.pipeline.plan.pairs_test_planned)."""

import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from synthdp.config import SynthConfig
from synthdp.pipeline.plan import PAIRS_TEST_SHARE, make_plan, pairs_test_planned
from synthdp.pipeline.report import privacy_report
from synthdp.pipeline.run import StudyOptions, fit
from synthdp.postprocess.pairs import SPIKE_RATIO, block_stands_out
from synthdp.privacy.noise import gdp_mu
from synthdp.privacy.release import bulk_edge, pairs_test_statistic


def _gdp_total(budget) -> float:
    """mu of every stage of a Gaussian budget together."""
    return math.sqrt(sum(budget.stage(stage).mu ** 2 for stage, _ in budget.shares))


def test_the_test_is_planned_only_where_the_default_releases_no_pairs_and_a_block_could_show():
    """Asked for (pairs_test=True): WDBC's and CRM's sizes at (1, 1e-10) and (4, 1e-10): planned
    (noise above the limit at 0.3); PKS's and CTG's at (1, 1e-10): not (their pairs are released
    pair by pair); not at pure epsilon (Laplace: the histograms could not be pooled at no cost),
    not with favour="relationships" or a user's correlation_share, not where even d copies of one
    column would stay under the line. The product plans none."""
    config = SynthConfig(epsilon=1.0, delta=1e-10)
    assert make_plan(config, 569, 30, True).pairs_test is None
    for n, d in ((569, 30), (1993, 100)):
        for epsilon in (1.0, 4.0):
            plan = make_plan(replace(config, epsilon=epsilon), n, d, True, pairs_test=True)
            assert plan.pairs_test is not None and plan.pairs_test.share == PAIRS_TEST_SHARE
            assert plan.releases_pairs and plan.pairs_as_matrix  # the plan if the test finds a block
    for n, d in ((5875, 20), (2126, 20)):
        assert make_plan(config, n, d, True, pairs_test=True).pairs_test is None
    assert make_plan(replace(config, delta=0.0), 2126, 20, True, pairs_test=True).pairs_test is None
    assert make_plan(replace(config, favour="relationships"), 569, 30, True, pairs_test=True).pairs_test is None
    assert make_plan(replace(config, correlation_share=0.3), 569, 30, True, pairs_test=True).pairs_test is None
    assert not pairs_test_planned(config, 40, 30, 1.0)  # noise sd 17 on a correlation: no block reaches the line
    assert make_plan(replace(config, candidates="pca"), 569, 30, True, pairs_test=True).pairs_test is None


@pytest.mark.parametrize("n, d, epsilon", [(569, 30, 1.0), (569, 30, 4.0), (1993, 100, 1.0), (2126, 20, 0.25)])
def test_both_outcomes_spend_the_same_budget_and_release_the_histograms_first_at_one_share(n, d, epsilon):
    """The two budgets the test chooses between: the same mu in all (the ledger composes the
    Gaussian stages exactly), the same first histograms share and test share; with the pairs the
    split of favour="relationships", without them the default's, each scaled by 1 - the test's
    share; the histograms' two parts add up to that split's share."""
    config = SynthConfig(epsilon=epsilon, delta=1e-10)
    plan = make_plan(config, n, d, True, pairs_test=True)
    with_pairs, without = plan.budget, plan.pairs_test.without_pairs
    mu = gdp_mu(with_pairs.remaining_epsilon, 1e-10)
    assert _gdp_total(with_pairs) == pytest.approx(mu) and _gdp_total(without) == pytest.approx(mu)
    for stage in ("marginals", "pairs_test"):
        assert with_pairs.share(stage) == without.share(stage) > 0
    keep = 1 - PAIRS_TEST_SHARE
    favour = make_plan(replace(config, favour="relationships"), n, d, True).budget
    default = make_plan(config, n, d, True, select_pairs=False).budget  # the study is of the product without selected pairs
    for tested, untested in ((with_pairs, favour), (without, default)):
        for stage in ("moments", "correlation"):
            assert tested.share(stage) == pytest.approx(keep * untested.share(stage))
        assert tested.share("marginals") + tested.share("marginals_2") == pytest.approx(keep * untested.share("marginals"))
    # after the test: the plan without the pairs has their share back and the basis's pair products
    assert plan.after_test(True) is plan
    after = plan.after_test(False)
    assert not after.releases_pairs and not after.pairs_as_matrix and after.budget is without
    assert after.n_basis == plan.n_basis + plan.skipped_pairs and after.skipped_pairs == 0


def test_the_statistic_is_the_top_eigenvalue_above_the_bulk_edge():
    """pairs_test_statistic from the upper-triangle sums: lambda_max(S) - kappa tr(S) / d, exactly."""
    rng = np.random.default_rng(2)
    scores = rng.normal(size=(50, 4)) @ rng.normal(size=(4, 4))
    matrix = scores.T @ scores / 50
    sums = (scores.T @ scores)[np.triu_indices(4)]
    kappa = (1 + math.sqrt(4 / 50)) ** 2
    assert bulk_edge(50, 4) == pytest.approx(kappa) and bulk_edge(3, 2) == 2.0  # at most d
    expected = np.linalg.eigvalsh(matrix)[-1] - kappa * np.trace(matrix) / 4
    assert pairs_test_statistic(sums, 50, 4) == pytest.approx(expected)
    # the line: SPIKE_RATIO noise edges, sd sqrt(d)
    assert block_stands_out(SPIKE_RATIO * 0.5 * 2.0, 0.5, 4) and not block_stands_out(SPIKE_RATIO * 0.99, 0.5, 4)


def _block_table(n: int, d: int, block: int, loading: float, seed: int) -> tuple[pd.DataFrame, dict]:
    rng = np.random.default_rng(seed)
    factor = rng.normal(size=n)
    columns = {f"c{j}": (loading * factor if j < block else 0.0) + math.sqrt(1 - (loading if j < block else 0) ** 2)
               * rng.normal(size=n) for j in range(d)}
    frame = pd.DataFrame(columns)
    return frame, {name: [-5.0, 5.0] for name in frame}


def test_a_block_is_found_and_released_and_independent_columns_are_not():
    """At (1, 1e-10), where no pair read one by one stands out. 2500 rows, 30 normal columns, a block of
    15 on one factor (loading .9): the statistic stands far above its line (6.5-7.8 noise edges
    over data seeds 0-9, of which the histograms' offset .7-1.0; its noise sd 0.31, the line 1.41:
    a miss would take 15 noise sd), the pairs are released, denoised as a matrix, and the block's
    mean |r| comes out above .3 (.42-.87 in tests/test_pairs.py's favour test on such tables;
    independent columns without the test, as the product released them before it selected pairs). 569 independent normal
    columns (WDBC's size): the statistic less the offset was -.7 to .0 over seeds 0-9 (the offset, what the histograms' noise alone adds, .4-.8),
    so a release there would take a draw 4.6 noise sd above the mean (probability below 1e-5);
    nothing is released and the histograms get the pairs' share, pooled. Both runs spend the whole
    budget, and the report says what the test saw."""
    config = SynthConfig(epsilon=1.0, delta=1e-10, seed=4)
    block, bounds = _block_table(2500, 30, 15, 0.9, seed=3)
    free, _ = _block_table(569, 30, 0, 0.9, seed=3)
    for name, frame in (("block", block), ("free", free)):
        model = fit(config, frame, bounds=bounds, study=StudyOptions(pairs_test=True))
        test = model.release.pairs_test
        report = privacy_report(model)
        entry = report["pairs"]
        assert entry["test"]["found"] is test.found and entry["test"]["statistic"] == test.statistic
        assert entry["test"]["histograms_offset"] == test.offset > 0
        assert entry["test"]["threshold"] == SPIKE_RATIO and entry["test"]["share"] == PAIRS_TEST_SHARE
        stages = [event["stage"] for event in report["privacy"]["stages"]]
        assert model.ledger.spent_epsilon == pytest.approx(1.0)
        if name == "block":
            assert test.found and test.statistic - test.offset > SPIKE_RATIO + 10 * test.noise_sd
            assert entry["released"] and entry["denoised"] == "as a matrix"
            assert stages == ["clip_count", "marginals", "pairs_test", "correlation", "moments"]
            correlation = np.abs(model_sample(model).corr().to_numpy())
            assert float(np.mean(correlation[:15, :15][np.triu_indices(15, 1)])) > 0.3
            before = fit(config, frame, bounds=bounds, study=StudyOptions(select_pairs=False))  # the product without
            # the selected pairs (tests/test_pairs.py: the product keeps this block through them)
            assert before.release.pairs_test is None and before.release.noisy_scores is None
            correlation = np.abs(model_sample(before).corr().to_numpy())
            assert float(np.mean(correlation[:15, :15][np.triu_indices(15, 1)])) < 0.15
        else:
            assert not test.found and test.statistic - test.offset < SPIKE_RATIO - 3 * test.noise_sd
            assert not entry["released"] and "found no block" in entry["note"]
            assert stages == ["clip_count", "marginals", "pairs_test", "marginals_2", "moments"]
            events = {event["stage"]: event for event in report["privacy"]["stages"]}
            # the pooled histograms have the noise of one release at the two parts' mu together
            mu = math.hypot(events["marginals"]["mu"], events["marginals_2"]["mu"])
            assert model.release.histogram_noise_sd == pytest.approx(events["marginals"]["sensitivity"] / mu)
            assert model.release.plan.n_basis == make_plan(config, 569, 30, True).n_basis


def model_sample(model) -> pd.DataFrame:
    from synthdp.pipeline.run import sample

    return sample(model)
