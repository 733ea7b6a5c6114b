"""Work split across threads gives the one thread's result to the bit (synthdp.stats.threads)."""

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import scipy.sparse as sp

from synthdp.postprocess import lp
from synthdp.stats import chebyshev, threads


def unsorted_csr(rng: np.random.Generator, shape: tuple[int, int], density: float) -> sp.csr_matrix:
    """A CSR matrix whose rows' entries are stored out of column order, as the pipeline's can be."""
    matrix = sp.random(*shape, density=density, format="csr", random_state=rng, data_rvs=rng.standard_normal)
    for row in range(shape[0]):
        start, stop = matrix.indptr[row], matrix.indptr[row + 1]
        order = rng.permutation(stop - start)
        matrix.indices[start:stop] = matrix.indices[start:stop][order]
        matrix.data[start:stop] = matrix.data[start:stop][order]
    matrix.has_sorted_indices = False
    return matrix


@pytest.mark.parametrize("shape", [(1, 50), (2, 300), (37, 500), (400, 90)])
def test_a_split_product_is_the_single_product_to_the_bit(monkeypatch, shape):
    monkeypatch.setattr(threads, "SPLIT_NONZEROS", 0)
    rng = np.random.default_rng(shape[0])
    matrix = unsorted_csr(rng, shape, 0.3)
    x = rng.standard_normal(shape[1]) * 10.0 ** rng.integers(-8, 8, shape[1])  # sums that round
    with ThreadPoolExecutor(1) as pool:
        product = threads.split_product(matrix, pool)
        assert np.array_equal(product(x), matrix @ x)
        assert np.array_equal(product(-x), matrix @ -x)  # the product can be called again
    assert np.array_equal(threads.split_product(matrix, None)(x), matrix @ x)


def test_a_sparse_tilt_is_the_same_on_one_thread_and_two(monkeypatch):
    """Mixed tables' W is sparse: the tilt's products on two threads (as on the machines with two
    cores or more) give the weights of one thread."""
    monkeypatch.setattr(threads, "SPLIT_NONZEROS", 0)
    rng = np.random.default_rng(5)
    indices = np.array([[1, 0, 0], [0, 2, 0], [0, 0, 1], [1, 1, 0], [2, 0, 1], [0, 1, 3]])
    basis = chebyshev.ChebyshevBasis(indices)
    candidates = np.where(rng.random((900, 3)) < 0.5, 0.0, rng.uniform(-1, 1, (900, 3)))  # T_1(0) = T_3(0) = 0
    design = basis.sparse_design_matrix(candidates)
    assert 0 < design.nnz < design.shape[0] * design.shape[1]
    target = design[:, :5] @ np.array([0.3, 0.3, 0.2, 0.1, 0.1])
    optimum = lp.solve_l1_fit(design, target)
    weights = {}
    for workers in (1, 2):
        monkeypatch.setattr(lp, "WORKERS", workers)
        weights[workers] = lp.tilt_weights(lambda a, b: design[:, a:b], 900, target, optimum,
                                           np.full(len(indices), 0.01)).weights
    assert np.array_equal(weights[1], weights[2])
    assert not np.allclose(weights[1], 1 / 900)  # the tilt moved away from uniform


def test_the_split_parts_share_the_matrix_entries(monkeypatch):
    """The parts are views: splitting a product does not hold a second copy of the matrix."""
    rng = np.random.default_rng(3)
    matrix = unsorted_csr(rng, (60, 80), 0.4)
    part = threads._rows_view(matrix, 10, 45)
    assert np.shares_memory(part.data, matrix.data) and np.shares_memory(part.indices, matrix.indices)
    assert (part != matrix[10:45]).nnz == 0
