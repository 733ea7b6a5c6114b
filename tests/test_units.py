"""Privacy by unit (--privacy-unit, --max-rows-per-unit): contribution bounding, the unit
sensitivities on extreme units, every engine keeping the same rows, the report, and the output's
synthetic identifiers. The empirical audit of the unit releases is in tests/test_audit.py."""

import math
import warnings

import numpy as np
import pandas as pd
import pytest

from synthdp import SmoothSynthesizer
from synthdp.config import SynthConfig
from synthdp.domain.box import Domain
from synthdp.domain.schema import Schema, closed_level_columns
from synthdp.domain.units import contribution_bins, synthetic_units
from synthdp.errors import SynthDPError
from synthdp.privacy.sensitivity import (
    Neighbours,
    bounded_means_sensitivity,
    grouped_means_sensitivity,
    histogram_sensitivity,
    iteration_sensitivity,
    level_cells_sensitivity,
    moments_sensitivity,
    per_value_sensitivity,
    row_count_sensitivity,
    score_products_sensitivity,
    top_eigenvalue_sensitivity,
    units_sensitivity,
    value_histogram_sensitivity,
)
from synthdp.reader.table import PrivateTable
from synthdp.reader.units import UnitBound
from synthdp.stats.chebyshev import lowest_degree_indices
from synthdp.stats.histograms import CellLayout
from synthdp.stats.mixed_basis import basis_indices, groups_count, one_way_cells
from synthdp.stats.row_sums import SumRequest
from synthdp.stats.scores import ScoreMap, default_clip_norm_sq

K = 3
BOUNDS = {"a": [-5.0, 5.0], "b": [0.0, 10.0]}
SLACK = 1 + 1e-12


def _base(rng: np.random.Generator, units: int = 8) -> pd.DataFrame:
    """Units with 1 to 6 rows each (some above K), values inside the box, rows interleaved."""
    sizes = rng.integers(1, 7, units)
    frame = pd.DataFrame({"person": np.repeat([f"p{u}" for u in range(units)], sizes),
                          "a": rng.uniform(-5, 5, sizes.sum()), "b": rng.uniform(0, 10, sizes.sum())})
    return frame.sample(frac=1.0, random_state=int(rng.integers(1 << 30))).reset_index(drop=True)


def _with_unit(frame: pd.DataFrame, rows: np.ndarray, where: str = "spread") -> pd.DataFrame:
    """``frame`` with one more unit ("new") whose rows are ``rows``, spread through the table or at its end."""
    extra = pd.DataFrame({"person": "new", "a": rows[:, 0], "b": rows[:, 1]})
    if where == "end":
        return pd.concat([frame, extra], ignore_index=True)
    parts = [frame.iloc[positions] for positions in np.array_split(np.arange(len(frame)), len(extra) + 1)]
    pieces = [piece for i, part in enumerate(parts) for piece in ([part, extra.iloc[[i]]] if i < len(extra) else [part])]
    return pd.concat(pieces, ignore_index=True)


def _table(frame: pd.DataFrame, key: int = 7, text=()) -> PrivateTable:
    return PrivateTable(frame, text, unit=UnitBound("person", K, key))


EXTREME_UNITS = [np.tile([5.0, 10.0], (K + 2, 1)), np.tile([-5.0, 0.0], (K, 1)), np.tile([1e6, -1e6], (K + 1, 1)),
                 np.array([[5.0, 10.0], [-5.0, 0.0], [5.0, 0.0], [-5.0, 10.0]])]


def _neighbours():
    """Add-one-unit neighbours: random base tables, plus one unit of extreme (or outside) rows."""
    rng = np.random.default_rng(0)
    for _ in range(3):
        base = _base(rng)
        for rows in EXTREME_UNITS + [rng.uniform([-5, 0], [5, 10], size=(K + 1, 2))]:
            yield base, _with_unit(base, rows)


def test_bounding_keeps_a_random_k_of_each_unit_and_never_changes_another_units_rows():
    """The kept rows: min(m, K) per unit, a choice that varies with the key, and adding a unit (its
    rows anywhere in the table) leaves every other unit's kept rows as they were: the bounded
    tables of neighbours differ by one unit's at most K rows."""
    rng = np.random.default_rng(1)
    base = _base(rng, units=30)
    base["a"] = np.arange(len(base), dtype=float)  # a row's identity
    sizes = base["person"].value_counts()
    kept = _table(base)
    assert kept.row_sums(SumRequest()).n_rows == int(np.minimum(sizes, K).sum())
    rows_of = lambda table: set(table._values[:, 0].tolist())  # noqa: E731
    added = _with_unit(base, np.tile([1e3, 1.0], (K + 4, 1)))
    assert rows_of(_table(added)) - {1e3} == rows_of(kept)
    assert rows_of(_table(base, key=8)) != rows_of(kept)  # another key, another choice


@pytest.mark.parametrize("stage", ["moments", "histograms", "score products", "second moment", "row counts",
                                   "column sums"])
def test_unit_sensitivities_hold_on_extreme_units(stage):
    """Each sensitivity by unit (synthdp.privacy.sensitivity), on the sums the release divides by
    the public n: adding one unit of extreme, outside or random rows (before bounding K + 2) moves
    them by at most the bound at n = 1, and the extreme units attain the moments' and histograms' bounds;
    each single moment moves by at most K (per_value_sensitivity by unit), attained by K corner rows."""
    neighbours = Neighbours(K, "person")
    domain = Domain.from_bounds(BOUNDS, ["a", "b"])
    indices = lowest_degree_indices(2, 5)
    layout = CellLayout(4, (None, np.linspace(-1, 1, 5)), (False, False))
    score_map = ScoreMap(np.tile([2e-6, 0.5 - 2e-6, 0.5 - 2e-6, 2e-6], (2, 1)), default_clip_norm_sq(2))
    request, bound = {
        "moments": (SumRequest(domain, indices), moments_sensitivity(indices, 1.0, neighbours)),
        "histograms": (SumRequest(domain, cell_layout=layout), histogram_sensitivity(2, neighbours)),
        "score products": (SumRequest(domain, score_map=score_map),
                           score_products_sensitivity(1.0, 2, score_map.clip_norm_sq, neighbours)),
        "second moment": (SumRequest(domain, second_moment=True),
                          (math.inf, iteration_sensitivity(2, 2, 1.0, "l2", neighbours))),
        "row counts": (SumRequest(domain), (row_count_sensitivity(neighbours),) * 2),
        # the pca_centre stage: the column means (release_bounded_means at the generic bound)
        "column sums": (SumRequest(domain, column_sums=True), bounded_means_sensitivity(2, 1.0, neighbours)),
    }[stage]
    key = {"moments": "moments", "histograms": "cell_counts", "score products": "score_products",
           "second moment": "second_moment", "row counts": "rows_clipped", "column sums": "column_sums"}[stage]
    worst_l1 = worst_l2 = worst_inf = 0.0
    for first, second in _neighbours():
        change = np.ravel(_table(second).row_sums(request)[key] - _table(first).row_sums(request)[key])
        if stage == "second moment":  # the iterate's change (Delta S) X for an orthonormal X: at most ||Delta S||_2
            worst_l2 = max(worst_l2, np.linalg.norm(change.reshape(2, 2), 2))
            continue
        worst_l1, worst_l2 = max(worst_l1, np.abs(change).sum()), max(worst_l2, np.linalg.norm(change))
        worst_inf = max(worst_inf, np.abs(change).max())
    if stage == "moments":  # one mean of a function in [-1, 1]: K rows move its sum by at most K
        assert worst_inf == pytest.approx(per_value_sensitivity(1.0, neighbours))
        assert worst_inf <= per_value_sensitivity(1.0, neighbours) * SLACK
    assert worst_l1 <= bound[0] * SLACK and worst_l2 <= bound[1] * SLACK
    if stage in ("moments", "histograms", "row counts", "column sums"):  # K rows at a corner (or outside): attained
        assert worst_l1 == pytest.approx(bound[0]) and worst_l2 == pytest.approx(bound[1])
    assert moments_sensitivity(indices, 1.0, neighbours) == bounded_means_sensitivity(len(indices), 1.0, neighbours)


def test_grouped_and_units_sensitivities_hold_and_are_attained():
    """Mixed tables' grouped moments (K G/n, K sqrt(G)/n) on a unit of K extreme rows, and the
    units release (w n/K, h): one unit moves w n/K by at most w and one bin by 1."""
    neighbours = Neighbours(K, "person")
    schema = Schema.from_dict({"columns": {"a": {"type": "continuous", "bounds": [-5, 5]},
                                           "c": {"type": "categorical", "levels": ["p", "q", "r"]}}}, ["a", "c"])
    indices = basis_indices(schema, 2)
    groups = groups_count(schema, indices)
    rng = np.random.default_rng(2)
    base = pd.DataFrame({"person": rng.choice(["x", "y", "z"], 12), "a": rng.uniform(-5, 5, 12),
                         "c": rng.choice(["p", "q"], 12)})
    extra = pd.DataFrame({"person": "new", "a": [5.0] * (K + 1), "c": ["r"] * (K + 1)})
    sums = [_table(frame, text=["c"]).encoded_moments(schema, indices, n=1.0)[0]
            for frame in (base, pd.concat([base, extra], ignore_index=True))]
    change = sums[1] - sums[0]
    l1, l2 = grouped_means_sensitivity(groups, 1.0, neighbours)
    assert np.abs(change).sum() <= l1 * SLACK and np.linalg.norm(change) <= l2 * SLACK
    assert np.abs(change).sum() >= 0.5 * l1  # a corner row: every group moves
    assert value_histogram_sensitivity(neighbours) == K
    weight = 3.0
    assert units_sensitivity(weight) == (weight + 1, math.sqrt(weight**2 + 1))
    bins = contribution_bins(K)
    first = _table(base, text=["c"]).contributions
    second = _table(pd.concat([base, extra], ignore_index=True), text=["c"]).contributions
    assert first is not None and second is not None
    moved = np.concatenate([[weight * (second.n_rows - first.n_rows) / K], second.histogram() - first.histogram()])
    assert len(first.histogram()) == len(bins)
    assert np.abs(moved).sum() == pytest.approx(weight + 1)  # attained: K rows, one bin


def test_the_pairs_test_sensitivity_by_unit_holds_on_extreme_units():
    """top_eigenvalue_sensitivity by unit (K C^2/n): the pairs test's statistic moves by at most that
    when one unit of extreme, outside or random rows is added (the level cells by unit: the test
    below)."""
    from synthdp.privacy.release import pairs_test_statistic

    neighbours = Neighbours(K, "person")
    n = 25.0
    score_map = ScoreMap(np.tile([2e-6, 0.5 - 2e-6, 0.5 - 2e-6, 2e-6], (2, 1)), default_clip_norm_sq(2))
    request = SumRequest(Domain.from_bounds(BOUNDS, ["a", "b"]), score_map=score_map)
    bound = top_eigenvalue_sensitivity(n, score_map.clip_norm_sq, neighbours)
    worst = max(abs(pairs_test_statistic(_table(second).row_sums(request)["score_products"], n, 2)
                    - pairs_test_statistic(_table(first).row_sums(request)["score_products"], n, 2))
                for first, second in _neighbours())
    assert bound[0] == bound[1] == pytest.approx(K * score_map.clip_norm_sq / n)
    assert 0 < worst <= bound[0] * SLACK


def test_bounds_histograms_sensitivity_by_unit_holds_and_is_attained_on_extreme_units():
    """The bounds stage by unit (release_domain: one value histogram per column without bounds,
    value_histogram_sensitivity = K per column): adding a unit of extreme, outside or random
    rows (K + 1 or more before bounding) moves each column's histogram of the reader's
    histogram_columns by at most K in l1; K rows in one bin attain it."""
    neighbours = Neighbours(K, "person")
    request = SumRequest(histogram_columns=(0, 1))  # no domain: the raw values, as the first pass counts them
    units = EXTREME_UNITS + [np.tile([1e-300, -1e300], (K + 3, 1))]
    worst = 0.0
    rng = np.random.default_rng(8)
    for _ in range(3):
        base = _base(rng)
        for rows in units + [rng.uniform([-5, 0], [5, 10], size=(K + 1, 2))]:
            change = _table(_with_unit(base, rows)).row_sums(request)["histograms"] - _table(base).row_sums(request)["histograms"]
            per_column = np.abs(change).sum(axis=1)
            worst = max(worst, float(per_column.max()))
    assert worst == value_histogram_sensitivity(neighbours) == K


def test_levels_other_count_and_level_cells_sensitivities_by_unit_hold_on_extreme_units():
    """Three stages of a mixed table by unit, on a unit of K + 2 rows (bounded to K) added:
    * levels (release_levels): the counts of the values both tables hold move by at most K in l1,
      and at most K values are new, each with count at most K (the threshold's derivation);
      K rows of one shared level, of one new level and of K + 2 new levels attain each;
    * other_count (release_row_count): the rows with an undeclared value move by at most K, attained;
    * level cells (release_level_cells): the one-way cells of the k categorical columns (sums over
      n = 1) move by at most K k (l1) and K sqrt(k) (l2), attained by rows with an indicator in
      every column."""
    neighbours = Neighbours(K, "person")
    schema = Schema.from_dict({"columns": {"a": {"type": "continuous", "bounds": [-5, 5]},
                                           "c": {"type": "categorical", "levels": ["p", "q", "r"]},
                                           "s": {"type": "binary", "levels": ["no", "yes"]}}}, ["a", "c", "s"])
    indices = basis_indices(schema, 2)
    cells = one_way_cells(schema, indices)
    k = len(schema.categorical)
    l1, l2 = level_cells_sensitivity(k, 1.0, neighbours)
    rng = np.random.default_rng(9)
    base = pd.DataFrame({"person": rng.choice(["x", "y", "z", "w"], 16), "a": rng.uniform(-5, 5, 16),
                         "c": rng.choice(["p", "q", "zzz"], 16), "s": rng.choice(["no", "yes"], 16)})
    size = K + 2
    units = [(["q"] * size, ["yes"] * size), (["new"] * size, ["no"] * size),
             ([f"new{i}" for i in range(size)], ["yes"] * size), (["p", "zzz", None, "r", "q"][:size], ["no"] * size)]
    seen = {"shared": 0, "new values": 0, "new count": 0, "other": 0, "cells l1": 0.0, "cells l2": 0.0}
    for levels, binary in units:
        extra = pd.DataFrame({"person": "new", "a": 5.0, "c": levels, "s": binary})
        tables = [_table(frame, text=["c", "s"]) for frame in (base, pd.concat([base, extra], ignore_index=True))]
        before, after = (table.level_counts("c") for table in tables)
        shared = sum(abs(after[value] - count) for value, count in before.items())
        new = [count for value, count in after.items() if value not in before]
        assert shared <= value_histogram_sensitivity(neighbours) and len(new) <= K and max(new, default=0) <= K
        encoded = [table.encoded_moments(schema, indices, n=1.0) for table in tables]
        other = abs(encoded[1][3] - encoded[0][3])
        change = encoded[1][0][cells] - encoded[0][0][cells]
        assert other <= row_count_sensitivity(neighbours)
        assert np.abs(change).sum() <= l1 * SLACK and np.linalg.norm(change) <= l2 * SLACK
        seen = {"shared": max(seen["shared"], shared), "new values": max(seen["new values"], len(new)),
                "new count": max(seen["new count"], max(new, default=0)), "other": max(seen["other"], other),
                "cells l1": max(seen["cells l1"], np.abs(change).sum()),
                "cells l2": max(seen["cells l2"], np.linalg.norm(change))}
    assert seen == pytest.approx({"shared": K, "new values": K, "new count": K, "other": K, "cells l1": l1,
                                  "cells l2": l2})


def test_every_engine_keeps_the_same_rows(tmp_path):
    """In memory, a streamed CSV (chunks of 4 rows), Parquet batches and Dask partitions keep the
    same rows of each unit: the sums are equal."""
    pytest.importorskip("pyarrow")
    rng = np.random.default_rng(3)
    frame = _base(rng, units=12)
    frame["person"] = frame["person"].str.replace("p", "")  # numeric identifiers: read as text everywhere
    csv_path, parquet_path = tmp_path / "t.csv", tmp_path / "t.parquet"
    frame.to_csv(csv_path, index=False)
    frame.assign(person=frame["person"].astype(int)).to_parquet(parquet_path)
    request = SumRequest(Domain.from_bounds(BOUNDS, ["a", "b"]), lowest_degree_indices(2, 5))
    bound = UnitBound("person", K, 11)
    expected = PrivateTable.open(frame, unit=bound).row_sums(request)
    opened = [PrivateTable.open(csv_path, chunk_rows=4, unit=bound), PrivateTable.open(parquet_path, chunk_rows=4, unit=bound)]
    if pytest.importorskip("dask") is not None:
        opened.append(PrivateTable.open(csv_path, engine="dask", chunk_rows=4, unit=bound))
    for table in opened:
        sums = table.row_sums(request)
        assert sums.n_rows == expected.n_rows
        np.testing.assert_allclose(sums["moments"], expected["moments"], rtol=1e-12)


def test_dask_partitions_summed_in_blocks_keep_the_same_rows(monkeypatch):
    """Dask partitions summed in blocks of 4 rows: each unit's running count goes from block to
    block and from partition to partition, so the kept rows, and the sums, are the in-memory ones."""
    dd = pytest.importorskip("dask.dataframe")
    from synthdp.reader import table as table_module

    rng = np.random.default_rng(5)
    frame = _base(rng, units=12)
    request = SumRequest(Domain.from_bounds(BOUNDS, ["a", "b"]), lowest_degree_indices(2, 5))
    bound = UnitBound("person", K, 11)
    expected = PrivateTable.open(frame, unit=bound).row_sums(request)
    blocks = []
    original = table_module.bounded_frame
    monkeypatch.setattr(table_module, "bounded_frame",
                        lambda part, *args: blocks.append(len(part)) or original(part, *args))
    monkeypatch.setattr(table_module, "CHUNK_VALUES", 3 * 4)  # blocks of 4 rows of the 3 columns
    table = PrivateTable.open(dd.from_pandas(frame, npartitions=3), unit=bound)
    sums = table.row_sums(request)
    assert max(blocks) <= 4 and sum(blocks) == len(frame)
    assert sums.n_rows == expected.n_rows < len(frame)
    np.testing.assert_allclose(sums["moments"], expected["moments"], rtol=1e-12)


@pytest.fixture
def subjects():
    rng = np.random.default_rng(4)
    sizes = rng.integers(5, 40, 30)
    n = int(sizes.sum())
    latent = rng.normal(size=n)
    frame = pd.DataFrame({"x": latent, "subject": np.repeat(np.arange(101, 131), sizes),
                          "y": 0.8 * latent + 0.6 * rng.normal(size=n)})
    return frame, {"x": [-4, 4], "y": [-4, 4]}


def test_fit_by_unit_reports_the_relation_and_writes_no_real_identifier(subjects):
    frame, bounds = subjects
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth = SmoothSynthesizer(epsilon=4, delta=1e-8, privacy_unit="subject", max_rows_per_unit=10, seed=3)
        synth.fit(frame, bounds=bounds)
        out = synth.sample()
    report = synth.privacy_report()
    privacy = report["privacy"]
    assert "add or remove all rows of one privacy unit" in privacy["neighbouring"]
    assert privacy["privacy_unit"]["column"] == "subject" and privacy["privacy_unit"]["max_rows_per_unit"] == 10
    assert privacy["epsilon_spent"] <= 4 * (1 + 1e-9)
    stages = {event["stage"]: event for event in privacy["stages"]}
    assert stages["units"]["epsilon"] == pytest.approx(4 * 0.1)
    n = report["parameters"]["n"]
    assert n == round(privacy["privacy_unit"]["rows_noisy"])  # the public n is the noisy count
    assert stages["marginals"]["sensitivity"] == pytest.approx(10 * math.sqrt(2))  # K sqrt(d), Gaussian: l2
    assert list(out.columns) == list(frame.columns) and len(out) == n
    real = set(frame["subject"].astype(str))
    assert not real & set(out["subject"].astype(str))
    assert out["subject"].str.startswith("synthetic-").all()
    sizes = out["subject"].value_counts()
    assert sizes.max() <= 10  # synthetic units keep the bound K


def test_streamed_release_by_unit_equals_in_memory_under_a_seed(subjects, tmp_path):
    frame, bounds = subjects
    path = tmp_path / "s.csv"
    frame.to_csv(path, index=False)
    releases = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for chunk_rows in (None, 50):
            synth = SmoothSynthesizer(epsilon=2, delta=1e-8, privacy_unit="subject", max_rows_per_unit=8, seed=5,
                                      chunk_rows=chunk_rows)
            releases.append(synth.fit(str(path), bounds=bounds)._model().release)
    assert releases[0].plan.n == releases[1].plan.n
    np.testing.assert_allclose(releases[0].noisy_moments, releases[1].noisy_moments, rtol=0, atol=1e-9)


def test_mixed_table_by_unit(subjects):
    frame, _ = subjects
    frame = frame.assign(group=np.where(frame["x"] > 0, "hi", "lo"))
    schema = {"columns": {"x": {"type": "continuous", "bounds": [-4, 4]},
                          "subject": {"type": "categorical", "levels": ["ignored"]},
                          "y": {"type": "continuous", "bounds": [-4, 4]},
                          "group": {"type": "binary", "levels": ["hi", "lo"]}}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth = SmoothSynthesizer(epsilon=4, delta=1e-8, privacy_unit="subject", max_rows_per_unit=10, seed=3)
        out = synth.fit(frame, schema=schema).sample()
    assert list(out.columns) == list(frame.columns)
    assert set(out["group"]) <= {"hi", "lo"} and out["subject"].str.startswith("synthetic-").all()
    assert "units" in {event["stage"] for event in synth.privacy_report()["privacy"]["stages"]}


def test_unit_options_and_bad_unit_columns_give_one_line_errors(subjects):
    frame, bounds = subjects
    with pytest.raises(SynthDPError, match="max_rows_per_unit"):
        SynthConfig(privacy_unit="subject")
    with pytest.raises(SynthDPError, match="needs privacy_unit"):
        SynthConfig(max_rows_per_unit=5)
    with pytest.raises(SynthDPError, match="max_rows_per_unit must be"):
        SynthConfig(privacy_unit="subject", max_rows_per_unit=0)
    with pytest.raises(SynthDPError, match="'person' is not a column"):
        SmoothSynthesizer(privacy_unit="person", max_rows_per_unit=5).fit(frame, bounds=bounds)
    missing = frame.astype({"subject": object})
    missing.loc[3, "subject"] = None
    with pytest.raises(SynthDPError, match="'subject' has missing values") as error:
        SmoothSynthesizer(privacy_unit="subject", max_rows_per_unit=5).fit(missing, bounds=bounds)
    assert "\n" not in str(error.value) and "101" not in str(error.value)


def test_synthetic_units_follow_the_noisy_histogram():
    """Post-processing: rows per synthetic unit within the bins that have mass (here only 8-10)."""
    rng = np.random.default_rng(6)
    bins = contribution_bins(10)  # 1, 2-3, 4-7, 8-10
    labels = synthetic_units(500, np.array([-3.0, 0.0, -1.0, 40.0]), 10, rng)
    assert len(labels) == 500 and len(bins) == 4
    sizes = labels.value_counts()
    assert sizes.max() <= 10 and (sizes >= 8).sum() >= len(sizes) - 1  # the last unit may be cut short


def test_dp_bounds_and_level_discovery_by_unit_spend_their_budget_at_k_fold_sensitivity(subjects):
    """--bounds-share and --levels-share by unit: their stages are released with the K-fold
    count sensitivity (and the levels' threshold K + (K/eps) ln(K/delta)); the run completes."""
    frame, bounds = subjects
    k = 10
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth = SmoothSynthesizer(epsilon=4, delta=1e-8, privacy_unit="subject", max_rows_per_unit=k, bounds_share=0.1,
                                  seed=3).fit(frame, bounds={"x": bounds["x"]})
    stages = {event["stage"]: event for event in synth.privacy_report()["privacy"]["stages"]}
    assert stages["bounds"]["sensitivity"] == k and stages["bounds"]["noise_scale"] == pytest.approx(k / (4 * 0.9 * 0.1))  # epsilon after the units stage
    mixed = frame.assign(group=np.where(frame["x"] > 0, "hi", "lo"))
    schema = {"columns": {"x": {"type": "continuous", "bounds": [-4, 4]}, "y": {"type": "continuous", "bounds": [-4, 4]},
                          "group": {"type": "categorical", "levels": "discover"}}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth = SmoothSynthesizer(epsilon=8, delta=1e-6, privacy_unit="subject", max_rows_per_unit=k, levels_share=0.2,
                                  seed=3).fit(mixed, schema=schema)
    levels = synth.privacy_report()["privacy"]["stages"]
    event = next(event for event in levels if event["stage"] == "levels")
    scale = k / (8 * 0.9 * 0.2)  # epsilon after the units stage, times the levels share, one column
    assert event["sensitivity"] == k and event["noise_scale"] == pytest.approx(scale)
    threshold = k + scale * math.log(k / (1e-6 * 0.2))
    assert f"{threshold:.3g}" in event["released"]


def test_cli_generate_and_evaluate_by_unit(subjects, tmp_path, capsys):
    """The command line: generate with --privacy-unit (the bounds file may name the unit column),
    then evaluate with --privacy-unit, which compares people and rows per person and scores the rest."""
    import json

    from synthdp.cli import main

    frame, bounds = subjects
    data, out, bounds_path = tmp_path / "visits.csv", tmp_path / "out.csv", tmp_path / "bounds.json"
    frame.to_csv(data, index=False)
    bounds_path.write_text(json.dumps({**bounds, "subject": [0, 1000]}))
    assert main(["generate", str(data), "-o", str(out), "--bounds", str(bounds_path), "--epsilon", "4", "--delta",
                 "1e-8", "--privacy-unit", "subject", "--max-rows-per-unit", "10", "--seed", "1", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["evaluate", "--real", str(data), "--synth", str(out), "--bounds", str(bounds_path), "--queries", "20",
                 "--no-sdmetrics", "--privacy-unit", "subject", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["real_privacy_unit_counts"]["real"]["units"] == 30 and report["differentially_private"] is False
    assert report["real_privacy_unit_counts"]["synthetic"]["rows_per_unit_max"] <= 10
    page = tmp_path / "page.html"  # the page says what the text and the JSON say of the units
    assert main(["evaluate", "--real", str(data), "--synth", str(out), "--bounds", str(bounds_path), "--queries", "20",
                 "--no-sdmetrics", "--privacy-unit", "subject", "--html", str(page)]) == 0
    assert "Privacy unit <code><bdi>subject</bdi></code>" in page.read_text(encoding="utf-8")
    assert "rows per unit, max" in page.read_text(encoding="utf-8")
    assert main(["evaluate", "--real", str(data), "--synth", str(out), "--bounds", str(bounds_path), "--queries", "20",
                 "--no-sdmetrics", "--privacy-unit", "person"]) != 0
    assert "no column 'person'" in capsys.readouterr().err


def test_a_row_count_drowned_in_its_noise_is_announced():
    """By unit, n is the noisy count: where its noise (public: sd sqrt(2) (w + 1) K / (w epsilon_units)
    rows) is more than half of it, the fit warns with the count and the sd; a large table does not."""
    rng = np.random.default_rng(3)
    small = pd.DataFrame({"person": np.repeat([f"p{i}" for i in range(20)], 10), "x": rng.uniform(0, 1, 200)})
    with pytest.warns(UserWarning, match="released row count .* noise of sd"):
        SmoothSynthesizer(epsilon=1.0, seed=1, privacy_unit="person", max_rows_per_unit=10).fit(
            small, bounds={"x": [0, 1]}, synthesize=False)
    large = pd.DataFrame({"person": np.repeat([f"p{i}" for i in range(5000)], 2), "x": rng.uniform(0, 1, 10_000)})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        SmoothSynthesizer(epsilon=1.0, seed=1, privacy_unit="person", max_rows_per_unit=2).fit(
            large, bounds={"x": [0, 1]}, synthesize=False)
    assert not any("released row count" in str(warning.message) for warning in caught)


def _every_engine(frame: pd.DataFrame, folder) -> list[tuple]:
    """``frame`` as each engine reads it, (data, engine, chunk_rows): in memory, a CSV file whole and
    in chunks, a Parquet file in chunks, and Dask on both files."""
    pytest.importorskip("dask.dataframe")
    pytest.importorskip("pyarrow")
    frame.to_csv(folder / "t.csv", index=False)
    frame.to_parquet(folder / "t.parquet", row_group_size=40)
    return [(frame, "numpy", None), (folder / "t.csv", "numpy", None), (folder / "t.csv", "numpy", 30),
            (folder / "t.parquet", "numpy", 30), (folder / "t.csv", "dask", 30), (folder / "t.parquet", "dask", None)]


BAD_CELLS = {  # name: (how the file is spoiled, the most rows per unit, the error)
    "text": (lambda frame: frame.astype({"a": str}).assign(a=lambda f: f["a"].where(f.index != 50, "7.5.1")), K,
             "column 'a' is not numeric"),
    "missing": (lambda frame: frame.assign(b=frame["b"].where(frame.index != 50)), K, "column 'b' has missing"),
    "one kept row": (lambda frame: frame.assign(person="p0"), 1, "the input needs at least 2 rows"),
    "header only": (lambda frame: frame.iloc[:0], K, "the input has no data rows"),  # in memory: "changed between"
}


@pytest.mark.parametrize("bad", list(BAD_CELLS))
def test_a_bad_file_fails_before_the_units_count_is_released_in_every_engine(tmp_path, bad):
    """By unit, the streamed and Dask engines released the units' noisy count (and a budget file was
    charged for it) before a later pass checked the cells; the in-memory table checked them first.
    Every engine now checks every cell in the pass that counts the rows per unit: the same one-line
    error before any release, and the budget file keeps no release."""
    spoil, max_rows, expected = BAD_CELLS[bad]
    frame = spoil(_base(np.random.default_rng(4), units=40))
    budget = tmp_path / "t.budget.json"
    for data, engine, chunk_rows in _every_engine(frame, tmp_path):
        synth = SmoothSynthesizer(epsilon=1.0, seed=1, privacy_unit="person", max_rows_per_unit=max_rows, engine=engine,
                                  chunk_rows=chunk_rows)
        with warnings.catch_warnings(), pytest.raises(SynthDPError, match=expected) as error:
            warnings.simplefilter("ignore")
            synth.fit(data, bounds=BOUNDS, budget_file=budget, lifetime_epsilon=100.0)
        assert "\n" not in str(error.value) and "7.5.1" not in str(error.value)
        assert not budget.exists(), (engine, chunk_rows)  # a first use that released nothing leaves no file


SCHEMA = {"columns": {"a": {"type": "continuous", "bounds": [-5, 5]}, "b": {"type": "continuous", "bounds": [0, 10]},
                      "c": {"type": "binary", "levels": ["x", "y"]},
                      "g": {"type": "categorical", "levels": ["u", "v", "w"], "other": False}}}
BAD_LEVELS = {  # name: (how the schema or the file is spoiled, the error)
    "binary": (lambda schema, frame: (schema, frame.assign(c=frame["c"].where(frame.index != 50, "zz"))),
               "binary column 'c' has a value outside its 2 levels"),
    "no other": (lambda schema, frame: (schema, frame.assign(g=frame["g"].where(frame.index != 50, "zz"))),
                 "column 'g' has a value outside its levels"),
    "missing level": (lambda schema, frame: (schema, frame.assign(g=frame["g"].where(frame.index != 50))),
                      "column 'g' has a value outside its levels .or a missing value."),
    "unknown column": (lambda schema, frame: ({"columns": {**schema["columns"], "zz": {"type": "continuous"}}},
                                              frame), "schema names unknown column 'zz'"),
    "no entry": (lambda schema, frame: ({"columns": {k: v for k, v in schema["columns"].items() if k != "b"}},
                                        frame), "schema has no entry for column 'b'"),
}


@pytest.mark.parametrize("bad", list(BAD_LEVELS))
def test_a_bad_level_or_schema_fails_before_the_units_count_is_released_in_every_engine(tmp_path, bad):
    """By unit, a binary (or ``"other": false``) column's value outside its levels was found when the
    kept rows were encoded, after the units' noisy count (a budget file was charged for the failed run,
    and a bad value in a row the bound left out passed); a schema naming other columns failed after
    that count too. The counting pass now checks those levels in every row, and the schema's columns
    are checked against the header before any release: one line, and the budget file keeps no release."""
    rng = np.random.default_rng(5)
    base = _base(rng, units=40)
    base = base.assign(c=rng.choice(["x", "y"], len(base)), g=rng.choice(["u", "v", "w"], len(base)))
    schema, frame = BAD_LEVELS[bad][0](SCHEMA, base)
    budget = tmp_path / "t.budget.json"
    for data, engine, chunk_rows in _every_engine(frame, tmp_path):
        synth = SmoothSynthesizer(epsilon=1.0, delta=1e-8, seed=1, privacy_unit="person", max_rows_per_unit=K,
                                  engine=engine, chunk_rows=chunk_rows)
        with warnings.catch_warnings(), pytest.raises(SynthDPError, match=BAD_LEVELS[bad][1]) as error:
            warnings.simplefilter("ignore")
            synth.fit(data, schema=schema, budget_file=budget, lifetime_epsilon=100.0, lifetime_delta=1e-6)
        assert "\n" not in str(error.value) and "zz'" not in str(error.value).replace("'zz'", "")
        assert not budget.exists(), (engine, chunk_rows)  # a first use that released nothing leaves no file


BAD_PUBLIC = {  # name: (fit's keywords, the data as a CSV file read whole (False) or streamed (True), the error)
    "bounds name another column": ({"bounds": {**BOUNDS, "zz": [0, 1]}}, False, "bounds name unknown column 'zz'"),
    "bounds leave one out": ({"bounds": {"a": BOUNDS["a"]}}, False, "no bounds for column 'b'"),
    "bounds reversed": ({"bounds": {**BOUNDS, "a": [5, -5]}}, False, "bounds for column 'a' need lo < hi"),
    "schema bounds reversed": ({"schema": {"columns": {**SCHEMA["columns"], "a": {"type": "continuous",
                                                                                  "bounds": [5, -5]}}}},
                               False, "bounds for column 'a' need lo < hi"),
    "schema decimals": ({"schema": {"columns": {**SCHEMA["columns"], "b": {"type": "continuous", "bounds": [0, 10],
                                                                           "decimals": -1}}}},
                        False, "column 'b' has \"decimals\""),
    "schema without bounds": ({"schema": {"columns": {**SCHEMA["columns"], "a": {"type": "continuous"}}}},
                              False, "no bounds for column 'a'"),
    "discovery without a share": ({"schema": {"columns": {**SCHEMA["columns"],
                                                          "g": {"type": "categorical", "levels": "discover"}}}},
                                  False, "column 'g' asks for DP level discovery"),
    "schema object of other columns": ({"schema": Schema.from_dict(
        {"columns": {k: v for k, v in SCHEMA["columns"].items() if k != "b"}}, ["a", "c", "g"])},
        False, "the schema's columns do not match the table's"),
    "discovery streamed": ({"schema": {"columns": {**SCHEMA["columns"],
                                                   "g": {"type": "categorical", "levels": "discover"}}},
                            "levels_share": 0.1}, True, "DP discovery of levels reads the table in memory"),
}


@pytest.mark.parametrize("bad", list(BAD_PUBLIC))
def test_bad_public_inputs_fail_before_the_units_count_is_released(tmp_path, bad):
    """By unit, what the bounds or the schema alone refuse (a column the header lacks or one without
    bounds, reversed bounds, bad decimals, a discovery without its share or on a streamed table) was
    found after the units' noisy count: the budget file was charged for the failed run. It is checked
    before any release now, as the schema's column names are."""
    rng = np.random.default_rng(5)
    frame = _base(rng, units=40)
    frame = frame.assign(c=rng.choice(["x", "y"], len(frame)), g=rng.choice(["u", "v", "w"], len(frame)))
    keywords, streamed, expected = BAD_PUBLIC[bad]
    if "bounds" in keywords:
        frame = frame.drop(columns=["c", "g"])
    frame.to_csv(tmp_path / "t.csv", index=False)
    budget = tmp_path / "t.budget.json"
    fit_options = {key: value for key, value in keywords.items() if key in ("bounds", "schema")}
    synth = SmoothSynthesizer(epsilon=1.0, delta=1e-8, seed=1, privacy_unit="person", max_rows_per_unit=K,
                              chunk_rows=30 if streamed else None, levels_share=keywords.get("levels_share", 0.0))
    with warnings.catch_warnings(), pytest.raises(SynthDPError, match=expected) as error:
        warnings.simplefilter("ignore")
        synth.fit(tmp_path / "t.csv", **fit_options, budget_file=budget, lifetime_epsilon=100.0, lifetime_delta=1e-6)
    assert "\n" not in str(error.value)
    assert not budget.exists()  # a first use that released nothing leaves no file


def test_a_bad_level_is_refused_whichever_rows_the_bound_keeps():
    """A value outside a binary column's levels, in a row the bound may leave out, is refused under
    every key (it passed where the row was left out); an open categorical column's is not an error."""
    frame = pd.DataFrame({"person": ["p0", "p0", "p1", "p1", "p2"], "a": [1.0, 2.0, 2.0, 3.0, 4.0],
                          "c": ["x", "maybe", "y", "x", "y"]})
    closed = Schema.from_dict({"columns": {"a": {"type": "continuous", "bounds": [0, 5]},
                                           "c": {"type": "binary", "levels": ["x", "y"]}}}, ["a", "c"])
    opened = Schema.from_dict({"columns": {"a": {"type": "continuous", "bounds": [0, 5]},
                                           "c": {"type": "categorical", "levels": ["x", "y"]}}}, ["a", "c"])
    for key in range(12):  # K = 1: the bad cell's row is left out under some keys
        with pytest.raises(SynthDPError, match="binary column 'c' has a value outside"):
            PrivateTable(frame, ["c"], unit=UnitBound("person", 1, key, closed_level_columns(closed)))
        assert closed_level_columns(opened) == ()
        PrivateTable(frame, ["c"], unit=UnitBound("person", 1, key, closed_level_columns(opened)))


def test_a_bad_cell_is_refused_whichever_rows_the_bound_keeps():
    """Every row's cells are checked, those the bound leaves out too: whether a file is refused no longer
    depends on the run's random choice of each unit's rows (a bad cell in a row left out passed)."""
    frame = pd.DataFrame({"person": ["p0", "p0", "p1", "p1", "p2"], "a": [1.0, np.nan, 2.0, 3.0, 4.0],
                          "b": [1.0, 2.0, 3.0, 4.0, 5.0]})
    for key in range(12):  # K = 1: the missing cell's row is left out under some keys
        with pytest.raises(SynthDPError, match="column 'a' has missing"):
            PrivateTable(frame, unit=UnitBound("person", 1, key))


@pytest.mark.parametrize("by_unit, discover", [(True, False), (False, True), (True, True)])
def test_an_epsilon_the_first_stages_leave_below_the_least_is_refused_before_any_release(tmp_path, by_unit, discover):
    """At epsilon = 1e-6, the least accepted, the units' count (by unit) and level discovery each left the
    rest less (9e-7 at units_share 0.1), and the config holding it failed as a user's ("epsilon must be
    between 1e-06 and 1e+06") after that stage was released and charged to the budget file. Refused
    before the first release now, naming --epsilon."""
    rng = np.random.default_rng(5)
    frame = _base(rng, units=40)
    frame = frame.assign(g=rng.choice(["u", "v", "w"], len(frame)))
    (frame if by_unit else frame.drop(columns="person")).to_csv(tmp_path / "t.csv", index=False)
    budget = tmp_path / "t.budget.json"
    schema = {"columns": {"a": SCHEMA["columns"]["a"], "b": SCHEMA["columns"]["b"],
                          "g": {"type": "categorical", "levels": "discover" if discover else ["u", "v", "w"]}}}
    unit = {"privacy_unit": "person", "max_rows_per_unit": K} if by_unit else {}
    synth = SmoothSynthesizer(epsilon=1e-6, delta=1e-8, seed=1, levels_share=0.1 if discover else 0.0, **unit)
    refused = r"epsilon \(--epsilon\) 1e-06 leaves .*raise --epsilon"
    with warnings.catch_warnings(), pytest.raises(SynthDPError, match=refused) as error:
        warnings.simplefilter("ignore")
        synth.fit(tmp_path / "t.csv", schema=schema, budget_file=budget, lifetime_epsilon=100.0, lifetime_delta=1e-6)
    assert "\n" not in str(error.value)
    assert not budget.exists()  # a first use that released nothing leaves no file
