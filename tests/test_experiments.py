"""The experiment harness (experiments/): configurations, the run cache and the ε-sweep crossings.

Fast checks only: no peer runs, and synthdp fits on a 40-row table only (the cache test uses the bootstrap),
but for one round on iris in small_tables.py's run with a recorded peer row.
"""

import json
import re
import sys
from dataclasses import asdict, replace
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
        module.write_text(text, encoding="utf-8")
        harness._source_hash.cache_clear()
        return harness._source_hash(tmp_path)

    original = source_hash('"""Module."""\n\ndef scale(x):\n    """Twice x."""\n    return 2 * x\n')
    reworded = source_hash('"""Module, reworded."""\n\n\ndef scale(x):  # why\n    """Two x."""\n    return 2 * x\n')
    changed = source_hash('"""Module."""\n\ndef scale(x):\n    """Twice x."""\n    return 3 * x\n')
    undocumented = source_hash("def scale(x):\n    return 2 * x\n")
    harness._source_hash.cache_clear()
    assert original == reworded == undocumented
    assert changed != original


def correlated_dataset() -> Dataset:
    """40 rows, 3 columns, the first two correlated (so that the copula's pairs matter)."""
    rng = np.random.default_rng(3)
    values = rng.uniform(0, 1, size=(40, 3))
    values[:, 1] = values[:, 0] + 0.1 * rng.standard_normal(40)
    frame = pd.DataFrame(values, columns=["a", "b", "c"])
    return Dataset("toy", frame, frame.min().to_numpy(float), frame.max().to_numpy(float))


def fit_toy(variant, epsilon: float = 16.0, seed: int = 4):
    """A seeded copula fit of ``variant`` through design_choices' public path (pairs released at epsilon 16)."""
    import design_choices

    keys = {"candidates": "copula", **variant.config_keys(0, 3)}
    return design_choices.fit_variant(design_choices.Variant(keys, variant.study), correlated_dataset(), epsilon,
                                      1e-6, seed)


def test_the_design_studies_use_public_options_and_patch_nothing():
    import design_choices

    assert not hasattr(design_choices, "variant_in_effect")
    source = Path(design_choices.__file__).read_text(encoding="utf-8")
    assert "setattr(" not in source and "._release" not in source
    for study in design_choices.STUDIES.values():
        for variant in study.values():
            assert isinstance(variant.study, design_choices.StudyOptions)


@pytest.mark.parametrize("script", ["adult_pairs", "pair_limits"])
def test_the_pair_studies_vary_the_rules_through_study_options_not_module_globals(script):
    """Their variants go through StudyOptions (join_ratio, spectral_pairs), which reach the candidate
    makers; assigning a package constant (adult_pairs.py once set candidates.JOIN_RATIO) would change
    every later fit in the process without the release knowing."""
    import re

    module = __import__(script)
    source = Path(module.__file__).read_text(encoding="utf-8")
    assert "setattr(" not in source and not re.search(r"^\s*\w+\.[A-Z][A-Z_]+\s*=", source, re.M)
    assert "StudyOptions(" in source


def test_an_oracle_variant_hands_on_exact_histograms_with_the_same_draws_elsewhere_and_is_not_private():
    import design_choices

    from synthdp.pipeline.report import privacy_report

    default = fit_toy(design_choices.Variant())
    exact = fit_toy(design_choices.STUDIES["oracle"]["exact histograms"])
    histograms = exact.release.noisy_histograms
    assert np.all(histograms == np.round(histograms)) and np.all(histograms.sum(axis=1) == 40)  # counts, no noise
    noisy = default.release.noisy_histograms
    assert not np.all(noisy == np.round(noisy))
    # the histograms' noise was still drawn: the stages before and after see the same draws
    np.testing.assert_array_equal(exact.release.noisy_moments, default.release.noisy_moments)
    assert exact.release.noisy_scores is not None
    assert not np.array_equal(exact.release.noisy_scores, default.release.noisy_scores)  # the map follows the histograms
    assert exact.release.histogram_noise_sd == default.release.histogram_noise_sd > 0  # still the budgeted noise
    assert [e.stage for e in exact.ledger.events] == [e.stage for e in default.ledger.events]
    privacy = privacy_report(exact)["privacy"]
    assert not privacy["differentially_private"]
    assert any("NOT differentially private" in c and "marginals" in c for c in privacy["caveats"])
    assert not any("exact values" in c for c in privacy_report(default)["privacy"]["caveats"])


def test_all_exact_hands_on_the_exact_moments_pairs_and_histograms():
    import design_choices

    from synthdp.postprocess.copula import Marginals
    from synthdp.stats.chebyshev import ChebyshevBasis
    from synthdp.stats.histograms import cell_counts
    from synthdp.stats.scores import ScoreMap, score_products

    dataset = correlated_dataset()
    model = fit_toy(design_choices.STUDIES["oracle"]["all exact"])
    release = model.release
    points = dataset.unit(dataset.frame)
    np.testing.assert_allclose(release.noisy_moments, ChebyshevBasis(release.basis_indices).moments(points),
                               atol=1e-12)
    np.testing.assert_array_equal(release.noisy_histograms, cell_counts(points, release.plan.marginal_bins))
    marginals = Marginals(release.noisy_histograms, release.plan.n, release.histogram_noise_sd)
    score_map = ScoreMap(marginals.probabilities(), release.plan.pairs_clip_norm_sq)  # the plan's bound
    np.testing.assert_allclose(release.noisy_scores, score_products(points, score_map) / len(points), atol=1e-12)


def test_a_pairs_threshold_variant_changes_the_candidates_not_the_release():
    import design_choices

    variant = design_choices.STUDIES["pairs"]["pairs from 3 noise sd"]
    assert variant.study.candidate_options().pair_threshold == 3.0
    # the pairs at 0.3 and the default norm bound (the toy's own rule gives them 0.5, and the lowered
    # bound a noise of half the limit, which both thresholds clear alike)
    share = {"correlation_share": 0.3}
    default = fit_toy(design_choices.Variant(share, design_choices.StudyOptions(quiet_clip=False)))
    strict = fit_toy(design_choices.Variant(share, replace(variant.study, quiet_clip=False)))
    for name in ("noisy_moments", "noisy_histograms", "noisy_scores"):  # post-processing only
        np.testing.assert_array_equal(getattr(strict.release, name), getattr(default.release, name))
    assert not np.array_equal(strict.support_points, default.support_points)


def test_the_generic_sensitivity_variant_changes_the_moments_noise_only():
    import design_choices

    from synthdp.privacy.sensitivity import moments_sensitivity
    from synthdp.stats.chebyshev import lowest_degree_indices

    indices, n = lowest_degree_indices(3, 6), 100  # T_1 and T_2 of 3 columns
    derived = moments_sensitivity(indices, n)
    generic = design_choices.generic_moments_sensitivity(indices, n)
    assert generic == pytest.approx((2 * 6 / n, 2 * np.sqrt(6) / n))
    assert derived[0] < generic[0] and derived[1] < generic[1]
    variant = design_choices.STUDIES["sensitivity"]["generic sensitivity 2R/n, 2 sqrt(R)/n (before)"]
    default, before = fit_toy(design_choices.Variant()), fit_toy(variant)
    assert default.ledger.event("moments").mechanism == "Gaussian"
    assert default.ledger.event("moments").sensitivity == pytest.approx(moments_sensitivity(indices, 40)[1])
    assert before.ledger.event("moments").sensitivity == pytest.approx(2 * np.sqrt(6) / 40)
    assert before.ledger.event("moments").noise_scale > default.ledger.event("moments").noise_scale
    assert not np.array_equal(before.release.noisy_moments, default.release.noisy_moments)
    for stage in ("clip_count", "marginals", "correlation"):  # the other stages: same noise, same draws
        assert before.ledger.event(stage) == default.ledger.event(stage)
    np.testing.assert_array_equal(before.release.noisy_histograms, default.release.noisy_histograms)
    np.testing.assert_array_equal(before.release.noisy_scores, default.release.noisy_scores)


def test_without_the_pairs_release_the_moments_measure_the_pair_products():
    import design_choices

    keys = {"n_basis": 9}  # T_1, T_2 and the 3 pair products of 3 columns
    default = fit_toy(design_choices.Variant(keys))
    before = fit_toy(design_choices.Variant({**keys, **design_choices.STUDIES["pairs"]["no pairs release (before)"].keys}))
    assert default.ledger.event("moments").released.startswith("6 Chebyshev moments (the basis's 3 pair products")
    assert before.ledger.event("moments").released == "9 Chebyshev moments"
    assert default.release.noisy_scores is not None and before.release.noisy_scores is None


# ----------------------------------------------------------------------------- the index and the results' provenance
README = EXPERIMENTS / "README.md"
RESULTS = EXPERIMENTS / "results"
# Results files that may still name no commit: none (every script writes common.generated_by).
NO_COMMIT_YET: set[str] = set()
COMMIT = re.compile(r"\bcommit ([0-9a-f]{7,40})\b")


def named_in(line: str) -> set[str]:
    """The names a line of the index quotes in backticks, ``table{3,4,5,6}.md`` expanded."""
    names = set()
    for quoted in re.findall(r"`([^`]+)`", line):
        match = re.search(r"\{([^{}]*,[^{}]*)\}", quoted)
        parts = match.group(1).split(",") if match else [None]
        names.update(quoted if part is None else quoted[:match.start()] + part + quoted[match.end():] for part in parts)
    return names


def results_files() -> list[Path]:
    return sorted(path for path in RESULTS.glob("*.md") if path.name not in NO_COMMIT_YET)


def test_the_index_lists_every_script_and_every_results_file():
    index = README.read_text(encoding="utf-8")
    quoted = set().union(*map(named_in, index.splitlines()))
    scripts = [path for path in [*EXPERIMENTS.glob("*.py"), *(EXPERIMENTS / "peers").iterdir()] if path.is_file()]
    assert [path.name for path in scripts if path.name not in quoted and f"peers/{path.name}" not in quoted] == []
    assert [path.name for path in RESULTS.glob("*.md") if path.name not in quoted] == []


@pytest.mark.parametrize("path", results_files(), ids=lambda path: path.name)
def test_each_results_file_names_its_command_date_and_commit_and_the_index_quotes_them(path):
    head = "\n".join(path.read_text(encoding="utf-8").splitlines()[:5])
    assert "`python experiments/" in head, "no command in the first 5 lines"
    assert re.search(r"\b\d{4}-\d\d-\d\d\b", head), "no date in the first 5 lines"
    commit = COMMIT.search(head)
    assert commit, "no commit (7-40 hex digits after 'commit') in the first 5 lines"
    rows = [line for line in README.read_text(encoding="utf-8").splitlines() if path.name in named_in(line)]
    assert any(commit.group(1) in row for row in rows), f"experiments/README.md's row lacks commit {commit.group(1)}"


def test_the_allow_list_of_results_without_a_commit_stays_empty():
    assert NO_COMMIT_YET == set()


def test_generated_by_names_the_date_the_commit_and_whether_the_tree_had_changes(monkeypatch):
    import subprocess

    import common

    def fake_git(changes: str):
        def run(args, **kwargs):
            output = {"--show-toplevel": str(EXPERIMENTS.parent), "--short": "abc1234"}.get(args[2], changes)
            return subprocess.CompletedProcess(args, 0, stdout=output + "\n", stderr="")
        return run

    monkeypatch.setattr(common.subprocess, "run", fake_git(""))
    sentence = common.generated_by("python experiments/x.py --rounds 2")
    assert re.match(r"Generated by `python experiments/x\.py --rounds 2` on \d{4}-\d\d-\d\d \d\d:\d\d at commit abc1234 "
                    r"\(synthdp ", sentence)
    monkeypatch.setattr(common.subprocess, "run", fake_git(" M synthdp/config.py"))
    assert " at commit abc1234 with uncommitted changes (synthdp " in common.generated_by("python experiments/x.py")

    def no_git(args, **kwargs):
        raise FileNotFoundError("git")

    monkeypatch.setattr(common.subprocess, "run", no_git)
    assert re.search(r"on \d{4}-\d\d-\d\d \d\d:\d\d, commit unknown \(synthdp ", common.generated_by("python x.py"))


def test_generated_by_asks_git_about_the_code_not_the_results(monkeypatch):
    import subprocess

    import common

    calls = []

    def run(args, **kwargs):
        calls.append((args, kwargs["cwd"]))
        output = str(EXPERIMENTS.parent) if "--show-toplevel" in args else "abc1234" if "--short" in args else ""
        return subprocess.CompletedProcess(args, 0, stdout=output, stderr="")

    monkeypatch.setattr(common.subprocess, "run", run)
    assert common.source_commit() == "abc1234"
    package = Path(common.synthdp.__file__).resolve().parent
    assert calls == [(["git", "rev-parse", "--show-toplevel"], package), (["git", "rev-parse", "--short", "HEAD"], package),
                     (["git", "status", "--porcelain", "--", "synthdp", "experiments", ":(exclude)experiments/results"],
                      EXPERIMENTS.parent)]


def test_the_independent_baseline_draws_only_a_columns_own_levels():
    """The pure-epsilon baseline's cells of a binary or complete categorical column are its levels
    (the scorer's "other" cell dropped): every drawn value is one of them, in ten draws whose Laplace
    noise (scale 6 on 100 rows) would put the dropped cell in most of them."""
    from adult_pairs import independent_table

    from synthdp.study import Schema

    frame = pd.DataFrame({"sex": ["a", "b"] * 50, "code": ["x", "y", "z", "y"] * 25, "value": np.linspace(0, 1, 100)})
    spec = {"columns": {"sex": {"type": "binary", "levels": ["a", "b"]},
                        "code": {"type": "categorical", "levels": ["x", "y", "z"], "other": False},
                        "value": {"bounds": [0.0, 1.0]}}}
    schema = Schema.from_dict(spec, list(frame.columns))
    for seed in range(10):
        table = independent_table(frame, schema, 1.0, np.random.default_rng(seed))
        assert set(table["sex"]) <= {"a", "b"} and set(table["code"]) <= {"x", "y", "z"}
        assert table["value"].between(0.0, 1.0).all() and len(table) == len(frame)


def small_tables_record(tmp_path: Path) -> Path:
    """A small_tables.py record (JSON and the markdown beside it) with one peer row: dp.mbi MST on iris."""
    run = {"round": 0, "strong_ratio": 0.25, "strong_pairs": 3, "mean_2way_tv": 0.5, "sdm_overall": 0.625,
           "sdm_shapes": 0.75, "sdm_pair_trends": 0.375, "sdmetrics": {"overall": 0.625, "version": "0.32.0"},
           **{f"rel_{sigma:g}": 0.125 for sigma in SIGMAS}, "seconds": 17.0}
    command = "python experiments/small_tables.py --tables iris --queries 20 --peer-rounds 1"
    content = {"command": command, "peer_setting": [1.0, 1e-10], "peer_unit": "replace-one",
               "settings": {"tables": ["iris"], "queries": 20, "query_seed": 20240601, "peer_rounds": 1,
                            "peer_timeouts": {"iris:opendp-mst": 1800.0, "iris:dpmm-mst": 1800.0}},
               "runs": [{"table": "iris", "method": "opendp-mst", "epsilon": 1.0, "delta": 1e-10, "status": "ok",
                         "message": "", "runs": [run], "records": []}]}
    path = tmp_path / "record" / "small_tables.json"
    path.parent.mkdir()
    path.write_text(json.dumps(content), encoding="utf-8")
    path.with_suffix(".md").write_text(f"# Small tables\n\nGenerated by `{command}` on 2026-01-02 03:04 at commit "
                                       "abc1234 (synthdp 0.1.0); 9 s in all.\n", encoding="utf-8")
    return path


SMALL_TABLES_ARGS = ["--tables", "iris", "--rounds", "1", "--peer-rounds", "1", "--queries", "20", "--seed", "0",
                     "--no-sdmetrics"]


@pytest.mark.skipif(not (EXPERIMENTS.parent / "data" / "iris.csv").exists(), reason="the benchmark data are not here")
def test_small_tables_takes_a_peer_row_the_cache_lacks_from_the_record(tmp_path):
    import warnings

    import small_tables

    record, out = small_tables_record(tmp_path), tmp_path / "out" / "small.md"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        small_tables.main([*SMALL_TABLES_ARGS, "--methods", "synthdp-default", "opendp-mst", "--cache-dir",
                           str(tmp_path / "cache"), "--out", str(out), "--peers-from-record", str(record)])
    text = out.read_text(encoding="utf-8")
    source = "`python experiments/small_tables.py --tables iris --queries 20 --peer-rounds 1` on 2026-01-02 03:04"
    assert f"**Peer rows taken from the recorded run** of {source}" in text and "the only one, OpenDP dp.mbi MST on iris" in text
    assert "| OpenDP dp.mbi MST | 1 | 0.625 | 0.750 | 0.375 | 0.250 (*k* = 3) | 0.500 | 0.125 |" in text
    assert not (tmp_path / "cache" / "iris").exists()  # no peer ran
    written = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))
    peer = next(e for e in written["runs"] if e["method"] == "opendp-mst")
    assert peer["from_record"] == source and peer["runs"][0]["sdmetrics"]["version"] == "0.32.0"
    assert next(r for r in written["summary"] if r["method"] == "opendp-mst")["from_record"] == source
    baseline = next(e for e in written["runs"] if e["method"] == "independent")  # no peer: recomputed
    assert "from_record" not in baseline and len(baseline["runs"]) == 1
    own = next(r for r in written["summary"] if r["method"] == "synthdp-default" and r["delta"] > 0)
    expected = all(own[f"rel_{sigma:g}"]["mean"] <= 0.125 for sigma in SIGMAS)
    assert written["checks"][0]["smooth"]["ok"] == expected  # judged against the recorded MST


@pytest.mark.parametrize("change,refusal", [
    (["--queries", "30"], "--queries is 30 here but 20"),
    (["--query-seed", "7"], "--query-seed is 7 here but 20240601"),
    (["--peer-rounds", "3"], "--peer-rounds is 3 here but 1"),
    (["--tables", "iris", "glass"], "--tables glass not in"),
    (["--peer-timeout", "iris:opendp-mst=60"], "--peer-timeout of opendp-mst on iris is 60.0 here but 1800.0"),
    (["--methods", "synthdp-default", "dpmm-mst"], "peer rows dpmm-mst on iris not in"),
])
def test_small_tables_refuses_a_record_whose_peer_settings_differ(tmp_path, change, refusal):
    import small_tables

    record, out = small_tables_record(tmp_path), tmp_path / "out" / "small.md"
    methods = [] if "--methods" in change else ["--methods", "synthdp-default", "opendp-mst"]
    argv = [*SMALL_TABLES_ARGS, *methods, *change, "--out", str(out), "--peers-from-record", str(record)]
    with pytest.raises(SystemExit) as refused:
        small_tables.main(argv)
    assert refusal in str(refused.value) and "\n" not in str(refused.value)
    assert not out.parent.exists()  # refused before anything is written
