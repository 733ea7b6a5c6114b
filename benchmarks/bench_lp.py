"""Benchmark of the LP stage (the l1 fit) against a direct highspy solve.

Run from the repository root::

    python benchmarks/bench_lp.py            # full grid: C in {1e4, 3e4, 1e5}, R in {20, 100, 500}
    python benchmarks/bench_lp.py --quick    # C = 1e4, R in {20, 100}; well under a minute

Other options: ``--repeats N`` (best of N, default 1), ``--all`` (run the natural cvxpy
form at every size, not only for C*R <= 1e7), ``--timeout S`` (seconds per method and size,
default 180), ``--mem-limit-gb G`` (default 16), ``--C``/``--R`` (custom grid), ``--methods`` and ``--tag``
(suffix of the output names). Needs matplotlib for the figure (the ``experiments`` extra:
``pip install -e .[experiments]``); without it only the table is written.

What it measures
----------------
The LP  minimise ||W u - b||_1  s.t.  u >= 0, sum(u) = 1  on instances built with synthdp's
own code: C candidates uniform on [-1, 1]^20, W = ChebyshevBasis(lowest_degree_indices(20, R))
.design_matrix(candidates) (R x C, dense, entries in [-1, 1]), and b = W @ u_true + N(0, 0.01^2)
with u_true Dirichlet(1) weights on 200 random candidates (noisy moments). Fixed seed; the
candidates for a smaller C are a prefix of those for a larger C.

Three ways to solve it:

* ``highspy-direct``   synthdp.postprocess.lp.solve_l1_fit: equality form passed to HiGHS through highspy.
* ``cvxpy-equality``   synthdp.postprocess.lp.solve_l1_fit_cvxpy: the same equality form in cvxpy (cp.HIGHS).
* ``cvxpy-natural``    cp.Problem(cp.Minimize(cp.norm1(W @ u - b)), [u >= 0, cp.sum(u) == 1])
                       .solve(solver=cp.HIGHS); by default only where C*R <= 1e7 (memory).

Each (method, C, R) runs in its own Python subprocess, so the peak resident memory
(ru_maxrss of that process) is per method. Reported per run: wall time of the solve call
(best of --repeats, instance building excluded), its ratio to highspy-direct, the time
spent inside Highs.run() (measured by wrapping highspy.Highs.run, the rest being model
building / canonicalisation / solution recovery), simplex iterations, peak memory and the
part of it above the process's baseline after building W, and the objective
||W u - b||_1 recomputed from the returned weights, checked against highspy-direct within
1e-6 relative + 1e-8 absolute. A parent watchdog kills a run that exceeds --timeout or
--mem-limit-gb; a method that failed at some C is not retried at larger C for the same R,
and the cvxpy methods are skipped where highspy-direct has no result to compare with.

Outputs: benchmarks/results/bench_lp.md (table, also printed),
benchmarks/results/bench_lp.png (time vs C, log-log, one panel per R) and
benchmarks/results/bench_lp.json (raw numbers); ``--out-dir`` writes them to another folder.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

SEED = 20240611
DIM = 20
SUPPORT = 200
NOISE_STD = 0.01

FULL_C = (10_000, 30_000, 100_000)
FULL_R = (20, 100, 500)
QUICK_C = (10_000,)
QUICK_R = (20, 100)

DIRECT = "highspy-direct"
EQUALITY = "cvxpy-equality"
NATURAL = "cvxpy-natural"
METHODS = (DIRECT, EQUALITY, NATURAL)
NATURAL_MAX_ENTRIES = 1e7  # C*R above this needs --all for the natural form

# Rough peak bytes per entry of W, from trial runs (used only to skip a run up front when
# it would clearly exceed --mem-limit-gb; the watchdog is the actual guard). The natural form
# figure is the issue's 18 GB at C = 1e5, R = 500.
BYTES_PER_ENTRY = {DIRECT: 130.0, EQUALITY: 150.0, NATURAL: 360.0}

RTOL, ATOL = 1e-6, 1e-8
RESULTS_DIR = Path(__file__).resolve().parent / "results"
RESULT_PREFIX = "BENCH_LP_RESULT "


# --------------------------------------------------------------------------- instances


def make_instance(C: int, R: int, seed: int = SEED) -> tuple[np.ndarray, np.ndarray]:
    """W (R x C) and b (R,) for one benchmark size; deterministic in (C, R, seed)."""
    from synthdp.stats.chebyshev import ChebyshevBasis, lowest_degree_indices

    cand_seq, mix_seq, noise_seq = np.random.SeedSequence(seed).spawn(3)
    candidates = np.random.default_rng(cand_seq).uniform(-1.0, 1.0, size=(C, DIM))
    candidates = np.clip(candidates, -1.0, 1.0)
    design = ChebyshevBasis(lowest_degree_indices(DIM, R)).design_matrix(candidates)
    mix_rng = np.random.default_rng(mix_seq)
    support = mix_rng.choice(C, size=min(SUPPORT, C), replace=False)
    weights = mix_rng.dirichlet(np.ones(len(support)))
    noise = np.random.default_rng(noise_seq).normal(0.0, NOISE_STD, size=R)
    target = design[:, support] @ weights + noise
    return design, target


# --------------------------------------------------------------------------- worker (child)


def _maxrss_mb() -> float:
    # ru_maxrss is in kilobytes on Linux
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _instrument_highs(log: list[dict]) -> None:
    """Wrap highspy.Highs.run to record its wall time and simplex iterations."""
    import highspy

    original = highspy.Highs.run

    def run(self, *args, **kwargs):
        start = time.perf_counter()
        status = original(self, *args, **kwargs)
        seconds = time.perf_counter() - start
        try:
            iterations = int(self.getInfo().simplex_iteration_count)
        except Exception:  # pragma: no cover - informative only
            iterations = -1
        log.append({"seconds": seconds, "iterations": iterations})
        return status

    highspy.Highs.run = run


def _solve_natural(design: np.ndarray, target: np.ndarray) -> np.ndarray:
    import cvxpy as cp

    C = design.shape[1]
    u = cp.Variable(C)
    problem = cp.Problem(cp.Minimize(cp.norm1(design @ u - target)), [u >= 0, cp.sum(u) == 1])
    problem.solve(solver=cp.HIGHS)
    if problem.status != cp.OPTIMAL:
        raise RuntimeError(f"cvxpy natural form ended with status {problem.status}")
    return np.asarray(u.value)


def worker(method: str, C: int, R: int, repeats: int, seed: int) -> dict:
    """Build the instance, solve it ``repeats`` times with ``method``, report timings."""
    import highspy  # noqa: F401  (imported before the baseline so it is not counted)

    from synthdp.postprocess import lp

    if method != DIRECT:
        import cvxpy  # noqa: F401

    runs: list[dict] = []
    _instrument_highs(runs)

    design, target = make_instance(C, R, seed)
    base_mb = _maxrss_mb()

    attempts = []
    for _ in range(repeats):
        del runs[:]
        start = time.perf_counter()
        if method == DIRECT:
            weights = lp.solve_l1_fit(design, target).weights
        elif method == EQUALITY:
            weights = lp.solve_l1_fit_cvxpy(design, target).weights
        elif method == NATURAL:
            weights = _solve_natural(design, target)
        else:
            raise ValueError(method)
        seconds = time.perf_counter() - start
        attempts.append(
            {
                "seconds": seconds,
                "highs_seconds": sum(r["seconds"] for r in runs),
                "iterations": sum(r["iterations"] for r in runs),
                "weights": weights,
            }
        )
    peak_mb = _maxrss_mb()
    best = min(attempts, key=lambda a: a["seconds"])
    weights = best["weights"]
    return {
        "method": method,
        "C": C,
        "R": R,
        "status": "ok",
        "seconds": best["seconds"],
        "all_seconds": [a["seconds"] for a in attempts],
        "highs_seconds": best["highs_seconds"],
        "iterations": best["iterations"],
        "objective": float(np.abs(design @ weights - target).sum()),
        "weight_sum_error": float(abs(weights.sum() - 1.0)),
        "weight_min": float(weights.min()),
        "support": int((weights > 1e-9).sum()),
        "peak_mb": peak_mb,
        "base_mb": base_mb,
    }


def time_equality_form(C: int, R: int, seed: int) -> dict:
    """Separate timing of synthdp.postprocess.lp.equality_form (scipy.sparse assembly) at one size."""
    from synthdp.postprocess.lp import equality_form

    design, target = make_instance(C, R, seed)
    start = time.perf_counter()
    matrix, _, _ = equality_form(design, target)
    return {"C": C, "R": R, "equality_form_seconds": time.perf_counter() - start, "nnz": int(matrix.nnz)}


# --------------------------------------------------------------------------- parent


def _rss_mb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return 0.0


def run_child(args: list[str], timeout: float, mem_limit_mb: float) -> tuple[dict | None, str, float]:
    """Run this script as a worker; returns (result or None, failure note, max polled RSS MB)."""
    command = [sys.executable, os.path.abspath(__file__), *args]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    start = time.monotonic()
    polled_mb = 0.0
    note = ""
    while process.poll() is None:
        polled_mb = max(polled_mb, _rss_mb(process.pid))
        if polled_mb > mem_limit_mb:
            note = f"killed: memory > {mem_limit_mb / 1024:.0f} GB"
        elif time.monotonic() - start > timeout:
            note = f"timeout: > {timeout:.0f} s"
        if note:
            process.kill()
            process.wait()
            return None, note, polled_mb
        time.sleep(0.1)
    stdout, stderr = process.communicate()
    for line in stdout.splitlines():
        if line.startswith(RESULT_PREFIX):
            return json.loads(line[len(RESULT_PREFIX):]), "", polled_mb
    last = (stderr.strip().splitlines() or ["no output"])[-1]
    return None, f"failed (exit {process.returncode}): {last[:120]}", polled_mb


def objectives_agree(value: float, reference: float) -> bool:
    return abs(value - reference) <= RTOL * abs(reference) + ATOL


def run_grid(opts: argparse.Namespace) -> tuple[list[dict], list[dict]]:
    Cs = opts.C or (QUICK_C if opts.quick else FULL_C)
    Rs = opts.R or (QUICK_R if opts.quick else FULL_R)
    mem_limit_mb = opts.mem_limit_gb * 1024.0
    rows: list[dict] = []
    failed_at: dict[tuple[str, int], int] = {}  # (method, R) -> smallest C that failed
    for R in sorted(Rs):
        for C in sorted(Cs):
            direct_result = None
            for method in opts.methods:
                row = {"method": method, "C": C, "R": R, "status": "skipped"}
                estimate_mb = BYTES_PER_ENTRY[method] * C * R / 2**20
                if method == NATURAL and C * R > NATURAL_MAX_ENTRIES and not opts.all:
                    row["note"] = f"skipped: C*R > {NATURAL_MAX_ENTRIES:.0e} (use --all)"
                elif (method, R) in failed_at:
                    row["note"] = f"skipped: failed at C={failed_at[(method, R)]:.0e}".replace("e+0", "e")
                elif method != DIRECT and direct_result is None:
                    row["note"] = "skipped: no highspy-direct result to compare with"
                elif estimate_mb > mem_limit_mb:
                    row["note"] = f"skipped: est. {estimate_mb / 1024:.0f} GB > {opts.mem_limit_gb:g} GB limit"
                else:
                    print(f"  running {method:15s} C={C:>7d} R={R:>4d} ...", end="", flush=True, file=sys.stderr)
                    args = ["--worker", method, str(C), str(R), "--repeats", str(opts.repeats), "--seed", str(opts.seed)]
                    result, note, polled_mb = run_child(args, opts.timeout, mem_limit_mb)
                    if result is None:
                        row["note"] = note
                        row["peak_mb"] = polled_mb
                        failed_at[(method, R)] = C
                        print(f" {note}", file=sys.stderr)
                    else:
                        row.update(result)
                        print(f" {row['seconds']:.2f} s, {row['peak_mb']:.0f} MB", file=sys.stderr)
                if method == DIRECT and row["status"] == "ok":
                    direct_result = row
                if row["status"] == "ok" and direct_result is not None:
                    row["ratio"] = row["seconds"] / direct_result["seconds"]
                    row["agrees"] = objectives_agree(row["objective"], direct_result["objective"])
                rows.append(row)
    eqform = []
    if not opts.skip_eqform:
        for R in sorted(Rs):
            for C in sorted(Cs):
                if BYTES_PER_ENTRY[DIRECT] * C * R / 2**20 > mem_limit_mb:
                    continue
                result, _, _ = run_child(["--eqform", str(C), str(R), "--seed", str(opts.seed)], opts.timeout, mem_limit_mb)
                if result is not None:
                    eqform.append(result)
    return rows, eqform


# --------------------------------------------------------------------------- reporting


def _fmt(value, spec: str, missing: str = "–") -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return missing
    return format(value, spec)


def _custom_args(opts: argparse.Namespace) -> str:
    parts = []
    if opts.C:
        parts.append("--C " + " ".join(map(str, opts.C)))
    if opts.R:
        parts.append("--R " + " ".join(map(str, opts.R)))
    if list(opts.methods) != list(METHODS):
        parts.append("--methods " + " ".join(opts.methods))
    if opts.repeats != 1:
        parts.append(f"--repeats {opts.repeats}")
    if opts.timeout != 180.0:
        parts.append(f"--timeout {opts.timeout:g}")
    if opts.tag:
        parts.append(f"--tag {opts.tag}")
    return "".join(" " + p for p in parts)


def markdown(rows: list[dict], eqform: list[dict], opts: argparse.Namespace, elapsed: float) -> str:
    import platform

    import cvxpy
    import highspy

    try:
        highs_version = highspy.Highs().version()
    except Exception:  # pragma: no cover
        highs_version = "?"
    lines = [
        "# LP stage benchmark: cvxpy vs direct highspy",
        "",
        f"Generated by `python benchmarks/bench_lp.py{' --quick' if opts.quick else ''}"
        f"{' --all' if opts.all else ''}{_custom_args(opts)}` (repeats={opts.repeats}, timeout={opts.timeout:g} s, "
        f"memory limit={opts.mem_limit_gb:g} GB, seed={opts.seed}) in {elapsed / 60:.1f} min.",
        f"Python {platform.python_version()}, numpy {np.__version__}, cvxpy {cvxpy.__version__}, "
        f"HiGHS {highs_version}, {os.cpu_count()} CPUs.",
        "",
        "Instance: W = Chebyshev design matrix (d = 20, lowest-degree R functions) at C uniform candidates; "
        "b = W u_true + N(0, 0.01^2), u_true Dirichlet on 200 candidates.",
        "`seconds`: wall time of the solve call (best of repeats); `ratio`: seconds / highspy-direct seconds; "
        "`HiGHS run s`: time inside Highs.run() (the rest is model building, cvxpy canonicalisation and "
        "solution recovery); `peak MB`: ru_maxrss of the worker process; `+MB`: peak above the worker's "
        "baseline after building W; `objective`: ||W u - b||_1 of the returned u; `agrees`: within "
        "1e-6 rel + 1e-8 abs of highspy-direct.",
        "",
        "| C | R | method | seconds | ratio | HiGHS run s | simplex iters | peak MB | +MB | objective | agrees | note |",
        "|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|:---:|---|",
    ]
    for row in rows:
        ok = row["status"] == "ok"
        lines.append(
            "| "
            + " | ".join(
                [
                    f"{row['C']:.0e}".replace("e+0", "e"),
                    str(row["R"]),
                    row["method"],
                    _fmt(row.get("seconds"), ".2f"),
                    _fmt(row.get("ratio"), ".2f"),
                    _fmt(row.get("highs_seconds"), ".2f"),
                    _fmt(row.get("iterations"), "d"),
                    _fmt(row.get("peak_mb"), ".0f") if ok or row.get("peak_mb") else "–",
                    _fmt(row["peak_mb"] - row["base_mb"], ".0f") if ok else "–",
                    _fmt(row.get("objective"), ".3e"),
                    ("yes" if row["agrees"] else "**NO**") if "agrees" in row else "–",
                    row.get("note", ""),
                ]
            )
            + " |"
        )
    lines += ["", "## 1.5x rule", ""]
    for method in (EQUALITY, NATURAL):
        measured = [r for r in rows if r["method"] == method and "ratio" in r]
        meets = [r for r in measured if r["ratio"] <= 1.5]
        if not measured:
            lines.append(f"- {method}: no measurement.")
            continue
        ratios = ", ".join(f"C={r['C']:.0e}/R={r['R']}: {r['ratio']:.2f}x".replace("e+0", "e") for r in measured)
        lines.append(
            f"- {method}: within 1.5x at {len(meets)} of {len(measured)} measured sizes "
            f"(ratios {ratios})."
        )
    if eqform:
        lines += [
            "",
            "## Direct path: model building vs HiGHS",
            "",
            "`equality_form s`: synthdp.postprocess.lp.equality_form alone (scipy.sparse assembly of [[W, -I, I], [1, 0, 0]]), "
            "timed in a separate process; compare with the highspy-direct `seconds` and `HiGHS run s` above.",
            "",
            "| C | R | nnz | equality_form s | direct total s | HiGHS run s | outside HiGHS s |",
            "|---:|---:|---:|---:|---:|---:|---:|",
        ]
        direct = {(r["C"], r["R"]): r for r in rows if r["method"] == DIRECT and r["status"] == "ok"}
        for e in eqform:
            d = direct.get((e["C"], e["R"]))
            lines.append(
                f"| {e['C']:.0e} | {e['R']} | {e['nnz']} | {e['equality_form_seconds']:.3f} | "
                f"{_fmt(d and d['seconds'], '.2f')} | {_fmt(d and d['highs_seconds'], '.2f')} | "
                f"{_fmt(d and d['seconds'] - d['highs_seconds'], '.3f')} |".replace("e+0", "e")
            )
    return "\n".join(lines) + "\n"


def plot(rows: list[dict], path: Path, timeout: float) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed (pip install -e .[experiments]); no figure written", file=sys.stderr)
        return False
    Rs = sorted({r["R"] for r in rows})
    Cs = sorted({r["C"] for r in rows})
    fig, axes = plt.subplots(1, len(Rs), figsize=(4.2 * len(Rs), 3.8), squeeze=False, sharey=True)
    styles = {DIRECT: ("tab:blue", "o"), EQUALITY: ("tab:orange", "s"), NATURAL: ("tab:red", "^")}
    for ax, R in zip(axes[0], Rs):
        for method in METHODS:
            color, marker = styles[method]
            done = sorted((r["C"], r["seconds"]) for r in rows if r["R"] == R and r["method"] == method and r["status"] == "ok")
            if done:
                ax.plot(*zip(*done), marker=marker, color=color, label=method)
            timed_out = [r["C"] for r in rows if r["R"] == R and r["method"] == method and r.get("note", "").startswith(("timeout", "killed"))]
            if timed_out:
                ax.scatter(timed_out, [timeout] * len(timed_out), marker="x", color=color, s=60,
                           label=f"{method} (> timeout / killed)")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(Cs[0] / 1.25, Cs[-1] * 1.25)
        ax.set_title(f"R = {R}")
        ax.set_xlabel("C (candidates)")
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].set_ylabel("wall time of the solve [s]")
    handles = {}
    for ax in axes[0]:
        for h, l in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(l, h)
    fig.legend(handles.values(), handles.keys(), loc="lower center", ncol=3, fontsize=8, frameon=False)
    fig.suptitle("l1 fit LP: direct highspy vs cvxpy (HiGHS)")
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    fig.savefig(path, dpi=130)
    plt.close(fig)
    return True


# --------------------------------------------------------------------------- entry point


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="C = 1e4, R in {20, 100} only")
    parser.add_argument("--all", action="store_true", help="run the natural cvxpy form at every size")
    parser.add_argument("--repeats", type=int, default=1, help="best of N solves per method and size")
    parser.add_argument("--timeout", type=float, default=180.0, help="seconds per method and size (default 180)")
    parser.add_argument("--mem-limit-gb", type=float, default=16.0, help="kill a worker above this RSS (default 16)")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--C", type=int, nargs="+", help="custom candidate counts")
    parser.add_argument("--R", type=int, nargs="+", help="custom basis sizes")
    parser.add_argument("--methods", nargs="+", choices=METHODS, default=list(METHODS),
                        help="methods to run (highspy-direct is always run: it is the reference)")
    parser.add_argument("--tag", default="", help="suffix for the output names (bench_lp<tag>.md/.png)")
    parser.add_argument("--out-dir", type=Path, default=RESULTS_DIR,
                        help="folder of the outputs (default benchmarks/results)")
    parser.add_argument("--skip-eqform", action="store_true", help="do not time equality_form separately")
    parser.add_argument("--worker", nargs=3, metavar=("METHOD", "C", "R"), help=argparse.SUPPRESS)
    parser.add_argument("--eqform", nargs=2, type=int, metavar=("C", "R"), help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    opts = parse_args(argv)
    opts.methods = [m for m in METHODS if m in opts.methods or m == DIRECT]
    if opts.worker:
        method, C, R = opts.worker[0], int(opts.worker[1]), int(opts.worker[2])
        print(RESULT_PREFIX + json.dumps(worker(method, C, R, opts.repeats, opts.seed)), flush=True)
        return 0
    if opts.eqform:
        print(RESULT_PREFIX + json.dumps(time_equality_form(*opts.eqform, opts.seed)), flush=True)
        return 0

    started = time.monotonic()
    rows, eqform = run_grid(opts)
    elapsed = time.monotonic() - started
    opts.out_dir.mkdir(parents=True, exist_ok=True)
    report = markdown(rows, eqform, opts, elapsed)
    md_path = opts.out_dir / f"bench_lp{opts.tag}.md"
    md_path.write_text(report, encoding="utf-8")
    raw = {"options": {k: v for k, v in vars(opts).items() if k not in ("worker", "eqform", "out_dir")},
           "elapsed_seconds": elapsed, "rows": rows, "equality_form": eqform}
    (opts.out_dir / f"bench_lp{opts.tag}.json").write_text(json.dumps(raw, indent=1))
    print(report)
    png_path = opts.out_dir / f"bench_lp{opts.tag}.png"
    if plot(rows, png_path, opts.timeout):
        print(f"wrote {md_path} and {png_path}")
    else:
        print(f"wrote {md_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
