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

from synthdp.privacy.noise import NoiseSampler, OpenDPNoise, analytic_gaussian_sigma, laplace_scale

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
}

#: Default seconds before a peer run is killed (MST takes 50-80 s on CTG and ~6 min on CRM here).
PEER_TIMEOUTS = {"smartnoise-mst": 900.0, "opendp-mst": 900.0, "smartnoise-aim": 240.0, "opendp-aim": 240.0}


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


if __name__ == "__main__":  # a quick availability check
    for peer in PEERS:
        print(f"{peer}: {peer_python(peer)} {'found' if peer_python(peer).exists() else 'MISSING'}")
    sys.exit(0)
