"""Reproduce the paper's Table 3, 4, 5 or 6 with synthdp, baselines and peers side by side.

Tables 3 and 4: PCA candidates at epsilon = 1 and (epsilon, delta) = (1, 1e-10); Tables 5 and
6: hypercube candidates at the same settings. On CRM, CTG, PKS and WDBC (data/; PAM has
no data) with the protocol of docs/mechanism.md §5: worst case over Q random sums of
10 Gaussian kernels, sigma in {2, 4, 6, 8, 10}, mean over rounds. Rows (``harness.py``):
the paper's published numbers, the paper-constant variant (one release per sigma with the
paper's R), synthdp's default (one release for all sigma; the package defaults at run time),
the bootstrap floor, the DP Gaussian baseline and the peers (smartnoise-synth MST and AIM,
OpenDP dp.mbi MST and AIM; only where delta > 0). Each row gives the worst-case relative
error, the absolute error of f / sum(alpha) (queries in [0, 1], the paper's apparent scale)
and of f as written, the run time, and utility beyond smooth queries: distinct rows,
per-column Kolmogorov-Smirnov distance, pairwise correlation error and, on PKS, the R^2 of
a model trained on synthetic rows and tested on real rows (total_UPDRS, motor_UPDRS dropped).

Writes ``experiments/results/table{N}.md``, ``table{N}.json`` and ``table{N}_{dataset}.png``
(``--out-dir``). Finished runs are cached (``experiments/results/cache/``, see harness.py):
Tables 3 and 5 share their epsilon = 1 baselines and peers, 4 and 6 their (1, 1e-10) ones,
and a re-run only evaluates what is missing.

``--no-new-peer-runs`` first seeds the cache with the peer rows of the committed
``experiments/results/table{N}.json`` (``harness.import_committed_results``: every round of
smartnoise-synth MST/AIM and OpenDP dp.mbi MST/AIM, errors, timings, utility, recorded timeouts;
runs already in the cache win), so a fresh checkout, whose cache is empty and whose peers may
not be installed, re-renders the table with the peers' rows as committed and re-runs only
synthdp's rows and the baselines (never imported: they are cheap and follow the code).

``--peers-from-record [JSON]`` also runs no peer, and leaves the cache alone: a peer row (a
peer on a dataset) that the cache does not answer whole is taken, as scored, from the recorded
results (default: the committed ``experiments/results/table{N}.json``, read before anything is
written), marked ``"from_record": "<command> on <date>"`` in the JSON written (so a later
re-render with the option takes it again, naming the same run), and the markdown says which
rows and from which run. The peers' scores depend on the query set and on their rounds, so
``--queries``, ``--query-seed`` and the peers' rounds (``--peer-rounds``, else ``--rounds``) must
be the record's, (epsilon, delta) the record's and every dataset in it; otherwise it refuses in
one line. synthdp's rows and the baselines are computed as always.

Usage::

    python experiments/paper_tables.py --table 3                       # the full protocol (20 rounds)
    python experiments/paper_tables.py --table 4 --rounds 2 --peer-rounds 1
    python experiments/paper_tables.py --table 4 --methods synthdp-default bootstrap --datasets ctg
    python experiments/paper_tables.py --table 4 --no-new-peer-runs --out-dir /tmp/t  # peers as committed
    python experiments/paper_tables.py --table 4 --peers-from-record             # re-render, peers as recorded
    python experiments/paper_tables.py --table 4 --rounds 1 --peer-rounds 20 --methods bootstrap \\
        smartnoise-mst smartnoise-aim opendp-mst opendp-aim --peers-from-record --out-dir /tmp/t  # a quick look
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
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
    METHODS,
    PAPER_PINS,
    PEER_METHODS,
    PEER_TIMEOUTS,
    RunOptions,
    Setting,
    default_config,
    import_committed_results,
    import_peers_smoke,
    non_default_keys,
    paper_config,
    peer_result_from_record,
    run_rounds,
)
from published import PAPER_TABLES, SETTINGS  # noqa: E402
from report import (  # noqa: E402
    ERROR_KINDS,
    FULL_QUERIES,
    FULL_ROUNDS,
    UTILITY_HEADER,
    estimate_seconds,
    mean_errors,
    method_rows,
    plot_errors,
)

from synthdp.study import SIGMAS  # noqa: E402


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--table", type=int, required=True, choices=sorted(SETTINGS))
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS)
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    parser.add_argument("--rounds", type=int, default=FULL_ROUNDS, help="rounds per method (default 20, the paper's)")
    parser.add_argument("--peer-rounds", type=int, default=None, help="rounds of the peers (default: --rounds)")
    parser.add_argument("--queries", type=int, default=FULL_QUERIES, help="random queries per dataset (default 10000)")
    parser.add_argument("--query-seed", type=int, default=QUERY_SEED)
    parser.add_argument("--seed", type=int, default=None,
                        help="seed synthdp's noise (reproducible but NOT private); default: real OpenDP noise")
    parser.add_argument("--no-new-peer-runs", action="store_true",
                        help="use cached peer runs only, the cache first seeded with the peer rows of the "
                             "committed experiments/results/table{N}.json")
    add_peers_from_record(parser, "table{N}.json")
    parser.add_argument("--retry-failed", action="store_true", help="re-run cached failures (timeouts, errors)")
    parser.add_argument("--peer-timeout", type=float, default=None,
                        help=f"seconds before a peer run is killed (default {PEER_TIMEOUTS})")
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR)
    parser.add_argument("--out-dir", type=Path, default=RESULTS_DIR)
    parser.add_argument("--n-jobs", type=int, default=None, help="threads for the query evaluation")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.queries < 1 or (args.peer_rounds is not None and args.peer_rounds < 1):
        parser.error("--rounds, --peer-rounds and --queries must be >= 1")
    args.peers_from_record = record_path(args.peers_from_record, RESULTS_DIR / f"table{args.table}.json")
    return args


def run_options(args: argparse.Namespace) -> RunOptions:
    timeouts = {m: args.peer_timeout for m in PEER_METHODS} if args.peer_timeout else dict(PEER_TIMEOUTS)
    return RunOptions(queries=args.queries, query_seed=args.query_seed, seed=args.seed,
                      new_peer_runs=not (args.no_new_peer_runs or args.peers_from_record),
                      retry_failed=args.retry_failed,
                      peer_timeouts=timeouts, n_jobs=args.n_jobs)


def check_record(record: Record, args: argparse.Namespace, setting: Setting) -> None:
    """Refuse a record whose peer rows were scored otherwise than this run would score them."""
    recorded = record.content["settings"]
    record.require("--queries", args.queries, recorded["queries"])
    record.require("--query-seed", args.query_seed, recorded["query_seed"])
    record.require("the peers' rounds (--peer-rounds, else --rounds)", args.peer_rounds or args.rounds,
                   recorded.get("peer_rounds") or recorded["rounds"])
    record.require("(epsilon, delta)", (setting.epsilon, setting.delta),
                   (record.content["setting"]["epsilon"], record.content["setting"]["delta"]))
    record.require_within("--datasets", args.datasets, [result["dataset"] for result in record.content["results"]])
    peers = [m for m in args.methods if m in PEER_METHODS] if setting.delta > 0 else []
    record.require_within("peer rows", [f"{m} on {name}" for name in args.datasets for m in peers],
                          [f"{m} on {r['dataset']}" for r in record.content["results"] for m in r["methods"]])


def run_dataset(dataset, setting: Setting, args: argparse.Namespace, options: RunOptions,
                record: Record | None = None) -> dict:
    start = time.perf_counter()
    queries = query_set(dataset.name, dataset.d, args.queries, args.query_seed)
    true = true_answers(dataset, queries, args.n_jobs)
    seconds = time.perf_counter() - start
    log(f"{dataset.name}: n={dataset.n} d={dataset.d}; true answers of {args.queries} queries in {seconds:.1f} s")
    methods = {}
    for method in args.methods:
        rounds = (args.peer_rounds or args.rounds) if method in PEER_METHODS else args.rounds
        methods[method] = run_rounds(method, dataset, setting, rounds, options, queries, true)
        if record is not None and method in PEER_METHODS:
            recorded = next(r["methods"] for r in record.content["results"] if r["dataset"] == dataset.name)
            methods[method] = peer_result_from_record(methods[method], recorded.get(method), record,
                                                      f"{method} row on {dataset.name}")
    return {"dataset": dataset.name, "n": dataset.n, "d": dataset.d, "true_answers_seconds": seconds,
            "true_answer_min": true.min(axis=1).tolist(),
            "true_answer_scaled_min": (true / queries.alpha.sum(axis=1)).min(axis=1).tolist(), "methods": methods}


def plot(result: dict, table: int, path: Path) -> None:
    published = PAPER_TABLES[table].get(result["dataset"])
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for ax, (kind, name), paper_kind in zip(axes, ERROR_KINDS[:2], ("rel", "abs")):
        series = {LABELS[m]: mean_errors(r, kind) for m, r in result["methods"].items() if r["rounds"]}
        plot_errors(ax, SIGMAS, series, published, paper_kind, f"worst-case {name.strip('*')}")
    axes[0].legend(fontsize=7)
    fig.suptitle(f"Table {table} setting, {result['dataset'].upper()} (n = {result['n']}, d = {result['d']})")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def describe_methods(setting: Setting, example) -> list[str]:
    default = non_default_keys(default_config(setting))
    paper = paper_config(setting, example.n, example.d, SIGMAS[0])
    constant = {k: v for k, v in non_default_keys(paper).items() if k not in ("smoothness", "n_basis")}
    return [
        "- **paper (published)**: the paper's numbers, copied from its text (20 rounds, CPLEX on a 2010 Xeon; "
        "time as printed, two readings where the text extraction differs).",
        "- **paper-constant variant**: the paper's constants: one release *per σ*, each with the whole budget "
        "(so the five cost 5ε together), smoothness K = σ² and Appendix A.5's R = 0.5 n^{d/(2d+K)} "
        "(δ = 0) or 0.5 n^{2d/(3d+2K)} (δ > 0), not raised to 2d; other keys from `configs/` plus "
        f"{PAPER_PINS}: `{constant}`. Its R per σ is given under each dataset.",
        "- **synthdp default**: *one* release answering every σ, `SynthConfig` at the package's defaults with "
        f"only these keys set: `{default}`.",
        "- **bootstrap**: n real rows drawn with replacement — not private; the sampling floor of any table of "
        "n i.i.d. rows.",
        "- **DP Gaussian**: noisy mean and second moment of the [−1, 1]-scaled data (Laplace at δ = 0, analytic "
        "Gaussian at δ > 0; replace-one sensitivities, experiments/baselines.py), PSD covariance, n rows sampled.",
        "- **peers**: smartnoise-synth 1.0.8 MST/AIM and OpenDP 0.16 dp.mbi MST/AIM on 16 equal-width bins of the "
        "same bounds, decoded uniformly within bins, at the same (ε, δ), in their native add/remove-one unit "
        "(experiments/peers/README.md).",
    ]


def projected_minutes(results: list[dict], queries: int) -> tuple[float, float]:
    """Minutes of the full protocol projected from this run: (synthdp rows and baselines, finished peers)."""
    minutes = {False: 0.0, True: 0.0}
    for result in results:
        for method, seconds in estimate_seconds(result["methods"], queries).items():
            minutes[method in PEER_METHODS] += seconds / 60
    return minutes[False], minutes[True]


def basis_sizes(methods: dict) -> str:
    """R (non-constant Chebyshev moments) of the synthdp releases, from the first round."""
    parts = []
    paper, default = methods.get("paper-constant"), methods.get("synthdp-default")
    if paper and paper["rounds"]:
        sizes = ", ".join(str(release["n_basis"]) for release in paper["rounds"][0]["info"]["releases"])
        parts.append(f"paper-constant R for σ = 2 … 10: {sizes}")
    if default and default["rounds"]:
        parts.append(f"synthdp default R: {default['rounds'][0]['info']['n_basis']} (all σ)")
    return "; ".join(parts) + "." if parts else ""


def peers_note(results: list[dict]) -> str:
    """Which peer rows were taken from a recorded run (``--peers-from-record``), "" when none was."""
    peers = [(f"{LABELS[m]} on {r['dataset'].upper()}", measured) for r in results
             for m, measured in r["methods"].items() if m in PEER_METHODS and measured["status"] != "n/a"]
    return record_note([(label, m["from_record"]) for label, m in peers if m.get("from_record")], len(peers))


def markdown(results: list[dict], table: int, setting: Setting, args, command: str, total: float) -> str:
    header = " | ".join(f"σ={s:g}" for s in SIGMAS)
    note = peers_note(results)
    synthdp_minutes, peer_minutes = projected_minutes(results, args.queries)
    lines = [
        f"# Table {table}: (ε, δ) = ({setting.epsilon:g}, {setting.delta:g}), {setting.candidates} candidates "
        "for the paper-constant variant (synthdp default: the package's default candidates)",
        "",
        generated_by(command) + f"; {total / 60:.1f} min with the cache.",
        "",
        *([note, ""] if note else []),
        f"**Settings of this run: {args.rounds} rounds** (peers: up to {args.peer_rounds or args.rounds}; the "
        f"rounds column gives what each row used), **{args.queries} queries** per dataset (query seed "
        f"{args.query_seed}), σ ∈ {{2, 4, 6, 8, 10}}, worst case over the queries, mean over rounds. "
        + ("" if (args.rounds, args.queries) == (FULL_ROUNDS, FULL_QUERIES) else
           f"This is NOT the paper's protocol ({FULL_ROUNDS} rounds, {FULL_QUERIES} queries). ")
        + (f"synthdp noise seeded from {args.seed} (reproducible, NOT private)." if args.seed is not None
           else "synthdp's noise: OpenDP (private)."),
        "",
        f"Projected time of the full protocol ({FULL_ROUNDS} rounds of every method, {FULL_QUERIES} queries), from the "
        f"times measured here: {synthdp_minutes:.0f} min for the synthdp rows and baselines"
        + (f", {peer_minutes:.0f} min for the peers whose runs finished (not counting those that timed out)"
           if peer_minutes else "") + " (shared 2-core machine).",
        "",
        "Compare with the paper on **rel** (worst |q(D) − q(D̃)| / q(D), scale-free). Absolute errors are given "
        "under both scalings: **abs f/Σα** divides each query by Σⱼ αⱼ (queries in [0, 1]; the scale the paper's "
        "absolute errors appear to use, docs/mechanism.md §5) and **abs raw f** uses f as written (up to Σα ≈ 5); the "
        "paper's abs row is on its own (apparently f/Σα) scale.",
        "",
        BOUNDS_NOTE,
        "",
        "Rows:",
        "",
        *describe_methods(setting, load_dataset(results[0]["dataset"], args.data_dir)),
        "",
        "Columns: time = mean wall seconds of one run [CPU seconds, subprocesses included] (synthdp: in-process "
        "fit + sample; peers: the whole subprocess, interpreter and JAX start-up included, and the time inside "
        "the peer's fit); distinct rows of the synthetic table; Kolmogorov–Smirnov distance per column (mean / max "
        "over columns); |Pearson r(real) − r(synthetic)| over column pairs (max / mean); model: R² of gradient "
        "boosting predicting total_UPDRS from the voice measures (motor_UPDRS dropped), trained on the synthetic "
        "rows and tested on 30 % of the real rows (trained on the other 70 % of real rows in brackets); only PKS "
        "has a natural target (README, Evaluating). The paper-constant variant's utility is that of its σ = 2 "
        "table. Peer runs reused from peers_smoke.json kept no rows, so they have no utility numbers.",
        "",
    ]
    for result in results:
        name = result["dataset"]
        published = PAPER_TABLES[table][name]
        lines += [f"## {name.upper()} (n = {result['n']}, d = {result['d']})", "",
                  f"![{name}](table{table}_{name}.png)", "",
                  f"| method | rounds | error | {header} | time (s) | " + " | ".join(UTILITY_HEADER) + " |",
                  "|---|---|---|" + "---:|" * len(SIGMAS) + "---|" * (1 + len(UTILITY_HEADER))]
        for kind, short in (("rel", "**rel**"), ("abs", "abs (paper's scale)")):
            lines.append(f"| paper (published) | 20 | {short} | " + " | ".join(fmt(published[kind]))
                         + f" | {published['time'] if kind == 'rel' else ''} |" + " |" * len(UTILITY_HEADER))
        for method, measured in result["methods"].items():
            lines += method_rows(method, measured)
        lines += ["", basis_sizes(result["methods"]), "", "Smallest true answer per σ (raw f): " + ", ".join(f"{v:.3g}" for v in result["true_answer_min"])
                  + "; (f/Σα): " + ", ".join(f"{v:.3g}" for v in result["true_answer_scaled_min"]) + ".", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    command = command_line("paper_tables.py", argv)
    epsilon, delta, kind = SETTINGS[args.table]
    setting = Setting(epsilon, delta, kind)
    options = run_options(args)
    record = read_record(args.peers_from_record) if args.peers_from_record else None  # before anything is written
    if record is not None:
        check_record(record, args, setting)
    datasets = {name: load_dataset(name, args.data_dir) for name in args.datasets}
    if args.no_new_peer_runs and record is None:  # before peers_smoke.json: the committed rows and failures first
        committed = RESULTS_DIR / f"table{args.table}.json"
        added = import_committed_results(options, datasets, committed)
        if added:
            log(f"cache: {added} peer rounds imported from {committed}")
    added = import_peers_smoke(options, datasets)
    if added:
        log(f"cache: {added} peer runs imported from peers_smoke.json")
    start = time.perf_counter()
    results = [run_dataset(dataset, setting, args, options, record) for dataset in datasets.values()]
    total = time.perf_counter() - start
    args.out_dir.mkdir(parents=True, exist_ok=True)
    out = args.out_dir / f"table{args.table}.md"
    for result in results:
        plot(result, args.table, args.out_dir / f"table{args.table}_{result['dataset']}.png")
    out.write_text(markdown(results, args.table, setting, args, command, total), encoding="utf-8")
    write_json(out.with_suffix(".json"), {"command": command, "total_seconds": total, "sigmas": list(SIGMAS),
                                          "setting": vars(setting), "paper": PAPER_TABLES[args.table],
                                          "settings": vars(args), "results": results})
    log(f"wrote {out} (+ .json, .png) in {total / 60:.1f} min; the full protocol would take about "
        "{:.0f} min (synthdp and baselines) + {:.0f} min (finished peers)".format(*projected_minutes(results, args.queries)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
