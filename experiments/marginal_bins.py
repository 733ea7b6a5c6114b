"""Does a finer or adaptive one-way histogram beat the automatic bins, column by column?

A design study of the issue "Small tables" ("keep continuous margins rather than 16 bins"): the
copula's one-way histograms take B bins from public n, d and budget (``auto_marginal_bins``: each
cell should hold on average twice its noise). On grid-valued columns (yacht's hull parameters)
16 bins did far better in the pipeline, on smooth columns worse. This study asks whether any
estimator from the same budget wins on average, one column at a time, without the pipeline:

* ``auto``: B bins (the rule above) and two atoms, the noisy counts projected onto the
  simplex (``Marginals.probabilities``' estimate, an atom below 2 noise sd dropped);
* ``b16``: the same with 16 bins;
* ``two-level f``: B bins with a share f of the budget and 4B bins with the rest; the coarse counts
  combined with the sums of the fine ones by inverse variance, projected, then each coarse bin's
  mass split by its fine counts where they differ from uniform (a chi-square test at 0.05 /
  B, "bonf", or where Stein's unbiased risk estimate prefers the split, "sure"), else evenly;
* ``single-sure``: one release at 4B bins, each block of 4 merged or kept by SURE;
* ``ash m``: an averaged shifted histogram (Scott 1985): m releases of B bins, the k-th with its
  edges moved by k / m of a bin, each at 1 / m of the budget (noise sd sqrt(m) times the single
  release's under Gaussian noise, m times under Laplace noise; the atoms read m times and
  averaged); each reading spread evenly over the B m fine cells it covers, the m estimates of a
  fine cell averaged, projected;
* ``privtree f`` (Laplace noise only: a pure-epsilon mechanism): the bins chosen privately by
  PrivTree (Zhang, Xiao & Xie 2016; dpmm's discretisation) with a share f of the budget, a binary
  tree over the interior (0, 1) down to 64 dyadic cells, a node split where its count less
  depth x lambda ln 2 (at least -lambda ln 2) plus Laplace(lambda) noise exceeds 0, lambda =
  2 x 3 / epsilon_tree (fanout 2; twice the add/remove constant for replace-one); its leaves and
  the two atoms then counted with the rest of the budget (noise sd / (1 - f)), projected, each
  leaf's mass spread evenly over its width.

Every numeric column (the first 12 of each table) of data/*.csv is the population, mapped onto
[0, 1] by its min and max; the noise sd per count is n / ratio for ratio 7, 15, 40 (yacht at pure
epsilon = 1 is about 14, heart_cleveland's histograms at (1, 1e-10) about 8), Gaussian or Laplace
of that sd, 3 draws each (numpy's generator, seed 0: a design study, not a release). Scores:
the 16-bin total variation distance and the Kolmogorov-Smirnov distance between the column and
n values drawn from the estimate (uniform within a bin).

    python experiments/marginal_bins.py     # about 2 minutes; writes results/marginal_bins.md
"""

from __future__ import annotations

import argparse
import time
from functools import partial

import numpy as np
import pandas as pd
from common import DATA_DIR, RESULTS_DIR, command_line, generated_by, log
from scipy import stats

RATIOS = (7, 15, 40)
DRAWS = 3


def project(counts: np.ndarray, total: float) -> np.ndarray:
    ordered = -np.sort(-counts)
    thresholds = (np.cumsum(ordered) - total) / np.arange(1, len(counts) + 1)
    return np.maximum(counts - thresholds[int(np.sum(ordered - thresholds > 0)) - 1], 0.0)


def cells(u: np.ndarray, bins: int) -> np.ndarray:
    """Counts in the atom at 0, ``bins`` equal bins, the atom at 1."""
    index = np.clip((u * bins).astype(int), 0, bins - 1) + 1
    index[u <= 0], index[u >= 1] = 0, bins + 1
    return np.bincount(index, minlength=bins + 2).astype(float)


def drop_atoms(counts: np.ndarray, sd: float) -> np.ndarray:
    out = counts.copy()
    for atom in (0, -1):
        if out[atom] < 2 * sd:
            out[atom] = -1e12
    return out


class Noise:
    def __init__(self, rng: np.random.Generator, laplace: bool):
        self.rng, self.laplace = rng, laplace

    def __call__(self, sd: float, size: int) -> np.ndarray:
        if self.laplace:
            return self.rng.laplace(0.0, sd / np.sqrt(2), size)
        return self.rng.normal(0.0, sd, size)


def single(u: np.ndarray, bins: int, sd: float, noise: Noise) -> tuple[np.ndarray, int]:
    return project(drop_atoms(cells(u, bins) + noise(sd, bins + 2), sd), len(u)), bins


def two_level(u: np.ndarray, coarse_bins: int, sd_coarse: float | None, sd_fine: float, noise: Noise,
              rule: str) -> tuple[np.ndarray, int]:
    """``sd_coarse`` None: no coarse release (single-sure)."""
    n, k = len(u), 4
    fine = cells(u, coarse_bins * k) + noise(sd_fine, coarse_bins * k + 2)
    blocks = fine[1:-1].reshape(coarse_bins, k)
    if sd_coarse is None:
        combined, atom_sd = np.concatenate([[fine[0]], blocks.sum(axis=1), [fine[-1]]]), sd_fine
    else:
        coarse = cells(u, coarse_bins) + noise(sd_coarse, coarse_bins + 2)
        w_coarse, w_fine = sd_coarse ** -2, 1 / (k * sd_fine ** 2)
        combined = coarse.copy()
        combined[1:-1] = (w_coarse * coarse[1:-1] + w_fine * blocks.sum(axis=1)) / (w_coarse + w_fine)
        w_atom = sd_coarse ** -2 + sd_fine ** -2
        for atom in (0, -1):
            combined[atom] = (coarse[atom] * sd_coarse ** -2 + fine[atom] * sd_fine ** -2) / w_atom
        atom_sd = w_atom ** -0.5
    mass = project(drop_atoms(combined, atom_sd), n)
    out = np.zeros(coarse_bins * k + 2)
    out[0], out[-1] = mass[0], mass[-1]
    limit = stats.chi2.ppf(1 - 0.05 / coarse_bins, k - 1) if rule == "bonf" else 2 * (k - 1)
    for j, block in enumerate(blocks):
        if mass[j + 1] <= 0:
            continue
        spread = ((block - block.mean()) ** 2).sum() / sd_fine ** 2
        part = slice(1 + j * k, 1 + (j + 1) * k)
        out[part] = (project(block - block.mean() + mass[j + 1] / k, mass[j + 1]) if spread > limit
                     else mass[j + 1] / k)
    return out, coarse_bins * k


def shifted(u: np.ndarray, bins: int, m: int, sd: float, noise: Noise, laplace: bool) -> tuple[np.ndarray, int]:
    """``ash m``: m shifted B-bin histograms averaged on the B m fine cells (module docstring)."""
    fine_bins = bins * m
    fine = cells(u, fine_bins)  # atom, B m fine cells, atom
    part_sd = sd * (m if laplace else np.sqrt(m))
    estimate = np.zeros(fine_bins + 2)
    f = np.arange(fine_bins)
    for k in range(m):
        coarse = (f + k) // m  # grid k's cell of each fine cell: its edges k / m of a bin to the left
        counts = np.bincount(coarse, weights=fine[1:-1]) + noise(part_sd, coarse.max() + 1)
        size = np.bincount(coarse)
        estimate[1:-1] += counts[coarse] / size[coarse] / m
        estimate[[0, -1]] += (fine[[0, -1]] + noise(part_sd, 2)) / m
    return project(drop_atoms(estimate, sd), len(u)), fine_bins


PRIVTREE_DEPTH = 6  # at most 2^6 = 64 leaves


def privtree_leaves(u: np.ndarray, epsilon: float, rng: np.random.Generator) -> list[tuple[int, int]]:
    """PrivTree's leaves (depth, index) over the interior (0, 1) of a column on [0, 1] (module docstring)."""
    scale = 2 * 3 / epsilon
    bias = scale * np.log(2)
    inner = u[(u > 0) & (u < 1)]
    leaves, stack = [], [(0, 0)]
    while stack:
        depth, index = stack.pop()
        count = np.sum((inner >= index / 2**depth) & (inner < (index + 1) / 2**depth))
        biased = max(count - depth * bias, -bias)
        if depth < PRIVTREE_DEPTH and biased + rng.laplace(0.0, scale) > 0:
            stack += [(depth + 1, 2 * index), (depth + 1, 2 * index + 1)]
        else:
            leaves.append((depth, index))
    return leaves


def privtree(u: np.ndarray, sd: float, share: float, noise: Noise, rng: np.random.Generator) -> tuple[np.ndarray, int]:
    """``privtree f``: PrivTree's bins at a share f of a Laplace histogram's budget, counted with the rest."""
    epsilon = 2 * np.sqrt(2) / sd  # a Laplace histogram of l1 sensitivity 2 with noise sd: scale 2 / epsilon
    fine_bins = 2**PRIVTREE_DEPTH
    fine = cells(u, fine_bins)
    parts = [slice(1 + index * 2 ** (PRIVTREE_DEPTH - depth), 1 + (index + 1) * 2 ** (PRIVTREE_DEPTH - depth))
             for depth, index in privtree_leaves(u, share * epsilon, rng)]
    rest = sd / (1 - share)
    counts = np.array([fine[0], *(fine[part].sum() for part in parts), fine[-1]]) + noise(rest, len(parts) + 2)
    mass = project(drop_atoms(counts, rest), len(u))
    out = np.zeros(fine_bins + 2)
    out[0], out[-1] = mass[0], mass[-1]
    for value, part in zip(mass[1:-1], parts):
        out[part] = value / (part.stop - part.start)
    return out, fine_bins


def score(u: np.ndarray, p: np.ndarray, bins: int, rng: np.random.Generator) -> tuple[float, float]:
    p = p / p.sum()
    chosen = rng.choice(bins + 2, size=len(u), p=p)
    drawn = (chosen - 1 + rng.random(len(u))) / bins
    drawn[chosen == 0], drawn[chosen == bins + 1] = 0.0, 1.0
    edges = np.linspace(0, 1, 17)
    tv = 0.5 * np.abs(np.histogram(u, edges)[0] / len(u) - np.histogram(drawn, edges)[0] / len(u)).sum()
    return tv, stats.ks_2samp(u, drawn, method="asymp").statistic


def markdown(table: pd.DataFrame) -> str:
    """A DataFrame as a Markdown table (its index as the first columns), values to 3 decimals."""
    index = list(table.index.names)
    head = [*(str(name) for name in index), *(str(column) for column in table.columns)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for key, row in table.iterrows():
        keys = key if isinstance(key, tuple) else (key,)
        values = [f"{value:.3f}" if isinstance(value, float) else str(value) for value in row]
        lines.append("| " + " | ".join([*(str(k) for k in keys), *values]) + " |")
    return "\n".join(lines)


def columns() -> list[tuple[str, str, np.ndarray]]:
    out = []
    for path in sorted(DATA_DIR.glob("*.csv")):
        if path.stem == "pks_subjects":
            continue
        frame = pd.read_csv(path).select_dtypes("number")
        for name in frame.columns[:12]:
            x = frame[name].dropna().to_numpy(float)
            if x.max() > x.min():
                out.append((path.stem, name, (x - x.min()) / (x.max() - x.min())))
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(RESULTS_DIR / "marginal_bins.md"))
    args = parser.parse_args(argv)
    start = time.perf_counter()
    rng = np.random.default_rng(0)
    rows = []
    for table, name, u0 in columns():
        u = u0 if len(u0) <= 3000 else rng.choice(u0, 3000, replace=False)
        n = len(u)
        for ratio in RATIOS:
            for laplace in (False, True):
                sd = n / ratio
                bins = int(np.clip(np.floor(n / (2 * sd)) - 2, 4, 16))  # auto_marginal_bins' rule
                noise = Noise(rng, laplace)

                methods = {"auto": partial(single, u, bins, sd, noise), "b16": partial(single, u, 16, sd, noise),
                           "single-sure": partial(two_level, u, bins, None, sd, noise, "sure"),
                           "ash 2": partial(shifted, u, bins, 2, sd, noise, laplace),
                           "ash 4": partial(shifted, u, bins, 4, sd, noise, laplace)}
                if laplace:
                    for share in (0.2, 0.35):
                        methods[f"privtree {share}"] = partial(privtree, u, sd, share, noise, rng)
                for share in (0.5, 0.75):
                    # the noise sd of each part at shares f and 1 - f of the budget
                    parts = ((sd / share, sd / (1 - share)) if laplace
                             else (sd / np.sqrt(share), sd / np.sqrt(1 - share)))
                    for rule in ("bonf", "sure"):
                        methods[f"two-level {share} {rule}"] = partial(two_level, u, bins, *parts, noise, rule)
                for method, estimate in methods.items():
                    scores = np.array([score(u, *estimate(), rng) for _ in range(DRAWS)]).mean(axis=0)
                    rows.append({"table": table, "column": name, "ratio": ratio, "noise": "Laplace" if laplace
                                 else "Gaussian", "method": method, "tv": scores[0], "ks": scores[1]})
        log(f"{table} {name} done")
    frame = pd.DataFrame(rows)
    order = list(dict.fromkeys(frame["method"]))
    by_setting = {metric: frame.pivot_table(index=["ratio", "noise"], columns="method", values=metric)[order]
                  for metric in ("tv", "ks")}
    by_table = frame.pivot_table(index="table", columns="method", values="tv")[order]
    wins = (frame.pivot_table(index=["table", "column", "ratio", "noise"], columns="method", values="tv")[order]
            .idxmin(axis=1).value_counts().reindex(order, fill_value=0))
    lines = ["# One-way histograms: the automatic bins against finer and adaptive estimates", "",
             generated_by(command_line("marginal_bins.py", argv)) + f"; {time.perf_counter() - start:.0f} s.", "",
             f"{frame[['table', 'column']].drop_duplicates().shape[0]} numeric columns of data/*.csv (the first 12 "
             "of each table), each on [0, 1] by its min and max; noise sd per count n / ratio; "
             f"{DRAWS} draws each; methods and scores in the script's docstring. 0 the best.", ""]
    for metric, table in by_setting.items():
        lines += [f"## Mean {'16-bin TV' if metric == 'tv' else 'KS distance'} by setting", "",
                  markdown(table), ""]
    lines += ["## Mean 16-bin TV by table", "", markdown(by_table), "",
              "## Settings (column x ratio x noise) where each method has the lowest TV", "",
              markdown(wins.rename_axis("method").to_frame("best in")), ""]
    with open(args.out, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines))
    log(f"wrote {args.out}")


if __name__ == "__main__":
    main()
