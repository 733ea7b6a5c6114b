import math

import numpy as np
import pytest

from synthdp.postprocess.candidates import ellipsoid_candidates, grid_candidates, hypercube_candidates
from synthdp.released import PrivatePCA
from synthdp.stats import grid

COUNT = 50_000
# Hoeffding for a mean of COUNT values in [0, 1]: P(|mean - E| >= TOL) <= 2 exp(-2 COUNT TOL^2).
# With TOL below, each check fails falsely with probability < 1e-7 over random seeds, so each
# test (at most 5 checks) below 1e-6; the seeds are fixed, so each test is deterministic.
TOL = math.sqrt(math.log(2 / 1e-7) / (2 * COUNT))


def small_ellipsoid(rng: np.random.Generator) -> PrivatePCA:
    """d = 4, k = 2; even with the "spread" radii 2 sqrt(lambda) <= 0.6, |centre| + 0.6 < 1,
    so no point needs clipping."""
    axes = np.linalg.qr(rng.standard_normal((4, 2)))[0]
    return PrivatePCA(center=np.array([0.2, -0.1, 0.0, 0.3]), axes=axes, eigenvalues=np.array([0.09, 0.04]))


def unit_ball_coordinates(points: np.ndarray, pca: PrivatePCA, radii: np.ndarray) -> np.ndarray:
    return (points - pca.center) @ pca.axes / radii


def test_grid_candidates_are_the_full_grid():
    np.testing.assert_array_equal(grid_candidates(3, 2), grid.full_grid(3, 2))


def test_hypercube_candidates_lie_on_the_grid_and_cover_it():
    """2000 uniform draws from the 64 grid points miss one with probability
    <= 64 (63/64)^2000 < 1e-11 (over random seeds; the seed is fixed here)."""
    points = hypercube_candidates(4, 3, 2000, np.random.default_rng(0))
    assert points.shape == (2000, 3)
    assert np.all(np.isin(points, grid.midpoints(4)))
    assert len(np.unique(points, axis=0)) == 64


@pytest.mark.parametrize("radius, factor", [("paper", 1.0), ("spread", math.sqrt(2 + 2.0))])
def test_ellipsoid_points_lie_in_the_ellipsoid_and_its_plane(radius, factor):
    rng = np.random.default_rng(1)
    pca = small_ellipsoid(rng)
    points = ellipsoid_candidates(pca, 2000, rng, radius=radius)
    assert points.shape == (2000, 4)
    assert np.all(np.abs(points) < 1)  # this case needs no clipping
    radii = np.sqrt(pca.eigenvalues) * factor
    ball = unit_ball_coordinates(points, pca, radii)
    assert np.all(np.linalg.norm(ball, axis=1) <= 1 + 1e-12)
    offsets = points - pca.center
    np.testing.assert_allclose(offsets - offsets @ pca.axes @ pca.axes.T, 0, atol=1e-12)


def test_ellipsoid_points_are_uniform_in_the_ball():
    """Per-axis second moment of a uniform k-ball is 1/(k+2); P(|x| <= r) = r^k."""
    rng = np.random.default_rng(2)
    pca = small_ellipsoid(rng)
    points = ellipsoid_candidates(pca, COUNT, rng, radius="paper")
    ball = unit_ball_coordinates(points, pca, np.sqrt(pca.eigenvalues))
    k = 2
    for axis in range(k):  # each squared coordinate lies in [0, 1]
        assert abs(np.mean(ball[:, axis] ** 2) - 1 / (k + 2)) < TOL
    radius = np.linalg.norm(ball, axis=1)
    for r in (0.3, 0.5, 0.9):
        assert abs(np.mean(radius <= r) - r**k) < TOL


def test_spread_radius_matches_the_eigenvalues_as_variances():
    rng = np.random.default_rng(3)
    pca = small_ellipsoid(rng)
    points = ellipsoid_candidates(pca, COUNT, rng, radius="spread")
    projections = (points - pca.center) @ pca.axes
    squared_radii = (2 + 2) * pca.eigenvalues  # (k + 2) lambda
    # projection^2 / squared radius lies in [0, 1] with mean 1/(k+2): Hoeffding as above.
    np.testing.assert_array_less(np.abs(np.mean(projections**2, axis=0) / squared_radii - 1 / 4), TOL)


def test_large_ellipsoids_are_clipped_into_the_cube():
    rng = np.random.default_rng(4)
    pca = PrivatePCA(center=np.array([0.9, -0.9, 0.0]), axes=np.eye(3)[:, :2], eigenvalues=np.array([4.0, 1.0]))
    points = ellipsoid_candidates(pca, 2000, rng)
    assert np.all(np.abs(points) <= 1)
    assert np.any(points[:, 0] == 1.0) and np.any(points[:, 1] == -1.0)
    np.testing.assert_array_equal(points[:, 2], 0.0)  # no spread outside the span of the axes


def test_negative_eigenvalue_gives_a_flat_ellipsoid():
    pca = PrivatePCA(center=np.zeros(2), axes=np.eye(2), eigenvalues=np.array([0.25, -0.1]))
    points = ellipsoid_candidates(pca, 200, np.random.default_rng(5))
    np.testing.assert_array_equal(points[:, 1], 0.0)
    assert np.all(np.abs(points[:, 0]) <= 0.5) and np.ptp(points[:, 0]) > 0.5


def test_moment_gaussian_recovers_the_mean_and_covariance_from_exact_moments():
    from synthdp.postprocess.candidates import moment_gaussian
    from synthdp.stats.chebyshev import ChebyshevBasis, count_indices_up_to_degree, lowest_degree_indices

    rng = np.random.default_rng(0)
    points = np.clip(rng.multivariate_normal([0.1, -0.2, 0.3], [[0.1, 0.03, 0], [0.03, 0.05, -0.01], [0, -0.01, 0.08]],
                                             size=2000), -1, 1)
    indices = lowest_degree_indices(3, count_indices_up_to_degree(3, 2) + 4)  # plus some degree-3 ones
    center, covariance = moment_gaussian(indices, ChebyshevBasis(indices).moments(points))
    np.testing.assert_allclose(center, points.mean(axis=0), atol=1e-12)
    np.testing.assert_allclose(covariance, np.cov(points.T, bias=True), atol=1e-12)


def test_moment_gaussian_needs_every_degree_two_moment():
    from synthdp.postprocess.candidates import moment_gaussian
    from synthdp.stats.chebyshev import lowest_degree_indices

    indices = lowest_degree_indices(3, 6)  # degree 1 and the three squares, no products
    with pytest.raises(ValueError, match="degree 1 and 2"):
        moment_gaussian(indices, np.zeros(6))


def test_moment_gaussian_makes_a_noisy_covariance_positive_definite():
    from synthdp.postprocess.candidates import moment_gaussian
    from synthdp.stats.chebyshev import count_indices_up_to_degree, lowest_degree_indices

    count = count_indices_up_to_degree(4, 2)
    noisy = np.random.default_rng(1).normal(0, 0.5, count)  # pure noise: far from any covariance
    _, covariance = moment_gaussian(lowest_degree_indices(4, count), noisy)
    assert np.linalg.eigvalsh(covariance).min() >= 1e-6 * (1 - 1e-9)


def test_gaussian_candidates_lie_in_the_cube_with_the_requested_moments():
    """20 000 draws from a Gaussian well inside the cube (clipping at 5 sd, negligible): the
    sample mean is within 5 standard errors (false failure < 1e-6 per coordinate)."""
    from synthdp.postprocess.candidates import gaussian_candidates

    center, covariance = np.array([0.2, -0.1]), np.array([[0.02, 0.005], [0.005, 0.01]])
    points = gaussian_candidates(center, covariance, 20_000, np.random.default_rng(2))
    assert points.shape == (20_000, 2) and np.abs(points).max() <= 1
    standard_error = np.sqrt(np.diag(covariance) / 20_000)
    assert np.all(np.abs(points.mean(axis=0) - center) < 5 * standard_error)
