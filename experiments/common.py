"""Helpers shared by the experiment scripts: logging, datasets, bounds, query sets, JSON I/O.

Importable as ``from common import ...`` by the scripts in ``experiments/`` (Python puts a
script's own directory first on ``sys.path``). Not part of the synthdp package.

Conventions every script follows:

* Datasets are ``../shared/data/{name}.csv`` beside the checkout (``DATA_DIR``).
* Bounds are each column's min and max in the data, *taken as public* (the paper's
  normalisation; :data:`BOUNDS_NOTE` says why a real release must not do this).
* The query set of a dataset is fixed by ``(query_seed, crc32(name))``, so every script
  with the same ``--query-seed`` evaluates on the same queries.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from synthdp.evaluation import SIGMAS, KernelQueries, answer_queries, gaussian_kernel_queries, to_unit

HERE = Path(__file__).resolve().parent
DATA_DIR = HERE.parents[1] / "shared" / "data"  # ../shared/data beside the checkout
RESULTS_DIR = HERE / "results"
DATASETS = ("crm", "ctg", "pks", "wdbc")
QUERY_SEED = 20240601

BOUNDS_NOTE = (
    "Bounds: each column's min and max in the data, following the paper's normalisation, and "
    "*taken as public*. Reading bounds from the data leaks the extreme rows, so this is not what a "
    "real release should do: real users pass public bounds (`--bounds`)."
)


def log(message: str) -> None:
    """One time-stamped progress line on stderr."""
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def command_line(script: str, argv: list[str] | None) -> str:
    """The command that reproduces this run, e.g. ``python experiments/x.py --rounds 2``."""
    args = sys.argv[1:] if argv is None else argv
    return " ".join([f"python experiments/{script}", *args])


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
    """

    name: str
    frame: pd.DataFrame
    lower: np.ndarray
    upper: np.ndarray

    @property
    def n(self) -> int:
        return len(self.frame)

    @property
    def d(self) -> int:
        return self.frame.shape[1]

    @property
    def bounds(self) -> dict[str, list[float]]:
        """``{column: [lo, hi]}``, the form of synthdp's ``bounds`` argument."""
        return {c: [float(lo), float(hi)] for c, lo, hi in zip(self.frame.columns, self.lower, self.upper)}

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


def query_set(label: str, d: int, n_queries: int, query_seed: int = QUERY_SEED) -> KernelQueries:
    """The fixed random query set of a dataset: seeded by ``(query_seed, crc32(label))``."""
    return gaussian_kernel_queries(d, n_queries, np.random.default_rng([query_seed, zlib.crc32(label.encode())]))


def true_answers(dataset: Dataset, queries: KernelQueries, n_jobs: int | None = None) -> np.ndarray:
    """Answers of the real table, shape (len(SIGMAS), Q)."""
    return answer_queries(dataset.unit(dataset.frame), queries, SIGMAS, n_jobs=n_jobs)


def read_json(path: Path, default=None):
    """The JSON content of ``path``, or ``default`` when it does not exist."""
    path = Path(path)
    return json.loads(path.read_text()) if path.exists() else default


def write_json(path: Path, payload) -> None:
    """Write ``payload`` as indented JSON, atomically (temporary file, then rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + f".{os.getpid()}.tmp")
    temporary.write_text(json.dumps(payload, indent=1, default=str) + "\n")
    temporary.replace(path)


def fmt(values, digits: int = 3) -> list[str]:
    """Numbers for a markdown cell: fixed ``digits`` decimals, 3 significant digits when huge."""
    return [f"{v:.{digits}f}" if abs(v) < 10**4 else f"{v:.3g}" for v in values]
