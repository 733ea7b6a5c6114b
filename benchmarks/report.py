"""Markdown summary and PNG plots of benchmarks/run.py's results (formatting only)."""

from __future__ import annotations

from pathlib import Path

STAGES = ["read CSV", "moments", "marginals", "candidates", "LP", "blend", "sampling", "decode"]
GOALS = {"moments / read": 2.0, "LP / direct HiGHS": 1.5, "end to end": 1.0}


def _f(value, spec: str = ".3f") -> str:
    return "–" if value is None else format(value, spec)


def _ok(value: float | None, goal: float) -> str:
    if value is None:
        return "–"
    return "yes" if value <= goal else "**no**"


def _lp_ratio(row: dict) -> tuple[float | None, str]:
    """LP stage / direct HiGHS and a note; an unfinished direct solve only bounds the ratio."""
    direct = row.get("direct_simplex")
    if direct is None:
        return None, "W over --direct-max-entries: no direct solve"
    ratio = row["seconds"]["LP"] / direct["seconds"]
    if not direct["optimal"]:
        return ratio, f"direct solve stopped at its time limit ({direct['status']}): true ratio is lower"
    gap = abs(direct["objective"] - row["objective"])
    return ratio, f"objectives differ by {gap:.1e}"


def markdown(results: dict) -> str:
    opts = results["options"]
    command = "python benchmarks/run.py" + (" --quick" if opts["quick"] else "")
    lines = [
        "# synthdp benchmark summary",
        "",
        f"`{command}` in {results['elapsed_s'] / 60:.1f} min"
        + (f", ended {results['written']}" if "written" in results else "") + f"; {results['machine']}. "
        "Generated data (see benchmarks/run.py); defaults unless a sweep varies it: epsilon = 1, copula candidates, "
        "C = 1e4, R = auto. Times in seconds, memory in MB (tracemalloc peak of the stage above its start; "
        "`RSS` is the configuration process's peak resident memory, HiGHS included). `moments` is the pipeline's "
        "one pass over the rows (moments, histogram counts, products' sums) with the moments' noise, in a fresh "
        "process (one-time costs of a first fit included); `marginals` the noise on the histograms and products.",
        "",
    ]
    for axis, rows in results["sweeps"].items():
        lines += [f"## Stages against {axis}", "",
                  "| n | d | R | C | " + " | ".join(STAGES) + " | plain read | LP rounds / columns | peak MB (stage) | RSS MB |",
                  "|" + "---:|" * (4 + len(STAGES) + 1) + "---|---:|---:|"]
        for row in rows:
            if "note" in row:
                lines.append(f"| {row['n']} | {row['d']} | {row.get('n_basis') or 'auto'} | {row['n_candidates']} | "
                             + " | ".join("–" for _ in STAGES) + f" | – | {row['note']} | – | – |")
                continue
            seconds, peak = row["seconds"], row["peak_mb"]
            heaviest = max(STAGES, key=lambda s: peak[s])
            lines.append(
                f"| {row['n']} | {row['d']} | {row['R']} | {row['C']} | "
                + " | ".join(_f(seconds[s]) for s in STAGES)
                + f" | {_f(seconds['plain pandas.read_csv'])} | {row['lp_solver'].split('(')[-1].rstrip(')')} | "
                f"{peak[heaviest]:.0f} ({heaviest}) | {row['max_rss_mb']:.0f} |"
            )
        lines.append("")
    lines += ["## Ratios against the goals", "",
              "| configuration | moments / plain read (goal <= 2) | | LP stage / direct HiGHS (goal <= 1.5) | | note |",
              "|---|---:|:---:|---:|:---:|---|"]
    for _axis, rows in results["sweeps"].items():
        for row in rows:
            if "note" in row:
                continue
            moments = row["seconds"]["moments"] / row["seconds"]["plain pandas.read_csv"]
            lp, note = _lp_ratio(row)
            lines.append(f"| n={row['n']} d={row['d']} R={row['R']} C={row['C']} | {moments:.2f} | "
                         f"{_ok(moments, 2.0)} | {_f(lp, '.3f')} | {_ok(lp, 1.5)} | {note} |")
    lines += ["", "## End to end on data/ (defaults, epsilon = 1, bounds = min/max taken as public)", "",
              "`fit + sample`: in process, second run (`first`: the first run of the process, lazy imports included); "
              "`command`: `python -m synthdp.cli generate` wall time, Python start-up and CSV input/output included. "
              "Goal <= 1 s. Stage columns: the second run's timings.", "",
              "| data | n | d | fit + sample s | goal | first s | command s | goal | moments | marginals | candidates | LP |",
              "|---|---:|---:|---:|:---:|---:|---:|:---:|---:|---:|---:|---:|"]
    end_to_end = results["end_to_end"]
    for row in end_to_end if isinstance(end_to_end, list) else [{"dataset": "all", "note": end_to_end["note"]}]:
        if "note" in row or "n" not in row:
            lines.append(f"| {row['dataset']} | {row.get('note', '')} | | | | | {_f(row.get('cli_s'), '.2f')} | | | | | |")
            continue
        stages = row["stages_s"]
        lines.append(f"| {row['dataset']} | {row['n']} | {row['d']} | {row['fit_sample_s']:.2f} | "
                     f"{_ok(row['fit_sample_s'], 1.0)} | {row['first_fit_sample_s']:.2f} | {row['cli_s']:.2f} | "
                     f"{_ok(row['cli_s'], 1.0)} | "
                     + " | ".join(_f(stages.get(s)) for s in ("moments", "marginals", "candidates", "LP fit")) + " |")
    lines += ["", "## Chebyshev evaluation: recurrence vs naive cos(r arccos x)", "",
              "| n | d | R | ChebyshevBasis.evaluate s | naive s | speed-up | max abs difference "
              "| moments s | mean of evaluate s | speed-up | max abs difference |",
              "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    chebyshev = results["chebyshev"]
    for row in chebyshev if isinstance(chebyshev, list) else []:
        lines.append(f"| {row['n']} | {row['d']} | {row['R']} | {row['recurrence_s']:.4f} | {row['naive_s']:.4f} | "
                     f"{row['naive_s'] / row['recurrence_s']:.1f}x | {row['max_abs_difference']:.1e} | "
                     f"{row['moments_s']:.4f} | {row['mean_of_values_s']:.4f} | "
                     f"{row['mean_of_values_s'] / row['moments_s']:.1f}x | {row['moments_difference']:.1e} |")
    lines += ["", "## LP solvers at equal objective (pipeline LP, n = 1e4, d = 20)", "",
              f"Direct solves get a {opts['direct_limit']:g} s HiGHS time limit; column generation's time includes "
              "computing W's columns.", "",
              "| C | R | column generation s | objective | dual simplex s | objective | PDLP s | objective |",
              "|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for row in results["solvers"]:
        if "note" in row:
            lines.append(f"| {row['C']} | {row['R']} | {row['note']} |")
            continue
        cells = [f"{row['colgen_s']:.2f}", f"{row['colgen_objective']:.6f}"]
        for solver in ("simplex", "pdlp"):
            direct = row[solver]
            cells += [f"{direct['seconds']:.2f}" + ("" if direct["optimal"] else f" ({direct['status']})"),
                      _f(direct["objective"], ".6f")]
        lines.append(f"| {row['C']} | {row['R']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def plots(results: dict, directory: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    for axis, rows in results["sweeps"].items():
        done = [row for row in rows if "note" not in row]
        if len(done) < 2:
            continue
        xs = [row[axis] for row in done]
        fig, ax = plt.subplots(figsize=(6.4, 4.2))
        for stage in STAGES + ["plain pandas.read_csv"]:
            ax.plot(xs, [max(row["seconds"][stage], 1e-5) for row in done], marker="o",
                    linestyle="--" if stage.startswith("plain") else "-", label=stage)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(axis)
        ax.set_ylabel("seconds")
        ax.set_title(f"synthdp stages against {axis}")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, ncol=2)
        fig.tight_layout()
        fig.savefig(directory / f"stages_vs_{axis}.png", dpi=120)
        plt.close(fig)
    done = [row for row in results["sweeps"].get("n", []) if "note" not in row]
    if len(done) >= 2:
        fig, ax = plt.subplots(figsize=(6.4, 4.2))
        for stage in STAGES:
            ax.plot([row["n"] for row in done], [max(row["peak_mb"][stage], 1e-3) for row in done], marker="o", label=stage)
        ax.plot([row["n"] for row in done], [row["max_rss_mb"] for row in done], "k--", label="process peak RSS")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("n")
        ax.set_ylabel("peak MB")
        ax.set_title("memory per stage against n (d = 10)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, ncol=2)
        fig.tight_layout()
        fig.savefig(directory / "memory_vs_n.png", dpi=120)
        plt.close(fig)
