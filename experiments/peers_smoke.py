"""Smoke comparison of baselines and peer synthesizers on the smooth-query protocol.

For each of CTG, PKS, WDBC and CRM this script runs

* ``bootstrap``      -- n real rows with replacement (not private; the sampling floor);
* ``dp-gaussian``    -- noisy mean + second moment, PSD covariance, Gaussian sample;
* ``smartnoise-mst`` -- smartnoise-synth 1.0.8 MST on 16 equal-width bins per column;
* ``smartnoise-aim`` -- smartnoise-synth 1.0.8 AIM, same bins;
* ``opendp-mst`` / ``opendp-aim`` -- OpenDP 0.16 dp.mbi MST / AIM, same bins;

at (epsilon, delta) = (1, 1e-10) (``--epsilon``, ``--delta``), decodes the peers uniformly
within bins, and measures worst-case relative and absolute error (f as written and
f / sum_j alpha_j) over Q random smooth queries for sigma in {2, 4, 6, 8, 10}
(``synthdp.evaluation.queries``; docs/mechanism.md §5), averaged over ``--rounds`` rounds, with
the run time of every method. Results: ``experiments/results/peers_smoke.md`` and a JSON
file beside it, which also serves as a cache (``--resume`` skips finished runs).

The query sets are those of ``experiments/defaults_vs_table3.py`` (same ``--query-seed``
and per-dataset derivation), so the numbers line up with that table.

Bounds: each column's min and max in the data, taken as PUBLIC (as in
defaults_vs_table3.py). That leaks the extremes of real rows; it is the paper's
normalisation, used here so every method sees the same bounds and bins.

Privacy unit: the peers run in their native add/remove-one unit by default (issue 7's
setting); ``--unit replace-one`` calibrates them to synthdp's replace-one unit instead
(see experiments/peers/run_peer.py). dp-gaussian is calibrated for replace-one.

Time caps: ``--timeout METHOD=SECONDS`` kills a peer run after SECONDS; a method that times
out in one round is not run in later rounds for that dataset, and the table says so.

The peers run in their own virtualenvs: ``bash experiments/peers/install.sh`` first.

Usage::

    python experiments/peers_smoke.py
    python experiments/peers_smoke.py --datasets ctg --methods bootstrap smartnoise-mst
    python experiments/peers_smoke.py --resume    # continue an interrupted run
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
import zlib
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from baselines import (  # noqa: E402
    LABELS,
    PEER_TIMEOUTS,
    PeerFailed,
    PeerTimeout,
    PeerUnavailable,
    binned_peer,
    bootstrap,
    dp_gaussian,
)
from common import (  # noqa: E402
    DATA_DIR,
    QUERY_SEED,
    RESULTS_DIR,
    command_line,
    cpu_now,
    fmt,
    load_dataset,
    log,
    query_set,
    read_json,
    source_commit,
    write_json,
)

from synthdp.study import SIGMAS, answer_queries, worst_case_errors  # noqa: E402

DEFAULT_OUT = RESULTS_DIR / "peers_smoke.md"
DATASETS = ("ctg", "pks", "wdbc", "crm")
METHODS = ("bootstrap", "dp-gaussian", "opendp-mst", "smartnoise-mst", "opendp-aim", "smartnoise-aim")
PEER_METHODS = {"smartnoise-mst", "smartnoise-aim", "opendp-mst", "opendp-aim"}
DEFAULT_ROUNDS = 2
DEFAULT_TIMEOUTS = PEER_TIMEOUTS

# Issue 7: smartnoise-synth MST at (1, 1e-10), 16 equal-width bins, uniform decoding;
# worst-case relative error for sigma = 2, 4, 6, 8, 10.
ISSUE7_MST_REL = {
    "ctg": [0.145, 0.027, 0.012, 0.007, 0.004],
    "pks": [0.045, 0.007, 0.003, 0.002, 0.001],
    "wdbc": [0.304, 0.078, 0.035, 0.020, 0.013],
    "crm": [0.558, 0.130, 0.056, 0.031, 0.020],
}


def parse_timeouts(items: list[str]) -> dict[str, float]:
    timeouts = dict(DEFAULT_TIMEOUTS)
    for item in items:
        method, _, seconds = item.partition("=")
        if method not in PEER_METHODS or not seconds:
            raise SystemExit(f"--timeout expects PEER=SECONDS with PEER in {sorted(PEER_METHODS)}; got '{item}'")
        timeouts[method] = float(seconds)
    return timeouts


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS)
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    parser.add_argument("--rounds", type=int, default=DEFAULT_ROUNDS)
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--query-seed", type=int, default=QUERY_SEED, help="as in defaults_vs_table3.py")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the post-processing randomness (bootstrap draws, Gaussian samples, "
                             "uniform decoding); the privacy noise is OpenDP's and is never seeded")
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--delta", type=float, default=1e-10)
    parser.add_argument("--bins", type=int, default=16)
    parser.add_argument("--unit", choices=("add-remove", "replace-one"), default="add-remove",
                        help="privacy unit of the peers (default: their native add/remove)")
    parser.add_argument("--timeout", nargs="*", default=[], metavar="PEER=SECONDS",
                        help=f"per-run time cap of a peer (defaults {DEFAULT_TIMEOUTS})")
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--resume", action="store_true", help="reuse finished runs from the JSON beside --out")
    parser.add_argument("--render-only", action="store_true", help="only rewrite the markdown from the JSON")
    parser.add_argument("--n-jobs", type=int, default=None, help="threads for the query evaluation")
    args = parser.parse_args(argv)
    args.timeouts = parse_timeouts(args.timeout)
    if args.rounds < 1 or args.queries < 1:
        parser.error("--rounds and --queries must be >= 1")
    return args


def generate(method: str, frame: pd.DataFrame, bounds: dict, rng: np.random.Generator,
             args: argparse.Namespace) -> tuple[pd.DataFrame, dict]:
    """One synthetic table and its timing (wall and CPU seconds, process + children)."""
    cpu0, t0 = cpu_now(), time.perf_counter()
    info: dict = {}
    if method == "bootstrap":
        synthetic = bootstrap(frame, rng)
    elif method == "dp-gaussian":
        synthetic = dp_gaussian(frame, bounds, args.epsilon, args.delta, rng)
        info["noise"] = "opendp"
    else:
        synthetic = binned_peer(method, frame, bounds, args.epsilon, args.delta, bins=args.bins, rng=rng,
                                unit=args.unit, timeout=args.timeouts[method])
        info.update(synthetic.attrs.get("peer", {}))
    info["seconds"] = time.perf_counter() - t0
    info["cpu_seconds"] = cpu_now() - cpu0
    return synthetic, info


def run_dataset(name: str, args: argparse.Namespace, cache: dict, invocations: list) -> dict:
    dataset = load_dataset(name, args.data_dir)
    frame, bounds, (n, d) = dataset.frame, dataset.bounds, dataset.frame.shape
    result = cache.get(name) or {"dataset": name, "n": n, "d": d, "methods": {}}
    queries = query_set(name, d, args.queries, args.query_seed)
    t0 = time.perf_counter()
    true = answer_queries(dataset.unit(frame), queries, SIGMAS, n_jobs=args.n_jobs)
    log(f"{name}: n={n} d={d}; true answers in {time.perf_counter() - t0:.1f} s")
    result["true_answer_min"] = true.min(axis=1).tolist()

    for method in args.methods:
        entry = result["methods"].setdefault(method, {"rounds": [], "status": "ok"})
        if entry["status"] in ("timeout", "unavailable", "failed") and args.resume:
            log(f"{name}/{method}: {entry['status']} in a previous run, skipped (--resume)")
            continue
        entry["status"] = "ok"
        entry["rounds"] = entry["rounds"][: args.rounds] if args.resume else []
        entry["rounds_requested"] = args.rounds
        if method in PEER_METHODS:
            entry.update(timeout_seconds=args.timeouts[method], unit=args.unit)
        entry.pop("message", None)
        for r in range(len(entry["rounds"]), args.rounds):
            rng = np.random.default_rng([args.seed, r, zlib.crc32(name.encode()), zlib.crc32(method.encode())])
            try:
                synthetic, info = generate(method, frame, bounds, rng, args)
            except PeerTimeout as error:
                entry.update(status="timeout", message=str(error))
                log(f"{name}/{method}: round {r + 1}: {error}; no further rounds")
                break
            except PeerUnavailable as error:
                entry.update(status="unavailable", message=str(error))
                log(f"{name}/{method}: {error}")
                break
            except PeerFailed as error:
                entry.update(status="failed", message=str(error)[-1500:])
                log(f"{name}/{method}: FAILED: {str(error)[-500:]}")
                break
            answers = answer_queries(dataset.unit(synthetic), queries, SIGMAS, n_jobs=args.n_jobs)
            info["errors"] = worst_case_errors(true, answers, queries.alpha).to_dict()
            info["distinct_rows"] = int(len(synthetic.drop_duplicates()))
            entry["rounds"].append(info)
            rel = ", ".join(f"{v:.3g}" for v in info["errors"]["relative"])
            log(f"{name}/{method}: round {r + 1}/{args.rounds}: {info['seconds']:.1f} s wall, "
                f"{info['cpu_seconds']:.1f} s CPU; rel [{rel}]")
            invocations[-1]["minutes"] = (time.perf_counter() - args.started) / 60
            save(args, cache | {name: result}, invocations)
    return result


def defaults_rows(name: str) -> list[tuple[str, list[str], str]]:
    """synthdp's default and the paper's Table 3 from defaults_vs_table3.json, if present."""
    payload = read_json(RESULTS_DIR / "defaults_vs_table3.json")
    if payload is None:
        return []
    rows = []
    paper = payload.get("paper_table3", {}).get(name)
    if paper:
        rows.append(("paper Table 3 rel (ε-DP, published)", fmt(paper["rel"]), f"{paper['time']} (paper)"))
    for result in payload.get("results", []):
        if result["dataset"] == name and result.get("rounds"):
            rel = np.mean([info["errors"]["relative"] for info in result["rounds"]], axis=0)
            secs = np.mean([info["fit_sample_seconds"] for info in result["rounds"]])
            rows.append((f"synthdp default rel (ε-DP, δ=0; defaults_vs_table3, {len(result['rounds'])} rounds)",
                         fmt(rel), f"{secs:.2f}"))
    return rows


def markdown(cache: dict, args: argparse.Namespace, invocations: list) -> str:
    header = " | ".join(f"σ={s:g}" for s in SIGMAS)
    total = sum(item.get("minutes", 0.0) for item in invocations)
    lines = [
        "# Baselines and peers on the smooth-query protocol (smoke run)",
        "",
        f"Python {platform.python_version()}, {os.cpu_count()} CPUs shared with other jobs (wall times are "
        f"inflated, CPU times less so). Generated by these invocations ({total:.1f} min in all; rendered "
        f"at commit {source_commit() or 'unknown'}), each adding its "
        "methods and datasets to the JSON beside this file:",
        "",
    ]
    lines += [f"- `{item['command']}` ({item['date']}{', at commit ' + item['commit'] if item.get('commit') else ''}, "
              f"{item.get('minutes', 0.0):.1f} min)" for item in invocations]
    lines += [
        "",
        f"Setting: (ε, δ) = ({args.epsilon:g}, {args.delta:g}); {DEFAULT_ROUNDS} rounds per method unless the row "
        f"says otherwise; {args.queries} random queries per dataset (the query sets of defaults_vs_table3.py, "
        "seed 20240601); σ ∈ {2, 4, 6, 8, 10}; worst case over the queries, averaged over rounds. "
        "Bounds: each column's min and max in the data, *taken as public* (the paper's normalisation; it leaks "
        "the extreme rows). Peers: "
        f"{args.bins} equal-width bins per column from those bounds, decoded uniformly within bins; privacy unit "
        "add/remove-one for the peers unless the row says [replace-one] (add/remove is their native unit and issue "
        "7's setting; synthdp's unit is replace-one, and so is the DP Gaussian's calibration). A peer run longer "
        "than its cap is killed and reported as such.",
        "",
        "Rows:",
        "",
        "- **rel**: worst |q(D) − q(D̃)| / q(D) (scale-free; compare with the paper and issue 7 on this).",
        "- **abs f/Σα**: worst |q(D) − q(D̃)| with each query divided by Σⱼ αⱼ (queries in [0, 1]; the paper's "
        "apparent scale). **abs raw**: f as written (values up to Σα ≈ 5).",
        "- time: wall seconds of one run [CPU seconds, process + subprocesses], mean over rounds. For peers the "
        "wall time is the whole subprocess (interpreter and library import, JAX compilation, CSV I/O); "
        "in brackets after 'fit' the time inside the peer's fit.",
        "- issue 7 MST: the numbers quoted in issue 7 for smartnoise-synth MST at (1, 1e-10) on the same bins.",
        "- paper / synthdp default: from experiments/results/defaults_vs_table3.json (pure ε-DP, δ = 0, so not the "
        "same privacy setting as the rows above).",
        "",
        "Caveats (details in experiments/peers/README.md): the peers' privacy noise comes from OpenDP and is not "
        "seedable, so no run is reproducible exactly; OpenDP 0.16's dp.mbi needs a workaround for its own budget "
        "check (opendp/opendp#2789: every internal budget share made smaller by a relative 1e-9) and adds a null "
        "category to every column (rows with a sampled null are redrawn); smartnoise MST uses the exact n as its "
        "known total; DP Gaussian uses replace-one sensitivities (derived in experiments/baselines.py).",
        "",
    ]
    for name in DATASETS:
        result = cache.get(name)
        if not result:
            continue
        lines += [f"## {name.upper()} (n = {result['n']}, d = {result['d']})", "",
                  f"| method | | {header} | time (s) |", "|---|---|" + "---:|" * len(SIGMAS) + "---|"]
        for method in METHODS:
            entry = result["methods"].get(method)
            if entry is None:
                continue
            rounds = entry["rounds"]
            label = LABELS[method]
            if not rounds:
                reason = {"timeout": f"did not finish within {entry.get('timeout_seconds', 0):.0f} s (killed)",
                          "unavailable": "not installed", "failed": "failed"}.get(entry["status"], entry["status"])
                lines.append(f"| {label} | — | " + " | ".join(["—"] * len(SIGMAS)) + f" | {reason} |")
                continue
            wall = np.mean([info["seconds"] for info in rounds])
            cpu = np.mean([info["cpu_seconds"] for info in rounds])
            time_cell = f"{wall:.1f} [{cpu:.1f}]"
            if "fit_seconds" in rounds[0]:
                time_cell += f"; fit {np.mean([info['fit_seconds'] for info in rounds]):.1f}"
            requested = entry.get("rounds_requested", args.rounds)
            note = f" ({len(rounds)} round{'s' if len(rounds) != 1 else ''})" if len(rounds) != DEFAULT_ROUNDS else ""
            if method in PEER_METHODS and entry.get("unit", "add-remove") != "add-remove":
                note += f" [{entry['unit']}]"
            if entry["status"] == "timeout":
                note += f"; round {len(rounds) + 1} of {requested} hit the {entry.get('timeout_seconds', 0):.0f} s cap"
            for key, short in (("relative", "**rel**"), ("absolute_scaled", "abs f/Σα"), ("absolute", "abs raw")):
                values = np.mean([info["errors"][key] for info in rounds], axis=0)
                lines.append(f"| {label}{note if key == 'relative' else ''} | {short} | "
                             + " | ".join(fmt(values)) + f" | {time_cell if key == 'relative' else ''} |")
        lines.append("| issue 7 MST (quoted) | rel | " + " | ".join(fmt(ISSUE7_MST_REL[name])) + " | |")
        for label, values, time_cell in defaults_rows(name):
            lines.append(f"| {label} | rel | " + " | ".join(values) + f" | {time_cell} |")
        lines += ["", "Smallest true answer (raw f) per σ: " + ", ".join(f"{v:.3g}" for v in result["true_answer_min"]) + ".", ""]
        extras = []
        for method in ("opendp-mst", "opendp-aim"):
            entry = result["methods"].get(method)
            if entry and entry["rounds"] and "null_cell_fraction" in entry["rounds"][0]:
                extras.append(f"{LABELS[method]}: {np.mean([i['null_cell_fraction'] for i in entry['rounds']]):.2%} of "
                              "sampled cells were dp.mbi's null category (rows with a null were redrawn)")
        for method in METHODS:
            entry = result["methods"].get(method)
            if entry and entry.get("status") == "failed":
                extras.append(f"{LABELS[method]} failed: `{entry.get('message', '')[-300:]}`")
        if extras:
            lines += ["; ".join(extras) + ".", ""]
    return "\n".join(lines)


def save(args: argparse.Namespace, cache: dict, invocations: list) -> None:
    payload = {"settings": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items() if k != "started"},
               "invocations": invocations, "sigmas": list(SIGMAS), "issue7_mst_rel": ISSUE7_MST_REL,
               "results": cache}
    write_json(args.out.with_suffix(".json"), payload)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    command = command_line("peers_smoke.py", argv)
    cache: dict = {}
    invocations: list = []
    json_path = args.out.with_suffix(".json")
    previous = read_json(json_path)
    if previous is not None:  # keep other datasets' and methods' results; reuse finished runs only with --resume
        cache, invocations = previous.get("results", {}), previous.get("invocations", [])
    if args.render_only:
        args.out.write_text(markdown(cache, args, invocations), encoding="utf-8")
        log(f"rendered {args.out} from {json_path}")
        return 0
    for name in args.datasets:
        load_dataset(name, args.data_dir)  # fails early on a missing file
    start = time.perf_counter()
    args.started = start
    invocations.append({"command": command, "date": time.strftime("%Y-%m-%d %H:%M"), "commit": source_commit(),
                        "minutes": 0.0})
    for name in args.datasets:
        cache[name] = run_dataset(name, args, cache, invocations)
        invocations[-1]["minutes"] = (time.perf_counter() - start) / 60
        save(args, cache, invocations)
    total = time.perf_counter() - start
    args.out.write_text(markdown(cache, args, invocations), encoding="utf-8")
    log(f"wrote {args.out} and {json_path} in {total / 60:.1f} min")
    return 0


if __name__ == "__main__":
    sys.exit(main())
