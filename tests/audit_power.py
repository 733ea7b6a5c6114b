"""The false-failure rates of test_audit.py's power checks, over random seeds (for maintainers, not a test).

``test_calibrated_release_passes_the_audit`` asks the calibrated audit's epsilon lower bound to reach
each audit's ``min_calibrated_bound``, and ``test_halved_noise_scale_fails_the_audit`` asks the audit
of halved noise to find a violation. Both are random over the noise's seed. For each audit this
draws ``--runs-factor`` x ``size`` runs per table of the real release (the event probabilities P[T > c]
under D and D', as the audit's thresholds cut them), then ``--sims`` simulated audits of ``size`` runs:
multinomial counts over the thresholds' intervals, reduced exactly as ``test_audit.audit`` reduces
them (Clopper-Pearson at alpha / (4 K), the four directions, the largest log ratio). Printed per
audit: the lower bound's mean and sd, its smallest value, and

* calibrated: how many simulated audits fall below ``min_calibrated_bound`` and by how many sd the
  mean clears it (the normal tail is the rate the test's docstring states);
* ``--halved``: how many simulated audits miss (no violation, or a bound at or below epsilon) and by
  how many sd the mean clears epsilon.

    python tests/audit_power.py [--halved] [--audits NAME ...] [--runs-factor 10] [--sims 20000]

About 15 minutes on one core for every audit at the defaults.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent))
import test_audit  # noqa: E402


def interval_probabilities(sample: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    """P[T in (c_{j-1}, c_j]] for j = 0 .. K (c_{-1} = -inf, c_K = +inf) from a sample of T."""
    below = np.searchsorted(thresholds, sample, side="left")  # how many thresholds lie below each T
    return np.bincount(below, minlength=len(thresholds) + 1) / len(sample)


def simulated_counts(probabilities: np.ndarray, size: int, sims: int, rng: np.random.Generator) -> np.ndarray:
    """#{T > c_j} for j = 0 .. K - 1 in ``sims`` audits of ``size`` runs, shape (sims, K)."""
    draws = rng.multinomial(size, probabilities, size=sims)
    return np.cumsum(draws[:, ::-1], axis=1)[:, ::-1][:, 1:]


def simulated_audits(first: np.ndarray, second: np.ndarray, size: int, thresholds: np.ndarray, epsilon: float,
                     delta: float, sims: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The epsilon lower bound and whether a violation was found, of ``sims`` simulated audits."""
    beta = test_audit.ALPHA / (4 * len(thresholds))
    (lo0, hi0), (lo1, hi1) = (test_audit.clopper_pearson(simulated_counts(interval_probabilities(sample, thresholds),
                                                                          size, sims, rng), size, beta)
                              for sample in (first, second))
    best = np.full(sims, -np.inf)
    violated = np.zeros(sims, dtype=bool)
    for lower, upper in ((lo0, hi1), (lo1, hi0), (1 - hi0, 1 - lo1), (1 - hi1, 1 - lo0)):
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.log(np.maximum(lower - delta, 0.0) / upper)
        best = np.maximum(best, np.where(np.isnan(ratio), -np.inf, ratio).max(axis=1))
        violated |= (lower > math.exp(epsilon) * upper + delta).any(axis=1)
    return best, violated


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--halved", action="store_true", help="the halved-noise audits (default: calibrated)")
    parser.add_argument("--audits", nargs="+", default=list(test_audit.AUDITS), choices=list(test_audit.AUDITS))
    parser.add_argument("--runs-factor", type=int, default=10, help="runs per table for the event probabilities")
    parser.add_argument("--sims", type=int, default=20_000, help="simulated audits per audit")
    parser.add_argument("--seed", type=int, default=1000, help="the real runs' noise seed (not the tests' 11 or 12)")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    factor = 0.5 if args.halved else 1.0
    print("audit | mean | sd | smallest | " + ("misses | (mean - eps) / sd" if args.halved else
                                               "min_calibrated_bound | below it | (mean - bound) / sd | normal tail"))
    for name in args.audits:
        spec = test_audit.AUDITS[name]
        first, second, thresholds = spec.sampler(spec.epsilon, spec.delta, spec.noise, spec.size * args.runs_factor,
                                                 factor, args.seed)
        best, violated = simulated_audits(first, second, spec.size, thresholds, spec.epsilon, spec.delta, args.sims,
                                          rng)
        mean, sd = float(best.mean()), float(best.std())
        if args.halved:
            misses = int(np.count_nonzero(~violated | (best <= spec.epsilon)))
            print(f"{name} | {mean:.3f} | {sd:.4f} | {best.min():.3f} | {misses} of {args.sims} | "
                  f"{(mean - spec.epsilon) / sd:.1f}", flush=True)
        else:
            low = spec.min_calibrated_bound
            below = int(np.count_nonzero(best < low))
            print(f"{name} | {mean:.3f} | {sd:.4f} | {best.min():.3f} | {low} | {below} of {args.sims} "
                  f"(violations: {int(violated.sum())}) | {(mean - low) / sd:.1f} | {stats.norm.cdf((low - mean) / sd):.1e}",
                  flush=True)


if __name__ == "__main__":
    main()
