"""The experiment harness (experiments/): configurations, the run cache and the ε-sweep crossings.

Fast checks only: no peer runs, and synthdp fits on a 40-row table only (the cache test uses the bootstrap).
"""

import sys
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

EXPERIMENTS = Path(__file__).resolve().parents[1] / "experiments"
sys.path.insert(0, str(EXPERIMENTS))

import harness  # noqa: E402
from common import Dataset, query_set  # noqa: E402
from report import crossing  # noqa: E402
from synthdp.config import SynthConfig  # noqa: E402
from synthdp.evaluation.queries import SIGMAS, answer_queries  # noqa: E402
from synthdp.pipeline.plan import paper_n_basis  # noqa: E402


def test_crossing_interpolates_in_log_log_and_says_when_not_reached():
    errors = np.array([0.4, 0.1, 0.05])
    # log-midway between 0.4 and 0.1 is 0.2, reached log-midway between eps 1 and 4, at eps 2
    assert crossing([1.0, 4.0, 16.0], errors, 0.2) == "2"
    assert crossing([1.0, 4.0, 16.0], errors, 0.5) == "≤ 1"
    assert crossing([1.0, 4.0, 16.0], errors, 0.01) == "not reached by ε = 16"
    assert crossing([1.0, 4.0, 16.0], np.array([np.nan, 0.1, 0.05]), 0.2) == "≤ 4"


def test_default_config_sets_only_epsilon_and_delta():
    config = harness.default_config(harness.Setting(2.0, 1e-10, "hypercube"))  # the table's kind is the paper's
    changed = {k for k, v in asdict(config).items() if v != asdict(SynthConfig())[k]}
    assert changed == {"epsilon", "delta"}


@pytest.mark.parametrize("delta,kind", [(0.0, "pca"), (1e-10, "hypercube")])
def test_paper_config_uses_the_papers_R_per_sigma(delta, kind):
    n, d = 2126, 20
    for sigma in SIGMAS:
        config = harness.paper_config(harness.Setting(1.0, delta, kind), n, d, sigma)
        assert config.smoothness == sigma**2
        assert config.n_basis == paper_n_basis(n, d, int(sigma**2), delta)  # not raised to d
        assert (config.candidates, config.n_candidates, config.spread) == (kind, 10_000, 0.0)
        assert (config.epsilon, config.delta) == (1.0, delta)


def small_dataset() -> Dataset:
    frame = pd.DataFrame(np.random.default_rng(3).uniform(0, 1, size=(40, 3)), columns=["a", "b", "c"])
    return Dataset("toy", frame, frame.min().to_numpy(float), frame.max().to_numpy(float))


def test_run_rounds_caches_finished_runs_and_skips_peers_without_delta(tmp_path, monkeypatch):
    dataset = small_dataset()
    options = harness.RunOptions(queries=20, query_seed=1, cache_dir=tmp_path)
    queries = query_set(dataset.name, dataset.d, options.queries, options.query_seed)
    true = answer_queries(dataset.unit(dataset.frame), queries, SIGMAS)
    setting = harness.Setting(1.0, 0.0)
    first = harness.run_rounds("bootstrap", dataset, setting, 2, options, queries, true)
    assert first["status"] == "ok" and len(first["rounds"]) == 2
    assert first["rounds"][0]["utility"]["distinct_rows"] <= dataset.n

    def must_not_run(*args, **kwargs):
        raise AssertionError("a cached run was generated again")

    monkeypatch.setattr(harness, "generate", must_not_run)
    again = harness.run_rounds("bootstrap", dataset, harness.Setting(4.0, 1e-10), 2, options, queries, true)
    assert [r["errors"] for r in again["rounds"]] == [r["errors"] for r in first["rounds"]]  # bootstrap ignores ε, δ
    peer = harness.run_rounds("smartnoise-mst", dataset, setting, 1, options, queries, true)
    assert peer["status"] == "n/a" and peer["rounds"] == [] and "need δ > 0" in peer["message"]


def test_peer_rows_are_kept_so_a_new_query_set_needs_no_new_peer_run(tmp_path, monkeypatch):
    dataset = small_dataset()
    setting = harness.Setting(1.0, 1e-6)

    def fake_peer(name, frame, bounds, epsilon, delta, bins, rng, timeout):  # stands in for the subprocess
        table = frame.iloc[rng.integers(0, len(frame), len(frame))].reset_index(drop=True)
        table.attrs["peer"] = {"fit_seconds": 0.0}
        return table

    def evaluate(n_queries: int, new_peer_runs: bool, rounds: int = 1) -> dict:
        options = harness.RunOptions(queries=n_queries, query_seed=1, cache_dir=tmp_path, new_peer_runs=new_peer_runs)
        queries = query_set(dataset.name, dataset.d, n_queries, 1)
        true = answer_queries(dataset.unit(dataset.frame), queries, SIGMAS)
        return harness.run_rounds("smartnoise-mst", dataset, setting, rounds, options, queries, true)

    monkeypatch.setattr(harness, "binned_peer", fake_peer)
    first = evaluate(20, new_peer_runs=True)
    assert first["status"] == "ok" and len(list(tmp_path.rglob("*.npz"))) == 1
    monkeypatch.setattr(harness, "binned_peer", None)  # any new peer run would now fail
    again = evaluate(30, new_peer_runs=False)
    assert again["status"] == "ok" and len(again["rounds"]) == 1
    assert again["rounds"][0]["utility"] == first["rounds"][0]["utility"]
    assert evaluate(30, new_peer_runs=False)["rounds"][0]["errors"] == again["rounds"][0]["errors"]
    fewer = evaluate(30, new_peer_runs=False, rounds=2)  # round 2 was never run: the row says so
    assert fewer["status"] == "skipped" and len(fewer["rounds"]) == 1


def test_a_peer_timeout_is_cached_and_retried_only_when_asked(tmp_path, monkeypatch):
    dataset = small_dataset()
    calls = []

    def slow_peer(*args, **kwargs):
        calls.append(1)
        raise harness.PeerTimeout("smartnoise-mst did not finish within 1 s", 1.0)

    monkeypatch.setattr(harness, "binned_peer", slow_peer)
    queries = query_set(dataset.name, dataset.d, 10, 1)
    true = answer_queries(dataset.unit(dataset.frame), queries, SIGMAS)
    for retry in (False, False, True):
        options = harness.RunOptions(queries=10, query_seed=1, cache_dir=tmp_path, retry_failed=retry)
        result = harness.run_rounds("smartnoise-mst", dataset, harness.Setting(1.0, 1e-6), 1, options, queries, true)
        assert result["status"] == "timeout" and "within 1 s" in result["message"] and result["rounds"] == []
    assert len(calls) == 2  # the first run and the retry; the second run read the cached timeout


@pytest.mark.parametrize("method,per_query_set", [("synthdp-default", True), ("paper-constant", True),
                                                  ("dp-gaussian", True), ("bootstrap", False),
                                                  ("smartnoise-mst", False)])
def test_only_runs_that_cannot_be_drawn_again_are_cached_per_query_set(method, per_query_set):
    # unseeded synthdp and DP Gaussian rows are not kept: a new query set must not replace a table's runs
    dataset, setting = small_dataset(), harness.Setting(1.0, 1e-10)
    keys = [harness.method_key(method, setting, dataset, harness.RunOptions(queries=q, query_seed=1))
            for q in (2000, 10_000)]
    assert (keys[0] != keys[1]) == per_query_set


def test_the_cache_key_follows_synthdp_code_not_its_docstrings_or_comments(tmp_path):
    module = tmp_path / "stage.py"

    def source_hash(text: str) -> str:
        module.write_text(text)
        harness._source_hash.cache_clear()
        return harness._source_hash(tmp_path)

    original = source_hash('"""Module."""\n\ndef scale(x):\n    """Twice x."""\n    return 2 * x\n')
    reworded = source_hash('"""Module, reworded."""\n\n\ndef scale(x):  # why\n    """Two x."""\n    return 2 * x\n')
    changed = source_hash('"""Module."""\n\ndef scale(x):\n    """Twice x."""\n    return 3 * x\n')
    undocumented = source_hash("def scale(x):\n    return 2 * x\n")
    harness._source_hash.cache_clear()
    assert original == reworded == undocumented
    assert changed != original


def test_an_oracle_variant_hands_on_exact_values_only_inside_its_block():
    import design_choices
    import synthdp.privacy.release
    from synthdp import SmoothSynthesizer

    frame = small_dataset().frame
    bounds = {name: (0.0, 1.0) for name in frame.columns}
    variant = design_choices.Variant(exact_stages=("marginals",))

    def histograms() -> np.ndarray:
        with pytest.warns(UserWarning):  # the known-seed warning
            synth = SmoothSynthesizer(epsilon=1.0, delta=1e-6, seed=4, candidates="copula").fit(frame, bounds=bounds)
        return synth.release_.noisy_histograms

    noisy_release = synthdp.privacy.release._release
    with design_choices.variant_in_effect(variant):
        exact = histograms()
    assert synthdp.privacy.release._release is noisy_release
    assert np.all(exact == np.round(exact)) and np.all(exact.sum(axis=1) == len(frame))  # counts, no noise
    noisy = histograms()
    assert not np.all(noisy == np.round(noisy))


def test_a_copula_variant_replaces_its_functions_only_inside_its_block():
    import design_choices
    import synthdp.postprocess.copula

    original = synthdp.postprocess.copula.normal_scores_correlation
    variant = design_choices.STUDIES["copula"]["Pearson as the copula's correlation, eigenvalue clip (before)"]
    coefficients = synthdp.postprocess.copula.hermite_coefficients(synthdp.postprocess.copula.Marginals(np.array([[0.0, 5.0, 5.0, 0.0]] * 2), 10))
    with design_choices.variant_in_effect(variant):
        before = synthdp.postprocess.copula.normal_scores_correlation(np.array([0.3]), coefficients)
    assert before[0, 1] == 0.3  # taken as it is
    assert synthdp.postprocess.copula.normal_scores_correlation is original
    assert original(np.array([0.3]), coefficients)[0, 1] == pytest.approx(2 * np.sin(np.pi * 0.3 / 6), abs=1e-3)


def test_the_generic_sensitivity_variant_changes_the_moments_noise_only_inside_its_block():
    import design_choices
    import synthdp.privacy.release
    from synthdp.stats.chebyshev import lowest_degree_indices

    indices, n = lowest_degree_indices(3, 6), 100  # T_1 and T_2 of 3 columns
    derived = synthdp.privacy.sensitivity.moments_sensitivity(indices, n)
    with design_choices.variant_in_effect(design_choices.STUDIES["sensitivity"]["generic sensitivity 2R/n, 2 sqrt(R)/n (before)"]):
        generic = synthdp.privacy.sensitivity.moments_sensitivity(indices, n)
    assert generic == pytest.approx((2 * 6 / n, 2 * np.sqrt(6) / n))
    assert synthdp.privacy.sensitivity.moments_sensitivity(indices, n) == derived
    assert derived[0] < generic[0] and derived[1] < generic[1]
