"""Worst-case error against epsilon: where synthdp reaches the paper's numbers and the sampling floor.

For each dataset, each delta of ``--delta`` and each epsilon of ``--eps`` this runs (through
``harness.py``, with its cache) synthdp's default (the package defaults at run time with
only epsilon and delta set), the paper-constant variant (PCA candidates, one release per
sigma with the paper's R), the DP Gaussian baseline and, with ``--methods``, the peers
(delta > 0 only), and evaluates them on the protocol of docs/mechanism.md §5. The
bootstrap of the real rows (not private) is the sampling floor, a flat line; the paper's
published number at epsilon = 1 (Table 3 for delta = 0, Table 4 for delta > 0) is a marker.

For every sigma the report states at which epsilon synthdp's default first reaches the
published number and the floor: interpolated linearly in log(error) against log(epsilon)
between the two grid points around the crossing, or "not reached by epsilon = max".

Writes ``experiments/results/eps_sweep.md``, ``eps_sweep.json`` and ``eps_sweep_{dataset}.png``.

``--peers-from-record [JSON]`` runs no peer: a peer run (a peer at one epsilon and delta on a
dataset) that the cache does not answer whole is taken, as scored, from the recorded results
(default: the committed ``experiments/results/eps_sweep.json``, read before anything is
written), marked ``"from_record": "<command> on <date>"`` in the JSON written, and the markdown
says which and from which run. ``--rounds`` (the peers' rounds too), ``--queries`` and
``--query-seed`` must be the record's and every dataset in it, or it refuses in one line; a
requested peer run the record lacks is refused too (the committed sweep has no peer runs: it
ran synthdp's default, the paper-constant variant and the DP Gaussian only).

Usage::

    python experiments/eps_sweep.py                                    # 5 rounds, 10 000 queries
    python experiments/eps_sweep.py --datasets ctg --delta 1e-10 --rounds 2 --queries 2000
    python experiments/eps_sweep.py --rounds 3 --queries 2000 --peers-from-record   # re-render, peer runs as recorded
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from common import (  # noqa: E402
    BOUNDS_NOTE,
    DATA_DIR,
    DATASETS,
    QUERY_SEED,
    RESULTS_DIR,
    Record,
    add_peers_from_record,
    command_line,
    fmt,
    generated_by,
    load_dataset,
    log,
    query_set,
    read_record,
    record_note,
    record_path,
    true_answers,
    write_json,
)
from harness import (  # noqa: E402
    LABELS,
    PEER_METHODS,
    RunOptions,
    Setting,
    default_config,
    non_default_keys,
    peer_result_from_record,
    run_rounds,
)
from published import PAPER_TABLES, published_table  # noqa: E402
from report import FULL_QUERIES, crossing, estimate_seconds, mean_errors  # noqa: E402

from synthdp.study import SIGMAS  # noqa: E402

EPSILONS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0)
DELTAS = (0.0, 1e-10)
SWEPT = ("synthdp-default", "paper-constant", "dp-gaussian", *PEER_METHODS)
DEFAULT_ROUNDS = 5


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS)
    parser.add_argument("--eps", nargs="+", type=float, default=list(EPSILONS))
    parser.add_argument("--delta", nargs="+", type=float, default=list(DELTAS))
    parser.add_argument("--methods", nargs="+", default=list(SWEPT[:3]), choices=SWEPT,
                        help="swept methods (default: synthdp default, paper-constant, DP Gaussian; peers optional)")
    parser.add_argument("--rounds", type=int, default=DEFAULT_ROUNDS)
    parser.add_argument("--queries", type=int, default=FULL_QUERIES)
    parser.add_argument("--query-seed", type=int, default=QUERY_SEED)
    parser.add_argument("--seed", type=int, default=None, help="seed synthdp's noise (NOT private)")
    parser.add_argument("--no-new-peer-runs", action="store_true", help="use cached peer runs only")
    add_peers_from_record(parser, "eps_sweep.json")
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR)
    parser.add_argument("--out-dir", type=Path, default=RESULTS_DIR)
    parser.add_argument("--n-jobs", type=int, default=None)
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.queries < 1 or min(args.eps) <= 0 or not all(0 <= d < 1 for d in args.delta):
        parser.error("need --rounds, --queries >= 1, every epsilon > 0 and every delta in [0, 1)")
    args.eps = sorted(set(args.eps))
    args.peers_from_record = record_path(args.peers_from_record, RESULTS_DIR / "eps_sweep.json")
    return args


def check_record(record: Record, args: argparse.Namespace) -> None:
    """Refuse a record whose peer runs were scored otherwise than this sweep would score them."""
    recorded = record.content["settings"]
    record.require("--rounds", args.rounds, recorded["rounds"])
    record.require("--queries", args.queries, recorded["queries"])
    record.require("--query-seed", args.query_seed, recorded["query_seed"])
    record.require_within("--datasets", args.datasets, [result["dataset"] for result in record.content["results"]])
    peers = [m for m in args.methods if m in PEER_METHODS]
    record.require_within("peer runs", [f"{m}|{e:g}|{d:g} on {name}" for name in args.datasets for d in args.delta
                                        if d > 0 for e in args.eps for m in peers],
                          [f"{key} on {r['dataset']}" for r in record.content["results"] for key in r["runs"]
                           if key.split("|")[0] in PEER_METHODS])


def run_dataset(name: str, args: argparse.Namespace, options: RunOptions, record: Record | None = None) -> dict:
    dataset = load_dataset(name, args.data_dir)
    queries = query_set(name, dataset.d, args.queries, args.query_seed)
    true = true_answers(dataset, queries, args.n_jobs)
    floor = run_rounds("bootstrap", dataset, Setting(1.0, 0.0), args.rounds, options, queries, true)
    runs = {}
    for delta in args.delta:
        for epsilon in args.eps:
            for method in args.methods:
                key = f"{method}|{epsilon:g}|{delta:g}"
                runs[key] = run_rounds(method, dataset, Setting(epsilon, delta), args.rounds, options, queries, true)
                if record is not None and method in PEER_METHODS:
                    recorded = next(r["runs"] for r in record.content["results"] if r["dataset"] == name)
                    runs[key] = peer_result_from_record(runs[key], recorded.get(key), record,
                                                        f"{method} run at ε = {epsilon:g}, δ = {delta:g} on {name}")
    return {"dataset": name, "n": dataset.n, "d": dataset.d, "bootstrap": floor, "runs": runs}


def curve(result: dict, method: str, delta: float, epsilons: list[float], sigma_index: int) -> np.ndarray:
    """Mean relative error per epsilon (NaN where the method has no rounds)."""
    values = []
    for epsilon in epsilons:
        run = result["runs"].get(f"{method}|{epsilon:g}|{delta:g}")
        values.append(mean_errors(run)[sigma_index] if run and run["rounds"] else np.nan)
    return np.array(values)


def published(name: str, delta: float) -> list[float] | None:
    table = published_table(1.0, delta, "pca")
    return PAPER_TABLES[table][name]["rel"] if table else None


def plot(result: dict, args: argparse.Namespace, path: Path) -> None:
    fig, axes = plt.subplots(1, len(SIGMAS), figsize=(4 * len(SIGMAS), 4), sharex=True)
    floor = mean_errors(result["bootstrap"])
    for s, (ax, sigma) in enumerate(zip(axes, SIGMAS)):
        for m, method in enumerate(args.methods):
            for delta in args.delta:
                ax.plot(args.eps, curve(result, method, delta, args.eps, s), marker="o", color=f"C{m}",
                        linestyle="-" if delta == 0 else "--", label=f"{LABELS[method]}, δ={delta:g}")
        ax.axhline(floor[s], color="grey", linestyle=":", label="bootstrap floor")
        for delta in args.delta:
            paper = published(result["dataset"], delta)
            if paper:
                ax.plot([1.0], [paper[s]], "k*" if delta == 0 else "kX", markersize=10,
                        label=f"paper Table {published_table(1.0, delta, 'pca')}")
        ax.set(xscale="log", yscale="log", xlabel="ε", title=f"σ = {sigma:g}")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("worst-case relative error")
    axes[0].legend(fontsize=6)
    fig.suptitle(f"{result['dataset'].upper()} (n = {result['n']}, d = {result['d']}): error against ε")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def projected_minutes(results: list[dict], queries: int) -> float:
    """Minutes of this sweep at DEFAULT_ROUNDS rounds and 10 000 queries, from the measured runs."""
    return sum(sum(estimate_seconds({**r["runs"], "bootstrap": r["bootstrap"]}, queries, DEFAULT_ROUNDS).values())
               for r in results) / 60


def peers_note(results: list[dict]) -> str:
    """Which peer runs were taken from a recorded sweep (``--peers-from-record``), "" when none was."""
    peers = [(f"{LABELS[key.split('|')[0]]} at ε = {key.split('|')[1]}, δ = {key.split('|')[2]} on "
              f"{r['dataset'].upper()}", run) for r in results for key, run in r["runs"].items()
             if key.split("|")[0] in PEER_METHODS and run["status"] != "n/a"]
    return record_note([(label, run["from_record"]) for label, run in peers if run.get("from_record")], len(peers))


def markdown(results: list[dict], args: argparse.Namespace, command: str, total: float) -> str:
    eps_header = " | ".join(f"ε={e:g}" for e in args.eps)
    note = peers_note(results)
    projected = projected_minutes(results, args.queries)
    lines = [
        "# Worst-case relative error against ε",
        "",
        generated_by(command) + f"; {total / 60:.1f} min with the cache. "
        f"**{args.rounds} rounds, {args.queries} queries** per dataset (query seed {args.query_seed}); mean over "
        f"rounds of the worst case over the queries. Projected time at {DEFAULT_ROUNDS} rounds and {FULL_QUERIES} "
        f"queries: {projected:.0f} min.",
        "",
        *([note, ""] if note else []),
        "synthdp default: `SynthConfig` with only ε and δ set, every other key at the package's default when "
        f"this ran (keys differing from `SynthConfig()` at ε = 1, δ = 0: "
        f"`{non_default_keys(default_config(Setting(1.0, 0.0)))}`), one release for every σ. "
        "paper-constant: PCA candidates, one release per σ with the paper's R (see paper_tables.py). "
        "Published: the paper's Table 3 (δ = 0) or Table 4 (δ = 1e-10) relative error at ε = 1. Floor: the "
        "bootstrap of the real rows (not private, independent of ε). 'reaches' = the smallest ε at which "
        "synthdp's default has at most that error, interpolated in log–log between grid points. It is the *first* "
        "crossing of a mean over few rounds: where the curve is flat and noisy, a crossing can be luck (read the "
        "whole row).",
        "",
        BOUNDS_NOTE,
        "",
    ]
    for result in results:
        name = result["dataset"]
        floor = mean_errors(result["bootstrap"])
        lines += [f"## {name.upper()} (n = {result['n']}, d = {result['d']})", "", f"![{name}](eps_sweep_{name}.png)", ""]
        for delta in args.delta:
            paper = published(name, delta)
            lines += [f"### δ = {delta:g}", "",
                      f"| method | σ | {eps_header} | published (ε=1) | floor | default reaches published at ε | "
                      "default reaches floor at ε |",
                      "|---|---|" + "---:|" * (len(args.eps) + 2) + "---|---|"]
            for method in args.methods:
                for s, sigma in enumerate(SIGMAS):
                    values = curve(result, method, delta, args.eps, s)
                    cells = ["—" if np.isnan(v) else c for v, c in zip(values, fmt(np.nan_to_num(values), 4))]
                    reached = ["", ""]
                    if method == "synthdp-default":
                        reached = [crossing(args.eps, values, paper[s]) if paper else "—",
                                   crossing(args.eps, values, floor[s])]
                    lines.append(f"| {LABELS[method]} | {sigma:g} | " + " | ".join(cells)
                                 + f" | {fmt([paper[s]])[0] if paper else '—'} | {floor[s]:.4f} | "
                                 + " | ".join(reached) + " |")
            failed = {k: v for k, v in result["runs"].items() if v["status"] != "ok" and k.endswith(f"|{delta:g}")}
            lines += [""] + [f"- {k.split('|')[0]} at ε = {k.split('|')[1]}: {v['status']}: {v['message'][:200]}"
                             for k, v in failed.items()] + [""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    command = command_line("eps_sweep.py", argv)
    record = read_record(args.peers_from_record) if args.peers_from_record else None  # before anything is written
    if record is not None:
        check_record(record, args)
    options = RunOptions(queries=args.queries, query_seed=args.query_seed, seed=args.seed,
                         new_peer_runs=not (args.no_new_peer_runs or args.peers_from_record), n_jobs=args.n_jobs)
    start = time.perf_counter()
    results = [run_dataset(name, args, options, record) for name in args.datasets]
    total = time.perf_counter() - start
    args.out_dir.mkdir(parents=True, exist_ok=True)
    for result in results:
        plot(result, args, args.out_dir / f"eps_sweep_{result['dataset']}.png")
    out = args.out_dir / "eps_sweep.md"
    out.write_text(markdown(results, args, command, total), encoding="utf-8")
    write_json(out.with_suffix(".json"), {"command": command, "total_seconds": total, "sigmas": list(SIGMAS),
                                          "settings": vars(args), "results": results})
    log(f"wrote {out} (+ .json, .png) in {total / 60:.1f} min; at {DEFAULT_ROUNDS} rounds and {FULL_QUERIES} queries "
        f"it would take about {projected_minutes(results, args.queries):.0f} min")
    return 0


if __name__ == "__main__":
    sys.exit(main())
