import numpy as np
import pytest

from synthdp.errors import SynthDPError
from synthdp.postprocess.lp import (
    blend_with_uniform,
    candidate_columns,
    column_tilt_weights,
    equality_form,
    precision_weighted,
    solve_l1_fit,
    solve_l1_fit_columns,
    solve_l1_fit_cvxpy,
    spread_weights,
    tilt_weights,
)
from synthdp.stats import chebyshev as basis
from synthdp.stats import grid

SOLVERS = [solve_l1_fit, solve_l1_fit_cvxpy]


def assert_distribution(weights: np.ndarray, size: int) -> None:
    assert weights.shape == (size,)
    assert np.all(weights >= -1e-9)
    assert weights.sum() == pytest.approx(1.0, abs=1e-9)


def random_problem(seed: int, R: int, C: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    if seed % 2:  # a real design: Chebyshev basis at random grid points, noisy moments
        cheb = basis.ChebyshevBasis(basis.lowest_degree_indices(3, R))
        design = cheb.design_matrix(grid.random_grid_points(8, 3, C, rng))
    else:
        design = rng.uniform(-1, 1, (R, C))
    return design, rng.uniform(-1, 1, R)


def test_equality_form_layout():
    design = np.arange(6.0).reshape(2, 3) + 1
    matrix, rhs, cost = equality_form(design, np.array([0.5, -0.5]))
    expected = np.array(
        [
            [1, 2, 3, -1, 0, 1, 0],
            [4, 5, 6, 0, -1, 0, 1],
            [1, 1, 1, 0, 0, 0, 0],
        ]
    )
    np.testing.assert_array_equal(matrix.toarray(), expected)
    np.testing.assert_array_equal(rhs, [0.5, -0.5, 1.0])
    np.testing.assert_array_equal(cost, [0, 0, 0, 1, 1, 1, 1])


@pytest.mark.parametrize("solve", SOLVERS)
@pytest.mark.parametrize(
    "target, weights, objective",
    [(0.2, [0.4, 0.6], 0.0), (1.5, [0.0, 1.0], 0.5), (-3.0, [1.0, 0.0], 2.0)],
)
def test_one_moment_two_candidates(solve, target, weights, objective):
    """Candidates x = -1 and x = 1, basis phi(x) = x: u = ((1 - b)/2, (1 + b)/2) clipped to the simplex."""
    solution = solve(np.array([[-1.0, 1.0]]), np.array([target]))
    np.testing.assert_allclose(solution.weights, weights, atol=1e-9)
    assert solution.objective == pytest.approx(objective, abs=1e-9)
    assert solution.status == "optimal"


@pytest.mark.parametrize("solve", SOLVERS)
def test_target_outside_the_hull_has_the_analytic_distance(solve):
    """Moment vectors (1, 0), (0, 1), (0, 0): the hull is the triangle u1 + u2 <= 1, and the l1
    distance from (0.8, 0.8) to it is 1.6 - 1 = 0.6, with no weight on the origin."""
    design = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    solution = solve(design, np.array([0.8, 0.8]))
    assert solution.objective == pytest.approx(0.6, abs=1e-9)
    assert_distribution(solution.weights, 3)
    assert solution.weights[2] == pytest.approx(0.0, abs=1e-9)
    assert np.all(solution.weights[:2] <= 0.8 + 1e-9)


@pytest.mark.parametrize("seed", range(4))
def test_highspy_matches_the_cvxpy_reference(seed):
    design, target = random_problem(seed, R=9, C=80)
    fast = solve_l1_fit(design, target)
    reference = solve_l1_fit_cvxpy(design, target)
    assert fast.objective == pytest.approx(reference.objective, rel=1e-7, abs=1e-9)
    for solution in (fast, reference):
        assert_distribution(solution.weights, 80)
        assert solution.objective == pytest.approx(np.abs(design @ solution.weights - target).sum())


@pytest.mark.parametrize("seed", range(4))
def test_highspy_returns_a_vertex_with_at_most_r_plus_one_points(seed):
    design, target = random_problem(seed, R=6, C=200)
    weights = solve_l1_fit(design, target).weights
    assert np.count_nonzero(weights > 1e-9) <= 6 + 1


@pytest.mark.parametrize("seed", range(3))
def test_reachable_target_is_fitted_exactly(seed):
    rng = np.random.default_rng(seed)
    design = rng.uniform(-1, 1, (5, 40))
    target = design @ rng.dirichlet(np.ones(40))
    solution = solve_l1_fit(design, target)
    assert solution.objective == pytest.approx(0.0, abs=1e-8)
    np.testing.assert_allclose(design @ solution.weights, target, atol=1e-8)


def test_stopping_without_an_optimum_is_an_error():
    design, target = random_problem(0, R=30, C=3000)
    with pytest.raises(SynthDPError, match="without an optimal solution"):
        solve_l1_fit(design, target, time_limit=0.0)


def test_spread_shares_the_mass_equally_among_identical_candidates():
    """Five copies of each of three columns: a vertex uses one copy of each, while the
    spread solution gives each copy a fifth of its column's weight (max weight 0.5/5)."""
    base = np.random.default_rng(3).uniform(-1, 1, (4, 3))
    target = base @ np.array([0.5, 0.3, 0.2])
    design = np.repeat(base, 5, axis=1)
    vertex = solve_l1_fit(design, target)
    spread = spread_weights(design, target, max_objective=vertex.objective + 1e-9)
    assert np.count_nonzero(vertex.weights > 1e-9) <= 5  # at most R + 1
    assert spread.objective <= vertex.objective + 1e-7
    assert spread.weights.min() >= -1e-9 and spread.weights.sum() == pytest.approx(1.0)
    assert spread.weights.max() == pytest.approx(0.1, abs=1e-7)
    np.testing.assert_allclose(spread.weights.reshape(3, 5).sum(axis=1), [0.5, 0.3, 0.2], atol=1e-7)


def test_spread_respects_its_fit_bound_on_a_noisy_instance():
    rng = np.random.default_rng(4)
    design = rng.uniform(-1, 1, (10, 300))
    target = design @ rng.dirichlet(np.ones(300)) + rng.normal(0, 0.05, 10)
    optimum = solve_l1_fit(design, target).objective
    spread = spread_weights(design, target, max_objective=optimum + 0.2)
    assert optimum - 1e-7 <= spread.objective <= optimum + 0.2 + 1e-7
    assert np.count_nonzero(spread.weights > 1e-9) > 11  # more than any vertex can use


def slicer(design: np.ndarray):
    return lambda start, stop: design[:, start:stop]


@pytest.mark.parametrize("seed", range(6))
def test_column_generation_reaches_the_dense_optimum(seed):
    """Optimality proof in practice: tiny working sets and chunks force several pricing rounds,
    and the objective equals the dense solve's within 1e-6 (pricing tolerance 1e-7 plus
    HiGHS's feasibility tolerances). Targets are shifted outside the hull so the optimum is
    not 0, which any start would reach."""
    design, target = random_problem(seed, R=12, C=3000)
    target = target + 0.5 * (seed % 3)
    dense = solve_l1_fit(design, target)
    generated = solve_l1_fit_columns(slicer(design), 3000, target, chunk=250, initial=13, batch=13)
    assert generated.objective == pytest.approx(dense.objective, abs=1e-6)
    assert generated.objective == pytest.approx(np.abs(design @ generated.weights - target).sum(), abs=1e-8)
    assert_distribution(generated.weights, 3000)
    assert np.count_nonzero(generated.weights > 1e-9) <= 12 + 1
    assert "rounds" in generated.solver


@pytest.mark.parametrize("seed", range(4))
def test_column_generation_stops_once_every_residual_is_close_enough_and_the_tilt_is_unchanged(seed):
    """An exact fit exists (the target is a mixture of candidates), so the optimum is 0; with
    tolerances the loop may stop earlier, at a master whose residuals are all within them,
    and the tilt that follows (which keeps the box max(tolerance, |residual|)) then gets the
    same box and gives the same weights as from the optimum."""
    rng = np.random.default_rng(seed)
    design, _ = random_problem(2 * seed + 1, R=12, C=3000)
    target = design[:, rng.choice(3000, 40, replace=False)].mean(axis=1)
    tolerance = np.full(12, 0.1)  # wide enough that a master before the optimum fits within it (seeds 0-3: checked)
    optimum = solve_l1_fit_columns(slicer(design), 3000, target, chunk=250, initial=13, batch=13)
    early = solve_l1_fit_columns(slicer(design), 3000, target, chunk=250, initial=13, batch=13,
                                 close_enough=tolerance)
    assert optimum.status == "optimal" and optimum.objective == pytest.approx(0.0, abs=1e-8)
    assert early.status == "close enough" and "stopped within the tolerances" in early.solver
    assert int(early.solver.split("(")[1].split(" ")[0]) < int(optimum.solver.split("(")[1].split(" ")[0])
    assert np.all(np.abs(design @ early.weights - target) <= tolerance + 1e-9)
    assert_distribution(early.weights, 3000)
    tilted = [tilt_weights(slicer(design), 3000, target, solution, tolerance).weights for solution in (optimum, early)]
    np.testing.assert_array_equal(tilted[0], tilted[1])
    never = solve_l1_fit_columns(slicer(design), 3000, target + 0.5, chunk=250, initial=13, batch=13,
                                 close_enough=tolerance)  # outside the hull: no fit is close enough
    assert never.status == "optimal"
    assert never.objective == pytest.approx(solve_l1_fit(design, target + 0.5).objective, abs=1e-6)


@pytest.mark.parametrize("seed", range(4))
def test_a_fit_within_the_tolerances_comes_from_the_box_phase_in_fewer_rounds_dense_or_sparse(seed, monkeypatch):
    """With tolerances (and R >= BOX_PHASE_ROWS, here lowered to R = 12), the box form's first phase
    (rows b_hat +- 0.99 x the tolerances, interior point) stops at weights that fit every row within
    the tolerances, as the tilt takes them (clipped, summed to 1), in fewer rounds than the exact
    fit's optimum; the tilt from them is the tilt from the optimum, to the bit; sparse columns give
    the same."""
    import scipy.sparse as sp

    from synthdp.postprocess import lp

    monkeypatch.setattr(lp, "BOX_PHASE_ROWS", 12)

    rng = np.random.default_rng(seed)
    design, _ = random_problem(2 * seed + 1, R=12, C=3000)
    target = design[:, rng.choice(3000, 40, replace=False)].mean(axis=1)
    tolerance = np.full(12, 0.02)
    optimum = solve_l1_fit_columns(slicer(design), 3000, target, chunk=250, initial=13, batch=13)
    by_column = sp.csc_matrix(design)
    for source in (slicer(design), lambda start, stop: by_column[:, start:stop]):
        within = solve_l1_fit_columns(source, 3000, target, chunk=250, initial=13, batch=13, close_enough=tolerance)
        assert within.status == "close enough" and "stopped within the tolerances" in within.solver
        assert int(within.solver.split("(")[1].split(" ")[0]) < int(optimum.solver.split("(")[1].split(" ")[0])
        assert np.all(within.weights >= 0) and within.weights.sum() == pytest.approx(1.0, abs=1e-12)
        assert np.all(np.abs(design @ within.weights - target) <= tolerance)
        assert within.objective == pytest.approx(np.abs(design @ within.weights - target).sum(), abs=1e-12)
        tilted = [tilt_weights(slicer(design), 3000, target, solution, tolerance).weights
                  for solution in (optimum, within)]
        np.testing.assert_array_equal(tilted[0], tilted[1])


@pytest.mark.parametrize("seed", range(4))
def test_where_no_fit_is_within_the_tolerances_the_l1_fit_is_the_one_without_them(seed, monkeypatch):
    """Noisy moments no candidate mixture fits within the tolerances: the box phase's bound proves
    it and the l1 fit is then solved from scratch, the same weights to the bit as without tolerances."""
    from synthdp.postprocess import lp

    monkeypatch.setattr(lp, "BOX_PHASE_ROWS", 12)
    design, target = random_problem(seed, R=12, C=3000)
    target = target + 0.5 * (seed % 3)
    plain = solve_l1_fit_columns(slicer(design), 3000, target, chunk=250, initial=13, batch=13)
    tolerance = np.full(12, 1e-3)
    assert plain.objective > tolerance.sum()  # no fit within them
    tried = solve_l1_fit_columns(slicer(design), 3000, target, chunk=250, initial=13, batch=13, close_enough=tolerance)
    assert tried.status == "optimal" and tried.solver == plain.solver
    np.testing.assert_array_equal(tried.weights, plain.weights)


def test_below_box_phase_rows_the_tolerances_only_stop_the_l1_fit(monkeypatch):
    """Fewer than BOX_PHASE_ROWS moment rows (the small tables): no box phase; the l1 fit's
    masters stop at the first within the tolerances, as before it."""
    from synthdp.postprocess import lp

    rng = np.random.default_rng(0)
    design, _ = random_problem(1, R=12, C=3000)
    target = design[:, rng.choice(3000, 40, replace=False)].mean(axis=1)
    called = []
    monkeypatch.setattr(lp, "_fit_within_tolerances", lambda *args: called.append(1))
    solution = solve_l1_fit_columns(slicer(design), 3000, target, chunk=250, initial=13, batch=13,
                                    close_enough=np.full(12, 0.1))
    assert solution.status == "close enough" and not called
    monkeypatch.setattr(lp, "BOX_PHASE_ROWS", 12)
    solve_l1_fit_columns(slicer(design), 3000, target, chunk=250, initial=13, batch=13, close_enough=np.full(12, 0.1))
    assert called


@pytest.mark.parametrize("seed", range(4))
def test_a_box_beyond_a_rows_range_over_the_candidates_skips_the_box_phase_with_the_same_fit(seed, monkeypatch):
    """A row whose box b_hat +- tolerance lies wholly beyond that row's least or largest value over
    the candidates (a noisy cell frequency below 0 by more than its tolerance) proves that no mixture
    fits within the tolerances: with ``row_range`` the box phase does not run, and the fit is the one
    it would have ended in, to the bit. Where every row's box meets its range, the phase runs."""
    import scipy.sparse as sp

    from synthdp.postprocess import lp

    monkeypatch.setattr(lp, "BOX_PHASE_ROWS", 12)
    rng = np.random.default_rng(seed)
    design, _ = random_problem(2 * seed + 1, R=12, C=3000)
    target = design[:, rng.choice(3000, 40, replace=False)].mean(axis=1)
    tolerance = np.full(12, 0.02)
    reach = lp.held_row_range(design)
    np.testing.assert_array_equal(reach[0], design.min(axis=1))
    for held in (sp.csr_matrix(design), sp.csc_matrix(design)):  # sparse: implicit zeros count
        np.testing.assert_array_equal(lp.held_row_range(held)[0], design.min(axis=1))
        np.testing.assert_array_equal(lp.held_row_range(held)[1], design.max(axis=1))
    assert not lp.box_out_of_reach(reach, target, tolerance)  # a mixture's own fit is within reach
    row = seed % 12
    target[row] = reach[0][row] - 1.5 * tolerance[row] if seed % 2 else reach[1][row] + 1.5 * tolerance[row]
    assert lp.box_out_of_reach(reach, target, tolerance)
    assert not lp.box_out_of_reach(reach, target, np.full(12, 0.04))  # a wider box meets the range
    without = solve_l1_fit_columns(slicer(design), 3000, target, chunk=250, initial=13, batch=13,
                                   close_enough=tolerance)
    called = []
    monkeypatch.setattr(lp, "_fit_within_tolerances", lambda *args: called.append(1))
    skipped = solve_l1_fit_columns(slicer(design), 3000, target, chunk=250, initial=13, batch=13,
                                   close_enough=tolerance, row_range=reach)
    assert not called and skipped.status == without.status == "optimal" and skipped.solver == without.solver
    np.testing.assert_array_equal(skipped.weights, without.weights)
    target[row] = design[row, 0]  # back within reach: the phase runs
    solve_l1_fit_columns(slicer(design), 3000, target, chunk=250, initial=13, batch=13, close_enough=tolerance,
                         row_range=reach)
    assert called


@pytest.mark.parametrize("seed", range(6))
def test_masters_resolved_by_the_primal_or_the_dual_simplex_reach_the_same_optimum(seed, monkeypatch):
    """The masters after the first are re-solved by the primal simplex (MASTER_RESOLVE_STRATEGY); by
    the dual simplex (HiGHS's default, strategy 1) column generation reaches the same objective, and
    both the direct solve's."""
    from synthdp.postprocess import lp

    design, target = random_problem(seed, R=12, C=3000)
    target = target + 0.5 * (seed % 3)
    primal = solve_l1_fit_columns(slicer(design), 3000, target, chunk=250, initial=13, batch=13)
    monkeypatch.setattr(lp, "MASTER_RESOLVE_STRATEGY", 1)
    dual = solve_l1_fit_columns(slicer(design), 3000, target, chunk=250, initial=13, batch=13)
    assert primal.status == dual.status == "optimal"
    assert primal.objective == pytest.approx(dual.objective, abs=1e-7)
    assert primal.objective == pytest.approx(solve_l1_fit(design, target).objective, abs=1e-6)
    assert_distribution(primal.weights, 3000)


@pytest.mark.parametrize("seed", range(4))
def test_a_master_over_its_simplex_iteration_cap_is_solved_by_interior_point_to_the_same_optimum(seed):
    """A cap of 1 simplex iteration stops the masters' simplex, so the rounds take the cold
    interior-point fallback; the rounds after one warm-start from its crossover basis, and the
    pricing still proves the whole LP's optimum."""
    design, target = random_problem(seed, R=12, C=3000)
    target = target + 0.5 * (seed % 3)
    dense = solve_l1_fit(design, target)
    capped = solve_l1_fit_columns(slicer(design), 3000, target, chunk=250, initial=13, batch=13, iteration_cap=1)
    assert capped.status == "optimal"
    assert capped.objective == pytest.approx(dense.objective, abs=1e-6)
    assert capped.objective == pytest.approx(np.abs(design @ capped.weights - target).sum(), abs=1e-8)
    assert_distribution(capped.weights, 3000)
    rounds = int(capped.solver.split("(")[1].split(" ")[0])
    assert " by interior point after 1 simplex iterations" in capped.solver
    fallbacks = int(capped.solver.split(" by interior point")[0].rsplit(", ", 1)[1])
    assert 1 <= fallbacks <= rounds  # a master one iteration from its optimum may finish within the cap
    default = solve_l1_fit_columns(slicer(design), 3000, target, chunk=250, initial=13, batch=13)
    assert "interior point" not in default.solver  # R = 12: the default cap of 5 000 is far away


def test_the_interior_point_spread_reaches_the_simplex_optimum(monkeypatch):
    """spread_weights solves by interior point with crossover; the dual simplex on the same LP
    (what it used before) reaches the same smallest largest weight, within the same fit bound."""
    from synthdp.postprocess import lp

    rng = np.random.default_rng(5)
    design = rng.uniform(-1, 1, (8, 500))
    target = design @ rng.dirichlet(np.ones(500)) + rng.normal(0, 0.05, 8)
    bound = solve_l1_fit(design, target).objective + 0.1
    interior = spread_weights(design, target, bound)
    solve = lp._solve_highs
    monkeypatch.setattr(lp, "_solve_highs", lambda *args, method="choose": solve(*args, method="simplex"))
    simplex = spread_weights(design, target, bound)
    assert "interior point" in interior.solver
    assert_distribution(interior.weights, 500)
    assert interior.objective <= bound + 1e-7
    assert interior.weights.max() == pytest.approx(simplex.weights.max(), rel=1e-6, abs=1e-9)


def test_column_generation_refuses_a_master_over_its_memory_bound():
    design, target = random_problem(1, R=12, C=3000)
    with pytest.raises(SynthDPError, match="memory bound"):
        solve_l1_fit_columns(slicer(design), 3000, target + 1.0, initial=13, batch=13, max_columns=14)


def test_candidate_columns_are_the_design_matrix_held_or_computed():
    rng = np.random.default_rng(5)
    cheb = basis.ChebyshevBasis(basis.lowest_degree_indices(3, 9))
    points = rng.uniform(-1, 1, (50, 3))
    expected = cheb.design_matrix(points)
    held = candidate_columns(cheb, points, max_entries=9 * 50)
    computed = candidate_columns(cheb, points, max_entries=9 * 50 - 1)
    for columns in (held, computed):
        np.testing.assert_array_equal(columns(7, 31), expected[:, 7:31])
    rounded = candidate_columns(cheb, points, max_entries=0, lattice=4)(0, 50)
    np.testing.assert_array_equal(rounded, grid.round_to_lattice(expected, 4))


def test_blend_keeps_the_fit_within_the_bound_and_takes_the_largest_uniform_share():
    rng = np.random.default_rng(21)
    design = rng.uniform(-1, 1, (6, 300))
    target = design[:, :4] @ np.array([0.4, 0.3, 0.2, 0.1])  # a sparse exact fit exists
    optimum = solve_l1_fit(design, target)
    uniform_fit = np.abs(design.mean(axis=1) - target).sum()
    bound = optimum.objective + 0.3 * uniform_fit
    blended, share = blend_with_uniform(slicer(design), 300, target, optimum, bound)
    assert 0 < share < 1 and blended.objective <= bound * (1 + 1e-12)
    assert np.isclose(blended.weights.sum(), 1) and (blended.weights >= 0).all()
    assert (blended.weights > 0).sum() == 300  # every candidate now has mass
    more = (1 - share - 1e-6) * optimum.weights / optimum.weights.sum() + (share + 1e-6) / 300
    assert np.abs(design @ more - target).sum() > bound  # a larger share would break the bound
    whole, share = blend_with_uniform(slicer(design), 300, target, optimum, uniform_fit * 2)
    assert share == 1 and np.allclose(whole.weights, 1 / 300)
    _, share = blend_with_uniform(slicer(design), 300, target, optimum, optimum.objective)
    assert share < 1e-6  # no tolerance: (almost) the optimal vertex


def test_precision_weighting_scales_each_row_by_its_noise_and_leaves_equal_noise_alone():
    rng = np.random.default_rng(3)
    design, target = rng.uniform(-1, 1, size=(4, 30)), rng.uniform(-1, 1, size=4)
    columns = lambda start, stop: design[:, start:stop]  # noqa: E731
    same = precision_weighted(columns, target, np.full(4, 0.2), 0.64)
    assert same[0] is columns and same[1] is target and same[2] == 0.64
    noise_sd = np.array([0.1, 0.1, 0.4, 0.2])
    weighted_columns, weighted_target, weighted_l1 = precision_weighted(columns, target, noise_sd, 0.8 * 0.8)
    weight = np.array([1.0, 1.0, 0.25, 0.5])
    assert np.allclose(weighted_columns(5, 12), design[:, 5:12] * weight[:, None])
    assert np.allclose(weighted_target, target * weight)
    # E|noise_r| is proportional to sd_r: the l1 norm 0.64 over sd 0.8 in all becomes 0.64 * (0.1+0.1+0.1+0.1) / 0.8
    assert weighted_l1 == pytest.approx(0.32)


def test_tilt_stays_in_its_box_and_is_the_closest_to_uniform_there():
    rng = np.random.default_rng(22)
    design = rng.uniform(-1, 1, (6, 400))
    target = design[:, :4] @ np.array([0.4, 0.3, 0.2, 0.1])  # a sparse exact fit exists; uniform is far off
    optimum = solve_l1_fit(design, target)
    tolerance = np.full(6, 0.02)
    tilted = tilt_weights(slicer(design), 400, target, optimum, tolerance)
    assert tilted.status == "optimal"
    assert_distribution(tilted.weights, 400)
    assert (tilted.weights > 0).all()  # every candidate keeps some mass
    assert np.all(np.abs(design @ tilted.weights - target) <= tolerance * (1 + 1e-3))
    entropy = -np.sum(tilted.weights * np.log(tilted.weights))
    blended, _ = blend_with_uniform(slicer(design), 400, target, optimum,
                                    np.abs(design @ tilted.weights - target).sum())
    mixed = np.clip(blended.weights, 1e-300, None)
    assert entropy > -np.sum(mixed * np.log(mixed))  # more spread than the blend at the same l1 fit
    # a target the uniform distribution already fits within the box: the tilt leaves it uniform
    level = tilt_weights(slicer(design), 400, design.mean(axis=1), optimum, tolerance)
    np.testing.assert_allclose(level.weights, 1 / 400, rtol=1e-6)


def test_column_tilts_fit_each_columns_rows_with_weights_of_that_column_alone():
    """column_tilt_weights: one tilt per column of its own rows (x_j and x_j^2 of 600 strongly
    correlated candidates). Column j's weights are a function of the candidates' column j only
    (equal values, equal weights), each fits its rows within their box, and the rearrangement
    with them gives every column the marginal of its own tilt."""
    from synthdp.postprocess.copula import rearranged

    rng = np.random.default_rng(5)
    z = rng.normal(size=(600, 1)) @ np.ones((1, 3)) + 0.3 * rng.normal(size=(600, 3))
    points = np.round(np.tanh(z / 2), 2)  # ties within each column
    design = np.vstack([points.T, points.T ** 2])  # rows 0-2: x_j; rows 3-5: x_j^2
    row_columns = np.array([0, 1, 2, 0, 1, 2])
    target = design.mean(axis=1) + np.array([0.1, -0.1, 0.05, 0.02, 0.03, -0.02])
    optimum = solve_l1_fit(design, target)
    tolerance = np.full(6, 0.01)
    weights = column_tilt_weights(slicer(design), 600, target, optimum, tolerance, row_columns, 3)
    assert weights.shape == (600, 3)
    for column in range(3):
        own = weights[:, column]
        np.testing.assert_allclose(own.sum(), 1.0)
        rows = row_columns == column
        assert np.all(np.abs(design[rows] @ own - target[rows]) <= tolerance[rows] * (1 + 1e-3))
        for value in np.unique(points[:, column])[:20]:  # a function of the column's own value
            same = own[points[:, column] == value]
            np.testing.assert_allclose(same, same[0], rtol=1e-9)
    moved = rearranged(points, weights)
    for column in range(3):  # each column's values follow its own tilt (within 1/N of the distribution)
        assert abs(moved[:, column].mean() - points[:, column] @ weights[:, column]) < 0.01


def test_the_tilt_does_not_depend_on_how_its_rows_are_scaled():
    """Multiplying row r of W, of the target and of the tolerance by D_r > 0 leaves the tilt's
    problem unchanged, and the dual's per-row scaling makes the solver's path unchanged too:
    rows scaled over six orders of magnitude give the same weights (to round-off) and status as
    unscaled rows. (Unscaled, L-BFGS-B stopped at its iteration cap on the scaled rows, 1 %
    off in the largest weight: checked on the code before the scaling.)"""
    rng = np.random.default_rng(24)
    design = rng.uniform(-1, 1, (20, 2000))
    target = design @ rng.dirichlet(np.ones(2000)) + rng.normal(0, 0.01, 20)
    tolerance = np.full(20, 0.01)
    optimum = solve_l1_fit(design, target)
    plain = tilt_weights(slicer(design), 2000, target, optimum, tolerance)
    factor = np.logspace(-4, 2, 20)
    scaled = tilt_weights(slicer(design * factor[:, None]), 2000, target * factor, optimum, tolerance * factor)
    assert plain.status == "optimal" and scaled.status == "optimal"
    np.testing.assert_allclose(scaled.weights, plain.weights, rtol=1e-9, atol=0)


@pytest.mark.parametrize("newton", [True, False])
def test_a_tilt_at_its_cap_is_accepted_only_within_its_slack(monkeypatch, newton):
    """Stopped at its iteration cap, the tilt reports "within its tolerances" (no warning in the
    pipeline) when every fit is within (1 + TILT_FIT_SLACK) x its box, else "tilt stopped"; by
    either solver (Newton's method on a dense W, L-BFGS-B beyond TILT_NEWTON_ROWS rows), each named."""
    from synthdp.postprocess import lp

    rng = np.random.default_rng(25)
    design = rng.uniform(-1, 1, (6, 400))
    target = design[:, :4] @ np.array([0.4, 0.3, 0.2, 0.1])
    optimum = solve_l1_fit(design, target)
    tolerance = np.full(6, 0.02)
    if not newton:
        monkeypatch.setattr(lp, "TILT_NEWTON_ROWS", 0)
    monkeypatch.setattr(lp, "TILT_NEWTON_ITERATIONS" if newton else "TILT_MAX_ITERATIONS", 1)
    monkeypatch.setattr(lp, "TILT_FIT_SLACK", 1e9)
    loose = tilt_weights(slicer(design), 400, target, optimum, tolerance)
    assert loose.status.startswith("tilt within its tolerances: every fit within")
    monkeypatch.setattr(lp, "TILT_FIT_SLACK", 0.0)
    strict = tilt_weights(slicer(design), 400, target, optimum, tolerance)
    steps = "1 Newton step" if newton else "1 iterations"
    assert strict.status.startswith(f"tilt stopped after {steps} with its largest fit")
    assert "mixed with the l1 optimum at share" in strict.status
    largest = float(strict.status.split("largest fit ")[1].split(" x")[0])
    assert largest > 1
    # the fallback: a distribution within every box, as close to the stopped tilt as the segment allows
    assert_distribution(strict.weights, 400)
    box = np.maximum(tolerance, np.abs(design @ optimum.weights - target))
    assert np.all(np.abs(design @ strict.weights - target) <= box * (1 + 1e-9))
    share = float(strict.status.split("share ")[1].split(",")[0])
    assert 0 < share <= 1


def test_the_optimum_share_is_the_least_that_fits_every_box():
    from synthdp.postprocess.lp import optimum_share

    box = np.array([1.0, 1.0, 2.0])
    assert optimum_share(np.array([0.5, -0.9, 1.0]), np.zeros(3), box) == 0.0  # the tilt fits already
    # row 0: 3 -> 0 enters the box at a = 2/3; row 1: -2 -> 1 at a = 1/3; row 2 fits throughout
    share = optimum_share(np.array([3.0, -2.0, 0.0]), np.array([0.0, 1.0, 2.0]), box)
    assert share == pytest.approx(2 / 3, rel=1e-6)
    mixed = (1 - share) * np.array([3.0, -2.0, 0.0]) + share * np.array([0.0, 1.0, 2.0])
    assert np.all(np.abs(mixed) <= box * (1 + 1e-9))
    assert optimum_share(np.array([5.0]), np.array([1.0]), np.array([1.0])) == pytest.approx(1.0)


def test_tilt_widens_a_box_no_distribution_meets_to_the_l1_optimum_residuals():
    rng = np.random.default_rng(23)
    design = rng.uniform(0, 1, (4, 200))
    target = np.array([2.0, -1.0, 0.5, 0.5])  # outside the hull: the optimum cannot fit it
    optimum = solve_l1_fit(design, target)
    tilted = tilt_weights(slicer(design), 200, target, optimum, np.full(4, 1e-3))
    assert_distribution(tilted.weights, 200)
    residual = np.abs(design @ optimum.weights - target)
    assert np.all(np.abs(design @ tilted.weights - target) <= np.maximum(1e-3, residual) * (1 + 1e-3) + 1e-9)


@pytest.mark.parametrize("seed", range(3))
def test_column_generation_on_sparse_columns_matches_dense_columns(seed):
    """A mixed table's sparse W: priced and added to the master sparse, the same optimum as with
    dense columns and as the whole LP's interior point."""
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    design = (rng.random((30, 3000)) < 0.1) * rng.uniform(0.5, 1.0, (30, 3000))  # indicator-like rows
    target = design.mean(axis=1) + rng.normal(0, 0.05, 30)
    by_column = sp.csc_matrix(design)
    sparse = solve_l1_fit_columns(lambda start, stop: by_column[:, start:stop], 3000, target, chunk=700, initial=31,
                                  batch=31)
    dense = solve_l1_fit_columns(slicer(design), 3000, target, chunk=700, initial=31, batch=31)
    whole = solve_l1_fit(by_column, target, method="ipm")
    assert sparse.objective == pytest.approx(dense.objective, abs=1e-6)
    assert sparse.objective == pytest.approx(whole.objective, abs=1e-6)
    assert sparse.objective == pytest.approx(np.abs(design @ sparse.weights - target).sum(), abs=1e-8)
    assert_distribution(sparse.weights, 3000)


def test_column_generation_pays_where_its_first_round_holds_at_most_a_quarter_of_the_candidates():
    from synthdp.postprocess.lp import COLUMN_GENERATION_SHARE, column_generation_pays, minimum_working_columns

    assert column_generation_pays(972, 10_000)  # heart_cleveland's LP
    assert not column_generation_pays(7_309, 10_000)  # adult's: its masters would be nearly the whole LP
    assert column_generation_pays(100, 10_000)  # the 256-column floor of a batch
    edge = 1249  # 2 (R + 1) = 2 500 = a quarter of 10 000
    assert minimum_working_columns(edge) == COLUMN_GENERATION_SHARE * 10_000
    assert column_generation_pays(edge, 10_000) and not column_generation_pays(edge + 1, 10_000)


@pytest.mark.parametrize("seed", range(4))
def test_a_certified_stop_is_within_the_slack_and_no_further_from_uniform_than_the_optimum(seed):
    """certified_stop (mixed tables, here a sparse W): L-BFGS-B stops at the first iterate that fits
    every row within (1 + TILT_FIT_SLACK) x its box and whose KL from uniform is at most the dual's
    value (a lower bound on the optimum's KL): its weights are then no further from uniform than the
    converged tilt's, in fewer iterations; nor than the exact optimum, Newton's method's on the same
    cells dense (without certified_stop)."""
    import scipy.sparse as sp

    from synthdp.postprocess.lp import TILT_FIT_SLACK, TILT_MAX_ITERATIONS

    rng = np.random.default_rng(seed)
    design = (rng.random((40, 2000)) < 0.1).astype(float)  # cells of a noisy table
    target = design.mean(axis=1) + rng.normal(0, 0.05, 40)
    tolerance = np.full(40, 0.02)
    optimum = solve_l1_fit(design, target)
    cells = sp.csc_matrix(design)
    converged = tilt_weights(lambda start, stop: cells[:, start:stop], 2000, target, optimum, tolerance)
    early = tilt_weights(lambda start, stop: cells[:, start:stop], 2000, target, optimum, tolerance,
                         certified_stop=True)
    exact = tilt_weights(slicer(design), 2000, target, optimum, tolerance)
    assert converged.status == "optimal" and exact.status == "optimal"
    assert early.status.startswith("tilt within its tolerances and no further from uniform than its optimum")
    assert_distribution(early.weights, 2000)
    box = np.maximum(tolerance, np.abs(design @ np.clip(optimum.weights, 0, None) - target))
    assert np.all(np.abs(design @ early.weights - target) <= (1 + TILT_FIT_SLACK) * box)

    def divergence(weights: np.ndarray) -> float:
        return float(weights @ np.log(weights * 2000))

    assert divergence(early.weights) <= divergence(converged.weights) + 1e-9
    assert divergence(early.weights) <= divergence(exact.weights) + 1e-9
    iterations = int(early.status.split(" after ")[1].split(" ")[0])
    assert 0 < iterations < TILT_MAX_ITERATIONS


def test_after_a_primal_re_solve_falls_back_the_rounds_left_use_the_dual_simplex(monkeypatch):
    """The masters after the first are re-solved by the primal simplex; once one of them runs out of its
    iterations (the interior-point fallback), the rounds left are re-solved by the dual simplex, which
    does not stall on the degenerate masters the primal one stalled on (docs/decisions/mixed-lp-speed.md).
    The first master is the dual simplex's; the optimum is the same."""
    from synthdp.postprocess import lp

    design, target = random_problem(3, R=12, C=3000)
    strategies, real = [], lp._run_to_optimum

    def run(highs, cap=None):
        strategy = highs.getOptionValue("simplex_strategy")
        strategies.append(strategy[1] if isinstance(strategy, tuple) else strategy)
        real(highs, cap)
        return len(strategies) == 2  # the first re-solve counts as a fallback

    monkeypatch.setattr(lp, "_run_to_optimum", run)
    solution = solve_l1_fit_columns(slicer(design), 3000, target, chunk=250, initial=13, batch=13)
    assert len(strategies) >= 3, "the problem needs at least three rounds to show the switch"
    assert strategies[:2] == [lp.DUAL_SIMPLEX, lp.MASTER_RESOLVE_STRATEGY]
    assert all(strategy == lp.DUAL_SIMPLEX for strategy in strategies[2:])
    assert solution.objective == pytest.approx(solve_l1_fit(design, target).objective, abs=1e-6)
