"""synthdp's benchmark suite: time and peak memory per stage, ratios against the goals.

Run from the repository root::

    python benchmarks/run.py            # full sweeps (n up to 1e7: about 30 minutes, 6 GB)
    python benchmarks/run.py --quick    # small sweeps, under a minute

It writes benchmarks/results/summary.md (also printed), summary.json (raw numbers) and PNG
scaling plots (stages_vs_n.png, _d, _R, _C, memory_vs_n.png); --quick writes them under
benchmarks/results/quick/ (``--out DIR`` elsewhere; the unit tests run ``--quick --out`` a
temporary folder, so CI fails on any failed configuration). Needs matplotlib and pyarrow
(the ``experiments`` extra). It is not part of the unit tests (pytest's testpaths is tests/).

What it measures
----------------
* Stages, on generated data (correlated Gaussian columns squashed into the public bounds
  [0, 100], written once as CSV under /tmp/synthdp-bench): read CSV (synthdp's reader, with
  validation; and plain ``pandas.read_csv`` for reference), moments (the pipeline's one pass
  over the rows: clip to the domain, the basis's moments, the copula's histogram counts and
  the products' sums, then the moments' noise), marginals (the noise on the histograms and
  products), candidates (copula points and W's columns, precision-weighted as the pipeline
  does), LP (column generation), blend, sampling n rows, decoding. The private stages run
  through the pipeline's own ``synthdp.pipeline.run.release_numeric`` (the code
  ``SmoothSynthesizer.fit`` runs); post-processing follows its ``fit_distribution`` with
  ``synthdp.postprocess``. Sweeps over n (d = 10), d (n = 1e4),
  R (n = 1e4, d = 20) and C (n = 1e4, d = 20, R = 100); everything else at the defaults
  (epsilon = 1, copula candidates, C = 1e4, R = auto). Each configuration runs in its own
  process: a timing pass, then a memory pass under tracemalloc (peak of Python and numpy
  allocations per stage; HiGHS's own C++ memory is not seen by tracemalloc, so the
  process's peak RSS is reported too). Seeded numpy noise: timings, not a private run.
* Ratios: moments / plain read of the same CSV (goal <= 2); LP stage / a direct HiGHS solve
  of the same LP, all of W passed to Highs.run() (goal <= 1.5; the direct solve has a
  time limit, and only sizes whose W fits --direct-max-entries are compared); end to end
  on each data set of data/ at the defaults (goal <= 1 s), in process (fit +
  sample) and as a ``python -m synthdp.cli generate`` command.
* Chebyshev evaluation: ChebyshevBasis.evaluate against the naive product of
  cos(r_i arccos x_i), time and max |difference|; ChebyshevBasis.moments against the mean
  of the evaluated values.
* LP solvers at equal objective: column generation, HiGHS's dual simplex on the whole LP
  and HiGHS's PDLP (first-order) on the whole LP, each with a time limit.

A configuration or task that fails or times out is reported in the summary, and the run
then exits with status 1 (after writing the results).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
import tracemalloc
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's synthdp, as python -m would
RESULTS = Path(__file__).resolve().parent / "results"
DATA = ROOT / "data"
CACHE = Path("/tmp/synthdp-bench")
RESULT_PREFIX = "SYNTHDP_BENCH "
SEED = 7
UPPER = 100.0  # generated columns live in [0, UPPER]

FULL = {"n": [10**3, 10**4, 10**5, 10**6, 10**7], "d": [2, 5, 10, 20, 50, 100],
        "R": [20, 100, 300, 1000], "C": [10**3, 10**4, 10**5, 10**6]}
QUICK = {"n": [10**3, 10**5], "d": [2, 50], "R": [100], "C": [10**3, 10**5]}
BASE = {"n": 10**4, "d": 20, "R": None, "C": 10**4}  # None: the pipeline's automatic R
SWEEP_BASE = {"n": {"d": 10}, "d": {}, "R": {}, "C": {"R": 100}}
DATASETS = ["crm", "ctg", "pks", "wdbc", "adult"]


# --------------------------------------------------------------------------- data


def generated_csv(n: int, d: int) -> Path:
    """A cached CSV of n rows and d columns in [0, UPPER]: correlated Gaussians through tanh."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / f"n{n}_d{d}_s{SEED}.csv"
    if path.exists():
        return path
    rng = np.random.default_rng([SEED, d])
    mixing = rng.normal(size=(d, d)) / np.sqrt(d)
    columns: dict[str, list[np.ndarray]] = {f"x{j}": [] for j in range(d)}
    for start in range(0, n, 10**6):  # bounded memory for n = 1e7
        block = rng.normal(size=(min(10**6, n - start), d)) @ mixing + rng.normal(0, 0.5, d)
        block = np.round(UPPER / 2 * (1 + np.tanh(block)), 4)
        for j in range(d):
            columns[f"x{j}"].append(block[:, j])
    table = pa.table({name: np.concatenate(parts) for name, parts in columns.items()})
    partial = path.with_suffix(".partial")
    pacsv.write_csv(table, partial)
    partial.rename(path)
    return path


# --------------------------------------------------------------------------- one configuration (child)


class Meter:
    """Times named stages, or records their peak traced memory above the stage's start.

    ``stage(name)`` is the interface of the pipeline's ``StageTracker``, so the pipeline's
    own stages (``release_numeric``) are measured as they run.
    """

    def __init__(self, memory: bool) -> None:
        self.memory, self.values = memory, {}

    @contextmanager
    def stage(self, name: str):
        if self.memory:
            tracemalloc.reset_peak()
            before = tracemalloc.get_traced_memory()[0]
            try:
                yield
            finally:
                peak = (tracemalloc.get_traced_memory()[1] - before) / 2**20
                self.values[name] = max(self.values.get(name, 0.0), peak)
        else:
            start = time.perf_counter()
            try:
                yield
            finally:
                self.values[name] = self.values.get(name, 0.0) + time.perf_counter() - start

    def run(self, name: str, function, *args):
        with self.stage(name):
            return function(*args)


def pipeline_stages(path: Path, n_basis: int | None, n_candidates: int, meter: Meter) -> dict:
    """The stages of ``SmoothSynthesizer.fit`` and ``sample`` at the defaults, measured one by one.

    The private side is the pipeline's own (:mod:`synthdp.pipeline.run`, which
    ``SmoothSynthesizer.fit`` runs): its randomness, the first pass, the plan, then
    ``release_numeric`` (one pass over the rows for the moments, the histograms and the
    products; its "moments" and "marginals" stages are measured by ``meter``). Nothing here
    calls a release function of :mod:`synthdp.privacy.release` directly. Post-processing
    follows the pipeline's ``fit_distribution`` step by step, so that each step has its own
    time and the LP instance is kept for the direct HiGHS solves: the candidates, W's
    columns with the precision weighting, column generation, blend; then sampling, decoding.
    """
    import warnings

    from synthdp.config import SynthConfig
    from synthdp.domain.decode import decode
    from synthdp.pipeline import run as pipeline
    from synthdp.pipeline.plan import make_plan
    from synthdp.postprocess.candidates import make_candidates
    from synthdp.postprocess.lp import blend_with_uniform, solve_l1_fit_columns
    from synthdp.postprocess.sampling import clean_weights, sample_rows
    from synthdp.privacy.ledger import PrivacyLedger
    from synthdp.reader.table import PrivateTable
    from synthdp.stats.chebyshev import ChebyshevBasis
    from synthdp.stats.row_sums import SumRequest

    meter.run("plain pandas.read_csv", pd.read_csv, path)
    table = meter.run("read CSV", PrivateTable.read_csv, path)
    config = SynthConfig(n_basis=n_basis or "auto", n_candidates=n_candidates, seed=SEED)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the known-seed warning: a benchmark times, it releases nothing
        noise, rng = pipeline.randomness(config)
    ledger = PrivacyLedger(config.epsilon, config.delta)
    known_columns = pipeline.known_bounds(config, table, {name: [0.0, UPPER] for name in table.column_names}, False)
    scan = table.row_sums(SumRequest())  # the first pass: the row count (every bound is given)
    plan = make_plan(config, scan.n_rows, table.d, bounds_are_public=True)
    if plan.candidates != "copula":
        raise RuntimeError(f"the benchmark times the copula default, but the default candidates are now "
                           f"'{plan.candidates}': update benchmarks/run.py")
    release = pipeline.release_numeric(table, scan, known_columns, plan, config, ledger, noise, rng, meter)
    basis = ChebyshevBasis(release.basis_indices)

    def candidates_and_columns():
        points = make_candidates(plan.candidates, release, rng, config)
        return points, *lp_columns(basis, points, release, config.max_lp_entries)

    candidates, columns, target, noise_l1 = meter.run("candidates", candidates_and_columns)
    optimum = meter.run("LP", lambda: solve_l1_fit_columns(columns, len(candidates), target,
                                                           max_columns=config.max_lp_entries // plan.n_basis))
    solution = optimum
    if config.spread == 0 and (kappa := pipeline.blend_factor(config, plan)) > 0:
        tolerance = kappa * noise_l1
        solution, _ = meter.run("blend", lambda: blend_with_uniform(columns, len(candidates), target, optimum,
                                                                     optimum.objective + tolerance))
    else:
        meter.values["blend"] = 0.0
    weights = clean_weights(solution.weights)
    support, support_weights = candidates[weights > 0], weights[weights > 0]
    rows = meter.run("sampling", sample_rows, support, support_weights, plan.n, rng)
    meter.run("decode", decode, rows, release.domain)
    return {"R": plan.n_basis, "C": plan.n_candidates, "objective": optimum.objective, "lp_solver": optimum.solver,
            "support": int(len(support)), "lp_instance": (candidates, basis, release)}


def lp_columns(basis, candidates: np.ndarray, release, max_entries: float):
    """The pipeline's LP at these candidates: W's column source and the target, each moment
    weighted by the precision of its noise, and the expected l1 norm of the weighted noise."""
    from synthdp.postprocess.lp import candidate_columns, precision_weighted

    columns = candidate_columns(basis, candidates, max_entries)
    return precision_weighted(columns, release.noisy_moments, release.moment_noise_sd, release.moment_noise_l1)


def whole_lp(basis, candidates: np.ndarray, release) -> tuple[np.ndarray, np.ndarray]:
    """The pipeline's (weighted) LP with all of W in memory, for the direct HiGHS solves."""
    columns, target, _ = lp_columns(basis, candidates, release, float("inf"))
    return columns(0, len(candidates)), target


def direct_highs(design: np.ndarray, target: np.ndarray, solver: str, time_limit: float) -> dict:
    """Highs.run() on the whole LP of :func:`synthdp.postprocess.lp.equality_form` (model building not timed)."""
    import highspy

    from synthdp.postprocess.lp import equality_form, highs_model

    matrix, rhs, cost = equality_form(design, target)
    highs = highs_model(matrix, rhs, rhs, cost, time_limit)
    highs.setOptionValue("solver", solver)
    start = time.perf_counter()
    highs.run()
    seconds = time.perf_counter() - start
    status = highs.getModelStatus()
    weights = np.asarray(highs.getSolution().col_value)[: design.shape[1]]
    optimal = status == highspy.HighsModelStatus.kOptimal
    return {"seconds": seconds, "optimal": optimal, "status": highs.modelStatusToString(status),
            "objective": float(np.abs(design @ weights - target).sum()) if optimal else None}


def configuration(n: int, d: int, n_basis: int | None, n_candidates: int, direct_limit: float,
                  direct_max_entries: float) -> dict:
    """Timing pass, memory pass, and the direct HiGHS reference for one configuration."""
    path = generated_csv(n, d)
    timing = Meter(memory=False)
    info = pipeline_stages(path, n_basis, n_candidates, timing)
    candidates, basis, release = info.pop("lp_instance")
    result = {"n": n, "d": d, **info, "seconds": timing.values}
    if basis.size * len(candidates) <= direct_max_entries:
        design, target = whole_lp(basis, candidates, release)
        result["direct_simplex"] = direct_highs(design, target, "simplex", direct_limit)
        del design
    del candidates, basis, release, info
    tracemalloc.start()
    memory = Meter(memory=True)
    pipeline_stages(path, n_basis, n_candidates, memory)
    tracemalloc.stop()
    result["peak_mb"] = memory.values
    result["max_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return result


def chebyshev_comparison(quick: bool) -> list[dict]:
    """ChebyshevBasis.evaluate against the naive cos(r arccos x) product (row blocks of 2048)."""
    from synthdp.stats.chebyshev import ChebyshevBasis, lowest_degree_indices

    sizes = [(10**4, 10, 10), (10**4, 20, 230)] + ([] if quick else [(10**4, 100, 1000), (10**6, 10, 158),
                                                                      (10**6, 10, 413)])
    rng = np.random.default_rng(SEED)
    out = []
    for n, d, R in sizes:
        points = rng.uniform(-1, 1, (n, d))
        indices = lowest_degree_indices(d, R)
        basis = ChebyshevBasis(indices)
        fast_seconds, fast = _best_of(3, basis.evaluate, points)
        naive_seconds, naive = _best_of(3, _naive_chebyshev, points, indices)
        moments_seconds, moments = _best_of(3, basis.moments, points)
        mean_seconds, mean = _best_of(3, lambda basis=basis, points=points: basis.evaluate(points).mean(axis=0))
        out.append({"n": n, "d": d, "R": R, "recurrence_s": fast_seconds, "naive_s": naive_seconds,
                    "max_abs_difference": float(np.abs(fast - naive).max()), "moments_s": moments_seconds,
                    "mean_of_values_s": mean_seconds, "moments_difference": float(np.abs(moments - mean).max())})
    return out


def _naive_chebyshev(points: np.ndarray, indices: np.ndarray) -> np.ndarray:
    out = np.empty((len(points), len(indices)))
    for start in range(0, len(points), 2048):
        angles = np.arccos(points[start : start + 2048])
        out[start : start + 2048] = np.cos(indices[None, :, :] * angles[:, None, :]).prod(axis=2)
    return out


def _best_of(repeats: int, function, *args):
    best, result = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function(*args)
        best = min(best, time.perf_counter() - start)
    return best, result


def solver_comparison(C: int, R: int, time_limit: float) -> dict:
    """Column generation vs HiGHS dual simplex and PDLP on the whole LP, on pipeline data (n = 1e4, d = 20)."""
    from synthdp.postprocess.lp import solve_l1_fit_columns

    timing = Meter(memory=False)
    info = pipeline_stages(generated_csv(10**4, 20), R, C, timing)
    candidates, basis, release = info["lp_instance"]
    start = time.perf_counter()
    columns, target, _ = lp_columns(basis, candidates, release, 20_000_000)
    generated = solve_l1_fit_columns(columns, C, target)
    result = {"C": C, "R": R, "colgen_s": time.perf_counter() - start, "colgen_objective": generated.objective,
              "colgen_solver": generated.solver}
    design, target = whole_lp(basis, candidates, release)
    for solver in ("simplex", "pdlp"):
        result[solver] = direct_highs(design, target, solver, time_limit)
    return result


def end_to_end() -> list[dict]:
    """Defaults (epsilon = 1) on each data set, bounds = its min and max taken as public (as the paper).

    In process, the first fit + sample of a data set and a second one (the first fit of the
    process also pays lazy imports); then the ``generate`` command in a fresh Python.
    """
    import compileall
    import tempfile

    from synthdp import SmoothSynthesizer

    compileall.compile_dir(ROOT / "synthdp", quiet=1)  # as an installed package has it: no command compiles it again
    out = []
    for name in DATASETS:
        frame = pd.read_csv(DATA / f"{name}.csv").select_dtypes("number")
        bounds = {column: [float(frame[column].min()), float(frame[column].max())] for column in frame.columns}
        fits = []
        for _ in range(2):
            start = time.perf_counter()
            synth = SmoothSynthesizer(epsilon=1.0).fit(frame, bounds=bounds)
            synth.sample()
            fits.append(time.perf_counter() - start)
        with tempfile.TemporaryDirectory() as tmp:
            csv_path, bounds_path = Path(tmp) / "in.csv", Path(tmp) / "bounds.json"
            frame.to_csv(csv_path, index=False)
            bounds_path.write_text(json.dumps(bounds))
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "synthdp.cli", "generate", str(csv_path), "-o", str(Path(tmp) / "o.csv"),
                            "--bounds", str(bounds_path), "--quiet"], check=True, cwd=ROOT, capture_output=True)
            command = time.perf_counter() - start
        out.append({"dataset": name, "n": len(frame), "d": frame.shape[1], "first_fit_sample_s": fits[0],
                    "fit_sample_s": fits[1], "cli_s": command, "stages_s": synth.timings_})
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import synthdp.cli"], check=True, cwd=ROOT)
    out.append({"dataset": "(python -c 'import synthdp.cli')", "cli_s": time.perf_counter() - start})
    return out


# --------------------------------------------------------------------------- parent


def child(task: str, arguments: dict, timeout: float) -> dict:
    """Run one task in a fresh process (its own peak memory); a failure becomes a note."""
    command = [sys.executable, str(Path(__file__).resolve()), "--task", task, json.dumps(arguments)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return {**arguments, "note": f"timeout (> {timeout:.0f} s)"}
    for line in done.stdout.splitlines():
        if line.startswith(RESULT_PREFIX):
            return json.loads(line[len(RESULT_PREFIX):])
    last = (done.stderr.strip().splitlines() or ["no output"])[-1]
    return {**arguments, "note": f"failed: {last[:160]}"}


TASKS = {"configuration": configuration, "solvers": solver_comparison, "end_to_end": end_to_end,
         "chebyshev": chebyshev_comparison}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sweeps, under a minute")
    parser.add_argument("--n", type=int, nargs="+", help="row counts of the n sweep (extend it here)")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per configuration (default 900)")
    parser.add_argument("--direct-limit", type=float, default=None,
                        help="HiGHS time limit of the direct reference solves (default 60 s; quick 2 s)")
    parser.add_argument("--direct-max-entries", type=float, default=2e7,
                        help="largest R x C for the direct reference solve (default 2e7)")
    parser.add_argument("--one", type=int, nargs=4, metavar=("N", "D", "R", "C"),
                        help="only one configuration, printed as JSON (no direct reference solve)")
    parser.add_argument("--out", type=Path, default=None,
                        help="folder for the results (default benchmarks/results, quick: benchmarks/results/quick)")
    parser.add_argument("--task", nargs=2, help=argparse.SUPPRESS)
    opts = parser.parse_args(argv)
    if opts.one:
        n, d, n_basis, n_candidates = opts.one
        result = child("configuration", {"n": n, "d": d, "n_basis": n_basis, "n_candidates": n_candidates,
                                         "direct_limit": 0.0, "direct_max_entries": 0}, opts.timeout)
        print(json.dumps(result, indent=1))
        return 1 if "note" in result else 0
    if opts.task:
        result = TASKS[opts.task[0]](**json.loads(opts.task[1]))
        print(RESULT_PREFIX + json.dumps(result, default=float), flush=True)
        return 0

    from report import markdown, plots  # sibling module: formatting only

    sweeps = dict(QUICK if opts.quick else FULL)
    if opts.n:
        sweeps["n"] = opts.n
    direct_limit = opts.direct_limit or (2.0 if opts.quick else 60.0)
    started = time.monotonic()
    results: dict = {"options": vars(opts) | {"direct_limit": direct_limit, "out": opts.out and str(opts.out)},
                     "sweeps": {}}
    for axis, values in sweeps.items():
        rows = []
        for value in values:
            size = {**BASE, **SWEEP_BASE[axis], axis: value}
            arguments = {"n": size["n"], "d": size["d"], "n_basis": size["R"], "n_candidates": size["C"],
                         "direct_limit": direct_limit, "direct_max_entries": opts.direct_max_entries}
            print(f"  {axis} = {value} ...", end="", flush=True, file=sys.stderr)
            rows.append(child("configuration", arguments, opts.timeout))
            print(f" {rows[-1].get('note', 'done')}", file=sys.stderr)
        results["sweeps"][axis] = rows
    print("  end to end, Chebyshev, solvers ...", file=sys.stderr)
    results["end_to_end"] = child("end_to_end", {}, opts.timeout)
    results["chebyshev"] = child("chebyshev", {"quick": opts.quick}, opts.timeout)
    solver_sizes = [(10**4, 100)] if opts.quick else [(10**4, 100), (10**5, 100), (10**4, 300)]
    results["solvers"] = [child("solvers", {"C": C, "R": R, "time_limit": direct_limit}, opts.timeout)
                          for C, R in solver_sizes]
    results["elapsed_s"] = time.monotonic() - started
    from command_speed import _commit  # sibling module: the source tree's commit, as its results name it

    results["machine"] = f"Python {platform.python_version()}, numpy {np.__version__}, {os.cpu_count()} CPUs"
    results["written"] = f"{time.strftime('%Y-%m-%d %H:%M')}, commit {_commit()}"
    # a quick run never overwrites the full results
    directory = opts.out or (RESULTS / "quick" if opts.quick else RESULTS)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "summary.json").write_text(json.dumps(results, indent=1, default=float))
    summary = markdown(results)
    (directory / "summary.md").write_text(summary, encoding="utf-8")
    sys.stdout.flush()  # then the summary as the file holds it, UTF-8 in any locale (an en dash, a sigma)
    sys.stdout.buffer.write(summary.encode() + b"\n")
    sys.stdout.buffer.flush()
    plots(results, directory)
    print(f"wrote {directory / 'summary.md'} and the PNG plots next to it", file=sys.stderr)
    problems = failures(results)
    for problem in problems:
        print(f"FAILED {problem}", file=sys.stderr)
    if problems:
        print(f"{len(problems)} configuration(s) or task(s) failed", file=sys.stderr)
        return 1
    return 0


def failures(results: dict) -> list[str]:
    """Every configuration or task of ``results`` that failed or timed out, with its note."""
    out = []
    for axis, rows in results["sweeps"].items():
        out += [f"{axis} sweep, n={row['n']} d={row['d']} R={row.get('n_basis') or 'auto'} C={row['n_candidates']}: "
                f"{row['note']}" for row in rows if "note" in row]
    for task in ("end_to_end", "chebyshev"):
        if isinstance(results[task], dict) and "note" in results[task]:
            out.append(f"{task}: {results[task]['note']}")
    out += [f"solvers C={row['C']} R={row['R']}: {row['note']}" for row in results["solvers"] if "note" in row]
    return out


if __name__ == "__main__":
    sys.exit(main())
