"""Markdown rows, plots and run-time estimates shared by ``paper_tables.py`` and ``eps_sweep.py``.

Everything here reads the results of :func:`harness.run_rounds` (``{"status", "message",
"rounds"}``) and never runs a method.
"""

from __future__ import annotations

import math

import numpy as np
from common import fmt
from harness import LABELS, PEER_METHODS

from synthdp.study import SIGMAS

#: Error keys of ``synthdp.evaluation.queries.WorstCaseErrors`` and how the tables name them.
ERROR_KINDS = (("relative", "**rel**"), ("absolute_scaled", "abs f/Σα"), ("absolute", "abs raw f"))
FULL_ROUNDS, FULL_QUERIES = 20, 10_000


def mean_errors(result: dict, kind: str = "relative") -> np.ndarray:
    """Mean over rounds of one worst-case error, shape (len(SIGMAS),)."""
    return np.mean([entry["errors"][kind] for entry in result["rounds"]], axis=0)


def time_cell(method: str, result: dict) -> str:
    """Mean wall seconds [CPU seconds] of a run; the paper-constant run is 5 releases."""
    rounds = result["rounds"]
    wall, cpu = np.mean([e["seconds"] for e in rounds]), np.mean([e["cpu_seconds"] for e in rounds])
    cell = f"{wall:.1f} [{cpu:.1f}]"
    if method == "paper-constant":
        slowest = np.mean([max(r["seconds"] for r in e["info"]["releases"]) for e in rounds])
        cell += f" for 5 releases; slowest σ {slowest:.1f}"
    elif method in PEER_METHODS and "fit_seconds" in rounds[0]["info"]:
        cell += f"; fit {np.mean([e['info']['fit_seconds'] for e in rounds]):.1f}"
    return cell


def utility_cells(result: dict) -> list[str]:
    """Distinct rows, mean/max KS, max/mean correlation error and model score, mean over rounds with rows."""
    measured = [e["utility"] for e in result["rounds"] if e.get("utility")]
    if not measured:
        return ["—"] * 4

    def mean(key: str) -> float:
        return float(np.mean([u[key] for u in measured]))

    cells = [f"{mean('distinct_rows'):.0f}", f"{mean('ks_mean'):.2f} / {mean('ks_max'):.2f}",
             f"{mean('correlation_max'):.2f} / {mean('correlation_mean'):.2f}"]
    if "model" in measured[0]:
        synth = np.mean([u["model"]["train_synth_test_real"] for u in measured])
        cells.append(f"{synth:.2f} (real {measured[0]['model']['train_real_test_real']:.2f})")
    else:
        cells.append("—")
    if len(measured) < len(result["rounds"]):
        cells[0] += f" ({len(measured)} of {len(result['rounds'])} rounds kept rows)"
    return cells


UTILITY_HEADER = ["distinct rows", "KS mean / max", "corr. err. max / mean", "model"]


def method_rows(method: str, result: dict, label: str | None = None) -> list[str]:
    """The markdown rows of one method: rel, abs f/Σα and abs raw f, or one row saying why not."""
    label = label or LABELS[method]
    blanks = len(SIGMAS) + 1 + len(UTILITY_HEADER)
    rounds = result["rounds"]
    note = ""
    if result["status"] != "ok":
        note = f"{result['status']}: {result['message'][:200]}".replace("|", "/").replace("\n", " ")
    if not rounds:
        return [f"| {label} | 0 | — | {note or 'not run'} |" + " |" * (blanks - 1)]
    lines = []
    for kind, short in ERROR_KINDS:
        first = kind == "relative"
        head = f"| {label} | {len(rounds)}{' (' + note + ')' if note and first else ''} | {short} | "
        tail = [time_cell(method, result), *utility_cells(result)] if first else [""] * (1 + len(UTILITY_HEADER))
        lines.append(head + " | ".join(fmt(mean_errors(result, kind), 4) + tail) + " |")
    return lines


def estimate_seconds(results: dict, queries: int, rounds: int = FULL_ROUNDS) -> dict[str, float]:
    """Projected seconds of ``rounds`` rounds at 10 000 queries, per method, from the measured runs.

    ``results`` maps a label to a run_rounds result. Generation time scales with the rounds,
    evaluation time also with 10 000 / ``queries``; cached runs count their recorded times.
    """
    scale = FULL_QUERIES / queries
    out = {}
    for label, result in results.items():
        rounds_seen = result["rounds"]
        if not rounds_seen:
            continue
        generation = np.mean([e["seconds"] for e in rounds_seen])
        evaluation = np.mean([e["evaluation_seconds"] or 0.0 for e in rounds_seen])
        out[label] = rounds * (generation + scale * evaluation)
    return out


def crossing(epsilons: list[float], errors: np.ndarray, target: float) -> str:
    """The smallest epsilon with error <= target, interpolated in log-log; or why there is none."""
    below = np.flatnonzero(errors <= target)
    if below.size == 0:
        return f"not reached by ε = {epsilons[-1]:g}"
    i = int(below[0])
    if i == 0 or np.isnan(errors[i - 1]):  # nothing measured just below: no interpolation
        return f"≤ {epsilons[i]:g}"
    (e0, e1), (y0, y1) = epsilons[i - 1:i + 1], errors[i - 1:i + 1]
    fraction = (math.log(target) - math.log(y0)) / (math.log(y1) - math.log(y0)) if y1 != y0 else 1.0
    return f"{math.exp(math.log(e0) + fraction * (math.log(e1) - math.log(e0))):.2g}"


def plot_errors(ax, sigmas, series: dict, published: dict | None, kind: str, ylabel: str) -> None:
    """One panel: error against sigma, one line per method, the paper's numbers as black crosses."""
    for label, values in series.items():
        ax.plot(sigmas, values, marker="o", label=label)
    if published is not None:
        ax.plot(sigmas, published[kind], "kx--", label="paper (published)", markersize=8)
    ax.set_yscale("log")
    ax.set_xlabel("σ")
    ax.set_ylabel(ylabel)
    ax.set_xticks(list(sigmas))
    ax.grid(True, which="both", alpha=0.3)
