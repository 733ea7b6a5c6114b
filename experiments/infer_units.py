"""Do synthdp.infer's intervals cover for a release by privacy unit? A population of units whose rows are alike.

By privacy unit (``--privacy-unit``) each unit's rows are bounded and the release's noise is scaled to
a unit's contribution; a copy's population carries synthetic units drawn with the released numbers of
units per contribution size, so each copy bounds and noises by unit as the release did. A synthetic
unit's rows are independent draws, where a real unit's are often alike: this experiment asks whether
the intervals still cover when they are. The population: 40 000 units of 1 to 5 rows, each unit's rows
sharing a unit effect (x = 0.7 u + 0.7 e, y = 0.5 x + 0.5 u + 0.7 e', u per unit: a row's x and its
unit's other rows' correlate at about .5); each release a sample of 1 500 units at (1, 1e-10), at most
5 rows a unit; 10 copies; the intervals of two means, a correlation and an OLS slope and intercept against
the population's row-level values, beside the usual interval on the real sample's rows (which ignores
the clustering).

    python experiments/infer_units.py               # 100 releases: about 4 minutes
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from common import RESULTS_DIR, command_line, generated_by, log, table_statistics
from scipy import stats

from synthdp import SmoothSynthesizer, infer

SCRIPT = "infer_units.py"
OUT = RESULTS_DIR / "infer_units.md"
EPSILON, DELTA, MAX_ROWS = 1.0, 1e-10, 5
BOUNDS = {"x": [-4.0, 4.0], "y": [-5.0, 5.0]}
STATISTIC = table_statistics(means=["x", "y"], correlations=[("x", "y")], ols=[("y", "x")])


def population(units: int, rng: np.random.Generator) -> pd.DataFrame:
    """``units`` units of 1 to MAX_ROWS rows whose rows share a unit effect; columns unit, x, y and _unit (its number)."""
    sizes = rng.integers(1, MAX_ROWS + 1, units)
    unit = np.repeat(np.arange(units), sizes)
    effect = rng.normal(size=units)[unit]
    x = 0.7 * effect + 0.7 * rng.normal(size=len(unit))
    y = 0.5 * x + 0.5 * effect + 0.7 * rng.normal(size=len(unit))
    return pd.DataFrame({"unit": [f"u{i}" for i in unit], "x": x, "y": y, "_unit": unit})


def naive_intervals(sample: pd.DataFrame) -> pd.Series:
    """The usual 95 % intervals' half-widths on the real sample's rows (as if they were independent)."""
    n = len(sample)
    r = sample["x"].corr(sample["y"])
    slope = stats.linregress(sample["x"], sample["y"])
    z = stats.norm.ppf(0.975)
    return pd.Series({"mean x": z * sample["x"].std() / np.sqrt(n), "mean y": z * sample["y"].std() / np.sqrt(n),
                      "corr x ~ y": z * (1 - r**2) / np.sqrt(n - 3), "ols y ~ x": z * slope.stderr,
                      "ols y ~ (intercept)": z * slope.intercept_stderr})


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--releases", type=int, default=100)
    parser.add_argument("--units", type=int, default=1500, help="units per sample (default 1500)")
    parser.add_argument("--copies", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    rng = np.random.default_rng(args.seed)
    people = population(40_000, rng)
    truth = STATISTIC(people.drop(columns="_unit"))
    rows = []
    for k in range(args.releases):
        chosen = rng.choice(people["_unit"].max() + 1, args.units, replace=False)
        sample = people[np.isin(people["_unit"].to_numpy(), chosen)].drop(columns="_unit").reset_index(drop=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the seed's warning
            synth = SmoothSynthesizer(epsilon=EPSILON, delta=DELTA, seed=args.seed + k, privacy_unit="unit",
                                      max_rows_per_unit=MAX_ROWS).fit(sample, bounds=BOUNDS)
            result = infer(synth.sample_copies(args.copies, seed=args.seed + 1000 + k), STATISTIC)
        real, half = STATISTIC(sample), naive_intervals(sample)
        for element, row in result.iterrows():
            rows.append({"statistic": element, "truth": truth[element], "estimate": row["estimate"],
                         "std_error": row["std_error"], "lower": row["lower"], "upper": row["upper"],
                         "naive_covers": abs(real[element] - truth[element]) <= half[element],
                         "width_ratio": (row["upper"] - row["lower"]) / (2 * half[element])})
        if (k + 1) % 10 == 0:
            log(f"release {k + 1} of {args.releases}")
    frame = pd.DataFrame(rows)
    frame["covers"] = (frame["lower"] <= frame["truth"]) & (frame["truth"] <= frame["upper"])
    frame["z"] = (frame["estimate"] - frame["truth"]) / frame["std_error"]
    lines = ["| statistic | population value | coverage | usual interval on the real rows | bias / se | sd / se | "
             "width / usual |", "|---|---:|---:|---:|---:|---:|---:|"]
    for element, group in frame.groupby("statistic", sort=False):
        lines.append(f"| {element} | {group['truth'].iloc[0]:.3f} | {group['covers'].mean():.3f} | "
                     f"{group['naive_covers'].mean():.3f} | {group['z'].mean():+.2f} | {group['z'].std():.2f} | "
                     f"{group['width_ratio'].median():.1f} |")
    margin = 1.96 * np.sqrt(0.95 * 0.05 / args.releases)
    text = ["# Coverage of synthdp.infer's intervals for a release by privacy unit", "",
            f"{generated_by(command_line(SCRIPT, argv))}; {time.perf_counter() - start:.0f} s.", "",
            f"{args.releases} releases, each of {args.units} units drawn from a population of 40 000 units of 1 to "
            f"{MAX_ROWS} rows whose rows share a unit effect (the module docstring), at (ε, δ) = ({EPSILON:g}, "
            f"{DELTA:g}) by unit, at most {MAX_ROWS} rows a unit, bounds x in [-4, 4] and y in [-5, 5]; {args.copies} "
            "copies each. *coverage*: how often synthdp.infer's nominal 95 % interval holds the population's value "
            f"(± {margin:.3f} at .95 for this many releases); *usual interval on the real rows*: the textbook interval "
            "computed on the sample's rows as if independent; z = (estimate - value) / se (with 10 copies, Student's "
            "t on 9 degrees of freedom gives sd / se about 1.13); *width / usual*: the median ratio of the widths.", "",
            *lines, ""]
    args.out.write_text("\n".join(text), encoding="utf-8")
    log(f"wrote {args.out}")


if __name__ == "__main__":
    main()
