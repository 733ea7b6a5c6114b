"""Small tables: synthdp's default (and variants) against the peers, where most sensitive tables live.

The measurement of the issue "Small tables: keep their relationships and beat the peers where
most sensitive tables live". Eight real tables of 150-1993 rows (data/README.md): the
development set iris, glass, yacht, heart_cleveland, pima, energy (150-768 rows) and WDBC and
CRM (569 x 30, 1993 x 100).

* Numeric tables (yacht, pima, energy, wdbc, crm): bounds are each column's min and max, taken as
  public (:data:`common.BOUNDS_NOTE`), a column typed ``"integer"`` in them where every value is an
  integer (``{"bounds": [lo, hi], "type": "integer"}``: pima's counts and class, energy's
  orientation and glazing_area_distribution).
* Mixed tables (iris, glass, heart_cleveland): ``configs/{table}_schema.json``: numeric columns with
  min/max bounds (integer where integer-valued), the class and code columns binary or categorical on
  their publicly documented levels (glass: all 7 UCI classes, one absent from the data; heart: the
  UCI codes, as the text the file writes them in, "1.0"; ca and thal ``"nullable": true``).

Methods, at (epsilon, delta) = (1, 1e-10):

* ``synthdp-default``: ``SmoothSynthesizer(epsilon, delta)``, nothing else set; ``synthdp-relationships``:
  ``favour="relationships"`` (numeric tables only); ``--variant NAME=JSON`` adds ``synthdp-NAME``,
  ``SmoothSynthesizer(epsilon, delta, **JSON)`` (candidate defaults), on every table;
* peers (``experiments/peers/``, each in its virtualenv), all in synthdp's privacy unit,
  replace-one: smartnoise-synth MST and AIM and OpenDP dp.mbi MST and AIM as in
  experiments/relationships.py (numeric tables on 16 equal-width bins of the bounds, decoded
  uniformly within the bin, integer columns then rounded; mixed tables with their levels coded and
  their numeric columns on 16 bins, a nullable column's missing cells as a level of their own,
  decoded back to missing cells); dpmm 0.1.9's MST, AIM and PrivBayes (``baselines.dpmm_peer``: DP
  PrivTree bins inside the same bounds, its share out of the same total budget; a missing cell
  given to dpmm as a declared level of its own, decoded back to a missing cell). dpmm's PrivBayes
  runs with ``privbayes_selection="sound"``: its published structure selection is not DP as
  calibrated (experiments/peers/README.md).

Scores of every release (relationships.py's ``score_table`` and ``SDMetricsBatch``, plus the smooth
queries): SDMetrics' QualityReport (overall, Column Shapes, Column Pair Trends; in its own
virtualenv), the strong-pair ratio (numeric pairs of real |r| > 0.5; None without such a pair),
the mean 2-way TV (numeric columns in 16 equal-width bins of their bounds), and the worst-case
relative error of ``--queries`` random smooth queries (sums of 10 Gaussian kernels, the papers'
protocol) at sigma = 2, 4, 6, 8, 10 on the numeric columns mapped onto [-1, 1] by their bounds; the
query set of a table is fixed by (``--query-seed``, crc32(table)) (``common.query_set``), so every
method meets the same queries.

A reference row, no release (``--no-reference`` leaves it out): the real table with each column
shuffled on its own (``run_shuffled``), exact one-way marginals and no dependence: about the best a
release that measures no pair can give (moments too noisy to count may still carry a little of the
pairs); its smooth-query error is the cost of independence alone, and what a release adds above it
is mostly its noise's.

Pure epsilon = 1 (delta = 0): synthdp's default (and the variants), the mean 2-way TV beside
issue 18's baseline, every column drawn independently from its own noisy one-way histogram over
the scorer's cells (``adult_pairs.independent_table``: Laplace noise, epsilon split evenly over the
columns, counts clipped at 0; numpy's noise, seeded per round: a baseline for the score, not a
release). The peers are zCDP mechanisms: no peer there.

Peer runs are cached as relationships.py caches them (``relationships.peer_run``), under
``experiments/results/cache/small_tables/{table}/`` (git ignores it), e.g.
``dpmm-aim_eps1_delta1e-10_replace-one_privtree_r0``; SDMetrics' scores of cached peer tables under
``.../small_tables/sdmetrics/``. A run is killed after its time limit (``--peer-timeout``; default
1800 s, on crm 1200 s for every AIM and dpmm peer), recorded as a timeout and shown, and the later
rounds of that peer on that table are not run; a failure is recorded and shown too. The peer runs
go table by table, in ``--tables``' order (the default: the smallest first, crm last), one at a
time. synthdp's rows (and the pure-epsilon baseline's) are always recomputed (seconds).

``--peers-from-record [JSON]`` (for a machine without the cache, e.g. a fresh checkout) implies
``--peer-cache-only``, and a peer row (a peer on a table) that the cache does not answer whole is
taken, as scored (its rounds' scores, SDMetrics' included, timings, records, timeouts and
failures), from the recorded results (default: the committed
``experiments/results/small_tables.json``, read before anything is written) instead of showing as
not cached. It is marked ``"from_record": "<command> on <date>"`` in the JSON written, so a later
re-render with the option takes it again, and the markdown says which rows and from which run.
The pure-epsilon baseline is no peer: it is recomputed. ``--queries``, ``--query-seed``,
``--peer-rounds`` and the time limit of every peer asked on every table asked must be the
record's, every table of ``--tables`` and every peer row asked in it, and the peers' setting and
unit the same, or it refuses in one line.

Randomness: synthdp's noise is OpenDP's (never seeded) unless ``--seed`` is given (round r then
uses seed + r: reproducible, NOT private). The peers' noise is OpenDP's (never seeded), their
post-processing seeded as in relationships.py.

Writes ``experiments/results/small_tables.md`` and ``.json`` (``--out``).

Usage::

    python experiments/small_tables.py                                     # everything: 5 rounds, 3 per peer
    python experiments/small_tables.py --tables iris heart_cleveland --methods synthdp-default --no-sdmetrics
    python experiments/small_tables.py --variant lowrank='{"correlation_share": 0.3}' --peer-cache-only
    nice -n 10 python experiments/small_tables.py --tables wdbc --methods dpmm-aim --peer-timeout dpmm-aim=2400
    python experiments/small_tables.py --seed 1000 --peer-cache-only       # re-render from the cached peers
    python experiments/small_tables.py --tables iris glass heart_cleveland --rounds 10 --peers-from-record  # no cache
"""

from __future__ import annotations

import argparse
import functools
import json
import time
import warnings
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from adult_pairs import independent_table
from baselines import DPMM_PEERS, dpmm_peer
from common import (
    BOUNDS_NOTE,
    DATA_DIR,
    QUERY_SEED,
    RESULTS_DIR,
    Dataset,
    Record,
    add_peers_from_record,
    command_line,
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
from harness import worst_errors
from relationships import (
    METHOD_LABELS,
    PEER_SETTING,
    PEER_UNIT,
    SDMETRICS_ROWS,
    SYNTHDP,
    SYNTHDP_OPTIONS,
    SYNTHDP_RELATIONSHIPS,
    SDMetricsBatch,
    add_peer_run,
    cell,
    generate_peer,
    mean_se,
    peer_entry,
    peer_run,
    run_table,
    score_table,
    status_note,
)

from synthdp import SmoothSynthesizer
from synthdp.study import MISSING_LABEL, SIGMAS, STRONG_R, Schema, numeric_schema

SCRIPT = "small_tables.py"
CONFIGS = DATA_DIR.parent / "configs"
#: The eight tables, the smallest first (the order of the peer runs), crm last.
TABLES = ("iris", "glass", "yacht", "heart_cleveland", "pima", "energy", "wdbc", "crm")
MIXED_TABLES = ("iris", "glass", "heart_cleveland")
MST_PEERS = ("smartnoise-mst", "opendp-mst", "dpmm-mst")
AIM_PEERS = ("smartnoise-aim", "opendp-aim", "dpmm-aim")
PEERS = (*MST_PEERS, *AIM_PEERS, "dpmm-privbayes")
METHODS = (SYNTHDP, SYNTHDP_RELATIONSHIPS, *PEERS)
LABELS = {**METHOD_LABELS, "dpmm-mst": "dpmm MST", "dpmm-aim": "dpmm AIM",
          "dpmm-privbayes": "dpmm PrivBayes (sound selection)",
          "real-shuffled": "*reference: the real table, each column shuffled (no privacy)*"}
PURE_SETTING = (1.0, 0.0)
DEFAULT_TIMEOUT = 1800.0
#: Time limits on crm (100 columns): AIM and dpmm may take hours there.
CRM_TIMEOUTS = dict.fromkeys(("smartnoise-aim", "opendp-aim", *DPMM_PEERS), 1200.0)
N_QUERIES = 2000
#: Seed of the independent baseline's noise and sampling (numpy; with the round and crc32(table)).
BASELINE_SEED = 0
#: The reference row of the real table's columns shuffled apart (no privacy; ``run_shuffled``), and its seed.
SHUFFLED = "real-shuffled"
SHUFFLE_SEED = 1
SCORES = {
    "sdm_overall": "SDM overall",
    "sdm_shapes": "SDM shapes",
    "sdm_pair_trends": "SDM pair trends",
    "strong_ratio": "strong-pair ratio",
    "mean_2way_tv": "2-way TV",
    **{f"rel_{sigma:g}": f"rel. err. σ={sigma:g}" for sigma in SIGMAS},
}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     epilog=__doc__.split("\n\n", 1)[1],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", nargs="+", default=list(TABLES), choices=TABLES,
                        help="tables, in the order the peers run on them (default: all eight, smallest first)")
    parser.add_argument("--rounds", type=int, default=5, help="releases of each synthdp method per table (default 5)")
    parser.add_argument("--peer-rounds", type=int, default=3, help="runs of each peer per table (default 3)")
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS,
                        help="synthdp's default, synthdp with favour='relationships' (numeric tables) and/or peers "
                             "(default: all); the --variant methods are added to these")
    parser.add_argument("--variant", action="append", default=[], metavar="NAME=JSON",
                        help="add method synthdp-NAME: SmoothSynthesizer(epsilon, delta, **JSON), e.g. "
                             "lowrank='{\"correlation_share\": 0.3}' (repeat for several)")
    parser.add_argument("--seed", type=int, default=None,
                        help="seed synthdp's noise, round r with SEED + r (reproducible but NOT private); "
                             "default: OpenDP's noise")
    parser.add_argument("--queries", type=int, default=N_QUERIES,
                        help=f"random smooth queries per table (default {N_QUERIES})")
    parser.add_argument("--query-seed", type=int, default=QUERY_SEED,
                        help="seed of the query sets (with crc32 of the table's name)")
    parser.add_argument("--peer-timeout", nargs="+", default=[], metavar="[TABLE:][PEER=]SECONDS",
                        help=f"kill a peer run after SECONDS (default {DEFAULT_TIMEOUT:g}; on crm "
                             f"{CRM_TIMEOUTS['dpmm-aim']:g} for the AIM and dpmm peers): '900' for every peer and "
                             "table, 'dpmm-aim=2400' for one peer, 'crm:600' or 'crm:opendp-aim=600' for one table")
    parser.add_argument("--peer-cache-only", action="store_true",
                        help="run no peer: score the cached peer runs only (re-rendering)")
    add_peers_from_record(parser, "small_tables.json")
    parser.add_argument("--retry-failed", action="store_true", help="run again the peer runs recorded as failed")
    parser.add_argument("--no-sdmetrics", action="store_true", help="leave out SDMetrics' QualityReport")
    parser.add_argument("--no-reference", action="store_true",
                        help="leave out the reference row of the real table's columns shuffled apart (no privacy)")
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR)
    parser.add_argument("--cache-dir", type=Path, default=RESULTS_DIR / "cache" / "small_tables",
                        help="cache of the peer runs")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "small_tables.md",
                        help="the markdown written (the JSON beside it)")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.peer_rounds < 1 or args.queries < 1:
        parser.error("--rounds, --peer-rounds and --queries must be >= 1")
    args.methods = [method for method in METHODS if method in args.methods]
    args.variants = {}
    for item in args.variant:
        name, _, text = item.partition("=")
        try:
            options = json.loads(text)
        except json.JSONDecodeError as error:
            parser.error(f"--variant {item!r}: not NAME=JSON ({error})")
        if not name or not isinstance(options, dict):
            parser.error(f"--variant {item!r}: give NAME=JSON with a JSON object of SmoothSynthesizer options")
        if f"synthdp-{name}" in METHODS or f"synthdp-{name}" in args.variants:
            parser.error(f"--variant: the name {name!r} is taken")
        if {"epsilon", "delta", "seed"} & set(options):
            parser.error(f"--variant {name}: epsilon, delta and seed are the run's (the settings and --seed)")
        try:
            _ = SmoothSynthesizer(**options).config  # unknown or invalid options fail here, not mid-run
        except Exception as error:  # any invalid option is a usage error
            parser.error(f"--variant {name}: {error}")
        args.variants[f"synthdp-{name}"] = options
    timeouts = {(table, peer): CRM_TIMEOUTS.get(peer, DEFAULT_TIMEOUT) if table == "crm" else DEFAULT_TIMEOUT
                for table in TABLES for peer in PEERS}
    for item in args.peer_timeout:
        where, _, rest = item.rpartition(":")
        peer, _, value = rest.rpartition("=")
        try:
            seconds = float(value)
        except ValueError:
            parser.error(f"--peer-timeout: '{item}' is not [TABLE:][PEER=]SECONDS")
        if where and where not in TABLES or peer and peer not in PEERS:
            parser.error(f"--peer-timeout: unknown table or peer in '{item}'")
        for key in timeouts:
            if key[0] == (where or key[0]) and key[1] == (peer or key[1]):
                timeouts[key] = seconds
    args.peer_timeouts = timeouts
    args.peers_from_record = record_path(args.peers_from_record, RESULTS_DIR / "small_tables.json")
    args.peer_cache_only = args.peer_cache_only or args.peers_from_record is not None
    return args


# ------------------------------------------------------------------ tables
@dataclass
class SmallTable:
    """One table: the real rows, synthdp's fit keywords (bounds or schema), the schema's content (mixed
    tables), its numeric columns with their bounds (the smooth queries' view), and the query set's true answers."""

    name: str
    real: pd.DataFrame
    fit_kwargs: dict
    content: dict | None
    numeric: Dataset
    queries: object = None
    true: np.ndarray | None = None

    @property
    def triple(self) -> tuple:
        """``(real, fit_kwargs, content)``, as relationships.py passes a table."""
        return self.real, self.fit_kwargs, self.content

    @property
    def plain_bounds(self) -> dict[str, list[float]]:
        """``{column: [lo, hi]}`` of the numeric columns (the peers' bins)."""
        return {c: [float(lo), float(hi)] for c, lo, hi in zip(self.numeric.frame.columns, self.numeric.lower,
                                                               self.numeric.upper)}

    @property
    def schema(self) -> Schema:
        """The scorer's schema (numeric columns in bins of their bounds, the others on their levels)."""
        if self.content is None:
            return numeric_schema(self.plain_bounds)
        return Schema.from_dict(self.content, list(self.real.columns))

    def shape(self) -> str:
        return f"{len(self.real)} × {self.real.shape[1]}"


def load_small(name: str, data_dir: Path, n_queries: int, query_seed: int) -> SmallTable:
    """A table with its bounds (numeric: min/max, integer-valued columns typed integer) or schema file, and its
    fixed query set on the numeric columns."""
    if name in MIXED_TABLES:
        real = pd.read_csv(data_dir / f"{name}.csv")
        content = json.loads((CONFIGS / f"{name}_schema.json").read_text())
        specs = {c: spec for c, spec in content["columns"].items() if spec["type"] in ("continuous", "integer")}
        frame = real[list(specs)]
        lower = np.array([float(spec["bounds"][0]) for spec in specs.values()])
        upper = np.array([float(spec["bounds"][1]) for spec in specs.values()])
        numeric = Dataset(name, frame, lower, upper,
                          tuple(c for c, spec in specs.items() if spec["type"] == "integer"))
        table = SmallTable(name, real, {"schema": content}, content, numeric)
    else:
        plain = load_dataset(name, data_dir)
        frame = plain.frame
        integer = tuple(c for c in frame.columns if np.all(np.mod(frame[c].to_numpy(float), 1) == 0))
        numeric = Dataset(name, frame, plain.lower, plain.upper, integer)
        table = SmallTable(name, frame, {"bounds": numeric.bounds}, None, numeric)
    table.queries = query_set(name, numeric.d, n_queries, query_seed)
    table.true = true_answers(numeric, table.queries)
    return table


def scorer_for(table: SmallTable):
    """relationships.py's scores of a release plus its worst-case relative errors on the table's query set."""
    columns = list(table.numeric.frame.columns)

    def scorer(name: str, real: pd.DataFrame, synthetic: pd.DataFrame, fit_kwargs: dict, round_: int) -> dict:
        scores = score_table(name, real, synthetic, fit_kwargs, round_)
        relative = worst_errors(table.numeric, [(range(len(SIGMAS)), synthetic[columns])], table.queries,
                                table.true)["relative"]
        scores.update({f"rel_{sigma:g}": float(error) for sigma, error in zip(SIGMAS, relative)})
        return scores

    return scorer


def missing_back(frame: pd.DataFrame, content: dict | None) -> pd.DataFrame:
    """A nullable categorical column's MISSING_LABEL cells back to missing cells."""
    for name, spec in (content or {"columns": {}})["columns"].items():
        if spec.get("nullable") and name in frame.columns:
            frame[name] = frame[name].where(frame[name].astype("string") != MISSING_LABEL, None)
    return frame


# ------------------------------------------------------------------ peers
def generate_binned(table: SmallTable, method: str, real: pd.DataFrame, fit_kwargs: dict, content: dict | None,
                    epsilon: float, delta: float, rng: np.random.Generator,
                    timeout: float) -> tuple[pd.DataFrame, dict]:
    """smartnoise/OpenDP as relationships.py runs them; on a numeric table the integer columns are rounded."""
    if content is not None:
        return generate_peer(method, real, fit_kwargs, content, epsilon, delta, rng, timeout)
    synthetic, info = generate_peer(method, real, {"bounds": table.plain_bounds}, None, epsilon, delta, rng, timeout)
    for column in table.numeric.integer:
        synthetic[column] = np.rint(synthetic[column].to_numpy(float)).astype(real[column].dtype)
    info["rounded"] = list(table.numeric.integer)
    return synthetic, info


def generate_dpmm(table: SmallTable, method: str, real: pd.DataFrame, fit_kwargs: dict, content: dict | None,
                  epsilon: float, delta: float, rng: np.random.Generator, timeout: float) -> tuple[pd.DataFrame, dict]:
    """dpmm's MST/AIM/PrivBayes (PrivBayes with the sound selection). dpmm takes no missing cells: a nullable
    categorical column goes to it with MISSING_LABEL as a declared level of its own, decoded back to missing."""
    spec, frame = fit_kwargs.get("bounds"), real
    if content is not None:
        columns, frame = {}, real.copy()
        for name, column in content["columns"].items():
            if column.get("nullable"):
                if column["type"] not in ("binary", "categorical"):
                    raise ValueError(f"nullable numeric column '{name}': no peer path for it")
                column = {"type": "categorical", "levels": [*column["levels"], MISSING_LABEL]}
                frame[name] = frame[name].astype(object).where(frame[name].notna(), MISSING_LABEL)
            columns[name] = column
        spec = {**content, "columns": columns}
    synthetic = dpmm_peer(method, frame, spec, epsilon, delta, rng, unit=PEER_UNIT, timeout=timeout,
                          privbayes_selection="sound" if method == "dpmm-privbayes" else "published")
    info = dict(synthetic.attrs.pop("peer", {}))
    return missing_back(synthetic, content), info


def peer_runner(table: SmallTable, method: str, args: argparse.Namespace):
    """relationships.peer_run with this script's generation, cache name and time limit."""
    if method in DPMM_PEERS:
        generate = functools.partial(generate_dpmm, table)
        tag = "privtree_sound" if method == "dpmm-privbayes" else "privtree"
    else:  # levels coded as the schema has them: with an "other" cell unless the column says "other": false
        closed = any(isinstance(spec, dict) and spec.get("other") is False
                     for spec in (table.content or {}).get("columns", {}).values())
        generate, tag = functools.partial(generate_binned, table), "bins16_closed" if closed else "bins16"
    return functools.partial(peer_run, generate=generate, tag=tag, timeout=args.peer_timeouts[table.name, method])


def run_peers(tables: dict[str, SmallTable], args: argparse.Namespace, quality: SDMetricsBatch | None) -> list[dict]:
    """Every requested peer on every table, one run at a time: table by table, round by round."""
    peers = [method for method in args.methods if method in PEERS]
    entries = []
    for name, table in tables.items():
        found = {method: peer_entry(method, name) for method in peers}
        for round_ in range(args.peer_rounds):
            for method in peers:
                add_peer_run(found[method], table.triple, round_, args, quality,
                             run=peer_runner(table, method, args), scorer=scorer_for(table))
        entries += found.values()
    return entries


def recorded_limit(limits: dict, table: str, peer: str) -> float | None:
    """A recorded run's time limit of ``peer`` on ``table``: its JSON keys them "table:peer", a record read
    from its command (:meth:`common.Record.settings`) by (table, peer)."""
    return limits.get(f"{table}:{peer}", limits.get((table, peer)))


def check_record(record: Record, args: argparse.Namespace) -> None:
    """Refuse a record whose peer rows were scored otherwise than this run would score them, or lacks one asked for."""
    recorded = record.settings(parse_args)
    record.require("--queries", args.queries, recorded["queries"])
    record.require("--query-seed", args.query_seed, recorded["query_seed"])
    record.require("--peer-rounds", args.peer_rounds, recorded["peer_rounds"])
    record.require("the peers' (epsilon, delta)", list(PEER_SETTING), record.content["peer_setting"])
    record.require("the peers' privacy unit", PEER_UNIT, record.content["peer_unit"])
    record.require_within("--tables", args.tables, recorded["tables"])
    peers = [method for method in args.methods if method in PEERS]
    limits = recorded.get("peer_timeouts") or {}
    for table in args.tables:
        for peer in peers:
            record.require(f"--peer-timeout of {peer} on {table}", args.peer_timeouts[table, peer],
                           recorded_limit(limits, table, peer))
    record.require_within("peer rows", [f"{m} on {name}" for name in args.tables for m in peers],
                          [f"{e['method']} on {e['table']}" for e in record.content["runs"]
                           if e["method"] in PEERS and e["delta"] > 0])


def peers_from_record(entries: list[dict], record: Record) -> list[dict]:
    """The peer entries of :func:`run_peers` (cache only), each the record's where the cache does not answer it."""
    recorded = {(e["table"], e["method"]): e for e in record.content["runs"] if e["method"] in PEERS and e["delta"] > 0}
    return [record.take(entry, recorded.get((entry["table"], entry["method"])),
                        complete=entry["status"] not in ("done", "not cached"), cached=len(entry["runs"]),
                        runs="runs", what=f"{entry['method']} row on {entry['table']}") for entry in entries]


# ------------------------------------------------------------------ synthdp and the baseline
def synthdp_methods(args: argparse.Namespace) -> dict[str, dict]:
    """The synthdp methods asked for and their SmoothSynthesizer options."""
    return {**{m: SYNTHDP_OPTIONS[m] for m in (SYNTHDP, SYNTHDP_RELATIONSHIPS) if m in args.methods}, **args.variants}


def run_synthdp(table: SmallTable, method: str, options: dict, setting: tuple[float, float],
                args: argparse.Namespace, quality: SDMetricsBatch | None) -> dict:
    """``--rounds`` releases of a synthdp method (relationships.run_table), a failure recorded."""
    epsilon, delta = setting
    entry = {"table": table.name, "method": method, "epsilon": epsilon, "delta": delta, "status": "ok",
             "message": "", "runs": []}
    try:
        entry["runs"] = run_table(table.name, epsilon, delta, args.rounds, args, quality, method,
                                  table=table.triple, options=options, scorer=scorer_for(table))
    except Exception as error:  # a variant that fails on a table is shown, not fatal
        entry.update(status="failed", message=f"{type(error).__name__}: {error}")
        log(f"{table.name} {method}: failed: {entry['message']}")
    return entry


def run_independent(table: SmallTable, args: argparse.Namespace) -> dict:
    """The pure-epsilon baseline: independent noisy one-way histograms (adult_pairs.independent_table)."""
    epsilon, delta = PURE_SETTING
    runs, schema, scorer = [], table.schema, scorer_for(table)
    for round_ in range(args.rounds):
        start = time.perf_counter()
        rng = np.random.default_rng([BASELINE_SEED, round_, zlib.crc32(table.name.encode())])
        synthetic = missing_back(independent_table(table.real, schema, epsilon, rng), table.content)
        runs.append({"round": round_, **scorer(table.name, table.real, synthetic, table.fit_kwargs, round_),
                     "seconds": time.perf_counter() - start})
    return {"table": table.name, "method": "independent", "epsilon": epsilon, "delta": delta, "status": "ok",
            "message": "", "runs": runs}


def run_shuffled(table: SmallTable, args: argparse.Namespace, quality: SDMetricsBatch | None) -> dict:
    """A reference, not a release: the real table with each column shuffled on its own (numpy, seeded per
    round), so its one-way marginals exact and its columns independent: about the best a release that
    measures no pair can give. Its smooth-query error is the cost of independence alone; the rest of
    such a release's error is mostly the noise's."""
    epsilon, delta = PEER_SETTING
    runs, scorer = [], scorer_for(table)
    for round_ in range(args.rounds):
        start = time.perf_counter()
        rng = np.random.default_rng([SHUFFLE_SEED, round_, zlib.crc32(table.name.encode())])
        synthetic = table.real.copy()
        for column in synthetic.columns:
            synthetic[column] = rng.permutation(synthetic[column].to_numpy())
        run = {"round": round_, **scorer(table.name, table.real, synthetic, table.fit_kwargs, round_)}
        if quality is not None:
            run["sdmetrics"] = quality.add(table.real, synthetic, table.content, round_, keep=False)
        runs.append({**run, "seconds": time.perf_counter() - start})
    return {"table": table.name, "method": SHUFFLED, "epsilon": epsilon, "delta": delta, "status": "ok",
            "message": "", "runs": runs}


# ------------------------------------------------------------------ summaries
def summarise(entry: dict) -> dict:
    runs = entry["runs"]
    seconds = [run["seconds"] for run in runs if run.get("seconds") is not None]
    row = {"table": entry["table"], "method": entry["method"], "epsilon": entry["epsilon"], "delta": entry["delta"],
           "rounds": len(runs), "status": entry.get("status", "ok"), "note": status_note(entry),
           "message": entry.get("message", ""), "strong_pairs": runs[0].get("strong_pairs") if runs else None,
           "seconds_per_round": float(np.mean(seconds)) if seconds else None}
    if entry.get("from_record"):
        row["from_record"] = entry["from_record"]
    for key in SCORES:
        values = [run.get(key) for run in runs]
        row[key] = dict(zip(("mean", "se"), mean_se(values)), cell=cell(values))
    return row


def checks(rows: list[dict], method: str, table: str) -> dict | None:
    """Does ``method`` reach the best MST/AIM peer on SDMetrics overall and pair trends, keep the strong pairs
    (ratio >= .5) and answer the smooth queries no worse than the best MST at every sigma?"""
    own = next((r for r in rows if r["table"] == table and r["method"] == method and r["delta"] > 0), None)
    if own is None or not own["rounds"]:
        return None
    peers = [r for r in rows if r["table"] == table and r["method"] in (*MST_PEERS, *AIM_PEERS) and r["rounds"]]
    result = {}
    for key in ("sdm_overall", "sdm_pair_trends"):
        values = [(r[key]["mean"], r["method"]) for r in peers if r[key]["mean"] is not None]
        mine = own[key]["mean"]
        if mine is None or not values:
            result[key] = {"ok": None, "text": "n/a"}
            continue
        best, who = max(values)
        result[key] = {"ok": mine >= best, "mine": mine, "best": best, "best_peer": who,
                       "text": f"{'yes' if mine >= best else 'no'} ({mine:.3f} vs {best:.3f}, {LABELS[who]})"}
    ratio = own["strong_ratio"]["mean"]
    result["strong_ratio"] = ({"ok": None, "text": "no strong pair"} if ratio is None else
                              {"ok": ratio >= 0.5, "mine": ratio,
                               "text": f"{'yes' if ratio >= 0.5 else 'no'} ({ratio:.2f}, k = {own['strong_pairs']})"})
    msts = [r for r in rows if r["table"] == table and r["method"] in MST_PEERS and r["rounds"]]
    if not msts:
        result["smooth"] = {"ok": None, "text": "no MST run"}
    else:
        worse = []
        for sigma in SIGMAS:
            key = f"rel_{sigma:g}"
            best = min(r[key]["mean"] for r in msts)
            if own[key]["mean"] > best:
                worse.append(f"σ={sigma:g}: {own[key]['mean']:.3f} vs {best:.3f}")
        result["smooth"] = {"ok": not worse, "worse": worse,
                            "text": "yes" if not worse else "no (" + "; ".join(worse) + ")"}
    return result


def render(args: argparse.Namespace, argv: list[str] | None, tables: dict[str, SmallTable], rows: list[dict],
           verdicts: dict, seconds: float, quality: SDMetricsBatch | None) -> str:
    own = list(synthdp_methods(args))
    versions = sorted({v for row in rows for v in [row.get("sdmetrics_version")] if v})
    variants = "; ".join(f"**{name}**: `{json.dumps(options)}`" for name, options in args.variants.items())
    peer_rows = [row for row in rows if row["method"] in PEERS]
    note = record_note([(f"{LABELS[row['method']]} on {row['table']}", row["from_record"]) for row in peer_rows
                        if row.get("from_record")], len(peer_rows))
    lines = [
        "# Small tables: synthdp's default and the peers",
        "",
        generated_by(command_line(SCRIPT, argv)) + f"; {seconds:.0f} s in all.",
        "",
        *([note, ""] if note else []),
        "Tables: " + ", ".join(f"{name} ({table.shape()}{', mixed' if table.content else ''})"
                               for name, table in tables.items())
        + f". synthdp: {args.rounds} rounds per method "
        + ("(noise seeded, round r with seed " + str(args.seed) + " + r: reproducible, not private)"
           if args.seed is not None else "(OpenDP's noise)")
        + f"; each peer: up to {args.peer_rounds} runs (its cached runs" + (", or the recorded run's" if note else "")
        + "). Mean ± standard error over the rounds "
        "(sample standard deviation over √rounds; no ± with one round).",
        "",
        "Methods at (ε, δ) = (1, 10⁻¹⁰): **synthdp-default** (`SmoothSynthesizer(epsilon, delta)`, nothing else "
        "set), **synthdp-relationships** (`favour=\"relationships\"`, numeric tables only)"
        + (f", variants ({variants})" if variants else "") + "; the peers, all in synthdp's privacy unit "
        "(replace-one; experiments/peers/README.md): smartnoise-synth 1.0.8 MST and AIM and OpenDP 0.16 dp.mbi MST and "
        "AIM as in experiments/relationships.py (numeric tables: every column in 16 equal-width bins of its bounds, "
        "decoded uniformly within the bin, integer columns then rounded; mixed tables: levels coded, numeric columns "
        "in 16 bins, integer ones rounded after decoding); dpmm 0.1.9 MST, AIM and PrivBayes (DP PrivTree bins inside "
        "the same bounds, its share, 0.1 of ε, out of the same total budget). **dpmm's PrivBayes runs with the sound "
        "structure selection** (`privbayes_selection=\"sound\"`): dpmm's published selection is not DP as calibrated "
        "(its score's sensitivity is 1, not the 0.02 it assumes), so the published one is not shown.",
        "",
        "Scores: **SDM overall / shapes / pair trends**: SDMetrics' QualityReport"
        + (f" (sdmetrics {', '.join(versions)})" if versions else "")
        + f" on at most {SDMETRICS_ROWS} rows, in its own virtualenv (Column Pair Trends counts only the pairs of "
        "real \\|r\\| ≥ 0.5 or association ≥ 0.3; n/a without one); **strong-pair ratio**: over the numeric pairs of "
        f"real \\|r\\| > {STRONG_R:g} (*k* of them), mean synthetic \\|r\\| over mean real \\|r\\| (1 kept, 0 "
        "independent; n/a without such a pair); **2-way TV**: mean total-variation distance over all pairs of "
        "columns (numeric columns in 16 equal-width bins of their bounds; 0 the best); **rel. err. σ**: worst-case "
        "relative error of "
        f"{args.queries} random smooth queries (sums of 10 Gaussian kernels, the papers' protocol) at kernel width σ, "
        "on the numeric columns mapped onto [−1, 1] by their bounds; one query set per table (query seed "
        f"{args.query_seed} with crc32 of its name), the same for every method; **s / round**: synthdp: one release "
        "and its scoring; a peer: the wall time of its run when it ran (subprocess start-up included); a machine "
        "of 2 cores shared with other jobs.",
        "",
        BOUNDS_NOTE + " Numeric tables: a column whose values are all integers is typed integer in the bounds "
        "(pima's counts and `outcome`, energy's `orientation` and `glazing_area_distribution`). Mixed tables: "
        "configs/iris_schema.json, configs/glass_schema.json, configs/heart_cleveland_schema.json (min/max bounds; "
        "levels as publicly documented: glass's 7 UCI classes, one of them absent from the data; heart's UCI codes, "
        "written as the file writes them, \"1.0\"; `ca` and `thal` nullable; every categorical column's list "
        "declared complete, `\"other\": false`, so no \"other\" level, for synthdp and the smartnoise/OpenDP peers "
        "alike, whose runs with these schemas are cached apart, `bins16_closed`). heart's 6 missing cells: synthdp "
        "models them (a `(missing)` level); the smartnoise/OpenDP peers see a missing cell as a level of its own "
        "and dpmm as a declared level of its own, both decoded back to missing cells; no row is dropped.",
        "",
        "## Summary: does synthdp reach the peers?",
        "",
        "Per table and synthdp method (at (1, 10⁻¹⁰)), against the MST and AIM peers (smartnoise, OpenDP, dpmm; "
        "PrivBayes not counted): SDMetrics overall and Column Pair Trends at least the best peer's mean; the "
        "strong-pair ratio at least .5 where strong pairs exist; the smooth queries' worst-case relative error "
        "at most the best MST's mean at every σ.",
        "",
        "| table | method | SDM overall ≥ best peer | SDM pair trends ≥ best peer | strong-pair ratio ≥ .5 "
        "| smooth queries ≤ best MST |",
        "|---|---|---|---|---|---|",
    ]
    for name in tables:
        for method in own:
            verdict = verdicts.get((name, method))
            if verdict is not None:
                lines.append(f"| {name} | {method} | {verdict['sdm_overall']['text']} "
                             f"| {verdict['sdm_pair_trends']['text']} | {verdict['strong_ratio']['text']} "
                             f"| {verdict['smooth']['text']} |")
    lines.append("")
    header = ("| method | rounds | " + " | ".join(SCORES.values()) + " | s / round |")
    for name, table in tables.items():
        source = f"configs/{name}_schema.json" if table.content else "min/max bounds"
        lines += [f"## {name} ({table.shape()}, {source}), (ε, δ) = (1, 10⁻¹⁰)", "",
                  header, "|---|---|" + "---|" * len(SCORES) + "---|"]
        for row in (r for r in rows if r["table"] == name and r["delta"] > 0):
            rounds = f"{row['rounds']}" + (f" ({row['note']})" if row["note"] else "")
            if not row["rounds"]:
                lines.append(f"| {LABELS.get(row['method'], row['method'])} | 0 ({row['note'] or row['status']}) |"
                             + " |" * (len(SCORES) + 1))
                continue
            cells = [row[key]["cell"] + (f" (*k* = {row['strong_pairs']})" if key == "strong_ratio" and
                                         row["strong_pairs"] else "") for key in SCORES]
            per_round = "n/a" if row["seconds_per_round"] is None else f"{row['seconds_per_round']:.1f}"
            lines.append(f"| {LABELS.get(row['method'], row['method'])} | {rounds} | " + " | ".join(cells)
                         + f" | {per_round} |")
        lines.append("")
    pure = [r for r in rows if r["delta"] == 0]
    if pure:
        methods = list(dict.fromkeys(r["method"] for r in pure))
        lines += [f"## Pure ε = {PURE_SETTING[0]:g} (δ = 0): mean 2-way TV", "",
                  "synthdp at ε = 1 beside issue 18's baseline, **independent**: every column drawn independently from "
                  "its own noisy one-way histogram over the same cells the 2-way TV uses (Laplace noise of scale "
                  "2d/ε per cell, ε split evenly over the d columns, counts clipped at 0 and normalised; "
                  "adult_pairs.independent_table, numpy's noise seeded per round: a baseline for the score, not a "
                  "release). The peers are zCDP mechanisms: none here. 0 the best; strong-pair ratio in brackets.",
                  "", "| table | " + " | ".join(LABELS.get(m, m) for m in methods) + " |",
                  "|---|" + "---|" * len(methods)]
        for name in tables:
            cells = []
            for method in methods:
                row = next((r for r in pure if r["table"] == name and r["method"] == method), None)
                if row is None or not row["rounds"]:
                    cells.append("n/a" if row is None else row["note"] or row["status"])
                    continue
                ratio = row["strong_ratio"]["mean"]
                cells.append(row["mean_2way_tv"]["cell"] + ("" if ratio is None else f" ({ratio:.2f})"))
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
        lines.append("")
    timeouts = sorted({(t, p, s) for (t, p), s in args.peer_timeouts.items() if t in tables and p in args.methods})
    if any(m in PEERS for m in args.methods):
        limits = {}
        for table, peer, limit in timeouts:
            limits.setdefault(f"{limit:g} s", []).append(f"{peer} on {table}")
        lines += ["Peer time limits: " + "; ".join(
            f"{limit}: " + (", ".join(which) if len(which) < 12 else f"{len(which)} peer × table pairs")
            for limit, which in limits.items()) + ".", ""]
    if quality is None:
        lines += ["SDMetrics: not run (--no-sdmetrics).", ""]
    elif quality.message:
        lines += [f"SDMetrics: {quality.message}.", ""]
    failures = [r for r in rows if r["status"] not in ("ok", "done")]
    if failures:
        lines += ["Runs that stopped short:", ""]
        for row in failures:
            lines.append(f"* {row['table']}, {LABELS.get(row['method'], row['method'])}: {row['note']}"
                         + (f" — {row['message'][-300:]}" if row["message"] else ""))
        lines.append("")
    return "\n".join(lines)


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
    tables = {name: load_small(name, args.data_dir, args.queries, args.query_seed) for name in args.tables}
    results = []
    for table in tables.values():
        for method, options in synthdp_methods(args).items():
            if method == SYNTHDP_RELATIONSHIPS and table.content is not None:
                continue  # favour="relationships" changes nothing on a mixed table
            results.append(run_synthdp(table, method, options, PEER_SETTING, args, quality))
        if not args.no_reference:
            results.append(run_shuffled(table, args, quality))
    peers = run_peers(tables, args, quality)
    results += peers if record is None else peers_from_record(peers, record)
    pure_methods = {m: o for m, o in synthdp_methods(args).items() if m != SYNTHDP_RELATIONSHIPS}
    for table in tables.values():
        for method, options in pure_methods.items():
            results.append(run_synthdp(table, method, options, PURE_SETTING, args, None))
        if pure_methods:
            results.append(run_independent(table, args))
    if quality is not None:
        quality.run()
        for entry in results:
            if not entry.get("from_record"):  # a recorded row's runs hold their SDMetrics scores already
                quality.fill(entry["runs"])
    order = {method: i for i, method in enumerate([*synthdp_methods(args), *PEERS, SHUFFLED, "independent"])}
    results.sort(key=lambda e: (args.tables.index(e["table"]), -e["delta"], order[e["method"]]))
    rows = []
    for entry in results:
        row = summarise(entry)
        versions = {run["sdmetrics"].get("version") for run in entry["runs"] if run.get("sdmetrics")}
        row["sdmetrics_version"] = ", ".join(sorted(v for v in versions if v)) or None
        rows.append(row)
    verdicts = {(name, method): verdict for name in tables for method in synthdp_methods(args)
                for verdict in [checks(rows, method, name)] if verdict is not None}
    seconds = time.perf_counter() - start
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(render(args, argv, tables, rows, verdicts, seconds, quality), encoding="utf-8")
    settings = {key: value for key, value in vars(args).items() if key != "peer_timeouts"}
    settings["peer_timeouts"] = {f"{table}:{peer}": limit for (table, peer), limit in args.peer_timeouts.items()}
    write_json(args.out.with_suffix(".json"), {
        "command": command_line(SCRIPT, argv), "settings": settings, "seconds": seconds,
        "peer_setting": list(PEER_SETTING), "peer_unit": PEER_UNIT, "sigmas": list(SIGMAS),
        "summary": rows, "checks": [{"table": t, "method": m, **v} for (t, m), v in verdicts.items()],
        "runs": results})
    log(f"wrote {args.out} and {args.out.with_suffix('.json')} ({seconds:.0f} s)")


if __name__ == "__main__":
    main()
