"""Tests of the smooth-query evaluation protocol (synthdp.evaluation.queries)."""

from __future__ import annotations

import ast
import dataclasses
import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from synthdp.errors import SynthDPError
from synthdp.evaluation import queries as evaluation
from synthdp.evaluation.queries import (
    SIGMAS,
    KernelQueries,
    answer_queries,
    gaussian_kernel_queries,
    to_unit,
    worst_case_errors,
)


def naive_answers(points, alpha, centres, sigmas, weights=None):
    """Independent reference: plain Python loops over sigmas, queries, kernels and rows."""
    points = np.asarray(points, dtype=float)
    weights = np.ones(len(points)) if weights is None else np.asarray(weights, dtype=float)
    out = np.zeros((len(sigmas), len(alpha)))
    for s, sigma in enumerate(sigmas):
        for q in range(len(alpha)):
            total = 0.0
            for i, x in enumerate(points):
                f = 0.0
                for j in range(len(alpha[q])):
                    diff = [x[k] - centres[q][j][k] for k in range(len(x))]
                    f += alpha[q][j] * math.exp(-sum(v * v for v in diff) / (2.0 * sigma * sigma))
                total += weights[i] * f
            out[s, q] = total / sum(weights)
    return out


@pytest.fixture
def tiny():
    rng = np.random.default_rng(11)
    points = rng.uniform(-1, 1, size=(7, 3))
    queries = gaussian_kernel_queries(3, 5, np.random.default_rng(3), n_kernels=4)
    return points, queries


# ------------------------------------------------------------------ queries
def test_queries_shapes_ranges_and_determinism():
    queries = gaussian_kernel_queries(6, 200, np.random.default_rng(0))
    assert queries.alpha.shape == (200, 10)
    assert queries.centres.shape == (200, 10, 6)
    assert (queries.n_queries, queries.n_kernels, queries.d, len(queries)) == (200, 10, 6, 200)
    assert queries.alpha.min() >= 0 and queries.alpha.max() <= 1
    assert queries.centres.min() >= -1 and queries.centres.max() <= 1
    # they fill their ranges (not, e.g., U[0, 1] centres)
    assert queries.centres.min() < -0.95 and queries.centres.max() > 0.95
    assert queries.alpha.min() < 0.05 and queries.alpha.max() > 0.95
    again = gaussian_kernel_queries(6, 200, np.random.default_rng(0))
    np.testing.assert_array_equal(queries.alpha, again.alpha)
    np.testing.assert_array_equal(queries.centres, again.centres)


def test_queries_are_frozen_and_read_only():
    queries = gaussian_kernel_queries(2, 3, np.random.default_rng(0))
    with pytest.raises(dataclasses.FrozenInstanceError):
        queries.alpha = np.zeros((3, 10))
    with pytest.raises(ValueError, match="read-only"):  # numpy's own error
        queries.alpha[0, 0] = 5.0
    source = np.zeros((1, 1))
    held = KernelQueries(source, np.zeros((1, 1, 2)))
    source[0, 0] = 1.0  # the dataclass holds its own copy
    assert held.alpha[0, 0] == 0.0


@pytest.mark.parametrize("bad", [0, -1, 2.5, True])
def test_queries_reject_bad_sizes(bad):
    with pytest.raises(SynthDPError):
        gaussian_kernel_queries(bad, 5, np.random.default_rng(0))
    with pytest.raises(SynthDPError):
        gaussian_kernel_queries(2, bad, np.random.default_rng(0))


def test_kernel_queries_checks_shapes():
    with pytest.raises(SynthDPError):
        KernelQueries(np.ones((3, 2)), np.ones((3, 4, 2)))


# ------------------------------------------------------------------ answers
def test_answers_match_naive_loop(tiny):
    points, queries = tiny
    sigmas = [0.3, 1.0, 2.0, 10.0]
    expected = naive_answers(points, queries.alpha.tolist(), queries.centres.tolist(), sigmas)
    got = answer_queries(points, queries, sigmas)
    assert got.shape == (4, 5)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("block_bytes, n_jobs", [(8, 1), (8 * 3, 2), (8 * 7 * 2, 3), (2**20, None)])
def test_answers_do_not_depend_on_tiling_or_threads(tiny, block_bytes, n_jobs):
    points, queries = tiny
    points = np.vstack([points, points[:2]])  # duplicates too
    expected = naive_answers(points, queries.alpha.tolist(), queries.centres.tolist(), SIGMAS)
    for deduplicate in (True, False):
        got = answer_queries(points, queries, SIGMAS, deduplicate=deduplicate,
                             block_bytes=block_bytes, n_jobs=n_jobs)
        np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_answers_with_weights_equal_repeated_rows(tiny):
    points, queries = tiny
    counts = np.array([0, 1, 3, 2, 0, 1, 5])
    repeated = np.repeat(points, counts, axis=0)
    by_weights = answer_queries(points, queries, SIGMAS, weights=counts)
    by_rows = answer_queries(repeated, queries, SIGMAS, deduplicate=False)
    np.testing.assert_allclose(by_weights, by_rows, rtol=1e-12)
    expected = naive_answers(points, queries.alpha.tolist(), queries.centres.tolist(), SIGMAS, counts)
    np.testing.assert_allclose(by_weights, expected, rtol=1e-12)


def test_answer_known_values():
    # one point on a one-kernel query's centre: f = alpha exactly, for every sigma
    queries = KernelQueries(np.array([[0.7]]), np.array([[[0.2, -0.4]]]))
    got = answer_queries(np.array([[0.2, -0.4]]), queries, [1.0, 5.0])
    np.testing.assert_allclose(got, [[0.7], [0.7]], rtol=1e-14)
    # distance 2 along one axis: exp(-4 / (2 sigma^2))
    got = answer_queries(np.array([[1.0, 1.0], [-1.0, 1.0]]),
                         KernelQueries(np.array([[1.0]]), np.array([[[1.0, 1.0]]])), [2.0])
    np.testing.assert_allclose(got, [[(1.0 + math.exp(-0.5)) / 2]], rtol=1e-14)


def test_answers_bounded_by_alpha_sum_and_monotone_in_sigma():
    rng = np.random.default_rng(5)
    queries = gaussian_kernel_queries(4, 50, rng)
    answers = answer_queries(rng.uniform(-1, 1, (40, 4)), queries, SIGMAS)
    assert (answers > 0).all()
    assert (answers <= queries.alpha.sum(axis=1)[None, :] + 1e-12).all()
    assert (np.diff(answers, axis=0) > 0).all()  # wider kernels give larger values


def test_answers_accept_dataframe(tiny):
    points, queries = tiny
    frame = pd.DataFrame(points, columns=["a", "b", "c"])
    np.testing.assert_array_equal(answer_queries(frame, queries), answer_queries(points, queries))


@pytest.mark.parametrize("kwargs", [
    {"sigmas": [0.0]}, {"sigmas": []}, {"sigmas": [np.nan]}, {"weights": np.zeros(7)},
    {"weights": -np.ones(7)}, {"weights": np.ones(6)}, {"block_bytes": 0}, {"n_jobs": 0},
])
def test_answers_reject_bad_arguments(tiny, kwargs):
    points, queries = tiny
    with pytest.raises(SynthDPError):
        answer_queries(points, queries, **kwargs)


def test_answers_reject_wrong_dimension(tiny):
    points, queries = tiny
    with pytest.raises(SynthDPError):
        answer_queries(points[:, :2], queries)
    with pytest.raises(SynthDPError):
        answer_queries(np.full((2, 3), np.nan), queries)


# ------------------------------------------------------------------- errors
def test_table_against_itself_has_zero_error():
    rng = np.random.default_rng(2)
    points = rng.uniform(-1, 1, (30, 5))
    queries = gaussian_kernel_queries(5, 100, rng)
    true = answer_queries(points, queries)
    # the same table with its rows shuffled is the same multiset
    shuffled = answer_queries(points[rng.permutation(30)], queries)
    errors = worst_case_errors(true, shuffled, queries.alpha)
    for values in (errors.absolute, errors.absolute_scaled, errors.relative):
        assert values.shape == (len(SIGMAS),)
        np.testing.assert_allclose(values, 0.0, atol=1e-13)


def test_worst_case_errors_by_hand():
    true = np.array([[1.0, 2.0, 4.0], [2.0, 2.0, 2.0]])
    synth = np.array([[1.5, 1.0, 4.0], [2.0, 2.2, 1.0]])
    alpha = np.array([[0.5, 0.5], [1.0, 3.0], [0.25, 0.25]])  # sums 1, 4, 0.5
    errors = worst_case_errors(true, synth, alpha)
    np.testing.assert_allclose(errors.absolute, [1.0, 1.0])
    np.testing.assert_allclose(errors.absolute_scaled, [0.5, 2.0])  # (|.5|/1, |1|/4, 0) ; (0, .2/4, 1/.5)
    np.testing.assert_allclose(errors.relative, [0.5, 0.5])
    assert errors.to_dict()["relative"] == [0.5, 0.5]


def test_scaled_error_is_error_of_normalised_queries():
    rng = np.random.default_rng(4)
    real, synth = rng.uniform(-1, 1, (25, 3)), rng.uniform(-1, 1, (9, 3))
    queries = gaussian_kernel_queries(3, 40, rng)
    totals = queries.alpha.sum(axis=1, keepdims=True)
    normalised = KernelQueries(queries.alpha / totals, queries.centres)
    errors = worst_case_errors(answer_queries(real, queries), answer_queries(synth, queries), queries.alpha)
    plain = worst_case_errors(answer_queries(real, normalised), answer_queries(synth, normalised),
                              normalised.alpha)
    np.testing.assert_allclose(errors.absolute_scaled, plain.absolute, rtol=1e-12)
    np.testing.assert_allclose(plain.absolute_scaled, plain.absolute, rtol=1e-12)  # sums are 1 now
    np.testing.assert_allclose(errors.relative, plain.relative, rtol=1e-10)
    # the scaled error is smaller than the raw one but not by more than the largest alpha sum
    assert (errors.absolute_scaled < errors.absolute).all()
    assert (errors.absolute_scaled * totals.max() >= errors.absolute - 1e-15).all()


def test_relative_error_is_scale_invariant():
    rng = np.random.default_rng(8)
    true = rng.uniform(0.1, 2.0, (5, 50))
    synth = true * rng.uniform(0.8, 1.2, (5, 50))
    alpha = rng.uniform(0, 1, (50, 10))
    base = worst_case_errors(true, synth, alpha)
    scaled = worst_case_errors(true * 37.0, synth * 37.0, alpha * 37.0)
    np.testing.assert_allclose(scaled.relative, base.relative, rtol=1e-12)
    np.testing.assert_allclose(scaled.absolute, 37.0 * base.absolute, rtol=1e-12)
    np.testing.assert_allclose(scaled.absolute_scaled, base.absolute_scaled, rtol=1e-12)


def test_relative_error_with_zero_true_answer():
    alpha = np.ones((2, 1))
    assert worst_case_errors([0.0, 1.0], [0.0, 1.0], alpha).relative[0] == 0.0
    assert worst_case_errors([0.0, 1.0], [0.1, 1.0], alpha).relative[0] == np.inf


def test_worst_case_errors_checks_shapes():
    with pytest.raises(SynthDPError):
        worst_case_errors(np.ones((2, 3)), np.ones((2, 4)), np.ones((3, 1)))
    with pytest.raises(SynthDPError):
        worst_case_errors(np.ones((2, 3)), np.ones((2, 3)), np.ones((4, 1)))
    with pytest.raises(SynthDPError):
        worst_case_errors(np.ones((1, 2)), np.ones((1, 2)), np.zeros((2, 3)))


# ------------------------------------------------------------------ to_unit
def test_to_unit_maps_bounds_and_clips():
    frame = pd.DataFrame({"a": [0.0, 5.0, 10.0, 12.0], "b": [-3.0, -1.0, 1.0, -4.0]})
    unit = to_unit(frame, [0.0, -3.0], [10.0, 1.0])
    np.testing.assert_allclose(unit, [[-1, -1], [0, 0], [1, 1], [1, -1]])
    by_name = to_unit(frame, {"b": -3.0, "a": 0.0}, {"a": 10.0, "b": 1.0})
    np.testing.assert_array_equal(by_name, unit)
    np.testing.assert_array_equal(to_unit(frame.to_numpy(), [0.0, -3.0], [10.0, 1.0]), unit)


def test_to_unit_same_bounds_make_tables_comparable():
    rng = np.random.default_rng(1)
    real = pd.DataFrame(rng.normal(50, 10, (40, 2)), columns=["x", "y"])
    lower, upper = real.min().to_numpy(), real.max().to_numpy()
    queries = gaussian_kernel_queries(2, 30, rng)
    true = answer_queries(to_unit(real, lower, upper), queries)
    copy = answer_queries(to_unit(real.sample(frac=1.0, random_state=0), lower, upper), queries)
    assert worst_case_errors(true, copy, queries.alpha).relative.max() < 1e-12
    shifted = answer_queries(to_unit(real + 5.0, lower, upper), queries)
    assert worst_case_errors(true, shifted, queries.alpha).relative.max() > 1e-3


@pytest.mark.parametrize("lower, upper", [([0.0], [1.0]), ([1.0, 0.0], [1.0, 1.0]), ([0.0, np.nan], [1.0, 1.0])])
def test_to_unit_rejects_bad_bounds(lower, upper):
    with pytest.raises(SynthDPError):
        to_unit(np.zeros((2, 2)), lower, upper)


def test_to_unit_rejects_missing_column_bound():
    with pytest.raises(SynthDPError):
        to_unit(pd.DataFrame({"a": [1.0], "b": [2.0]}), {"a": 0.0}, {"a": 3.0, "b": 3.0})


# ------------------------------------------------------------------ imports
def test_module_does_not_import_private_code():
    tree = ast.parse(Path(evaluation.__file__).read_text(encoding="utf-8"))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = ("." * node.level) + (node.module or "")
            imported.add(base)
            imported.update(f"{base}.{alias.name}" for alias in node.names)
    forbidden = ("private_table", "release", "cli")
    for name in imported:
        assert not any(part in forbidden for part in name.replace(".", " ").split()), name


def test_to_unit_clips_a_huge_value_to_its_bound_without_an_overflow():
    """A synthetic value near 1.8e308 outside the bounds [0, 10] maps to 1 (and -1.8e308 to -1), as any value
    past a bound does, with no overflow on the way (numpy would warn, and the command would print it)."""
    from synthdp.evaluation.queries import to_unit

    values = np.array([[1.7e308], [-1.7e308], [5.0], [10.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mapped = to_unit(values, [0.0], [10.0])
    assert mapped[:, 0].tolist() == [1.0, -1.0, 0.0, 1.0]
