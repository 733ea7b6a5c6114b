import itertools

import numpy as np
import pytest
from scipy import stats

from synthdp.stats import grid


@pytest.mark.parametrize("n_cells", [1, 2, 3, 7])
def test_midpoints_are_the_cell_centres(n_cells):
    width = 2.0 / n_cells
    expected = [-1 + width * (k + 0.5) for k in range(n_cells)]
    np.testing.assert_allclose(grid.midpoints(n_cells), expected)


@pytest.mark.parametrize("n_cells", [1, 2, 5, 8])
def test_snap_returns_a_nearest_midpoint(n_cells):
    rng = np.random.default_rng(n_cells)
    cell_edges = np.linspace(-1, 1, n_cells + 1)
    x = np.concatenate([rng.uniform(-1, 1, 500), cell_edges])  # include both ends and the ties
    snapped = grid.snap(x, n_cells)
    mids = grid.midpoints(n_cells)
    distances = np.abs(x[:, None] - mids[None, :])
    brute = mids[np.argmin(distances, axis=1)]
    assert np.all(np.isin(snapped, mids))
    # Equal distance, not equal point: a value on a cell edge may go either way.
    np.testing.assert_allclose(np.abs(snapped - x), np.abs(brute - x), atol=1e-12)


def test_snap_works_per_coordinate_of_a_matrix():
    points = np.array([[-1.0, 1.0], [0.1, -0.1]])
    np.testing.assert_allclose(grid.snap(points, 4), [[-0.75, 0.75], [0.25, -0.25]])


@pytest.mark.parametrize("n_cells, d", [(1, 3), (2, 1), (3, 2), (4, 3)])
def test_full_grid_is_the_product_of_midpoints_first_axis_slowest(n_cells, d):
    points = grid.full_grid(n_cells, d)
    assert points.shape == (n_cells**d, d)
    expected = np.array(list(itertools.product(grid.midpoints(n_cells), repeat=d)))
    np.testing.assert_allclose(points, expected)


def test_random_grid_points_are_uniform_on_the_grid():
    """Each coordinate is uniform over the N midpoints.

    Chi-square goodness of fit per axis at level 1e-6 / d: with a seed fixed the test is
    deterministic; over random seeds it fails falsely with probability below 1e-6.
    """
    n_cells, d, count = 5, 3, 20_000
    points = grid.random_grid_points(n_cells, d, count, np.random.default_rng(11))
    mids = grid.midpoints(n_cells)
    assert points.shape == (count, d)
    for axis in range(d):
        counts = np.array([(points[:, axis] == m).sum() for m in mids])
        assert counts.sum() == count
        assert stats.chisquare(counts).pvalue > 1e-6 / d


def test_round_to_lattice():
    values = np.array([0.0, 0.26, -0.26, 0.74, 1.0, -0.999])
    rounded = grid.round_to_lattice(values, 4)
    np.testing.assert_allclose(rounded, [0.0, 0.25, -0.25, 0.75, 1.0, -1.0])
    assert np.all(np.abs(rounded - values) <= 1 / 8 + 1e-15)
    np.testing.assert_allclose(rounded * 4, np.round(rounded * 4))
