"""Where the strongest pairs lose their strength (issue 18): the latent correlation, the candidates, the output.

    python experiments/strong_pairs_trace.py [--datasets ctg pks] [--seeds 4] [--first-seed 300] [--above 0.85]

For each table's pairs of real |Pearson r| above ``--above``, the mean |.| over the pairs and
the seeded releases at (1, 1e-10) (seeds FIRST_SEED ..: reproducible, NOT private) of

* **real latent**: the real table's normal-score correlation (``common.score_correlation``: each
  column's mean ranks through the normal quantile): what the Gaussian copula's latent
  correlation estimates;
* **fitted latent R**: the copula's latent correlation (:func:`synthdp.postprocess.pairs.latent_correlation`
  as the candidates use it);
* **candidates' Pearson**: the Pearson correlation of the copula's candidate points;
* **synthetic Pearson**: of the sampled table (after the LP, its tilt and the rearrangement);
* **real Pearson**.

Variants: the default; ``exact marginals`` (the one-way histograms without noise,
``StudyOptions(exact_stages=("marginals",))``); ``exact marginals and pairs`` (the pairs release
without noise too). The exact variants are oracles, NOT private: they show which noise costs
what. Bounds: each column's min and max in the data, taken as public (experiments/common.py's
BOUNDS_NOTE). Writes experiments/results/strong_pairs_trace.md (``--out``).
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from common import DATA_DIR, RESULTS_DIR, command_line, generated_by, log, score_correlation

from synthdp import SynthConfig
from synthdp.study import StudyOptions, candidates_module, fit, sample

OUT = RESULTS_DIR / "strong_pairs_trace.md"
VARIANTS = {"default": StudyOptions(),
            "exact marginals (oracle)": StudyOptions(exact_stages=("marginals",)),
            "exact marginals and pairs (oracle)": StudyOptions(exact_stages=("marginals", "correlation"))}
STEPS = ("real latent", "fitted latent R", "candidates' Pearson", "synthetic Pearson", "real Pearson")


class Capture:
    """Keeps the latent correlation and the candidates the last fit made (post-processing outputs)."""

    def __init__(self) -> None:
        self.latent: np.ndarray | None = None
        self.points: np.ndarray | None = None
        pair_correlation, copula_candidates = candidates_module._pair_correlation, candidates_module.copula_candidates

        def latent(*args, **kwargs):
            self.latent = pair_correlation(*args, **kwargs)
            return self.latent

        def points(*args, **kwargs):
            self.points = copula_candidates(*args, **kwargs)
            return self.points

        candidates_module._pair_correlation, candidates_module.copula_candidates = latent, points


def trace(name: str, seeds: range, above: float, capture: Capture) -> list[str]:
    frame = pd.read_csv(DATA_DIR / f"{name}.csv")
    bounds = {str(c): [float(frame[c].min()), float(frame[c].max())] for c in frame}
    real = frame.corr().to_numpy()
    latent_real = score_correlation(frame.to_numpy(dtype=float))
    pairs = [(i, j) for i, j in zip(*np.triu_indices(len(real), 1)) if abs(real[i, j]) > above]
    rows = []
    for label, study in VARIANTS.items():
        values = []
        for seed in seeds:
            capture.latent = capture.points = None
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = fit(SynthConfig(epsilon=1.0, delta=1e-10, seed=seed), frame, bounds=bounds, study=study)
                synthetic = sample(model).corr().to_numpy()
            if capture.latent is None or capture.points is None:
                raise RuntimeError(f"{name}: the fit made no copula candidates from a pairs release")
            points = np.corrcoef(capture.points.T)
            values.append([[latent_real[i, j], capture.latent[i, j], points[i, j], synthetic[i, j], real[i, j]]
                           for i, j in pairs])
        means = np.abs(np.array(values)).mean(axis=(0, 1))
        log(f"{name} {label}: " + ", ".join(f"{step} {value:.3f}" for step, value in zip(STEPS, means)))
        rows.append(f"| {name} | {label} | {len(pairs)} | " + " | ".join(f"{value:.3f}" for value in means) + " |")
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", default=["ctg", "pks"])
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--first-seed", type=int, default=300)
    parser.add_argument("--above", type=float, default=0.85, help="the pairs of real |r| above this (default 0.85)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    capture = Capture()
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    rows = [row for name in args.datasets for row in trace(name, seeds, args.above, capture)]
    text = (f"# Where the strongest pairs lose their strength\n\n{generated_by(command_line('strong_pairs_trace.py', argv))}; "
            f"{(time.perf_counter() - started) / 60:.1f} min. Mean |correlation| over the pairs of real |r| > "
            f"{args.above:g} (*k*) and seeds {seeds.start}-{seeds.stop - 1} at (1, 1e-10), seeded noise (reproducible, "
            "not private); the oracle variants take a stage without noise (NOT private). The script's docstring "
            "defines each step.\n\n| table | variant | *k* | " + " | ".join(STEPS) + " |\n|---|---|---:|"
            + "---:|" * len(STEPS) + "\n" + "\n".join(rows) + "\n")
    args.out.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
