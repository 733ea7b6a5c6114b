"""Does an interior-point LP solution spread the synthetic mass (docs/mechanism.md §6)?

For one release per round at (epsilon, delta) = (1, 1e-10) with PCA candidates, solves the
same l1 LP twice with HiGHS: dual simplex (a vertex, at most R + 1 rows; what synthdp uses)
and interior point without crossover (a point inside the optimal face). Prints the l1
objective, the support, the distinct rows of n samples and the worst-case relative error
over 2 000 smooth queries (bounds: column min/max taken as public).

Usage::

    python experiments/lp_spread_probe.py ctg wdbc --rounds 2
"""

from __future__ import annotations

import argparse
import warnings

import highspy
import numpy as np
from common import load_dataset, true_answers

from synthdp import SmoothSynthesizer
from synthdp.evaluation.queries import answer_queries, gaussian_kernel_queries, worst_case_errors
from synthdp.postprocess.candidates import ellipsoid_candidates
from synthdp.postprocess.lp import equality_form
from synthdp.postprocess.sampling import clean_weights, sample_rows
from synthdp.stats.chebyshev import ChebyshevBasis


def solve(design: np.ndarray, target: np.ndarray, interior: bool) -> np.ndarray:
    matrix, rhs, cost = equality_form(design, target)
    R, C = design.shape
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_, lp.col_cost_ = C + 2 * R, R + 1, cost
    lp.col_lower_, lp.col_upper_ = np.zeros(C + 2 * R), np.full(C + 2 * R, highspy.kHighsInf)
    lp.row_lower_ = lp.row_upper_ = rhs
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = matrix.indptr, matrix.indices, matrix.data
    highs = highspy.Highs()
    highs.setOptionValue("output_flag", False)
    if interior:
        highs.setOptionValue("solver", "ipm")
        highs.setOptionValue("run_crossover", "off")
    highs.passModel(lp)
    highs.run()
    return clean_weights(np.asarray(highs.getSolution().col_value)[:C])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("datasets", nargs="+")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    for name in args.datasets:
        dataset = load_dataset(name)
        frame, bounds = dataset.frame, dataset.bounds
        queries = gaussian_kernel_queries(dataset.d, 2000, np.random.default_rng(1))
        true = true_answers(dataset, queries)
        for round_ in range(args.rounds):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                release = SmoothSynthesizer(epsilon=1.0, delta=1e-10, seed=round_).fit(frame, bounds=bounds).release_
            candidates = ellipsoid_candidates(release.pca, 10_000, np.random.default_rng(round_))
            design = ChebyshevBasis(release.basis_indices).design_matrix(candidates)
            for interior in (False, True):
                weights = solve(design, release.noisy_moments, interior)
                rows = sample_rows(candidates, weights, len(frame), np.random.default_rng(5))
                relative = worst_case_errors(true, answer_queries(rows, queries), queries.alpha).relative
                print(f"{name} round {round_} {'interior' if interior else 'simplex '}: "
                      f"objective {np.abs(design @ weights - release.noisy_moments).sum():.5f}, "
                      f"support {int((weights > 1e-9).sum())}, distinct rows {len(np.unique(rows, axis=0))}, "
                      f"rel {np.round(relative, 3)}", flush=True)


if __name__ == "__main__":
    main()
