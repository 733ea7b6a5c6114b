import itertools
from math import comb

import numpy as np
import pytest

from synthdp.privacy.sensitivity import SPREAD_GRID, bounded_means_sensitivity, moments_sensitivity, univariate_spread
from synthdp.stats import chebyshev as basis
from synthdp.stats.chebyshev import ChebyshevBasis, lowest_degree_indices, tensor_indices


def reference_basis(points: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """phi_r(x) = prod_i cos(r_i arccos x_i), computed directly, shape (len(points), R)."""
    angles = np.arccos(points)  # (n, d)
    return np.cos(indices[None, :, :] * angles[:, None, :]).prod(axis=2)


def test_chebyshev_table_matches_the_trigonometric_definition():
    x = np.linspace(-1, 1, 41).reshape(41, 1)
    table = basis.chebyshev_table(x, 9)
    assert table.shape == (41, 1, 10)
    expected = np.cos(np.arange(10)[None, :] * np.arccos(x))
    np.testing.assert_allclose(table[:, 0, :], expected, atol=1e-12)


@pytest.mark.parametrize(
    "indices",
    [
        basis.lowest_degree_indices(3, 19),
        basis.tensor_indices(2, 4),
        np.array([[5, 0, 0, 1], [0, 0, 7, 0], [1, 1, 1, 1], [0, 3, 0, 2]]),
        np.array([[0, 2, 0, 0], [0, 1, 0, 3], [0, 0, 0, 1]]),  # columns 0 and 2 unused
    ],
)
def test_evaluate_matches_products_of_cosines(indices):
    rng = np.random.default_rng(1)
    points = np.concatenate([rng.uniform(-1, 1, (300, indices.shape[1])), np.eye(indices.shape[1]) * 2 - 1])
    cheb = ChebyshevBasis(indices)
    values = cheb.evaluate(points)
    np.testing.assert_allclose(values, reference_basis(points, indices), atol=1e-11)
    np.testing.assert_array_equal(cheb.design_matrix(points), values.T)
    assert np.all(np.abs(values) <= 1 + 1e-12)
    np.testing.assert_allclose(cheb.moments(points), reference_basis(points, indices).mean(axis=0), atol=1e-12)


def test_moments_are_means_and_do_not_depend_on_chunking(monkeypatch):
    rng = np.random.default_rng(2)
    points = rng.uniform(-1, 1, (50, 3))
    indices = basis.lowest_degree_indices(3, 9)
    expected = reference_basis(points, indices).mean(axis=0)
    cheb = ChebyshevBasis(indices)
    np.testing.assert_allclose(cheb.moments(points), expected, atol=1e-12)
    monkeypatch.setattr(basis, "ROW_CHUNK", 7)  # 50 rows in 8 uneven chunks
    np.testing.assert_allclose(cheb.moments(points), expected, atol=1e-12)
    np.testing.assert_allclose(cheb.evaluate(points), reference_basis(points, indices), atol=1e-12)


@pytest.mark.parametrize("layout", ["C", "F"])
def test_the_table_by_rows_is_the_table_transposed_to_the_bit(layout):
    """The moments' table (one row per T_k(x_j)) and the evaluation's (one column per T_k(x_j))
    hold the same values bit for bit, for every column layout of the points, and only the
    columns some function uses are tabulated."""
    rng = np.random.default_rng(3)
    points = np.asarray(rng.uniform(-1, 1, (301, 6)), order=layout)
    indices = basis.lowest_degree_indices(6, 80)
    indices[:, 2] = 0  # an unused column
    cheb = ChebyshevBasis(indices[indices.any(axis=1)])
    by_rows = cheb._table_by_rows(points)
    assert by_rows.shape == (5 * (cheb.max_degree + 1), 301)
    assert by_rows.T.tobytes() == cheb._table(points).tobytes()
    assert by_rows[1].tobytes() == points[:, 0].tobytes()  # T_1 is the column itself


@pytest.mark.parametrize("table_entries", [basis.SPARSE_TABLE_ENTRIES, 40])  # one block; blocks of a few rows
def test_the_sparse_design_matrix_is_the_evaluated_one_to_the_bit(monkeypatch, table_entries):
    """Mixed tables' W, built function by function where its sparsest factor is non-zero: the
    values of :meth:`evaluate` exactly (the same products in the same order), their zeros left
    out, each row's entries sorted by candidate."""
    monkeypatch.setattr(basis, "SPARSE_TABLE_ENTRIES", table_entries)
    rng = np.random.default_rng(4)
    # two numeric coordinates, then two blocks of level indicators (one level each per row)
    numeric = rng.uniform(-1, 1, (500, 2))
    numeric[::7, 0] = 0.0  # T_1(0) = T_3(0) = 0: zeros among the numeric values too
    levels = np.zeros((500, 5))
    levels[np.arange(500), rng.integers(0, 3, 500)] = 1.0
    levels[np.arange(500), 3 + rng.integers(0, 2, 500)] = 1.0
    points = np.concatenate([numeric, levels], axis=1)
    indices = np.array([[1, 0, 0, 0, 0, 0, 0], [0, 2, 0, 0, 0, 0, 0], [1, 1, 0, 0, 0, 0, 0], [3, 0, 0, 0, 0, 0, 0],
                        [0, 0, 1, 0, 0, 0, 0], [0, 0, 0, 1, 0, 1, 0], [1, 0, 0, 0, 1, 0, 0],
                        [0, 0, 1, 0, 0, 0, 1], [0, 1, 0, 1, 0, 0, 1], [0, 0, 0, 0, 0, 1, 0]])
    cheb = ChebyshevBasis(indices)
    design = cheb.sparse_design_matrix(points)
    dense = cheb.evaluate(points).T
    assert design.shape == dense.shape and design.has_sorted_indices
    assert np.array_equal(design.toarray(), dense)
    assert design.nnz == np.count_nonzero(dense)
    assert np.all(design.getnnz(axis=1)[4:] < 300)  # the indicator products vanish on most rows
    assert cheb.sparse_design_matrix(points[:0]).shape == (len(indices), 0)


def test_degree_one_moments_are_column_means():
    rng = np.random.default_rng(3)
    points = rng.uniform(-1, 1, (40, 4))
    cheb = ChebyshevBasis(basis.lowest_degree_indices(4, 4))
    np.testing.assert_allclose(cheb.moments(points), points.mean(axis=0))


@pytest.mark.parametrize("indices", [np.zeros((0, 2)), np.array([1, 2]), np.array([[1, 0], [0, 0]])])
def test_basis_rejects_empty_flat_or_constant_indices(indices):
    with pytest.raises(ValueError):
        ChebyshevBasis(indices)


def brute_force_indices(d: int, degree: int) -> set[tuple[int, ...]]:
    return {r for r in itertools.product(range(degree + 1), repeat=d) if 0 < sum(r) <= degree}


@pytest.mark.parametrize("d, degree", [(1, 5), (2, 4), (3, 3), (5, 2), (4, 4)])
def test_lowest_degree_indices_at_full_degree_levels(d, degree):
    count = comb(d + degree, degree) - 1
    assert basis.count_indices_up_to_degree(d, degree) == count
    indices = basis.lowest_degree_indices(d, count)
    assert indices.shape == (count, d)
    as_tuples = [tuple(r) for r in indices]
    assert len(set(as_tuples)) == count  # unique
    assert set(as_tuples) == brute_force_indices(d, degree)  # hence no zero index, degrees <= g
    assert np.all(indices >= 0)
    # Sorted by total degree, then by support size within a degree.
    keys = [(sum(r), np.count_nonzero(r)) for r in as_tuples]
    assert keys == sorted(keys)


def test_lowest_degree_indices_prefixes_agree_and_order_is_fixed():
    long = basis.lowest_degree_indices(4, 40)
    for count in (1, 4, 5, 13, 39):
        np.testing.assert_array_equal(basis.lowest_degree_indices(4, count), long[:count])
    # Degree 1 are the coordinates in order; degree 2 starts with the squares.
    np.testing.assert_array_equal(long[:4], np.eye(4, dtype=int))
    np.testing.assert_array_equal(long[4:8], 2 * np.eye(4, dtype=int))


@pytest.mark.parametrize("d, t", [(1, 2), (1, 5), (2, 3), (3, 2), (3, 3)])
def test_tensor_indices(d, t):
    indices = basis.tensor_indices(d, t)
    assert indices.shape == (t**d - 1, d)
    expected = set(itertools.product(range(t), repeat=d)) - {(0,) * d}
    assert {tuple(r) for r in indices} == expected
    assert len({tuple(r) for r in indices}) == len(indices)


@pytest.mark.parametrize("degrees", [(1,), (2,), (1, 2), (1, 2, 3), (2, 4), (1, 2, 3, 4, 5)])
@pytest.mark.parametrize("power", [1, 2])
def test_univariate_spread_bounds_the_largest_change_and_is_tight(degrees, power):
    """Deterministic: a grid 4x finer than the bound's own (and shifted) never exceeds it, and
    the bound is within its Lipschitz margin of what the grid finds."""
    x = np.linspace(-1.0, 1.0, 4 * SPREAD_GRID + 2)  # a different grid from the bound's
    values = np.cos(np.outer(degrees, np.arccos(x)))
    largest = max(float((np.abs(values[:, i:i + 512, None] - values[:, None, :]) ** power).sum(axis=0).max())
                  for i in range(0, len(x), 512))
    bound = univariate_spread(degrees, power)
    lipschitz = sum(power * 2 ** (power - 1) * r * r for r in degrees)
    assert largest <= bound <= min(largest + lipschitz * 2.0 / SPREAD_GRID, 2.0**power * len(degrees)) + 1e-6


def test_univariate_spread_of_the_first_two_degrees():
    """|x - y| + |T_2(x) - T_2(y)| = |x - y| (1 + 2 |x + y|) is largest at x = 1, y = -1/4: 3.125."""
    assert 3.125 <= univariate_spread((1, 2), 1) <= 3.125 + 5 * 2.0 / SPREAD_GRID
    assert univariate_spread((1,), 1) == 2.0 and univariate_spread((1,), 2) == 4.0  # T_1 alone: the generic bound


@pytest.mark.parametrize("indices", [lowest_degree_indices(3, 9), lowest_degree_indices(3, 19), tensor_indices(2, 4)],
                         ids=["T1-T2", "degree-3", "tensor"])
def test_moments_sensitivity_holds_for_random_and_extreme_row_pairs(indices):
    """Seeded: 200 000 random pairs of rows, and every pair of corners and of points at +-1/4,
    move the vector of means by no more than the derived bound, which never exceeds the generic one."""
    n, d = 7, indices.shape[1]
    basis = ChebyshevBasis(indices)
    rng = np.random.default_rng(5)
    special = np.array(list(itertools.product([-1.0, -0.25, 0.25, 1.0], repeat=d)))
    first = np.vstack([rng.uniform(-1, 1, (200_000, d)), np.repeat(special, len(special), axis=0)])
    second = np.vstack([rng.uniform(-1, 1, (200_000, d)), np.tile(special, (len(special), 1))])
    change = (basis.evaluate(first) - basis.evaluate(second)) / n
    l1, l2 = moments_sensitivity(indices, n)
    assert np.abs(change).sum(axis=1).max() <= l1 * (1 + 1e-12)
    assert np.linalg.norm(change, axis=1).max() <= l2 * (1 + 1e-12)
    generic_l1, generic_l2 = bounded_means_sensitivity(len(indices), n)
    assert l1 <= generic_l1 and l2 <= generic_l2


def _many_levels(levels: int, rows: int, seed: int):
    """A mixed basis at marginal degree 2 (two numeric columns, a column of ``levels`` levels and one of 3)
    and ``rows`` encoded rows of it, as points by level and as the dense (rows, D) array."""
    from synthdp.domain.encoded import EncodedPoints
    from synthdp.domain.schema import Schema
    from synthdp.stats.mixed_basis import basis_indices

    schema = Schema.from_dict({"columns": {"x": {"type": "continuous", "bounds": [0, 1]},
                                           "y": {"type": "continuous", "bounds": [0, 1]},
                                           "code": {"type": "categorical", "levels": [f"c{i}" for i in range(levels)]},
                                           "kind": {"type": "categorical", "levels": ["a", "b", "c"]}}},
                              ["x", "y", "code", "kind"])
    rng = np.random.default_rng(seed)
    numeric = rng.uniform(-1, 1, (rows, 2))
    numeric[::5, 0] = 0.0  # T_1(0) = 0: zeros among the numeric values too
    points = EncodedPoints.of(schema, numeric, [rng.integers(0, levels + 1, rows), rng.integers(0, 4, rows)])
    return ChebyshevBasis(basis_indices(schema, 2)), points


@pytest.mark.parametrize("chunk_entries", [basis.CHUNK_ENTRIES, 500])  # one block of rows; blocks of a few rows
def test_the_sparse_moments_are_the_dense_ones(monkeypatch, chunk_entries):
    """Where the dense (prefixes, table columns) product would be too large, the moments are summed
    sparse: the same means (up to the order of additions), of points by level or dense."""
    cheb, points = _many_levels(40, 700, 5)
    dense = cheb.moments(points)
    np.testing.assert_allclose(dense, cheb.evaluate(points.toarray()).mean(axis=0), atol=1e-12)
    monkeypatch.setattr(basis, "DENSE_PRODUCT_ENTRIES", 0)
    monkeypatch.setattr(basis, "CHUNK_ENTRIES", chunk_entries)
    np.testing.assert_allclose(cheb.moments(points), dense, rtol=0, atol=1e-13)
    np.testing.assert_allclose(cheb.moments(points.toarray()), dense, rtol=0, atol=1e-13)
    np.testing.assert_allclose(cheb.moments(points[:1]), cheb.evaluate(points[:1].toarray())[0], atol=1e-15)


def test_the_moments_of_a_column_of_thousands_of_levels_hold_no_prefixes_by_columns_array():
    """A column of 4 000 levels: each level is a prefix (its 2-way cells) and a table column, so the
    dense (prefixes, table columns) product would be about 385 MB; the moments' allocations stay
    below a quarter of it (numpy's allocations, traced; about 70 MB, blocks of rows of CHUNK_ENTRIES)."""
    import tracemalloc

    cheb, points = _many_levels(4000, 1000, 6)
    prefixes, columns = len(cheb._prefix_slots[0]), len(cheb._used_columns) * (cheb.max_degree + 1)
    assert prefixes * columns * 8 > 300_000_000  # bytes of the dense product
    tracemalloc.start()
    try:
        moments = cheb.moments(points)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < prefixes * columns * 8 / 4, peak
    some = np.random.default_rng(7).choice(cheb.size, 300, replace=False)  # against the definition, in part
    expected = ChebyshevBasis(cheb.indices[some]).evaluate(points.toarray()).mean(axis=0)
    np.testing.assert_allclose(moments[some], expected, atol=1e-12)
