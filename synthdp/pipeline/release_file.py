"""A release kept in a model file: its noisy statistics, plan and configuration as JSON and arrays.

A model file (:mod:`synthdp.pipeline.model`) holds the fitted distribution, which is enough to sample
rows. Copies of the release (:mod:`synthdp.pipeline.copies`) need more: they run the release's
mechanism again, with its plan, calibration and shares, and post-process each copy as the release
was. So from format version 4 a model file also holds the :class:`~synthdp.released.Release` (every
field but the domain and schema, which the file holds already) and the
:class:`~synthdp.config.SynthConfig` the fit was given. All of it is public: the release's values are
its noisy statistics with their noise scales, and the plan is made of public sizes and the budget's
split (``synthdp.released``); nothing here is read from the data.

The document is plain JSON: a frozen dataclass of the release's own kinds (:data:`KINDS`, no other) is
``{"kind": name, "fields": {...}}``, a tuple ``{"tuple": [...]}``, a number that JSON cannot hold
(inf, nan) ``{"float": "inf"}``, and an array ``{"array": name}``, one ``.npy`` member of the file
(named :data:`ARRAY_PREFIX` and a number). An integer matrix mostly of zeros (a mixed table's basis
indices: one column per level of every categorical column) is held as its non-zero entries,
``{"sparse": [shape, rows, columns, values]}``, so that a column of thousands of levels does not make
the file gigabytes; it is a field of the release itself (not of a field's dataclass), and is made whole
only once its shape is checked against the released moments and the table's coordinates, so that a
crafted shape cannot make the reader allocate more than a matrix of those many rows and columns.
Reading rebuilds only those kinds, with their own constructors; anything else is a damaged file
(:func:`release_from` raises ``ValueError``, which the model file's reader makes one line).
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Mapping
from typing import Any

import numpy as np

from synthdp.config import SynthConfig
from synthdp.domain.box import Domain
from synthdp.domain.schema import Schema
from synthdp.pipeline.plan import PairsTest, Plan, TheoryParameters
from synthdp.privacy.budget import Budget, StageBudget
from synthdp.privacy.sensitivity import Neighbours
from synthdp.released import ClassHistograms, PairsTestResult, PrivatePCA, Release, SelectedPairs, UnitsRelease
from synthdp.stats.histograms import CellLayout

#: The dataclasses a release is made of, by name: the only kinds a file's release document may build.
KINDS: dict[str, type] = {kind.__name__: kind for kind in (
    Plan, TheoryParameters, Budget, StageBudget, PairsTest, Neighbours, CellLayout, PrivatePCA, UnitsRelease,
    PairsTestResult, SelectedPairs, ClassHistograms)}
#: The release's arrays in a model file: ``release_0.npy``, ``release_1.npy``, ...
ARRAY_PREFIX = "release_"
ARRAY_NAME = re.compile(ARRAY_PREFIX + r"[0-9]{1,6}")
#: Release fields the model file holds elsewhere (its ``domain`` and ``schema``).
HELD_ELSEWHERE = ("domain", "schema")
NON_FINITE = ("inf", "-inf", "nan")


def release_document(release: Release, config: SynthConfig) -> tuple[dict, dict[str, np.ndarray]]:
    """The release (but its domain and schema) and the configuration as a JSON-ready document, and
    the arrays it names (module docstring)."""
    arrays: dict[str, np.ndarray] = {}

    def array(values: np.ndarray) -> dict:
        name = f"{ARRAY_PREFIX}{len(arrays)}"
        arrays[name] = np.ascontiguousarray(values)
        return {"array": name}

    def encode(value: Any) -> Any:
        if value is None or isinstance(value, (bool, str)):
            return value
        if isinstance(value, (int, np.integer)) and not isinstance(value, np.bool_):
            return int(value)
        if isinstance(value, (float, np.floating)):
            return float(value) if math.isfinite(value) else {"float": repr(float(value))}
        if isinstance(value, np.bool_):
            return bool(value)
        if isinstance(value, np.ndarray):
            if value.ndim == 2 and value.dtype.kind in "iu" and value.size > 1024 \
                    and np.count_nonzero(value) * 4 < value.size:
                rows, columns = np.nonzero(value)
                return {"sparse": [list(value.shape), array(rows.astype(np.int64)), array(columns.astype(np.int64)),
                                   array(value[rows, columns])]}
            return array(value)
        if isinstance(value, tuple):
            return {"tuple": [encode(item) for item in value]}
        if isinstance(value, list):
            return [encode(item) for item in value]
        kind = type(value).__name__
        if dataclasses.is_dataclass(value) and KINDS.get(kind) is type(value):
            return {"kind": kind, "fields": {field.name: encode(getattr(value, field.name))
                                             for field in dataclasses.fields(value)}}
        raise TypeError(f"a release's {kind} cannot be written to a model file")  # a new field's kind: add it

    fields = {field.name: encode(getattr(release, field.name)) for field in dataclasses.fields(release)
              if field.name not in HELD_ELSEWHERE}
    return {"fields": fields, "config": {key: encode(getattr(config, key)) for key in config.keys()}}, arrays


def release_from(document: Any, arrays: Mapping[str, np.ndarray], domain: Domain,
                 schema: Schema | None, whole: bool = True) -> tuple[Release, SynthConfig]:
    """The release and configuration of a model file's release ``document`` and its ``arrays``, with
    the file's ``domain`` and ``schema``. ``ValueError`` (or the ``SynthDPError`` of a configuration
    the options refuse) where the document is not one :func:`release_document` writes or does not fit
    the columns. ``whole`` False: a check only, which leaves a matrix held by its entries as a
    read-only view of zeros of its shape (no memory), where True makes it whole."""
    def decode(value: Any, field: bool = False) -> Any:
        if isinstance(value, list):
            return [decode(item) for item in value]
        if not isinstance(value, dict):
            if isinstance(value, float) and not math.isfinite(value):
                raise ValueError("a number JSON does not hold")
            return value
        if set(value) == {"float"} and value["float"] in NON_FINITE:
            return float(value["float"])
        if set(value) == {"array"} and isinstance(value["array"], str) and ARRAY_NAME.fullmatch(value["array"]):
            return arrays[value["array"]]
        if set(value) == {"tuple"} and isinstance(value["tuple"], list):
            return tuple(decode(item) for item in value["tuple"])
        if set(value) == {"sparse"} and field and isinstance(value["sparse"], list) and len(value["sparse"]) == 4:
            shape, rows, columns, values = (decode(item) for item in value["sparse"])
            if not (isinstance(shape, list) and len(shape) == 2 and all(type(size) is int for size in shape)
                    and rows.shape == columns.shape == values.shape and rows.ndim == 1):
                raise ValueError("a sparse matrix of another form")
            return _Sparse((shape[0], shape[1]), rows, columns, values)
        if set(value) == {"kind", "fields"} and value["kind"] in KINDS and isinstance(value["fields"], dict):
            return KINDS[value["kind"]](**{name: decode(item) for name, item in value["fields"].items()})
        raise ValueError("an entry of another kind")

    if not (isinstance(document, dict) and set(document) == {"fields", "config"}
            and isinstance(document["fields"], dict) and isinstance(document["config"], dict)):
        raise ValueError("not a release document")
    try:
        fields = {name: decode(value, field=True) for name, value in document["fields"].items()}
        coordinates = domain.d if schema is None else schema.n_coordinates
        for name, value in fields.items():
            if isinstance(value, _Sparse):  # whole only at the shape the moments and the columns give it
                fields[name] = value.whole((len(np.asarray(fields.get("noisy_moments", ()))), coordinates), whole)
        config = SynthConfig(**{name: decode(value) for name, value in document["config"].items()})
        release = Release(domain=domain, schema=schema, **fields)
    except (TypeError, KeyError, IndexError) as error:  # a field missing or of another name or shape
        raise ValueError(str(error)) from None
    _check(release)
    return release, config


@dataclasses.dataclass(frozen=True)
class _Sparse:
    """A matrix read as its non-zero entries, not yet made whole (:func:`release_from`)."""

    shape: tuple[int, int]
    rows: np.ndarray
    columns: np.ndarray
    values: np.ndarray

    def whole(self, expected: tuple[int, int], dense: bool = True) -> np.ndarray:
        """The dense matrix, where its shape is ``expected`` and its entries lie inside it (``dense``
        False: a read-only view of zeros of that shape, for a check that needs only the shape)."""
        if self.shape != expected or self.rows.dtype.kind not in "iu" or self.columns.dtype.kind not in "iu" \
                or self.values.dtype.kind not in "iu" or not (
                np.all((self.rows >= 0) & (self.rows < expected[0]))
                and np.all((self.columns >= 0) & (self.columns < expected[1]))):
            raise ValueError("a sparse matrix that does not fit the moments and the columns")
        if not dense:
            return np.broadcast_to(np.zeros((), dtype=self.values.dtype), expected)
        matrix = np.zeros(expected, dtype=self.values.dtype)
        matrix[self.rows, self.columns] = self.values
        return matrix


def _check(release: Release) -> None:
    """The release's arrays fit one another, its plan and its columns, and hold finite numbers."""
    plan = release.plan
    if not isinstance(plan, Plan) or not all(isinstance(getattr(plan, name), int) and not isinstance(
            getattr(plan, name), bool) for name in ("n", "d", "n_basis", "n_candidates", "marginal_bins")):
        raise ValueError("its plan")
    coordinates = release.domain.d if release.schema is None else release.schema.n_coordinates
    indices, moments = np.asarray(release.basis_indices), np.asarray(release.noisy_moments)
    if indices.ndim != 2 or indices.shape[1] != coordinates or moments.shape != (len(indices),) \
            or np.asarray(release.moment_noise_sd).shape not in ((len(indices),), ()):
        raise ValueError("its moments do not fit its columns")
    for name in ("noisy_moments", "moment_noise_sd", "noisy_histograms", "noisy_scores"):
        values = getattr(release, name)
        if values is not None and (not isinstance(values, np.ndarray) or values.dtype.kind != "f"
                                   or not np.all(np.isfinite(values))):
            raise ValueError(f"its {name}")
    histograms = release.noisy_histograms
    if histograms is not None and (histograms.ndim != 2 or histograms.shape[0] != release.domain.d):
        raise ValueError("its histograms do not fit its columns")
