"""The l1 fit (Algorithm 1, step 20): the distribution over candidates closest to b_hat.

    minimise ||W u - b_hat||_1  subject to  u >= 0, sum(u) = 1,

with W[r, k] = phi_r(candidate k), shape (R, C). As a linear program (the paper's
equality form): variables u, s+, s- >= 0 with W u - s+ + s- = b_hat and sum(u) = 1,
minimising sum(s+ + s-). It has R + 1 equality rows, so any optimal vertex puts weight on
at most R + 1 candidates.

:func:`solve_l1_fit` passes this LP to HiGHS directly (highspy); :func:`solve_l1_fit_cvxpy`
states the same LP in cvxpy's equality form and is the reference the tests cross-check.
experiments/bench_lp.py measured (C = 1e4..1e5, R = 20..500): the cvxpy equality form costs
1.1-1.5x the direct solve (up to 2x at C = 1e5, almost all of it cvxpy building the model),
the natural cvxpy form norm1(W u - b) 3.6-4.4x. The direct solve was never the slower one
by more than noise, so the pipeline uses it at every size: one solver path.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .errors import SynthDPError


@dataclass(frozen=True)
class LPSolution:
    """Result of the l1 fit.

    Attributes
    ----------
    weights : array, shape (C,)
        The distribution u over candidates (non-negative, sums to 1 up to solver tolerance).
    objective : float
        ||W u - b_hat||_1 at the solution.
    status : str
        Solver status ("optimal" on success).
    solver : str
    seconds : float
        Wall time of the solve, including building the model.
    """

    weights: np.ndarray
    objective: float
    status: str
    solver: str
    seconds: float


def equality_form(design: np.ndarray, target: np.ndarray) -> tuple[sp.csc_matrix, np.ndarray, np.ndarray]:
    """The LP's constraint matrix [[W, -I, I], [1, 0, 0]], right-hand side and costs."""
    R, C = design.shape
    identity = sp.identity(R, format="csc")
    top = sp.hstack([sp.csc_matrix(design), -identity, identity], format="csc")
    bottom = sp.hstack([sp.csc_matrix(np.ones((1, C))), sp.csc_matrix((1, 2 * R))], format="csc")
    matrix = sp.vstack([top, bottom], format="csc")
    rhs = np.concatenate([target, [1.0]])
    cost = np.concatenate([np.zeros(C), np.ones(2 * R)])
    return matrix, rhs, cost


def solve_l1_fit(design: np.ndarray, target: np.ndarray, time_limit: float | None = None,
                 method: str = "choose") -> LPSolution:
    """Solve the l1 fit with HiGHS through highspy (the pipeline's solver).

    Parameters
    ----------
    design : array or sparse matrix, shape (R, C)
        W, basis functions evaluated at the candidates.
    target : array, shape (R,)
        b_hat, the noisy moments.
    time_limit : float, optional
        Seconds before HiGHS gives up.
    method : {"choose", "simplex", "ipm"}
        HiGHS's ``solver`` option. "ipm" (interior point, then crossover to a vertex) is
        what mixed tables use: on adult's sparse LP (R = 5132, C = 10^4, 1.1e6 non-zeros) it
        took 7-9 s where HiGHS's default dual simplex took 180 s at epsilon = 4, with the
        same optimum.
    """
    start = time.perf_counter()
    matrix, rhs, cost = equality_form(design, target)
    weights = _solve_highs(matrix, rhs, rhs, cost, design.shape[1], time_limit, method)
    return LPSolution(weights, _l1_objective(design, target, weights), "optimal", "highspy", time.perf_counter() - start)


def spread_weights(design: np.ndarray, target: np.ndarray, max_objective: float,
                   time_limit: float | None = None) -> LPSolution:
    """The second LP of MECHANISM.md section 6: spread the mass over the near-optimal fits.

    A vertex of the l1 fit puts all the weight on at most R + 1 candidates, so the synthetic
    table has at most R + 1 distinct rows. This LP keeps the fit within ``max_objective``
    (||W u - b_hat||_1 <= max_objective, e.g. the optimum plus a share of the noise's
    expected l1 norm, which no fit can tell apart) and among those distributions minimises
    the largest weight max_k u_k, which spreads the mass over as many candidates as the
    tolerance allows. Variables: u, s+, s- >= 0 and z; rows: the equality form, the fit
    bound sum(s+ + s-) <= max_objective, and u_k - z <= 0 for every candidate.
    """
    start = time.perf_counter()
    R, C = design.shape
    matrix, rhs, _ = equality_form(design, target)
    fit_row = sp.csc_matrix(np.concatenate([np.zeros(C), np.ones(2 * R)])[None, :])
    cap_rows = sp.hstack([sp.identity(C, format="csc"), sp.csc_matrix((C, 2 * R))], format="csc")
    with_z = sp.vstack([matrix, fit_row, cap_rows], format="csc")
    z_column = sp.csc_matrix(np.concatenate([np.zeros(R + 2), -np.ones(C)])[:, None])
    full = sp.hstack([with_z, z_column], format="csc")
    lower = np.concatenate([rhs, [-np.inf], np.full(C, -np.inf)])
    upper = np.concatenate([rhs, [max_objective], np.zeros(C)])
    cost = np.concatenate([np.zeros(C + 2 * R), [1.0]])
    weights = _solve_highs(full, lower, upper, cost, C, time_limit)
    return LPSolution(weights, _l1_objective(design, target, weights), "optimal", "highspy (spread)",
                      time.perf_counter() - start)


def blend_with_uniform(design: np.ndarray, target: np.ndarray, solution: LPSolution,
                       max_objective: float) -> tuple[LPSolution, float]:
    """Mix the optimal weights with the uniform distribution over the candidates.

    The optimal vertex puts all the mass on at most R + 1 candidates. The candidates
    themselves are a sample from the private candidate model (e.g. the copula), so the
    uniform distribution over them has that model's marginals and many distinct rows. The
    fit of (1 - lam) u* + lam / C is convex in lam, so bisection finds the largest lam in
    [0, 1] whose fit stays within ``max_objective``; a cheap alternative to
    :func:`spread_weights` (matrix-vector products instead of a second LP).

    Returns
    -------
    LPSolution
        The blended weights and their fit.
    lam : float
        The share of the uniform distribution.
    """
    C = design.shape[1]
    optimum = np.clip(solution.weights, 0.0, None)
    optimum /= optimum.sum()
    uniform = np.full(C, 1.0 / C)

    def fit(lam: float) -> float:
        return _l1_objective(design, target, (1 - lam) * optimum + lam * uniform)

    low, high = 0.0, 1.0
    if fit(high) <= max_objective:
        low = high
    else:
        for _ in range(30):  # lam to within 1e-9
            middle = (low + high) / 2
            low, high = (middle, high) if fit(middle) <= max_objective else (low, middle)
    weights = (1 - low) * optimum + low * uniform
    return LPSolution(weights, fit(low), solution.status, solution.solver + " + blend", solution.seconds), low


def _solve_highs(matrix: sp.csc_matrix, row_lower: np.ndarray, row_upper: np.ndarray, cost: np.ndarray,
                 n_weights: int, time_limit: float | None, method: str = "choose") -> np.ndarray:
    """Minimise cost . x subject to row_lower <= matrix x <= row_upper, x >= 0; the first n_weights of x."""
    import highspy

    n_rows, n_cols = matrix.shape
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = n_cols, n_rows
    lp.col_cost_ = cost
    lp.col_lower_ = np.zeros(n_cols)
    lp.col_upper_ = np.full(n_cols, highspy.kHighsInf)
    lp.row_lower_ = np.where(np.isinf(row_lower), -highspy.kHighsInf, row_lower)
    lp.row_upper_ = np.where(np.isinf(row_upper), highspy.kHighsInf, row_upper)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = matrix.indptr
    lp.a_matrix_.index_ = matrix.indices
    lp.a_matrix_.value_ = matrix.data
    highs = highspy.Highs()
    highs.setOptionValue("output_flag", False)
    highs.setOptionValue("solver", method)
    if time_limit is not None:
        highs.setOptionValue("time_limit", float(time_limit))
    highs.passModel(lp)
    highs.run()
    status = highs.getModelStatus()
    if status != highspy.HighsModelStatus.kOptimal:
        raise SynthDPError(f"the LP solver stopped without an optimal solution ({highs.modelStatusToString(status)})")
    return np.asarray(highs.getSolution().col_value)[:n_weights]


def solve_l1_fit_cvxpy(design: np.ndarray, target: np.ndarray) -> LPSolution:
    """The same LP in cvxpy's equality form, solved by HiGHS through cvxpy (the reference)."""
    import cvxpy as cp

    start = time.perf_counter()
    R, C = design.shape
    u = cp.Variable(C, nonneg=True)
    s_plus = cp.Variable(R, nonneg=True)
    s_minus = cp.Variable(R, nonneg=True)
    problem = cp.Problem(
        cp.Minimize(cp.sum(s_plus) + cp.sum(s_minus)),
        [design @ u - s_plus + s_minus == target, cp.sum(u) == 1],
    )
    problem.solve(solver=cp.HIGHS)
    if problem.status != cp.OPTIMAL:
        raise SynthDPError(f"the LP solver stopped without an optimal solution ({problem.status})")
    weights = np.asarray(u.value)
    return LPSolution(weights, _l1_objective(design, target, weights), "optimal", "cvxpy+HiGHS", time.perf_counter() - start)


def _l1_objective(design: np.ndarray, target: np.ndarray, weights: np.ndarray) -> float:
    return float(np.abs(design @ weights - target).sum())
