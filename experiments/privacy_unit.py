"""Privacy for people, not rows: synthdp by person on pks_subjects.csv (issue 20, item 5).

``pks_subjects.csv`` is PKS with its person identifier ``subject#`` (42 people, 101-168 recordings
each) and ``sex``. The release is of PKS's 20 numeric columns (``sex`` dropped, as in PKS;
each column's min/max as public bounds, :data:`common.BOUNDS_NOTE`), scored against all 5 875 real
rows, for each person-level budget epsilon in ``--epsilons`` (delta = 1e-10) and each bound K in
``--ks`` on the rows one person contributes:

* **synthdp by person**: ``SmoothSynthesizer(epsilon=e, delta=1e-10, privacy_unit="subject#",
  max_rows_per_unit=K)``, defaults otherwise: (e, 1e-10)-DP for adding or removing one person;
* **synthdp by row**: the default release at the same (e, 1e-10) with ``subject#`` dropped. It is
  NOT a person-level guarantee: a person with m rows is protected only at about m e (group
  privacy; at least 101 e here). It shows what the person-level guarantee costs;
* **dp.mbi MST / AIM by person**: OpenDP 0.16 ``dp.mbi`` on 16 equal-width bins of the same
  bounds, decoded uniformly in bins, after the same contribution bounding (a random K rows per
  person), with ``dp.unit_of(contributions=K)`` at the same (e, 1e-10)
  (``experiments/peers/run_peer.py --unit contributions=K``), as many rows as synthdp's noisy count
  would give (the bounded n; the peers do not release it, so the row count of their output is the
  exact bounded n, a small leak in the peers' favour).

Scores, each the mean over rounds: the smooth queries of Tables 3-4 (the same 20-column query
set as PKS, ``--n-queries`` queries, worst relative error at each sigma; here the mean of the
worst relative errors over sigma in {2, 4, 6, 8, 10}, all five in the JSON), synthdp's SDMetrics-style
column shapes and column pair trends (``synthdp evaluate``), the strong-pair ratio (mean synthetic
|r| over mean real |r| of the pairs with real |r| > 0.5), and SDMetrics' own QualityReport (overall)
where its virtualenv exists (``experiments/relationships.py``).

Peer runs are cached under ``experiments/results/cache/privacy_unit/`` (git ignores it):
``--peer-cache-only`` re-renders without running a peer. ``--peers-from-record [JSON]`` (for a
machine without that cache, e.g. a fresh checkout) implies it, and a peer row (a peer at one
epsilon and K) that the cache does not answer whole is taken, as scored, from the recorded
results (default: the committed ``experiments/results/privacy_unit.json``, read before anything
is written) instead of being left out; it is marked ``"from_record": "<command> on <date>"`` in
the JSON written (so a later re-render with the option takes it again) and the markdown says
which rows and from which run. The peers' smooth-query scores use the same query set as
synthdp's rows, so ``--n-queries`` and ``--peer-rounds`` must be the record's, and every
requested peer row in it, or it refuses in one line. The settings of a record are its JSON's
``settings`` (written since), else read from its command.

Writes ``experiments/results/privacy_unit.md`` and ``privacy_unit.json``.

Usage::

    python experiments/privacy_unit.py                                     # synthdp rows, 3 rounds
    python experiments/privacy_unit.py --methods all --peer-rounds 1       # with the dp.mbi peers
    python experiments/privacy_unit.py --methods all --peer-cache-only     # re-render
    python experiments/privacy_unit.py --methods all --rounds 5 --peers-from-record   # re-render without the cache
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
import zlib
from pathlib import Path

import numpy as np
import pandas as pd
from baselines import PeerFailed, PeerTimeout, PeerUnavailable, binned_peer
from common import (
    BOUNDS_NOTE,
    DATA_DIR,
    RESULTS_DIR,
    Dataset,
    Record,
    add_peers_from_record,
    command_line,
    generated_by,
    log,
    query_set,
    read_json,
    read_record,
    record_note,
    record_path,
    true_answers,
    write_json,
)
from harness import worst_errors
from relationships import SDMetricsBatch, mean_se

from synthdp import SmoothSynthesizer
from synthdp.study import SIGMAS, utility_report

SCRIPT = "privacy_unit.py"
UNIT = "subject#"
DELTA = 1e-10
PEER_BINS = 16
CACHE_DIR = RESULTS_DIR / "cache" / "privacy_unit"
METHODS = ("synthdp-unit", "synthdp-row", "opendp-mst", "opendp-aim")
LABELS = {"synthdp-unit": "synthdp by person", "synthdp-row": "synthdp by row (not a person-level guarantee)",
          "opendp-mst": "dp.mbi MST by person", "opendp-aim": "dp.mbi AIM by person"}
SCORES = {"smooth_rel": "smooth queries: worst rel. error (mean over σ)", "column_shapes": "column shapes",
          "pair_trends": "column pair trends", "strong_ratio": "strong-pair ratio", "sdm_overall": "SDMetrics overall",
          "rows": "rows"}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 2.0, 4.0, 8.0])
    parser.add_argument("--ks", type=int, nargs="+", default=[10, 50, 170])
    parser.add_argument("--rounds", type=int, default=3, help="rounds of synthdp per cell")
    parser.add_argument("--peer-rounds", type=int, default=1)
    parser.add_argument("--methods", nargs="+", default=["synthdp-unit", "synthdp-row"],
                        help=f"of {', '.join(METHODS)}, or 'all'")
    parser.add_argument("--n-queries", type=int, default=2000)
    parser.add_argument("--peer-timeout", type=float, default=1800.0)
    parser.add_argument("--peer-cache-only", action="store_true", help="run no peer: cached runs only")
    add_peers_from_record(parser, "privacy_unit.json")
    parser.add_argument("--no-sdmetrics", action="store_true")
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR)
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "privacy_unit.md")
    args = parser.parse_args(argv)
    args.methods = list(METHODS) if args.methods == ["all"] else args.methods
    unknown = set(args.methods) - set(METHODS)
    if unknown:
        parser.error(f"unknown methods {sorted(unknown)}")
    args.peers_from_record = record_path(args.peers_from_record, RESULTS_DIR / "privacy_unit.json")
    args.peer_cache_only = args.peer_cache_only or args.peers_from_record is not None
    return args


def bounded(frame: pd.DataFrame, k: int, rng: np.random.Generator) -> pd.DataFrame:
    """A random K rows of each person (all of a person's rows when fewer), the person column dropped."""
    keys = rng.random(len(frame))
    rank = pd.Series(keys).groupby(frame[UNIT].to_numpy()).rank(method="first").to_numpy()
    return frame.loc[rank <= k].drop(columns=[UNIT]).reset_index(drop=True)


def score(real: pd.DataFrame, synthetic: pd.DataFrame, dataset: Dataset, queries, true: np.ndarray, round_: int,
          quality: SDMetricsBatch | None) -> dict:
    report = utility_report(real, synthetic[list(real.columns)], bounds=dataset.bounds, n_queries=20, seed=round_,
                            sdmetrics=False)
    errors = worst_errors(dataset, [(tuple(range(len(SIGMAS))), synthetic[list(real.columns)])], queries, true)
    strong = (report["correlation"] or {}).get("strong_pairs") or {}
    return {"smooth_rel": float(np.mean(errors["relative"])), "smooth": errors,
            "column_shapes": report["similarity"]["column_shapes"],
            "pair_trends": report["similarity"]["column_pair_trends"], "strong_ratio": strong.get("ratio"),
            "rows": len(synthetic), "sdm_overall": None,
            "sdmetrics": None if quality is None else quality.add(real, synthetic[list(real.columns)], None, round_,
                                                                  keep=False)}


def synthdp_runs(method: str, subjects: pd.DataFrame, epsilon: float, k: int, rounds: int, score_run) -> list[dict]:
    runs = []
    for round_ in range(rounds):
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if method == "synthdp-unit":
                synth = SmoothSynthesizer(epsilon=epsilon, delta=DELTA, privacy_unit=UNIT, max_rows_per_unit=k)
                synthetic = synth.fit(subjects, bounds=BOUNDS).sample().drop(columns=[UNIT])
            else:
                synth = SmoothSynthesizer(epsilon=epsilon, delta=DELTA)
                synthetic = synth.fit(subjects.drop(columns=[UNIT]), bounds=BOUNDS).sample()
        seconds = time.perf_counter() - start
        runs.append({"round": round_, "seconds": seconds, **score_run(synthetic, round_)})
        log(f"{method} eps={epsilon:g} K={k} round {round_}: {seconds:.1f} s, smooth {runs[-1]['smooth_rel']:.3f}, "
            f"strong ratio {runs[-1]['strong_ratio']}")
    return runs


def peer_runs(method: str, subjects: pd.DataFrame, epsilon: float, k: int, args, score_run) -> list[dict]:
    runs = []
    for round_ in range(args.peer_rounds):
        stem = f"{method}_eps{epsilon:g}_delta{DELTA:g}_K{k}_bins{PEER_BINS}_r{round_}"
        table_path, record_path = CACHE_DIR / f"{stem}.csv.gz", CACHE_DIR / f"{stem}.json"
        record = read_json(record_path)
        if record is None and not args.peer_cache_only:
            rng = np.random.default_rng([0, round_, k, zlib.crc32(method.encode())])
            rows = bounded(subjects, k, rng)
            start = time.perf_counter()
            try:
                synthetic = binned_peer(method, rows, {c: BOUNDS[c] for c in rows.columns}, epsilon, DELTA,
                                        bins=PEER_BINS, rng=rng, unit=f"contributions={k}", timeout=args.peer_timeout)
                record = {"status": "ok", "seconds": time.perf_counter() - start, "info": synthetic.attrs.get("peer")}
                CACHE_DIR.mkdir(parents=True, exist_ok=True)
                synthetic.to_csv(table_path, index=False)
            except (PeerTimeout, PeerFailed, PeerUnavailable) as error:
                record = {"status": type(error).__name__, "message": str(error)[:300],
                          "seconds": time.perf_counter() - start}
            write_json(record_path, record)
        if record is None:
            continue
        if record["status"] != "ok":
            runs.append({"round": round_, "status": record["status"], "seconds": record.get("seconds")})
            continue
        synthetic = pd.read_csv(table_path)
        runs.append({"round": round_, "status": "ok", "seconds": record["seconds"], **score_run(synthetic, round_)})
        log(f"{method} eps={epsilon:g} K={k} round {round_}: smooth {runs[-1]['smooth_rel']:.3f}")
    return runs


def peer_label(method: str, epsilon: float, k: int) -> str:
    return f"{LABELS[method]} at ε = {epsilon:g}, K = {k}"


def check_record(record: Record, args: argparse.Namespace) -> None:
    """Refuse a record whose peer rows were scored otherwise than this run would score them, or lacks one asked for."""
    recorded = record.settings(parse_args)
    record.require("--n-queries", args.n_queries, recorded["n_queries"])
    record.require("--peer-rounds", args.peer_rounds, recorded["peer_rounds"])
    record.require_within("peer rows", [peer_label(m, e, k) for m in args.methods if m.startswith("opendp")
                                        for e in args.epsilons for k in args.ks],
                          [peer_label(e["method"], e["epsilon"], e["k"]) for e in record.content["results"]
                           if e["method"].startswith("opendp")])


def peer_from_record(entry: dict, record: Record, args: argparse.Namespace) -> dict:
    """A peer row from :func:`peer_runs` (cache only), or the record's where the cache does not answer it whole."""
    recorded = next((e for e in record.content["results"] if (e["method"], e["epsilon"], e["k"])
                     == (entry["method"], entry["epsilon"], entry["k"])), None)
    return record.take(entry, recorded, complete=len(entry["runs"]) == args.peer_rounds, cached=len(entry["runs"]),
                       runs="runs", what=f"{peer_label(entry['method'], entry['epsilon'], entry['k'])} row")


def cell(values: list, digits: int = 3) -> str:
    mean, se = mean_se([v for v in values if v is not None])
    if mean is None:
        return "n/a"
    text = f"{mean:.{digits}f}" if digits else f"{mean:.0f}"
    return text if se is None else f"{text} ± {se:.{digits}f}" if digits else f"{text} ± {se:.0f}"


def render(args, argv, results: list[dict], seconds: float, quality_note: str) -> str:
    peers = [entry for entry in results if entry["method"].startswith("opendp")]
    note = record_note([(peer_label(e["method"], e["epsilon"], e["k"]), e["from_record"]) for e in peers
                        if e.get("from_record")], len(peers))
    lines = [f"# Privacy by person: pks_subjects.csv at person-level ε, δ = {DELTA:g}", "",
             generated_by(command_line(SCRIPT, argv)) + f"; {seconds / 60:.1f} min.", "",
             *([note, ""] if note else []),
             "Real table: 5 875 recordings of 42 people (101-168 each), PKS's 20 numeric columns; " + BOUNDS_NOTE, "",
             f"Methods: {'; '.join(f'**{LABELS[m]}**' for m in args.methods)}. synthdp runs {args.rounds} rounds per "
             f"cell, the peers {args.peer_rounds} (mean ± standard error over rounds). The by-row release is at the "
             "same ε but protects rows, not people: a person with m rows is protected at about m ε (here at least "
             "101 ε), so it is an upper reference for accuracy, not a private alternative.", "",
             "Scores: " + "; ".join(f"**{label}**" for label in SCORES.values()) + ". Smooth queries: the Tables 3-4 "
             f"protocol ({args.n_queries} queries of the PKS query set, worst relative error per σ, the mean over "
             "σ ∈ {2, 4, 6, 8, 10} shown; each σ in privacy_unit.json). " + quality_note, ""]
    for k in args.ks:
        lines += [f"## K = {k} rows per person", "",
                  "| method | ε | " + " | ".join(SCORES.values()) + " | seconds |",
                  "|---|---:|" + "---:|" * (len(SCORES) + 1)]
        for entry in results:
            if entry["k"] != k and entry["method"] != "synthdp-row":
                continue
            if entry["method"] == "synthdp-row" and k != args.ks[0]:
                continue
            ok = [run for run in entry["runs"] if run.get("status", "ok") == "ok"]
            if not entry["runs"]:
                continue
            if not ok:
                lines.append(f"| {LABELS[entry['method']]} | {entry['epsilon']:g} | "
                             + " | ".join([entry["runs"][0]["status"]] * len(SCORES)) + " | |")
                continue
            values = [cell([run.get(key) for run in ok], 0 if key == "rows" else 3) for key in SCORES]
            lines.append(f"| {LABELS[entry['method']]} | {entry['epsilon']:g} | " + " | ".join(values)
                         + f" | {cell([run['seconds'] for run in ok], 1)} |")
        lines.append("")
    lines += ["The by-row rows appear under the first K only (they do not depend on K).", ""]
    return "\n".join(lines)


BOUNDS: dict[str, list[float]] = {}


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    record = read_record(args.peers_from_record) if args.peers_from_record else None  # before anything is written
    if record is not None:
        check_record(record, args)
    start = time.perf_counter()
    subjects = pd.read_csv(args.data_dir / "pks_subjects.csv").drop(columns=["sex"])
    real = subjects.drop(columns=[UNIT])
    BOUNDS.update({c: [float(real[c].min()), float(real[c].max())] for c in real.columns})
    dataset = Dataset("pks", real, real.min().to_numpy(float), real.max().to_numpy(float))
    queries = query_set("pks", dataset.d, args.n_queries)
    true = true_answers(dataset, queries)
    quality = None if args.no_sdmetrics else SDMetricsBatch(CACHE_DIR / "sdmetrics")
    score_run = lambda synthetic, round_: score(real, synthetic, dataset, queries, true, round_, quality)  # noqa: E731
    results = []
    for epsilon in args.epsilons:
        if "synthdp-row" in args.methods:
            results.append({"method": "synthdp-row", "epsilon": epsilon, "k": None,
                            "runs": synthdp_runs("synthdp-row", subjects, epsilon, 0, args.rounds, score_run)})
        for k in args.ks:
            if "synthdp-unit" in args.methods:
                results.append({"method": "synthdp-unit", "epsilon": epsilon, "k": k,
                                "runs": synthdp_runs("synthdp-unit", subjects, epsilon, k, args.rounds, score_run)})
    for method in [m for m in args.methods if m.startswith("opendp")]:
        for epsilon in args.epsilons:
            for k in args.ks:
                entry = {"method": method, "epsilon": epsilon, "k": k,
                         "runs": peer_runs(method, subjects, epsilon, k, args, score_run)}
                results.append(entry if record is None else peer_from_record(entry, record, args))
    note = "SDMetrics: not run (--no-sdmetrics)."
    if quality is not None:
        quality.run()
        for entry in results:
            if not entry.get("from_record"):  # a recorded row's runs hold their SDMetrics scores already
                quality.fill(entry["runs"])
        note = f"SDMetrics: {quality.message}." if quality.message else "SDMetrics QualityReport on ≤ 2000 sampled rows."
    order = {method: i for i, method in enumerate(METHODS)}
    results.sort(key=lambda e: (order[e["method"]], e["epsilon"], e["k"] or 0))
    seconds = time.perf_counter() - start
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(render(args, argv, results, seconds, note), encoding="utf-8")
    write_json(args.out.with_suffix(".json"), {"command": command_line(SCRIPT, argv), "settings": vars(args),
                                               "results": json.loads(
        json.dumps(results, default=lambda value: None))})
    log(f"wrote {args.out} ({seconds / 60:.1f} min)")


if __name__ == "__main__":
    main()
