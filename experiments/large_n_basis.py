"""The automatic R's cap at large n: the paper's R against MAX_AUTO_N_BASIS (issue 22).

    python experiments/large_n_basis.py [--rounds 3] [--queries 500] [--levels 1,1e-10 ...]
                                        [--tables pks-like:200000,generated:1000000] [--suffix S]
                                        [--variants default,paper,cap:200] [--out PATH.md]

The paper's R grows with n (``synthdp.pipeline.plan.paper_n_basis``) and the l1 fit's cost
about as R^2.5, so the default caps the automatic R at ``MAX_AUTO_N_BASIS`` (still at least
2d). The cap binds only on tables larger than the benchmark ones, so it is measured on two
larger tables, both in the Tables 3-6 protocol (worst relative error of Gaussian-kernel
queries, min/max bounds taken as public, each round's noise seeded 1000 + r so every variant
sees the same draws):

* ``pks-like``: 200 000 rows drawn from PKS (its 20 columns) by a smoothed bootstrap (each
  drawn row plus normal noise of 0.1 of each column's standard deviation, clipped to PKS's
  bounds): PKS's dependence at a size where the paper's R is 656;
* ``generated``: the 10 independent columns of ``benchmarks/command_speed.py`` (normal,
  exponential, lognormal, integer, ...), 1 000 000 rows: the paper's R is 719.

Variants (``--variants``): ``default`` (the cap, R = 400), ``paper's R`` (the automatic R before
the cap: the paper's R raised to 2d, passed as an explicit ``n_basis``) and ``cap:N`` (the
paper's R at most N, at least 2d: a lower cap, measured before adopting one). Reported per table and
level: R, the fit's wall time and its LP share, the worst relative error per sigma, the mean
absolute correlation error and the strong-pair ratio (synthetic over real mean |r| of the
pairs with real |r| > 0.5). Not a unit test; writes experiments/results/large_n_basis{S}.{md,json}
(``--out``: another .md, its .json beside it).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from common import (
    RESULTS_DIR,
    SIGMAS,
    Dataset,
    command_line,
    generated_by,
    log,
    pks_like,
    query_set,
    write_json,
)

from synthdp import SmoothSynthesizer, SynthConfig
from synthdp.study import (
    MAX_AUTO_N_BASIS,
    answer_queries,
    auto_n_basis,
    correlation_error,
    paper_n_basis,
    strong_pairs,
    worst_case_errors,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

OUT = RESULTS_DIR / "large_n_basis"


def generated(rows: int, seed: int = 0) -> Dataset:
    """The 10 independent columns of benchmarks/command_speed.py, ``rows`` rows."""
    import tempfile

    from command_speed import make_table

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "table.csv"
        make_table(path, rows, seed)
        table = pd.read_csv(path)
    return Dataset("generated", table, table.min().to_numpy(float), table.max().to_numpy(float))


def run(dataset: Dataset, config: SynthConfig, queries, true: np.ndarray) -> dict:
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth = SmoothSynthesizer.from_config(config).fit(dataset.frame, bounds=dataset.bounds)
        table = synth.sample()
    seconds = time.perf_counter() - start
    report = synth.privacy_report()
    answers = answer_queries(dataset.unit(table), queries, SIGMAS)
    errors = worst_case_errors(true, answers, queries.alpha).relative
    pairs = strong_pairs(dataset.frame, table)
    return {
        "R": report["parameters"]["n_basis"] + report["parameters"]["skipped_pairs"],
        "seconds": seconds,
        "lp_seconds": report["timings_seconds"].get("LP fit", 0.0) + report["timings_seconds"].get("LP tilt", 0.0),
        "lp_status": report["lp"]["status"],
        "relative": errors.tolist(),
        "correlation_mean": correlation_error(dataset.frame, table)["mean"],
        "strong_pair_ratio": pairs["ratio"],
    }


def _mean_or_na(values: list) -> str:
    """The mean to 3 decimals, or n/a (a table without strong pairs)."""
    return "n/a" if any(v is None for v in values) else f"{np.mean(values):.3f}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--levels", nargs="+", default=["1,1e-10"])
    parser.add_argument("--tables", default="pks-like:200000,generated:1000000", help="NAME:ROWS,...")
    parser.add_argument("--suffix", default="", help="results file large_n_basis{SUFFIX}.md")
    parser.add_argument("--out", type=Path, default=None,
                        help="results file (.md, its .json beside it); default experiments/results/large_n_basis{SUFFIX}.md")
    parser.add_argument("--variants", default="default,paper",
                        help="comma-separated: default (the automatic R), paper (the paper's R, uncapped), "
                             "cap:N (the paper's R at most N, at least 2d); default 'default,paper'")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    makers = {"pks-like": pks_like, "generated": generated}
    results: dict = {}
    sections = []
    for spec in args.tables.split(","):
        name, rows = spec.split(":")
        dataset = makers[name](int(rows))
        queries = query_set(name, dataset.d, args.queries)
        log(f"{name}: {dataset.n} x {dataset.d}, true answers")
        true = answer_queries(dataset.unit(dataset.frame), queries, SIGMAS)
        for level in args.levels:
            epsilon, delta = (float(v) for v in level.split(","))
            paper = max(paper_n_basis(dataset.n, dataset.d, 4, delta), 2 * dataset.d)
            variants = {}
            for variant in args.variants.split(","):
                if variant == "default":
                    variants[f"default (R at most {MAX_AUTO_N_BASIS})"] = {}
                elif variant == "paper":
                    variants["paper's R (before the cap)"] = {"n_basis": paper}
                elif variant.startswith("cap:"):
                    cap = int(variant.split(":")[1])
                    variants[f"R at most {cap}"] = {"n_basis": max(min(paper, cap), 2 * dataset.d)}
                else:
                    parser.error(f"--variants: unknown variant {variant!r}")
            rows_out = []
            for label, extra in variants.items():
                runs = []
                for r in range(args.rounds):
                    config = SynthConfig(epsilon=epsilon, delta=delta, seed=1000 + r, **extra)
                    runs.append(run(dataset, config, queries, true))
                    log(f"{name} {level} {label} round {r}: R {runs[-1]['R']}, {runs[-1]['seconds']:.1f} s, "
                        f"rel {np.round(runs[-1]['relative'], 4).tolist()}")
                results.setdefault(name, {}).setdefault(level, {})[label] = runs
                relative = np.mean([run_["relative"] for run_ in runs], axis=0)
                spread = np.std([run_["relative"] for run_ in runs], axis=0)
                rows_out.append(
                    f"| {label} | {runs[0]['R']} | {statistics.median(r_['seconds'] for r_ in runs):.1f} | "
                    f"{statistics.median(r_['lp_seconds'] for r_ in runs):.1f} | "
                    + " | ".join(f"{m:.4f} ± {s:.4f}" for m, s in zip(relative, spread))
                    + f" | {np.mean([r_['correlation_mean'] for r_ in runs]):.4f} | "
                    f"{_mean_or_na([r_['strong_pair_ratio'] for r_ in runs])} |")
            header = ("| variant | R | fit + sample s (median) | LP s (median) | "
                      + " | ".join(f"rel σ={s:g}" for s in SIGMAS) + " | mean corr. error | strong-pair ratio |")
            sections.append(f"## {name} ({dataset.n} x {dataset.d}), (ε, δ) = ({epsilon:g}, {delta:g})\n\n"
                            f"Automatic R: {auto_n_basis(dataset.n, dataset.d, 4, delta)} (the paper's: {paper}).\n\n"
                            + header + "\n|" + "---|" * (header.count("|") - 1) + "\n" + "\n".join(rows_out))
    minutes = (time.perf_counter() - started) / 60
    text = (f"# The automatic R's cap at large n\n\n{generated_by(command_line('large_n_basis.py', argv))}; "
            f"{minutes:.1f} min. {args.rounds} rounds, {args.queries} queries; error columns: mean ± sd over "
            "rounds of the worst relative error; round r of every variant uses the seeded noise stream 1000 + r "
            "(not private). Bounds: each column's min and max, taken as public (the Tables 3-6 protocol).\n\n"
            + "\n\n".join(sections) + "\n")
    out = args.out if args.out is not None else OUT.with_name(OUT.name + args.suffix)
    out.with_suffix(".md").write_text(text, encoding="utf-8")
    write_json(out.with_suffix(".json"), results)
    print(text)


if __name__ == "__main__":
    main()
