"""Do synthdp.infer's intervals cover? The real table as the population, samples of n rows drawn
from it, each released once, its copies, and the 95 % intervals of what analysts compute.

    python experiments/infer_coverage.py [--tables pks ctg pima energy] [--rows 2000 5000] [--releases 200] [--copies 20] [--workers 2]

For each table (its min/max bounds taken as public, :data:`common.BOUNDS_NOTE`) and sample size n:
``--releases`` samples of n rows drawn with replacement from the table (the population: its rows
i.i.d., whatever n against its size), each
released by the default at (1, ``--delta``, 1e-10 unless given; 0: pure epsilon-DP) (seeded: reproducible, NOT private), ``--copies`` copies
(:meth:`synthdp.SmoothSynthesizer.sample_copies`), and :func:`synthdp.infer`'s 95 % intervals of:
each of three columns' mean, one correlation, and the OLS coefficients of one column on two others;
on pima also the share of a 0/1 column (values above 0.5), a group mean and logistic regression coefficients
(robust standard errors); adult, a mixed table released with configs/adult_schema.json, adds the same three
on indicators of its levels (male: sex = Male; high_income: income = >50K).
Each is scored by whether it covers the population's value; beside it the usual interval computed
on the release's synthetic table as if it were real (naive), and the same usual interval on the
real sample (it covers about 95 %, and its width is the yardstick: ``width`` is ours over it).

Writes experiments/results/infer_coverage.md (``--out``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from common import DATA_DIR, RESULTS_DIR, command_line, generated_by, load_dataset, log
from scipy import stats

from synthdp import SmoothSynthesizer, infer
from synthdp.study import gdp_mu

OUT = RESULTS_DIR / "infer_coverage.md"
CACHE = RESULTS_DIR / "cache" / "infer_coverage"
# per table: three columns for the means, a pair for the correlation, a target and two predictors for OLS;
# optionally (EXTRAS) a binary column's share, a group mean (column, binary group column) and a logistic
# regression (binary target, two predictors)
SPECS = {"pks": (["age", "motor_UPDRS", "HNR"], ("motor_UPDRS", "total_UPDRS"), ("motor_UPDRS", ["age", "HNR"])),
         "ctg": (["LB", "ASTV", "Mean"], ("Mode", "Mean"), ("Mean", ["LB", "ASTV"])),
         "pima": (["glucose", "bmi", "age"], ("pregnancies", "age"), ("glucose", ["bmi", "age"])),
         "energy": (["heating_load", "cooling_load", "surface_area"], ("overall_height", "heating_load"),
                    ("heating_load", ["overall_height", "glazing_area"]))}
EXTRAS = {"pima": {"share": "outcome", "group_mean": ("glucose", "outcome"), "logistic": ("outcome", ["glucose", "bmi"])},
          "adult": {"share": "male", "group_mean": ("hours-per-week", "male"),
                    "logistic": ("high_income", ["age", "education-num"])}}
# A mixed table (released with its schema): its statistics read 0/1 indicators of two of its levels,
# added to every table (the real sample's, the synthetic ones) before the statistics are taken.
SPECS["adult"] = (["age", "hours-per-week", "education-num"], ("age", "hours-per-week"),
                  ("hours-per-week", ["age", "education-num"]))
SCHEMAS = {"adult": Path(__file__).resolve().parent.parent / "configs" / "adult_schema.json"}
INDICATORS = {"adult": {"male": ("sex", "Male"), "high_income": ("income", ">50K")}}


def indicators(name: str, frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with the table's 0/1 indicator columns (:data:`INDICATORS`) added."""
    extra = {new: (frame[column].astype(str) == level).astype(float)
             for new, (column, level) in INDICATORS.get(name, {}).items()}
    return frame.assign(**extra) if extra else frame
Z = stats.norm.ppf(0.975)
RAN: list[int] = []  # releases run (not read from the cache) in this invocation, per cell


def statistics(frame: pd.DataFrame, spec, extras: dict | None = None) -> pd.Series:
    """The statistics of one table, as a Series (means, the correlation, the OLS coefficients, and the
    ``extras``: a binary column's share, a group mean, logistic coefficients)."""
    means, pair, (target, predictors) = spec
    values = {f"mean {c}": frame[c].mean() for c in means}
    values[f"corr {pair[0]}~{pair[1]}"] = frame[pair[0]].corr(frame[pair[1]])
    x = np.column_stack([np.ones(len(frame)), frame[predictors].to_numpy(float)])
    beta = np.linalg.lstsq(x, frame[target].to_numpy(float), rcond=None)[0]
    values.update({f"ols {target}~{p}": b for p, b in zip(predictors, beta[1:])})
    extras = extras or {}
    if "share" in extras:
        values[f"share {extras['share']}=1"] = float((frame[extras["share"]] > 0.5).mean())
    if "group_mean" in extras:
        column, group = extras["group_mean"]
        values[f"mean {column} given {group}=1"] = float(frame.loc[frame[group] > 0.5, column].mean())
    if "logistic" in extras:
        outcome, inputs = extras["logistic"]
        coefficients, _ = logistic_fit(frame, outcome, inputs)
        values.update({f"logit {outcome}~{p}": b for p, b in zip(inputs, coefficients[1:])})
    return pd.Series(values)


def logistic_fit(frame: pd.DataFrame, outcome: str, inputs: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Logistic regression of a 0/1 column by Newton's method (IRLS; a 1e-8 ridge against separation):
    the coefficients (intercept first) and their robust (sandwich, HC0) standard errors."""
    x = np.column_stack([np.ones(len(frame)), frame[inputs].to_numpy(float)])
    scale = np.maximum(np.abs(x).max(axis=0), 1e-12)  # inputs on a unit scale for the iterations
    z, y = x / scale, (frame[outcome].to_numpy(float) > 0.5).astype(float)
    beta = np.zeros(z.shape[1])
    for _ in range(50):
        p = 1 / (1 + np.exp(-np.clip(z @ beta, -30, 30)))
        hessian = (z * (p * (1 - p))[:, None]).T @ z + 1e-8 * np.eye(z.shape[1])
        step = np.linalg.solve(hessian, z.T @ (y - p))
        beta += step
        if np.abs(step).max() < 1e-10:
            break
    p = 1 / (1 + np.exp(-np.clip(z @ beta, -30, 30)))
    bread = np.linalg.inv((z * (p * (1 - p))[:, None]).T @ z + 1e-8 * np.eye(z.shape[1]))
    meat = (z * ((y - p) ** 2)[:, None]).T @ z
    se = np.sqrt(np.diag(bread @ meat @ bread))
    return beta / scale, se / scale


def usual_se(frame: pd.DataFrame, spec, extras: dict | None = None) -> pd.Series:
    """The usual standard errors of :func:`statistics` on a table taken as a real sample: s/sqrt(n), Fisher's
    z for the correlation, heteroscedasticity-robust (HC1) ones for the OLS coefficients, sqrt(p (1 - p) / n)
    for a share, s_g / sqrt(n_g) for a group mean, and robust (HC0) ones for the logistic coefficients."""
    means, pair, (target, predictors) = spec
    n = len(frame)
    out = {f"mean {c}": frame[c].std() / np.sqrt(n) for c in means}
    r = frame[pair[0]].corr(frame[pair[1]])
    out[f"corr {pair[0]}~{pair[1]}"] = (1 - r**2) / np.sqrt(n - 3)
    x = np.column_stack([np.ones(n), frame[predictors].to_numpy(float)])
    y = frame[target].to_numpy(float)
    beta, *_ = np.linalg.lstsq(x, y, rcond=None)
    residual = y - x @ beta
    bread = np.linalg.pinv(x.T @ x)
    meat = (x * residual[:, None] ** 2).T @ x
    cov = bread @ meat @ bread * n / (n - x.shape[1])
    out.update({f"ols {target}~{p}": np.sqrt(cov[k + 1, k + 1]) for k, p in enumerate(predictors)})
    extras = extras or {}
    if "share" in extras:
        share = float((frame[extras["share"]] > 0.5).mean())
        out[f"share {extras['share']}=1"] = np.sqrt(share * (1 - share) / n)
    if "group_mean" in extras:
        column, group = extras["group_mean"]
        values = frame.loc[frame[group] > 0.5, column]
        out[f"mean {column} given {group}=1"] = values.std() / np.sqrt(max(len(values), 1))
    if "logistic" in extras:
        outcome, inputs = extras["logistic"]
        _, se = logistic_fit(frame, outcome, inputs)
        out.update({f"logit {outcome}~{p}": value for p, value in zip(inputs, se[1:])})
    return pd.Series(out)


def mean_width_floor(name: str, column: str, n: int, delta: float = 1e-10) -> float:
    """The narrowest a mean's interval can be against the real sample's, at (1, ``delta``): were the d
    column means the whole release (all of the budget in one release on [-1, 1]: Gaussian noise of l2
    sensitivity 2 sqrt(d) / n, :func:`synthdp.privacy.noise.gdp_mu`; at delta = 0 Laplace noise of l1
    sensitivity 2 d / n, sd sqrt(2) 2 d / n), the interval would still be
    sqrt(1 + (noise sd / sampling sd)^2) times as wide, the sampling sd the population's over sqrt(n).
    Any release of every column's distribution, synthdp's among them, spends its budget on more."""
    if name in SCHEMAS:  # a mixed table: its release is not d means on [-1, 1]
        return float("nan")
    dataset = load_dataset(name)
    low, high = dataset.bounds[column]
    d = dataset.frame.shape[1]
    unit = np.sqrt(2) * 2 * d / n if delta == 0 else 2 * np.sqrt(d) / (n * gdp_mu(1.0, delta))
    noise = unit * (high - low) / 2
    return float(np.sqrt(1 + (noise / (dataset.frame[column].std() / np.sqrt(n))) ** 2))


def one_release(name: str, n: int, copies: int, seeds: tuple[int, int, int, int],
                delta: float = 1e-10) -> pd.DataFrame:
    """One sample of n rows, its release, its copies and the three intervals of every statistic:
    covered or not, the width of ours over the real sample's, and our estimate's error (estimate less
    the population's value) and std_error, from which :func:`run` tells bias from a std_error too small."""
    spec, extras = SPECS[name], EXTRAS.get(name)
    if name in SCHEMAS:  # a mixed table: its schema gives its bounds and levels
        frame, given = pd.read_csv(DATA_DIR / f"{name}.csv"), {"schema": json.loads(SCHEMAS[name].read_text())}
    else:
        dataset = load_dataset(name)
        frame, given = dataset.frame, {"bounds": dataset.bounds}
    truth = statistics(indicators(name, frame), spec, extras)
    sample = frame.sample(n, replace=True, random_state=seeds[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth = SmoothSynthesizer(epsilon=1.0, delta=delta, seed=seeds[1]).fit(sample, **given)
        table = indicators(name, synth.sample(seed=seeds[2]))
        kept = synth.sample_copies(copies, seed=seeds[3])
    ours = infer(kept, lambda frame: statistics(indicators(name, frame), spec, extras))
    sample = indicators(name, sample)
    naive, naive_se = statistics(table, spec, extras), usual_se(table, spec, extras)
    real, real_se = statistics(sample, spec, extras), usual_se(sample, spec, extras)
    interval = ours["lower"].notna() & ours["upper"].notna()  # none where the release ties the columns by nothing
    return pd.DataFrame({
        "ours": ((ours["lower"] <= truth) & (truth <= ours["upper"])).astype(float).where(interval),
        "no_interval": (~interval).astype(float),
        "naive": (naive - truth).abs() <= Z * naive_se,
        "real": (real - truth).abs() <= Z * real_se,
        "width": (ours["upper"] - ours["lower"]) / (2 * Z * real_se),
        "unmeasured": ~ours["measured"],
        "error": ours["estimate"] - truth,
        "std_error": ours["std_error"],
        "seconds_per_copy": kept.seconds_per_copy}).rename_axis("statistic").reset_index()


def _one(task: tuple) -> pd.DataFrame:
    return one_release(*task)


def run(name: str, n: int, releases: int, copies: int, seed: int, workers: int = 1,
        cache: Path = CACHE, delta: float = 1e-10) -> pd.DataFrame:
    """Every release of one cell, its rows cached one file per release under ``cache`` (resumable),
    averaged per statistic; with ``bias_se``, the estimates' mean error over their mean std_error, and
    ``sd_se``, the estimates' standard deviation across releases over their mean std_error (about 1
    where the std_error is the estimate's: a coverage short of .95 with ``sd_se`` well above 1 is a
    std_error too small, with ``bias_se`` far from 0 an interval centred off the value). Files cached
    before the error was recorded leave both NaN."""
    rng = np.random.default_rng([seed, n])
    seeds = [tuple(int(v) for v in rng.integers(2**31, size=4)) for _ in range(releases)]
    folder = cache / (f"{name}_n{n}_copies{copies}_seed{seed}" + ("" if delta == 1e-10 else f"_delta{delta:g}"))
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / f"release_{k:04d}.csv" for k in range(releases)]
    todo = [k for k, path in enumerate(paths) if not path.exists()]
    log(f"{name} n={n}: {releases - len(todo)} releases cached, {len(todo)} to run")
    RAN.append(len(todo))
    tasks = [(name, n, copies, seeds[k], delta) for k in todo]
    done = 0
    with multiprocessing.get_context("spawn").Pool(workers) if workers > 1 else contextlib.nullcontext() as pool:
        results = pool.imap(_one, tasks) if pool is not None else map(_one, tasks)
        for k, frame in zip(todo, results):
            frame.to_csv(paths[k], index=False)
            done += 1
            if done % 10 == 0:
                log(f"{name} n={n}: {done} of {len(todo)}")
    whole = pd.concat([pd.read_csv(path) for path in paths])
    log(f"{name} n={n}: done")
    result = whole.groupby("statistic", sort=False).mean()
    grouped = whole.groupby("statistic", sort=False)
    scale = grouped["std_error"].mean() if "std_error" in whole else np.nan
    result["bias_se"] = grouped["error"].mean() / scale if "error" in whole else np.nan
    result["sd_se"] = grouped["error"].std() / scale if "error" in whole else np.nan
    return result


def plot(cells: dict[str, pd.DataFrame], releases: int, path: Path) -> None:
    """Coverage of each statistic, ours against the naive and the real-sample intervals, with the
    binomial band around .95."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(cells), figsize=(5.5 * len(cells), 3.6), sharey=True, squeeze=False)
    band = 2 * np.sqrt(0.95 * 0.05 / releases)
    for axis, (title, result) in zip(axes[0], cells.items()):
        y = np.arange(len(result))
        axis.axvspan(0.95 - band, 0.95 + band, color="0.9", label="0.95 ± 2 s.e.")
        axis.axvline(0.95, color="0.5", lw=0.8)
        for column, marker, label in (("ours", "o", "synthdp.infer"), ("naive", "x", "usual, on the synthetic table"),
                                      ("real", "s", "usual, on the real sample")):
            axis.scatter(result[column], y, marker=marker, label=label, zorder=3)
        axis.set_yticks(y, result.index)
        axis.set_xlim(0, 1.02)
        axis.set_xlabel("coverage of nominal 95 % intervals")
        axis.set_title(title)
    axes[0][0].invert_yaxis()
    handles, labels = axes[0][0].get_legend_handles_labels()
    columns = min(4, 2 * len(cells))  # one cell's figure holds two entries a row: four were cut at its edges
    fig.legend(handles, labels, loc="lower center", ncol=columns, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.08 * -(-len(handles) // columns), 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", nargs="+", default=list(SPECS), choices=list(SPECS))
    parser.add_argument("--rows", type=int, nargs="+", default=[2000, 5000])
    parser.add_argument("--releases", type=int, nargs="+", default=[200],
                        help="releases per cell: one number, or one per --rows value")
    parser.add_argument("--copies", type=int, default=20)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--delta", type=float, default=1e-10, help="the release's delta at epsilon = 1 (0: pure "
                        "epsilon-DP; default 1e-10)")
    parser.add_argument("--workers", type=int, default=1, help="releases run at once (processes)")
    parser.add_argument("--cache-dir", type=Path, default=CACHE, help="the per-release files (default: "
                        "experiments/results/cache/infer_coverage, git-ignored)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    sections = []
    cells = {}
    if len(args.releases) not in (1, len(args.rows)):
        parser.error("--releases takes one number, or one per --rows value")
    releases = dict(zip(args.rows, args.releases * len(args.rows) if len(args.releases) == 1 else args.releases))
    for name in args.tables:
        for n in args.rows:
            result = run(name, n, releases[n], args.copies, args.seed, args.workers, args.cache_dir, args.delta)
            cells[f"{name}, n = {n}"] = result
            lines = [f"### {name}, samples of {n} rows ({releases[n]} releases)", "",
                     "| statistic | ours | naive (synthetic as real) | real sample | width, ours / real "
                     "| width floor | flagged | no interval | bias / se | sd / se |",
                     "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
            for statistic, row in result.iterrows():
                plain_mean = statistic.startswith("mean ") and " given " not in statistic  # a column's mean, not a group's
                value = mean_width_floor(name, statistic[len('mean '):], n, args.delta) if plain_mean else float("nan")
                floor = "" if np.isnan(value) else f"{value:.2f}"
                flagged = "" if pd.isna(row.get("unmeasured", np.nan)) else f"{row['unmeasured']:.2f}"
                ratios = " | ".join("" if pd.isna(row[key]) else f"{row[key]:+.2f}" if key == "bias_se" else
                                    f"{row[key]:.2f}" for key in ("bias_se", "sd_se"))
                none = "" if pd.isna(row.get("no_interval", np.nan)) else f"{row['no_interval']:.2f}"
                ours = "–" if pd.isna(row["ours"]) else f"{row['ours']:.3f}"
                width = "–" if pd.isna(row["width"]) else f"{row['width']:.2f}"
                lines.append(f"| {statistic} | {ours} | {row['naive']:.3f} | {row['real']:.3f} | "
                             f"{width} | {floor} | {flagged} | {none} | {ratios} |")
            lines.append(f"\nSeconds per copy: {result['seconds_per_copy'].mean():.2f}.")
            sections.append("\n".join(lines) + "\n")
    fewest = min(releases.values())
    se = np.sqrt(0.95 * 0.05 / fewest)
    args.out.write_text(
        "# Coverage of synthdp.infer's 95 % intervals\n\n" + generated_by(command_line("infer_coverage.py", argv))
        + f"; {(time.perf_counter() - start) / 60:.1f} min"
        + ("" if sum(RAN) else " (every release read from the per-release cache)") + f". {', '.join(map(str, sorted(set(releases.values()))))} "
        f"releases per cell at (1, {args.delta:g}), "
        f"{args.copies} copies each; a coverage of .95 is known to ± {se:.3f} or better (one standard error). The table is the "
        "population; its min/max bounds taken as public. OLS: heteroscedasticity-robust (HC1) standard errors for "
        "the naive and real-sample intervals. Width floor (means): the width over the real sample's that an "
        "interval would have if the release were the d column means alone, with all of the budget "
        "(`mean_width_floor`): no release of every column can be narrower. Flagged: the share of releases in which "
        "synthdp.infer marked the statistic as reading a pair of columns whose dependence the release did not "
        "measure (its `measured` False, with a warning); no interval: the share in which it had none (NaN: its "
        "columns tied together by no chain of measured pairs), ours and the width then over the releases that "
        "gave one (– where none did). Bias / se: the mean of our estimate less the "
        "population's value over the mean std_error; sd / se: our estimates' standard deviation across releases "
        "over the mean std_error (near 1 where the std_error is right: a coverage short of .95 with sd / se well "
        "above 1 is an interval too narrow, with bias / se far from 0 one centred off the value). Per release: one file under "
        "experiments/results/cache/infer_coverage/ unless --cache-dir says otherwise (git ignores it; a rerun "
        "reuses them).\n\n"
        f"![coverage]({args.out.with_suffix('.png').name})\n\n" + "\n".join(sections), encoding="utf-8")
    plot(cells, fewest, args.out.with_suffix(".png"))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
