"""The estimator end to end: fit once, sample many times, report, exact-mode convergence."""

import io
import warnings

import numpy as np
import pandas as pd
import pytest

from synthdp import PrivacyLeakWarning, SmoothSynthesizer, SynthDPError, TestingSeedWarning
from synthdp.config import SynthConfig


def test_sample_has_the_columns_units_and_types_of_the_input(clinic_like):
    frame, bounds = clinic_like
    synth = SmoothSynthesizer(epsilon=1.0, seed=0).fit(frame, bounds=bounds)
    out = synth.sample(250)
    assert list(out.columns) == list(frame.columns)
    assert len(out) == 250
    assert out["age"].dtype == np.int64
    for name, spec in [("age", bounds["age"]["bounds"]), ("weight", bounds["weight"]), ("score", bounds["score"])]:
        assert out[name].between(*spec).all()


def test_sampling_spends_nothing_and_never_reads_the_data(clinic_like, monkeypatch):
    frame, bounds = clinic_like
    synth = SmoothSynthesizer(epsilon=1.0, seed=0).fit(frame, bounds=bounds)
    spent = synth.privacy_report()["privacy"]["epsilon_spent"]
    import synthdp.reader.table as private_table

    def refuse(*args, **kwargs):
        raise AssertionError("sampling touched the private table")

    monkeypatch.setattr(private_table.PrivateTable, "row_sums", refuse)
    monkeypatch.setattr(private_table.PrivateTable, "__init__", refuse)
    monkeypatch.setattr(private_table.PrivateTable, "open", refuse)
    for _ in range(3):
        synth.sample(100)
    assert synth.privacy_report()["privacy"]["epsilon_spent"] == spent


def test_same_seed_same_output_different_seed_different_output(clinic_like):
    frame, bounds = clinic_like

    def run(seed):
        return SmoothSynthesizer(epsilon=1.0, seed=seed).fit(frame, bounds=bounds).sample()

    pd.testing.assert_frame_equal(run(3), run(3))
    assert not run(3).equals(run(4))


def test_seeded_runs_warn_and_are_marked_in_the_report(clinic_like):
    frame, bounds = clinic_like
    with pytest.warns(TestingSeedWarning):
        synth = SmoothSynthesizer(seed=1).fit(frame, bounds=bounds)
    privacy = synth.privacy_report()["privacy"]
    assert "not private against anyone who knows the seed" in privacy["noise_sampler"]
    assert not privacy["differentially_private"]


def test_unseeded_runs_use_opendp_and_are_private(clinic_like):
    frame, bounds = clinic_like
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no privacy warning on the normal path
        synth = SmoothSynthesizer(n_candidates=500).fit(frame, bounds=bounds)
    privacy = synth.privacy_report()["privacy"]
    assert privacy["noise_sampler"] == "opendp"
    assert privacy["differentially_private"] and privacy["caveats"] == []


def test_bounds_from_data_is_an_explicit_opt_out_that_the_report_states(clinic_like):
    frame, _ = clinic_like
    with pytest.warns(PrivacyLeakWarning):
        synth = SmoothSynthesizer(seed=0).fit(frame, bounds_from_data=True)
    report = synth.privacy_report()
    assert any("NOT differentially private" in c for c in report["privacy"]["caveats"])
    assert "NOT differentially private" in report["bounds"]["source"]
    assert report["bounds"]["rows_clipped_noisy"] is None


def test_without_bounds_the_fit_stops_and_says_how_to_pass_them(clinic_like):
    frame, _ = clinic_like
    with pytest.raises(SynthDPError, match="--bounds"):
        SmoothSynthesizer().fit(frame)


def test_report_names_every_required_field(clinic_like):
    frame, bounds = clinic_like
    synth = SmoothSynthesizer(epsilon=1.0, delta=1e-6, blend=0.0, tilt=0.0, seed=0).fit(frame, bounds=bounds)
    report = synth.privacy_report(synth.sample())
    parameters = report["parameters"]
    for key in ("n", "d", "t", "N", "L", "m", "n_basis", "n_candidates", "smoothness", "mode", "budget"):
        assert key in parameters
    assert report["lp"]["status"] == "optimal" and report["lp"]["objective"] >= 0
    assert report["output"]["distinct_rows"] <= report["lp"]["support_size"] <= parameters["n_basis"] + 1
    # the steps after the release only (the CLI adds "sampling"): the stages that read the rows take data-dependent times
    assert set(report["timings_seconds"]) == {"candidates", "LP fit"}
    assert not any("depend on the data" in caveat for caveat in report["privacy"]["caveats"])
    assert set(synth.timings_) >= {"first pass", "moments", "marginals", "candidates", "LP fit"}
    timed = synth.privacy_report(data_timings=True)  # asked for: every stage, and the report says it is not DP
    assert set(timed["timings_seconds"]) == set(synth.timings_) and not timed["privacy"]["differentially_private"]
    assert any("depend on the data" in caveat for caveat in timed["privacy"]["caveats"])
    # rounded to 0.1 ms: a full-precision measurement could spell a private value by chance
    assert all(seconds == round(seconds, 4) for seconds in timed["timings_seconds"].values())
    assert {e["stage"] for e in report["privacy"]["stages"]} == {"clip_count", "moments", "marginals", "correlation"}
    assert report["synthdp_version"]


def test_a_pickled_fit_leaves_the_data_stages_times_out_and_samples_the_same_rows(clinic_like):
    """pickle, joblib and copy carry the fit without the times of the stages that read the rows (a side
    channel the report leaves out unless asked); the times after the release stay, and the rows under a seed
    are the fit's. data_timings is then refused, as for a model file."""
    import copy
    import pickle

    import joblib

    from synthdp.pipeline.report import RELEASED_STAGES

    frame, bounds = clinic_like
    synth = SmoothSynthesizer(epsilon=1.0, seed=0).fit(frame, bounds=bounds)
    data_stages = set(synth.timings_) - set(RELEASED_STAGES)
    assert {"first pass", "moments"} <= data_stages
    buffer = io.BytesIO()
    joblib.dump(synth, buffer)
    buffer.seek(0)
    for kept in (pickle.loads(pickle.dumps(synth)), joblib.load(buffer), copy.deepcopy(synth)):
        for timings in (kept.timings_, kept.model_.timings):
            assert set(timings) == set(synth.timings_) - data_stages and timings
        pd.testing.assert_frame_equal(kept.sample(200, seed=5), synth.sample(200, seed=5))
        assert kept.privacy_report()["timings_seconds"] == synth.privacy_report()["timings_seconds"]
        with pytest.raises(SynthDPError, match="data_timings needs the fit, in the process that fitted"):
            kept.privacy_report(data_timings=True)
    assert data_stages <= set(synth.timings_)  # the fitted object itself keeps them all


def test_values_outside_the_bounds_are_clipped_not_an_error(clinic_like):
    frame, bounds = clinic_like
    frame = frame.copy()
    frame.loc[:49, "score"] = 7.5  # 50 rows far above the bound
    synth = SmoothSynthesizer(epsilon=1.0, clip_count_share=0.4, seed=2).fit(frame, bounds=bounds)
    noisy = synth.privacy_report()["bounds"]["rows_clipped_noisy"]
    # Laplace scale 1/0.4 = 2.5: |noise| > 25 has probability e^-10 < 5e-5.
    assert abs(noisy - 50) < 25
    assert synth.sample()["score"].between(0, 1).all()


def _support_error(dim: int, n: int, seed: int) -> float:
    """Worst error of 50 Gaussian-kernel queries (width 0.5) on the fitted distribution."""
    rng = np.random.default_rng(seed)
    data = np.column_stack([rng.beta(2, 5, n), rng.beta(5, 2, n)])[:, :dim] * 2 - 1
    frame = pd.DataFrame(data, columns=[f"x{j}" for j in range(dim)])
    synth = SmoothSynthesizer(epsilon=1.0, mode="exact", smoothness=2, seed=seed, clip_count_share=0.0)
    synth.fit(frame, bounds={c: [-1, 1] for c in frame})
    centres = np.random.default_rng(99).uniform(-1, 1, (50, dim))

    def kernel(points):
        return np.exp(-((points[:, None, :] - centres[None]) ** 2).sum(-1) / (2 * 0.5**2))

    synthetic = (synth.support_weights_[:, None] * kernel(synth.support_points_)).sum(0)
    return float(np.abs(kernel(data).mean(0) - synthetic).max())


@pytest.mark.parametrize("dim", [1, 2])
def test_exact_mode_error_shrinks_as_n_grows(dim):
    """Algorithm 1 on a 1-2 dimensional toy: the worst smooth-query error falls with n.

    Measured over 10 seeds: mean error 0.024 -> 0.0009 (d = 1) and 0.11 -> 0.006 (d = 2)
    from n = 300 to 30 000, a ratio of about 0.05; the test asks for a ratio below 0.5 with
    5 seeds, which the measured spread (worst seed at most 3.5x the mean) never approaches.
    """
    small = np.mean([_support_error(dim, 300, seed) for seed in range(5)])
    large = np.mean([_support_error(dim, 30_000, seed) for seed in range(5)])
    assert large < 0.5 * small


def test_exact_mode_refuses_what_does_not_fit_in_memory():
    frame = pd.DataFrame(np.random.default_rng(0).uniform(0, 1, (2000, 12)), columns=[f"c{j}" for j in range(12)])
    with pytest.raises(SynthDPError, match="memory bound"):
        SmoothSynthesizer(mode="exact", seed=0).fit(frame, bounds={c: [0, 1] for c in frame})


@pytest.mark.parametrize("candidates", ["pca", "hypercube", "grid", "moments"])
@pytest.mark.parametrize("delta", [0.0, 1e-8])
def test_every_candidate_kind_and_privacy_model_runs(clinic_like, candidates, delta):
    frame, bounds = clinic_like
    synth = SmoothSynthesizer(delta=delta, candidates=candidates, n_candidates=2000, seed=0)
    out = synth.fit(frame, bounds=bounds).sample(50)
    assert out.shape == (50, 3)
    assert synth.privacy_report()["parameters"]["candidates"] == candidates


def test_moment_candidates_release_every_degree_two_moment_and_spend_nothing_on_pca(clinic_like):
    frame, bounds = clinic_like
    report = SmoothSynthesizer(delta=1e-8, candidates="moments", n_candidates=1000, seed=0).fit(
        frame, bounds=bounds).privacy_report()
    assert report["parameters"]["n_basis"] == 9  # 3 means + 3 squares + 3 products
    assert {e["stage"] for e in report["privacy"]["stages"]} == {"clip_count", "moments"}
    with pytest.raises(SynthDPError, match="n-basis"):
        SmoothSynthesizer(candidates="moments", n_basis=5).fit(frame, bounds=bounds)


@pytest.mark.parametrize("remedy", [{"spread": 0.1, "blend": 0.0, "tilt": 0.0}, {"blend": 0.5, "tilt": 0.0},
                                    {"tilt": 1.0}])
def test_spread_blend_and_tilt_give_more_distinct_rows_and_report_themselves(clinic_like, remedy):
    frame, bounds = clinic_like
    distinct, reports = {}, {}
    for name, options in (("vertex", {"blend": 0.0, "tilt": 0.0}), ("remedy", remedy)):
        synth = SmoothSynthesizer(delta=1e-6, n_candidates=2000, seed=3, **options).fit(frame, bounds=bounds)
        reports[name] = synth.privacy_report(synth.sample())
        distinct[name] = reports[name]["output"]["distinct_rows"]
    assert distinct["vertex"] <= synth.release_.plan.n_basis + 1 < distinct["remedy"]
    lp = reports["remedy"]["lp"]
    assert reports["vertex"]["lp"]["reweighting"] == "none"
    if "spread" in remedy or "blend" in remedy:
        tolerance = max(remedy.values()) * synth.release_.moment_noise_l1
        assert lp["objective"] <= reports["vertex"]["lp"]["objective"] + tolerance * (1 + 1e-6)
    if "spread" in remedy:
        assert lp["spread"] == 0.1 and lp["reweighting"] == "spread" and "LP spread" in reports["remedy"]["timings_seconds"]
    elif "blend" in remedy:
        assert lp["blend"] == 0.5 and lp["reweighting"] == "blend" and 0 < lp["uniform_share"] <= 1
    else:  # the tilt: every moment within one noise sd of its release, or within the optimum's residual
        assert lp["reweighting"] == "tilt" and lp["tilt"] == 1.0 and "LP tilt" in reports["remedy"]["timings_seconds"]
        assert reports["remedy"]["lp"]["support_size"] == 2000  # every candidate keeps some mass


def test_numpy_scalars_are_parameters_and_the_report_holds_plain_numbers(clinic_like):
    """A grid from np.arange or a seed from a Generator: numpy scalars are taken, as Python's numbers."""
    import json

    frame, bounds = clinic_like
    synth = SmoothSynthesizer(epsilon=np.float32(2.0), delta=np.float64(1e-6), n_candidates=np.int64(500),
                              seed=np.int64(5), marginal_bins=np.int32(8))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TestingSeedWarning)
        synth.fit(frame, bounds=bounds)
    config = synth.privacy_report()["parameters"]["config"]
    assert type(config["seed"]) is int and type(config["epsilon"]) is float and config["marginal_bins"] == 8
    json.dumps(synth.privacy_report())
    for bad in (np.bool_(True), np.array([2.0])):
        with pytest.raises(SynthDPError, match="epsilon must be a finite number > 0"):
            SynthConfig(epsilon=bad)


def test_a_parameter_the_fit_does_not_use_warns_and_a_failed_fit_leaves_nothing_to_sample(clinic_like):
    frame, bounds = clinic_like
    with pytest.warns(UserWarning, match="pca_share acts only with candidates='pca': ignored in this fit"):
        synth = SmoothSynthesizer(pca_share=0.5, n_candidates=300).fit(frame, bounds=bounds)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # the default: nothing to warn of
        SmoothSynthesizer(n_candidates=300).fit(frame, bounds=bounds)
    assert len(synth.sample(5)) == 5
    with pytest.raises(SynthDPError, match="epsilon must be a finite number > 0"):
        synth.set_params(epsilon=-1.0, pca_share=0.3).fit(frame, bounds=bounds)
    with pytest.raises(SynthDPError, match="call fit"):
        synth.sample(5)  # not the earlier fit's rows


def test_copies_refuse_a_bad_row_count_before_any_refit(clinic_like, monkeypatch):
    import synthdp.pipeline.copies as copies_module

    frame, bounds = clinic_like
    synth = SmoothSynthesizer(n_candidates=300, epsilon=2.0, delta=1e-6).fit(frame, bounds=bounds)
    monkeypatch.setattr(copies_module, "inference_fit", lambda *args: pytest.fail("refitted before the check"))
    for bad in (0, 2.5, True):
        with pytest.raises(SynthDPError, match="rows to sample must be an integer >= 1"):
            synth.sample_copies(2, n_rows=bad)


def test_the_estimator_follows_scikit_learn_conventions(clinic_like):
    """get_params / set_params / clone; parameters stored untouched; sample() leaves the fit alone."""
    from sklearn.base import clone

    from synthdp.config import SynthConfig

    frame, bounds = clinic_like
    synth = SmoothSynthesizer(epsilon=2.0, delta=1e-6, n_candidates=500, seed=5)
    params = synth.get_params()
    assert set(params) == set(SynthConfig.keys()) | {"progress"}
    assert params["epsilon"] == 2.0 and params["n_candidates"] == 500 and params["blend"] == SynthConfig.blend
    twin = clone(synth)
    assert twin is not synth and twin.get_params() == params
    assert synth.set_params(epsilon=1.0) is synth and synth.epsilon == 1.0
    with pytest.raises(ValueError, match="invalid parameter"):
        synth.set_params(epsilon_total=1.0)
    with pytest.raises(ValueError, match="invalid parameter 'bogus'"):  # and none of them is set
        synth.set_params(epsilon=3.0, bogus=1)
    assert synth.epsilon == 1.0
    with pytest.raises(TypeError, match="unexpected keyword argument"):
        SmoothSynthesizer(epsilon_total=1.0)
    twin.fit(frame, bounds=bounds)
    before = (twin.release_, twin.lp_, twin.support_points_.copy(), twin.support_weights_.copy(), twin.privacy_report())
    first, second = twin.sample(50), twin.sample(50)
    assert twin.release_ is before[0] and twin.lp_ is before[1]
    np.testing.assert_array_equal(twin.support_points_, before[2])
    np.testing.assert_array_equal(twin.support_weights_, before[3])
    assert twin.privacy_report() == before[4]  # no trace of the samples in the fitted state
    assert not first.equals(second)  # ... but each call draws new rows
    assert clone(twin).get_params() == twin.get_params() and not hasattr(clone(twin), "release_")


def test_study_options_at_their_defaults_release_what_no_study_releases_and_exact_stages_are_not_private(clinic_like):
    """fit(..., study=StudyOptions()) is the product draw for draw; exact stages say the release is NOT private."""
    from synthdp.config import SynthConfig
    from synthdp.pipeline.run import StudyOptions, fit

    frame, bounds = clinic_like
    config = SynthConfig(epsilon=16.0, delta=1e-6, seed=7, candidates="copula", n_basis=9)  # pairs released

    def fitted(study):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TestingSeedWarning)
            return fit(config, frame, bounds=bounds, study=study)

    product, defaults = fitted(None), fitted(StudyOptions())
    assert product.release.noisy_scores is not None
    for name in ("noisy_moments", "noisy_histograms", "noisy_scores", "moment_noise_sd"):
        np.testing.assert_array_equal(getattr(defaults.release, name), getattr(product.release, name))
    np.testing.assert_array_equal(defaults.support_points, product.support_points)
    np.testing.assert_array_equal(defaults.support_weights, product.support_weights)
    assert defaults.ledger.to_dict() == product.ledger.to_dict()
    with pytest.warns(PrivacyLeakWarning, match="NOT differentially private"):
        oracle = fitted(StudyOptions(exact_stages=("moments",)))
    privacy = oracle.ledger.to_dict()
    assert not privacy["differentially_private"]
    assert any("NOT differentially private" in c and "moments" in c for c in privacy["caveats"])
    assert [e.stage for e in oracle.ledger.events] == [e.stage for e in product.ledger.events]  # noise still drawn
    np.testing.assert_array_equal(oracle.release.noisy_histograms, product.release.noisy_histograms)  # same draws
    assert not np.array_equal(oracle.release.noisy_moments, product.release.noisy_moments)
    with pytest.raises(SynthDPError, match="exact_stages"):
        StudyOptions(exact_stages=("pca",))
    with pytest.raises(SynthDPError, match="exact_stages"):
        StudyOptions(exact_stages="moments")
    with pytest.raises(SynthDPError, match="pair_variances"):
        StudyOptions(pair_variances="copula")
    with pytest.raises(SynthDPError, match="ordinal_levels"):
        StudyOptions(ordinal_levels="raw")
    with pytest.raises(SynthDPError, match="extend_blocks"):
        StudyOptions(extend_blocks=True)


def test_check_is_fitted_and_not_fitted_as_scikit_learn_reads_them(clinic_like, tmp_path):
    """sklearn.utils.validation.check_is_fitted (scikit-learn >= 1.6 reads __sklearn_tags__) raises NotFittedError
    before fit and after a failed refit, and passes after fit and on a loaded model file."""
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted

    frame, bounds = clinic_like
    synth = SmoothSynthesizer(n_candidates=300, seed=2)
    with pytest.raises(NotFittedError):
        check_is_fitted(synth)
    with pytest.warns(TestingSeedWarning):
        synth.fit(frame, bounds=bounds)
    check_is_fitted(synth)
    synth.save(tmp_path / "model.synthdp")
    check_is_fitted(SmoothSynthesizer.load(tmp_path / "model.synthdp"))
    with pytest.raises(SynthDPError), warnings.catch_warnings():
        warnings.simplefilter("ignore", TestingSeedWarning)
        synth.fit(frame, bounds={"age": [18, 90]})  # no bounds for the other columns
    with pytest.raises(NotFittedError):
        check_is_fitted(synth)


def test_a_misspelt_parameter_is_named_with_the_nearest_one():
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'favor' \(did you mean 'favour'\?\)"):
        SmoothSynthesizer(favor="relationships")
    with pytest.raises(ValueError, match=r"invalid parameter 'n_candidate' for SmoothSynthesizer \(did you mean "
                                         r"'n_candidates'\?\)"):
        SmoothSynthesizer().set_params(n_candidate=300)
    with pytest.raises(ValueError, match=r"invalid parameter 'xyz' for SmoothSynthesizer; valid: "):
        SmoothSynthesizer().set_params(xyz=1)


def _caught_here(caught, text: str) -> list:
    return [w for w in caught if text in str(w.message)]


def test_warnings_deep_in_the_pipeline_name_the_callers_line(clinic_like):
    """A warning from a fit or a sample names the user's line that called it (warnings.warn's stacklevel), not a
    line of synthdp, however deep it arises: the DP bounds' warning, the PCA axes', a condition's few points."""
    frame, bounds = clinic_like
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        SmoothSynthesizer(n_candidates=300, seed=1, bounds_share=0.05).fit(frame, bounds={"age": bounds["age"]})
        SmoothSynthesizer(n_candidates=300, seed=1, candidates="pca", epsilon=0.01).fit(frame, bounds=bounds)
        synth = SmoothSynthesizer(n_candidates=300, seed=1).fit(frame, bounds=bounds)
        row = synth.sample(1, seed=0).iloc[0]
        synth.sample(5, condition=f"age == {int(row['age'])} and score == {float(row['score'])!r}", seed=0)
    for text in ("private bounds for 2 column(s)", "private PCA axes have no variance", "effective support points"):
        found = _caught_here(caught, text)
        assert found, text
        assert all(w.filename == __file__ for w in found), (text, [w.filename for w in found])


def test_given_values_name_columns_as_the_fit_does(clinic_like):
    """A DataFrame fitted with columns named by numbers samples them as text ('0'): given values may name them
    either way, as Condition objects may."""
    from synthdp import Condition

    frame, bounds = clinic_like
    numbered = frame.set_axis(range(frame.shape[1]), axis=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TestingSeedWarning)
        synth = SmoothSynthesizer(n_candidates=300, seed=3).fit(numbered, bounds=dict(enumerate(bounds.values())))
    age = int(synth.sample(1, seed=0).iloc[0]["0"])
    by_number = synth.sample_from_conditions(pd.DataFrame({0: [age, None]}, index=[7, 8]), seed=1)
    by_text = synth.sample_from_conditions(pd.DataFrame({"0": [age, None]}, index=[7, 8]), seed=1)
    pd.testing.assert_frame_equal(by_number, by_text)
    assert list(by_number.index) == [7, 8] and by_number["0"].iloc[0] == age
    conditions = synth.sample_from_conditions([Condition({0: age}, num_rows=2)], seed=1)
    assert (conditions["0"] == age).all()
    with pytest.raises(SynthDPError, match="twice"):
        synth.sample_from_conditions(pd.DataFrame({0: [age], "0": [age]}), seed=1)


def test_a_fit_of_statistics_only_says_it_has_no_support_points():
    """support_points_ after fit(synthesize=False) was array(None, dtype=object)."""
    frame = pd.DataFrame({"x": np.linspace(0, 1, 200), "y": np.linspace(1, 0, 200)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth = SmoothSynthesizer(epsilon=1.0, seed=0).fit(frame, bounds={"x": [0, 1], "y": [0, 1]}, synthesize=False)
    with pytest.raises(SynthDPError, match=r"released statistics only \(synthesize=False\): it has no support points"):
        _ = synth.support_points_


def test_a_dataframe_with_multiindex_columns_is_told_to_name_each_column_once():
    """Two-level column names were refused as "bounds name unknown column 'age'"."""
    frame = pd.DataFrame(np.ones((20, 2)), columns=pd.MultiIndex.from_tuples([("a", "x"), ("a", "y")]))
    with pytest.raises(SynthDPError, match="columns are a MultiIndex: give each column one name"):
        SmoothSynthesizer(epsilon=1.0).fit(frame, bounds={"a_x": [0, 1], "a_y": [0, 1]})


@pytest.mark.parametrize("value, shown", [(pd.NA, "epsilon=<NA>"), (np.array([1.0, 2.0]), "epsilon=array([1., 2.])"),
                                          (float("nan"), "epsilon=nan"), (2.0, "epsilon=2.0")])
def test_the_repr_shows_a_parameter_whose_comparison_is_no_truth_value(value, shown):
    """repr compared each parameter with its default as a truth value: pandas.NA (and an array) raised
    TypeError (ValueError) from repr itself. Such a value is shown; a default one is left out."""
    assert repr(SmoothSynthesizer(epsilon=value)) == f"SmoothSynthesizer({shown})"
    assert repr(SmoothSynthesizer(epsilon=1.0)) == "SmoothSynthesizer()"  # the default


NEEDS_THE_FIT = {
    "sample()": lambda synth, path: synth.sample(5),
    "sample_from_conditions()": lambda synth, path: synth.sample_from_conditions(pd.DataFrame({"age": [30.0]})),
    "sample_copies()": lambda synth, path: synth.sample_copies(2),
    "save()": lambda synth, path: synth.save(path),
    "summary()": lambda synth, path: synth.summary(),
    "marginal_summary()": lambda synth, path: synth.marginal_summary(),
    "privacy_report()": lambda synth, path: synth.privacy_report(),
    "support_points_": lambda synth, path: synth.support_points_,
    "theory_rows": lambda synth, path: synth.theory_rows,
}


@pytest.mark.parametrize("method", list(NEEDS_THE_FIT))
def test_a_method_called_before_fit_raises_scikit_learns_not_fitted_error_naming_it(method, tmp_path, clinic_like):
    """Each public method that needs a fit, called before one (or after a fit that failed), raised a plain
    SynthDPError that named sample(), summary() and privacy_report() whatever was called. It is now also
    scikit-learn's NotFittedError (a ValueError and an AttributeError), naming the method, and writes nothing."""
    from sklearn.exceptions import NotFittedError

    from synthdp.errors import NotFittedError as SynthDPNotFittedError

    frame, bounds = clinic_like
    synth = SmoothSynthesizer(n_candidates=300)
    failed = SmoothSynthesizer(n_candidates=300)
    with pytest.raises(SynthDPError):
        failed.fit(frame, bounds={"age": [18, 90]})  # no bounds for the other columns: nothing fitted
    for unfitted in (synth, failed):
        with pytest.raises(NotFittedError) as error:
            NEEDS_THE_FIT[method](unfitted, tmp_path / "m.synthdp")
        assert isinstance(error.value, SynthDPError) and isinstance(error.value, SynthDPNotFittedError)
        assert isinstance(error.value, AttributeError) and isinstance(error.value, ValueError)
        assert str(error.value) == f"call fit() before {method}"
    assert list(tmp_path.iterdir()) == []
