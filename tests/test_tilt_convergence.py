"""The tilt's Newton method (synthdp.postprocess.lp._newton_dual) against the L-BFGS-B it replaced on
a dense W: where boxes are small next to the rows' spread (large n), L-BFGS-B stopped at its cap or
declared "optimal" with fits far outside their boxes; Newton's method reaches the optimum, checked
here through its optimality conditions rather than through the solver's own report."""

import numpy as np
import pytest

from synthdp.postprocess import lp
from synthdp.postprocess.lp import solve_l1_fit, tilt_weights
from synthdp.stats import chebyshev as basis
from synthdp.stats import threads


def slicer(design: np.ndarray):
    return lambda start, stop: design[:, start:stop]


def copula_problem(seed: int, noise: float, d: int = 4, R: int = 60, C: int = 2000, other: bool = True):
    """Chebyshev moments of d correlated columns at C candidates; the target the moments of another
    distribution (``other``: a cube of the candidates' model, as real data differ from the copula) or
    of the model itself, plus noise; each box ``noise``, as the pipeline's boxes are one noise sd."""
    rng = np.random.default_rng(seed)
    cov = 0.6 * np.ones((d, d)) + 0.4 * np.eye(d)

    def draw(n: int) -> np.ndarray:
        return np.tanh(rng.multivariate_normal(np.zeros(d), cov, n) / 2)

    cheb = basis.ChebyshevBasis(basis.lowest_degree_indices(d, R))
    design = cheb.design_matrix(draw(C))
    data = draw(100_000) ** 3 * 0.7 + 0.3 * draw(100_000) if other else draw(100_000)
    target = cheb.design_matrix(data).mean(axis=1) + rng.normal(0, noise, design.shape[0])
    tolerance = np.full(design.shape[0], noise)
    return design, target, tolerance, solve_l1_fit(design, target)


def box_of(design, target, tolerance, solution):
    optimum = np.clip(solution.weights, 0.0, None)
    return np.maximum(tolerance, np.abs(design @ (optimum / optimum.sum()) - target))


def divergence(weights: np.ndarray) -> float:
    return float(weights @ np.log(np.maximum(weights * len(weights), 1e-300)))


def certificate(design, target, box, weights):
    """The dual point the weights are a tilt of (log u_k = lambda . W_k + c, by least squares), the
    fit's residual e = W u - b_hat and the duality gap KL(u) - D(lambda) = lambda . e + box . |lambda|."""
    log_weights = np.log(weights)
    system = np.vstack([design, np.ones(design.shape[1])]).T
    solved, *_ = np.linalg.lstsq(system, log_weights, rcond=None)
    lam = solved[:-1]
    error = design @ weights - target
    return lam, error, float(lam @ error + box @ np.abs(lam)), float(np.abs(system @ solved - log_weights).max())


@pytest.mark.parametrize("seed", [1, 2])
def test_newton_converges_where_lbfgs_stops_at_its_cap(monkeypatch, seed):
    """Boxes of 1e-4 against moments of another distribution: L-BFGS-B (the tilt's solver before,
    still used beyond TILT_NEWTON_ROWS rows) runs to its 1 000-iteration cap and falls back to the
    mixture with the l1 optimum; Newton's method converges, every fit within its box."""
    design, target, tolerance, solution = copula_problem(seed, 1e-4)
    box = box_of(design, target, tolerance, solution)
    monkeypatch.setattr(lp, "TILT_NEWTON_ROWS", 0)
    stopped = tilt_weights(slicer(design), 2000, target, solution, tolerance)
    # at its cap with scipy >= 1.15; older L-BFGS-B stops a little before it (950 iterations): still stopped, mixed
    assert stopped.status.startswith("tilt stopped after") and "mixed with the l1 optimum" in stopped.status
    monkeypatch.undo()
    newton = tilt_weights(slicer(design), 2000, target, solution, tolerance)
    assert newton.status == "optimal"
    assert np.all(np.abs(design @ newton.weights - target) <= (1 + lp.TILT_NEWTON_FIT) * box)
    # the fallback fits its box too, but at a cost in entropy the optimum does not pay
    assert divergence(newton.weights) < divergence(stopped.weights)


@pytest.mark.parametrize("seed", [0, 1])
def test_newton_converges_where_lbfgs_passes_its_tests_outside_its_boxes(monkeypatch, seed):
    """Boxes of 1e-6 (the moments' noise at very large n): L-BFGS-B's relative-decrease test stops it
    long before its cap with fits tens of times beyond their boxes (it reported "optimal" there until
    its result was held to its fits: now it is mixed with the l1 optimum and the status says so);
    Newton's method's "optimal" is its fits within their boxes and a zero duality gap."""
    design, target, tolerance, solution = copula_problem(seed, 1e-6, d=3, R=30, C=1000, other=False)
    box = box_of(design, target, tolerance, solution)
    monkeypatch.setattr(lp, "TILT_NEWTON_ROWS", 0)
    early = tilt_weights(slicer(design), 1000, target, solution, tolerance)
    assert early.status.startswith("tilt stopped after") and "mixed with the l1 optimum" in early.status
    assert int(early.status.split(" after ")[1].split(" ")[0]) < lp.TILT_MAX_ITERATIONS
    assert float(early.status.split("largest fit ")[1].split(" x")[0]) > 1 + lp.TILT_NEWTON_FIT  # outside its box
    # (tens of times with scipy >= 1.15, about 7 with older L-BFGS-B)
    monkeypatch.undo()
    newton = tilt_weights(slicer(design), 1000, target, solution, tolerance)
    assert newton.status == "optimal"
    assert np.all(np.abs(design @ newton.weights - target) <= (1 + lp.TILT_NEWTON_FIT) * box)


@pytest.mark.parametrize("seed,noise,other", [(0, 1e-3, True), (1, 1e-4, True), (2, 1e-5, False), (3, 1e-2, True)])
def test_the_newton_optimum_meets_the_duals_optimality_conditions(seed, noise, other):
    """The weights are an exponential tilt u_k ~ exp(lambda . W_k) (a least-squares fit of log u on W
    is exact), every fit is within its box, each row with lambda_r != 0 sits on the edge of its box
    that lambda_r's sign names (complementary slackness: lambda_r > 0 pulls its fit down to
    b_hat_r - t_r), and the duality gap, which bounds KL(u) - KL(optimum), is within TILT_NEWTON_GAP."""
    design, target, tolerance, solution = copula_problem(seed, noise, other=other)
    box = box_of(design, target, tolerance, solution)
    tilted = tilt_weights(slicer(design), 2000, target, solution, tolerance)
    assert tilted.status == "optimal"
    lam, error, gap, misfit = certificate(design, target, box, tilted.weights)
    assert misfit < 1e-8
    assert np.all(np.abs(error) <= (1 + lp.TILT_NEWTON_FIT) * box)
    bound = np.abs(lam) > 1e-6 * np.abs(lam).max()
    assert bound.any()
    np.testing.assert_allclose(error[bound], -np.sign(lam[bound]) * box[bound], rtol=1e-5)
    beyond = np.maximum(np.abs(error) - box, 0.0)  # within TILT_NEWTON_FIT: the gap may be that far below 0
    assert -np.abs(lam) @ beyond - 1e-12 <= gap <= lp.TILT_NEWTON_GAP * divergence(tilted.weights) + 1e-12


@pytest.mark.parametrize("seed", range(2))
def test_the_newton_optimum_is_no_further_from_uniform_than_lbfgs_where_both_converge(monkeypatch, seed):
    """Where L-BFGS-B converges too (boxes of 1e-2, 1e-3), the Newton optimum's KL is no larger than
    L-BFGS-B's, up to what L-BFGS-B's fits beyond their boxes buy it: weak duality with Newton's lambda
    gives KL(u) >= KL(optimum) - gap - sum_r |lambda_r| max(0, |e_r| - t_r) for any distribution u."""
    design, target, tolerance, solution = copula_problem(seed, 1e-2 if seed % 2 else 1e-3)
    box = box_of(design, target, tolerance, solution)
    newton = tilt_weights(slicer(design), 2000, target, solution, tolerance)
    monkeypatch.setattr(lp, "TILT_NEWTON_ROWS", 0)
    lbfgs = tilt_weights(slicer(design), 2000, target, solution, tolerance)
    assert newton.status == "optimal" and lbfgs.status == "optimal"
    lam, _, gap, _ = certificate(design, target, box, newton.weights)
    beyond = np.maximum(np.abs(design @ lbfgs.weights - target) - box, 0.0)
    assert divergence(newton.weights) <= divergence(lbfgs.weights) + gap + np.abs(lam) @ beyond + 1e-12
    np.testing.assert_allclose(newton.weights, lbfgs.weights, rtol=0.05)  # the same optimum, to L-BFGS-B's tolerance


def test_rows_without_curvature_a_categorical_columns_cells_and_a_constant_row():
    """A dense W with a categorical column's cells (they sum to 1 at every candidate: the Hessian is
    singular along them, which the steps' damping bounds), a row that is 0 at every candidate and
    numeric moments. The zero row cannot be fitted: its box is the l1 optimum's residual, where its
    dual term is flat on one side, and Newton steps along it went to 1e12 (glass's mixed table, dense)
    until rows that do not vary over the candidates were held at lambda_r = 0, their optimum."""
    rng = np.random.default_rng(7)
    C = 3000
    level = rng.choice(4, C, p=[0.4, 0.3, 0.2, 0.1])
    x = np.tanh(rng.normal(size=C) + 0.5 * level)
    cells = (level[None, :] == np.arange(4)[:, None]).astype(float)
    design = np.vstack([cells, np.zeros((1, C)), x, 2 * x**2 - 1, x * cells[1]])
    target = np.array([0.3, 0.3, 0.25, 0.15, 0.02, 0.3, -0.2, 0.12]) + rng.normal(0, 1e-3, 8)
    tolerance = np.full(8, 1e-3)
    solution = solve_l1_fit(design, target)
    box = box_of(design, target, tolerance, solution)
    assert np.any(box > tolerance)  # the zero row cannot be fitted: its box is the optimum's residual
    tilted = tilt_weights(slicer(design), C, target, solution, tolerance)
    assert tilted.status == "optimal"
    assert np.all(np.abs(design @ tilted.weights - target) <= (1 + lp.TILT_NEWTON_FIT) * box)


def test_a_certified_stop_that_does_not_come_falls_back_to_newton_on_a_dense_w(monkeypatch):
    """certified_stop (mixed tables) runs L-BFGS-B first; stopped at its cap uncertified on a dense W,
    the tilt goes on with Newton's method rather than to the mixture with the l1 optimum."""
    design, target, tolerance, solution = copula_problem(1, 1e-4)
    monkeypatch.setattr(lp, "TILT_MAX_ITERATIONS", 1)
    tilted = tilt_weights(slicer(design), 2000, target, solution, tolerance, certified_stop=True)
    assert tilted.status == "optimal"


def test_a_sparse_tilt_stopped_outside_its_box_falls_back_to_the_optimum_on_two_threads(monkeypatch):
    """A sparse W (mixed tables) has its products on a second thread; where L-BFGS-B stops at its cap
    outside the box, uncertified, the fallback toward the l1 optimum still needs them: the weights are
    the mixture within the box, not an error from a thread pool already shut down."""
    import scipy.sparse as sp

    design, target, tolerance, solution = copula_problem(1, 1e-4)
    monkeypatch.setattr(lp, "TILT_MAX_ITERATIONS", 1)
    monkeypatch.setattr(lp, "WORKERS", 2)
    monkeypatch.setattr(threads, "SPLIT_NONZEROS", 1)  # the products split at any size
    matrix = sp.csc_matrix(design)
    tilted = tilt_weights(lambda start, stop: matrix[:, start:stop], 2000, target, solution, tolerance,
                          certified_stop=True)
    assert "mixed with the l1 optimum" in tilted.status
    box = box_of(design, target, tolerance, solution)
    assert np.all(np.abs(design @ tilted.weights - target) <= box * (1 + 1e-9))


def test_the_hessians_blocks_on_two_threads_give_the_same_weights_to_the_bit(monkeypatch):
    """The Hessian is summed over W's column blocks in their order, on one thread or two: the same
    weights to the bit (a seeded release must not depend on the machine's cores)."""
    design, target, tolerance, solution = copula_problem(1, 1e-4)
    monkeypatch.setattr(lp, "PRICING_ENTRIES", 60 * 300)  # blocks of 300 candidates
    weights = []
    for workers in (1, 2):
        monkeypatch.setattr(lp, "WORKERS", workers)
        tilted = tilt_weights(slicer(design), 2000, target, solution, tolerance)
        assert tilted.status == "optimal"
        weights.append(tilted.weights)
    np.testing.assert_array_equal(weights[0], weights[1])


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_tilt_first_is_the_tilt_after_a_fit_within_the_tolerances_to_the_bit(seed):
    """Where some mixture of the candidates fits within the tolerances (large boxes here), the l1
    fit before the tilt only certifies it, and the tilt's box is the tolerances either way: the
    tilt without the fit (lp.tilt_first) gives the same weights, bit for bit."""
    design, target, _, _ = copula_problem(seed, 1e-3)
    tolerance = np.full(len(target), 0.02)
    fitted = lp.solve_l1_fit_columns(slicer(design), design.shape[1], target, close_enough=tolerance)
    assert fitted.status == "close enough"  # a fit within the tolerances exists
    after_fit = tilt_weights(slicer(design), design.shape[1], target, fitted, tolerance)
    first = lp.tilt_first(slicer(design), design.shape[1], target, tolerance)
    assert first is not None and first.status == after_fit.status == "optimal"
    assert first.weights.tobytes() == after_fit.weights.tobytes()
    assert np.all(np.abs(design @ first.weights - target) <= tolerance * (1 + lp.TILT_FIT_SLACK))


def test_the_tilt_first_gives_up_where_no_mixture_fits_and_proves_it_early(monkeypatch):
    """Boxes no mixture of the candidates can meet (a target outside their hull in one row): the
    tilt's dual falls below -log C, which proves the box empty, and tilt_first returns None after
    a few Newton steps rather than its cap; the l1 fit and the usual tilt then take over."""
    design, target, _, _ = copula_problem(1, 1e-3)
    target = target.copy()
    target[0] = design[0].max() + 0.5  # no candidate reaches it
    tolerance = np.full(len(target), 0.01)
    steps = []
    original = lp._newton_dual
    monkeypatch.setattr(lp, "_newton_dual", lambda *args, **kwargs: steps.append(original(*args, **kwargs)[1])
                        or original(*args, **kwargs))
    assert lp.tilt_first(slicer(design), design.shape[1], target, tolerance) is None
    assert steps and steps[0] < lp.TILT_NEWTON_ITERATIONS
