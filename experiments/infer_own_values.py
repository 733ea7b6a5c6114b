"""Do synthdp.infer's intervals cover a small table's own values? By whether the release measured the pair.

On a small table the default release chooses the pairs worth measuring (pima and energy at (1, 1e-10):
9 and 13 of their 36 and 45 pairs), so a statistic of two columns reads either a pair the release
measured or one it did not. This experiment releases a table many times (the real table itself, not
samples of a population: the truth is each statistic's value on the table, which an interval meant for
the population covers at least as often, its sampling part aside), makes copies of each release, and
counts how often `synthdp.infer`'s 95 % intervals cover the table's value: every correlation of two
columns, and a few regression coefficients and group means, split by `measured`. Run it with another
synthdp on the path (``PYTHONPATH=<a checkout of another commit>``) to compare two versions on the same
seeded releases; the results file names the commit.

    python experiments/infer_own_values.py                     # pima and energy, 30 releases: about 3 minutes
    python experiments/infer_own_values.py --tables pima --releases 10 --out /tmp/x.md
"""

from __future__ import annotations

import argparse
import itertools
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from common import DATA_DIR, RESULTS_DIR, command_line, generated_by, log, table_statistics

from synthdp import SmoothSynthesizer, infer

SCRIPT = "infer_own_values.py"
OUT = RESULTS_DIR / "infer_own_values.md"
EPSILON, DELTA = 1.0, 1e-10
# beside every correlation: regression coefficients (target, predictors) and group means (column, by an integer column)
EXTRA = {"pima": {"ols": [("glucose", "bmi", "age"), ("bmi", "skin_thickness", "blood_pressure")],
                  "group_means": [("glucose", "outcome"), ("bmi", "outcome")]},
         "energy": {"ols": [("heating_load", "relative_compactness", "glazing_area"), ("cooling_load", "wall_area", "roof_area")],
                    "group_means": [("heating_load", "orientation")]}}


def bounds_of(frame: pd.DataFrame) -> dict:
    """Each column's min and max, taken as public; a column of whole numbers typed integer."""
    return {name: {"bounds": [float(values.min()), float(values.max())], "type": "integer"} if (values % 1 == 0).all()
            else [float(values.min()), float(values.max())] for name, values in frame.items()}


def run_table(name: str, releases: int, copies: int, seed: int) -> pd.DataFrame:
    """One row per (release, statistic element): the table's value, infer's result and whether it reads a measured pair."""
    real = pd.read_csv(DATA_DIR / f"{name}.csv")
    extra = EXTRA.get(name, {})
    statistic = table_statistics(correlations=list(itertools.combinations(real.columns, 2)),
                                  ols=extra.get("ols", []), group_means=extra.get("group_means", []))
    truth = statistic(real)
    bounds = bounds_of(real)
    rows = []
    for k in range(releases):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the seed's warning, infer's of the unmeasured pairs (counted below)
            synth = SmoothSynthesizer(epsilon=EPSILON, delta=DELTA, seed=seed + k).fit(real, bounds=bounds)
            result = infer(synth.sample_copies(copies, seed=seed + 1000 + k), statistic)
        for element, row in result.iterrows():
            rows.append({"release": k, "statistic": element, "truth": truth.get(element, np.nan),
                         "estimate": row["estimate"], "std_error": row["std_error"], "lower": row["lower"],
                         "upper": row["upper"], "measured": bool(row["measured"])})
        log(f"{name}: release {k + 1} of {releases}")
    return pd.DataFrame(rows)


def summary(results: pd.DataFrame) -> list[str]:
    """The coverage table by kind of statistic and `measured`."""
    results = results[results["truth"].notna()].copy()
    results["kind"] = results["statistic"].str.split(" ").str[0].map({"corr": "correlation", "ols": "OLS", "mean": "group mean"})
    results["interval"] = results["std_error"].notna()
    results["covers"] = results["interval"] & (results["lower"] <= results["truth"]) & (results["truth"] <= results["upper"])
    results["z"] = (results["estimate"] - results["truth"]) / results["std_error"]
    lines = ["| statistics | measured | elements | with an interval | coverage of those | median \\|z\\| | mean se |",
             "|---|---|---:|---:|---:|---:|---:|"]
    for (kind, measured), group in results.groupby(["kind", "measured"]):
        given = group[group["interval"]]
        cover = f"{given['covers'].mean():.3f}" if len(given) else "n/a"
        z = f"{given['z'].abs().median():.2f}" if len(given) else "n/a"
        se = f"{given['std_error'].mean():.3g}" if len(given) else "n/a"
        lines.append(f"| {kind} | {'yes' if measured else 'no'} | {len(group)} | {group['interval'].mean():.2f} | {cover} | {z} | {se} |")
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", nargs="+", default=["pima", "energy"])
    parser.add_argument("--releases", type=int, default=30)
    parser.add_argument("--copies", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    sections = []
    for name in args.tables:
        results = run_table(name, args.releases, args.copies, args.seed)
        sections += [f"## {name}", "", *summary(results), ""]
    text = ["# Coverage of synthdp.infer's intervals on a table's own values, by whether the release measured the pair",
            "", f"{generated_by(command_line(SCRIPT, argv))}; {time.perf_counter() - start:.0f} s.", "",
            f"Each table released {args.releases} times at (ε, δ) = ({EPSILON:g}, {DELTA:g}) (seeds {args.seed} on), bounds "
            "its min and max taken as public (whole-number columns typed integer); each release's "
            f"{args.copies} copies, and `synthdp.infer`'s nominal 95 % intervals of every correlation of two columns "
            "and of a few regression coefficients and group means, against the table's own value. *measured*: "
            "infer's column (every pair the element reads measured by the release); *with an interval*: the share "
            "of elements that have one (infer gives none where a pair is not measured, since 2026-12-02); *coverage "
            "of those*: how often the interval holds the table's value; z = (estimate - value) / se.", "", *sections]
    args.out.write_text("\n".join(text), encoding="utf-8")
    log(f"wrote {args.out}")


if __name__ == "__main__":
    main()
