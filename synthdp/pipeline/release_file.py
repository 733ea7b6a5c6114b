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
(:func:`release_from` raises ``ValueError``, which the model file's reader makes one line). A careful
editor makes every checksum again, and copies rerun the plan's sizes as they are, so reading also checks
that each field is of its declared type, that the plan is the one the configuration, the columns and the
file's rows give (its n, sizes, candidates, bins, basis, budget and the fields derived from them), and
that the arrays fit the plan and the columns: a file cannot set a size that its fit would not have had.
The fields that a rule's constant sets beside the configuration (:data:`RULE_DERIVED`: whether the moments
are within their noise limit, the value cells' limit, the pairs' noise for the report; and a mixed table's
tilt candidates) are checked within bounds instead of against this synthdp's rules, so that a file written
before a later synthdp tunes one of those limits still makes its copies as its release was made.
"""

from __future__ import annotations

import dataclasses
import math
import re
import types
import typing
from collections.abc import Mapping
from typing import Any

import numpy as np

from synthdp.config import SynthConfig
from synthdp.domain.box import Domain
from synthdp.domain.schema import Schema
from synthdp.domain.units import contribution_bins
from synthdp.pipeline.plan import (
    DERIVED_FIELDS,
    MARGINAL_BINS_RANGE,
    MAX_MOMENTS,
    PairsTest,
    Plan,
    TheoryParameters,
    capped_power,
    check_lp_memory,
    check_plan_options,
    mixed_candidate_counts,
    theory_parameters,
    with_derived,
)
from synthdp.privacy.budget import Budget, StageBudget
from synthdp.privacy.sensitivity import ROWS, Neighbours
from synthdp.released import ClassHistograms, PairsTestResult, PrivatePCA, Release, SelectedPairs, UnitsRelease
from synthdp.stats.histograms import MAX_VALUE_CELLS, CellLayout

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
                 schema: Schema | None, whole: bool = True, rows: int | None = None) -> tuple[Release, SynthConfig]:
    """The release and configuration of a model file's release ``document`` and its ``arrays``, with
    the file's ``domain`` and ``schema``. ``ValueError`` (or the ``SynthDPError`` of a configuration
    the options refuse) where the document is not one :func:`release_document` writes or does not fit
    the columns, or (``rows``: the file's rows, the fit's n) the plan's n. ``whole`` False: a check
    only, which leaves a matrix held by its entries as a read-only view of zeros of its shape (no
    memory), where True makes it whole."""
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
    _check(release, config, rows)
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
                and np.all((self.columns >= 0) & (self.columns < expected[1]))
                and np.all((self.values >= 0) & (self.values <= MAX_MIXED_DEGREE))):
            raise ValueError("a sparse matrix that does not fit the moments and the columns")
        if not dense:
            return np.broadcast_to(np.zeros((), dtype=self.values.dtype), expected)
        matrix = np.zeros(expected, dtype=self.values.dtype)
        matrix[self.rows, self.columns] = self.values
        return matrix


#: Derived plan fields that a rule's constant sets beside the plan's own fields (:func:`synthdp.pipeline.plan.with_derived`):
#: a file keeps the values of the synthdp that wrote it, checked within bounds, not against this one's rules.
RULE_DERIVED = ("moments_within_limit", "value_cells", "pair_noise_at_share", "pair_noise_at_default")
# (a mixed table's tilt candidates, also a rule's, are checked the same way in _check_plan)
#: A mixed table's basis: a numeric coordinate's degree is at most 2, an indicator's 1
#: (:func:`synthdp.stats.mixed_basis.basis_indices`).
MAX_MIXED_DEGREE = 2
COMPOSITIONS = ("gdp", "zcdp", "basic")


def _check(release: Release, config: SynthConfig, rows: int | None = None) -> None:
    """The release's fields are of their kinds, its plan is the one its configuration, its columns and
    ``rows`` (the fit's n) give, and its arrays fit one another, its plan and its columns and hold finite
    numbers: a copy reruns the plan's sizes as they are, so a size the file alone sets is refused here."""
    _check_kinds(release)
    plan = release.plan
    coordinates = release.domain.d if release.schema is None else release.schema.n_coordinates
    indices, moments = np.asarray(release.basis_indices), np.asarray(release.noisy_moments)
    if indices.ndim != 2 or indices.shape[1] != coordinates or moments.shape != (len(indices),) \
            or np.asarray(release.moment_noise_sd).shape != (len(indices),):
        raise ValueError("its moments do not fit its columns")
    for name in ("noisy_moments", "moment_noise_sd", "noisy_histograms", "noisy_scores"):
        values = getattr(release, name)
        if values is not None and not _finite_floats(values):
            raise ValueError(f"its {name}")
    _check_plan(plan, config, release, coordinates, rows)
    _check_arrays(release)


def _check_kinds(value: Any, where: str = "") -> None:
    """Each field of ``value`` (a release, or a dataclass of :data:`KINDS` in it) is of its declared
    type: an int where an int belongs (not a bool or a float), a kind of its own class, an array."""
    hints = _hints(type(value))
    for field in dataclasses.fields(value):
        if field.name in HELD_ELSEWHERE and type(value) is Release:
            continue
        item = getattr(value, field.name)
        if not _fits(item, hints[field.name]):
            raise ValueError(f"its {where}{field.name} is not of its kind")
        if dataclasses.is_dataclass(item):
            _check_kinds(item, f"{where}{field.name}.")


def _hints(kind: type) -> dict[str, Any]:
    """The declared types of ``kind``'s fields (the release's plan: a name only where it is declared), once."""
    if kind not in _HINTS:
        _HINTS[kind] = typing.get_type_hints(kind, localns={"Plan": Plan, "np": np})
    return _HINTS[kind]


_HINTS: dict[type, dict[str, Any]] = {}


def _fits(value: Any, hint: Any) -> bool:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_fits(value, part) for part in typing.get_args(hint))
    if origin is tuple:
        parts = typing.get_args(hint)
        if not isinstance(value, tuple):
            return False
        if len(parts) == 2 and parts[1] is Ellipsis:
            return all(_fits(item, parts[0]) for item in value)
        return len(parts) == len(value) and all(_fits(item, part) for item, part in zip(value, parts))
    if hint is type(None):
        return value is None
    if hint is bool:
        return type(value) is bool
    if hint is int:
        return type(value) is int
    if hint is float:
        return type(value) in (int, float)
    if hint is str:
        return type(value) is str
    if hint is np.ndarray:
        return isinstance(value, np.ndarray) and not value.dtype.hasobject
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return type(value) is hint
    return True


def _finite(*values: float, low: float = 0.0) -> bool:
    return all(math.isfinite(value) and value >= low for value in values)


def _finite_floats(*arrays: Any) -> bool:
    """Every one of ``arrays`` an array of floats, each finite."""
    return all(isinstance(array, np.ndarray) and array.dtype.kind == "f" and bool(np.all(np.isfinite(array)))
               for array in arrays)


def _check_budget(budget: Budget, config: SynthConfig) -> None:
    shares = [share for _, share in budget.shares]
    # level discovery spends a share of delta before the plan is made (the rest: the plan's)
    if not (budget.composition in COMPOSITIONS and _finite(budget.delta) and budget.delta <= config.delta
            and _finite(budget.bounds, budget.clip_count, *shares) and _finite(budget.remaining_epsilon)
            and 0 < budget.remaining_epsilon and budget.bounds + budget.clip_count + budget.remaining_epsilon
            <= config.epsilon * (1 + 1e-9) and all(0 < share <= 1 for share in shares)
            and sum(shares) <= 1 + 1e-9 and len(dict(budget.shares)) == len(shares)):
        raise ValueError("its plan's budget is not one of its configuration")


def _check_plan(plan: Plan, config: SynthConfig, release: Release, coordinates: int, rows: int | None) -> None:
    """``plan`` is the one :func:`synthdp.pipeline.plan.make_plan` makes of ``config``, the columns and n,
    in every size a copy reads (its budget's split as the configuration allows it)."""
    def refuse(what: str) -> ValueError:
        return ValueError(f"its plan ({what}) is not the one its configuration and columns give")

    mixed = release.schema is not None
    if plan.n < 2 or (rows is not None and plan.n != rows):
        raise refuse("n")
    if plan.d != coordinates:
        raise refuse("d")
    if (plan.mode, plan.smoothness, plan.noise) != (config.mode, config.smoothness, config.noise_kind):
        raise refuse("mode, smoothness or noise")
    unit = ROWS if config.privacy_unit is None else Neighbours(config.max_rows_per_unit, config.privacy_unit)
    if plan.neighbours != unit:
        raise refuse("neighbouring relation")
    sample_size = max(2, plan.n // unit.k) if unit.by_unit else plan.n
    _check_budget(plan.budget, config)
    if plan.theory != theory_parameters(sample_size, plan.d, config.smoothness, plan.budget.delta):
        raise refuse("theory")
    if plan.candidates != ("mixed" if mixed else config.candidate_kind):
        raise refuse("candidates")
    if plan.pairs_test is not None:
        _check_budget(plan.pairs_test.without_pairs, config)
        if not (_finite(plan.pairs_test.share) and plan.pairs_test.share < 1):
            raise refuse("pairs test")
    numeric = release.schema.d_numeric if release.schema is not None else plan.d
    pairs = numeric * (numeric - 1) // 2
    if not (0 <= plan.skipped_pairs <= pairs and 0 <= plan.selected_pairs <= pairs and plan.apart_levels >= 0
            and plan.numeric_columns == (numeric if mixed else 0) and _finite(plan.pairs_clip_norm_sq)):
        raise refuse("sizes")
    if not 1 <= plan.n_basis <= MAX_MOMENTS or plan.n_basis != len(release.basis_indices):
        raise refuse("n_basis")
    if mixed:
        # the l1 fit's count is the configuration's; the tilt's, where the configuration asks for one, a rule's
        # (TILT_CANDIDATES_PER_MOMENT per moment, which a later synthdp may tune): at least the l1 fit's, and
        # within the LP's memory bound, as the configuration's own plan is (check_plan_options)
        expected, tilt = mixed_candidate_counts(config, plan.n_basis, True)
        tilts = plan.tilt_candidates
        if plan.n_candidates != expected or (tilts > 0) != (tilt > 0) or 0 < tilts < plan.n_candidates \
                or max(numeric, 1) * tilts > config.max_lp_entries:
            raise refuse("candidates' count")
        check_plan_options(config, plan.d, mixed_basis=(plan.n_basis, 0), numeric_columns=numeric)
    else:
        expected = capped_power(plan.theory.N, plan.d) if plan.candidates == "grid" else config.n_candidates
        if (plan.n_candidates, plan.tilt_candidates) != (expected, 0):
            raise refuse("candidates' count")
        check_lp_memory(config, plan.n_basis, plan.n_candidates, plan.d, plan.candidates)
        # the basis's size and degrees, not its rows one by one: the rows a plan picks vary with its options
        # (pair products skipped or every moment of degree <= 2 added), and only the sizes bound a copy's work
        basis = np.asarray(release.basis_indices)
        if plan.mode == "exact":  # t^d - 1 moments, each degree below t
            if plan.n_basis != capped_power(plan.theory.t, plan.d) - 1 or (basis.size and basis.max() >= plan.theory.t):
                raise refuse("basis")
        elif basis.size and (basis.min() < 0 or basis.sum(axis=1).max() > max(plan.n_basis, 2)):
            raise refuse("basis")  # lowest degrees first: a moment of total degree k comes after k of lower degree
    marginals = plan.budget.share("marginals") > 0
    low, high = MARGINAL_BINS_RANGE
    if marginals and not (plan.marginal_bins == config.marginal_bins if config.marginal_bins
                          else low <= plan.marginal_bins <= high):
        raise refuse("marginal_bins")
    if not marginals and plan.marginal_bins != 0:
        raise refuse("marginal_bins")
    # the derived fields that follow from the plan's own fields alone are checked equal; those that a rule's
    # constant also sets (MOMENT_NOISE_LIMIT, the value cells' rule, the default pairs' share: limits a later
    # synthdp may tune) only within what any rule gives, so that a file is read as it was released
    derived = with_derived(plan)
    if any(getattr(derived, name) != getattr(plan, name) for name in DERIVED_FIELDS if name not in RULE_DERIVED):
        raise refuse("derived sizes")
    if not (0 <= plan.value_cells <= MAX_VALUE_CELLS and _finite(plan.pair_noise_at_share, plan.pair_noise_at_default)
            and (plan.value_cells == 0) == (not marginals)):
        raise refuse("derived sizes")


def _check_arrays(release: Release) -> None:
    """The release's arrays other than the moments fit its plan and its columns."""
    plan, d = release.plan, release.domain.d
    indices = np.asarray(release.basis_indices)
    if indices.dtype.kind not in "iu" or (release.schema is not None and indices.size
                                          and not (0 <= indices.min() and indices.max() <= MAX_MIXED_DEGREE)):
        raise ValueError("its basis")
    if not _finite(release.moment_noise_l1, release.histogram_noise_sd, release.scores_noise_sd) \
            or not np.all(np.asarray(release.moment_noise_sd) >= 0):
        raise ValueError("its noise scales")
    for count in (release.noisy_rows_clipped, release.noisy_rows_other):
        if count is not None and not math.isfinite(count):
            raise ValueError("its counts")
    histograms, layout = release.noisy_histograms, release.cell_layout
    if histograms is not None and (histograms.ndim != 2 or histograms.shape[0] != d):
        raise ValueError("its histograms do not fit its columns")
    if layout is not None:
        if not (layout.n_bins == plan.marginal_bins >= 1 and len(layout.values) == len(layout.missing) == d
                and all(values is None or (values.ndim == 1 and values.dtype.kind == "f" and 1 <= len(values)
                                           <= max(plan.value_cells, 1) and np.all(np.abs(values) <= 1))
                        for values in layout.values)):
            raise ValueError("its cell layout does not fit its plan and columns")
        if histograms is not None and histograms.shape[1] != layout.n_cells:
            raise ValueError("its histograms do not fit its cell layout")
    elif histograms is not None and histograms.shape[1] != plan.marginal_bins + 2:
        raise ValueError("its histograms do not fit its plan")
    scores = release.noisy_scores
    if scores is not None and scores.shape not in ((d * (d + 1) // 2,), (d * (d + 3) // 2,)):
        raise ValueError("its scores do not fit its columns")
    pca = release.pca
    if pca is not None:
        k = pca.eigenvalues.shape[0] if pca.eigenvalues.ndim == 1 else -1
        if not (pca.center.shape == (d,) and pca.axes.shape == (d, k) and 1 <= k <= d
                and _finite_floats(pca.center, pca.axes, pca.eigenvalues)
                and np.all(np.abs(pca.center) <= 1) and np.all(pca.eigenvalues >= 0)):  # as released (PrivatePCA)
            raise ValueError("its private PCA does not fit its columns")
    selected = release.selected_pairs
    if selected is not None:
        pairs = selected.pairs
        if not (pairs.ndim == 2 and pairs.shape[1] == 2 and pairs.dtype.kind in "iu"
                and len(pairs) <= plan.selected_pairs and np.all((0 <= pairs[:, 0]) & (pairs[:, 0] < pairs[:, 1])
                                                                 & (pairs[:, 1] < d))
                and selected.noisy_means.shape == (len(pairs),) and _finite_floats(selected.noisy_means)
                and _finite(selected.noise_sd)):
            raise ValueError("its selected pairs do not fit its columns")
    classes = release.class_histograms
    if classes is not None:
        levels = {column.name: len(column.all_levels) for column in release.schema.categorical} \
            if release.schema is not None else {}
        columns = classes.columns
        width = histograms.shape[1] if histograms is not None else -1
        if not (classes.column in levels and columns.ndim == 1 and columns.dtype.kind in "iu"
                and np.all((0 <= columns) & (columns < d)) and len(np.unique(columns)) == len(columns)
                and classes.noisy_counts.shape == (len(columns), levels[classes.column], width)
                and classes.level_rows.shape == (levels[classes.column],) and _finite(classes.noise_sd)
                and _finite_floats(classes.noisy_counts, classes.level_rows)):
            raise ValueError("its class histograms do not fit its columns")
    units = release.units
    if units is not None and not (
            1 <= units.max_rows and _finite_floats(units.noisy_contributions)
            and units.noisy_contributions.shape == (len(contribution_bins(units.max_rows)),)
            and math.isfinite(units.noisy_rows)):
        raise ValueError("its units do not fit their max_rows")
    test = release.pairs_test
    if test is not None and not all(math.isfinite(value) for value in (test.statistic, test.threshold, test.noise_sd,
                                                                        test.offset)):
        raise ValueError("its pairs test")
