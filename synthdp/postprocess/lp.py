"""The l1 fit (Algorithm 1, step 20): the distribution over candidates closest to b_hat.

    minimise ||W u - b_hat||_1  subject to  u >= 0, sum(u) = 1,

with W[r, k] = phi_r(candidate k), shape (R, C). As a linear program (the paper's
equality form): variables u, s+, s- >= 0 with W u - s+ + s- = b_hat and sum(u) = 1,
minimising sum(s+ + s-). It has R + 1 equality rows, so any optimal vertex puts weight on
at most R + 1 candidates.

The pipeline solves it by column generation (:func:`solve_l1_fit_columns`): HiGHS's
simplex on a small master LP over a working set of candidates, with every candidate priced
chunk by chunk, so W is never needed whole (C up to 1e6, R up to 1e3). An optimal vertex
needs at most R + 1 candidates, so the master stays small, and the pricing proves the
master's optimum within a tolerance of the whole LP's (:func:`solve_l1_fit_columns`).
Measured against HiGHS's dual simplex and PDLP on the whole LP:
docs/decisions/lp-column-generation.md.
:func:`solve_l1_fit` passes the whole LP to HiGHS (what column generation is tested
against); :func:`solve_l1_fit_cvxpy` states it in cvxpy's equality form, the reference the
tests cross-check, not the pipeline's solver: cvxpy's model building costs time and memory.
Measured: docs/decisions/lp-cvxpy-forms.md.
"""

from __future__ import annotations

import functools
import os
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from synthdp.errors import SynthDPError
from synthdp.stats import grid
from synthdp.stats.chebyshev import ChebyshevBasis
from synthdp.stats.threads import WORKERS, split_product


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
        what mixed tables use where column generation does not pay (:func:`column_generation_pays`):
        on their large sparse LPs it reaches the dual simplex's optimum much faster. Measured:
        docs/decisions/lp-ipm-mixed.md.
    """
    start = time.perf_counter()
    matrix, rhs, cost = equality_form(design, target)
    weights = _solve_highs(matrix, rhs, rhs, cost, design.shape[1], time_limit, method)
    return LPSolution(weights, _l1_objective(design, target, weights), "optimal", "highspy", time.perf_counter() - start)


ColumnSource = Callable[[int, int], np.ndarray]
"""``columns(start, stop)`` returns W[:, start:stop], shape (R, stop - start)."""

PRICING_TOLERANCE = 1e-7  # HiGHS's dual feasibility tolerance: finer reduced costs are round-off
PRICING_ENTRIES = 2_000_000  # W entries priced at once (16 MB)
MASTER_ITERATIONS_PER_ROW = 20  # simplex iterations per master row before the interior-point fallback
MASTER_MIN_ITERATIONS = 5_000
MASTER_RESOLVE_STRATEGY = 4  # HiGHS's primal simplex for the masters after the first (docs/decisions/mixed-lp-speed.md)
MASTER_RESOLVE_PERTURBATION = 0.0  # and without its bound perturbation (the same record: stalls at an exact fit)
DUAL_SIMPLEX = 1  # HiGHS's simplex_strategy for the dual simplex: the rounds after a primal re-solve fell back
BOX_FIT_MARGIN = 0.99  # the box phase's rows: b_hat +- this x the tolerances (room for HiGHS's feasibility tolerance)
BOX_PHASE_ROWS = 256  # the box phase runs where the fit has at least this many moment rows (docs/decisions/lp-large-n.md)


def candidate_columns(basis: ChebyshevBasis, candidates: np.ndarray, max_entries: int,
                      lattice: int | None = None) -> ColumnSource:
    """W's columns at the candidates: computed once when R x C <= ``max_entries``, else on request.

    Parameters
    ----------
    basis : ChebyshevBasis
        The R released functions.
    candidates : array, shape (C, d)
    max_entries : int
        Largest W (in entries, 8 bytes each) to hold whole.
    lattice : int, optional
        Round W to multiples of 1/lattice (exact mode).
    """
    def compute(start: int, stop: int) -> np.ndarray:
        design = basis.design_matrix(candidates[start:stop])
        return design if lattice is None else grid.round_to_lattice(design, lattice)

    if basis.size * len(candidates) > max_entries:
        return compute
    design = compute(0, len(candidates))
    return lambda start, stop: design[:, start:stop]


def minimum_working_columns(n_basis: int) -> int:
    """Columns column generation holds after its first round: the first master plus one batch."""
    return 2 * _default_batch(n_basis)


COLUMN_GENERATION_SHARE = 0.25  # largest share of the C candidates column generation may hold after its first round


def column_generation_pays(n_rows: int, n_candidates: int) -> bool:
    """Whether a sparse LP of ``n_rows`` rows over ``n_candidates`` candidates is solved by column
    generation (:func:`solve_l1_fit_columns`) rather than HiGHS's interior point on the whole LP
    (:func:`solve_l1_fit` with ``method="ipm"``).

    Column generation gains by solving masters much smaller than the LP: after its first round it
    holds :func:`minimum_working_columns` (2 (R + 1)) columns, and an optimal vertex needs at most
    R + 1. Where that is at most COLUMN_GENERATION_SHARE of the C candidates, the masters stay small;
    where it is not (adult: R = 7 309 rows, C = 10 000), every master is nearly the whole LP and its
    dual simplex is the slow way to solve it. Public: the LP's rows (the released moments it keeps
    and the histograms' cells) and C. Measured: docs/decisions/mixed-lp-speed.md.
    """
    return minimum_working_columns(n_rows) <= COLUMN_GENERATION_SHARE * n_candidates


def _default_batch(n_basis: int) -> int:
    return max(n_basis + 1, 256)  # an optimal vertex uses up to R + 1 candidates


def solve_l1_fit_columns(columns: ColumnSource, n_candidates: int, target: np.ndarray, chunk: int | None = None,
                         initial: int | None = None, batch: int | None = None, max_columns: int | None = None,
                         tolerance: float = PRICING_TOLERANCE, time_limit: float | None = None,
                         close_enough: np.ndarray | None = None, iteration_cap: int | None = None,
                         row_range: tuple[np.ndarray, np.ndarray] | None = None) -> LPSolution:
    """Solve the l1 fit by column generation, never holding all of W.

    The restricted master is the LP of :func:`equality_form` over the slacks and a working
    set S of candidates (at first the ``initial`` first ones). HiGHS's duals
    satisfy reduced cost = cost - A^T dual; with y the duals of the R moment rows and mu
    that of the row sum(u) = 1, candidate c (cost 0, column (W[:, c], 1)) has reduced cost

        rc_c = -(y . W[:, c]) - mu.

    Every candidate is priced, ``chunk`` columns at a time; the ``batch`` most negative
    reduced costs enter S and HiGHS re-solves from its previous basis. Optimality: any
    feasible u of the full LP has objective >= master optimum + sum_c rc_c u_c >= master
    optimum + min_c rc_c (weak duality; sum(u) = 1, u >= 0, slack reduced costs >= 0), so
    when no rc_c is below -``tolerance`` the master's solution is optimal for the full LP
    to within ``tolerance`` in objective. Each round adds a candidate the master lacked,
    so the loop ends.

    With ``close_enough`` (the tilt's tolerances) a fit within them is all that is asked. The
    tilt (:func:`tilt_weights`) keeps the fit in the box max(tolerance_r, |residual_r|), so any
    solution inside its tolerances gives it the same box, the tolerances themselves, and the same
    tilt. Where R >= BOX_PHASE_ROWS (large n: 10 columns with delta, R = 169 at n = 10**5, 355 at
    10**6), a box phase (:func:`_fit_within_tolerances`) first looks for one by column generation
    on the LP whose rows allow b_hat +- 0.99 ``close_enough``, where the exact fit's masters are
    degenerate and slow: 10**7 x 10, R = 355, seeds 1-3: 1.4-1.5 s against 6.9-8.1 s for the l1
    fit's four rounds; 10**6 x 10 with delta: 1.4-3.2 s against 21-23 s. Where it finds none (its
    pricing bound proves that no candidate mixture fits within 0.99 x the tolerances), and below
    BOX_PHASE_ROWS, the l1 fit is solved from scratch as without the phase, and ends, not
    necessarily at the optimum, as soon as a master's solution fits every moment r within
    ``close_enough[r]`` (its residual is s+_r - s-_r). The phase can give the tilt a narrower box
    than the l1 fit would have: where the l1 optimum leaves a row outside its tolerance but
    another mixture fits them all (10**6 x 10 with delta: seed 1, one row at 1.33 x; seed 2), the
    box is the tolerances, as the tilt asks, not that row's l1 residual. With ``row_range`` (each
    row's least and largest value over the candidates, where the caller holds W) a row whose box
    b_hat_r +- close_enough_r lies wholly beyond that range proves at once that no mixture fits
    within the tolerances (a mixture's fit of row r lies within it): the box phase, which would
    end without a fit, is skipped (:func:`box_out_of_reach`; the same solution).

    The first master is solved by HiGHS's dual simplex; each later one is re-solved from the previous
    round's basis by its primal simplex (MASTER_RESOLVE_STRATEGY): the entering columns leave that
    basis primal feasible, where the dual simplex must first repair the dual infeasibility they bring
    (the same optimum; the small tables' LP fit 25-45 % faster: docs/decisions/mixed-lp-speed.md), with
    its bound perturbation off (MASTER_RESOLVE_PERTURBATION): perturbed, the primal simplex of a master
    whose optimum is an exact fit (every row's slacks 0) spent 7 120 iterations, 8.8 s, without an
    optimum on the 10**7 x 10 table of benchmarks/run.py (R = 355), and 2 008 iterations, 1.9 s,
    without. Where a primal re-solve runs out of its iterations all the same (below), the rounds left
    are re-solved by the dual simplex (DUAL_SIMPLEX; the paper's R = 719 on 10**6 rows at epsilon = 4:
    the primal re-solves fell back five times in a row). On an exact fit (objective 0, highly
    degenerate) a warm start can stall: 4*10**6 x 10, R = 355, seed 1, the third master cycled for
    minutes (33 772 iterations in 28 s without an optimum) where a cold solve takes 2.5 s. A master that needs more than ``iteration_cap``
    simplex iterations (default max(5000, 20 (R + 1)); the masters of the golden cases and of
    that table's other seeds need at most 11 (R + 1)) is solved again from scratch by the
    interior-point method with crossover to a vertex, whose basis the next round warms from.
    The cap counts iterations, not seconds, so a seeded run stays reproducible; either
    solver's optimum passes the same pricing proof (docs/performance.md, "LP solver").

    Parameters
    ----------
    columns : callable
        ``columns(start, stop)`` -> W[:, start:stop], shape (R, stop - start), an array or a sparse
        matrix (a mixed table's W, priced and added to the master sparse).
    n_candidates : int
        C.
    target : array, shape (R,)
        b_hat.
    chunk : int, optional
        Candidates priced at once; default PRICING_ENTRIES / R.
    initial, batch : int, optional
        Size of the first working set and of each addition; default max(R + 1, 256) each.
    max_columns : int, optional
        Memory bound on |S|: an error rather than a larger master.
    tolerance : float
        Absolute objective tolerance of the optimality proof (l1 units of the moments).
    time_limit : float, optional
        Seconds for the whole loop.
    close_enough : array, shape (R,), optional
        Residuals small enough to stop at (the tilt's tolerances); None: the optimum.
    iteration_cap : int, optional
        Simplex iterations of one master before the interior-point fallback; default
        max(MASTER_MIN_ITERATIONS, MASTER_ITERATIONS_PER_ROW * (R + 1)).
    row_range : (array, array), optional
        Each row's least and largest value over the C candidates (:func:`held_row_range`).

    Returns
    -------
    LPSolution
        ``weights`` of shape (C,), zero outside S; ``status`` "optimal", or "close enough"
        when a fit within ``close_enough`` was found first (by the box phase: its weights clipped
        at 0 and summed to 1, its rounds in ``solver``). Memory: R x (chunk + 2 batch + |S|) floats.
    """
    start = time.perf_counter()
    R = len(target)
    chunk = chunk or max(1, PRICING_ENTRIES // R)
    initial, batch = min(initial or _default_batch(R), n_candidates), batch or _default_batch(R)
    if (close_enough is not None and R >= BOX_PHASE_ROWS
            and not (row_range is not None and box_out_of_reach(row_range, target, close_enough))):
        within = _fit_within_tolerances(columns, n_candidates, target, np.asarray(close_enough, dtype=float), chunk,
                                        initial, batch, max_columns, tolerance, time_limit, start)
        if within is not None:
            return within
    working = np.arange(initial)  # candidates are i.i.d. draws (or a grid): a prefix is a fair start
    matrix, rhs, cost = equality_form(np.zeros((R, 0)), target)
    highs = highs_model(matrix, rhs, rhs, cost, time_limit)
    _add_candidate_columns(highs, columns(0, initial))
    in_master = np.zeros(n_candidates, dtype=bool)
    in_master[working] = True
    order = [working]
    cap = iteration_cap or max(MASTER_MIN_ITERATIONS, MASTER_ITERATIONS_PER_ROW * (R + 1))
    rounds, status, fallbacks = 0, "optimal", 0
    while True:
        if time_limit is not None:
            highs.setOptionValue("time_limit", max(0.0, time_limit - (time.perf_counter() - start)))
        fell_back = _run_to_optimum(highs, cap)
        fallbacks += fell_back
        if rounds == 0:  # the masters after the first add columns to an optimal basis, which stays primal feasible
            highs.setOptionValue("simplex_strategy", MASTER_RESOLVE_STRATEGY)
            highs.setOptionValue("primal_simplex_bound_perturbation_multiplier", MASTER_RESOLVE_PERTURBATION)
        elif fell_back:  # a primal re-solve that ran out of iterations: the dual simplex for the rounds left
            highs.setOptionValue("simplex_strategy", DUAL_SIMPLEX)
        rounds += 1
        if close_enough is not None:
            slacks = np.asarray(highs.getSolution().col_value)[: 2 * R]
            if np.all(np.abs(slacks[:R] - slacks[R:]) <= close_enough):
                status = "close enough"
                break
        duals = np.asarray(highs.getSolution().row_dual)
        entering, entering_columns, _ = _most_negative_reduced_costs(columns, n_candidates, duals, in_master, chunk,
                                                                     batch, tolerance)
        if len(entering) == 0:
            break
        held = sum(len(indices) for indices in order) + len(entering)
        if max_columns is not None and held > max_columns:
            raise SynthDPError(f"column generation needs more than {max_columns} candidate columns in its master LP, "
                               "over the memory bound max_lp_entries: raise it or lower --n-basis")
        _add_candidate_columns(highs, entering_columns)
        in_master[entering] = True
        order.append(entering)
    values = np.asarray(highs.getSolution().col_value)[2 * R:]
    weights = np.zeros(n_candidates)
    weights[np.concatenate(order)] = values
    objective = float(highs.getInfo().objective_function_value)
    stopped = ", stopped within the tolerances" if status == "close enough" else ""
    stopped += f", {fallbacks} by interior point after {cap} simplex iterations" if fallbacks else ""
    return LPSolution(weights, objective, status, f"highspy column generation ({rounds} rounds{stopped}, "
                      f"{len(values)} of {n_candidates} columns)", time.perf_counter() - start)


def held_row_range(design: np.ndarray | sp.spmatrix) -> tuple[np.ndarray, np.ndarray]:
    """Each row's least and largest value over the columns of a held W (dense or sparse)."""
    if sp.issparse(design):
        return (np.asarray(design.min(axis=1).todense()).ravel(), np.asarray(design.max(axis=1).todense()).ravel())
    return np.min(design, axis=1), np.max(design, axis=1)


REACH_MARGIN = 1e-9  # relative room for round-off in a mixture's fit before a row counts as out of reach


def box_out_of_reach(row_range: tuple[np.ndarray, np.ndarray], target: np.ndarray, close_enough: np.ndarray) -> bool:
    """Whether some row's box b_hat_r +- close_enough_r lies wholly beyond [min_c W[r, c], max_c W[r, c]].

    Every mixture u (u >= 0, sum(u) = 1) fits row r within that range, so then no mixture fits every
    row within ``close_enough`` and the box phase of :func:`solve_l1_fit_columns` cannot succeed. A
    mixed table's noisy cell frequencies below 0 by more than their tolerance are such rows (no
    candidate's indicator is below 0); on heart_cleveland at (1, 1e-10) 3-9 rows, seeds 1-3. A
    margin of REACH_MARGIN x max(1, |bound|) keeps a fit that round-off puts at the bound in reach.
    """
    low, high = row_range
    tolerance = np.asarray(close_enough, dtype=float)
    above = target - tolerance > high + REACH_MARGIN * np.maximum(1.0, np.abs(high))
    below = target + tolerance < low - REACH_MARGIN * np.maximum(1.0, np.abs(low))
    return bool(np.any(above | below))


def _fit_within_tolerances(columns: ColumnSource, n_candidates: int, target: np.ndarray, close_enough: np.ndarray,
                           chunk: int, initial: int, batch: int, max_columns: int | None, tolerance: float,
                           time_limit: float | None, start: float) -> LPSolution | None:
    """The box phase of :func:`solve_l1_fit_columns` with ``close_enough``: column generation on the
    fit's box form, stopped at the first master whose weights fit every row within ``close_enough``;
    None where it finds none (the l1 fit is then solved as without the phase, from scratch).

    The master's moment rows are ranged, b_hat_r +- BOX_FIT_MARGIN close_enough_r for (W u - s+ + s-)_r,
    so its objective sum(s+ + s-) counts only what lies outside that box and is 0 at any u within
    it: a feasibility problem with room, where the l1 fit's equality rows ask for the exact, highly
    degenerate vertex. Each master is solved cold by HiGHS's interior point without crossover
    (no vertex is needed: the tilt takes only its box from these weights; 1.4-1.7 s at 10**7 x 10,
    R = 355, against 2.5-3.0 s by the dual simplex warm from the previous round). The weights are
    taken as the tilt takes them (clipped at 0, summed to 1) and accepted only where every
    |(W u - b_hat)_r| <= close_enough_r, so the tilt's box is then exactly the tolerances, as from
    any fit within them. The pricing is the l1 fit's; a round whose
    Lagrangian bound, master objective + least reduced cost (sum(u) = 1), is above ``tolerance``
    proves no mixture of the candidates fits within the box (up to the solver's accuracy) and ends
    the phase, as do no entering candidate, a master over ``max_columns`` or a solve without an
    optimum. Measured: docs/decisions/lp-large-n.md.
    """
    import highspy

    R = len(target)
    matrix, rhs, cost = equality_form(np.zeros((R, 0)), target)
    room = np.concatenate([BOX_FIT_MARGIN * close_enough, [0.0]])
    highs = highs_model(matrix, rhs - room, rhs + room, cost, time_limit, method="ipm")
    highs.setOptionValue("run_crossover", "off")
    held = [columns(0, initial)]
    _add_candidate_columns(highs, held[0])
    in_master = np.zeros(n_candidates, dtype=bool)
    in_master[:initial] = True
    order = [np.arange(initial)]
    rounds = 0
    while True:
        if time_limit is not None:
            highs.setOptionValue("time_limit", max(0.0, time_limit - (time.perf_counter() - start)))
        highs.run()
        rounds += 1
        if highs.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            return None
        solution = highs.getSolution()
        values = np.clip(np.asarray(solution.col_value)[2 * R:], 0.0, None)
        if not values.sum() > 0:
            return None
        values /= values.sum()
        residual = -target.copy()
        offset = 0
        for block in held:
            residual += block @ values[offset : offset + block.shape[1]]
            offset += block.shape[1]
        if np.all(np.abs(residual) <= close_enough):
            weights = np.zeros(n_candidates)
            weights[np.concatenate(order)] = values
            return LPSolution(weights, float(np.abs(residual).sum()), "close enough",
                              f"highspy column generation ({rounds} rounds, stopped within the tolerances, "
                              f"{len(values)} of {n_candidates} columns)", time.perf_counter() - start)
        entering, entering_columns, lowest = _most_negative_reduced_costs(
            columns, n_candidates, np.asarray(solution.row_dual), in_master, chunk, batch, tolerance)
        bound = float(highs.getInfo().objective_function_value) + min(0.0, lowest)
        if len(entering) == 0 or bound > tolerance:
            return None
        if max_columns is not None and len(values) + len(entering) > max_columns:
            return None
        _add_candidate_columns(highs, entering_columns)
        held.append(entering_columns)
        in_master[entering] = True
        order.append(entering)


def _most_negative_reduced_costs(columns: ColumnSource, n_candidates: int, duals: np.ndarray, in_master: np.ndarray,
                                 chunk: int, batch: int, tolerance: float) -> tuple[np.ndarray, np.ndarray, float]:
    """Indices and W columns of up to ``batch`` candidates outside the master with rc < -tolerance
    (the columns sparse where ``columns`` gives sparse blocks), and the least reduced cost outside
    the master (inf where every candidate is in it)."""
    moment_duals, simplex_dual = duals[:-1], duals[-1]
    best_index = np.zeros(0, dtype=np.int64)
    best_cost = np.zeros(0)
    lowest = np.inf
    best_columns: np.ndarray | sp.csc_matrix = np.zeros((len(moment_duals), 0))
    for low in range(0, n_candidates, chunk):
        block = columns(low, min(low + chunk, n_candidates))
        if sp.issparse(block):
            reduced = -np.asarray(block.T @ moment_duals).ravel() - simplex_dual
        else:
            reduced = -(moment_duals @ block) - simplex_dual
        reduced[in_master[low : low + block.shape[1]]] = np.inf
        lowest = min(lowest, float(reduced.min(initial=np.inf)))
        candidates = np.flatnonzero(reduced < -tolerance)
        if len(candidates) == 0:
            continue
        best_index = np.concatenate([best_index, low + candidates])
        best_cost = np.concatenate([best_cost, reduced[candidates]])
        if sp.issparse(block):
            best_columns = sp.hstack([sp.csc_matrix(best_columns), sp.csc_matrix(block)[:, candidates]], format="csc")
        else:
            best_columns = np.concatenate([best_columns, block[:, candidates]], axis=1)
        if len(best_index) > batch:
            keep = np.argpartition(best_cost, batch)[:batch]
            best_index, best_cost, best_columns = best_index[keep], best_cost[keep], best_columns[:, keep]
    return best_index, best_columns, lowest


def _add_candidate_columns(highs, design_columns: np.ndarray) -> None:
    """Append candidate columns (W[:, c], 1) with cost 0 and bounds [0, inf) to the master (dense or sparse)."""
    import highspy

    R, count = design_columns.shape
    if sp.issparse(design_columns):
        block = sp.vstack([sp.csc_matrix(design_columns), sp.csc_matrix(np.ones((1, count)))], format="csc")
    else:
        block = sp.csc_matrix(np.vstack([design_columns, np.ones((1, count))]))
    highs.addCols(count, np.zeros(count), np.zeros(count), np.full(count, highspy.kHighsInf),
                  block.nnz, block.indptr.astype(np.int32), block.indices.astype(np.int32), block.data)


def spread_weights(design: np.ndarray, target: np.ndarray, max_objective: float,
                   time_limit: float | None = None) -> LPSolution:
    """The second LP of docs/mechanism.md §6: spread the mass over the near-optimal fits.

    A vertex of the l1 fit puts all the weight on at most R + 1 candidates, so the synthetic
    table has at most R + 1 distinct rows. This LP keeps the fit within ``max_objective``
    (||W u - b_hat||_1 <= max_objective, e.g. the optimum plus a share of the noise's
    expected l1 norm, which no fit can tell apart) and among those distributions minimises
    the largest weight max_k u_k, which spreads the mass over as many candidates as the
    tolerance allows. Variables: u, s+, s- >= 0 and z; rows: the equality form, the fit
    bound sum(s+ + s-) <= max_objective, and u_k - z <= 0 for every candidate. Solved by
    the interior-point method with crossover: on CTG at its default C = 10 000 (10 042 rows)
    6.8 s against 77 s for HiGHS's dual simplex, the same optimum (docs/performance.md, "LP solver").
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
    weights = _solve_highs(full, lower, upper, cost, C, time_limit, method="ipm")
    return LPSolution(weights, _l1_objective(design, target, weights), "optimal", "highspy interior point (spread)",
                      time.perf_counter() - start)


def precision_weighted(columns: ColumnSource, target: np.ndarray, noise_sd: np.ndarray,
                       noise_l1: float) -> tuple[ColumnSource, np.ndarray, float]:
    """The fit with each moment weighted by the precision of its noise.

    Moments taken from the products release (:func:`synthdp.privacy.release.pair_product_rows`) are
    noisier than the measured ones. Row r of W and of the target is multiplied by
    min(sd) / sd_r, so every row's residual counts in units of the best-measured moment's
    noise (a weighted l1 fit). Returns the weighted column source and target, and the
    expected l1 norm of the weighted noise, from which the blend and spread tolerances
    follow. Equal noise everywhere leaves all three unchanged.
    """
    noise_sd = np.asarray(noise_sd, dtype=float)
    if noise_sd.min() == noise_sd.max():
        return columns, target, noise_l1
    weight = noise_sd.min() / noise_sd
    weighted_l1 = noise_l1 * float(weight @ noise_sd / noise_sd.sum())  # each E|noise_r| is proportional to sd_r
    return (lambda start, stop: columns(start, stop) * weight[:, None]), target * weight, weighted_l1


def blend_with_uniform(columns: ColumnSource, n_candidates: int, target: np.ndarray, solution: LPSolution,
                       max_objective: float) -> tuple[LPSolution, float]:
    """Mix the optimal weights with the uniform distribution over the candidates.

    The optimal vertex puts all the mass on at most R + 1 candidates. The candidates
    themselves are a sample from the private candidate model (e.g. the copula), so the
    uniform distribution over them has that model's marginals and many distinct rows. The
    fit of (1 - lam) u* + lam / C is convex in lam, so bisection finds the largest lam in
    [0, 1] whose fit stays within ``max_objective``; a cheap alternative to
    :func:`spread_weights`: two passes over W's columns (chunk by chunk, so W need not be
    held whole), then bisection on vectors of length R.

    Returns
    -------
    LPSolution
        The blended weights and their fit.
    lam : float
        The share of the uniform distribution.
    """
    optimum = np.clip(solution.weights, 0.0, None)
    optimum /= optimum.sum()
    fitted, mean_column = np.zeros(len(target)), np.zeros(len(target))  # W u*, W 1/C
    step = max(1, PRICING_ENTRIES // max(len(target), 1))
    for start in range(0, n_candidates, step):
        block = columns(start, min(start + step, n_candidates))
        fitted += block @ optimum[start : start + step]
        mean_column += np.asarray(block.sum(axis=1)).ravel() / n_candidates

    def fit(lam: float) -> float:
        return float(np.abs((1 - lam) * fitted + lam * mean_column - target).sum())

    low, high = 0.0, 1.0
    if fit(high) <= max_objective:
        low = high
    else:
        for _ in range(30):  # lam to within 1e-9
            middle = (low + high) / 2
            low, high = (middle, high) if fit(middle) <= max_objective else (low, middle)
    weights = (1 - low) * optimum + low / n_candidates
    return LPSolution(weights, fit(low), solution.status, solution.solver + " + blend", solution.seconds), low

TILT_MAX_ITERATIONS = 1000  # L-BFGS-B's cap
TILT_FIT_SLACK = 0.05  # a tilt stopped at its cap with every |fit - b_hat| within (1 + slack) x its box is accepted
TILT_HELD_ENTRIES = 25_000_000  # W entries (200 MB) the tilt holds rather than recomputes at every step
TILT_NEWTON_ROWS = 1000  # a dense W of at most this many rows: Newton's method on the dual (an R x R Hessian)
TILT_NEWTON_ITERATIONS = 100  # Newton's cap (4-25 steps where it converged; more only toward an optimum at infinity)
TILT_NEWTON_FIT = 1e-6  # Newton's optimum: every |fit - b_hat| within (1 + this) x its box ...
TILT_NEWTON_GAP = 1e-6  # ... and KL(u) - the dual's value (>= KL(u) - KL(optimum)) at most this x KL(u)
TILT_NEWTON_INNER_STEPS = 500  # barrier steps for one Newton step's l1 subproblem (15-60 where measured)


def column_tilt_weights(columns: ColumnSource, n_candidates: int, target: np.ndarray, solution: LPSolution,
                        tolerance: np.ndarray, row_columns: np.ndarray, d: int) -> np.ndarray:
    """One tilt (:func:`tilt_weights`) per column, of that column's rows alone, shape (n_candidates, d).

    Where every row of the LP is one column's moment (``row_columns[r]``: its column), the
    weights that fit column j's rows within their box, closest to uniform, depend on the
    candidates' values in column j only: column j's marginal tilted on its own. One tilt of
    all the rows instead couples the columns through the candidates' dependence: a factor that
    moves column j moves every column correlated with it, whose own multipliers then settle
    elsewhere in their boxes, so the columns' fitted moments err together (measured:
    docs/decisions/column-tilts.md). For :func:`synthdp.postprocess.copula.rearranged`, which
    keeps only the weights' one-way marginals. A column with no row keeps uniform weights.
    """
    weights = np.full((n_candidates, d), 1.0 / n_candidates)
    for column in range(d):
        rows = np.flatnonzero(row_columns == column)
        if len(rows) == 0:
            continue

        def own_rows(start: int, stop: int, rows: np.ndarray = rows) -> np.ndarray:
            return _dense(columns(start, stop))[rows]

        tilted = tilt_weights(own_rows, n_candidates, target[rows], solution, tolerance[rows])
        weights[:, column] = np.clip(tilted.weights, 0.0, None)
    return weights


def tilt_weights(columns: ColumnSource, n_candidates: int, target: np.ndarray, solution: LPSolution,
                 tolerance: np.ndarray, certified_stop: bool = False) -> LPSolution:
    """:func:`_tilt` from the l1 fit ``solution``: always a solution within its box."""
    tilted = _tilt(columns, n_candidates, target, solution, tolerance, certified_stop)
    assert tilted is not None  # with an optimum the tilt falls back on it
    return tilted


def tilt_first(columns: ColumnSource, n_candidates: int, target: np.ndarray, tolerance: np.ndarray) -> LPSolution | None:
    """:func:`_tilt` with the tolerances as its box, before any l1 fit: the tilt the l1 fit would
    be followed by wherever its box phase finds a mixture of the candidates within BOX_FIT_MARGIN x
    the tolerances (the box is then the tolerances: :func:`solve_l1_fit_columns`), so the same
    weights. First a tilt whose accepted fits lie within that margin (its box BOX_FIT_MARGIN / (1 +
    TILT_FIT_SLACK) x the tolerances) tells whether such a mixture exists; None where it does not
    end within its box (Newton's method stopped, or the box proven empty), and the l1 fit must
    run, as it would have. For a dense W of at most TILT_NEWTON_ROWS rows.
    Measured: docs/decisions/lp-large-n.md."""
    narrower = BOX_FIT_MARGIN / (1 + TILT_FIT_SLACK) * np.asarray(tolerance, dtype=float)
    return _tilt(columns, n_candidates, target, None, tolerance, within_first=narrower)


def _tilt(columns: ColumnSource, n_candidates: int, target: np.ndarray, solution: LPSolution | None,
          tolerance: np.ndarray, certified_stop: bool = False,
          within_first: np.ndarray | None = None) -> LPSolution | None:
    """The distribution over the candidates closest to uniform (in entropy) whose fit stays in a box.

    The candidates are a sample of the private candidate model (the copula), so the uniform
    distribution over them carries that model: its marginals and its pairs. The l1 optimum
    instead puts all the mass on at most R + 1 candidates, which fit the noisy moments but
    draw a table of few distinct rows with whatever dependence those rows happen to have
    (on three columns, two of them independent, the optimum's table showed correlations up
    to 0.6 between them). This step keeps as much of the model as the moments allow:

        minimise KL(u || uniform)  subject to  |(W u - b_hat)_r| <= t_r  for every r,

    with t_r = max(``tolerance``_r, |(W u* - b_hat)_r|) for the l1 optimum u* (``solution``),
    so that u* is feasible and the problem always has a solution. Its solution is an
    exponential tilt of the uniform distribution, u_k proportional to exp(lambda . W_k), and
    lambda solves the convex dual over R values,

        minimise  log mean_k exp(lambda . W_k) - lambda . b_hat + sum_r t_r |lambda_r|,

    each coordinate scaled by its row's spread over the candidates (:func:`_dual_scale`). Every
    candidate keeps a positive weight. ``tolerance`` is in the units of the target (the pipeline
    passes a multiple of each moment's noise standard deviation).

    Solvers. A dense W of at most TILT_NEWTON_ROWS rows: a proximal Newton method
    (:func:`_newton_dual`: the exact R x R Hessian of the smooth part, its l1 subproblem solved
    exactly), stopped at the optimum's conditions: every fit within (1 + TILT_NEWTON_FIT) x its box
    and a duality gap (a bound on KL(u) - KL(optimum)) of at most TILT_NEWTON_GAP x KL(u). A sparse
    W (mixed tables' cells) or more rows: L-BFGS-B with lambda = lambda+ - lambda-, both >= 0, to
    its own tests (a projected gradient within 1e-3 x the least scaled box, or a relative decrease
    below 1e-12), taken as converged only with every fit within (1 + TILT_FIT_SLACK) x its box (at
    boxes of 1e-6 x the rows' spread its tests passed with fits 25-100 x outside). With
    ``certified_stop`` (mixed tables) L-BFGS-B runs first on a dense W too, and Newton's method
    only where it ends neither converged nor certified (below).

    ``status``: "optimal" when the solver converged; when it stopped at its cap (Newton:
    TILT_NEWTON_ITERATIONS, or a step that no longer descends; L-BFGS-B: TILT_MAX_ITERATIONS) with
    every row's fit within (1 + TILT_FIT_SLACK) x its box t_r (5 % of a noise sd over the tolerance
    of one sd: no test on the released moments could tell the two apart), "tilt within its
    tolerances: ... after k Newton steps" (L-BFGS-B: "k iterations"); otherwise the tilt is mixed
    with the l1 optimum u* (which fits every box) at the least share that brings every row within
    its box (:func:`optimum_share`), and the status says "tilt stopped after ...; mixed with the l1
    optimum at share a ...": a solution within the tolerances either way, and the report says which.
    Newton's method stops short where the dual's optimum is at infinity (the box's feasible
    distributions put no weight on some candidates): its steps still descend, linearly.

    With ``certified_stop``, L-BFGS-B also stops at the first iterate lambda_k whose
    weights u_k (a) fit every row within (1 + TILT_FIT_SLACK) x its box, the fit a stop at the cap
    is accepted with, and (b) are no further from uniform than the box's optimum u_opt:
    KL(u_k) <= D(lambda_k), the dual's value at lambda_k (weak duality: D(lambda) <= KL(u_opt) for
    every lambda), that is lambda_k . (W u_k - b_hat) + sum_r t_r |lambda_r| <= 0. Such a u_k meets
    both of the tilt's aims as well as the optimum does, up to the slack; the iterations after it
    tighten the fit within that slack and move away from uniform. Status "tilt within its
    tolerances and no further from uniform than its optimum: ...". Where many boxes bind (a mixed
    table's noisy cells) the dual crawls to its iteration cap long after it meets (a) and (b).
    With ``solution`` None (:func:`tilt_first`) the box is the tolerances themselves, with no optimum
    to fall back on: by Newton's method only (a dense W of at most TILT_NEWTON_ROWS rows), stopped
    early where the dual's value proves the box holds no distribution (below -log C: every
    feasible u has KL(u) <= log C, and weak duality bounds KL(u) below by minus the dual's value);
    None unless it ends within (1 + TILT_FIT_SLACK) x the tolerances, and with ``within_first``,
    unless a first tilt in that box does too (the same held W and dual scale serve both).
    Measured: docs/decisions/mixed-lp-speed.md; Newton's method: docs/decisions/tilt-solver.md.
    """
    from scipy import linalg  # noqa: F401  loaded before the BLAS limit below, which binds only loaded libraries
    from threadpoolctl import threadpool_limits  # a dependency of scikit-learn

    start = time.perf_counter()
    R = len(target)
    step = max(1, PRICING_ENTRIES // max(R, 1))  # W's columns a chunk at a time: W need not be held whole
    blocks = [(first, min(first + step, n_candidates)) for first in range(0, n_candidates, step)]

    pool = None
    hessian = None
    if sp.issparse(columns(0, 1)):  # a sparse W (mixed tables) is held whole: products with it are cheap
        pool = ThreadPoolExecutor(max_workers=1) if WORKERS > 1 else None  # the products' second thread
        whole = sp.csr_matrix(columns(0, n_candidates))
        transposed = whole.T.tocsr()
        exponents = split_product(transposed, pool)
        fit = split_product(whole, pool)
        row_sums = (np.asarray(whole.sum(axis=1)).ravel(), np.asarray(whole.multiply(whole).sum(axis=1)).ravel(),
                    n_candidates)
    else:
        if R * n_candidates <= TILT_HELD_ENTRIES:  # W's blocks computed once, not at every step
            held = [_dense(columns(*block)) for block in blocks]
            block_of = dict(zip(blocks, held))
            source: ColumnSource = lambda a, b: block_of[(a, b)]  # noqa: E731
        else:
            source = columns

        def exponents(lam: np.ndarray) -> np.ndarray:
            return np.concatenate([_dense(source(*block)).T @ lam for block in blocks])

        def fit(weights: np.ndarray) -> np.ndarray:
            return sum((_dense(source(a, b)) @ weights[a:b] for a, b in blocks), np.zeros(R))

        firsts, seconds = np.zeros(R), np.zeros(R)
        lowest, highest = np.full(R, np.inf), np.full(R, -np.inf)
        for block in blocks:
            values = _dense(source(*block))
            firsts += values.sum(axis=1)
            seconds += np.einsum("rc,rc->r", values, values)
            lowest, highest = np.minimum(lowest, values.min(axis=1)), np.maximum(highest, values.max(axis=1))
        row_sums = (firsts, seconds, n_candidates)
        varies = highest > lowest  # a constant row fits every u alike, within its box: its lambda_r is 0
        if R <= TILT_NEWTON_ROWS:
            if WORKERS > 1 and len(blocks) > 1:  # the blocks' Hessians on two threads, summed in their order
                pool = ThreadPoolExecutor(max_workers=WORKERS)

            def hessian(weights: np.ndarray, fitted: np.ndarray) -> np.ndarray:
                """W diag(u) W' - (W u)(W u)': the covariance of W's rows under u, block by block."""
                def part(block: tuple[int, int]) -> np.ndarray:
                    first, stop = block
                    centred = (_dense(source(first, stop)) - fitted[:, None]) * np.sqrt(weights[first:stop])
                    return centred @ centred.T
                parts = list(pool.map(part, blocks) if pool is not None else map(part, blocks))
                return functools.reduce(np.add, parts)

    def tilted(lam: np.ndarray) -> tuple[np.ndarray, float, float]:
        exponent = exponents(lam)
        top = exponent.max()
        weights = np.exp(exponent - top)
        total = weights.sum()
        return weights / total, top, total

    scale = _dual_scale(row_sums)
    # without an optimum, a dual value below -log C proves the box empty (see above)
    infeasible_below = -np.log(n_candidates) * (1 + 1e-9) - 1e-9 if solution is None else None

    def solve(box: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool, bool, str]:
        """The tilt in ``box``: its weights, their fits' |residuals|, whether converged, certified, and its steps."""
        assert hessian is not None or solution is not None  # without an optimum: Newton's method only
        # small products, many of them: BLAS threads cost more than they save (0.8 s against 0.05 s on PKS)
        with threadpool_limits(1, user_api="blas"):
            converged = certified = False
            if hessian is None or certified_stop:  # mixed tables: the certified stop first, where it is fast
                lam, iterations, converged, certified = _lbfgs_dual(tilted, fit, target, box, scale, n_candidates,
                                                                    certified_stop)
                steps = f"{iterations} iterations"
                if converged:  # its tests do not look at the fits: at small boxes it "converged" far outside them
                    converged = _excess(np.abs(fit(tilted(lam)[0]) - target), box) <= 1.0 + TILT_FIT_SLACK
            if hessian is not None and not (converged or certified):
                lam, iterations, converged = _newton_dual(tilted, fit, hessian, target, box, scale, varies,
                                                          TILT_NEWTON_ITERATIONS, infeasible_below)
                steps = f"{iterations} Newton step{'' if iterations == 1 else 's'}"
        weights = tilted(lam)[0]
        return weights, np.abs(fit(weights) - target), converged, certified, steps

    try:
        if solution is None:  # the tolerances as the box, without an optimum
            if hessian is None:  # Newton's method only (the caller asks for it with a dense W)
                return None
            optimum, box = None, np.asarray(tolerance, dtype=float)
            if within_first is not None:
                _, residual, converged, _, _ = solve(within_first)
                if not converged and _excess(residual, within_first) > 1.0 + TILT_FIT_SLACK:
                    return None
        else:
            optimum = np.clip(solution.weights, 0.0, None)
            optimum /= optimum.sum()
            box = np.maximum(np.asarray(tolerance, dtype=float), np.abs(fit(optimum) - target))
        weights, residual, converged, certified, steps = solve(box)
        excess = _excess(residual, box)
        if converged:
            status = "optimal"
        elif certified:
            status = (f"tilt within its tolerances and no further from uniform than its optimum: every fit within "
                      f"{excess:.3f} x its box after {steps}")
        elif excess <= 1.0 + TILT_FIT_SLACK:
            status = f"tilt within its tolerances: every fit within {excess:.3f} x its box after {steps}"
        elif optimum is None:  # no optimum to fall back on: the caller solves the l1 fit
            return None
        else:  # fall back within the box: toward the l1 optimum, which fits it (fit: a sparse W's products use the pool)
            share = optimum_share(fit(weights) - target, fit(optimum) - target, box)
            weights = (1.0 - share) * weights + share * optimum
            residual = np.abs(fit(weights) - target)
            status = (f"tilt stopped after {steps} with its largest fit {excess:.2f} x its box; mixed "
                      f"with the l1 optimum at share {share:.3g}, the least that brings every fit within its box")
    finally:
        if pool is not None:
            pool.shutdown()
    solver = "tilt within the tolerances, no l1 fit" if solution is None else solution.solver + " + tilt"
    return LPSolution(weights, float(residual.sum()), status, solver, time.perf_counter() - start)


Tilted = Callable[[np.ndarray], tuple[np.ndarray, float, float]]  # lambda -> (u, max exponent, sum of exp(exponent - max))


def _lbfgs_dual(tilted: Tilted, fit: Callable[[np.ndarray], np.ndarray], target: np.ndarray, box: np.ndarray,
                scale: np.ndarray, n_candidates: int, certified_stop: bool) -> tuple[np.ndarray, int, bool, bool]:
    """The tilt's dual by L-BFGS-B in x = lambda / scale split as x+ - x-, both >= 0 (:func:`tilt_weights`):
    lambda, the iterations, whether it converged and whether it stopped certified (``certified_stop``)."""
    from scipy import optimize

    R = len(target)
    last: dict[str, np.ndarray] = {}  # the latest evaluation, for certified_stop's test of the iterate

    def dual(x: np.ndarray) -> tuple[float, np.ndarray]:
        lam = scale * (x[:R] - x[R:])
        weights, top, total = tilted(lam)
        fitted = fit(weights)
        value = top + np.log(total / n_candidates) - target @ lam + (scale * box) @ (x[:R] + x[R:])
        if certified_stop:
            last.update(x=x.copy(), lam=lam, fitted=fitted)
        return value, np.concatenate([scale * (fitted - target + box), scale * (target - fitted + box)])

    certified: list[float] = []

    def stop_when_certified(intermediate_result: optimize.OptimizeResult) -> None:
        x = intermediate_result.x
        if "x" not in last or not np.array_equal(last["x"], x):
            dual(x)
        lam, error = last["lam"], last["fitted"] - target
        excess = _excess(np.abs(error), box)
        if excess <= 1.0 + TILT_FIT_SLACK and lam @ error + box @ np.abs(lam) <= 0.0:
            certified.append(excess)
            raise StopIteration

    result = optimize.minimize(dual, np.zeros(2 * R), jac=True, method="L-BFGS-B", bounds=[(0.0, None)] * (2 * R),
                               callback=stop_when_certified if certified_stop else None,
                               options={"maxiter": TILT_MAX_ITERATIONS,
                                        "gtol": 1e-3 * float((scale * box).min()), "ftol": 1e-12})
    return scale * (result.x[:R] - result.x[R:]), int(result.nit), bool(result.success), bool(certified)


def _newton_dual(tilted: Tilted, fit: Callable[[np.ndarray], np.ndarray],
                 hessian: Callable[[np.ndarray, np.ndarray], np.ndarray], target: np.ndarray, box: np.ndarray,
                 scale: np.ndarray, varies: np.ndarray, max_iterations: int,
                 infeasible_below: float | None = None) -> tuple[np.ndarray, int, bool]:
    """The tilt's dual by a proximal Newton method: lambda, the steps taken, whether it converged.

    In x = lambda / scale the dual is h(x) + sum_r s_r |x_r|, s = scale * box, with h(x) = log mean
    exp(lambda . W_k) - lambda . b_hat smooth: its gradient is scale * (W u - b_hat), the fit's
    residual, and its Hessian scale * Cov_u(W) * scale, the covariance of W's rows under the tilted
    weights u (``hessian``: C R^2 products, where L-BFGS-B's step costs 2 C R). Each step minimises
    h's second-order model, a damping rho |d|^2 / 2 and the exact l1 term (:func:`_l1_newton_step`)
    and moves toward its minimiser as far as the dual decreases (backtracking). rho = 1e-3 x the
    largest optimality residual (the least |subgradient| of a row), at least 1e-10, bounds the steps
    along directions of no curvature (rows that are linear combinations of others and of the constant,
    as a categorical column's cells are) and vanishes at the optimum, so where the optimum is finite
    the steps converge superlinearly. Rows that do not vary over the candidates (``varies`` False)
    keep lambda_r = 0, their optimum. Converged: every |W u - b_hat|_r <= (1 + TILT_NEWTON_FIT) t_r
    and the duality gap KL(u) - D(lambda) = lambda . (W u - b_hat) + t . |lambda|, an upper bound on
    KL(u) - KL(optimum) for a feasible u, at most TILT_NEWTON_GAP x KL(u) (+ 1e-15). Where the dual's
    optimum is at infinity (the feasible distributions leave some candidates at weight 0) the steps
    still descend and the gap still shrinks, linearly; the cap or a step that no longer descends
    stops them unconverged, and so does a dual value below ``infeasible_below`` (the box holds no
    distribution: :func:`tilt_first`, the tilt without an optimum).
    """
    R = len(target)
    ts = scale * box
    free = np.flatnonzero(varies)
    x = np.zeros(R)
    weights, top, total = tilted(x)
    n_candidates = len(weights)
    value = top + np.log(total / n_candidates)
    warm = np.inf
    for iteration in range(max_iterations + 1):
        fitted = fit(weights)
        gradient = scale * (fitted - target)
        lam = scale * x
        violation = float(np.max(np.maximum(np.abs(gradient) - ts, 0.0) / ts, initial=0.0))
        gap = float(lam @ (fitted - target) + box @ np.abs(lam))
        divergence = float(weights @ np.log(np.maximum(weights * n_candidates, 1e-300)))
        if violation <= TILT_NEWTON_FIT and gap <= TILT_NEWTON_GAP * divergence + 1e-15:
            return lam, iteration, True
        if iteration == max_iterations or len(free) == 0:
            break
        g, t, at = gradient[free], ts[free], x[free]
        residual = np.where(at != 0, np.abs(g + t * np.sign(at)), np.maximum(np.abs(g) - t, 0.0))
        curvature = scale[free, None] * hessian(weights, fitted)[np.ix_(free, free)] * scale[None, free]
        curvature[np.diag_indices(len(free))] += max(1e-10, 1e-3 * float(residual.max()))
        try:
            step, mu = _l1_newton_step(curvature, g, t, at, 0.1 * TILT_NEWTON_GAP * divergence, warm)
        except np.linalg.LinAlgError:
            break
        direction = np.zeros(R)
        direction[free] = step
        objective = value + ts @ np.abs(x)
        if infeasible_below is not None and objective < infeasible_below:
            break  # proven infeasible
        decrease = gradient @ direction + ts @ np.abs(x + direction) - ts @ np.abs(x)  # < 0: the model's
        if not decrease < 0:
            break
        alpha = 1.0
        while alpha >= 1e-10:
            trial = x + alpha * direction
            weights_t, top, total = tilted(scale * trial)
            value_t = top + np.log(total / n_candidates) - (scale * target) @ trial
            if value_t + ts @ np.abs(trial) <= objective + 1e-4 * alpha * decrease:
                break
            if -decrease <= 1e-13 * (1.0 + abs(objective)):  # below the values' round-off: the full step
                break
            alpha /= 2
        else:
            break  # no descent
        warm = 1e3 * mu if alpha == 1.0 else np.inf  # the next subproblem's barrier starts near this one's end
        x, weights, value = trial, weights_t, value_t
    return scale * x, iteration, False


def _l1_newton_step(curvature: np.ndarray, gradient: np.ndarray, ts: np.ndarray, x: np.ndarray,
                    gap: float, warm: float = np.inf) -> tuple[np.ndarray, float]:
    """The step d minimising gradient . d + d' curvature d / 2 + sum_r ts_r |x_r + d_r| (a lasso in R
    values), and the barrier weight it ended at (inf where the barrier was not needed).

    First the exact solution on x's face (:func:`_active_set_step`; near the optimum it holds, one
    linear system a step). Else by a log barrier on |y| <= s for y = x + d (:func:`_smoothed_abs`:
    the barrier minimised over s) from mu = min(max_r |gradient_r| ts_r, ``warm``), mu divided by 10
    at each centre (every component of the smoothed gradient within 0.1 ts_r) until its gap 2 R mu is
    below ``gap`` or 1e-3 x the model's decrease; from each centre, the exact solution on the face the
    centre suggests is taken where it passes the optimality test; else the last centre, refined to
    1e-7 ts_r.
    """
    R = len(x)
    # first the face x is on, with the rows whose gradient leaves their box (near the optimum: the step)
    exact = _active_set_step(curvature, gradient, ts, x, (x != 0) | (np.abs(gradient) > ts),
                             np.where(x != 0, np.sign(x), -np.sign(gradient)))
    if exact is not None:
        return exact, np.inf
    y = x.copy()
    moved = np.zeros(R)  # curvature @ (y - x)
    mu = min(float(np.max(np.abs(gradient) * ts)), warm)
    final = False
    for _ in range(TILT_NEWTON_INNER_STEPS):
        absolute, slope, bend = _smoothed_abs(y, mu, ts)
        smoothed = gradient + moved + slope
        if np.max(np.abs(smoothed) / ts) < (1e-7 if final else 0.1):
            exact = _active_set_step(curvature, gradient, ts, x, ts * np.abs(y) > 10 * mu, np.sign(y))
            if exact is not None or final:
                return (exact if exact is not None else y - x), mu
            change = abs(gradient @ (y - x) + 0.5 * (y - x) @ moved + ts @ (np.abs(y) - np.abs(x)))
            if 2 * R * mu <= max(gap, 1e-3 * change):
                final = True
            else:
                mu /= 10
            continue
        system = curvature.copy()
        system[np.diag_indices(R)] += bend
        step = -_cholesky_solve(system, smoothed)
        turned = curvature @ step
        decrement = -smoothed @ step
        linear, quadratic = (gradient + moved) @ step, step @ turned
        alpha = 1.0
        while alpha >= 1e-12 and decrement > 1e-30:  # the change along the step without cancellation
            change = alpha * linear + 0.5 * alpha**2 * quadratic + np.sum(_smoothed_abs(y + alpha * step, mu, ts)[0]
                                                                           - absolute)
            if change <= -0.25 * alpha * decrement:
                break
            alpha /= 2
        y = y + alpha * step
        moved = moved + alpha * turned
    return y - x, mu


def _smoothed_abs(y: np.ndarray, mu: float, ts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ts |y| smoothed by the log barrier: min over s > |y| of ts s - mu log(s^2 - y^2), and its first
    two derivatives in y. The minimiser is s = (mu + q) / ts, q = sqrt(mu^2 + ts^2 y^2); the slope
    ts^2 y / (mu + q) lies in (-ts, ts), the curvature mu ts^2 / (q (mu + q)) is positive."""
    q = np.sqrt(mu * mu + (ts * y) ** 2)
    s = (mu + q) / ts
    return ts * s - mu * np.log(2 * mu * s / ts), ts * ts * y / (mu + q), mu * ts * ts / (q * (mu + q))


def _active_set_step(curvature: np.ndarray, gradient: np.ndarray, ts: np.ndarray, x: np.ndarray,
                     support: np.ndarray, sign: np.ndarray) -> np.ndarray | None:
    """The lasso step's exact solution where its support (the rows of x + step not at 0) and their
    signs are guessed: from x's face, or from a barrier centre y (rows with ts_r |y_r| > 10 mu).

    The model's minimiser on that face solves one linear system. Accepted when the signs hold and
    every zero row's model gradient is within +-ts_r (the lasso's optimality conditions); rows that
    break either are moved across (at most four tries); None where none passes.
    """
    support, sign = support.copy(), sign.copy()
    for _ in range(4):
        rows = np.flatnonzero(support)
        step = -x.copy()  # zero rows: y_r = 0
        if len(rows):
            right = -(gradient[rows] + ts[rows] * sign[rows]) - curvature[np.ix_(rows, ~support)] @ step[~support]
            try:
                step[rows] = _cholesky_solve(curvature[np.ix_(rows, rows)], right)
            except np.linalg.LinAlgError:
                return None
        wrong = rows[np.sign(x[rows] + step[rows]) != sign[rows]]
        model = gradient + curvature @ step
        outside = np.flatnonzero(~support & (np.abs(model) > ts * (1 + 1e-9)))
        if len(wrong) == 0 and len(outside) == 0:
            return step
        support[wrong] = False
        support[outside] = True
        sign[outside] = -np.sign(model[outside])
    return None


def _cholesky_solve(matrix: np.ndarray, right: np.ndarray) -> np.ndarray:
    """matrix^-1 right for a symmetric positive definite matrix (LinAlgError where it is not)."""
    from scipy import linalg  # loaded already by the pairs model

    return linalg.cho_solve(linalg.cho_factor(matrix, check_finite=False), right, check_finite=False)


def _excess(residual: np.ndarray, box: np.ndarray) -> float:
    """The largest |residual_r| / box_r; a row with a zero box counts only if it misses (then inf)."""
    return float(np.max(np.divide(residual, box, out=np.full(len(box), np.inf), where=box > 0)[residual > 0],
                        initial=0.0))


def optimum_share(tilted: np.ndarray, optimum: np.ndarray, box: np.ndarray) -> float:
    """The least a in [0, 1] with |(1 - a) e_t + a e*| <= box on every row, for the residuals e_t of a
    tilt and e* of the l1 optimum (|e*| <= box by the box's construction, so a = 1 always fits).

    The fit is linear in a, so each row allows an interval [a_r, 1]: a_r = 0 where the tilt fits
    the row, else the point where the line from e_t to e* enters the box, (|e_t| - box) /
    |e_t - e*|. The mixture (1 - a) u_t + a u* is a distribution that fits every row within
    its box and keeps as much of the tilt (of the candidates' model) as the segment allows.
    """
    tilted, optimum, box = (np.asarray(v, dtype=float) for v in (tilted, optimum, box))
    limit = box * (1.0 + 1e-12)
    outside = np.abs(tilted) > limit
    if not outside.any():
        return 0.0
    gap = np.abs(tilted[outside] - optimum[outside])
    needed = np.divide(np.abs(tilted[outside]) - limit[outside], gap, out=np.ones(int(outside.sum())), where=gap > 0)
    return float(np.clip(needed.max() * (1.0 + 1e-9), 0.0, 1.0))


def _dual_scale(row_sums: tuple[np.ndarray, np.ndarray, int]) -> np.ndarray:
    """1 / (sd of each row of W over the candidates), 1 where a row is constant.

    The tilt's dual is solved in lambda_r = scale_r * x_r: the curvature of log mean exp(lambda . W_k)
    along lambda_r at lambda = 0 is row r's variance over the candidates, so every coordinate
    starts with unit curvature. The problem and its optimum are the same; L-BFGS-B's steps are
    not: rows of very different spread (precision-weighted rows, Chebyshev degrees of different
    variance over the copula's candidates) no longer stall it (docs/performance.md, "The tilt").
    """
    firsts, seconds, count = row_sums
    variance = np.maximum(seconds / count - (firsts / count) ** 2, 0.0)
    sd = np.sqrt(variance)
    return np.where(sd > 0, 1.0 / np.where(sd > 0, sd, 1.0), 1.0)


def _dense(block):
    return block.toarray() if sp.issparse(block) else block


def _solve_highs(matrix: sp.csc_matrix, row_lower: np.ndarray, row_upper: np.ndarray, cost: np.ndarray,
                 n_weights: int, time_limit: float | None, method: str = "choose") -> np.ndarray:
    """Minimise cost . x subject to row_lower <= matrix x <= row_upper, x >= 0; the first n_weights of x."""
    highs = highs_model(matrix, row_lower, row_upper, cost, time_limit, method)
    _run_to_optimum(highs)
    return np.asarray(highs.getSolution().col_value)[:n_weights]


def highs_model(matrix: sp.csc_matrix, row_lower: np.ndarray, row_upper: np.ndarray, cost: np.ndarray,
                 time_limit: float | None, method: str = "choose"):
    """A silent highspy.Highs holding min cost . x s.t. row_lower <= matrix x <= row_upper, x >= 0."""
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
    _silence_highs_banner()
    highs = highspy.Highs()
    highs.setOptionValue("output_flag", False)
    highs.setOptionValue("solver", method)
    if time_limit is not None:
        highs.setOptionValue("time_limit", float(time_limit))
    highs.passModel(lp)
    return highs


@functools.cache
def _silence_highs_banner() -> None:
    """Make the process's first highspy.Highs with file descriptor 1 pointed at /dev/null.

    HiGHS 1.16 writes its banner to the C-level standard output when the first Highs object
    is made, before any option (output_flag) can be set (ERGO-Code/HiGHS#2749), and only
    then; the command line's output is the user's, not the solver's.
    """
    import highspy

    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 1)
            highspy.Highs()
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def _run_to_optimum(highs, iteration_cap: int | None = None) -> bool:
    """Solve ``highs``'s model to optimality or raise; with ``iteration_cap``, a simplex that
    has not finished after that many iterations is replaced by a cold interior-point solve
    with crossover (then the solver option is restored). Returns whether that happened."""
    import highspy

    if iteration_cap is not None:
        highs.setOptionValue("simplex_iteration_limit", int(iteration_cap))
    highs.run()
    status = highs.getModelStatus()
    fell_back = iteration_cap is not None and status == highspy.HighsModelStatus.kIterationLimit
    if fell_back:
        solver = highs.getOptionValue("solver")
        solver = solver[1] if isinstance(solver, tuple) else solver
        highs.clearSolver()
        highs.setOptionValue("solver", "ipm")
        highs.setOptionValue("simplex_iteration_limit", 2**31 - 1)  # crossover's clean-up runs the simplex
        highs.run()
        highs.setOptionValue("solver", solver)
        status = highs.getModelStatus()
    if status != highspy.HighsModelStatus.kOptimal:
        raise SynthDPError(f"the LP solver stopped without an optimal solution ({highs.modelStatusToString(status)})")
    return fell_back


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
