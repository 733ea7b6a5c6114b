"""Relationships between columns: synthdp's default release and the peers (issue 18, item 4).

For each table (CRM, CTG, PKS, WDBC with each column's min/max as public bounds, see
:data:`common.BOUNDS_NOTE`; adult with ``configs/adult_schema.json``; pks_sex, PKS from
pks_subjects.csv with its binary ``sex`` column, a mixed table of the same numeric columns and
min/max bounds) and each privacy setting
((epsilon, delta) = (1, 1e-10) and epsilon = 1), R rounds of synthdp's DEFAULT
(``SmoothSynthesizer(epsilon=..., delta=...)``, nothing else set), R rounds of synthdp with
``favour="relationships"`` on the numeric tables (method ``synthdp-relationships``) and, at (1, 1e-10), R' runs of
each peer (below), each scored against the real table by
:func:`synthdp.evaluation.metrics.utility_report` (the scores ``synthdp evaluate`` prints; few
smooth queries, and SDMetrics not in-process but in its own virtualenv, below):

* **strong-pair ratio**: over the pairs of numeric columns with real |Pearson r| > 0.5, the mean
  synthetic |r| over the mean real |r| (1: kept, 0: independent columns);
* **column shapes** and **column pair trends**: synthdp's own SDMetrics-style scores (mean over
  columns of 1 - KS, numeric, or 1 - TV, categorical; mean pair similarity: 1 - |r_real -
  r_synth| / 2 for numeric pairs, 1 - 2-way TV for pairs with a categorical column);
* **mean 2-way TV** over all pairs (numeric columns in 16 equal-width bins of their bounds);
* **train on synthetic, test on real** (:func:`synthdp.evaluation.metrics.model_accuracy`): PKS
  motor_UPDRS from the voice measures (total_UPDRS dropped from both tables; R^2), adult income
  (accuracy), each beside the same model trained on real rows.

* **SDMetrics' own QualityReport** (overall, Column Shapes, Column Pair Trends), beside synthdp's
  scores of the same names (see "SDMetrics" below).

Every entry of the results is the mean +- standard error over rounds (the standard error is the
sample standard deviation over sqrt(R); "-" with one round).

Peers (``--methods``; default synthdp's default and all four): smartnoise-synth 1.0.8 MST and
AIM, OpenDP 0.16 dp.mbi MST and AIM (``experiments/peers/``, optional, each in its virtualenv:
``bash experiments/peers/install.sh``). They are zCDP mechanisms, so they run at
(epsilon, delta) = (1, 1e-10) only (at epsilon = 1 there is no peer row), and in synthdp's privacy
unit, **replace-one** (``run_peer.py --unit replace-one``: smartnoise gets rho / 4, OpenDP
``contributions=2``). Numeric tables go through ``baselines.binned_peer``: every column in 16
equal-width bins of the same public bounds as synthdp's, synthetic codes decoded uniformly
within their bins. adult (mixed) goes through ``baselines.coded_peer`` (``run_peer.py --sizes``):
each binary/categorical column coded by the schema's levels (plus "other" for a categorical
column, as synthdp codes it), each integer column in 16 equal-width bins of the schema's bounds;
decoded to the level, or uniformly within the bin and rounded to an integer.
``--peer-rounds`` runs per peer and table (default 3); a run is killed after ``--peer-timeout``
seconds (default 1800; ``--peer-timeout 900`` for all, or ``smartnoise-aim=600``), recorded as
a timeout, and the later rounds of that peer on that table are not run. The peer runs go
round by round: round 0 of every MST, then of every AIM, on every table, then round 1, ...

Cache: each finished peer run's synthetic table (``.csv.gz``) and its record (``.json``: the peer's
versions, rho, timings; or the timeout/failure) is kept under
``experiments/results/cache/relationships/{table}/`` (git ignores it), named by peer, setting,
unit, bins and round, e.g. ``smartnoise-mst_eps1_delta1e-10_replace-one_bins16_r0``. A re-run
scores the cached tables again and runs only the missing rounds; ``--peer-cache-only`` runs no
peer at all (re-rendering), ``--retry-failed`` retries recorded failures (a timeout is also
retried when ``--peer-timeout`` is longer than the recorded one). synthdp's own rows are
always recomputed (seconds).

``--peers-from-record [JSON]`` (for a machine without the cache, e.g. a fresh checkout) implies
``--peer-cache-only``, and a peer row (a peer on a table) that the cache does not answer whole is
taken, as scored (its rounds' scores, SDMetrics' included, timings, records, failures), from the
recorded results (default: the committed ``experiments/results/relationships.json``, read before
anything is written) instead of showing as not cached. It is marked ``"from_record": "<command>
on <date>"`` in the JSON written, so a later re-render with the option takes it again, and the
markdown says which rows and from which run. ``--peer-rounds`` must be the record's, every table
of ``--datasets`` in it, and the peers' setting, unit and bins the same, or it refuses in one line.
The settings of a record are its JSON's ``settings`` (written since), else read from its command.

SDMetrics: sdmetrics needs pandas < 3, synthdp's environment has pandas 3, so the QualityReport
runs in its own virtualenv (``$SYNTHDP_SDMETRICS_VENV``, default ``/opt/sdmetrics-venv``:
``python3 -m venv /opt/sdmetrics-venv && /opt/sdmetrics-venv/bin/pip install sdmetrics``) through
``experiments/peers/sdmetrics_quality.py`` (no synthdp import), on CSV files of at most 2000
sampled rows of each table (seed = round, as synthdp's ``sdmetrics_quality``; categorical
values mapped to the schema's levels and "other"). One subprocess scores every table of the run;
the scores of cached peer tables are cached too (``cache/relationships/sdmetrics/``). Without the
virtualenv (or with ``--no-sdmetrics``) the columns say n/a.

Randomness: synthdp's privacy noise is OpenDP's (never seeded) unless ``--seed`` is given (then
round r uses ``seed + r``: reproducible, NOT private); the report of round r (its queries and
its model's train/test split) uses seed r. The peers' noise is OpenDP's too (never seeded); their
decoding uses ``default_rng([0, round, crc32(table), crc32(peer)])``.

Writes ``experiments/results/relationships.md`` and ``relationships.json`` (``--out``).

Usage::

    python experiments/relationships.py                      # 5 rounds, every table, both settings, peers
    python experiments/relationships.py --rounds 1 --datasets pks --methods synthdp-default
    python experiments/relationships.py --rounds 3 --adult-rounds 2
    nice -n 10 python experiments/relationships.py --rounds 1 --peer-rounds 3 --out /tmp/rel.md   # fill the cache
    python experiments/relationships.py --rounds 5 --peer-cache-only   # re-render: cached peer runs only
    python experiments/relationships.py --rounds 5 --peer-rounds 3 --peers-from-record   # re-render without the cache
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import subprocess
import tempfile
import time
import warnings
import zlib
from pathlib import Path

import numpy as np
import pandas as pd
from baselines import LABELS as PEER_LABELS
from baselines import PeerFailed, PeerTimeout, PeerUnavailable, binned_peer, coded_peer
from common import (
    BOUNDS_NOTE,
    DATA_DIR,
    DATASETS,
    HERE,
    RESULTS_DIR,
    Record,
    add_peers_from_record,
    command_line,
    generated_by,
    load_dataset,
    log,
    read_json,
    read_record,
    record_note,
    record_path,
    write_json,
)

from synthdp import SmoothSynthesizer
from synthdp.study import STRONG_R, Schema, model_accuracy, utility_report

SCRIPT = "relationships.py"
TABLES = (*DATASETS, "adult", "pks_sex")
SCHEMA = DATA_DIR.parent / "configs" / "adult_schema.json"
SETTINGS = ((1.0, 1e-10), (1.0, 0.0))
#: Smooth queries per report: only to fill the report's section; the scores here do not use them.
N_QUERIES = 20
#: PKS: predict motor_UPDRS from the voice measures (total_UPDRS, nearly a linear function of it, dropped).
PKS_TARGET, PKS_DROP = "motor_UPDRS", "total_UPDRS"
ADULT_TARGET = "income"
SCORES = {
    "strong_ratio": "strong-pair ratio",
    "invented": "invented pairs",
    "column_shapes": "column shapes",
    "pair_trends": "column pair trends",
    "mean_2way_tv": "mean 2-way TV",
    "model_synth": "train synthetic, test real",
    "model_real": "train real, test real",
    "sdm_overall": "SDMetrics overall",
    "sdm_shapes": "SDMetrics Column Shapes",
    "sdm_pair_trends": "SDMetrics Column Pair Trends",
    "sdm_pair_trends_real_bins": "SDMetrics Column Pair Trends, synthetic cut on the real bins",
}
SYNTHDP = "synthdp-default"
#: synthdp's options besides the default: ``--favour relationships`` (numeric tables only: on mixed
#: tables it changes nothing, so it has no row there).
SYNTHDP_RELATIONSHIPS = "synthdp-relationships"
SYNTHDP_OPTIONS = {SYNTHDP: {}, SYNTHDP_RELATIONSHIPS: {"favour": "relationships"}}
MIXED_TABLES = ("adult", "pks_sex")
#: The peers, MST first (the order of their runs within a round).
PEER_METHODS = ("smartnoise-mst", "opendp-mst", "smartnoise-aim", "opendp-aim")
METHODS = (SYNTHDP, SYNTHDP_RELATIONSHIPS, *PEER_METHODS)
METHOD_LABELS = {SYNTHDP: "synthdp default", SYNTHDP_RELATIONSHIPS: "synthdp --favour relationships",
                 **{method: PEER_LABELS[method] for method in PEER_METHODS}}
#: The peers' only setting (zCDP mechanisms need delta > 0), privacy unit (synthdp's) and bins.
PEER_SETTING = (1.0, 1e-10)
PEER_UNIT = "replace-one"
PEER_BINS = 16
PEER_TIMEOUT = 1800.0
#: Seed of the peers' post-processing randomness (uniform decoding, the seed of their selection steps).
POST_SEED = 0
CACHE_DIR = RESULTS_DIR / "cache" / "relationships"
SDMETRICS_VENV = Path(os.environ.get("SYNTHDP_SDMETRICS_VENV", "/opt/sdmetrics-venv"))
SDMETRICS_SCRIPT = HERE / "peers" / "sdmetrics_quality.py"
#: Rows of each table given to SDMetrics (a random sample beyond that, as synthdp's sdmetrics_quality).
SDMETRICS_ROWS = 2000
SDMETRICS_TIMEOUT = 3600.0


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", nargs="+", default=list(TABLES), choices=TABLES)
    parser.add_argument("--rounds", type=int, default=5, help="releases per table and setting (default 5)")
    parser.add_argument("--adult-rounds", type=int, default=None, help="rounds on adult (default: --rounds)")
    parser.add_argument("--seed", type=int, default=None,
                        help="seed synthdp's noise (reproducible but NOT private); default: real OpenDP noise")
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR)
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "relationships.md")
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS,
                        help="synthdp's default, synthdp with --favour relationships (numeric tables), and/or "
                             "peers (default: all six)")
    parser.add_argument("--peer-rounds", type=int, default=3, help="runs per peer and table (default 3)")
    parser.add_argument("--peer-timeout", nargs="+", default=[], metavar="[PEER=]SECONDS",
                        help=f"kill a peer run after SECONDS (default {PEER_TIMEOUT:g}); "
                             "'900' for every peer, 'smartnoise-aim=600' for one")
    parser.add_argument("--peer-cache-only", action="store_true",
                        help="run no peer: score the cached peer runs only (re-rendering)")
    add_peers_from_record(parser, "relationships.json")
    parser.add_argument("--retry-failed", action="store_true", help="run again the peer runs recorded as failed")
    parser.add_argument("--no-sdmetrics", action="store_true", help="leave out SDMetrics' QualityReport")
    parser.add_argument("--cache-dir", type=Path, default=CACHE_DIR, help="cache of the peer runs")
    args = parser.parse_args(argv)
    if args.rounds < 1 or (args.adult_rounds is not None and args.adult_rounds < 1) or args.peer_rounds < 1:
        parser.error("--rounds, --adult-rounds and --peer-rounds must be >= 1")
    args.methods = [method for method in METHODS if method in args.methods]  # MST before AIM
    timeouts = dict.fromkeys(PEER_METHODS, PEER_TIMEOUT)
    for item in args.peer_timeout:
        method, _, value = item.rpartition("=")
        try:
            seconds = float(value)
        except ValueError:
            parser.error(f"--peer-timeout: '{item}' is not [PEER=]SECONDS")
        if method and method not in PEER_METHODS:
            parser.error(f"--peer-timeout: unknown peer '{method}' (choose from {', '.join(PEER_METHODS)})")
        for name in ([method] if method else PEER_METHODS):
            timeouts[name] = seconds
    args.peer_timeouts = timeouts
    args.peers_from_record = record_path(args.peers_from_record, RESULTS_DIR / "relationships.json")
    args.peer_cache_only = args.peer_cache_only or args.peers_from_record is not None
    return args


def setting_label(epsilon: float, delta: float) -> str:
    return f"({epsilon:g}, {delta:g})" if delta > 0 else f"ε = {epsilon:g}"


def scores(report: dict, model: dict | None) -> dict:
    """The scores of one release, from its utility report (and its model, if any)."""
    strong = (report["correlation"] or {}).get("strong_pairs") or {}
    invented = (report["correlation"] or {}).get("invented_pairs") or {}
    return {
        "strong_ratio": strong.get("ratio"),
        "invented": invented.get("invented"),
        "strong_pairs": strong.get("pairs"),
        "column_shapes": report["similarity"]["column_shapes"],
        "pair_trends": report["similarity"]["column_pair_trends"],
        "mean_2way_tv": report["pairs"]["tv"]["mean"],
        "model_synth": None if model is None else model["train_synth_test_real"],
        "model_real": None if model is None else model["train_real_test_real"],
        "model_metric": None if model is None else model["metric"],
        "sdm_overall": None, "sdm_shapes": None, "sdm_pair_trends": None, "sdm_pair_trends_real_bins": None,
        "sdmetrics": None,
    }


def load_table(name: str, data_dir: Path) -> tuple[pd.DataFrame, dict, dict | None]:
    """The real table, synthdp's fit keywords (bounds or schema) and the schema file's content (adult)."""
    if name == "adult":
        real = pd.read_csv(data_dir / "adult.csv")
        content = json.loads(SCHEMA.read_text())
        return real, {"schema": content}, content
    if name == "pks_sex":  # PKS with its binary sex column: the same numeric columns, as a mixed table
        real = pd.read_csv(data_dir / "pks_subjects.csv").drop(columns=["subject#"])
        real["sex"] = real["sex"].map({0: "male", 1: "female"})  # the UCI coding
        columns = {str(c): {"type": "continuous", "bounds": [float(real[c].min()), float(real[c].max())]}
                   for c in real.columns if c != "sex"}
        columns["sex"] = {"type": "binary", "levels": ["male", "female"]}
        content = {"columns": {str(c): columns[str(c)] for c in real.columns}}
        return real, {"schema": content}, content
    dataset = load_dataset(name, data_dir)
    return dataset.frame, {"bounds": dataset.bounds}, None


def score_table(name: str, real: pd.DataFrame, synthetic: pd.DataFrame, fit_kwargs: dict, round_: int) -> dict:
    """The scores of one synthetic table (report and model seeded by the round)."""
    report = utility_report(real, synthetic, target=ADULT_TARGET if name == "adult" else None,
                            n_queries=N_QUERIES, seed=round_, sdmetrics=False, **fit_kwargs)
    model = report["model"]
    if name == "pks":
        model = model_accuracy(real.drop(columns=PKS_DROP), synthetic.drop(columns=PKS_DROP), PKS_TARGET,
                               seed=round_)
    return scores(report, model)


def run_table(name: str, epsilon: float, delta: float, rounds: int, args: argparse.Namespace,
              quality: SDMetricsBatch | None = None, method: str = SYNTHDP, *, table: tuple | None = None,
              options: dict | None = None, scorer=score_table) -> list[dict]:
    """``rounds`` releases of synthdp (its default, or ``method``'s options) on table ``name`` and their scores.

    Other scripts pass the ``table`` (``(real, fit_kwargs, content)``, else :func:`load_table`'s), the
    estimator's ``options`` (else ``SYNTHDP_OPTIONS[method]``) and a ``scorer`` with
    :func:`score_table`'s signature.
    """
    real, fit_kwargs, content = load_table(name, args.data_dir) if table is None else table
    options = SYNTHDP_OPTIONS[method] if options is None else options
    runs = []
    for round_ in range(rounds):
        seed = None if args.seed is None else args.seed + round_
        start = time.perf_counter()
        synthetic = SmoothSynthesizer(epsilon=epsilon, delta=delta, seed=seed,
                                      **options).fit(real, **fit_kwargs).sample()
        fit_seconds = time.perf_counter() - start
        run = {"round": round_, "fit_seconds": fit_seconds, **scorer(name, real, synthetic, fit_kwargs, round_)}
        if quality is not None:
            run["sdmetrics"] = quality.add(real, synthetic, content, round_, keep=False)
        total = time.perf_counter() - start
        runs.append({**run, "seconds": total})
        log(f"{name} {method} {setting_label(epsilon, delta)} round {round_}: release {fit_seconds:.1f} s, "
            f"scored {total - fit_seconds:.1f} s; strong-pair ratio {runs[-1]['strong_ratio']}")
    return runs


# ------------------------------------------------------------------ peers
def _atomic_write(path: Path, write) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + f".{os.getpid()}.tmp")
    write(temporary)
    temporary.replace(path)


def peer_stem(method: str, epsilon: float, delta: float, round_: int, tag: str = f"bins{PEER_BINS}") -> str:
    """The cache name of one peer run (its table is ``{stem}.csv.gz``, its record ``{stem}.json``);
    ``tag`` names how the peer sees the columns (default: the 16 equal-width bins)."""
    return f"{method}_eps{epsilon:g}_delta{delta:g}_{PEER_UNIT}_{tag}_r{round_}"


def _mixed_codes(real: pd.DataFrame, content: dict) -> tuple[np.ndarray, list[int], Schema]:
    """adult's codes: levels (and "other") of the binary/categorical columns, 16 bins of the integer ones."""
    schema = Schema.from_dict(content, list(real.columns))
    codes, sizes = [], []
    for name in real.columns:
        spec = content["columns"][name]
        if spec["type"] in ("binary", "categorical"):
            column = schema.column(name)
            codes.append(column.level_codes(real[name]))
            sizes.append(len(column.all_levels))
        else:
            lower, upper = (float(b) for b in spec["bounds"])
            values = np.clip(real[name].to_numpy(dtype=float), lower, upper)
            codes.append(np.clip(np.floor(PEER_BINS * (values - lower) / (upper - lower)), 0, PEER_BINS - 1))
            sizes.append(PEER_BINS)
    return np.column_stack(codes).astype(int), sizes, schema


def _mixed_decode(codes: np.ndarray, real: pd.DataFrame, content: dict, schema: Schema,
                  rng: np.random.Generator) -> pd.DataFrame:
    """Codes -> levels, or values uniform within their bins (rounded for integer columns)."""
    columns = {}
    for j, name in enumerate(real.columns):
        spec = content["columns"][name]
        if spec["type"] in ("binary", "categorical"):
            levels = np.asarray(schema.column(name).all_levels, dtype=object)
            if schema.column(name).nullable:  # its last level holds the missing cells: decoded as missing
                levels[-1] = None
            columns[name] = levels[codes[:, j]]
            continue
        lower, upper = (float(b) for b in spec["bounds"])
        values = np.minimum(lower + (codes[:, j] + rng.uniform(0.0, 1.0, len(codes))) * (upper - lower) / PEER_BINS,
                            upper)
        columns[name] = np.clip(np.round(values), lower, upper).astype(np.int64) if spec["type"] == "integer" \
            else values
    return pd.DataFrame(columns, columns=list(real.columns))


def _read_table(path: Path, content: dict | None) -> pd.DataFrame:
    if content is None:
        return pd.read_csv(path)
    categorical = [name for name, spec in content["columns"].items() if spec["type"] in ("binary", "categorical")]
    nullable = {name: [""] for name, spec in content["columns"].items() if spec.get("nullable")}
    return pd.read_csv(path, dtype={name: str for name in categorical}, keep_default_na=False, na_values=nullable)


def generate_peer(method: str, real: pd.DataFrame, fit_kwargs: dict, content: dict | None, epsilon: float,
                  delta: float, rng: np.random.Generator, timeout: float) -> tuple[pd.DataFrame, dict]:
    """A peer's synthetic table and info: numeric tables on 16 bins of their bounds, mixed ones coded."""
    if content is None:
        synthetic = binned_peer(method, real, fit_kwargs["bounds"], epsilon, delta, bins=PEER_BINS, rng=rng,
                                unit=PEER_UNIT, timeout=timeout)
        return synthetic, dict(synthetic.attrs.pop("peer", {}))
    codes, sizes, schema = _mixed_codes(real, content)
    synthetic_codes, info = coded_peer(method, codes, sizes, epsilon, delta, rng=rng, unit=PEER_UNIT,
                                       timeout=timeout)
    info["sizes"] = sizes
    return _mixed_decode(synthetic_codes, real, content, schema, rng), info


def peer_run(method: str, name: str, real: pd.DataFrame, fit_kwargs: dict, content: dict | None, round_: int,
             args: argparse.Namespace, *, generate=generate_peer, tag: str = f"bins{PEER_BINS}",
             timeout: float | None = None) -> tuple[pd.DataFrame | None, dict]:
    """One run of a peer on a table: from the cache, or run now (and cached).

    Returns the synthetic table (None when there is none) and the run's record: ``status``
    ("ok", "timeout", "failed", "unavailable" or "not cached"), ``message``, the peer's ``info``
    (versions, rho, ``wall_seconds``, ...) and, for a timeout, the ``timeout`` in force. Other
    scripts pass their own ``generate`` (:func:`generate_peer`'s signature), the cache name's
    ``tag`` (:func:`peer_stem`) and the ``timeout`` (else ``args.peer_timeouts[method]``).
    """
    epsilon, delta = PEER_SETTING
    folder = args.cache_dir / name
    stem = peer_stem(method, epsilon, delta, round_, tag)
    record_path, table_path = folder / f"{stem}.json", folder / f"{stem}.csv.gz"
    record = read_json(record_path)
    timeout = args.peer_timeouts[method] if timeout is None else timeout
    if record is not None:
        if record["status"] == "ok" and table_path.exists():
            return _read_table(table_path, content), record
        retry = args.retry_failed or (record["status"] == "timeout" and timeout > record.get("timeout", math.inf))
        if record["status"] != "ok" and (not retry or args.peer_cache_only):
            return None, record
    if args.peer_cache_only:
        return None, {"status": "not cached", "message": "no cached run (--peer-cache-only)"}
    rng = np.random.default_rng([POST_SEED, round_, zlib.crc32(name.encode()), zlib.crc32(method.encode())])
    base = {"method": method, "table": name, "epsilon": epsilon, "delta": delta, "unit": PEER_UNIT,
            "bins": PEER_BINS if tag == f"bins{PEER_BINS}" else tag, "round": round_,
            "date": time.strftime("%Y-%m-%d %H:%M")}
    log(f"{name}/{method} round {round_}: running (timeout {timeout:g} s)")
    start = time.perf_counter()
    try:
        synthetic, info = generate(method, real, fit_kwargs, content, epsilon, delta, rng, timeout)
    except PeerUnavailable as error:
        return None, {**base, "status": "unavailable", "message": str(error)}
    except (PeerTimeout, PeerFailed) as error:
        status = "timeout" if isinstance(error, PeerTimeout) else "failed"
        record = {**base, "status": status, "message": str(error)[-1500:], "timeout": timeout,
                  "seconds": time.perf_counter() - start}
        write_json(record_path, record)
        log(f"{name}/{method} round {round_}: {status} after {record['seconds']:.0f} s: {record['message'][-300:]}")
        return None, record
    _atomic_write(table_path, lambda path: synthetic.to_csv(path, index=False, compression="gzip"))
    record = {**base, "status": "ok", "message": "", "info": info, "file": table_path.name}
    write_json(record_path, record)
    log(f"{name}/{method} round {round_}: done in {info.get('wall_seconds', float('nan')):.0f} s "
        f"(fit {info.get('fit_seconds', float('nan')):.0f} s)")
    return _read_table(table_path, content), record


def peer_entry(method: str, name: str) -> dict:
    """The (empty) results of a peer on a table, which :func:`add_peer_run` fills round by round."""
    epsilon, delta = PEER_SETTING
    return {"table": name, "method": method, "epsilon": epsilon, "delta": delta,
            "setting": setting_label(epsilon, delta), "status": "ok", "message": "", "runs": [], "records": []}


def add_peer_run(entry: dict, table: tuple, round_: int, args: argparse.Namespace, quality: SDMetricsBatch | None,
                 *, run=peer_run, scorer=score_table) -> None:
    """Round ``round_`` of ``entry``'s peer on its table (``(real, fit_kwargs, content)``): cached or run now
    (``run``: :func:`peer_run`'s signature), scored (``scorer``: :func:`score_table`'s) and added to the entry.
    A timeout or failure stops the peer on that table: ``entry["status"]`` says why, and later rounds do nothing."""
    if entry["status"] != "ok":  # a timeout or failure stops this peer on this table
        return
    method, name = entry["method"], entry["table"]
    real, fit_kwargs, content = table
    synthetic, record = run(method, name, real, fit_kwargs, content, round_, args)
    entry["records"].append({key: value for key, value in record.items() if key != "info"}
                            | {"info": {key: value for key, value in record.get("info", {}).items()
                                        if key != "command"}})
    if synthetic is None and record["status"] == "not cached" and entry["runs"]:
        entry["status"] = "done"  # fewer cached rounds than asked: use those, say nothing
        return
    if synthetic is None:
        entry["status"], entry["message"] = record["status"], record.get("message", "")
        entry["failed_round"] = round_
        entry["failed_seconds"] = record.get("seconds")
        return
    start = time.perf_counter()
    scored = {"round": round_, **scorer(name, real, synthetic, fit_kwargs, round_)}
    if quality is not None:
        scored["sdmetrics"] = quality.add(real, synthetic, content, round_, keep=True)
    info = record.get("info", {})
    scored.update({"seconds": info.get("wall_seconds"), "fit_seconds": info.get("fit_seconds"),
                   "score_seconds": time.perf_counter() - start})
    entry["runs"].append(scored)
    log(f"{name}/{method} round {round_}: scored; strong-pair ratio {scored['strong_ratio']}, "
        f"shapes {scored['column_shapes']:.3f}, pair trends {scored['pair_trends']:.3f}")


def run_peers(args: argparse.Namespace, quality: SDMetricsBatch | None) -> list[dict]:
    """Every requested peer on every table, round by round (MST before AIM within a round)."""
    peers = [method for method in args.methods if method in PEER_METHODS]
    tables = {name: load_table(name, args.data_dir) for name in args.datasets}
    entries = {(method, name): peer_entry(method, name) for method in peers for name in args.datasets}
    for round_ in range(args.peer_rounds):
        for method in peers:
            for name in args.datasets:
                add_peer_run(entries[method, name], tables[name], round_, args, quality)
    return list(entries.values())


def check_record(record: Record, args: argparse.Namespace) -> None:
    """Refuse a record whose peer rows are not the ones this run asks for."""
    recorded = record.settings(parse_args)
    record.require("--peer-rounds", args.peer_rounds, recorded["peer_rounds"])
    record.require("the peers' (epsilon, delta)", list(PEER_SETTING), record.content["peer_setting"])
    record.require("the peers' privacy unit", PEER_UNIT, record.content["peer_unit"])
    record.require("the peers' bins", PEER_BINS, record.content["peer_bins"])
    record.require_within("--datasets", args.datasets, recorded["datasets"])
    record.require_within("peer rows", [f"{m} on {name}" for name in args.datasets for m in args.methods
                                        if m in PEER_METHODS],
                          [f"{e['method']} on {e['table']}" for e in record.content["runs"]
                           if e["method"] in PEER_METHODS])


def peers_from_record(entries: list[dict], record: Record) -> list[dict]:
    """The peer entries of :func:`run_peers` (cache only), each the record's where the cache does not answer it."""
    recorded = {(e["table"], e["method"]): e for e in record.content["runs"] if e["method"] in PEER_METHODS}
    return [record.take(entry, recorded.get((entry["table"], entry["method"])),
                        complete=entry["status"] not in ("done", "not cached"), cached=len(entry["runs"]),
                        runs="runs", what=f"{entry['method']} row on {entry['table']}") for entry in entries]


# ------------------------------------------------------------------ SDMetrics
class SDMetricsBatch:
    """SDMetrics' QualityReport of many (real, synthetic) pairs, in one subprocess of its virtualenv.

    :meth:`add` writes the (sampled) tables to CSV and returns a key; :meth:`run` scores every
    pending pair; :meth:`get` returns a pair's scores. Pairs added with ``keep=True`` (the cached
    peer tables, whose scores do not change) are cached under ``cache_dir`` by the hash of their CSVs.
    """

    def __init__(self, cache_dir: Path, venv: Path = SDMETRICS_VENV) -> None:
        self.python = venv / "bin" / "python"
        self.cache_dir = cache_dir
        self.folder = tempfile.TemporaryDirectory(prefix="relationships_sdmetrics_")
        self.pending: dict[str, dict] = {}
        self.results: dict[str, dict] = {}
        self.keep: set[str] = set()
        self.message = "" if self.python.exists() else f"{self.python} not found (no SDMetrics virtualenv)"

    @staticmethod
    def frames(real: pd.DataFrame, synthetic: pd.DataFrame, content: dict | None,
               seed: int) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
        """At most SDMETRICS_ROWS sampled rows of each, numeric columns as floats, categorical ones as levels."""
        rng = np.random.default_rng(seed)
        schema = None if content is None else Schema.from_dict(content, list(real.columns))
        categorical = set() if schema is None else {column.name for column in schema.declared}
        sdtypes = {str(name): "categorical" if name in categorical else "numerical" for name in real.columns}
        samples = []
        for frame in (real, synthetic[list(real.columns)]):
            rows = (np.arange(len(frame)) if len(frame) <= SDMETRICS_ROWS
                    else np.sort(rng.choice(len(frame), SDMETRICS_ROWS, replace=False)))
            sample = frame.iloc[rows].reset_index(drop=True)
            columns = {}
            for name in real.columns:
                if name in categorical:
                    column = schema.column(name).scoring()
                    columns[name] = np.asarray(column.all_levels, dtype=object)[column.level_codes(sample[name])]
                else:
                    columns[name] = sample[name].to_numpy(dtype=float)
            samples.append(pd.DataFrame(columns, columns=list(real.columns)))
        return samples[0], samples[1], sdtypes

    def add(self, real: pd.DataFrame, synthetic: pd.DataFrame, content: dict | None, seed: int,
            keep: bool) -> str | None:
        if self.message:
            return None
        real_sample, synth_sample, sdtypes = self.frames(real, synthetic, content, seed)
        real_csv, synth_csv = real_sample.to_csv(index=False), synth_sample.to_csv(index=False)
        key = hashlib.sha256("\0".join([json.dumps(sdtypes), real_csv, synth_csv]).encode()).hexdigest()[:20]
        if keep:
            self.keep.add(key)
            cached = read_json(self.cache_dir / f"{key}.json")
            if cached is not None and "column_pair_trends_real_bins" in cached:  # else scored before it existed
                self.results[key] = cached
                return key
        if key not in self.pending:
            folder = Path(self.folder.name)
            (folder / f"{key}_real.csv").write_text(real_csv, encoding="utf-8")
            (folder / f"{key}_synthetic.csv").write_text(synth_csv, encoding="utf-8")
            self.pending[key] = {"real": str(folder / f"{key}_real.csv"),
                                 "synthetic": str(folder / f"{key}_synthetic.csv"), "sdtypes": sdtypes}
        return key

    def run(self) -> None:
        if self.message or not self.pending:
            return
        keys = list(self.pending)
        folder = Path(self.folder.name)
        jobs_path, out_path = folder / "jobs.json", folder / "scores.json"
        jobs_path.write_text(json.dumps({"jobs": [self.pending[key] for key in keys]}))
        log(f"SDMetrics: scoring {len(keys)} tables in {self.python.parent.parent}")
        start = time.perf_counter()
        try:
            done = subprocess.run([str(self.python), str(SDMETRICS_SCRIPT), "--jobs", str(jobs_path),
                                   "--out", str(out_path)], capture_output=True, text=True, timeout=SDMETRICS_TIMEOUT,
                                  env=dict(os.environ, PYTHONWARNINGS="ignore"))
        except subprocess.TimeoutExpired:
            self.message = f"SDMetrics did not finish within {SDMETRICS_TIMEOUT:.0f} s"
            return
        if done.returncode != 0:
            self.message = f"SDMetrics failed: {done.stderr.strip()[-500:]}"
            return
        output = json.loads(out_path.read_text())
        for key, result in zip(keys, output["results"]):
            result["version"] = output["sdmetrics"]
            self.results[key] = result
            if key in self.keep and "error" not in result:
                write_json(self.cache_dir / f"{key}.json", result)
        self.pending.clear()
        log(f"SDMetrics: done in {time.perf_counter() - start:.0f} s")

    def fill(self, runs: list[dict]) -> None:
        """Put the scores into the runs (``sdm_*``; ``sdmetrics`` becomes the whole result)."""
        for run in runs:
            result = self.results.get(run.get("sdmetrics") or "")
            run["sdmetrics"] = result
            if result and "error" not in result:
                run.update({"sdm_overall": result["overall"], "sdm_shapes": result["column_shapes"],
                            "sdm_pair_trends": result["column_pair_trends"],
                            "sdm_pair_trends_real_bins": result.get("column_pair_trends_real_bins")})


def mean_se(values: list) -> tuple[float | None, float | None]:
    values = [v for v in values if v is not None]
    if not values:
        return None, None
    mean = float(np.mean(values))
    return mean, (float(np.std(values, ddof=1) / math.sqrt(len(values))) if len(values) > 1 else None)


def present(values: list) -> list:
    """The values that were scored (a missing score is NaN here): what :func:`cell` averages."""
    return [value for value in values if not np.isnan(value)]


def cell(values: list) -> str:
    mean, se = mean_se(values)
    if mean is None:
        return "n/a"
    return f"{mean:.3f}" if se is None else f"{mean:.3f} ± {se:.3f}"


def status_note(entry: dict) -> str:
    """Why a method's rows stop short ("" when every requested round is there)."""
    status = entry.get("status", "ok")
    if status in ("ok", "done"):
        return ""
    where = f"round {entry.get('failed_round', 0) + 1}" if entry["runs"] else "run"
    if status == "timeout":
        return f"{where}: timeout (killed after {entry.get('failed_seconds') or 0:.0f} s)"
    if status == "failed":
        return f"{where}: failed"
    return f"{where}: {status}"


def score(run: dict, key: str, table: str) -> float | None:
    """One run's score; on an all-numeric table SDMetrics scores every pair by correlation, without bins,
    so a run recorded before the real-bins score had it (sdm_pair_trends_real_bins = sdm_pair_trends)."""
    value = run.get(key)
    if value is None and key == "sdm_pair_trends_real_bins" and table not in MIXED_TABLES:
        value = run.get("sdm_pair_trends")
    return value


def summarise(results: list[dict]) -> list[dict]:
    rows = []
    for entry in results:
        runs = entry["runs"]
        seconds = [run["seconds"] for run in runs if run.get("seconds") is not None]
        row = {"table": entry["table"], "method": entry.get("method", SYNTHDP), "setting": entry["setting"],
               "rounds": len(runs), "status": entry.get("status", "ok"), "note": status_note(entry),
               "message": entry.get("message", ""),
               "strong_pairs": runs[0]["strong_pairs"] if runs else None,
               "model_metric": runs[0]["model_metric"] if runs else None,
               "seconds_per_round": float(np.mean(seconds)) if seconds else None}
        if entry.get("from_record"):
            row["from_record"] = entry["from_record"]
        for key in SCORES:
            values = [score(run, key, entry["table"]) for run in runs]
            row[key] = dict(zip(("mean", "se"), mean_se(values)))
            row[key]["cell"] = cell(values)
        rows.append(row)
    return rows


def render(args: argparse.Namespace, argv: list[str] | None, rows: list[dict], seconds: float,
           quality: SDMetricsBatch | None) -> str:
    peers = [method for method in args.methods if method in PEER_METHODS]
    peer_rows = [row for row in rows if row["method"] in PEER_METHODS]
    note = record_note([(f"{METHOD_LABELS[row['method']]} on {row['table']}", row["from_record"]) for row in peer_rows
                        if row.get("from_record")], len(peer_rows))
    versions = sorted({run_version for row in rows for run_version in [row.get("sdmetrics_version")] if run_version})
    lines = [
        "# Relationships between columns: synthdp's default and the peers",
        "",
        generated_by(command_line(SCRIPT, argv)) + f"; {seconds:.0f} s in all.",
        "",
        *([note, ""] if note else []),
        "synthdp's default (`SmoothSynthesizer` with only epsilon and delta set), synthdp with "
        "`favour=\"relationships\"` (numeric tables; on mixed ones it changes nothing) and the peers on each table, "
        "mean ± standard error over the rounds (the standard error is the sample standard deviation over √rounds). "
        "Scores (`synthdp evaluate` reports them all; docs/relationships.md says what they mean):",
        "",
        f"* **strong-pair ratio**: over the pairs of numeric columns with real \\|Pearson r\\| > {STRONG_R:g} "
        "(*k* of them), the mean synthetic \\|r\\| over the mean real \\|r\\| (1: kept, 0: independent);",
        "* **invented**: how many pairs of numeric columns with real \\|r\\| < 0.1 the synthetic table shows above "
        "\\|r\\| = 0.3 (correlations the data do not have; synthdp.evaluation.metrics.invented_pairs); 0 the best; "
        "n/a for a peer row taken from a record made before this score;",
        "* **shapes** / **pair trends**: synthdp's own Column Shapes (mean of 1 − KS per numeric column, "
        "1 − TV per categorical one) and Column Pair Trends (mean pair similarity: 1 − \\|r real − r synthetic\\|/2 "
        "for numeric pairs, 1 − 2-way TV for pairs with a categorical column), on every row; 1 the best;",
        "* **2-way TV**: mean total-variation distance over all pairs of columns (numeric columns in 16 "
        "equal-width bins of their bounds); 0 the best;",
        "* **model**: train on synthetic rows, test on held-out real rows, beside the same model "
        "(scikit-learn's histogram gradient boosting) trained on the real training rows. PKS: motor_UPDRS from "
        "the voice measures, total_UPDRS dropped from both tables (R²); adult: income (accuracy);",
        "* **SDM overall / SDM shapes / SDM pair trends**: SDMetrics' own QualityReport"
        + (f" (sdmetrics {', '.join(versions)})" if versions else "")
        + f", on at most {SDMETRICS_ROWS} randomly sampled rows of each table (seed = round), run in its own "
        "virtualenv (sdmetrics needs pandas < 3) by experiments/peers/sdmetrics_quality.py. Its Column Pair Trends "
        "counts only the pairs with real \\|r\\| ≥ 0.5 or association ≥ 0.3 (n/a when there is none), unlike "
        "synthdp's, which averages over every pair; 1 the best.",
        "* **SDM pair trends, real bins**: the same Column Pair Trends with the synthetic numeric columns cut on "
        "the real sample's bin edges. SDMetrics' QualityReport cuts each table's numeric columns on that table's "
        "own 10 equal-width bins, so a synthetic sample whose range differs from the real one (adult's "
        "education-num = 1, 0.16 % of the rows, missing from a 2 000-row sample) is scored on shifted bins; "
        "ContingencySimilarity itself, given `continuous_column_names`, cuts both on the real edges "
        "(experiments/peers/sdmetrics_quality.py). The same as SDM pair trends on the all-numeric tables, "
        "whose pairs are scored by correlation.",
        "",
        BOUNDS_NOTE + " adult uses configs/adult_schema.json (public levels and integer bounds). pks_sex is PKS "
        "read from pks_subjects.csv with its sex column as a binary column (subject# dropped): the same numeric "
        "columns as PKS, as a mixed table.",
        "",
        "**Peers** (" + (", ".join(METHOD_LABELS[m] for m in peers) if peers else "none requested") + "; "
        "experiments/peers/README.md): zCDP mechanisms, so only at (ε, δ) = (1, 10⁻¹⁰), with ρ converted from "
        "(ε, δ) as OpenDP does, in synthdp's privacy unit **replace-one** (smartnoise: ρ/4 by zCDP group privacy; "
        "OpenDP: `contributions=2`). Numeric tables: every column in 16 equal-width bins of the same public bounds "
        "as synthdp's, synthetic codes decoded uniformly within their bins. adult: binary and categorical columns "
        "on the schema's levels (plus \"other\" for categorical ones), integer columns in 16 equal-width bins of "
        "the schema's bounds, decoded uniformly within the bin and rounded. Each peer run's synthetic table is "
        "cached (experiments/results/cache/relationships/, local); its rows here are scored from that cache"
        + (" where it has them, the others taken from the recorded run named above. " if note else ". ") +
        "A run longer than its time limit is killed and shown as a timeout; the later rounds of that peer on that "
        "table are then not run.",
        "",
    ]
    header = ("| table | method | rounds | *k* | strong-pair ratio | invented | shapes | pair trends | 2-way TV "
              "| model: synthetic → real | model: real → real | SDM overall | SDM shapes | SDM pair trends "
              "| SDM pair trends, real bins | s / round |")
    for setting in dict.fromkeys(row["setting"] for row in rows):
        lines += [f"## {setting}", ""]
        if setting != setting_label(*PEER_SETTING) and peers:
            lines += ["No peer here: MST and AIM are zCDP mechanisms and need δ > 0.", ""]
        lines += [header, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for row in (row for row in rows if row["setting"] == setting):
            label = METHOD_LABELS[row["method"]]
            if row["rounds"] == 0:
                lines.append(f"| {row['table']} | {label} | 0 | | {row['note'] or row['status']} "
                             "| | | | | | | | | | | |")
                continue
            metric = f" ({row['model_metric']})" if row["model_metric"] else ""
            rounds = f"{row['rounds']}" + (f" ({row['note']})" if row["note"] else "")
            seconds_cell = "n/a" if row["seconds_per_round"] is None else f"{row['seconds_per_round']:.1f}"
            lines.append(
                f"| {row['table']} | {label} | {rounds} | {row['strong_pairs']} "
                f"| {row['strong_ratio']['cell']} | {row['invented']['cell']} | {row['column_shapes']['cell']} "
                f"| {row['pair_trends']['cell']} "
                f"| {row['mean_2way_tv']['cell']} | {row['model_synth']['cell']}{metric} "
                f"| {row['model_real']['cell']} | {row['sdm_overall']['cell']} | {row['sdm_shapes']['cell']} "
                f"| {row['sdm_pair_trends']['cell']} | {row['sdm_pair_trends_real_bins']['cell']} | {seconds_cell} |")
        lines.append("")
    lines += [
        "s / round: synthdp: one release and its scoring; a peer: the wall time of its run (the peer's subprocess: "
        "interpreter start-up, JAX compilation, fit, sampling, CSV I/O), measured when it ran (the cache keeps it); "
        "both on a machine shared with other jobs.",
    ]
    if quality is None:
        lines += ["", "SDMetrics: not run (--no-sdmetrics)."]
    elif quality.message:
        lines += ["", f"SDMetrics: {quality.message}."]
    failures = [row for row in rows if row["status"] not in ("ok", "done")]
    if failures:
        lines += ["", "Runs that stopped short:", ""]
        for row in failures:
            lines.append(f"* {row['table']}, {METHOD_LABELS[row['method']]}: {row['note']}"
                         + (f" — {row['message'][-300:]}" if row["message"] else ""))
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    record = read_record(args.peers_from_record) if args.peers_from_record else None  # before anything is written
    if record is not None:
        check_record(record, args)
    warnings.simplefilter("ignore")
    start = time.perf_counter()
    quality = None if args.no_sdmetrics else SDMetricsBatch(args.cache_dir / "sdmetrics")
    if quality is not None and quality.message:
        log(f"SDMetrics: {quality.message}")
    results = []
    for method in (method for method in SYNTHDP_OPTIONS if method in args.methods):
        for epsilon, delta in SETTINGS:
            for name in args.datasets:
                if method != SYNTHDP and name in MIXED_TABLES:
                    continue
                rounds = args.adult_rounds if name == "adult" and args.adult_rounds is not None else args.rounds
                results.append({"table": name, "method": method, "epsilon": epsilon, "delta": delta,
                                "setting": setting_label(epsilon, delta), "status": "ok", "message": "",
                                "runs": run_table(name, epsilon, delta, rounds, args, quality, method)})
    peers = run_peers(args, quality)
    results += peers if record is None else peers_from_record(peers, record)
    if quality is not None:
        quality.run()
        for entry in results:
            if not entry.get("from_record"):  # a recorded row's runs hold their SDMetrics scores already
                quality.fill(entry["runs"])
    # one block per setting; in it, the tables in order and the methods in order
    order = {(setting_label(e, d), name, method): i for i, (e, d, name, method) in enumerate(
        (e, d, name, method) for e, d in SETTINGS for name in args.datasets for method in METHODS)}
    results.sort(key=lambda entry: order[entry["setting"], entry["table"], entry["method"]])
    seconds = time.perf_counter() - start
    rows = summarise(results)
    for row, entry in zip(rows, results):
        versions = {run["sdmetrics"].get("version") for run in entry["runs"] if run.get("sdmetrics")}
        row["sdmetrics_version"] = ", ".join(sorted(v for v in versions if v)) or None
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(render(args, argv, rows, seconds, quality), encoding="utf-8")
    write_json(args.out.with_suffix(".json"), {"command": command_line(SCRIPT, argv), "settings": vars(args),
                                               "seconds": seconds,
                                               "peer_setting": list(PEER_SETTING), "peer_unit": PEER_UNIT,
                                               "peer_bins": PEER_BINS, "summary": rows, "runs": results})
    log(f"wrote {args.out} and {args.out.with_suffix('.json')} ({seconds:.0f} s)")


if __name__ == "__main__":
    main()
