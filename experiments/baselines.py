"""Baselines for the experiments: a sampling floor, a DP Gaussian, and binned peer synthesizers.

Importable by experiment scripts (``from baselines import ...`` with ``experiments/`` on
``sys.path``, or ``from experiments.baselines import ...`` from the repository root). None of
this is part of the synthdp package: the peers are optional extras of the experiments and
run in their own virtualenvs (see ``experiments/peers/README.md``).

Every function takes a numeric table ``frame`` (n rows, d columns) and, where relevant,
public per-column bounds, and returns a synthetic :class:`pandas.DataFrame` with the same
columns in original units.

``bounds`` is a mapping ``{column: (lo, hi)}`` (as the synthdp CLI's bounds JSON) or a pair
``(lower, upper)`` of length-d sequences in column order.

* :func:`bootstrap` -- n real rows drawn with replacement. Not private: the sampling-error
  floor of any table of n i.i.d. rows from the data.
* :func:`dp_gaussian` -- a DP Gaussian model: noisy mean and noisy second moment of the
  [-1, 1]-normalised data, a PSD covariance, n rows sampled from N(mean, cov).
* :func:`binned_peer` -- a peer marginal-based synthesizer (smartnoise-synth's MST or AIM,
  or OpenDP's dp.mbi MST or AIM) on equal-width bins of the public bounds, decoded
  uniformly within bins.
* :func:`dpmm_peer` -- SAS's dpmm (MST, AIM or PrivBayes) on the raw table: dpmm discretises
  numeric columns itself with DP PrivTree inside the public bounds (its share taken out of the
  same total budget), categorical columns on their public levels (``experiments/peers/run_dpmm.py``).

DP Gaussian: sensitivities (replace-one neighbours, n public, rows in [-1, 1]^d)
---------------------------------------------------------------------------------
Released statistics: the mean m = (1/n) sum_i x_i and the upper triangle (diagonal included)
of the second moment S = (1/n) sum_i x_i x_i^T. Replacing row x by y changes them by
(x - y)/n and (x x^T - y y^T)/n.

* Mean. ||x - y||_2 <= diam([-1,1]^d) = 2 sqrt(d), ||x - y||_1 <= 2d. So
  L2 = 2 sqrt(d)/n and L1 = 2d/n.
* Second moment, Frobenius norm. ||x x^T - y y^T||_F^2 = ||x||^4 + ||y||^4 - 2 (x.y)^2
  <= 2 d^2 (||x||^2 <= d). The diagonal entries are x_i^2 - y_i^2 in [-1, 1], so
  sum_i D_ii^2 <= d. The upper triangle counts each off-diagonal entry once:
  ||triu(D)||_2^2 = (||D||_F^2 + sum_i D_ii^2) / 2 <= d^2 + d/2. So L2 = sqrt(d^2 + d/2)/n.
  L1: each off-diagonal |x_i x_j - y_i y_j| <= 2 and each diagonal |x_i^2 - y_i^2| <= 1,
  so L1 <= (2 * d(d-1)/2 + d)/n = d^2/n.
* Both at once (one vector, one mechanism): L2 = sqrt(4d + d^2 + d/2)/n = sqrt(d^2 + 4.5 d)/n
  (adding the two squared maxima bounds the max of the sum); L1 = (2d + d^2)/n.

delta > 0: the analytic Gaussian mechanism (:func:`synthdp.privacy.noise.analytic_gaussian_sigma`)
with that L2 sensitivity; delta = 0: Laplace with scale L1/epsilon. Everything after the
noisy vector is post-processing: cov = S - m m^T, symmetrised, projected onto the PSD cone
(negative eigenvalues set to 0), the mean clipped into the cube, n rows drawn from
N(m, cov), clipped into [-1, 1]^d and mapped back to units. The noise comes from
:class:`synthdp.privacy.noise.OpenDPNoise` (private) unless a sampler is passed, e.g.
``SeededNoise(rng)`` for reproducible but NOT private runs.

Binned peers
------------
Each column's public interval [lo, hi] is cut into ``bins`` equal-width bins; a value maps to
bin min(bins - 1, floor(bins (x - lo)/(hi - lo))) after clipping into [lo, hi]. Only the
integer codes go to the peer (a subprocess in the peers' virtualenv running
``experiments/peers/run_peer.py``, CSV in, CSV out), with the public domain {0..bins-1}
declared for every column. A synthetic code k decodes to lo + (k + U)(hi - lo)/bins with
U ~ U[0, 1) drawn from ``rng`` (post-processing). See ``run_peer.py`` for the privacy unit
(``unit``), the OpenDP workaround and the null handling of dp.mbi.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from synthdp.study import NoiseSampler, OpenDPNoise, analytic_gaussian_sigma, laplace_scale

__all__ = [
    "PEERS",
    "LABELS",
    "PEER_TIMEOUTS",
    "PeerUnavailable",
    "PeerTimeout",
    "PeerFailed",
    "bootstrap",
    "dp_gaussian",
    "dp_gaussian_sensitivities",
    "binned_peer",
    "coded_peer",
    "peer_python",
    "DPMM_PEERS",
    "dpmm_peer",
    "dpmm_python",
]

HERE = Path(__file__).resolve().parent
RUN_PEER = HERE / "peers" / "run_peer.py"

#: Peer name -> (library, algorithm, virtualenv environment variable, default virtualenv).
PEERS: dict[str, tuple[str, str, str, str]] = {
    "smartnoise-mst": ("smartnoise", "mst", "SYNTHDP_PEERS_VENV", "/opt/peers-venv"),
    "smartnoise-aim": ("smartnoise", "aim", "SYNTHDP_PEERS_VENV", "/opt/peers-venv"),
    "opendp-mst": ("opendp", "mst", "SYNTHDP_PEERS_OPENDP_VENV", "/opt/peers-venv-opendp"),
    "opendp-aim": ("opendp", "aim", "SYNTHDP_PEERS_OPENDP_VENV", "/opt/peers-venv-opendp"),
}
_ALIASES = {"mst": "smartnoise-mst", "aim": "smartnoise-aim"}

#: How the experiment reports name the baselines and peers.
LABELS = {
    "bootstrap": "bootstrap (non-private floor)",
    "dp-gaussian": "DP Gaussian (mean + cov)",
    "smartnoise-mst": "smartnoise-synth MST",
    "smartnoise-aim": "smartnoise-synth AIM",
    "opendp-mst": "OpenDP dp.mbi MST",
    "opendp-aim": "OpenDP dp.mbi AIM",
    "dpmm-mst": "dpmm MST (PrivTree bins)",
    "dpmm-aim": "dpmm AIM (PrivTree bins)",
    "dpmm-privbayes": "dpmm PrivBayes (PrivTree bins)",
}

#: Default seconds before a peer run is killed (MST takes 50-80 s on CTG and ~6 min on CRM here).
PEER_TIMEOUTS = {"smartnoise-mst": 900.0, "opendp-mst": 900.0, "smartnoise-aim": 240.0, "opendp-aim": 240.0}
PEER_TIMEOUTS.update({"dpmm-mst": 900.0, "dpmm-aim": 900.0, "dpmm-privbayes": 900.0})

#: dpmm peer name -> algorithm of ``experiments/peers/run_dpmm.py`` (own virtualenv, see :func:`dpmm_python`).
DPMM_PEERS = {"dpmm-mst": "mst", "dpmm-aim": "aim", "dpmm-privbayes": "privbayes"}
RUN_DPMM = HERE / "peers" / "run_dpmm.py"
DPMM_VENV = ("SYNTHDP_PEERS_DPMM_VENV", "/opt/peers-venv-dpmm")


class PeerUnavailable(RuntimeError):
    """The peer's virtualenv is not installed (run experiments/peers/install.sh)."""


class PeerTimeout(RuntimeError):
    """The peer did not finish within the time limit (the subprocess was killed)."""

    def __init__(self, message: str, seconds: float) -> None:
        super().__init__(message)
        self.seconds = seconds


class PeerFailed(RuntimeError):
    """The peer's subprocess exited with an error."""


def _bounds_arrays(frame: pd.DataFrame, bounds) -> tuple[np.ndarray, np.ndarray]:
    columns = list(frame.columns)
    if isinstance(bounds, Mapping):
        missing = [c for c in columns if c not in bounds]
        if missing:
            raise ValueError(f"bounds has no entry for column '{missing[0]}'")
        lower = np.array([float(bounds[c][0]) for c in columns])
        upper = np.array([float(bounds[c][1]) for c in columns])
    else:
        lower, upper = (np.asarray(b, dtype=float).reshape(-1) for b in bounds)
    if lower.shape != (len(columns),) or upper.shape != (len(columns),):
        raise ValueError(f"bounds need one (lo, hi) per column ({len(columns)})")
    if not (np.isfinite(lower).all() and np.isfinite(upper).all() and (upper > lower).all()):
        raise ValueError("bounds must be finite with hi > lo")
    return lower, upper


def _numeric(frame: pd.DataFrame) -> np.ndarray:
    values = frame.to_numpy(dtype=float)
    if values.ndim != 2 or values.shape[0] == 0:
        raise ValueError("the table must have at least one row")
    if not np.isfinite(values).all():
        raise ValueError("the table has missing or infinite values")
    return values


def _to_cube(values: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    return np.clip(2.0 * (values - lower) / (upper - lower) - 1.0, -1.0, 1.0)


def _from_cube(cube: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    return lower + (np.clip(cube, -1.0, 1.0) + 1.0) / 2.0 * (upper - lower)


def bootstrap(frame: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """n real rows drawn uniformly with replacement (NOT private: the sampling floor)."""
    n = len(frame)
    if n == 0:
        raise ValueError("the table must have at least one row")
    return frame.iloc[rng.integers(0, n, size=n)].reset_index(drop=True)


def dp_gaussian_sensitivities(n: int, d: int) -> dict[str, float]:
    """Replace-one sensitivities of (mean, upper triangle of the second moment) on [-1, 1]^d.

    See the module docstring for the derivation. Returns the L2 and L1 sensitivities of the
    mean, of the second-moment triangle and of the joint vector.
    """
    if n < 1 or d < 1:
        raise ValueError("n and d must be >= 1")
    return {
        "mean_l2": 2.0 * np.sqrt(d) / n,
        "mean_l1": 2.0 * d / n,
        "second_moment_l2": np.sqrt(d * d + d / 2.0) / n,
        "second_moment_l1": d * d / n,
        "l2": np.sqrt(d * d + 4.5 * d) / n,
        "l1": (2.0 * d + d * d) / n,
    }


def dp_gaussian(
    frame: pd.DataFrame,
    bounds,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    *,
    noise: NoiseSampler | None = None,
    rows: int | None = None,
) -> pd.DataFrame:
    """DP Gaussian baseline: noisy mean and second moment, PSD covariance, Gaussian sample.

    Parameters
    ----------
    frame : DataFrame
        Numeric table (n rows, d columns); n is treated as public.
    bounds : mapping or (lower, upper)
        Public per-column bounds; values outside are clipped.
    epsilon, delta : float
        Privacy parameters (replace-one neighbours). delta > 0: analytic Gaussian
        mechanism; delta = 0: Laplace mechanism (epsilon-DP).
    rng : numpy.random.Generator
        Randomness of the post-processing (the Gaussian sample), not of the privacy noise.
    noise : NoiseSampler, optional
        Sampler of the privacy noise; default :class:`synthdp.privacy.noise.OpenDPNoise`.
    rows : int, optional
        Synthetic rows (default n).
    """
    if not epsilon > 0 or not (0 <= delta < 1):
        raise ValueError("need epsilon > 0 and 0 <= delta < 1")
    lower, upper = _bounds_arrays(frame, bounds)
    cube = _to_cube(_numeric(frame), lower, upper)
    n, d = cube.shape
    rows = n if rows is None else int(rows)
    noise = OpenDPNoise() if noise is None else noise

    iu = np.triu_indices(d)
    mean = cube.mean(axis=0)
    second = (cube.T @ cube) / n
    vector = np.concatenate([mean, second[iu]])
    sens = dp_gaussian_sensitivities(n, d)
    if delta > 0:
        noisy = noise.gaussian(vector, analytic_gaussian_sigma(sens["l2"], epsilon, delta))
    else:
        noisy = noise.laplace(vector, laplace_scale(sens["l1"], epsilon))

    # Post-processing from here on.
    noisy_mean = np.clip(noisy[:d], -1.0, 1.0)
    noisy_second = np.zeros((d, d))
    noisy_second[iu] = noisy[d:]
    noisy_second = noisy_second + np.triu(noisy_second, 1).T
    cov = noisy_second - np.outer(noisy_mean, noisy_mean)
    cov = (cov + cov.T) / 2.0
    eigenvalues, eigenvectors = np.linalg.eigh(cov)
    eigenvalues = np.clip(eigenvalues, 0.0, None)
    factor = eigenvectors * np.sqrt(eigenvalues)  # cov_psd = factor @ factor.T
    sample = noisy_mean + rng.standard_normal((rows, d)) @ factor.T
    return pd.DataFrame(_from_cube(sample, lower, upper), columns=frame.columns)


def bin_codes(frame: pd.DataFrame, bounds, bins: int) -> np.ndarray:
    """Equal-width bin index 0..bins-1 of every value, from the public bounds (clipping)."""
    lower, upper = _bounds_arrays(frame, bounds)
    values = np.clip(_numeric(frame), lower, upper)
    codes = np.floor(bins * (values - lower) / (upper - lower)).astype(int)
    return np.clip(codes, 0, bins - 1)


def decode_uniform(codes: np.ndarray, columns, bounds_lower: np.ndarray, bounds_upper: np.ndarray,
                   bins: int, rng: np.random.Generator) -> pd.DataFrame:
    """Bin codes -> values uniform within their bins, in original units."""
    codes = np.asarray(codes, dtype=float)
    width = (bounds_upper - bounds_lower) / bins
    values = bounds_lower + (codes + rng.uniform(0.0, 1.0, size=codes.shape)) * width
    return pd.DataFrame(np.minimum(values, bounds_upper), columns=list(columns))


def peer_python(name: str) -> Path:
    """The Python interpreter of the virtualenv that runs peer ``name``."""
    library, algorithm, variable, default = PEERS[_ALIASES.get(name, name)]
    return Path(os.environ.get(variable, default)) / "bin" / "python"


def binned_peer(
    name: str,
    frame: pd.DataFrame,
    bounds,
    epsilon: float,
    delta: float,
    bins: int = 16,
    rng: np.random.Generator | None = None,
    *,
    unit: str = "add-remove",
    timeout: float | None = None,
    rows: int | None = None,
    aim_rounds: int | None = None,
) -> pd.DataFrame:
    """Run a peer synthesizer on equal-width bins and decode uniformly within bins.

    Parameters
    ----------
    name : str
        ``"smartnoise-mst"`` (alias ``"mst"``), ``"smartnoise-aim"`` (alias ``"aim"``),
        ``"opendp-mst"`` or ``"opendp-aim"``.
    frame, bounds : as in :func:`dp_gaussian`; the bins come from the PUBLIC bounds.
    epsilon, delta : float
        Target (epsilon, delta); the peers are zCDP mechanisms and need delta > 0.
    bins : int, default 16
        Equal-width bins per column.
    rng : numpy.random.Generator, optional
        Randomness of the uniform decoding (and of the seed passed to the peer for its
        non-noise randomness). The peers' privacy noise comes from OpenDP and is not seeded.
    unit : {"add-remove", "replace-one", "contributions=K"}
        Privacy unit. "add-remove" is the peers' native unit (and issue 7's setting);
        "replace-one" is synthdp's (see experiments/peers/run_peer.py for how each peer is
        calibrated to it); "contributions=K" is one person's at most K rows added or removed
        (synthdp's ``--privacy-unit``; the caller bounds each person to K rows first).
    timeout : float, optional
        Seconds before the peer's subprocess is killed (raises :class:`PeerTimeout`).
    rows : int, optional
        Synthetic rows (default n).
    aim_rounds : int, optional
        smartnoise AIM's ``rounds`` (its default is 16 d).

    Returns
    -------
    DataFrame
        The synthetic table in original units. ``result.attrs["peer"]`` holds the peer's
        versions, privacy parameters and timings: ``fit_seconds`` and ``sample_seconds``
        (inside the peer), ``wall_seconds`` (whole subprocess, interpreter start-up and
        CSV I/O included) and ``cpu_seconds`` (user + system CPU of the subprocess).
    """
    key = _ALIASES.get(name, name)
    if key not in PEERS:
        raise ValueError(f"unknown peer '{name}'; choose from {sorted(PEERS) + sorted(_ALIASES)}")
    if unit not in ("add-remove", "replace-one") and not unit.startswith("contributions="):
        raise ValueError("unit must be 'add-remove', 'replace-one' or 'contributions=K'")
    if not (isinstance(bins, int) and bins >= 2):
        raise ValueError("bins must be an integer >= 2")
    python = peer_python(key)
    if not python.exists():
        raise PeerUnavailable(f"{python} not found: install the peers with `bash experiments/peers/install.sh`")
    rng = np.random.default_rng() if rng is None else rng
    lower, upper = _bounds_arrays(frame, bounds)
    codes = bin_codes(frame, (lower, upper), bins)
    rows = len(frame) if rows is None else int(rows)
    extra = ["--aim-rounds", str(int(aim_rounds))] if aim_rounds is not None else []
    synthetic_codes, info = _run_peer(key, python, codes, ["--bins", str(bins)], extra, epsilon, delta, unit, rows,
                                      rng, timeout)
    if synthetic_codes.shape != (rows, codes.shape[1]) or synthetic_codes.min() < 0 or synthetic_codes.max() >= bins:
        raise PeerFailed(f"{key} returned codes of shape {synthetic_codes.shape} outside 0..{bins - 1}")
    result = decode_uniform(synthetic_codes, frame.columns, lower, upper, bins, rng)
    result.attrs["peer"] = info
    return result


def _run_peer(key: str, python: Path, codes: np.ndarray, domain_args: list[str], extra_args: list[str],
              epsilon: float, delta: float, unit: str, rows: int, rng: np.random.Generator,
              timeout: float | None) -> tuple[np.ndarray, dict]:
    """Run ``run_peer.py`` in the peer's virtualenv on integer ``codes``; the synthetic codes and the info.

    The codes go to the peer under neutral column names (the peers never see the real ones);
    ``domain_args`` declare the public domain (``--bins``, and ``--sizes`` for per-column
    sizes), ``extra_args`` follow the common ones. The info gets the peer's key, the wall and
    CPU seconds of the subprocess and its command line.
    """
    neutral = [f"c{j}" for j in range(codes.shape[1])]
    with tempfile.TemporaryDirectory(prefix="synthdp_peer_") as tmp:
        tmp_path = Path(tmp)
        codes_path, out_path, info_path = tmp_path / "codes.csv", tmp_path / "out.csv", tmp_path / "info.json"
        pd.DataFrame(codes, columns=neutral).to_csv(codes_path, index=False)
        library, algorithm, _, _ = PEERS[key]
        command = [str(python), str(RUN_PEER), "--library", library, "--algorithm", algorithm,
                   "--codes", str(codes_path), *domain_args,
                   "--epsilon", repr(float(epsilon)), "--delta", repr(float(delta)), "--unit", unit,
                   "--rows", str(rows), "--seed", str(int(rng.integers(0, 2**31 - 1))),
                   "--out", str(out_path), "--info", str(info_path), *extra_args]
        env = dict(os.environ, PYTHONWARNINGS="ignore", JAX_PLATFORMS="cpu")
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env)
        except subprocess.TimeoutExpired as error:
            raise PeerTimeout(f"{key} did not finish within {timeout:.0f} s", time.perf_counter() - start) from error
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode != 0:
            raise PeerFailed(f"{key} exited with {done.returncode}: {done.stderr.strip()[-3000:]}")
        synthetic_codes = pd.read_csv(out_path)[neutral].to_numpy()
        info = json.loads(info_path.read_text())
    info.update({
        "peer": key,
        "wall_seconds": wall,
        "cpu_seconds": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
        "command": " ".join(command),
    })
    return synthetic_codes, info


def coded_peer(
    name: str,
    codes: np.ndarray,
    sizes,
    epsilon: float,
    delta: float,
    rng: np.random.Generator | None = None,
    *,
    unit: str = "add-remove",
    timeout: float | None = None,
    rows: int | None = None,
) -> tuple[np.ndarray, dict]:
    """Run a peer on integer codes whose columns have their own public domain sizes.

    For mixed tables: the caller codes each column (a categorical column by its public levels,
    a numeric one by equal-width bins of its public bounds) into 0..sizes[j]-1, and decodes the
    synthetic codes afterwards. Same subprocess, privacy unit and errors as :func:`binned_peer`
    (``run_peer.py --sizes``); ``rng`` only draws the seed of the peer's non-noise randomness.

    Returns
    -------
    (ndarray of int, shape (rows, d), dict)
        The synthetic codes and the peer's info (versions, rho, ``fit_seconds``,
        ``sample_seconds``, ``wall_seconds``, ``cpu_seconds``, ``command``).
    """
    key = _ALIASES.get(name, name)
    if key not in PEERS:
        raise ValueError(f"unknown peer '{name}'; choose from {sorted(PEERS) + sorted(_ALIASES)}")
    if unit not in ("add-remove", "replace-one") and not unit.startswith("contributions="):
        raise ValueError("unit must be 'add-remove', 'replace-one' or 'contributions=K'")
    codes = np.asarray(codes)
    sizes = [int(size) for size in sizes]
    if codes.ndim != 2 or codes.shape[1] != len(sizes) or min(sizes) < 2:
        raise ValueError("codes must be (n, d) with one domain size >= 2 per column")
    if codes.min() < 0 or (codes >= np.asarray(sizes)).any():
        raise ValueError("codes must lie in 0..sizes[j]-1")
    python = peer_python(key)
    if not python.exists():
        raise PeerUnavailable(f"{python} not found: install the peers with `bash experiments/peers/install.sh`")
    rng = np.random.default_rng() if rng is None else rng
    rows = len(codes) if rows is None else int(rows)
    synthetic_codes, info = _run_peer(key, python, codes.astype(int),
                                      ["--bins", str(max(sizes)), "--sizes", ",".join(map(str, sizes))], [],
                                      epsilon, delta, unit, rows, rng, timeout)
    if synthetic_codes.shape != (rows, codes.shape[1]) or synthetic_codes.min() < 0 \
            or (synthetic_codes >= np.asarray(sizes)).any():
        raise PeerFailed(f"{key} returned codes of shape {synthetic_codes.shape} outside the domain")
    return synthetic_codes.astype(int), info


def dpmm_python() -> Path:
    """The Python interpreter of dpmm's virtualenv (``$SYNTHDP_PEERS_DPMM_VENV``, default /opt/peers-venv-dpmm)."""
    variable, default = DPMM_VENV
    return Path(os.environ.get(variable, default)) / "bin" / "python"


def _dpmm_domain(frame: pd.DataFrame, bounds_or_schema) -> list[tuple]:
    """Per column: ``("numeric", lo, hi, integer)`` or ``("levels", CategoricalColumn)``, from PUBLIC input only.

    ``bounds_or_schema`` is a bounds mapping (``{column: [lo, hi]}`` or ``{column: {"bounds": [lo, hi],
    "type": "integer"}}``, as :attr:`common.Dataset.bounds`), a pair ``(lower, upper)``, or a schema
    mapping ``{"columns": {column: {"type": ..., "bounds" | "levels": ...}}}`` (continuous, integer,
    binary, categorical; a categorical column gets synthdp's "other" level, as synthdp codes it).
    """
    columns = list(frame.columns)
    if isinstance(bounds_or_schema, Mapping) and isinstance(bounds_or_schema.get("columns"), Mapping) \
            and "columns" not in columns:
        from synthdp.study import LEVEL_TYPES, Schema

        specs = bounds_or_schema["columns"]
        missing = [c for c in columns if c not in specs]
        if missing:
            raise ValueError(f"schema has no entry for column '{missing[0]}'")
        schema = None
        out = []
        for c in columns:
            spec = specs[c]
            kind = spec.get("type", "continuous") if isinstance(spec, Mapping) else "continuous"
            if isinstance(spec, Mapping) and spec.get("nullable"):
                raise ValueError(f"column '{c}' is nullable: dpmm_peer takes tables without missing values")
            if kind in LEVEL_TYPES:
                schema = schema or Schema.from_dict(bounds_or_schema, columns)
                out.append(("levels", schema.column(c)))
            elif kind in ("continuous", "integer"):
                lo, hi = (float(b) for b in (spec["bounds"] if isinstance(spec, Mapping) else spec))
                out.append(("numeric", lo, hi, kind == "integer"))
            else:
                raise ValueError(f"column '{c}' has type '{kind}'; dpmm_peer takes continuous, integer, "
                                 "binary and categorical columns")
        return out
    if isinstance(bounds_or_schema, Mapping):
        integer = {c for c, spec in bounds_or_schema.items()
                   if isinstance(spec, Mapping) and spec.get("type") == "integer"}
        plain = {c: (spec["bounds"] if isinstance(spec, Mapping) else spec) for c, spec in bounds_or_schema.items()}
        lower, upper = _bounds_arrays(frame, plain)
    else:
        integer = set()
        lower, upper = _bounds_arrays(frame, bounds_or_schema)
    return [("numeric", float(lo), float(hi), c in integer) for c, lo, hi in zip(columns, lower, upper)]


def dpmm_peer(
    name: str,
    frame: pd.DataFrame,
    bounds_or_schema,
    epsilon: float,
    delta: float,
    rng: np.random.Generator | None = None,
    *,
    unit: str = "add-remove",
    timeout: float | None = None,
    rows: int | None = None,
    proc_share: float = 0.1,
    bins: int | str = "auto",
    privbayes_selection: str = "published",
    aim_rounds: int | None = None,
) -> pd.DataFrame:
    """Run SAS's dpmm (MST, AIM or PrivBayes, with DP PrivTree discretisation) on a table.

    The numeric columns go to dpmm as raw values with their PUBLIC bounds (dpmm discretises them
    with PrivTree inside the bounds; it reads no bounds from the data and spends nothing on them);
    categorical/binary columns as integer codes 0..L-1 of their public levels (synthdp's "other"
    level included for a categorical column), declared as the categories. Columns go under neutral
    names. The subprocess is ``experiments/peers/run_dpmm.py`` in dpmm's virtualenv
    (:func:`dpmm_python`); see its docstring for the budget split, the privacy unit and the caveats.

    Parameters
    ----------
    name : str
        ``"dpmm-mst"``, ``"dpmm-aim"`` or ``"dpmm-privbayes"``.
    frame : DataFrame
        The real table, without missing values.
    bounds_or_schema : mapping or (lower, upper)
        Public bounds (as :func:`dp_gaussian`; ``{"bounds": [lo, hi], "type": "integer"}`` entries
        allowed) or a schema mapping ``{"columns": {...}}`` with continuous, integer, binary and
        categorical columns (levels public).
    epsilon, delta : float
        The TOTAL budget (PrivTree's share included); delta > 0.
    rng : numpy.random.Generator, optional
        Draws the seed of dpmm's non-noise randomness (its noise comes from OpenDP, not seeded).
    unit : {"add-remove", "replace-one"}
        Privacy unit: dpmm's native add/remove, or synthdp's replace-one (PrivTree at half its
        epsilon, the models at a quarter of their zCDP rho; see run_dpmm.py).
    timeout : float, optional
        Seconds before the subprocess is killed (raises :class:`PeerTimeout`).
    rows : int, optional
        Synthetic rows (default n).
    proc_share : float, default 0.1
        Share of epsilon for PrivTree (dpmm's own default ratio is proc_epsilon 0.1 : epsilon 1).
    bins : int or "auto"
        PrivTree's maximum bins per numeric column; "auto" is dpmm's default (from n and epsilon).
    privbayes_selection : {"published", "sound"}
        "published" runs dpmm's PrivBayes as shipped (its structure selection is NOT DP as
        calibrated, see run_dpmm.py); "sound" recalibrates it to sensitivity 1.
    aim_rounds : int, optional
        AIM's rounds (dpmm's default 16 d).

    Returns
    -------
    DataFrame
        The synthetic table with ``frame``'s columns; numeric columns in original units (integer
        ones rounded and cast back to the real dtype), categorical columns as their levels (cast back
        to the real dtype where every value allows it). ``result.attrs["peer"]`` holds run_dpmm's
        info (versions, the budget actually passed, PrivTree's bins, notes, ``fit_seconds``,
        ``sample_seconds``) plus ``wall_seconds``, ``cpu_seconds`` and ``command``.
    """
    if name not in DPMM_PEERS:
        raise ValueError(f"unknown dpmm peer '{name}'; choose from {sorted(DPMM_PEERS)}")
    if unit not in ("add-remove", "replace-one"):
        raise ValueError("unit must be 'add-remove' or 'replace-one'")
    if not (epsilon > 0 and 0 < delta < 1):
        raise ValueError("need epsilon > 0 and 0 < delta < 1 (dpmm's models are zCDP mechanisms)")
    if privbayes_selection not in ("published", "sound"):
        raise ValueError("privbayes_selection must be 'published' or 'sound'")
    if len(frame) == 0 or frame.isna().to_numpy().any():
        raise ValueError("the table must have rows and no missing values")
    python = dpmm_python()
    if not python.exists():
        raise PeerUnavailable(f"{python} not found: install the peers with `bash experiments/peers/install.sh`")
    rng = np.random.default_rng() if rng is None else rng
    rows = len(frame) if rows is None else int(rows)
    specs = _dpmm_domain(frame, bounds_or_schema)
    neutral = [f"c{j}" for j in range(frame.shape[1])]
    data, domain = {}, {}
    for column, key, spec in zip(frame.columns, neutral, specs):
        if spec[0] == "numeric":
            _, lo, hi, _ = spec
            data[key] = frame[column].to_numpy(dtype=float)
            domain[key] = {"lower": lo, "upper": hi}
        else:
            levels = spec[1]
            data[key] = levels.level_codes(frame[column])
            domain[key] = {"categories": [str(code) for code in range(len(levels.all_levels))]}
    with tempfile.TemporaryDirectory(prefix="synthdp_dpmm_") as tmp:
        tmp_path = Path(tmp)
        data_path, domain_path = tmp_path / "data.csv", tmp_path / "domain.json"
        out_path, info_path = tmp_path / "out.csv", tmp_path / "info.json"
        pd.DataFrame(data, columns=neutral).to_csv(data_path, index=False)
        domain_path.write_text(json.dumps({"columns": domain}))
        command = [str(python), str(RUN_DPMM), "--algorithm", DPMM_PEERS[name],
                   "--data", str(data_path), "--domain", str(domain_path),
                   "--epsilon", repr(float(epsilon)), "--delta", repr(float(delta)), "--unit", unit,
                   "--rows", str(rows), "--seed", str(int(rng.integers(0, 2**31 - 1))),
                   "--proc-share", repr(float(proc_share)), "--bins", str(bins),
                   "--privbayes-selection", privbayes_selection,
                   "--out", str(out_path), "--info", str(info_path)]
        if aim_rounds is not None:
            command += ["--aim-rounds", str(int(aim_rounds))]
        env = dict(os.environ, PYTHONWARNINGS="ignore")
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env)
        except subprocess.TimeoutExpired as error:
            raise PeerTimeout(f"{name} did not finish within {timeout:.0f} s", time.perf_counter() - start) from error
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode != 0:
            raise PeerFailed(f"{name} exited with {done.returncode}: {done.stderr.strip()[-3000:]}")
        categorical = [key for key, spec in zip(neutral, specs) if spec[0] == "levels"]
        synthetic = pd.read_csv(out_path, dtype={key: str for key in categorical})
        info = json.loads(info_path.read_text())
    if list(synthetic.columns) != neutral or len(synthetic) != rows:
        raise PeerFailed(f"{name} returned columns {list(synthetic.columns)} and {len(synthetic)} rows")
    result = {}
    for column, key, spec in zip(frame.columns, neutral, specs):
        if spec[0] == "numeric":
            _, lo, hi, integer = spec
            values = np.clip(synthetic[key].to_numpy(dtype=float), lo, hi)
            if integer or frame[column].dtype.kind in "iu":
                values = np.rint(values)
            series = pd.Series(values)
        else:
            levels = np.asarray(spec[1].all_levels, dtype=object)
            series = pd.Series(levels[synthetic[key].astype(int).to_numpy()], dtype=object)
        try:
            series = series.astype(frame[column].dtype)
        except (TypeError, ValueError):  # e.g. "other" in a column of integer codes: keep the levels as text
            pass
        result[column] = series
    out = pd.DataFrame(result, columns=frame.columns)
    info.update({
        "peer": name,
        "wall_seconds": wall,
        "cpu_seconds": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
        "command": " ".join(command),
    })
    out.attrs["peer"] = info
    return out


if __name__ == "__main__":  # a quick availability check
    for peer in PEERS:
        print(f"{peer}: {peer_python(peer)} {'found' if peer_python(peer).exists() else 'MISSING'}")
    for peer in DPMM_PEERS:
        print(f"{peer}: {dpmm_python()} {'found' if dpmm_python().exists() else 'MISSING'}")
    sys.exit(0)
