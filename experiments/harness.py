"""The methods of the paper-table experiments, their evaluation, and the cache of finished runs.

Used by ``paper_tables.py`` (Tables 3-6) and ``eps_sweep.py``. Every method turns one
benchmark :class:`common.Dataset` into synthetic tables at a privacy setting (epsilon, delta):

* ``paper-constant`` -- the paper's constants: the keys of ``configs/paper_*.toml`` plus
  :data:`PAPER_PINS`, and, per sigma, smoothness K = sigma^2 and Appendix A.5's
  R = 0.5 n^{d/(2d+K)} (or 0.5 n^{2d/(3d+2K)} with delta > 0), *not* raised to 2d. As in the
  paper this is one release per sigma, each spending the whole (epsilon, delta): five
  releases per round, so the five together cost 5 epsilon.
* ``synthdp-default`` -- ``SynthConfig(epsilon, delta)`` with every other key, the candidate
  kind included, at the package's default *at run time* (so it follows changes of the
  defaults): one release, answering every sigma.
* ``bootstrap`` -- n real rows with replacement (not private): the sampling floor.
* ``dp-gaussian`` -- noisy mean and covariance, sampled (``baselines.dp_gaussian``).
* ``smartnoise-mst``, ``smartnoise-aim``, ``opendp-mst``, ``opendp-aim`` -- the peers on 16
  equal-width bins of the same bounds, decoded uniformly within bins
  (``baselines.binned_peer``; optional, in their own virtualenvs). They are zCDP mechanisms
  and need delta > 0: at delta = 0 they are not run (:data:`PEER_NEEDS_DELTA`).

Randomness: synthdp's privacy noise is OpenDP's (never seeded) unless ``seed`` is given
(then release s of round r uses ``seed + 100 r + s``: reproducible, NOT private); the
post-processing randomness of the baselines and peers (bootstrap draws, Gaussian samples,
uniform decoding) comes from ``default_rng([post_seed, round, crc32(dataset), crc32(method)])``,
the derivation of ``peers_smoke.py``.

Cache: each finished run (dataset, method, its settings, round) is a JSON entry under
``experiments/results/cache/{dataset}/`` with its timings, its worst-case errors per query
set and its utility metrics, so a re-run or another table reuses it. The cache is local (git
ignores the folder; it is created on demand), the rendered results beside it are committed. The settings include
a hash of the synthdp source for the synthdp methods (a code change re-runs them) and
exclude epsilon and delta for the bootstrap (it spends none). Peers also keep their
synthetic rows (``.npz``, float32) so a new query set needs no new peer run; the methods
whose rows are neither kept nor reproducible (synthdp, the DP Gaussian) hold the query set in
their settings (:func:`method_key`). A fresh cache can be seeded with the peer rows of the
committed tables (:func:`import_committed_results`) and of ``peers_smoke.json``
(:func:`import_peers_smoke`); or, without touching the cache, a peer row it cannot answer is
taken from a recorded result (:func:`peer_result_from_record`, ``--peers-from-record``).
"""

from __future__ import annotations

import ast
import functools
import hashlib
import time
import tomllib
import warnings
import zlib
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from baselines import (
    LABELS as BASELINE_LABELS,
)
from baselines import (
    PEER_TIMEOUTS,
    PEERS,
    PeerFailed,
    PeerTimeout,
    PeerUnavailable,
    binned_peer,
    bootstrap,
    dp_gaussian,
)
from common import HERE, RESULTS_DIR, Dataset, Record, cpu_now, log, read_json, write_json

import synthdp
from synthdp import SmoothSynthesizer, SynthConfig, SynthDPError
from synthdp.study import (
    SIGMAS,
    KernelQueries,
    answer_queries,
    correlation_error,
    distinct_rows,
    ks_distances,
    model_accuracy,
    paper_n_basis,
    worst_case_errors,
)

CACHE_DIR = RESULTS_DIR / "cache"
CONFIGS = HERE.parent / "configs"
PEER_METHODS = tuple(PEERS)
METHODS = ("paper-constant", "synthdp-default", "bootstrap", "dp-gaussian", *PEER_METHODS)
LABELS = {"paper-constant": "paper-constant variant", "synthdp-default": "synthdp default", **BASELINE_LABELS}
PEER_NEEDS_DELTA = "MST and AIM are zCDP mechanisms and need δ > 0; not run at another privacy level"
PEER_BINS = 16

#: The paper's choices that the configs/paper_*.toml files leave to the package defaults:
#: it keeps the LP's optimal vertex (no mass spreading) and radii sqrt(lambda).
PAPER_PINS = {"spread": 0.0, "ellipsoid_radius": "paper"}
#: configs/ file of the paper-constant variant, by (delta > 0, candidate kind).
PAPER_CONFIGS = {
    (False, "pca"): "paper_eps.toml",
    (True, "pca"): "paper_eps_delta.toml",
    (False, "hypercube"): "paper_hypercube_eps.toml",
    (True, "hypercube"): "paper_hypercube_eps_delta.toml",
}

#: Natural prediction target per dataset (README's "Evaluating"): (target, columns dropped first).
TARGETS = {"pks": ("total_UPDRS", ("motor_UPDRS",))}


@dataclass(frozen=True)
class Setting:
    """One privacy setting of an experiment.

    Attributes
    ----------
    epsilon, delta : float
        The budget of one release.
    candidates : str or None
        Candidate kind of ``paper-constant`` (the table's: "pca" or "hypercube"; None means
        "pca"). ``synthdp-default`` always uses the package's default kind: the issue asks
        for one default configuration that is best in every table.
    """

    epsilon: float
    delta: float
    candidates: str | None = None

    @property
    def tag(self) -> str:
        return f"eps{self.epsilon:g}_delta{self.delta:g}"


@dataclass(frozen=True)
class RunOptions:
    """What the methods and the cache need besides the setting (from the command line)."""

    queries: int
    query_seed: int
    seed: int | None = None  # synthdp noise seed: reproducible, NOT private
    post_seed: int = 0  # post-processing randomness of baselines and peers
    new_peer_runs: bool = True
    retry_failed: bool = False
    peer_timeouts: dict = field(default_factory=lambda: dict(PEER_TIMEOUTS))
    cache_dir: Path = CACHE_DIR
    n_jobs: int | None = None

    @property
    def query_key(self) -> str:
        return f"q{self.queries}_s{self.query_seed}"


# ------------------------------------------------------------------ configurations
def default_config(setting: Setting, seed: int | None = None) -> SynthConfig:
    """The package's default configuration with only epsilon and delta set."""
    return SynthConfig(epsilon=setting.epsilon, delta=setting.delta, seed=seed)


def paper_config(setting: Setting, n: int, d: int, sigma: float, seed: int | None = None) -> SynthConfig:
    """The paper-constant configuration of the release for kernel width ``sigma``.

    The keys of the matching ``configs/paper_*.toml`` (epsilon and delta replaced by the
    setting's), :data:`PAPER_PINS`, smoothness K = sigma^2 and the paper's R for that K
    (:func:`synthdp.pipeline.plan.paper_n_basis`).
    """
    kind = setting.candidates or "pca"
    text = (CONFIGS / PAPER_CONFIGS[setting.delta > 0, kind]).read_text(encoding="utf-8")
    keys = {key.replace("-", "_"): value for key, value in tomllib.loads(text).items()}
    smoothness = int(round(sigma**2))
    keys.update(epsilon=setting.epsilon, delta=setting.delta, smoothness=smoothness, seed=seed,
                n_basis=paper_n_basis(n, d, smoothness, setting.delta))
    return SynthConfig(**{**PAPER_PINS, **keys})


def non_default_keys(config: SynthConfig) -> dict:
    """The keys of ``config`` that differ from SynthConfig's defaults (for the reports)."""
    defaults = asdict(SynthConfig())
    return {key: value for key, value in asdict(config).items() if value != defaults[key]}


@functools.cache
def _source_hash(package_dir: Path = Path(synthdp.__file__).parent) -> str:
    """Hash of what synthdp's code does: cached synthdp runs are re-run after any change to it.

    Every module of the package, subpackages included (walked recursively, in the order of
    their paths relative to ``package_dir``), enters as its relative path and its syntax tree
    without docstrings. So an edit to a docstring, a comment or the layout, which cannot
    change a result, keeps the cache (a table render after a code change takes 15-30 min),
    while a change to the code of any module, or a module moved or renamed, re-keys it. Every
    data file the package holds (other than .py, .md and compiled files: the stored sensitivity
    spreads, synthdp/privacy/spread_table.json, set noise scales) enters as its path and bytes.
    """
    digest = hashlib.sha256()
    data = sorted((path.relative_to(package_dir).as_posix(), path) for path in package_dir.rglob("*")
                  if path.is_file() and path.suffix not in (".py", ".md", ".pyc") and "__pycache__" not in path.parts)
    for relative, path in data:
        digest.update(relative.encode() + b"\0" + path.read_bytes() + b"\0")
    modules = sorted((path.relative_to(package_dir).as_posix(), path) for path in package_dir.rglob("*.py"))
    for relative, path in modules:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            documented = isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            if documented and ast.get_docstring(node, clean=False) is not None:
                node.body = node.body[1:] or [ast.Pass()]
        digest.update(relative.encode() + b"\0")
        digest.update(ast.dump(tree).encode() + b"\0")
    return digest.hexdigest()[:12]


def method_key(method: str, setting: Setting, dataset: Dataset, options: RunOptions) -> dict:
    """Everything a cached run of ``method`` depends on (the cache file is named by its hash).

    A peer's rows are stored and the bootstrap's are drawn again from ``post_seed``, so
    their runs serve every query set. The rows of synthdp and of the DP Gaussian baseline are
    not stored, and their privacy noise is unseeded (OpenDP), so a run cannot be drawn
    again: their key holds the query set, and a table's rounds and the ε sweep's are separate
    runs, neither replacing the other's.
    """
    if method == "bootstrap":
        return {"method": method, "post_seed": options.post_seed}
    key = {"method": method, "epsilon": setting.epsilon, "delta": setting.delta}
    if method == "dp-gaussian":
        return key | {"post_seed": options.post_seed, "queries": options.query_key}
    if method in PEER_METHODS:
        return key | {"bins": PEER_BINS, "unit": "add-remove", "post_seed": options.post_seed}
    if method == "synthdp-default":
        config = asdict(default_config(setting, options.seed))
    else:
        config = {f"sigma={s:g}": asdict(paper_config(setting, dataset.n, dataset.d, s, options.seed)) for s in SIGMAS}
    return key | {"config": config, "synthdp_source": _source_hash(), "libraries": _library_versions(),
                  "queries": options.query_key}


#: the libraries whose numbers a synthdp run's results depend on (noise, solvers, linear algebra)
KEYED_LIBRARIES = ("numpy", "scipy", "pandas", "highspy", "opendp", "cvxpy", "scikit-learn", "numba")


@functools.cache
def _library_versions() -> dict[str, str | None]:
    """The installed version of each of :data:`KEYED_LIBRARIES` (None: not installed): a cached synthdp run
    is run again after an upgrade of any of them."""
    from importlib import metadata

    versions: dict[str, str | None] = {}
    for name in KEYED_LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


# ------------------------------------------------------------------ generation
@dataclass(frozen=True)
class Generated:
    """The synthetic tables of one run of a method.

    Attributes
    ----------
    tables : list of (tuple of int, DataFrame)
        Each table with the indices into SIGMAS it answers (paper-constant: one per sigma).
    seconds, cpu_seconds : float
        Wall and CPU time of the whole run (all its releases; subprocesses included).
    info : dict
        Per-method details (R, LP status, distinct rows, peer versions, ...).
    """

    tables: list
    seconds: float
    cpu_seconds: float
    info: dict


def _synthdp_table(config: SynthConfig, dataset: Dataset) -> tuple[pd.DataFrame, dict]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        synth = SmoothSynthesizer.from_config(config).fit(dataset.frame, bounds=dataset.bounds)
        table = synth.sample()
    report = synth.privacy_report()
    return table, {
        "n_basis": report["parameters"]["n_basis"], "lp_status": report["lp"]["status"],
        "support_size": report["lp"]["support_size"], "epsilon_spent": report["privacy"]["epsilon_spent"],
        "delta_spent": report["privacy"]["delta_spent"],
        "differentially_private": report["privacy"]["differentially_private"],
        "warnings": sorted({str(w.message) for w in caught}),
    }


def generate(method: str, dataset: Dataset, setting: Setting, round_index: int, options: RunOptions) -> Generated:
    """Run ``method`` once (round ``round_index``); raises SynthDPError or a peer error."""
    rng = np.random.default_rng([options.post_seed, round_index, zlib.crc32(dataset.name.encode()),
                                 zlib.crc32(method.encode())])
    cpu0, start = cpu_now(), time.perf_counter()
    everything = tuple(range(len(SIGMAS)))
    if method == "bootstrap":
        tables, info = [(everything, bootstrap(dataset.frame, rng))], {}
    elif method == "dp-gaussian":
        tables = [(everything, dp_gaussian(dataset.frame, dataset.bounds, setting.epsilon, setting.delta, rng))]
        info = {"noise": "opendp"}
    elif method in PEER_METHODS:
        table = binned_peer(method, dataset.frame, dataset.bounds, setting.epsilon, setting.delta, bins=PEER_BINS,
                            rng=rng, timeout=options.peer_timeouts[method])
        tables, info = [(everything, table)], dict(table.attrs.get("peer", {}))
    elif method == "synthdp-default":
        seed = None if options.seed is None else options.seed + 100 * round_index
        table, info = _synthdp_table(default_config(setting, seed), dataset)
        tables = [(everything, table)]
    elif method == "paper-constant":
        tables, per_sigma = [], []
        for s, sigma in enumerate(SIGMAS):
            seed = None if options.seed is None else options.seed + 100 * round_index + s
            t0 = time.perf_counter()
            table, release = _synthdp_table(paper_config(setting, dataset.n, dataset.d, sigma, seed), dataset)
            tables.append(((s,), table))
            per_sigma.append(release | {"sigma": sigma, "seconds": time.perf_counter() - t0})
        info = {"releases": per_sigma}
    else:
        raise ValueError(f"unknown method '{method}'")
    return Generated(tables, time.perf_counter() - start, cpu_now() - cpu0, info)


# ------------------------------------------------------------------ evaluation
def worst_errors(dataset: Dataset, tables: list, queries: KernelQueries, true: np.ndarray,
                 n_jobs: int | None = None) -> dict:
    """Worst-case errors per sigma, each sigma answered by the table that serves it."""
    answers = np.empty_like(true)
    for indices, table in tables:
        widths = [SIGMAS[i] for i in indices]
        answers[list(indices)] = answer_queries(dataset.unit(table), queries, widths, n_jobs=n_jobs)
    return worst_case_errors(true, answers, queries.alpha).to_dict()


def utility(dataset: Dataset, table: pd.DataFrame, seed: int = 0) -> dict:
    """Distinct rows, per-column KS, correlation error and (where the data has one) model accuracy."""
    ks = np.array(list(ks_distances(dataset.frame, table).values()))
    correlation = correlation_error(dataset.frame, table)
    out = {"distinct_rows": distinct_rows(table), "ks_mean": float(ks.mean()), "ks_max": float(ks.max()),
           "correlation_max": correlation["max"], "correlation_mean": correlation["mean"]}
    if dataset.name in TARGETS:
        target, dropped = TARGETS[dataset.name]
        score = model_accuracy(dataset.frame.drop(columns=list(dropped)), table.drop(columns=list(dropped)),
                               target, seed=seed)
        out["model"] = {key: score[key] for key in ("target", "metric", "train_synth_test_real",
                                                      "train_real_test_real", "baseline")}
    return out


# ------------------------------------------------------------------ the cache
def _cache_path(options: RunOptions, dataset: Dataset, key: dict) -> Path:
    digest = hashlib.sha256(repr(sorted(key.items())).encode()).hexdigest()[:10]
    tag = "" if key["method"] == "bootstrap" else f"_eps{key['epsilon']:g}_delta{key['delta']:g}"
    return options.cache_dir / dataset.name / f"{key['method']}{tag}_{digest}.json"


def _save_rows(path: Path, tables: list) -> str:
    """Store a peer's synthetic table beside its cache file; returns the file name."""
    (indices, table), = tables
    rows_path = path.with_name(f"{path.stem}_{time.strftime('%Y%m%d%H%M%S')}_{zlib.crc32(table.to_numpy().tobytes()):08x}.npz")
    rows_path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(rows_path, values=table.to_numpy(np.float32), columns=np.array(table.columns, dtype=str))
    return rows_path.name


def _load_rows(path: Path, name: str) -> list | None:
    rows_path = path.with_name(name)
    if not rows_path.exists():
        return None
    stored = np.load(rows_path)
    table = pd.DataFrame(stored["values"].astype(float), columns=list(stored["columns"]))
    return [(tuple(range(len(SIGMAS))), table)]


def run_rounds(method: str, dataset: Dataset, setting: Setting, rounds: int, options: RunOptions,
               queries: KernelQueries, true: np.ndarray) -> dict:
    """``rounds`` evaluated runs of ``method``, from the cache where possible.

    Returns ``{"status", "message", "rounds": [entry, ...]}``; an entry has ``seconds``,
    ``cpu_seconds``, ``info``, ``errors`` (for this query set), ``evaluation_seconds`` and
    ``utility`` (None for cached peer runs without rows). ``status`` is "ok", or why the rows
    stop short: "n/a" (peer at delta = 0), "skipped" (no new peer runs allowed), "timeout",
    "unavailable", "failed" or "refused" (synthdp refused the configuration).
    """
    if method in PEER_METHODS and setting.delta == 0:
        return {"status": "n/a", "message": PEER_NEEDS_DELTA, "rounds": []}
    key = method_key(method, setting, dataset, options)
    path = _cache_path(options, dataset, key)
    cache = read_json(path) or {"key": key, "rounds": {}, "failure": None}
    failure = cache.get("failure")
    if failure and not options.retry_failed:
        done = [cache["rounds"][str(r)] for r in range(rounds) if options.query_key in cache["rounds"].get(str(r), {}).get("errors", {})]
        return {"status": failure["status"], "message": failure["message"], "rounds": [_view(e, options) for e in done]}
    cache["failure"] = None
    results, status, message = [], "ok", ""
    for r in range(rounds):
        entry = cache["rounds"].get(str(r))
        tables = None
        if entry is not None and options.query_key not in entry["errors"] and entry.get("rows"):
            tables = _load_rows(path, entry["rows"])
        if entry is None or (options.query_key not in entry["errors"] and tables is None):
            if method in PEER_METHODS and not options.new_peer_runs:
                status, message = "skipped", "cached rounds only"
                break
            try:
                generated = generate(method, dataset, setting, r, options)
            except (PeerTimeout, PeerUnavailable, PeerFailed, SynthDPError) as error:
                status = {PeerTimeout: "timeout", PeerUnavailable: "unavailable", PeerFailed: "failed"}.get(type(error), "refused")
                message = str(error)[-500:]
                cache["failure"] = {"status": status, "message": message, "round": r}
                log(f"{dataset.name}/{method} {setting.tag}: round {r + 1}: {status}: {message[-200:]}")
                break
            tables = generated.tables
            entry = {"seconds": generated.seconds, "cpu_seconds": generated.cpu_seconds, "info": generated.info,
                     "errors": {}, "evaluation_seconds": {}, "utility": None,
                     "rows": _save_rows(path, tables) if method in PEER_METHODS else None,
                     "date": time.strftime("%Y-%m-%d %H:%M")}
        if options.query_key not in entry["errors"]:
            start = time.perf_counter()
            entry["errors"][options.query_key] = worst_errors(dataset, tables, queries, true, options.n_jobs)
            entry["evaluation_seconds"][options.query_key] = time.perf_counter() - start
        if entry["utility"] is None and tables is not None:
            entry["utility"] = utility(dataset, tables[0][1])
        cache["rounds"][str(r)] = entry
        write_json(path, cache)
        rel = ", ".join(f"{v:.3g}" for v in entry["errors"][options.query_key]["relative"])
        log(f"{dataset.name}/{method} {setting.tag}: round {r + 1}/{rounds}: {entry['seconds']:.1f} s; rel [{rel}]")
        results.append(_view(entry, options))
    write_json(path, cache)
    return {"status": status, "message": message, "rounds": results}


def _view(entry: dict, options: RunOptions) -> dict:
    """A cache entry with the errors of this query set only."""
    return {**entry, "errors": entry["errors"][options.query_key],
            "evaluation_seconds": entry.get("evaluation_seconds", {}).get(options.query_key)}


def import_peers_smoke(options: RunOptions, datasets: dict[str, Dataset], path: Path = RESULTS_DIR / "peers_smoke.json") -> int:
    """Put the peer runs of ``peers_smoke.json`` into the cache (errors only: their rows were not kept).

    Only runs of the same protocol are taken: add/remove unit, 16 bins, post-processing seed
    ``options.post_seed``; their errors are filed under the query set they were measured on.
    Returns the number of runs added.
    """
    smoke = read_json(path)
    if smoke is None:
        return 0
    settings = smoke["settings"]
    if settings.get("bins") != PEER_BINS or settings.get("seed") != options.post_seed:
        return 0
    query_key = f"q{settings['queries']}_s{settings['query_seed']}"
    setting = Setting(settings["epsilon"], settings["delta"])
    added = 0
    for name, result in smoke["results"].items():
        if name not in datasets:
            continue
        for method, measured in result["methods"].items():
            if method not in PEER_METHODS or measured.get("unit", "add-remove") != "add-remove":
                continue
            key = method_key(method, setting, datasets[name], options)
            cache_path = _cache_path(options, datasets[name], key)
            cache = read_json(cache_path) or {"key": key, "rounds": {}, "failure": None}
            for r, run in enumerate(measured["rounds"]):
                entry = cache["rounds"].setdefault(str(r), {
                    "seconds": run["seconds"], "cpu_seconds": run["cpu_seconds"],
                    "info": {k: v for k, v in run.items() if k not in ("errors", "seconds", "cpu_seconds")},
                    "errors": {}, "evaluation_seconds": {}, "utility": None, "rows": None,
                    "date": "peers_smoke.json"})
                if query_key not in entry["errors"]:
                    entry["errors"][query_key] = run["errors"]
                    added += 1
            if measured["status"] == "timeout" and not measured["rounds"] and cache["failure"] is None:
                cache["failure"] = {"status": "timeout", "message": measured.get("message", ""), "round": 0}
            write_json(cache_path, cache)
    return added


#: Statuses of a committed peer row that record what the peer did (a failure of the machine,
#: "unavailable", is not imported: it would stop the peer from ever running here).
_IMPORTED_FAILURES = ("timeout", "failed")


def import_committed_results(options: RunOptions, datasets: dict[str, Dataset], path: Path) -> int:
    """Seed the cache with the peer rows of a rendered paper table (``experiments/results/table{N}.json``).

    A fresh checkout has no cache (git ignores it) and peer runs take minutes to hours, so the
    committed JSON is the only record of them. For every peer method (:data:`PEER_METHODS`)
    and every dataset of ``datasets`` in the file, each round is filed under the key the method
    has now (:func:`method_key`), its errors under the file's query set, with its timings,
    info, utility and date, and ``imported_from`` naming the file; a recorded timeout or crash
    becomes the cached failure. ``run_rounds`` with ``new_peer_runs=False`` then returns the
    rows the file shows. The synthdp rows and the baselines are never imported: they are cheap
    and follow the code (the synthdp keys hold its source hash).

    The cache wins: a round that already has errors for the file's query set, or a failure
    already cached, is kept. Only runs of the same protocol are taken: post-processing seed
    ``options.post_seed`` (the file's, default 0), 16 bins, add/remove unit. Returns the number
    of rounds added.
    """
    committed = read_json(path)
    if committed is None:
        return 0
    settings = committed["settings"]
    if settings.get("post_seed", 0) != options.post_seed:
        return 0
    query_key = f"q{settings['queries']}_s{settings['query_seed']}"
    setting = Setting(committed["setting"]["epsilon"], committed["setting"]["delta"])
    added = 0
    for result in committed["results"]:
        dataset = datasets.get(result["dataset"])
        if dataset is None:
            continue
        for method, measured in result["methods"].items():
            if method not in PEER_METHODS or measured["status"] == "n/a":
                continue
            infos = [run.get("info") or {} for run in measured["rounds"]]
            if any(info.get("bins", PEER_BINS) != PEER_BINS or info.get("unit", "add-remove") != "add-remove"
                   for info in infos):
                continue
            key = method_key(method, setting, dataset, options)
            cache_path = _cache_path(options, dataset, key)
            cache = read_json(cache_path) or {"key": key, "rounds": {}, "failure": None}
            before = repr(cache)
            for r, run in enumerate(measured["rounds"]):
                entry = cache["rounds"].setdefault(str(r), {
                    "seconds": run["seconds"], "cpu_seconds": run["cpu_seconds"], "info": run.get("info") or {},
                    "errors": {}, "evaluation_seconds": {}, "utility": None, "rows": run.get("rows"),
                    "date": run.get("date"), "imported_from": Path(path).name})
                if query_key in entry["errors"]:
                    continue
                entry["errors"][query_key] = run["errors"]
                if run.get("evaluation_seconds") is not None:
                    entry.setdefault("evaluation_seconds", {})[query_key] = run["evaluation_seconds"]
                if entry.get("utility") is None:
                    entry["utility"] = run.get("utility")
                added += 1
            if measured["status"] in _IMPORTED_FAILURES and cache.get("failure") is None:
                cache["failure"] = {"status": measured["status"], "message": measured["message"],
                                    "round": len(measured["rounds"]), "imported_from": Path(path).name}
            if repr(cache) != before:
                write_json(cache_path, cache)
    return added


def peer_result_from_record(result: dict, recorded: dict | None, record: Record, what: str) -> dict:
    """A peer's :func:`run_rounds` result (``new_peer_runs=False``), or the record's where the cache falls short.

    ``recorded`` is the same method's result in ``record`` (None when it has none), ``what``
    names the row in an error. The cache answers a row when it gave every round or the failure
    that stopped them (status not "skipped"); rounds that :func:`import_committed_results` put
    into it are the committed record's own, not runs cached here, so they do not count. See
    :meth:`common.Record.take`.
    """
    cached = sum(1 for entry in result["rounds"] if not entry.get("imported_from"))
    complete = result["status"] != "skipped" and cached == len(result["rounds"])
    return record.take(result, recorded, complete=complete, cached=cached, runs="rounds", what=what)
