"""Utility metrics beyond smooth queries (synthdp.evaluation.metrics), each against an independent computation.

Every check here is deterministic (fixed tables, fixed seeds for the split and the models): none
has a false-failure rate. The model-accuracy tolerances (e.g. a copy of the real table scoring
within 0.03 of it) are margins for these fixed tables, not sampling bounds.
"""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest

from synthdp.errors import SynthDPError
from synthdp.evaluation.metrics import (
    correlation_error,
    distinct_rows,
    format_report,
    invented_pairs,
    ks_distances,
    model_accuracy,
    utility_report,
)
from synthdp.evaluation.queries import SIGMAS, answer_queries, gaussian_kernel_queries, to_unit, worst_case_errors


def brute_force_ks(a, b):
    """max over every observed value t of |F_a(t) - F_b(t)|, with plain loops."""
    best = 0.0
    for t in list(a) + list(b):
        fa = sum(1 for v in a if v <= t) / len(a)
        fb = sum(1 for v in b if v <= t) / len(b)
        best = max(best, abs(fa - fb))
    return best


def pearson(x, y):
    """Pearson correlation by the textbook formula; 0 when either column is constant."""
    mx, my = sum(x) / len(x), sum(y) / len(y)
    sxy = sum((u - mx) * (v - my) for u, v in zip(x, y))
    sxx = sum((u - mx) ** 2 for u in x)
    syy = sum((v - my) ** 2 for v in y)
    return 0.0 if sxx == 0 or syy == 0 else sxy / (sxx * syy) ** 0.5


@pytest.fixture
def small():
    rng = np.random.default_rng(5)
    real = pd.DataFrame({"a": rng.normal(0, 1, 40), "b": rng.integers(0, 4, 40), "c": rng.uniform(-2, 2, 40)})
    real["b"] = real["b"].astype(float)
    synth = pd.DataFrame({"a": rng.normal(0.3, 1.2, 25), "b": rng.integers(0, 5, 25).astype(float),
                          "c": rng.uniform(-1, 3, 25)})
    return real, synth


# ------------------------------------------------------------------ distinct rows
def test_distinct_rows_counts_rows_equal_in_every_column():
    frame = pd.DataFrame({"x": [1, 1, 2, 1, 2], "y": [0.5, 0.5, 0.5, 0.7, 0.5]})
    assert distinct_rows(frame) == 3  # (1, .5), (2, .5), (1, .7)
    assert distinct_rows(pd.DataFrame({"x": [3.0] * 7, "y": [1] * 7})) == 1
    assert distinct_rows(pd.DataFrame({"x": np.arange(9)})) == 9


# ------------------------------------------------------------------ Kolmogorov-Smirnov
def test_ks_of_identical_tables_is_zero(small):
    real, _ = small
    assert ks_distances(real, real.copy()) == {"a": 0.0, "b": 0.0, "c": 0.0}


def test_ks_of_disjoint_supports_is_one():
    real = pd.DataFrame({"x": [0.0, 1.0, 2.0, 3.0], "y": [5.0, 6.0, 7.0, 8.0]})
    synth = pd.DataFrame({"x": [10.0, 11.0, 12.0], "y": [-1.0, -2.0, -3.0]})
    assert ks_distances(real, synth) == {"x": 1.0, "y": 1.0}


def test_ks_matches_a_brute_force_ecdf_difference_with_ties(small):
    real, synth = small
    result = ks_distances(real, synth)
    assert list(result) == ["a", "b", "c"]
    for name in real.columns:
        assert result[name] == pytest.approx(brute_force_ks(real[name].tolist(), synth[name].tolist()), abs=1e-12)
    assert 0 < result["b"] < 1  # integer-valued: many ties


def test_ks_by_hand():
    real = pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0]})
    synth = pd.DataFrame({"x": [3.0, 4.0]})  # at t = 2: F_real = 1/2, F_synth = 0
    assert ks_distances(real, synth)["x"] == pytest.approx(0.5)


def test_ks_matches_columns_by_name_not_position(small):
    real, synth = small
    assert ks_distances(real, synth[["c", "a", "b"]]) == ks_distances(real, synth)


# ------------------------------------------------------------------ correlation
def test_correlation_error_of_a_table_with_itself_is_zero(small):
    real, _ = small
    result = correlation_error(real, real.copy())
    assert result["max"] == pytest.approx(0, abs=1e-12) and result["mean"] == pytest.approx(0, abs=1e-12)
    assert result["pairs"] == 3 and result["constant_columns"] == {"real": [], "synthetic": []}


def test_correlation_error_of_a_column_permuted_copy_is_known():
    x = np.array([0.0, 1.0, 3.0, 4.0, 9.0])
    real = pd.DataFrame({"a": x, "b": -x, "c": x})  # corr(a,b) = -1, corr(a,c) = 1, corr(b,c) = -1
    synth = real.copy()
    synth["a"], synth["b"] = real["b"], real["a"]  # swap the values of a and b, keep the names
    result = correlation_error(real, synth)
    # (a, b): -1 vs -1 -> 0; (a, c): 1 vs -1 -> 2; (b, c): -1 vs 1 -> 2
    assert result["max"] == pytest.approx(2.0)
    assert result["mean"] == pytest.approx(4.0 / 3.0)
    assert result["worst_pair"] in (["a", "c"], ["b", "c"])


def test_correlation_error_matches_textbook_pearson(small):
    real, synth = small
    result = correlation_error(real, synth)
    errors = {(p, q): abs(pearson(real[p].tolist(), real[q].tolist()) - pearson(synth[p].tolist(), synth[q].tolist()))
              for p, q in itertools.combinations(real.columns, 2)}
    assert result["max"] == pytest.approx(max(errors.values()), abs=1e-12)
    assert result["mean"] == pytest.approx(sum(errors.values()) / 3, abs=1e-12)
    assert tuple(result["worst_pair"]) == max(errors, key=errors.get)


def test_a_constant_column_has_zero_correlations_by_convention():
    real = pd.DataFrame({"a": [1.0, 2.0, 3.0, 5.0], "b": [2.0, 4.0, 5.0, 11.0], "c": [1.0, 0.0, 1.0, 0.0]})
    synth = real.copy()
    synth["c"] = 7.0  # constant in the synthetic table only
    result = correlation_error(real, synth)
    expected = max(abs(pearson(real["a"].tolist(), real["c"].tolist())),
                   abs(pearson(real["b"].tolist(), real["c"].tolist())))
    assert result["max"] == pytest.approx(expected)
    assert result["constant_columns"] == {"real": [], "synthetic": ["c"]}
    assert not np.isnan(result["mean"])


def test_correlation_error_of_one_column_has_no_pair():
    frame = pd.DataFrame({"x": [1.0, 2.0, 4.0]})
    result = correlation_error(frame, frame)
    assert result["pairs"] == 0 and result["max"] is None and result["worst_pair"] is None


# ------------------------------------------------------------------ model accuracy
@pytest.fixture
def regression_table():
    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, size=(400, 3))
    y = 2 * x[:, 0] - x[:, 1] + 0.5 * x[:, 2] ** 2 + rng.normal(0, 0.05, 400)
    return pd.DataFrame({"x0": x[:, 0], "x1": x[:, 1], "x2": x[:, 2], "y": y})


@pytest.fixture
def classification_table():
    rng = np.random.default_rng(4)
    x = rng.normal(0, 1, size=(400, 2))
    label = (x[:, 0] + x[:, 1] > 0.3).astype(int)
    return pd.DataFrame({"x0": x[:, 0], "x1": x[:, 1], "label": label})


def test_regression_on_a_copy_of_the_real_table_scores_like_training_on_real(regression_table):
    result = model_accuracy(regression_table, regression_table.copy(), "y")
    assert result["task"] == "regression" and result["metric"] == "R^2"
    assert result["train_real_test_real"] > 0.9
    assert result["train_synth_test_real"] >= result["train_real_test_real"] - 0.02
    assert abs(result["baseline"]) < 0.05  # predicting the mean
    assert (result["train_real_rows"], result["test_rows"], result["train_synth_rows"]) == (280, 120, 400)


def test_a_synthetic_table_without_the_relation_scores_badly(regression_table):
    broken = regression_table.copy()
    broken["y"] = np.random.default_rng(0).permutation(broken["y"].to_numpy())
    result = model_accuracy(regression_table, broken, "y")
    assert result["train_synth_test_real"] < 0.2 < 0.9 < result["train_real_test_real"]


def test_classification_on_a_copy_scores_like_training_on_real(classification_table):
    result = model_accuracy(classification_table, classification_table.copy(), "label")
    assert result["task"] == "classification" and result["metric"] == "accuracy"
    assert result["train_real_test_real"] > 0.85
    assert result["train_synth_test_real"] >= result["train_real_test_real"] - 0.03
    share = classification_table["label"].mean()
    assert result["baseline"] == pytest.approx(max(share, 1 - share), abs=0.06)


def test_numeric_synthetic_labels_are_moved_to_the_nearest_class(classification_table):
    blurred = classification_table.copy()
    blurred["label"] = 0.1 + 0.8 * blurred["label"]  # 0 -> 0.1, 1 -> 0.9: a synthesiser's continuous output
    exact = model_accuracy(classification_table, classification_table.copy(), "label")
    snapped = model_accuracy(classification_table, blurred, "label")
    assert snapped["task"] == "classification"
    assert snapped["train_synth_test_real"] == exact["train_synth_test_real"]


def test_a_single_synthetic_class_predicts_that_class(classification_table):
    one_class = classification_table.copy()
    one_class["label"] = 1
    result = model_accuracy(classification_table, one_class, "label", seed=2)
    # the held-out rows are 30 % of the real rows, stratified: the share of class 1 there
    assert result["train_synth_test_real"] == pytest.approx(classification_table["label"].mean(), abs=0.01)
    assert "DummyClassifier" in result["model"]


def test_text_labels_and_the_auto_task():
    rng = np.random.default_rng(1)
    x = rng.normal(0, 1, 200)
    text = pd.DataFrame({"x": x, "kind": np.where(x > 0, "high", "low")})
    assert model_accuracy(text, text.copy(), "kind")["task"] == "classification"
    counts = pd.DataFrame({"x": x, "k": np.clip(np.round(x + 2), 0, 4)})
    assert model_accuracy(counts, counts.copy(), "k")["task"] == "classification"
    assert model_accuracy(counts, counts.copy(), "k", task="regression")["task"] == "regression"


def test_model_accuracy_is_deterministic_for_a_seed(regression_table):
    noisy = regression_table + np.random.default_rng(9).normal(0, 0.1, regression_table.shape)
    first = model_accuracy(regression_table, noisy, "y", seed=4)
    assert first == model_accuracy(regression_table, noisy, "y", seed=4)


@pytest.mark.parametrize("kwargs, message", [
    ({"target": "z"}, "'z'"),
    ({"target": "y", "task": "clustering"}, "task"),
    ({"target": "y", "test_share": 1.5}, "test_share"),
    ({"target": "y", "seed": -1}, "seed"),
])
def test_model_accuracy_rejects_bad_arguments(regression_table, kwargs, message):
    with pytest.raises(SynthDPError, match=message):
        model_accuracy(regression_table, regression_table, **kwargs)


def test_a_target_alone_has_no_features():
    frame = pd.DataFrame({"y": [1.0, 2.0, 3.0, 4.0]})
    with pytest.raises(SynthDPError, match="besides the target"):
        model_accuracy(frame, frame, "y")


# ------------------------------------------------------------------ the report
def test_report_smooth_query_errors_follow_the_protocol(small):
    real, synth = small
    report = utility_report(real, synth, n_queries=30, seed=3)
    lower, upper = real.min().to_numpy(), real.max().to_numpy()
    queries = gaussian_kernel_queries(3, 30, np.random.default_rng(3))
    expected = worst_case_errors(answer_queries(to_unit(real, lower, upper), queries, SIGMAS),
                                 answer_queries(to_unit(synth, lower, upper), queries, SIGMAS), queries.alpha)
    section = report["smooth_queries"]
    assert section["sigmas"] == list(SIGMAS) and section["n_queries"] == 30 and section["seed"] == 3
    for key, values in expected.to_dict().items():
        np.testing.assert_allclose(section[key], values, rtol=1e-12)
    assert {c["source"] for c in section["normalisation"].values()} == {"real min/max"}


def test_report_uses_the_given_bounds_for_both_tables(small):
    real, synth = small
    bounds = {"a": [-5, 5], "b": {"bounds": [0, 10], "type": "integer"}}  # c from the real min/max
    report = utility_report(real, synth, bounds, n_queries=20, seed=0)
    lower = [-5, 0, real["c"].min()]
    upper = [5, 10, real["c"].max()]
    queries = gaussian_kernel_queries(3, 20, np.random.default_rng(0))
    expected = worst_case_errors(answer_queries(to_unit(real, lower, upper), queries),
                                 answer_queries(to_unit(synth, lower, upper), queries), queries.alpha)
    np.testing.assert_allclose(report["smooth_queries"]["relative"], expected.relative, rtol=1e-12)
    normalisation = report["smooth_queries"]["normalisation"]
    assert normalisation["a"] == {"bounds": [-5.0, 5.0], "source": "given bounds"}
    assert normalisation["c"]["source"] == "real min/max"


def test_report_of_a_table_against_itself(small):
    real, _ = small
    report = utility_report(real, real.sample(frac=1, random_state=0)[["c", "b", "a"]], target="a", n_queries=20)
    assert report["rows"] == {"real": 40, "synthetic": 40}
    assert report["distinct_rows"] == {"real": 40, "synthetic": 40}
    assert report["ks"]["max"] == 0 and report["correlation"]["max"] == pytest.approx(0, abs=1e-12)
    for key in ("absolute", "absolute_scaled", "relative"):
        assert max(report["smooth_queries"][key]) == pytest.approx(0, abs=1e-12)
    assert report["model"]["target"] == "a"
    json.dumps(report)  # plain Python types only


def test_report_handles_a_column_constant_in_the_real_table():
    real = pd.DataFrame({"x": [1.0, 2.0, 3.0], "k": [4.0, 4.0, 4.0]})
    report = utility_report(real, real.copy(), n_queries=5)
    assert report["smooth_queries"]["normalisation"]["k"]["bounds"] == [3.0, 5.0]
    assert report["correlation"]["constant_columns"]["real"] == ["k"]


@pytest.mark.parametrize("change, message", [
    (lambda s: s.drop(columns="c"), "no column 'c'"),
    (lambda s: s.assign(d=1.0), "no column 'd'"),
    (lambda s: s.assign(a="x"), "'a' of the synthetic table is not numeric"),
    (lambda s: s.assign(b=np.nan), "'b' of the synthetic table has missing"),
    (lambda s: s.iloc[:0], "synthetic table has no rows"),
])
def test_report_rejects_mismatched_or_bad_tables(small, change, message):
    real, synth = small
    with pytest.raises(SynthDPError, match=message):
        utility_report(real, change(synth), n_queries=5)


def test_report_rejects_bounds_of_an_unknown_column(small):
    real, synth = small
    with pytest.raises(SynthDPError, match="'z'"):
        utility_report(real, synth, {"z": [0, 1]}, n_queries=5)


def test_text_report_lists_every_metric(small):
    real, synth = small
    report = utility_report(real, synth, target="c", n_queries=10)
    text = format_report(report)
    assert "distinct rows" in text and "Kolmogorov-Smirnov" in text and "correlation" in text
    assert "predict c (regression, R^2" in text
    for name, value in report["ks"]["per_column"].items():
        assert any(line.split() == [name, f"{value:.4f}"] for line in text.splitlines())
    sigma_lines = [line.split() for line in text.splitlines() if line.split()[:1] in (["2"], ["4"], ["6"], ["8"], ["10"])]
    assert [float(line[0]) for line in sigma_lines] == list(SIGMAS)
    assert [float(line[3]) for line in sigma_lines] == pytest.approx(report["smooth_queries"]["relative"], abs=5e-5)


def test_invented_pairs_counts_correlations_the_real_table_does_not_have():
    """Four independent real columns (5 000 rows: sampling sd of r about .014, so a real |r| is
    0.1 or more with probability 1.5e-12, one of the six pairs' with probability below 1e-11);
    the synthetic copy ties c to a (r about .8):
    one of the six pairs is invented, and its |r| is the largest."""
    rng = np.random.default_rng(4)
    real = pd.DataFrame(rng.normal(size=(5000, 4)), columns=list("abcd"))
    synth = real.copy()
    synth["c"] = real["a"] + 0.75 * rng.normal(size=5000)
    report = invented_pairs(real, synth)
    assert report["pairs"] == 6 and report["invented"] == 1
    assert report["largest_abs_r"] == pytest.approx(np.corrcoef(synth["a"], synth["c"])[0, 1], abs=1e-12)
    assert invented_pairs(real, real)["invented"] == 0
    with pytest.raises(SynthDPError, match="invented_pairs"):
        invented_pairs(real, synth, weak=0.5, shown=0.3)


def test_correlations_of_values_near_the_largest_floats_do_not_overflow():
    """The evaluation's correlation matrix of columns whose values reach 1e307 (a column bounded near the
    largest floats) is the same as of the same columns at unit scale, with no overflow warning: each
    column is divided by its largest absolute value before its mean and squares are taken."""
    import warnings

    from synthdp.evaluation.mixed import pearson as matrix

    rng = np.random.default_rng(0)
    x = rng.normal(size=500)
    values = np.column_stack([x, 0.5 * x + rng.normal(size=500), np.full(500, 3.0)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an overflow in the mean or the squares would raise here
        huge, constant = matrix(values * np.array([1e307, 1e307, 1.0]))
    plain, _ = matrix(values)
    np.testing.assert_allclose(huge, plain, atol=1e-12)
    assert abs(plain[0, 1] - np.corrcoef(values[:, 0], values[:, 1])[0, 1]) < 1e-12
    assert constant.tolist() == [False, False, True] and huge[2].tolist() == [0.0, 0.0, 0.0]
