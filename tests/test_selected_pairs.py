"""The selected pairs (few rows for the columns): the plan's rule, the sensitivities on extreme rows,
the zCDP accounting, the sign-product model and its inversion, and the release end to end.

The empirical audits of the two releases (the exponential mechanism's choice, the measurement of
the chosen pairs) are in tests/test_audit.py with the others ("pair-selection", "selected-pairs").
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy import special, stats

from synthdp import SmoothSynthesizer
from synthdp.config import SynthConfig
from synthdp.domain.box import Domain
from synthdp.pipeline.plan import SELECTION, make_plan, selected_pair_count
from synthdp.pipeline.run import StudyOptions, fit
from synthdp.postprocess.copula import Marginals
from synthdp.postprocess.selected_pairs import (
    bivariate_normal_cdf,
    invert_sign_products,
    quadrant_score_map,
    selected_latent_correlation,
    sign_product_model,
    sign_thresholds,
)
from synthdp.privacy.budget import Budget, StageBudget
from synthdp.privacy.ledger import PrivacyLedger
from synthdp.privacy.noise import SeededNoise, zcdp_delta, zcdp_epsilon, zcdp_rho
from synthdp.privacy.release import release_pair_selection, release_selected_pairs, selection_scale
from synthdp.privacy.sensitivity import Neighbours, bounded_means_sensitivity, quadrant_scores_sensitivity
from synthdp.reader.table import PrivateTable
from synthdp.released import SelectedPairs
from synthdp.stats.row_sums import SumRequest
from synthdp.stats.scores import ScoreMap


# ------------------------------------------------------------------ accounting
def test_zcdp_conversion_is_opendps():
    """rho-zCDP -> (epsilon, delta) as OpenDP converts it (Canonne, Kamath & Steinke's bound), and the
    inverses round to the private side."""
    import opendp.prelude as dp

    dp.enable_features("contrib")
    for epsilon, delta in [(1.0, 1e-10), (0.3, 1e-6), (4.0, 1e-10), (8.0, 1e-5)]:
        rho = zcdp_rho(epsilon, delta)
        gaussian = dp.m.make_gaussian(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), scale=1.0)
        curve = dp.c.make_zCDP_to_approxDP(gaussian).map(math.sqrt(2 * rho))  # rho = d_in^2 / (2 scale^2)
        assert curve.delta(epsilon) == pytest.approx(zcdp_delta(rho, epsilon), rel=1e-6)
        assert curve.delta(epsilon) <= delta
        assert zcdp_epsilon(rho, delta) <= epsilon * (1 + 1e-9)
    assert zcdp_rho(1.0, 1e-10) == pytest.approx(0.0132426, rel=1e-5)  # smartnoise-synth's cdp_rho


def test_a_selection_budget_composes_in_zcdp_and_spends_the_whole_budget():
    budget = Budget(0.0, 0.02, 0.98, 1e-10, "zcdp", (("moments", 0.35), ("marginals", 0.35), (SELECTION, 0.1),
                                                      ("correlation", 0.2)))
    total = zcdp_rho(0.98, 1e-10)
    assert sum(budget.stage(name).rho for name, _ in budget.shares) == pytest.approx(total)
    ledger = PrivacyLedger(1.0, 1e-10)
    noise = SeededNoise(np.random.default_rng(0))
    sums = np.arange(6.0)  # d = 3, triu order
    release_pair_selection(sums, 3, 2, budget.stage(SELECTION), 10, ledger, noise)
    for name in ("moments", "marginals", "correlation"):
        stage = budget.stage(name)
        from synthdp.privacy.ledger import PrivacyEvent

        ledger.record(PrivacyEvent(name, "Gaussian", 1.0, "l2", 1.0 / stage.mu, stage.epsilon, stage.delta, name,
                                   mu=stage.mu))
    assert ledger.concentrated
    assert 0.97 < ledger.spent_epsilon <= 0.98 * (1 + 1e-9)
    assert "zero-concentrated" in ledger.to_dict()["composition"]
    with pytest.raises(Exception, match="budget exceeded"):  # one more rho than the budget holds
        ledger.record(PrivacyEvent("x", "Gaussian", 1.0, "l2", 1.0, 0.1, 1e-10, "x", mu=0.05))


def test_k_exponential_mechanisms_spend_the_stage_rho():
    """k picks of epsilon_1 = 2 Delta / scale each: k epsilon_1^2 / 8 is the stage's rho (zCDP), and
    k epsilon_1 its epsilon under basic composition."""
    stage = Budget(0.0, 0.0, 1.0, 1e-10, "zcdp", ((SELECTION, 0.1), ("moments", 0.9))).stage(SELECTION)
    scale, per_pick = selection_scale(stage, 7, 0.01)
    assert 7 * per_pick**2 / 8 == pytest.approx(stage.rho) and scale == pytest.approx(2 * 0.01 / per_pick)
    pure = StageBudget(0.2, 0.0)
    scale, per_pick = selection_scale(pure, 4, 0.01)
    assert 4 * per_pick == pytest.approx(0.2) and scale == pytest.approx(2 * 0.01 / per_pick)


# ------------------------------------------------------------------ sensitivities on extreme rows
SIGN_MAP = ScoreMap(np.tile([0.25, 0.25, 0.25, 0.25], (3, 1)), 0.0, signs=True)  # value -0.5: sign -, +0.5: +
VALUES = {-1: -0.5, 0: 0.0, 1: 0.5}  # a unit value 0 falls on the edge of the two bins: the upper bin, sign +


def _quadrant_sums(rows: np.ndarray, units: list | None = None, k: int | None = None) -> np.ndarray:
    frame = pd.DataFrame(rows, columns=["a", "b", "c"])
    domain = Domain.from_bounds({name: [-1.0, 1.0] for name in frame.columns}, list(frame.columns))
    unit = None
    if units is not None:
        from synthdp.reader.units import UnitBound

        frame.insert(0, "person", units)
        unit = UnitBound("person", k, 3)
    return PrivateTable(frame, unit=unit).row_sums(SumRequest(domain, score_map=SIGN_MAP))["score_products"]


def _scores(sums: np.ndarray, n: float) -> np.ndarray:
    upper = np.triu_indices(3)
    return np.abs(sums[upper[0] < upper[1]] / n)


def test_the_selection_scores_sensitivity_holds_and_is_attained_on_extreme_rows():
    """Replacing one row by any other among every sign pattern of three columns (and values outside
    the box) moves each |q_ij| by at most 2/n, and some replacement moves one by exactly 2/n."""
    n = 12
    rng = np.random.default_rng(3)
    base = rng.choice([-0.5, 0.5], size=(n, 3))
    extremes = [np.array(signs) for signs in itertools.product([-0.5, 0.5], repeat=3)] + [
        np.array([7.0, -9.0, 0.5]), np.array([-1.0, 1.0, -1.0])]
    bound = quadrant_scores_sensitivity(n)
    worst = 0.0
    for old, new in itertools.product(extremes, repeat=2):
        sums = []
        for row in (old, new):
            rows = base.copy()
            rows[0] = row
            sums.append(_quadrant_sums(rows))
        worst = max(worst, float(np.abs(_scores(sums[0], n) - _scores(sums[1], n)).max()))
    assert bound == pytest.approx(2 / n) and worst == pytest.approx(bound)


def test_the_selection_scores_sensitivity_by_unit_holds_and_is_attained():
    """Adding a unit of K + 1 rows (bounded to K by the reader) moves each |q_ij| by at most K/n."""
    k, n = 3, 12
    rng = np.random.default_rng(5)
    base = rng.choice([-0.5, 0.5], size=(n, 3))
    people = [f"u{i // 2}" for i in range(n)]
    without = _quadrant_sums(base, people, k)
    worst = 0.0
    for signs in itertools.product([-0.5, 0.5], repeat=3):
        rows = np.vstack([base, np.tile(signs, (k + 1, 1))])
        with_unit = _quadrant_sums(rows, people + ["new"] * (k + 1), k)
        worst = max(worst, float(np.abs(_scores(with_unit, n) - _scores(without, n)).max()))
    bound = quadrant_scores_sensitivity(n, Neighbours(k, "person"))
    assert bound == pytest.approx(k / n) and worst == pytest.approx(bound)


def test_the_measured_pairs_sensitivity_holds_and_is_attained_on_extreme_rows():
    """The k chosen pairs' means of sgn(s_i) sgn(s_j): replacing a row moves them by at most the
    declared L1 2k/n and L2 2 sqrt(k)/n (bounded_means_sensitivity); one pair (k = 1) attains it."""
    n = 12
    rng = np.random.default_rng(7)
    base = rng.choice([-0.5, 0.5], size=(n, 3))
    pairs = np.array([[0, 1], [0, 2], [1, 2]])
    for k in (1, 3):
        chosen = pairs[:k]
        l1, l2 = bounded_means_sensitivity(k, n)
        worst_l1 = worst_l2 = 0.0
        for old, new in itertools.product(itertools.product([-0.5, 0.5], repeat=3), repeat=2):
            means = []
            for row in (old, new):
                rows = base.copy()
                rows[0] = row
                sums = _quadrant_sums(rows)
                matrix = np.zeros((3, 3))
                matrix[np.triu_indices(3)] = sums / n
                means.append(matrix[chosen[:, 0], chosen[:, 1]])
            change = means[0] - means[1]
            worst_l1, worst_l2 = max(worst_l1, np.abs(change).sum()), max(worst_l2, np.linalg.norm(change))
        assert worst_l1 <= l1 * (1 + 1e-12) and worst_l2 <= l2 * (1 + 1e-12)
        if k == 1:
            assert worst_l1 == pytest.approx(l1) and worst_l2 == pytest.approx(l2)


# ------------------------------------------------------------------ the model
def test_the_bivariate_normal_cdf_is_scipys():
    rng = np.random.default_rng(0)
    h, k = rng.normal(0, 1.5, 60), rng.normal(0, 1.5, 60)
    h[:5], k[5:10] = 0.0, 0.0
    r = rng.uniform(-0.95, 0.95, 60)
    ours = bivariate_normal_cdf(h, k, r)
    theirs = [stats.multivariate_normal(cov=[[1, c], [c, 1]]).cdf([a, b]) for a, b, c in zip(h, k, r)]
    assert np.allclose(ours, theirs, atol=2e-6)


def test_the_sign_product_model_at_the_medians_is_the_arcsine_law_and_inverts():
    r = np.linspace(-0.95, 0.95, 39)
    zero = (np.zeros_like(r), np.zeros_like(r))
    assert np.allclose(sign_product_model(r, zero, zero), 2 / np.pi * np.arcsin(r), atol=1e-9)
    off = (np.full_like(r, -0.4), np.full_like(r, 0.3)), (np.full_like(r, 0.7), np.full_like(r, 0.9))
    model = sign_product_model(r, *off)
    assert np.all(np.diff(model) > 0)  # increasing in r
    assert np.allclose(invert_sign_products(model, *off), r, atol=1e-9)


def test_the_model_predicts_the_copulas_sign_products():
    """The copula's candidates, signed through the same map, have the sign products the model gives
    (skewed and atom-heavy histograms, 200 000 draws: each mean within 5 Monte Carlo sd, a false
    failure with probability below 1e-5 for the three pairs together)."""
    counts = np.array([[300, 100, 50, 40, 10, 500], [5, 400, 300, 200, 80, 15], [0, 250, 250, 250, 250, 0]], float)
    marginals = Marginals(counts, 1000)
    score_map = quadrant_score_map(marginals)
    a, b = sign_thresholds(score_map)
    latent = np.array([[1.0, 0.6, -0.3], [0.6, 1.0, 0.2], [-0.3, 0.2, 1.0]])
    rng = np.random.default_rng(1)
    z = rng.multivariate_normal(np.zeros(3), latent, size=200_000)
    points = marginals.quantiles(special.ndtr(z))
    signs = score_map.clipped_scores(points)
    for i, j in [(0, 1), (0, 2), (1, 2)]:
        observed = signs[:, i] * signs[:, j]
        expected = sign_product_model(np.array([latent[i, j]]), (a[[i]], b[[i]]), (a[[j]], b[[j]]))[0]
        assert abs(observed.mean() - expected) < 5 * observed.std() / math.sqrt(len(observed))


def test_the_latent_correlation_keeps_the_measured_strong_pair_and_completes_by_entropy():
    """A chain of two strong measured pairs (0-1, 1-2) and a weak one: the strong ones come back,
    the weak one is not kept, and the pair not measured (0-2) takes at least what the chain forces
    on a correlation matrix (2 r_01 r_12 - 1 = .12) and at most what the Gaussian model of largest
    entropy would give it free (r_01 r_12 = .56): the others' box, a noise sd, from the least."""
    marginals = Marginals(np.tile([0.0, 250.0, 250.0, 250.0, 250.0, 0.0], (4, 1)), 1000)
    score_map = quadrant_score_map(marginals)
    means = 2 / np.pi * np.arcsin(np.array([0.8, 0.7, 0.02]))  # columns cut at their medians
    selected = SelectedPairs(np.array([[0, 1], [1, 2], [2, 3]]), means, 0.03)
    latent = selected_latent_correlation(score_map, selected, 4)
    assert latent[0, 1] == pytest.approx(0.8, abs=0.02) and latent[1, 2] == pytest.approx(0.7, abs=0.02)
    assert 2 * 0.8 * 0.7 - 1 - 0.02 <= latent[0, 2] <= 0.8 * 0.7
    assert abs(latent[2, 3]) < 0.05 and abs(latent[0, 3]) < 0.05
    assert np.all(np.linalg.eigvalsh(latent) > 0)


# ------------------------------------------------------------------ the plan
def _plan(n: int, d: int, **config):
    return make_plan(SynthConfig(**{"epsilon": 1.0, "delta": 1e-10, **config}), n, d, True)


def test_the_pairs_are_selected_where_all_of_them_would_be_noise_and_the_moments_are_not():
    selected = _plan(768, 9)  # a small clinical table (pima's shape)
    assert selected.selects_pairs and selected.budget.composition == "zcdp"
    shares = dict(selected.budget.shares)
    assert shares[SELECTION] == pytest.approx(0.05) and shares["correlation"] == pytest.approx(0.1)
    without = dict(make_plan(SynthConfig(epsilon=1.0, delta=1e-10), 768, 9, True, select_pairs=False).budget.shares)
    assert shares["moments"] == pytest.approx(0.85 * without["moments"])  # taken from the others in proportion
    assert shares["marginals"] == pytest.approx(0.85 * without["marginals"])
    assert not _plan(5875, 20).selects_pairs  # every pair read one by one (PKS's shape)
    assert not _plan(569, 30).selects_pairs and _plan(569, 30).noisy_moments  # the moments are noise (WDBC's)
    assert not _plan(768, 9, delta=0.0).selects_pairs  # Laplace: the pairs' share would cost the others 43 %
    assert not _plan(768, 9, favour="relationships").selects_pairs  # every pair, denoised as a matrix
    assert not _plan(768, 9, correlation_share=0.2).selects_pairs
    assert not make_plan(SynthConfig(epsilon=1.0, delta=1e-10), 768, 9, True, select_pairs=False).selects_pairs


def test_k_is_the_most_pairs_whose_noise_is_within_the_limit():
    from synthdp.postprocess.pairs import CORRELATION_NOISE_LIMIT

    plan = _plan(768, 9)
    stage = plan.budget.stage("correlation")
    k = plan.selected_pairs
    assert 1 <= k <= 36
    assert math.pi / 2 * stage.means_noise_sd(k, 768) <= CORRELATION_NOISE_LIMIT
    assert k == 36 or math.pi / 2 * stage.means_noise_sd(k + 1, 768) > CORRELATION_NOISE_LIMIT
    assert selected_pair_count(768, 9, StageBudget(1e-6, 1e-10, 1e-6)) == 0  # not one pair: none


# ------------------------------------------------------------------ end to end
def _one_strong_pair(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    values = rng.normal(size=(n, 8))
    values[:, 1] = 0.85 * values[:, 0] + math.sqrt(1 - 0.85**2) * values[:, 1]
    return pd.DataFrame(values, columns=[f"c{j}" for j in range(8)])


def test_a_small_tables_strong_pair_is_kept_and_no_pair_is_invented():
    """n = 800, d = 8, one pair at r = .85 among independent columns, at (1, 1e-10), 6 seeded
    releases: the pair comes back at |r| > .5 on average and no other pair's mean |r| over the
    releases exceeds .15 (before this release the pair came out at about 0). Seeded noise: the
    outcome is fixed; a seed at the edge would show as a change, not a flake."""
    frame = _one_strong_pair(800, 0)
    bounds = {name: [-5.0, 5.0] for name in frame.columns}
    strong, other = [], []
    for seed in range(6):
        synthetic = SmoothSynthesizer(epsilon=1.0, delta=1e-10, seed=seed).fit(frame, bounds=bounds).sample()
        corr = synthetic.corr().to_numpy()
        strong.append(abs(corr[0, 1]))
        mask = np.triu(np.ones((8, 8), bool), 1)
        mask[0, 1] = False
        other.append(np.abs(corr[mask]))
    assert np.mean(strong) > 0.5
    assert np.mean(other, axis=0).max() < 0.15


def test_the_report_names_the_selection_and_its_pairs():
    frame = _one_strong_pair(800, 1)
    synth = SmoothSynthesizer(epsilon=1.0, delta=1e-10, seed=2).fit(frame, bounds={c: [-5, 5] for c in frame})
    report = synth.privacy_report()
    stages = {event["stage"]: event for event in report["privacy"]["stages"]}
    k = report["parameters"]["selected_pairs"]
    assert stages[SELECTION]["rho"] > 0 and f"{k} of the 28 pairs" in stages[SELECTION]["released"]
    assert stages["correlation"]["mechanism"] == "Gaussian" and f"{k} selected pairs" in stages["correlation"]["released"]
    assert report["pairs"]["denoised"] == "selected pairs" and report["pairs"]["selected"] == k
    assert "zero-concentrated" in report["privacy"]["composition"]
    assert report["privacy"]["epsilon_spent"] <= 1.0 * (1 + 1e-9)


def test_the_study_option_gives_the_release_without_the_selection():
    frame = _one_strong_pair(800, 2)
    config = SynthConfig(epsilon=1.0, delta=1e-10, seed=4)
    before = fit(config, frame, {c: [-5, 5] for c in frame}, study=StudyOptions(select_pairs=False))
    assert before.release.selected_pairs is None and not before.release.plan.selects_pairs
    assert all(event.stage != SELECTION for event in before.ledger.events)


def test_release_pair_selection_picks_the_strongest_pairs_with_much_budget():
    d, n = 4, 100
    matrix = np.eye(d) * n
    matrix[0, 2] = 90  # |q| = .9
    matrix[1, 3] = -70  # |q| = .7
    matrix[0, 1] = 10
    sums = matrix[np.triu_indices(d)]
    noise = SeededNoise(np.random.default_rng(0))
    pairs = release_pair_selection(sums, d, 2, StageBudget(1e3, 0.0), n, PrivacyLedger(1e3, 0.0), noise)
    assert pairs.tolist() == [[0, 2], [1, 3]]
    means, sd = release_selected_pairs(sums, d, pairs, StageBudget(1e6, 0.0), n, PrivacyLedger(1e6, 0.0), noise)
    assert np.allclose(means, [0.9, -0.7], atol=1e-3) and sd > 0


def test_a_forest_selection_joins_new_columns_before_closing_a_cycle():
    """The three strongest pairs form a triangle (0, 1, 2); as a forest grows the third pick joins
    column 3 instead, and once every column is joined the pairs left are open again. Much budget: the
    exponential mechanism then picks the best of its set (every gap is thousands of Gumbel scales)."""
    d, n = 4, 100
    matrix = np.eye(d) * n
    matrix[0, 1], matrix[0, 2], matrix[1, 2] = 90, 80, 70
    matrix[2, 3], matrix[0, 3], matrix[1, 3] = 30, 20, 10
    sums = matrix[np.triu_indices(d)]

    def chosen(forest: bool, picks: int) -> list[list[int]]:
        noise = SeededNoise(np.random.default_rng(0))
        return release_pair_selection(sums, d, picks, StageBudget(1e4, 0.0), n, PrivacyLedger(1e4, 0.0), noise,
                                      forest=forest).tolist()

    assert chosen(False, 3) == [[0, 1], [0, 2], [1, 2]]
    assert chosen(True, 3) == [[0, 1], [0, 2], [2, 3]]
    assert chosen(True, 5) == [[0, 1], [0, 2], [2, 3], [1, 2], [0, 3]]
