"""Candidate kinds side by side: worst-case smooth-query error of one release per round.

For each dataset of data/ and each candidate kind (``pca``, the default;
``hypercube``; ``moments``, the Gaussian implied by the released degree <= 2 moments), fits
``SmoothSynthesizer(epsilon, delta, candidates=kind)`` with every other option at its
default, samples n rows, and measures the worst-case relative error over random sums of 10
Gaussian kernels (docs/mechanism.md §5) for sigma in {2, 4, 6, 8, 10}, averaged over rounds.
Bounds are each column's min and max, *taken as public* (the paper's normalisation).

Usage::

    python experiments/candidate_kinds.py --delta 1e-10            # (1, 1e-10): Table 4's setting
    python experiments/candidate_kinds.py --delta 0 --rounds 5     # pure epsilon-DP: Table 3's
    python experiments/candidate_kinds.py --spread 0.1             # with the mass-spreading LP
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
from common import DATASETS, QUERY_SEED, RESULTS_DIR, generated_by, load_dataset, query_set, true_answers

from synthdp import SmoothSynthesizer, SynthDPError
from synthdp.study import SIGMAS, answer_queries, worst_case_errors

KINDS = ("copula", "pca", "hypercube", "moments")


def run(name: str, kinds, epsilon: float, delta: float, spread: float, rounds: int, n_queries: int,
        seed: int) -> list[str]:
    dataset = load_dataset(name)
    frame, bounds = dataset.frame, dataset.bounds
    queries = query_set(name, dataset.d, n_queries, seed)
    true = true_answers(dataset, queries)
    lines = []
    for kind in kinds:
        errors, seconds, distinct, n_basis = [], [], [], None
        for _ in range(rounds):
            start = time.perf_counter()
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    synth = SmoothSynthesizer(epsilon=epsilon, delta=delta, candidates=kind, spread=spread)
                    synth.fit(frame, bounds=bounds)
            except SynthDPError as error:
                lines.append(f"| {name} | {kind} | refused: {error} |" + " |" * (len(SIGMAS) + 2))
                break
            synthetic = synth.sample()
            seconds.append(time.perf_counter() - start)
            report = synth.privacy_report(synthetic)  # its "output" entry describes this sample
            n_basis, distinct = report["parameters"]["n_basis"], distinct + [report["output"]["distinct_rows"]]
            answers = answer_queries(dataset.unit(synthetic), queries, SIGMAS)
            errors.append(worst_case_errors(true, answers, queries.alpha).relative)
        if errors:
            cells = " | ".join(f"{v:.3f}" for v in np.mean(errors, axis=0))
            lines.append(f"| {name} | {kind} | {n_basis} | {cells} | {np.mean(distinct):.0f} | {np.mean(seconds):.1f} |")
        print(lines[-1], flush=True)
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--delta", type=float, default=1e-10)
    parser.add_argument("--spread", type=float, default=0.0, help="tolerance of the mass-spreading LP (default 0: off)")
    parser.add_argument("--kinds", nargs="+", default=list(KINDS), choices=KINDS)
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--queries", type=int, default=2000)
    parser.add_argument("--query-seed", type=int, default=QUERY_SEED)
    parser.add_argument("--out-dir", type=Path, default=RESULTS_DIR, help="where the results file goes")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    header = ["| dataset | candidates | R | " + " | ".join(f"rel σ={s:g}" for s in SIGMAS) + " | distinct rows | fit+sample s |",
              "|---|---|---:|" + "---:|" * len(SIGMAS) + "---:|---:|"]
    rows = [line for name in args.datasets
            for line in run(name, args.kinds, args.epsilon, args.delta, args.spread, args.rounds, args.queries,
                            args.query_seed)]
    tag = f"eps{args.epsilon:g}_delta{args.delta:g}" + (f"_spread{args.spread:g}" if args.spread else "")
    out = args.out_dir / f"candidate_kinds_{tag}.md"
    out.write_text(
        f"# Candidate kinds at (ε, δ) = ({args.epsilon:g}, {args.delta:g}), spread {args.spread:g}\n\n"
        + generated_by(f"python experiments/candidate_kinds.py --epsilon {args.epsilon:g} --delta {args.delta:g} "
                       f"--spread {args.spread:g} --rounds {args.rounds} --queries {args.queries}")
        + f"; real private noise (OpenDP), {args.rounds} rounds, "
        f"{args.queries} queries, bounds = column min/max taken as public; mean worst-case relative error "
        f"over rounds; {time.perf_counter() - start:.0f} s in all.\n\n"
        + "\n".join(header + rows) + "\n", encoding="utf-8")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
