"""What a golden case records of a seeded release, and how a fresh run is compared with it.

A record has four tiers (tests/golden/README.md says why):

``release``
    Every number the private side handed to post-processing (:class:`synthdp.released.Release`:
    the noisy moments, histograms and pair scores, their noise sd, the noisy counts, the plan's
    public sizes), each array as a sketch: its sum of squares and four fixed random projections.
    Compared to ``RELEASE_RTOL`` of the array's norm. Another machine or library build moves
    these numbers by rounding (1e-15 relative); a changed noise draw or moment moves one entry
    by a noise sd (1e-4 to 1 of the norm) and so its projections by about as much.
``documents``
    The report (and the summary where the case writes one) without timings: public metadata and
    the ledger exactly, numbers to ``RELEASE_RTOL``. Its post-processing sections (``lp``,
    ``output``: the LP's objective, support, rounds, distinct rows) are compared with their
    digits masked, since an l1 LP and a tilt of 1 000 steps carry a last-bit difference in
    their input to a different vertex.
``tables``
    The synthetic table's statistics: its shape and columns exactly; each numeric column's
    mean and three quantiles, each level's share, each correlation, within ``TABLE_SE``
    standard errors of a difference between two samples of the table's size. A loose check:
    it catches a broken decoder, sampler or column order, not a change in one noise draw
    (the release tier does that).
``bytes``
    sha256 of the output files, as before: checked only where the environment is the one they
    were recorded in (:func:`cases.environment`: the library versions of
    ``tests/constraints.txt``, the pinned SIMD and BLAS kernels), as in CI.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import re
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import pandas as pd

RELEASE_RTOL = 1e-9  # of an array's norm or a number's size; rounding is ~1e-15, a noise draw >= 1e-6
ABS_FLOOR = 1e-12  # numbers this close to zero compare equal (a sum that is 0 on one machine, 1e-17 on another)
PROJECTIONS = 4  # random projections per array: a changed entry escapes all four with probability ~1e-30
# The tables tier's bounds: TABLE_SE standard errors of a two-sample difference, and no less than
# these floors. The post-processing (selections on noisy statistics, an l1 LP, a tilt) carries a
# last-bit difference to another model: across five other kernel sets and library versions
# (tests/golden/README.md) the 25 cases moved at most 0.12 sd in a mean, 0.011 in a share on
# adult's 32 561 rows, 0.25 in one correlation and 0.055 in the mean over a table's correlations;
# each floor is about twice that.
TABLE_SE = 8.0
MEAN_FLOOR = 0.25  # in the column's sd
SHARE_FLOOR = 0.02  # of rows: a level's share, the share below a quantile, the share missing
CORRELATION_FLOOR = 0.5  # one pair's correlation
MEAN_CORRELATION_FLOOR = 0.1  # the mean over a table's pairs of the correlations' moves
QUANTILES = tuple(np.round(np.arange(0.05, 0.96, 0.05), 2))  # 5 %, 10 %, ..., 95 %
LONG_LIST = 32  # a document's lists of numbers longer than this are sketched
TABLE_DIGITS = 6  # significant digits the tables tier keeps (its bounds are > 1e-3 of the values)
POSTPROCESSING = ("lp", "output")  # report sections written by the LP, the tilt and the sampler
DIGITS = re.compile(r"[-+]?\d+(\.\d+)?([eE][-+]?\d+)?")


# ---------------------------------------------------------------------- release tier
def _projection(size: int, k: int) -> np.ndarray:
    return np.random.default_rng([20261128, k, size]).standard_normal(size)


def sketch(value: np.ndarray) -> dict[str, Any]:
    """A float array's shape, where it is not finite, and its sum of squares and projections."""
    flat = np.asarray(value, dtype=float).ravel()
    finite = np.isfinite(flat)
    clean = np.where(finite, flat, 0.0)
    marks = np.where(finite, 0, np.where(np.isnan(flat), 1, np.sign(flat) * 2)).astype(np.int8)
    return {"shape": list(np.shape(value)),
            "not_finite": hashlib.sha256(marks.tobytes()).hexdigest() if not finite.all() else None,
            "squares": float(clean @ clean),
            "projections": [float(clean @ _projection(flat.size, k)) for k in range(PROJECTIONS)]}


def fingerprint(value: Any) -> Any:
    """A JSON-able fingerprint of ``value``: dataclasses and mappings by field, float arrays sketched,
    integer arrays hashed, numbers as numbers."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {"type": type(value).__name__,
                **{f.name: fingerprint(getattr(value, f.name)) for f in dataclasses.fields(value)}}
    if isinstance(value, Mapping):
        return {str(key): fingerprint(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [fingerprint(item) for item in value]
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "fc":
            return {"array": sketch(value.real if value.dtype.kind == "c" else value)}
        if value.dtype.kind in "iub":
            return {"shape": list(value.shape), "sha256": hashlib.sha256(
                np.ascontiguousarray(value, dtype=np.int64).tobytes()).hexdigest()}
        return {"shape": list(value.shape), "items": [fingerprint(item) for item in value.ravel().tolist()]}
    if isinstance(value, (np.floating, float)):
        return float(value)
    if isinstance(value, (np.integer, np.bool_)):
        return value.item()
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if hasattr(value, "__dict__"):  # a plain object of public fields (no address in its repr)
        return {"type": type(value).__name__, **{k: fingerprint(v) for k, v in vars(value).items()
                                                  if not k.startswith("_") and not callable(v)}}
    return repr(value)


def _close(a: float, b: float, scale: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= RELEASE_RTOL * max(abs(a), abs(b), scale) + ABS_FLOOR


def release_differences(recorded: Any, fresh: Any, path: str = "") -> Iterator[str]:
    """Where ``fresh`` differs from ``recorded`` beyond rounding (one line each, no values)."""
    if isinstance(recorded, dict) and "array" in recorded and isinstance(fresh, dict) and "array" in fresh:
        old, new = recorded["array"], fresh["array"]
        if old["shape"] != new["shape"] or old["not_finite"] != new["not_finite"]:
            yield f"{path}: shape or non-finite entries changed"
            return
        norm = math.sqrt(max(old["squares"], new["squares"]))
        if not _close(old["squares"], new["squares"], norm * norm) or not all(
                _close(a, b, norm) for a, b in zip(old["projections"], new["projections"])):
            yield f"{path}: values changed beyond rounding"
        return
    if isinstance(recorded, dict) and isinstance(fresh, dict):
        for key in sorted(set(recorded) | set(fresh)):
            if key not in recorded or key not in fresh:
                yield f"{path}/{key}: {'added' if key in fresh else 'missing'}"
            else:
                yield from release_differences(recorded[key], fresh[key], f"{path}/{key}")
        return
    if isinstance(recorded, list) and isinstance(fresh, list):
        if len(recorded) != len(fresh):
            yield f"{path}: {len(recorded)} items recorded, {len(fresh)} now"
            return
        for i, (old, new) in enumerate(zip(recorded, fresh)):
            yield from release_differences(old, new, f"{path}[{i}]")
        return
    numbers = (int, float)
    if (isinstance(recorded, numbers) and isinstance(fresh, numbers) and not isinstance(recorded, bool)
            and not isinstance(fresh, bool) and (isinstance(recorded, float) or isinstance(fresh, float))):
        if not _close(float(recorded), float(fresh), 0.0):
            yield f"{path}: number changed beyond rounding"
        return
    if recorded != fresh:
        yield f"{path}: changed"


# ---------------------------------------------------------------------- documents tier
def mask_digits(value: Any) -> Any:
    """``value`` with its numbers replaced by '#': what a post-processing field says, not how much."""
    if isinstance(value, dict):
        return {key: mask_digits(item) for key, item in value.items()}
    if isinstance(value, list):
        return [mask_digits(item) for item in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return "#"
    return DIGITS.sub("#", str(value))


def document_view(document: Any) -> Any:
    """A report or summary for the documents tier: post-processing sections with digits masked,
    long lists of numbers (a summary's moments) sketched like the release's arrays."""
    if isinstance(document, dict):
        return {key: (mask_digits(item) if key in POSTPROCESSING else document_view(item))
                for key, item in document.items()}
    if isinstance(document, list):
        if len(document) > LONG_LIST and _numeric(document):
            return {"array": sketch(np.asarray(document, dtype=float))}
        if len(document) > LONG_LIST and _integers(document):  # ragged (a marginal summary's terms): hashed
            return {"length": len(document), "sha256": hashlib.sha256(json.dumps(document).encode()).hexdigest()}
        return [document_view(item) for item in document]
    return document


def _integers(value: Any) -> bool:
    """Integers, or lists of them nested to any depth and of any lengths."""
    if isinstance(value, list):
        return all(_integers(item) for item in value)
    return isinstance(value, int) and not isinstance(value, bool)


def _numeric(items: list) -> bool:
    """A list of numbers, or of lists of numbers of one length (a matrix)."""
    if all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in items):
        return True
    return (all(isinstance(x, list) and len(x) == len(items[0]) for x in items)
            and all(_numeric(x) and all(not isinstance(y, list) for y in x) for x in items))


# ---------------------------------------------------------------------- tables tier
def table_statistics(frame: pd.DataFrame) -> dict[str, Any]:
    """What the tables tier compares: shape and columns; per numeric column its mean, sd and
    quantiles (QUANTILES); per other column its levels' shares; the correlations."""
    numeric = [c for c in frame.columns if pd.api.types.is_numeric_dtype(frame[c]) and frame[c].notna().any()]
    stats: dict[str, Any] = {"rows": int(len(frame)), "columns": [str(c) for c in frame.columns],
                             "numeric": [str(c) for c in numeric], "columns_stats": {}}
    for column in frame.columns:
        values = frame[column]
        entry: dict[str, Any] = {"missing": float(values.isna().mean())}
        if column in numeric:
            present = values.dropna().astype(float).to_numpy()
            entry.update(mean=float(present.mean()), sd=float(present.std()),
                         quantiles=np.quantile(present, QUANTILES).tolist())
        else:
            shares = values.dropna().astype(str).value_counts(normalize=True)
            entry["levels"] = {str(level): float(share) for level, share in shares.items()}
        stats["columns_stats"][str(column)] = entry
    if len(numeric) >= 2:
        corr = frame[numeric].astype(float).corr().to_numpy()
        stats["correlations"] = np.nan_to_num(corr[np.triu_indices(len(numeric), 1)], nan=0.0).round(4).tolist()
    return _rounded(stats)


def table_differences(recorded: dict[str, Any], fresh: dict[str, Any], name: str) -> Iterator[str]:
    """Statistics of ``fresh`` beyond the tables tier's bounds from ``recorded``'s: a numeric
    column's mean, and the mean distance between its quantiles (the Wasserstein-1 distance of
    the two distributions, read on QUANTILES: a point mass that moves a little moves it a
    little), within max(TABLE_SE sqrt(2 / m), MEAN_FLOOR) of its sd; a share within
    max(TABLE_SE two-sample se, SHARE_FLOOR); each correlation within CORRELATION_FLOOR, and
    their mean move within MEAN_CORRELATION_FLOOR."""
    for key in ("rows", "columns", "numeric"):
        if recorded[key] != fresh[key]:
            yield f"{name}: {key} changed"
            return
    m = recorded["rows"]
    share_bound = lambda a, b: max(TABLE_SE * math.sqrt(2 * max(a * (1 - a), b * (1 - b), 1 / m) / m), SHARE_FLOOR)
    for column, old in recorded["columns_stats"].items():
        new = fresh["columns_stats"][column]
        if abs(old["missing"] - new["missing"]) > share_bound(old["missing"], new["missing"]):
            yield f"{name}/{column}: share missing moved"
        if "mean" in old:
            bound = max(TABLE_SE * math.sqrt(2 / m), MEAN_FLOOR) * max(old["sd"], new["sd"]) + ABS_FLOOR
            if abs(old["mean"] - new["mean"]) > bound:
                yield f"{name}/{column}: mean moved"
            if np.mean(np.abs(np.subtract(old["quantiles"], new["quantiles"]))) > bound:
                yield f"{name}/{column}: distribution moved (its quantiles)"
        else:
            for level in sorted(set(old["levels"]) | set(new["levels"])):
                a, b = old["levels"].get(level, 0.0), new["levels"].get(level, 0.0)
                if abs(a - b) > share_bound(a, b):
                    yield f"{name}/{column}: a level's share moved"
    moves = np.abs(np.subtract(recorded.get("correlations", []), fresh.get("correlations", [])))
    if moves.size and moves.max() > CORRELATION_FLOOR:
        yield f"{name}: correlation {int(moves.argmax())} moved by more than {CORRELATION_FLOOR}"
    if moves.size and moves.mean() > MEAN_CORRELATION_FLOOR:
        yield f"{name}: the correlations moved by more than {MEAN_CORRELATION_FLOOR} on average"


def _rounded(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _rounded(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_rounded(item) for item in value]
    if isinstance(value, float) and math.isfinite(value):
        return float(f"{value:.{TABLE_DIGITS}g}")
    return value


# ---------------------------------------------------------------------- all tiers
def differences(recorded: dict[str, Any], fresh: dict[str, Any], bytes_too: bool) -> Iterator[str]:
    """Every tier's differences between a case's record and a fresh run (bytes only if ``bytes_too``)."""
    if "error" in fresh:
        yield "the case failed to run:\n" + fresh["error"]
        return
    yield from (f"release{line}" for line in release_differences(recorded["release"], fresh["release"]))
    yield from (f"document {line}" for line in release_differences(recorded["documents"], fresh["documents"]))
    for name, stats in recorded["tables"].items():
        if name not in fresh["tables"]:
            yield f"table {name}: missing"
        else:
            yield from (f"table {line}" for line in table_differences(stats, fresh["tables"][name], name))
    if bytes_too and recorded["bytes"] != fresh["bytes"]:
        changed = sorted(f for f in recorded["bytes"] if recorded["bytes"][f] != fresh["bytes"].get(f))
        yield f"bytes of {', '.join(changed)} changed (the environment is the recording's)"
