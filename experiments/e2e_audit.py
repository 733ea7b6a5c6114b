"""End-to-end, black-box privacy audit of whole synthdp commands.

``tests/test_audit.py`` audits every release stage on its own. This script audits what a user
runs: the whole command (``synthdp summarize``, ``generate``, ``fit``), on two neighbouring input
files, many times each with real OpenDP noise, and a distinguisher that reads only what the
command writes (the synthetic CSV, the report, the summary). It then bounds the epsilon of the
command from below, at confidence 1 - beta, by Clopper-Pearson intervals. A correct command
must give a lower bound at most its claimed epsilon; the deliberately broken variants
(:data:`BROKEN`) must give one above it.

The distinguisher (:func:`features`, :class:`Distinguisher`)
---------------------------------------------------------------
Black box: it does not know which stage releases what. Every number in the JSON outputs
becomes a feature (every string an indicator ``path=value``), as do the synthetic CSV's
column means, standard deviations, missing shares and level shares. A third of the runs of
each table trains it: per feature the two tables' means and a scale, giving the log-likelihood
ratio of a Laplace model for a pure-epsilon claim (``(|f - m'| - |f - m|) / b``) or of a
Gaussian one for (epsilon, delta) (``(m - m') (f - (m + m') / 2) / s^2``), summed over the
features that separate the tables best (the top 1, 2, 4, ... or all, ranked by the distance of
their two means in scales, whichever bounds epsilon highest on the training runs); the threshold
and the direction are the ones with the largest lower bound on the training runs. The other two thirds are then used once: with p = P[S > t | D] and
q = P[S > t | D'] bounded by one-sided Clopper-Pearson intervals at beta / 2 each,
epsilon >= log((p_lower - delta) / q_upper) with probability >= 1 - beta. Choosing the
statistic on runs the bound does not use keeps the bound valid.

The canaries
------------
Small tables (ten rows) on a public box [-1, 1]; neighbours replace one row (add one person's
rows, with ``--privacy-unit``) by a worst-case row: a corner against the opposite corner, a row
outside the bounds (clipped and counted) against one inside, a level seen only in the canary, a
value far beyond the other rows (for DP bounds). The default's basis spreads the budget over
moments a corner canary barely moves (T_2(1) = T_2(-1)), so each numeric mode is also run with
``--n-basis 2`` (the ``-2`` modes: the degree-1 moments only, which the canary moves by their full
sensitivity): there the audit has the power to see an excess.

Run ``python experiments/e2e_audit.py`` (about 25 minutes on 2 idle cores at the default 2000 runs
of each table, 8000 for the uncharged clip count); it writes ``experiments/results/e2e_audit.md``. ``tests/test_e2e_audit.py`` runs a
small form.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import json
import math
import multiprocessing
import os
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "e2e_audit.md"
BETA = 1e-3  # the audit's lower bound holds with probability >= 1 - BETA
TRAIN_SHARE = 1 / 3


# ----------------------------------------------------------------------------- modes
@dataclass(frozen=True)
class Mode:
    """One command on two neighbouring tables.

    ``first`` and ``second`` are the two input tables (CSV text); ``files`` are other input
    files the command reads (bounds, schema), by name; ``args`` the command line with ``{in}``
    for the input and ``{dir}`` for the run's directory; ``outputs`` the files it writes, which
    the distinguisher reads. ``epsilon`` and ``delta`` are what the command claims.
    """

    name: str
    description: str
    first: str
    second: str
    args: tuple[str, ...]
    outputs: tuple[str, ...]
    epsilon: float
    delta: float
    files: dict[str, str] = field(default_factory=dict)
    neighbours: str = "replace one row"


def _csv(columns: dict[str, list]) -> str:
    return pd.DataFrame(columns).to_csv(index=False)


BASE_X = [-0.6, -0.3, 0.0, 0.2, 0.4, -0.1, 0.3, -0.5, 0.1]  # nine rows every table shares
BASE_Y = [0.5, -0.2, 0.1, -0.4, 0.3, 0.0, -0.6, 0.2, 0.4]
BOX = json.dumps({"x": [-1, 1], "y": [-1, 1]})


BOX_X = json.dumps({"x": [-1, 1]})


def _numeric(canary: tuple[float, float]) -> str:
    return _csv({"x": [*BASE_X, canary[0]], "y": [*BASE_Y, canary[1]]})


# 999 rows (fixed, public randomness) for the "-2" modes: at ten rows the plan finds the moments
# noise and gives them a sliver of the budget (the histograms, which no output holds as such, get the
# rest); at a thousand the moments get most of it and the summary shows the canary's full effect
LARGE_X, LARGE_Y = (np.round(np.random.default_rng(seed).uniform(-0.5, 0.5, 999), 3).tolist() for seed in (1, 2))


def _large(canary: tuple[float, float]) -> str:
    return _csv({"x": [*LARGE_X, canary[0]], "y": [*LARGE_Y, canary[1]]})


def _one_column(canary: float) -> str:
    return _csv({"x": [*BASE_X, canary]})


SUMMARY = ("summary.json",)
GENERATE = ("synthetic.csv", "report.json", "summary.json")
FIT = ("model.model",)


def _summarize(*extra: str) -> tuple[str, ...]:
    return ("summarize", "{in}", "-o", "{dir}/summary.json", "--quiet", *extra)


SYNTHETIC_ROWS = "1000"  # rows each generate run writes: the synthetic table's statistics then show the fitted
# distribution (what the release determines) with little sampling noise of their own


def _generate(*extra: str) -> tuple[str, ...]:
    return ("generate", "{in}", "-o", "{dir}/synthetic.csv", "--report", "{dir}/report.json",
            "--summary-out", "{dir}/summary.json", "--rows", SYNTHETIC_ROWS, "--quiet", *extra)


CATEGORIES = ["a", "b", "c", "a", "b", "c", "a", "b", "c"]
MIXED_SCHEMA = json.dumps({"columns": {
    "x": {"type": "continuous", "bounds": [-1, 1], "nullable": True},
    "group": {"type": "categorical", "levels": ["a", "b", "c"]},
}})
DISCOVER_SCHEMA = json.dumps({"columns": {
    "x": {"type": "continuous", "bounds": [-1, 1]},
    "group": {"type": "categorical", "levels": "discover"},
}})
UNIT_ROWS = 3  # the person added with --privacy-unit: this many rows, the most kept per person
# 199 rows (fixed, public randomness) with a column of ten levels: at this n and (2, 1e-3) the moments' noise is
# under its limit but more than half of a cell's mean share, so the plan releases that column's one-way cells
# apart alone, the moments keeping the rest (synthdp.pipeline.plan.level_cells_apart; the report's apart_levels 11)
MANY_LEVELS = [f"l{i}" for i in range(10)]
MANY_SCHEMA = json.dumps({"columns": {
    "x": {"type": "continuous", "bounds": [-1, 1]}, "y": {"type": "continuous", "bounds": [-1, 1]},
    "group": {"type": "categorical", "levels": MANY_LEVELS},
}})
MANY_X, MANY_Y = (np.round(np.random.default_rng(seed).uniform(-0.5, 0.5, 199), 3).tolist() for seed in (3, 4))
MANY_GROUP = [MANY_LEVELS[i % 10] for i in range(199)]


def modes() -> dict[str, Mode]:
    """Every mode of the audit: each a command a user runs, on a worst-case pair of neighbours."""
    corner, opposite = (1.0, 1.0), (-1.0, -1.0)
    people = [f"p{i}" for i in range(len(BASE_X))]
    unit_first = _csv({"id": people, "x": BASE_X, "y": BASE_Y})
    unit_second = _csv({"id": [*people, *["canary"] * UNIT_ROWS], "x": [*BASE_X, *[1.0] * UNIT_ROWS],
                        "y": [*BASE_Y, *[1.0] * UNIT_ROWS]})
    large_people = [f"p{i}" for i in range(len(LARGE_X))]
    large_unit_first = _csv({"id": large_people, "x": LARGE_X, "y": LARGE_Y})
    large_unit_second = _csv({"id": [*large_people, *["canary"] * UNIT_ROWS], "x": [*LARGE_X, *[1.0] * UNIT_ROWS],
                              "y": [*LARGE_Y, *[1.0] * UNIT_ROWS]})
    listed = [
        Mode("summarize-pure", "summarize, pure epsilon (Laplace); canary: opposite corners",
             _numeric(corner), _numeric(opposite), _summarize("--bounds", "{dir}/bounds.json", "--epsilon", "2"),
             SUMMARY, 2.0, 0.0, {"bounds.json": BOX}),
        Mode("summarize-gaussian", "summarize, (epsilon, delta) (Gaussian); canary: opposite corners",
             _numeric(corner), _numeric(opposite),
             _summarize("--bounds", "{dir}/bounds.json", "--epsilon", "2", "--delta", "1e-3"),
             SUMMARY, 2.0, 1e-3, {"bounds.json": BOX}),
        Mode("summarize-1d-pure", "summarize of one column with one moment (--n-basis 1: the whole budget on "
             "it, the audit's most powerful setting), pure epsilon; canary: x = 1 against x = -1",
             _one_column(1.0), _one_column(-1.0),
             _summarize("--bounds", "{dir}/bounds.json", "--epsilon", "2", "--n-basis", "1"),
             SUMMARY, 2.0, 0.0, {"bounds.json": BOX_X}),
        Mode("summarize-1d-gaussian", "summarize of one column with one moment, (epsilon, delta); canary: x = 1 "
             "against x = -1", _one_column(1.0), _one_column(-1.0),
             _summarize("--bounds", "{dir}/bounds.json", "--epsilon", "2", "--delta", "1e-3", "--n-basis", "1"),
             SUMMARY, 2.0, 1e-3, {"bounds.json": BOX_X}),
        Mode("summarize-1d-clipped", "summarize of one column with one moment, pure epsilon, 0.45 of it on the "
             "clip count; canary: x = 5 (clipped to 1, and counted) against x = -1",
             _one_column(5.0), _one_column(-1.0),
             _summarize("--bounds", "{dir}/bounds.json", "--epsilon", "2", "--n-basis", "1",
                        "--clip-count-share", "0.45"),
             SUMMARY, 2.0, 0.0, {"bounds.json": BOX_X}),
        Mode("generate-gaussian", "generate, the default at (epsilon, delta); canary: opposite corners",
             _numeric(corner), _numeric(opposite),
             _generate("--bounds", "{dir}/bounds.json", "--epsilon", "2", "--delta", "1e-3"),
             GENERATE, 2.0, 1e-3, {"bounds.json": BOX}),
        Mode("generate-pure", "generate at pure epsilon; canary: opposite corners",
             _numeric(corner), _numeric(opposite), _generate("--bounds", "{dir}/bounds.json", "--epsilon", "2"),
             GENERATE, 2.0, 0.0, {"bounds.json": BOX}),
        Mode("generate-gaussian-2", "generate at (epsilon, delta) of 1000 rows with the degree-1 moments only "
             "(--n-basis 2: the canary moves them by their full sensitivity, so the audit has power); canary: "
             "opposite corners", _large(corner), _large(opposite),
             _generate("--bounds", "{dir}/bounds.json", "--epsilon", "2", "--delta", "1e-3", "--n-basis", "2"),
             GENERATE, 2.0, 1e-3, {"bounds.json": BOX}),
        Mode("generate-pure-2", "generate at pure epsilon of 1000 rows with the degree-1 moments only (--n-basis 2); "
             "canary: opposite corners", _large(corner), _large(opposite),
             _generate("--bounds", "{dir}/bounds.json", "--epsilon", "2", "--n-basis", "2"),
             GENERATE, 2.0, 0.0, {"bounds.json": BOX}),
        Mode("generate-unit-2", f"generate by privacy unit (as generate-unit) of 999 people with the degree-1 "
             f"moments only (--n-basis 2); canary: a person with {UNIT_ROWS} rows at a corner, added",
             large_unit_first, large_unit_second,
             _generate("--bounds", "{dir}/bounds.json", "--epsilon", "2", "--delta", "1e-3", "--n-basis", "2",
                       "--privacy-unit", "id", "--max-rows-per-unit", str(UNIT_ROWS)),
             GENERATE, 2.0, 1e-3, {"bounds.json": BOX}, neighbours="add or remove one person"),
        Mode("fit-pure-2", "fit (the model file) at pure epsilon of 1000 rows with the degree-1 moments only "
             "(--n-basis 2); canary: opposite corners", _large(corner), _large(opposite),
             ("fit", "{in}", "-o", "{dir}/model.model", "--quiet", "--bounds", "{dir}/bounds.json", "--epsilon", "2",
              "--n-basis", "2"), FIT, 2.0, 0.0, {"bounds.json": BOX}),
        Mode("fit-gaussian-2", "fit (the model file) at (epsilon, delta) of 1000 rows with the degree-1 moments only "
             "(--n-basis 2); canary: opposite corners", _large(corner), _large(opposite),
             ("fit", "{in}", "-o", "{dir}/model.model", "--quiet", "--bounds", "{dir}/bounds.json", "--epsilon", "2",
              "--delta", "1e-3", "--n-basis", "2"), FIT, 2.0, 1e-3, {"bounds.json": BOX}),
        Mode("generate-mixed", "generate, a mixed table with a schema and missing cells; canary: (1, 'c') "
             "against a missing x with 'a'",
             _csv({"x": [*BASE_X, 1.0], "group": [*CATEGORIES, "c"]}),
             _csv({"x": [*BASE_X, None], "group": [*CATEGORIES, "a"]}),
             _generate("--schema", "{dir}/schema.json", "--epsilon", "2", "--delta", "1e-3"),
             GENERATE, 2.0, 1e-3, {"schema.json": MIXED_SCHEMA}),
        Mode("generate-class", "generate, the mixed table of generate-mixed with --class-column group (x's "
             "histogram released by level of group); canary: (1, 'c') against a missing x with 'a'",
             _csv({"x": [*BASE_X, 1.0], "group": [*CATEGORIES, "c"]}),
             _csv({"x": [*BASE_X, None], "group": [*CATEGORIES, "a"]}),
             _generate("--schema", "{dir}/schema.json", "--epsilon", "2", "--delta", "1e-3", "--class-column",
                       "group"),
             GENERATE, 2.0, 1e-3, {"schema.json": MIXED_SCHEMA}),
        Mode("generate-many-levels", "generate, a mixed table of 200 rows whose column of ten levels has its "
             "one-way cells released apart alone (level cells); canary: (1, 1, 'l9') against (-1, -1, 'l0')",
             _csv({"x": [*MANY_X, 1.0], "y": [*MANY_Y, 1.0], "group": [*MANY_GROUP, "l9"]}),
             _csv({"x": [*MANY_X, -1.0], "y": [*MANY_Y, -1.0], "group": [*MANY_GROUP, "l0"]}),
             _generate("--schema", "{dir}/schema.json", "--epsilon", "2", "--delta", "1e-3"),
             GENERATE, 2.0, 1e-3, {"schema.json": MANY_SCHEMA}),
        Mode("generate-unit", f"generate with --privacy-unit id --max-rows-per-unit {UNIT_ROWS}; canary: a "
             f"person with {UNIT_ROWS} rows at a corner, added", unit_first, unit_second,
             _generate("--bounds", "{dir}/bounds.json", "--epsilon", "2", "--delta", "1e-3",
                       "--privacy-unit", "id", "--max-rows-per-unit", str(UNIT_ROWS)),
             GENERATE, 2.0, 1e-3, {"bounds.json": BOX}, neighbours="add or remove one person"),
        Mode("generate-levels", "generate, levels discovered with DP (--levels-share 0.45); canary: a level "
             "only the canary has, against a common one",
             _csv({"x": [*BASE_X, 1.0], "group": [*CATEGORIES, "zz"]}),
             _csv({"x": [*BASE_X, 1.0], "group": [*CATEGORIES, "a"]}),
             _generate("--schema", "{dir}/schema.json", "--epsilon", "2", "--delta", "1e-3", "--levels-share",
                       "0.45"),
             GENERATE, 2.0, 1e-3, {"schema.json": DISCOVER_SCHEMA}),
        Mode("generate-dp-bounds", "generate, the bounds of x estimated with DP (--bounds-share 0.45); canary: "
             "x = 1000 against x = 0.1",
             _numeric((1000.0, 1.0)), _numeric((0.1, 1.0)),
             _generate("--bounds", "{dir}/bounds.json", "--epsilon", "2", "--bounds-share", "0.45"),
             GENERATE, 2.0, 0.0, {"bounds.json": json.dumps({"y": [-1, 1]})}),
    ]
    return {mode.name: mode for mode in listed}


# ----------------------------------------------------------------------------- broken variants
@contextlib.contextmanager
def _halved_noise() -> Iterator[None]:
    from synthdp.study import OpenDPNoise
    laplace, gaussian = OpenDPNoise.laplace, OpenDPNoise.gaussian
    OpenDPNoise.laplace = lambda self, values, scale: laplace(self, values, scale / 2)  # type: ignore[method-assign]
    OpenDPNoise.gaussian = lambda self, values, sigma: gaussian(self, values, sigma / 2)  # type: ignore[method-assign]
    try:
        yield
    finally:
        OpenDPNoise.laplace, OpenDPNoise.gaussian = laplace, gaussian  # type: ignore[method-assign]


@contextlib.contextmanager
def _uncharged_clip_count() -> Iterator[None]:
    """The clip count released at its share, but the moments still get the whole epsilon and the
    ledger never hears of the count: the report claims epsilon, the release spends 1.45 epsilon."""
    from synthdp.study import PrivacyLedger, plan_module
    budget, record = plan_module._budget, PrivacyLedger.record

    def uncharged_budget(config, bounds, clip_count, shares):
        return dataclasses.replace(budget(config, bounds, 0.0, shares), clip_count=clip_count)

    def quiet_record(self, event):
        if event.stage != "clip_count":
            record(self, event)

    plan_module._budget, PrivacyLedger.record = uncharged_budget, quiet_record  # type: ignore[method-assign]
    try:
        yield
    finally:
        plan_module._budget, PrivacyLedger.record = budget, record  # type: ignore[method-assign]


@contextlib.contextmanager
def _raw_clip_count() -> Iterator[None]:
    """The report's noisy clip count is the raw count: a raw number where a noisy one is claimed."""
    from synthdp.study import run_module
    release_row_count = run_module.release_row_count

    def raw(count, epsilon, stage, released, ledger, noise, *neighbours):
        release_row_count(count, epsilon, stage, released, ledger, noise, *neighbours)  # the charge, as before
        return float(count)

    run_module.release_row_count = raw
    try:
        yield
    finally:
        run_module.release_row_count = release_row_count


@contextlib.contextmanager
def _raw_levels() -> Iterator[None]:
    """Level discovery keeps every level the data hold: a choice made from the raw rows."""
    from synthdp.study import run_module
    release_levels = run_module.release_levels

    def raw(level_counts, epsilon, delta, ledger, noise, *neighbours):
        release_levels(level_counts, epsilon, delta, ledger, noise, *neighbours)  # the charge, as before
        return {name: tuple(sorted(counts)) for name, counts in level_counts.items()}

    run_module.release_levels = raw
    try:
        yield
    finally:
        run_module.release_levels = release_levels


@dataclass(frozen=True)
class Broken:
    """A deliberately broken variant of the product, on one mode, that the audit must catch."""

    name: str
    mode: str
    description: str
    patch: Callable[[], contextlib.AbstractContextManager]
    min_runs: int = 0  # a variant whose excess over the claim is small needs more runs to show it


BROKEN = {broken.name: broken for broken in [
    Broken("halved-noise-pure", "summarize-1d-pure", "every noise scale halved", _halved_noise),
    # Gaussian noise at delta = 1e-3 needs tail events: of 100 simulated audits of its numbers 12 caught it at
    # 2000 runs of each table, 68 at 4000, all at 8000 (least bound 2.02) and at 12000 (least 2.21)
    Broken("halved-noise-gaussian", "summarize-1d-gaussian", "every noise scale halved", _halved_noise,
           min_runs=12000),
    # spends 1.45 epsilon: of 100 simulated audits (as halved_noise_power, on its numbers) 95 caught it at
    # 3000 runs of each table, all 100 at 6000
    Broken("uncharged-clip-count", "summarize-1d-clipped", "the clip count's budget not charged (the moments take "
           "the whole epsilon)", _uncharged_clip_count, min_runs=8000),
    Broken("raw-clip-count", "summarize-1d-clipped", "the raw clip count where a noisy one is claimed",
           _raw_clip_count),
    Broken("raw-levels", "generate-levels", "the levels kept from the raw rows, without noise or threshold",
           _raw_levels),
]}


# ----------------------------------------------------------------------------- running
def _run_once(mode: Mode, table: str, directory: Path) -> dict[str, float]:
    """Run the command once on ``table`` and return its outputs' features."""
    from synthdp import cli

    for output in mode.outputs:
        (directory / output).unlink(missing_ok=True)
    args = [arg.replace("{in}", str(directory / table)).replace("{dir}", str(directory)) for arg in mode.args]
    with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        status = cli.main(args)
    if status != 0:
        raise RuntimeError(f"{mode.name}: the command failed with status {status}")
    return features({output: directory / output for output in mode.outputs})


def features(outputs: dict[str, Path]) -> dict[str, float]:
    """Every released number of the outputs, by a path name; strings as indicators ``path=value``.

    JSON files: every number and string leaf (run timings and file paths left out: they carry no
    noise, only the machine's state); CSV files: each column's mean, standard deviation and
    missing share, and the share of each text value.
    """
    found: dict[str, float] = {}
    for name, path in outputs.items():
        if path.suffix == ".json":
            _flatten(json.loads(path.read_text()), name, found)
        elif path.suffix == ".model":
            _model_features(path, name, found)
        else:
            frame = pd.read_csv(path)
            for column in frame.columns:
                values = frame[column]
                found[f"{name}:{column}:missing"] = float(values.isna().mean())
                if pd.api.types.is_numeric_dtype(values):
                    present = values.dropna()
                    found[f"{name}:{column}:mean"] = float(present.mean()) if len(present) else 0.0
                    found[f"{name}:{column}:sd"] = float(present.std()) if len(present) > 1 else 0.0
                    for q in QUANTILES:  # where the mass sits: a canary at a corner moves the tails
                        found[f"{name}:{column}:q{q:g}"] = float(present.quantile(q)) if len(present) else 0.0
                elif values.nunique() <= MAX_LEVEL_FEATURES:  # not the synthetic people's identifiers
                    for level, share in values.value_counts(normalize=True).items():
                        found[f"{name}:{column}={level}"] = float(share)
    return found


QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)  # of each numeric column of a synthetic CSV
MAX_LEVEL_FEATURES = 50  # a text column with more distinct values (identifiers) gives no level shares
def _model_features(path: Path, name: str, found: dict[str, float]) -> None:
    """A model file (synthdp fit): its JSON part as any JSON output, and of its support points (one
    array of points, one of weights) the distribution they hold: per column the weighted mean,
    standard deviation and QUANTILES, and the number of points with weight."""
    import zipfile

    with zipfile.ZipFile(path) as archive:
        _flatten(json.loads(archive.read("model.json")), f"{name}.json", found)
        points = np.load(io.BytesIO(archive.read("support_points.npy")), allow_pickle=False)
        weights = np.load(io.BytesIO(archive.read("support_weights.npy")), allow_pickle=False)
    weights = np.clip(weights, 0.0, None) / max(float(np.clip(weights, 0.0, None).sum()), 1e-300)
    found[f"{name}:support"] = float((weights > 0).sum())
    for j in range(points.shape[1]):
        values = points[:, j]
        order = np.argsort(values, kind="stable")
        cumulative = np.cumsum(weights[order])
        mean = float(weights @ values)
        found[f"{name}:{j}:mean"] = mean
        found[f"{name}:{j}:sd"] = float(np.sqrt(max(weights @ (values - mean) ** 2, 0.0)))
        for q in QUANTILES:
            found[f"{name}:{j}:q{q:g}"] = float(values[order][min(np.searchsorted(cumulative, q), len(values) - 1)])


SKIPPED_KEYS = ("timings_seconds", "budget_file", "output", "path", "input", "config")


def _flatten(value, path: str, found: dict[str, float]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            if key not in SKIPPED_KEYS:
                _flatten(item, f"{path}.{key}", found)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            if isinstance(item, str):
                found[f"{path}[]={item}"] = 1.0
            else:
                _flatten(item, f"{path}[{i}]", found)
    elif isinstance(value, bool):
        found[path] = float(value)
    elif isinstance(value, (int, float)):
        found[path] = float(value) if math.isfinite(value) else 0.0
    elif isinstance(value, str):
        found[f"{path}={value}"] = 1.0


def _worker(task: tuple[Mode, str, str | None, int]) -> list[dict[str, float]]:
    mode, table, broken, runs = task
    with tempfile.TemporaryDirectory(prefix="synthdp-audit-") as name:
        directory = Path(name)
        (directory / "table.csv").write_text(table, encoding="utf-8")
        for file, content in mode.files.items():
            (directory / file).write_text(content, encoding="utf-8")
        patch = BROKEN[broken].patch() if broken else contextlib.nullcontext()
        with patch:
            return [_run_once(mode, "table.csv", directory) for _ in range(runs)]


def run_mode(mode: Mode, runs: int, broken: str | None = None, workers: int = 1) -> tuple[list, list]:
    """``runs`` outputs' features of the command on each of the two tables."""
    results = []
    for table in (mode.first, mode.second):
        chunks = [runs // workers + (i < runs % workers) for i in range(workers)]
        tasks = [(mode, table, broken, chunk) for chunk in chunks if chunk]
        if workers > 1:
            with multiprocessing.get_context("spawn").Pool(len(tasks)) as pool:
                parts = pool.map(_worker, tasks)
        else:
            parts = [_worker(task) for task in tasks]
        results.append([row for part in parts for row in part])
    return results[0], results[1]


# ----------------------------------------------------------------------------- the distinguisher
def epsilon_lower_bound(first_hits: int, first_trials: int, second_hits: int, second_trials: int, delta: float,
                        beta: float = BETA) -> float:
    """log((p_lower - delta) / q_upper): a lower bound on epsilon with probability >= 1 - beta, where
    p = P[event | D] and q = P[event | D'] (one-sided Clopper-Pearson bounds at beta / 2 each)."""
    return float(epsilon_lower_bounds(np.array([first_hits]), first_trials, np.array([second_hits]), second_trials,
                                      delta, beta)[0])


def epsilon_lower_bounds(first_hits: np.ndarray, first_trials: int, second_hits: np.ndarray, second_trials: int,
                         delta: float, beta: float = BETA) -> np.ndarray:
    """:func:`epsilon_lower_bound` for arrays of hit counts at once (every threshold of a fit)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        lower = np.where(first_hits == 0, 0.0,
                         stats.beta.ppf(beta / 2, first_hits, first_trials - first_hits + 1)) - delta
        upper = np.where(second_hits == second_trials, 1.0,
                         stats.beta.ppf(1 - beta / 2, second_hits + 1, second_trials - second_hits))
        return np.where(lower > 0, np.log(np.maximum(lower, 1e-300) / upper), -np.inf)


@dataclass
class Distinguisher:
    """A statistic fitted on training runs: the sum over some features of a per-feature
    log-likelihood ratio (Laplace or Gaussian model), and a threshold with a direction.

    Which features: the outputs hold hundreds of numbers, most of them noise for a given canary;
    summing all their ratios buries the few that move. So the fit ranks the features by how far
    apart their two training means are (in standard errors) and keeps the top 1, 2, 4, ... or all
    of them, whichever gives the largest bound on the training runs. The choice is made on the
    training runs only, so the test runs' bound stays valid."""

    names: list[str]
    first_mean: np.ndarray
    second_mean: np.ndarray
    scale: np.ndarray
    model: str
    mask: np.ndarray
    threshold: float = 0.0
    sign: float = 1.0

    @classmethod
    def fit(cls, first: np.ndarray, second: np.ndarray, names: list[str], model: str, delta: float,
            beta: float = BETA) -> Distinguisher:
        centre = (np.median if model == "laplace" else np.mean)
        first_mean, second_mean = centre(first, axis=0), centre(second, axis=0)
        if model == "laplace":  # the Laplace scale b: the mean absolute deviation from the median
            scale = (np.abs(first - first_mean).mean(axis=0) + np.abs(second - second_mean).mean(axis=0)) / 2
        else:
            scale = (first.var(axis=0) + second.var(axis=0)) / 2
        floor = 1e-9 * (1 + np.abs(first_mean) + np.abs(second_mean))
        scale = np.maximum(scale, floor)
        spread = np.sqrt(scale) if model == "gaussian" else scale
        separation = np.abs(first_mean - second_mean) / spread  # in standard deviations (Laplace: in b)
        order = np.argsort(-separation, kind="stable")
        best: tuple[float, Distinguisher | None] = (-math.inf, None)
        keep = 1
        while True:
            mask = np.zeros(len(names), dtype=bool)
            mask[order[:keep]] = True
            candidate = cls(names, first_mean, second_mean, scale, model, mask)
            bound, candidate.threshold, candidate.sign = candidate._best_threshold(first, second, delta, beta)
            if bound > best[0]:
                best = (bound, candidate)
            if keep >= len(names):
                break
            keep = min(2 * keep, len(names))
        assert best[1] is not None
        return best[1]

    def statistic(self, rows: np.ndarray) -> np.ndarray:
        if self.model == "laplace":
            terms = (np.abs(rows - self.second_mean) - np.abs(rows - self.first_mean)) / self.scale
        else:
            terms = (self.first_mean - self.second_mean) * (rows - (self.first_mean + self.second_mean) / 2) / self.scale
        return terms[:, self.mask].sum(axis=1)

    def _best_threshold(self, first: np.ndarray, second: np.ndarray, delta: float,
                        beta: float) -> tuple[float, float, float]:
        """The bound, threshold and direction with the largest bound on the training runs; the
        threshold is put midway into the gap below the best statistic value, so that a clean
        separation stays one on fresh runs."""
        best = (-math.inf, 0.0, 1.0)
        for sign in (1.0, -1.0):
            a, b = np.sort(sign * self.statistic(first)), np.sort(sign * self.statistic(second))
            values = np.unique(np.concatenate([a, b]))
            hits_a = len(a) - np.searchsorted(a, values, side="left")  # runs with statistic >= each value
            hits_b = len(b) - np.searchsorted(b, values, side="left")
            bounds = epsilon_lower_bounds(hits_a, len(a), hits_b, len(b), delta, beta)
            i = int(np.argmax(bounds))
            if bounds[i] > best[0]:
                best = (float(bounds[i]), float(values[i] if i == 0 else (values[i - 1] + values[i]) / 2), sign)
        return best

    def events(self, rows: np.ndarray) -> np.ndarray:
        return self.sign * self.statistic(rows) >= self.threshold


@dataclass(frozen=True)
class AuditResult:
    name: str
    claimed_epsilon: float
    delta: float
    runs: int
    epsilon_lower_bound: float
    first_hits: int
    second_hits: int
    test_runs: int
    seconds: float

    @property
    def exceeds_claim(self) -> bool:
        return self.epsilon_lower_bound > self.claimed_epsilon


def _matrix(rows: list[dict[str, float]], names: list[str]) -> np.ndarray:
    return np.array([[row.get(name, 0.0) for name in names] for row in rows])


def audit(mode: Mode, runs: int, broken: str | None = None, workers: int = 1, beta: float = BETA,
          seed: int = 0) -> AuditResult:
    """Run ``mode`` (broken as ``broken`` names, or the product) ``runs`` times on each table and
    return the lower bound on its epsilon from the runs left after training."""
    start = time.perf_counter()
    first_rows, second_rows = run_mode(mode, runs, broken, workers)
    names = sorted({name for row in first_rows + second_rows for name in row})
    first, second = _matrix(first_rows, names), _matrix(second_rows, names)
    # shuffle, so the split does not follow the workers' order
    rng = np.random.default_rng(seed)
    first, second = first[rng.permutation(len(first))], second[rng.permutation(len(second))]
    split = int(round(runs * TRAIN_SHARE))
    model = "laplace" if mode.delta == 0 else "gaussian"
    distinguisher = Distinguisher.fit(first[:split], second[:split], names, model, mode.delta, beta)
    first_hits = int(distinguisher.events(first[split:]).sum())
    second_hits = int(distinguisher.events(second[split:]).sum())
    test = runs - split
    bound = epsilon_lower_bound(first_hits, test, second_hits, test, mode.delta, beta)
    return AuditResult(broken or mode.name, mode.epsilon, mode.delta, runs, bound, first_hits, second_hits, test,
                       time.perf_counter() - start)


def halved_noise_power(runs: int, repeats: int = 1000, seed: int = 0) -> np.ndarray:
    """The audit's lower bounds on ``repeats`` simulated audits of ``halved-noise-pure`` at ``runs``
    runs of each table: the distinguisher fitted and tested exactly as :func:`audit` does, on draws
    from the distributions the broken command's two released numbers have (the moment T_1 = mean x
    and the clip count, Laplace at half the scales its report states). How often the small form in
    the tests misses the broken variant (``python experiments/e2e_audit.py --power 900``)."""
    mode = modes()["summarize-1d-pure"]
    first, _ = run_mode(mode, 1)
    scales = {key: value for key, value in first[0].items() if key.endswith("noise_scale")}
    moment_scale = next(value for key, value in scales.items() if "stages[1]" in key) / 2
    count_scale = next(value for key, value in scales.items() if "stages[0]" in key) / 2
    means = [(sum(BASE_X) + canary) / (len(BASE_X) + 1) for canary in (1.0, -1.0)]
    rng = np.random.default_rng(seed)
    split = int(round(runs * TRAIN_SHARE))
    bounds = []
    for _ in range(repeats):
        first_rows, second_rows = (np.column_stack([mean + rng.laplace(0, moment_scale, runs),
                                                    rng.laplace(0, count_scale, runs)]) for mean in means)
        distinguisher = Distinguisher.fit(first_rows[:split], second_rows[:split], ["moment", "count"], "laplace", 0.0)
        bounds.append(epsilon_lower_bound(int(distinguisher.events(first_rows[split:]).sum()), runs - split,
                                          int(distinguisher.events(second_rows[split:]).sum()), runs - split, 0.0))
    return np.array(bounds)


# ----------------------------------------------------------------------------- the report
def render(results: list[tuple[str, str, AuditResult]], runs: int, command: str) -> str:
    from common import generated_by  # imported where used, as the synthdp imports of this script are

    lines = [
        "# End-to-end privacy audit",
        "",
        f"{generated_by(command)}. Each command ran "
        f"{runs} times on each of two neighbouring tables with OpenDP's noise; a third of the runs trained "
        "the distinguisher (it reads only the outputs), the rest give the lower bound on epsilon at "
        f"confidence 1 - {BETA:g} (Clopper-Pearson). The product must stay at or below its claimed "
        "epsilon; each broken variant must go above it. Method: `experiments/e2e_audit.py`'s docstring and "
        "docs/privacy-audit.md.",
        "",
        "| audited | what | claimed (eps, delta) | runs per table | hits on D / D' (of test runs) | "
        "eps lower bound | verdict |",
        "|---|---|---|---:|---:|---:|---|",
    ]
    for kind, description, result in results:
        bound = "-inf" if result.epsilon_lower_bound == -math.inf else f"{result.epsilon_lower_bound:.2f}"
        if kind == "product":
            verdict = "pass" if not result.exceeds_claim else "**FAIL: above the claim**"
        else:
            verdict = "caught" if result.exceeds_claim else "**NOT caught**"
        lines.append(f"| {result.name} ({kind}) | {description} | ({result.claimed_epsilon:g}, {result.delta:g}) | "
                     f"{result.runs} | {result.first_hits} / {result.second_hits} of {result.test_runs} | {bound} | "
                     f"{verdict} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=2000, help="runs of each command on each table")
    parser.add_argument("--modes", nargs="*", default=None, help="modes to audit (default all)")
    parser.add_argument("--broken", nargs="*", default=None, help="broken variants to audit (default all)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--power", type=int, default=None, metavar="RUNS",
                        help="only simulate --repeats audits of halved-noise-pure at RUNS runs per table and print "
                             "how often the bound misses the claim (the tests' small form)")
    parser.add_argument("--repeats", type=int, default=1000, help="with --power: simulated audits (default 1000)")
    parser.add_argument("--seed", type=int, default=0, help="with --power: the simulation's seed (default 0)")
    args = parser.parse_args(argv)
    if args.power is not None:
        bounds = halved_noise_power(args.power, args.repeats, args.seed)
        print(f"halved-noise-pure at {args.power} runs per table, {args.repeats} simulated audits (seed {args.seed}): "
              f"lower bound mean {bounds.mean():.2f}, min {bounds.min():.2f}, at or below the claim of 2 in "
              f"{(bounds <= 2).sum()}")
        return 0
    all_modes = modes()
    results = []
    for name in args.modes if args.modes is not None else list(all_modes):
        mode = all_modes[name]
        result = audit(mode, args.runs, workers=args.workers)
        print(f"{name}: eps >= {result.epsilon_lower_bound:.3f} (claimed {mode.epsilon:g}), {result.seconds:.0f} s",
              flush=True)
        results.append(("product", mode.description, result))
    for name in args.broken if args.broken is not None else list(BROKEN):
        broken = BROKEN[name]
        result = audit(all_modes[broken.mode], max(args.runs, broken.min_runs), broken=name, workers=args.workers)
        print(f"{name}: eps >= {result.epsilon_lower_bound:.3f} (claimed {result.claimed_epsilon:g}), "
              f"{result.seconds:.0f} s", flush=True)
        results.append(("broken", f"{broken.description}, on {broken.mode}", result))
    command = "python experiments/e2e_audit.py " + " ".join(argv if argv is not None else sys.argv[1:])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(render(results, args.runs, command.strip()), encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
