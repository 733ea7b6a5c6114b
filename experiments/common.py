"""Helpers shared by the experiment scripts: logging, datasets, bounds, query sets, JSON I/O.

Importable as ``from common import ...`` by the scripts in ``experiments/`` (Python puts a
script's own directory first on ``sys.path``). Not part of the synthdp package.

Conventions every script follows:

* Datasets are ``data/{name}.csv`` in the repository (``DATA_DIR``; provenance in data/README.md).
* Bounds are each column's min and max in the data, *taken as public* (the paper's
  normalisation; :data:`BOUNDS_NOTE` says why a real release must not do this).
* The query set of a dataset is fixed by ``(query_seed, crc32(name))``, so every script
  with the same ``--query-seed`` evaluates on the same queries.
* A script with peers takes ``--peers-from-record [JSON]`` (:func:`add_peers_from_record`):
  it runs no peer, and a peer row whose synthetic tables are not cached on this machine is
  taken, as scored, from the script's recorded results (:class:`Record`) instead of dropped.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import re
import resource
import shlex
import subprocess
import sys
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import special, stats

import synthdp
from synthdp.study import SIGMAS, KernelQueries, answer_queries, gaussian_kernel_queries, to_unit

HERE = Path(__file__).resolve().parent
DATA_DIR = HERE.parent / "data"  # the repository's data/
RESULTS_DIR = HERE / "results"
DATASETS = ("crm", "ctg", "pks", "wdbc")
QUERY_SEED = 20240601

BOUNDS_NOTE = (
    "Bounds: each column's min and max in the data, following the paper's normalisation, and "
    "*taken as public*. Reading bounds from the data leaks the extreme rows, so this is not what a "
    "real release should do: real users pass public bounds (`--bounds`)."
)


def score_correlation(values: np.ndarray) -> np.ndarray:
    """Correlation of the columns' rank normal scores (ties get their mean rank)."""
    n = len(values)
    ranks = np.empty_like(values, dtype=float)
    for j in range(values.shape[1]):
        order = np.argsort(values[:, j], kind="stable")
        sorted_values = values[order, j]
        first = np.searchsorted(sorted_values, sorted_values, side="left")
        last = np.searchsorted(sorted_values, sorted_values, side="right")
        ranks[order, j] = (first + last + 1) / 2  # mean rank, 1-based
    scores = special.ndtri(ranks / (n + 1))
    return np.corrcoef(scores, rowvar=False)


@contextlib.contextmanager
def level_cells_clause(rule: str) -> Iterator[None]:
    """Within it, the mixed-tables plan's level-cells rule (:func:`synthdp.pipeline.plan.level_cells_apart`)
    as ``rule`` says: "product"; "all", where a column's cells hold less than twice the moments'
    noise sd, every column's one-way cells apart and the moments left NOISY_MOMENTS_SHARE (the
    rule of 2026-11-29); "limit", MOMENT_NOISE_LIMIT alone (the rule before; :func:`mixed_split`
    called without the levels). Study alternatives, not the product."""
    from synthdp.study import plan_module

    if rule not in ("product", "all", "limit"):
        raise ValueError(f"unknown level-cells rule {rule!r}")
    split, apart = plan_module.mixed_split, plan_module.level_cells_apart

    def limit_only(*args, levels=(), **kwargs):
        return split(*args, levels=(), **kwargs)

    def every_column(*args, **kwargs):
        fewest, share = apart(*args, **kwargs)
        return (1, 0.0) if fewest > 1 else (fewest, share)

    if rule == "limit":
        plan_module.mixed_split = limit_only
    elif rule == "all":
        plan_module.level_cells_apart = every_column
    try:
        yield
    finally:
        plan_module.mixed_split, plan_module.level_cells_apart = split, apart


def table_statistics(means=(), correlations=(), ols=(), group_means=()) -> Callable[[pd.DataFrame], pd.Series]:
    """Statistics of a DataFrame as one Series for ``synthdp.infer``, named as ``synthdp infer`` names them
    ("mean x", "corr a ~ b", "ols y ~ x", "ols y ~ (intercept)", "mean y | g == 1"). Written here with pandas
    and numpy rather than taken from synthdp's internals, so that a script runs with an older synthdp on the
    path (a comparison on the same seeds) and stays on the study surface (tests/test_study_surface.py).
    An OLS fit on no more complete rows than coefficients gives NaN (a constant or collinear predictor gives
    least squares' least-norm coefficients, where synthdp's own statistics give NaN); a correlation's estimate
    and interval are put into [-1, 1] (the function's ``limits``, which ``synthdp.infer`` reads)."""
    def level_text(level) -> str:
        return str(int(level)) if isinstance(level, (float, np.floating)) and float(level).is_integer() else str(level)

    def statistic(frame: pd.DataFrame) -> pd.Series:
        values: dict[str, float] = {}
        for name in means:
            values[f"mean {name}"] = frame[name].astype(float).mean()
        for first, second in correlations:
            values[f"corr {first} ~ {second}"] = frame[first].astype(float).corr(frame[second].astype(float))
        for target, *predictors in ols:
            rows = frame[[target, *predictors]].astype(float).dropna()
            design = np.column_stack([rows[name].to_numpy() for name in predictors] + [np.ones(len(rows))])
            coefficients = (np.linalg.lstsq(design, rows[target].to_numpy(), rcond=None)[0]
                            if len(rows) > design.shape[1] else np.full(design.shape[1], np.nan))
            values.update({f"ols {target} ~ {name}": value for name, value in zip(predictors, coefficients)})
            values[f"ols {target} ~ (intercept)"] = coefficients[-1]
        for name, by in group_means:
            for level, value in frame[name].astype(float).groupby(frame[by]).mean().items():
                values[f"mean {name} | {by} == {level_text(level)}"] = value
        return pd.Series(values, dtype=float)

    # a correlation's estimate and interval ends are put into [-1, 1], as synthdp infer's statistics have them
    statistic.limits = {f"corr {first} ~ {second}": (-1.0, 1.0) for first, second in correlations}  # type: ignore[attr-defined]
    return statistic


def log(message: str) -> None:
    """One time-stamped progress line on stderr."""
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def command_line(script: str, argv: list[str] | None) -> str:
    """The command that reproduces this run, e.g. ``python experiments/x.py --rounds 2``."""
    args = sys.argv[1:] if argv is None else argv
    return " ".join([f"python experiments/{script}", *args])


def source_commit() -> str | None:
    """The commit synthdp's source is at, ``"abc1234"``, or ``"abc1234 with uncommitted changes"``; None without git.

    ``git rev-parse --short HEAD`` in the repository that holds synthdp's source directory; the
    changes are ``git status --porcelain`` of its ``synthdp/`` and ``experiments/``, except
    ``experiments/results/`` (the scripts' output, which runs rewrite before they are committed).
    None when git or the repository is missing (a tarball, a wheel installed outside the repository).
    """
    package = Path(synthdp.__file__).resolve().parent

    def git(*args: str, cwd: Path = package) -> str:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=60,
                              check=True).stdout.strip()

    try:
        top = Path(git("rev-parse", "--show-toplevel"))
        head = git("rev-parse", "--short", "HEAD")
        changes = git("status", "--porcelain", "--", "synthdp", "experiments", ":(exclude)experiments/results", cwd=top)
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{head} with uncommitted changes" if changes else head


def generated_by(command: str) -> str:
    """The provenance sentence a results file starts with: the command, the date, the commit, the versions, the machine.

    E.g. ``Generated by `python experiments/x.py` on 2026-11-29 02:10 at commit abc1234 (synthdp
    0.1.0, Python 3.11.7, 2 CPUs shared with other jobs)``; ``, commit unknown`` without git
    (:func:`source_commit`).
    """
    commit = source_commit()
    where = f" at commit {commit}" if commit else ", commit unknown"
    return (f"Generated by `{command}` on {time.strftime('%Y-%m-%d %H:%M')}{where} (synthdp {synthdp.__version__}, "
            f"Python {platform.python_version()}, {os.cpu_count()} CPUs shared with other jobs)")


def cpu_now() -> float:
    """CPU seconds (user + system) of this process and its finished children."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@dataclass(frozen=True, eq=False)
class Dataset:
    """A benchmark table with its min/max bounds (taken as public, see :data:`BOUNDS_NOTE`).

    Attributes
    ----------
    name : str
        File stem, e.g. ``"ctg"``.
    frame : DataFrame, shape (n, d)
        The table in original units.
    lower, upper : ndarray, shape (d,)
        Each column's min and max.
    integer : tuple of str
        Columns declared integer in the bounds (``"type": "integer"``), as a user would declare them.
    """

    name: str
    frame: pd.DataFrame
    lower: np.ndarray
    upper: np.ndarray
    integer: tuple[str, ...] = ()

    @property
    def n(self) -> int:
        return len(self.frame)

    @property
    def d(self) -> int:
        return self.frame.shape[1]

    @property
    def bounds(self) -> dict[str, list[float]]:
        """``{column: [lo, hi]}``, the form of synthdp's ``bounds`` argument."""
        return {c: {"bounds": [float(lo), float(hi)], "type": "integer"} if c in self.integer else [float(lo), float(hi)]
                for c, lo, hi in zip(self.frame.columns, self.lower, self.upper)}

    def unit(self, table: pd.DataFrame) -> np.ndarray:
        """``table`` mapped onto [-1, 1]^d with this dataset's bounds, shape (rows, d)."""
        return to_unit(table, self.lower, self.upper)


def load_dataset(name: str, data_dir: Path = DATA_DIR, columns: int | None = None) -> Dataset:
    """Read ``{data_dir}/{name}.csv`` (its first ``columns`` columns if given) with min/max bounds."""
    path = Path(data_dir) / f"{name}.csv"
    if not path.exists():
        raise SystemExit(f"missing data file {path}")
    frame = pd.read_csv(path)
    if columns is not None:
        frame = frame.iloc[:, :columns]
    return Dataset(name, frame, frame.min().to_numpy(float), frame.max().to_numpy(float))


def pks_like(rows: int, seed: int = 0) -> Dataset:
    """A smoothed bootstrap of PKS: ``rows`` rows, PKS's bounds."""
    pks = load_dataset("pks")
    rng = np.random.default_rng(seed)
    frame = pks.frame.to_numpy(float)
    drawn = frame[rng.integers(0, len(frame), rows)]
    drawn += rng.normal(size=drawn.shape) * (0.1 * frame.std(axis=0))
    drawn = np.clip(drawn, pks.lower, pks.upper)
    table = pd.DataFrame(drawn, columns=pks.frame.columns)
    return Dataset("pks-like", table, table.min().to_numpy(float), table.max().to_numpy(float))


SHAPED = ("heavy-tails", "discrete-grid", "more-rows")  # generated tables of other shapes than the four


def shaped_dataset(name: str, seed: int = 0) -> Dataset:
    """A generated table of a shape the four benchmark tables do not have, to check a default on
    (fixed seed; bounds each column's min and max):

    * ``heavy-tails``: 20 000 rows, 4 columns from a Gaussian copula (latent correlations .8
      between the first two, .5 between the second and third): a log-normal column exp(2 z),
      a log-normal exp(z), a Student t with 3 degrees of freedom, a uniform one;
    * ``discrete-grid``: 5 000 rows, 5 integer columns (declared so in the bounds) of 3 to 11
      values, cut from latent normals with pairwise correlation .6, the last with a spike at its
      lowest value;
    * ``more-rows``: 200 000 rows of PKS resampled with 10 % of each column's sd of noise (a
      smoothed bootstrap), PKS's columns at ten times its n.
    """
    rng = np.random.default_rng(seed)
    if name == "heavy-tails":
        latent = rng.multivariate_normal(np.zeros(4), [[1, .8, .4, 0], [.8, 1, .5, 0], [.4, .5, 1, 0], [0, 0, 0, 1]],
                                         size=20_000)
        u = special.ndtr(latent)
        frame = pd.DataFrame({"lognormal_wide": np.exp(2 * latent[:, 0]), "lognormal": np.exp(latent[:, 1]),
                              "student_t3": stats.t.ppf(u[:, 2], 3), "uniform": u[:, 3]})
    elif name == "discrete-grid":
        latent = rng.multivariate_normal(np.zeros(5), 0.4 * np.eye(5) + 0.6, size=5_000)
        frame = pd.DataFrame({f"level_{k}": np.digitize(latent[:, j], np.linspace(-1.5, 1.5, k - 1))
                              for j, k in enumerate((3, 5, 7, 9, 11))})
        frame["level_11"] = np.where(latent[:, 4] < -0.3, 0, frame["level_11"])  # a spike at the lowest value
    elif name == "more-rows":
        frame = pks_like(200_000, seed).frame
    else:
        raise SystemExit(f"unknown shaped table {name!r} (known: {', '.join(SHAPED)})")
    integer = tuple(frame.columns) if name == "discrete-grid" else ()
    return Dataset(name, frame, frame.min().to_numpy(float), frame.max().to_numpy(float), integer)


def query_set(label: str, d: int, n_queries: int, query_seed: int = QUERY_SEED) -> KernelQueries:
    """The fixed random query set of a dataset: seeded by ``(query_seed, crc32(label))``."""
    return gaussian_kernel_queries(d, n_queries, np.random.default_rng([query_seed, zlib.crc32(label.encode())]))


def true_answers(dataset: Dataset, queries: KernelQueries, n_jobs: int | None = None) -> np.ndarray:
    """Answers of the real table, shape (len(SIGMAS), Q)."""
    return answer_queries(dataset.unit(dataset.frame), queries, SIGMAS, n_jobs=n_jobs)


def read_json(path: Path, default=None):
    """The JSON content of ``path``, or ``default`` when it does not exist."""
    path = Path(path)
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else default


def write_json(path: Path, payload) -> None:
    """Write ``payload`` as indented JSON, atomically (temporary file, then rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + f".{os.getpid()}.tmp")
    temporary.write_text(json.dumps(payload, indent=1, default=str) + "\n", encoding="utf-8")
    temporary.replace(path)


def fmt(values, digits: int = 3) -> list[str]:
    """Numbers for a markdown cell: fixed ``digits`` decimals, 3 significant digits when huge."""
    return [f"{v:.{digits}f}" if abs(v) < 10**4 else f"{v:.3g}" for v in values]


# ------------------------------------------------------------------ peer rows from a recorded run
#: Why a peer row taken from a record belongs in a re-rendered report (said beside it).
RECORD_REASON = ("their synthetic tables are not cached on this machine; the peers, data, bounds and scoring "
                 "are unchanged")


def paired_row(label: str, product: np.ndarray, before: np.ndarray, digits: int = 3) -> str:
    """A table row of paired scores over rounds (NaN: no value that round): the two means and the
    mean paired difference with its standard error, or n/a where the product has no value at all
    (a strong-pair ratio without a real pair above 0.5)."""
    if np.isnan(product).all():
        return f"| {label} | n/a | n/a | no real pair above 0.5 |"
    diff = product - before
    se = np.nanstd(diff, ddof=1) / np.sqrt(np.sum(~np.isnan(diff)))
    return (f"| {label} | {np.nanmean(product):.{digits}f} | {np.nanmean(before):.{digits}f} | "
            f"{np.nanmean(diff):+.{digits}f} ± {se:.{digits}f} |")


def add_peers_from_record(parser: argparse.ArgumentParser, committed: str) -> None:
    """The ``--peers-from-record [JSON]`` option, the same in every script with peers.

    Without a value it names the script's committed results, ``experiments/results/{committed}``
    (the file a run with the default output overwrites); :func:`record_path` turns the parsed
    value into the path.
    """
    parser.add_argument(
        "--peers-from-record", nargs="?", const="", default=None, metavar="JSON",
        help="run no peer; each peer row whose synthetic tables are not cached on this machine is taken, as "
             f"scored, from the recorded results JSON (default: the committed experiments/results/{committed}, "
             "the file a run with the default output overwrites; read before anything is written). The report "
             "names the recorded run; the settings the peers' scores depend on must be the record's")


def record_path(value: str | None, committed: Path) -> Path | None:
    """The record of ``--peers-from-record``: None without the option, ``committed`` without a value."""
    return None if value is None else Path(value) if value else committed


@dataclass(frozen=True)
class Record:
    """The results an earlier run of a script wrote (its JSON), the source of ``--peers-from-record``.

    Attributes
    ----------
    path : Path
        The JSON file.
    content : dict
        Its content, read before the present run writes anything.
    source : str
        The run that wrote it: its command and, from the generation line of the markdown beside
        it (when that line names the same command), its date.
    """

    path: Path
    content: dict
    source: str

    def settings(self, parse: Callable[[list[str]], argparse.Namespace]) -> dict:
        """The recorded run's settings: the JSON's ``settings``, else its command read by ``parse``.

        Records written before the scripts kept their settings have only the command; its options
        are read with today's defaults, which is right while the script's defaults are unchanged.
        """
        if "settings" in self.content:
            return self.content["settings"]
        try:
            return vars(parse(shlex.split(self.content["command"])[2:]))
        except (KeyError, SystemExit):
            raise SystemExit(f"--peers-from-record: cannot read the settings of the run recorded in "
                             f"{self.path}") from None

    def require(self, setting: str, current, recorded) -> None:
        """Refuse, in one line naming ``setting``, unless this run's value is the record's."""
        if current != recorded:
            raise SystemExit(f"--peers-from-record: {setting} is {current!r} here but {recorded!r} in {self.path}; "
                             "the recorded peer rows were scored with the record's (use it, or leave out the option)")

    def require_within(self, setting: str, current, recorded) -> None:
        """Refuse, in one line naming ``setting``, unless each of this run's values is among the record's."""
        missing = [str(value) for value in current if value not in recorded]
        if missing:
            has = ", ".join(map(str, recorded)) if 0 < len(recorded) <= 8 else f"{len(recorded) or 'none'} of them"
            raise SystemExit(f"--peers-from-record: {setting} {', '.join(missing[:4])}{' ...' * (len(missing) > 4)} "
                             f"not in {self.path} (it has {has})")

    def take(self, computed: dict, recorded: dict | None, *, complete: bool, cached: int, runs: str,
             what: str) -> dict:
        """The peer row to report: ``computed`` (from this machine's cache) where it is whole, else the record's.

        ``complete`` says the cache answered every requested round (or holds the failure that
        stopped them), ``cached`` how many rounds it answered, ``runs`` the key of a row's rounds
        and ``what`` the row in an error. A row the cache answers only in part is the record's,
        unless the cache has more rounds than the record. A row taken is marked ``from_record``
        with the run that scored it (kept from the record when the record had taken it too, so a
        re-render of a re-render names the original run). Refuses when the record lacks the row.
        """
        if complete:
            return computed
        if recorded is None:
            raise SystemExit(f"--peers-from-record: {self.path} has no {what}, and this machine's cache lacks it")
        if cached > len(recorded[runs]):
            return computed
        return {**recorded, "from_record": recorded.get("from_record") or self.source}


def read_record(path: Path) -> Record:
    """The record at ``path`` (refuses when there is none), with the run that wrote it."""
    content = read_json(path)
    if content is None:
        raise SystemExit(f"--peers-from-record: no record at {path}")
    command = content.get("command", "")
    source = f"`{command}`" if command else Path(path).name
    markdown = Path(path).with_suffix(".md")
    match = re.search(r"Generated by `([^`]*)` on (\d{4}-\d\d-\d\d \d\d:\d\d)",
                      markdown.read_text(encoding="utf-8")) if markdown.exists() else None
    if match and match.group(1) == command:
        source += f" on {match.group(2)}"
    return Record(Path(path), content, source)


def record_note(taken: list[tuple[str, str]], total: int) -> str:
    """The paragraph that says which peer rows come from which recorded run ("" when none does).

    ``taken`` lists (row label, ``from_record``) of the rows taken; ``total`` counts every peer row.
    """
    by_source: dict[str, list[str]] = {}
    for label, source in taken:
        by_source.setdefault(source, []).append(label)
    sentences = []
    for source, labels in by_source.items():
        which = (f"all {total}" if len(labels) == total > 1 else f"the only one, {labels[0]}" if total == 1
                 else f"{len(labels)} of {total}: " + "; ".join(labels))
        sentences.append(f"**Peer rows taken from the recorded run** of {source} ({RECORD_REASON}): {which}.")
    if sentences and len(taken) < total:
        sentences.append("The other peer rows come from this machine's cache.")
    return " ".join(sentences)
