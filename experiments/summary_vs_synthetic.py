"""Answers from the summary against answers from the synthetic table of the same release.

Protocol of docs/mechanism.md §5 (random sums of 10 Gaussian kernels, sigma in
{2, 4, 6, 8, 10}, worst case over Q queries, epsilon = 1, delta = 0, synthdp's defaults),
on CRM, CTG, PKS and WDBC, and on the first d columns of PKS for d in {2, 5, 10, 20}.
In every round, for each setting:

1. ``SmoothSynthesizer(epsilon=1).fit(...)`` releases once; the synthetic table (n rows)
   and ``synth.summary()`` (the summary of that same release, what ``generate
   --summary-out`` saves) answer every query;
2. ``fit(..., synthesize=False)`` makes a summary-only release (what ``synthdp summarize``
   does: no candidate statistics, so the moments get that share of the budget);
3. the same-release summary is also evaluated with ``damping="jackson"`` (the paper's
   operator).

Diagnostics (not private): a summary built from the exact, noise-free moments (its error is
the truncation of the Chebyshev series plus quadrature), and the quadrature error of the
round-1 summary on a subset of queries, against an exact reference computed axis by axis
(a Gaussian kernel is a product of one-variable functions, so its Chebyshev coefficients
are products of 1-d coefficients, computed here with 64-node Gauss-Chebyshev rules).

Every summary of a setting has the same quadrature nodes, and answer(f) is
f(summary.nodes) @ summary.node_weights, so the kernel values at the nodes are computed
once per setting and applied to every summary's weights. The time per query is measured
separately on the public calls: ``Summary.answer`` with a vectorised callable (a chunk of
queries and all sigmas per call) and ``Summary.answer_many`` with one callable per query.

Bounds: each column's min and max in the data, *taken as public* (as in
defaults_vs_table3.py); a real release passes public bounds.

Usage::

    python experiments/summary_vs_synthetic.py                    # 3 rounds, 2000 queries, ~8 min
    python experiments/summary_vs_synthetic.py --queries 10000    # the paper's query count, ~4x longer
    python experiments/summary_vs_synthetic.py --seed 1           # reproducible (not private)

Q defaults to 2000, not the paper's 10 000, for every method alike: a summary answer costs
N = 8192 evaluations of f (against a few distinct rows for the synthetic table), and 10 000
queries x 5 widths x 8192 nodes x 10 kernels would take most of the time budget.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd
from common import (
    DATA_DIR,
    DATASETS,
    QUERY_SEED,
    RESULTS_DIR,
    Dataset,
    command_line,
    generated_by,
    load_dataset,
    log,
    query_set,
    write_json,
)

from synthdp import SmoothSynthesizer, Summary
from synthdp.study import (
    DEFAULT_NODES,
    SIGMAS,
    ChebyshevBasis,
    KernelQueries,
    answer_queries,
    to_unit,
    worst_case_errors,
)

DEFAULT_OUT = RESULTS_DIR / "summary_vs_synthetic.md"
PKS_DIMS = (2, 5, 10, 20)
CHUNK = 128  # queries per kernel evaluation at the nodes: N x CHUNK x J doubles at a time
METHODS = {
    "synthetic": "synthetic table, n rows (`generate`)",
    "summary": "summary of the same release (`generate --summary-out`)",
    "summary_only": "summary-only release (`summarize`: no candidate statistics, the moments get their budget)",
    "jackson": "same summary, `damping=\"jackson\"` (the paper's operator)",
    "exact_moments": "noise-free moments (not private): truncation + quadrature only",
}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="releases per setting (default 3)")
    parser.add_argument("--queries", type=int, default=2_000,
                        help="random queries per setting, the same for every method (default 2000; the paper: 10000)")
    parser.add_argument("--reference-queries", type=int, default=300,
                        help="queries checked against the exact axis-by-axis reference (default 300)")
    parser.add_argument("--timing-queries", type=int, default=256,
                        help="queries timed through Summary.answer (vectorised) and answer_many (default 256)")
    parser.add_argument("--seed", type=int, default=None, help="seed the releases (round r: seed + r): NOT private")
    parser.add_argument("--query-seed", type=int, default=QUERY_SEED)
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS)
    parser.add_argument("--pks-dims", nargs="*", type=int, default=list(PKS_DIMS))
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.queries < 1:
        parser.error("--rounds and --queries must be >= 1")
    return args


def kernel_values(points: np.ndarray, queries: KernelQueries, sigmas) -> np.ndarray:
    """f_q(x) for every point, width and query: shape (len(points), S, Q). Points in [-1, 1]^d."""
    centres = queries.centres.reshape(-1, queries.d)
    sq = (points**2).sum(axis=1)[:, None] + (centres**2).sum(axis=1)[None, :] - 2.0 * points @ centres.T
    np.maximum(sq, 0.0, out=sq)
    out = np.empty((len(points), len(sigmas), queries.n_queries))
    for s, sigma in enumerate(sigmas):
        kernels = np.exp(sq * (-0.5 / sigma**2)).reshape(len(points), queries.n_queries, queries.n_kernels)
        out[:, s, :] = np.einsum("nqj,qj->nq", kernels, queries.alpha)
    return out


def subset(queries: KernelQueries, start: int, stop: int) -> KernelQueries:
    return KernelQueries(queries.alpha[start:stop], queries.centres[start:stop])


def bulk_summary_answers(summaries: dict, queries: KernelQueries, lower, upper) -> dict:
    """Every summary's answers, shape (S, Q) each, from one evaluation of the kernels at the shared nodes."""
    first = next(iter(summaries.values()))
    nodes = first.nodes.to_numpy()
    for summary in summaries.values():  # same rule, same nodes: checked, not assumed
        assert np.array_equal(summary.nodes.to_numpy(), nodes)
    points = to_unit(nodes, lower, upper)
    weights = np.stack([summary.node_weights for summary in summaries.values()], axis=1)  # (N, V)
    answers = np.empty((len(SIGMAS), queries.n_queries, weights.shape[1]))

    def chunk(start: int) -> None:
        values = kernel_values(points, subset(queries, start, start + CHUNK), SIGMAS)  # (N, S, c)
        answers[:, start:start + CHUNK, :] = (values.reshape(len(points), -1).T @ weights).reshape(len(SIGMAS), -1, weights.shape[1])

    with ThreadPoolExecutor(max_workers=os.cpu_count()) as pool:  # numpy releases the GIL in exp and matmul
        list(pool.map(chunk, range(0, queries.n_queries, CHUNK)))
    return {key: answers[:, :, v] for v, key in enumerate(summaries)}


def time_answer(summary: Summary, queries: KernelQueries, lower, upper) -> tuple[float, np.ndarray]:
    """Seconds per (query, sigma) of Summary.answer with a vectorised callable, and its answers (S, Q)."""
    start = time.perf_counter()
    answers = np.empty((len(SIGMAS), queries.n_queries))
    for q0 in range(0, queries.n_queries, CHUNK):
        chunk = subset(queries, q0, q0 + CHUNK)

        def f(rows: pd.DataFrame, chunk=chunk) -> np.ndarray:
            return kernel_values(to_unit(rows, lower, upper), chunk, SIGMAS).reshape(len(rows), -1)

        answers[:, q0:q0 + chunk.n_queries] = summary.answer(f).reshape(len(SIGMAS), -1)
    return (time.perf_counter() - start) / (queries.n_queries * len(SIGMAS)), answers


def time_answer_many(summary: Summary, queries: KernelQueries, lower, upper, sigma: float) -> float:
    """Seconds per query of Summary.answer_many with one scalar callable per query."""
    def query(q: int):
        return lambda rows: kernel_values(to_unit(rows, lower, upper), subset(queries, q, q + 1), [sigma])[:, 0, 0]

    start = time.perf_counter()
    summary.answer_many([query(q) for q in range(queries.n_queries)])
    return (time.perf_counter() - start) / queries.n_queries


def time_overhead(summary: Summary, n_queries: int) -> float:
    """Seconds per query of answer_many when f costs nothing: the summary's own share of the time."""
    start = time.perf_counter()
    summary.answer_many([lambda rows: rows.iloc[:, 0]] * n_queries)
    return (time.perf_counter() - start) / n_queries


def reference_answers(summary: Summary, queries: KernelQueries) -> np.ndarray:
    """Exact truncated-series answers (damping "none"), axis by axis, shape (S, Q): no quadrature.

    The summary's [-1, 1] coordinates must be the queries' (same bounds).
    """
    nodes = np.cos(np.pi * (np.arange(64) + 0.5) / 64)
    degrees = np.arange(summary.max_degree + 1)
    # a_k = (2 - [k = 0]) / 64 sum_j g(x_j) cos(k theta_j): exact for these 1-d Gaussians to round-off.
    cosines = np.cos(np.outer(degrees, np.arccos(nodes))) * np.where(degrees == 0, 1.0, 2.0)[:, None] / 64
    indices, d = summary.basis_indices, summary.d
    out = np.empty((len(SIGMAS), queries.n_queries))
    for s, sigma in enumerate(SIGMAS):
        factors = np.exp(-(nodes - queries.centres[..., None]) ** 2 / (2 * sigma**2))  # (Q, J, d, 64)
        coefficients = factors @ cosines.T  # (Q, J, d, D + 1)
        constant = coefficients[..., 0].prod(axis=2)  # (Q, J)
        per_index = coefficients[:, :, np.arange(d)[None, :], indices].prod(axis=3)  # (Q, J, R)
        out[s] = np.einsum("qj,qj->q", queries.alpha, constant + per_index @ summary.noisy_moments)
    return out


def fit(frame: pd.DataFrame, bounds: dict, seed: int | None, synthesize: bool) -> SmoothSynthesizer:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return SmoothSynthesizer(epsilon=1.0, seed=seed).fit(frame, bounds=bounds, synthesize=synthesize)


def run_setting(label: str, dataset: Dataset, args: argparse.Namespace) -> dict:
    frame, bounds, lower, upper = dataset.frame, dataset.bounds, dataset.lower, dataset.upper
    n, d = frame.shape
    queries = query_set(label, d, args.queries, args.query_seed)
    real = dataset.unit(frame)
    true = answer_queries(real, queries, SIGMAS)
    rounds, summaries = [], {}
    for r in range(args.rounds):
        seed = None if args.seed is None else args.seed + r
        synth = fit(frame, bounds, seed, synthesize=True)
        start = time.perf_counter()
        synthetic = synth.sample()
        synthetic_answers = answer_queries(to_unit(synthetic, lower, upper), queries, SIGMAS)
        summary = synth.summary()
        rounds.append({
            "R": summary.n_basis, "max_degree": summary.max_degree, "quadrature": summary.quadrature,
            "distinct_rows": synth.privacy_report(synthetic)["output"]["distinct_rows"],
            "errors": {"synthetic": worst_case_errors(true, synthetic_answers, queries.alpha).to_dict()},
            "seconds_per_query": {"synthetic (answer_queries, deduplicated rows)":
                                  (time.perf_counter() - start) / (queries.n_queries * len(SIGMAS))},
        })
        summaries[r, "summary"] = summary
        summaries[r, "summary_only"] = fit(frame, bounds, None if seed is None else seed + 1000, synthesize=False).summary()
        summaries[r, "jackson"] = dataclasses.replace(summary, damping="jackson")
        summaries[r, "exact_moments"] = dataclasses.replace(
            summary, noisy_moments=ChebyshevBasis(summary.basis_indices).moments(real), report=None)
        if r == 0:
            timed, seconds = timings(summary, synth, queries, lower, upper, args)
            rounds[0]["seconds_per_query"].update(seconds)
    start = time.perf_counter()
    answers = bulk_summary_answers(summaries, queries, lower, upper)
    bulk = time.perf_counter() - start
    rounds[0]["seconds_per_query"]["summaries (bulk: kernels once at the shared nodes), per summary"] = \
        bulk / (len(summaries) * queries.n_queries * len(SIGMAS))
    log(f"{label}: {len(summaries)} summaries answered {queries.n_queries} queries x {len(SIGMAS)} sigmas in {bulk:.1f} s")
    for (r, name), a in answers.items():
        rounds[r]["errors"][name] = worst_case_errors(true, a, queries.alpha).to_dict()
    assert np.allclose(timed, answers[0, "summary"][:, :timed.shape[1]], rtol=1e-9, atol=1e-12)
    check = subset(queries, 0, min(queries.n_queries, args.reference_queries))
    assert np.allclose(summaries[0, "summary"].domain.lower, lower) and np.allclose(summaries[0, "summary"].domain.upper, upper)
    exact = reference_answers(summaries[0, "summary"], check)
    difference = np.abs(exact - answers[0, "summary"][:, :check.n_queries]) / check.alpha.sum(axis=1)
    rounds[0]["quadrature_error_scaled"] = difference.max(axis=1).tolist()
    for r, info in enumerate(rounds):
        rel = ", ".join(f"{name} {np.max(e['relative']):.3g}" for name, e in info["errors"].items())
        log(f"{label}: round {r + 1}/{args.rounds}: R={info['R']} ({info['quadrature']}); worst rel: {rel}")
    return {"setting": label, "n": n, "d": d, "rounds": rounds}


def timings(summary: Summary, synth: SmoothSynthesizer, queries: KernelQueries, lower, upper,
            args: argparse.Namespace) -> tuple[np.ndarray, dict]:
    """Seconds per (query, sigma) of the public calls, and the answers of the timed Summary.answer."""
    timing = subset(queries, 0, min(queries.n_queries, args.timing_queries))
    per_query, timed = time_answer(summary, timing, lower, upper)
    start = time.perf_counter()
    answer_queries(to_unit(synth.sample(), lower, upper), queries, SIGMAS, deduplicate=False)
    all_rows = (time.perf_counter() - start) / (queries.n_queries * len(SIGMAS))
    return timed, {
        "synthetic (answer_queries, all n rows)": all_rows,
        "Summary.answer (vectorised, 128 queries x 5 sigmas per call)": per_query,
        "Summary.answer_many (one callable per query)": time_answer_many(summary, timing, lower, upper, SIGMAS[1]),
        "Summary.answer_many overhead (f returns a column)": time_overhead(summary, timing.n_queries),
    }


def settings(args: argparse.Namespace):
    for name in args.datasets:
        yield name.upper(), load_dataset(name, args.data_dir)
    for d in args.pks_dims:
        yield f"PKS d={d}", load_dataset("pks", args.data_dir, columns=d)


def mean_errors(result: dict, method: str, key: str) -> np.ndarray:
    return np.mean([info["errors"][method][key] for info in result["rounds"]], axis=0)


def markdown(results: list[dict], args: argparse.Namespace, total: float, command: str) -> str:
    sigma_header = " | ".join(f"σ={s:g}" for s in SIGMAS)
    lines = [
        "# Summary vs synthetic table (same release)",
        "",
        generated_by(command) + f"; total run time {total / 60:.1f} min.",
        "",
        f"Setting: ε = 1, δ = 0, every other option at synthdp's default (copula candidates, automatic R). "
        f"{args.rounds} rounds per setting ({'seed ' + str(args.seed) + ' + round: NOT private' if args.seed is not None else 'real private noise, OpenDP'}), "
        f"{args.queries} random queries per setting, the same for every method (sums of 10 Gaussian kernels, "
        "docs/mechanism.md §5; the paper uses 10 000, fewer here because each summary answer costs 8192 evaluations "
        "of f), worst case over the queries, averaged over rounds. Errors are for f / Σα (queries in [0, 1]) and relative. Summaries use the "
        f"default quadrature ({DEFAULT_NODES} nodes: Gauss–Chebyshev product rule for d = 2, "
        "scrambled Sobol' points otherwise) and the default `damping=\"none\"` unless stated.",
        "",
        "Bounds: each column's min and max in the data, *taken as public*; a real release passes public bounds.",
        "",
        "Methods:",
        "",
    ]
    lines += [f"- **{name}**: {text}" for name, text in METHODS.items()]
    lines += ["", "Reading the tables: where **summary** ≈ **exact_moments**, the summary's error is the truncation "
              "of the Chebyshev series to the released basis (R lowest-degree moments, chosen by the default rule "
              "for the LP), not the noise; the quadrature error below is far smaller. **jackson** answers with the "
              "constant term alone when the highest released degree t is below ceil((K + 3)/2) = 4 (synthdp.summaries.smooth).",
              "", "## Worst-case errors", ""]
    for result in results:
        rounds = result["rounds"]
        first = rounds[0]
        lines += [
            f"### {result['setting']} (n = {result['n']}, d = {result['d']}; R = {first['R']} moments, "
            f"degree ≤ {first['max_degree']}; {first['quadrature']})",
            "",
            f"| method | abs σ: {sigma_header} | rel σ: {sigma_header} |",
            "|---|" + "---:|" * (2 * len(SIGMAS)),
        ]
        for method in METHODS:
            absolute = mean_errors(result, method, "absolute_scaled")
            relative = mean_errors(result, method, "relative")
            lines.append(f"| {method} | " + " | ".join(f"{v:.4f}" for v in absolute) + " | "
                         + " | ".join(f"{v:.4f}" for v in relative) + " |")
        quadrature = ", ".join(f"{v:.1e}" for v in first["quadrature_error_scaled"])
        lines += ["", f"Quadrature error of the round-1 summary (max over {args.reference_queries} queries, f / Σα, "
                      f"per σ): {quadrature}. Distinct synthetic rows: "
                      f"{min(i['distinct_rows'] for i in rounds)}–{max(i['distinct_rows'] for i in rounds)} of {result['n']}.", ""]
    lines += ["## Time per query (seconds per query and σ, round 1)", "",
              "| setting | " + " | ".join(results[0]["rounds"][0]["seconds_per_query"]) + " |",
              "|---|" + "---:|" * len(results[0]["rounds"][0]["seconds_per_query"])]
    for result in results:
        times = result["rounds"][0]["seconds_per_query"]
        lines.append(f"| {result['setting']} | " + " | ".join(f"{v:.2e}" for v in times.values()) + " |")
    lines += ["", f"`Summary.answer` and `answer_many` (σ = {SIGMAS[1]:g} only) were timed on the first "
                  f"{args.timing_queries} queries; the synthetic-table answers use "
                  "`synthdp.evaluation.queries.answer_queries` (multi-threaded, and by default it merges the few distinct "
                  "synthetic rows first).", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    command = command_line("summary_vs_synthetic.py", argv)
    start = time.perf_counter()
    results = []
    for label, dataset in settings(args):
        log(f"{label}: n={dataset.n} d={dataset.d}")
        results.append(run_setting(label, dataset, args))
    total = time.perf_counter() - start
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(markdown(results, args, total, command), encoding="utf-8")
    write_json(args.out.with_suffix(".json"),
               {"command": command, "total_seconds": total, "sigmas": list(SIGMAS), "methods": METHODS, "results": results})
    log(f"wrote {args.out} and {args.out.with_suffix('.json')} in {total / 60:.1f} min")
    return 0


if __name__ == "__main__":
    sys.exit(main())
