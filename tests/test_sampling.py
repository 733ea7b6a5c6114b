import numpy as np
import pytest
from scipy import stats

from synthdp.postprocess.sampling import clean_weights, sample_rows


def test_clean_weights_drops_round_off_negatives_and_renormalises():
    cleaned = clean_weights(np.array([0.5, -1e-12, 0.3, 0.2 + 1e-9]))
    assert np.all(cleaned >= 0)
    assert cleaned.sum() == pytest.approx(1.0, abs=1e-15)
    np.testing.assert_allclose(cleaned, np.array([0.5, 0.0, 0.3, 0.2 + 1e-9]) / (1 + 1e-9))


@pytest.mark.parametrize("weights", [[0.0, 0.0], [-0.1, 0.0], [np.nan, 1.0]])
def test_clean_weights_refuses_a_vector_without_weight(weights):
    with pytest.raises(ValueError):
        clean_weights(np.array(weights))


def test_sample_rows_frequencies_match_the_weights():
    """Chi-square goodness of fit at level 1e-6: deterministic for this seed, and a false
    failure over random seeds has probability 1e-6. Zero-weight points are never drawn."""
    points = np.array([[0.0, 0.0], [0.5, -0.5], [1.0, 1.0], [-1.0, 0.25], [0.3, 0.3]])
    weights = np.array([0.1, 0.2, 0.0, 0.4, 0.3])
    count = 20_000
    rows = sample_rows(points, weights, count, np.random.default_rng(0))
    assert rows.shape == (count, 2)
    counts = np.array([np.all(rows == p, axis=1).sum() for p in points])
    assert counts.sum() == count  # every row is one of the points
    assert counts[2] == 0
    support = weights > 0
    assert stats.chisquare(counts[support], count * weights[support]).pvalue > 1e-6


def test_sample_rows_is_reproducible_with_a_seed():
    points = np.arange(10.0).reshape(5, 2)
    weights = np.full(5, 0.2)
    first = sample_rows(points, weights, 50, np.random.default_rng(3))
    np.testing.assert_array_equal(first, sample_rows(points, weights, 50, np.random.default_rng(3)))
