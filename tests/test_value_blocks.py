"""Value blocks: the 2-way tables of an integer column against the categorical columns.

An integer column of at most MAX_VALUE_BLOCK values in a table with binary or categorical
columns gets an internal categorical column of its values (``synthdp.domain.schema``), one of
at most MAX_BINNED_BLOCK values one of its bins (at most BLOCK_BINS, of equal width), whose
one-way cells and 2-way tables with each binary or categorical column the moments release holds
in place of the column's means per level (``synthdp.stats.mixed_basis``), and the candidates
draw a categorical column tied to it from that table (``synthdp.postprocess.candidates``).
"""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pandas as pd
import pytest

from synthdp import SmoothSynthesizer, SynthDPError
from synthdp.domain.schema import (
    BLOCK_BINS,
    MAX_BINNED_BLOCK,
    MAX_VALUE_BLOCK,
    VALUES_SUFFIX,
    Schema,
    schema_text_columns,
)
from synthdp.reader.table import PrivateTable
from synthdp.stats.chebyshev import ChebyshevBasis
from synthdp.stats.mixed_basis import basis_groups, basis_indices, groups_count
from synthdp.summaries.marginal import MarginalSummary, column_sets

SCHEMA = {"columns": {
    "grade": {"type": "integer", "bounds": [1, 3]},
    "score": [0, 1],
    "sex": {"type": "binary", "levels": ["F", "M"]},
    "job": {"type": "categorical", "levels": ["a", "b"]},
}}
NAMES = ["grade", "score", "sex", "job"]


@pytest.fixture
def schema() -> Schema:
    return Schema.from_dict(SCHEMA, NAMES)


def scored_table() -> tuple[pd.DataFrame, dict]:
    """200 rows of SCHEMA's columns with score an integer column of 100 values (a binned block) beside
    grade's value block of 3 values; the frame and the schema's content."""
    content = {"columns": {**SCHEMA["columns"], "score": {"type": "integer", "bounds": [0, 99]}}}
    frame = pd.DataFrame({"grade": [1, 2, 3, 2] * 50, "score": np.arange(200) % 100,
                          "sex": ["F", "M"] * 100, "job": ["a", "b", "b", "a"] * 50})
    return frame, content


def function_of_bins_table() -> tuple[pd.DataFrame, dict]:
    """20 000 rows: a of 100 values, c "mid" for a in [28, 70) and "edge" outside (bin edges of a's
    binned block, bins of 7), x and u independent of them; the frame and the schema's content."""
    rng = np.random.default_rng(4)
    n = 20_000
    a = rng.integers(0, 100, n)
    frame = pd.DataFrame({"a": a, "x": rng.normal(size=n), "c": np.where((a >= 28) & (a < 70), "mid", "edge"),
                          "u": rng.choice(["p", "q", "r"], n)})
    content = {"columns": {"a": {"type": "integer", "bounds": [0, 99]}, "x": [-5, 5],
                           "c": {"type": "categorical", "levels": ["edge", "mid"]},
                           "u": {"type": "categorical", "levels": ["p", "q", "r"]}}}
    return frame, content


def test_an_integer_column_of_few_values_gets_a_value_block_last(schema):
    block = schema.column("grade" + VALUES_SUFFIX)
    assert block.values_of == "grade" and block.internal and not block.binary
    assert block.all_levels == ("1", "2", "3")  # no "other": a value is clipped into the bounds
    assert [c.name for c in schema.value_blocks] == ["grade" + VALUES_SUFFIX]
    assert [c.name for c in schema.declared] == ["sex", "job"]
    assert schema.block_slice(block.name).stop == schema.n_coordinates  # after every declared column
    assert schema_text_columns(schema) == ("sex", "job")
    assert column_sets(schema, 2) == [("sex", "job")]
    assert schema.valued_numeric == ((block, 0),)


@pytest.mark.parametrize("change", [
    {"grade": {"type": "integer", "bounds": [1, MAX_BINNED_BLOCK + 1]}},  # too many values
    {"grade": [1, 3]},  # not declared integer
    {"grade": {"type": "integer", "bounds": [1, 3], "nullable": True}},
    {"grade": {"type": "date", "bounds": ["2020-01-01", "2020-01-03"]}},
])
def test_no_value_block_for_many_values_continuous_nullable_or_date_columns(change):
    schema = Schema.from_dict({"columns": {**SCHEMA["columns"], **change}}, NAMES)
    assert schema.value_blocks == ()


@pytest.mark.parametrize("top, width", [(MAX_VALUE_BLOCK + 1, 3), (74, 5), (MAX_BINNED_BLOCK, 8)])
def test_an_integer_column_of_more_values_gets_equal_bins_named_by_their_first_value(top, width):
    schema = Schema.from_dict({"columns": {**SCHEMA["columns"], "grade": {"type": "integer", "bounds": [1, top]}}},
                              NAMES)
    (block,) = schema.value_blocks
    assert block.binned and block.values_of == "grade"
    assert block.all_levels == tuple(str(start) for start in range(1, top + 1, width))
    assert len(block.levels) <= BLOCK_BINS
    values = np.array([-3.0, 1, 1.4, width, width + 0.6, top, top + 50])
    expected = [0, 0, 0, (width - 1) // width, 1, (top - 1) // width, (top - 1) // width]
    np.testing.assert_array_equal(block.value_codes(values), expected)  # rounded, clipped into the bounds
    assert not Schema.from_dict({"columns": {**SCHEMA["columns"], "grade": {"type": "integer", "bounds": [1, top]}}},
                                NAMES, binned_blocks=False).value_blocks


def test_a_value_block_of_single_values_is_not_binned(schema):
    assert not schema.value_blocks[0].binned
    assert schema.without_binned_blocks() == schema


def test_a_binned_block_encodes_each_row_in_its_bin():
    content = {"columns": {**SCHEMA["columns"], "grade": {"type": "integer", "bounds": [0, 99]}}}
    schema = Schema.from_dict(content, NAMES)
    frame = pd.DataFrame({"grade": [-5, 6, 7, 40, 99, 140], "score": [0.5] * 6, "sex": ["F", "M"] * 3,
                          "job": ["a", "b", "a"] * 2})
    points, clipped, _ = PrivateTable(frame, ["sex", "job"]).encoded_points(schema)
    assert clipped == 2
    block = points[:, schema.block_slice("grade" + VALUES_SUFFIX)]
    assert block.shape[1] == 15  # 100 values in bins of 7: 0, 7, ..., 98
    np.testing.assert_array_equal(block.argmax(axis=1), [0, 0, 1, 5, 14, 14])
    assert (block.sum(axis=1) == 1).all()


def test_a_table_without_categorical_columns_gets_no_value_block():
    schema = Schema.from_dict({"columns": {"grade": {"type": "integer", "bounds": [1, 3]}, "score": [0, 1]}},
                              ["grade", "score"])
    assert schema.categorical == ()  # still a numeric table (a bounds file), released as one


def test_a_column_named_like_a_value_block_is_refused_in_one_line():
    columns = {**SCHEMA["columns"], "grade" + VALUES_SUFFIX: {"type": "categorical", "levels": ["x"]}}
    with pytest.raises(SynthDPError, match="value block") as error:
        Schema.from_dict({"columns": columns}, [*NAMES, "grade" + VALUES_SUFFIX])
    assert "\n" not in str(error.value)


def test_the_encoding_holds_the_clipped_rounded_value_and_nothing_decodes_from_it(schema):
    frame = pd.DataFrame({"grade": [0, 2, 3, 9], "score": [0.5] * 4, "sex": ["F", "M", "F", "M"],
                          "job": ["a", "b", "a", "b"]})
    points, clipped, _ = PrivateTable(frame, ["sex", "job"]).encoded_points(schema)
    assert clipped == 2  # 0 and 9 lie outside [1, 3]
    block = points[:, schema.block_slice("grade" + VALUES_SUFFIX)]
    np.testing.assert_array_equal(block, [[1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 1]])
    decoded = schema.decode(points)
    assert list(decoded.columns) == NAMES
    np.testing.assert_array_equal(decoded["grade"], [1, 2, 3, 3])


def test_the_basis_holds_the_value_blocks_one_and_two_way_cells_only(schema):
    d, indices = schema.d_numeric, basis_indices(schema, 3)
    block = schema.block_slice("grade" + VALUES_SUFFIX)
    with_block = indices[indices[:, block].any(axis=1)]
    assert not with_block[:, :d].any()  # no numeric means per value
    # grade's means per level are its 2-way tables now; score (no block) keeps its own
    indicator = indices[:, d:].any(axis=1)
    assert not (indicator & (indices[:, 0] > 0)).any() and (indicator & (indices[:, 1] > 0)).any()
    kept = basis_indices(schema, 3, block_means=True)
    assert len(kept) == len(indices) + 1 + 3  # grade's means per level of sex (one coordinate) and job
    touched = [tuple(sorted({int(b) for b in schema.block_of_coordinate[np.flatnonzero(index)]})) for index in with_block]
    blocks = {name: k for k, name in enumerate(["grade", "score", "sex", "job", "grade" + VALUES_SUFFIX])}
    value = blocks["grade" + VALUES_SUFFIX]
    assert sorted(set(touched)) == [(blocks["sex"], value), (blocks["job"], value), (value,)]  # no 3-way cells
    assert len(with_block) == 3 + 3 * 1 + 3 * 3  # one-way, x sex (one coordinate), x job (a, b, other)
    groups = basis_groups(schema, indices)
    assert len(set(groups[indices[:, block].any(axis=1)])) == 3  # one group per table


@pytest.mark.parametrize("top", [3, 99])
def test_grouped_sensitivity_holds_on_every_pair_of_extreme_rows_with_a_value_block(top):
    """Replacing one row moves the moments by <= 2G/n (l1) and 2 sqrt(G)/n (l2), value blocks (``top`` 3)
    and binned blocks (``top`` 99: 15 bins) included: checked exhaustively over the numeric corners and
    every level of every block (consistent with the integer value or not: a superset of the rows the
    reader can encode)."""
    schema = Schema.from_dict({"columns": {**SCHEMA["columns"], "grade": {"type": "integer", "bounds": [1, top]}}},
                              NAMES)
    assert schema.value_blocks[0].binned == (top > MAX_VALUE_BLOCK)
    indices = basis_indices(schema, 2)
    groups = groups_count(schema, indices)
    basis = ChebyshevBasis(indices)
    rows = []
    for corner in itertools.product((-1.0, 1.0), repeat=schema.d_numeric):
        for levels in itertools.product(*(range(c.width + c.binary) for c in schema.categorical)):
            row = np.zeros(schema.n_coordinates)
            row[: schema.d_numeric] = corner
            for column, level in zip(schema.categorical, levels):
                if level - column.binary >= 0:
                    row[schema.block_slice(column.name).start + level - column.binary] = 1.0
            rows.append(row)
    values = basis.evaluate(np.array(rows))
    differences = values[:, None, :] - values[None, :, :]
    assert np.abs(differences).sum(axis=2).max() <= 2 * groups + 1e-9
    assert np.sqrt((differences**2).sum(axis=2)).max() <= 2 * math.sqrt(groups) + 1e-9
    assert np.abs(differences).sum(axis=2).max() > groups


def test_a_categorical_function_of_an_integer_column_keeps_its_cells():
    """c is a function of k (8 values, its levels listed out of order): with k's value block the
    candidates draw c from their released 2-way table, and the synthetic rows keep c = f(k).
    Seeded runs at (1, 10^-10), 20 000 rows: .95-.97 of them at seeds 5-7 with the block, .18-.19
    with bounds [1, 200] (200 values: no block, c tied to k by a latent order; .38-.39 with [1, 40],
    a binned block of width 3, which keeps k's bin, not its value); the bounds below lie between
    (seeded: the test is deterministic)."""
    rng = np.random.default_rng(3)
    n = 20_000
    k = rng.choice(np.arange(1, 9), n, p=np.array([1, 2, 4, 8, 8, 4, 2, 1]) / 30)
    names = np.array([f"l{i}" for i in range(9)])
    listed = [str(name) for name in rng.permutation(names[1:])]
    frame = pd.DataFrame({"k": k, "x": rng.normal(size=n) + 0.3 * k, "c": names[k],
                          "u": rng.choice(["a", "b", "c"], n)})
    kept = {}
    for upper in (8, 200):
        schema = {"columns": {"k": {"type": "integer", "bounds": [1, upper]}, "x": [-5, 8],
                              "c": {"type": "categorical", "levels": listed},
                              "u": {"type": "categorical", "levels": ["a", "b", "c"]}}}
        sample = SmoothSynthesizer(epsilon=1, delta=1e-10, seed=5).fit(frame, schema=schema).sample(n)
        assert list(sample.columns) == ["k", "x", "c", "u"]
        kept[upper] = (sample["c"].to_numpy() == names[np.clip(sample["k"].to_numpy(), 0, 8)]).mean()
    assert kept[8] > 0.8 and kept[200] < 0.5


def test_a_categorical_function_of_an_integer_columns_bins_keeps_its_cells():
    """c is "mid" for a in [28, 70) of a's 100 values, "edge" outside (not monotone in a; its edges are
    bin edges of a's binned block, bins of 7): the candidates draw c from the released table of a's
    bins and c, and the synthetic rows keep c = f(a). Seeded runs at (1, 10^-10), 20 000 rows: .981-.986
    of them at seeds 5-7 with the binned block, .51-.52 without (StudyOptions(binned_blocks=False): c tied
    to a by its means per level, chance .5); the bounds below lie between (seeded: deterministic)."""
    from synthdp.config import SynthConfig
    from synthdp.pipeline.run import StudyOptions, fit, sample

    frame, content = function_of_bins_table()
    n = len(frame)
    kept = {}
    for binned in (True, False):
        model = fit(SynthConfig(epsilon=1, delta=1e-10, seed=5), frame, schema=content,
                    study=StudyOptions(binned_blocks=binned))
        rows = sample(model, n)
        kept[binned] = (((rows["a"] >= 28) & (rows["a"] < 70)).to_numpy() == (rows["c"] == "mid").to_numpy()).mean()
    assert kept[True] > 0.9 and kept[False] < 0.7


def test_a_summary_written_before_value_blocks_still_loads(schema):
    frame = pd.DataFrame({"grade": [1, 2, 3, 2] * 50, "score": np.linspace(0, 1, 200),
                          "sex": ["F", "M"] * 100, "job": ["a", "b", "b", "a"] * 50})
    summary = SmoothSynthesizer(seed=2, n_candidates=300).fit(frame, schema=SCHEMA).marginal_summary()
    content = json.loads(summary.to_json())
    full = [[0] * content["n_coordinates"] for _ in content["basis_terms"]]  # as version 1 wrote it: in full
    for row, term in zip(full, content.pop("basis_terms")):
        for coordinate, degree in term:
            row[coordinate] = degree
    content.update(format_version=1, basis_indices=full)
    del content["n_coordinates"]
    block = schema.block_slice("grade" + VALUES_SUFFIX)
    older = [index for index in content["basis_indices"] if not any(index[block])]
    content["noisy_moments"] = [m for index, m in zip(content["basis_indices"], content["noisy_moments"])
                                if not any(index[block])]
    content["basis_indices"] = [index[: block.start] for index in older]  # an older file: no block coordinates
    loaded = MarginalSummary.from_dict(content)
    pd.testing.assert_series_equal(loaded.marginal(["sex", "job"]), summary.marginal(["sex", "job"]))


def test_a_design_study_can_leave_the_value_blocks_out(schema):
    from synthdp.config import SynthConfig
    from synthdp.pipeline.run import StudyOptions, fit

    frame = pd.DataFrame({"grade": [1, 2, 3, 2] * 50, "score": np.linspace(0, 1, 200),
                          "sex": ["F", "M"] * 100, "job": ["a", "b", "b", "a"] * 50})
    # Gaussian noise: under Laplace noise the means per level are left out (mixed_numeric_moments)
    config = SynthConfig(epsilon=1.0, delta=1e-6, seed=3, n_candidates=300)
    with_blocks = fit(config, frame, schema=SCHEMA).release
    without = fit(config, frame, schema=SCHEMA, study=StudyOptions(value_blocks=False)).release
    summary_only = fit(config, frame, schema=SCHEMA, synthesize=False).release  # its marginals: the table's columns
    assert summary_only.schema.value_blocks == ()
    assert without.schema.value_blocks == () and with_blocks.schema.value_blocks != ()
    # the blocks' one-way cells (3) and tables with sex (3) and job (9), in place of grade's 4 means per level
    assert len(without.basis_indices) == len(with_blocks.basis_indices) - (3 + 3 + 9) + 4


def test_a_design_study_can_leave_the_binned_blocks_out():
    """StudyOptions(binned_blocks=False) releases what the product did before them: the value blocks of
    few values beside their columns' means per level, no binned block."""
    from synthdp.config import SynthConfig
    from synthdp.pipeline.run import StudyOptions, fit

    frame, content = scored_table()
    config = SynthConfig(epsilon=1.0, delta=1e-6, seed=3, n_candidates=400)
    product = fit(config, frame, schema=content).release
    before = fit(config, frame, schema=content, study=StudyOptions(binned_blocks=False)).release
    assert [c.binned for c in product.schema.value_blocks] == [False, True]
    assert [c.binned for c in before.schema.value_blocks] == [False]
    np.testing.assert_array_equal(before.basis_indices, basis_indices(before.schema, 2, block_means=True))
    np.testing.assert_array_equal(product.basis_indices, basis_indices(product.schema, 2))


def test_binned_blocks_that_would_outgrow_the_candidates_are_left_out():
    """A binned block's tables add bins x levels moments; where they would make more moments than the
    LP has candidates, the schema keeps its blocks of single values only (the run is not refused)."""
    from synthdp.config import SynthConfig
    from synthdp.pipeline.run import fit

    frame, content = scored_table()
    schema = Schema.from_dict(content, NAMES)
    assert len(basis_indices(schema, 2)) > 60 > len(basis_indices(schema.without_binned_blocks(), 2))
    release = fit(SynthConfig(epsilon=1.0, delta=1e-6, seed=3, n_candidates=60), frame, schema=content).release
    assert [c.binned for c in release.schema.value_blocks] == [False]


def test_a_schema_object_keeps_its_value_blocks_only_where_they_serve(schema):
    """A Schema built by the caller (with value blocks) and passed to fit loses its blocks for a summary
    only or at marginal degree 1, as a schema given as a mapping is built without them."""
    from synthdp.config import SynthConfig
    from synthdp.pipeline.run import fit

    frame = pd.DataFrame({"grade": [1, 2, 3, 2] * 50, "score": np.linspace(0, 1, 200),
                          "sex": ["F", "M"] * 100, "job": ["a", "b", "b", "a"] * 50})
    # Gaussian noise: under Laplace noise the means per level are left out (mixed_numeric_moments)
    config = SynthConfig(epsilon=1.0, delta=1e-6, seed=3, n_candidates=300)
    assert schema.value_blocks != ()
    assert fit(config, frame, schema=schema).release.schema == schema
    degree_one = SynthConfig(epsilon=1.0, delta=1e-6, seed=3, n_candidates=300, marginal_degree=1)
    for release, degree in ((fit(config, frame, schema=schema, synthesize=False).release, 2),
                            (fit(degree_one, frame, schema=schema).release, 1)):
        assert release.schema == Schema.from_dict(SCHEMA, NAMES, value_blocks=False)
        np.testing.assert_array_equal(release.basis_indices, basis_indices(release.schema, degree))


def test_marginal_degree_one_releases_nothing_of_the_value_blocks(schema):
    indices = basis_indices(schema, 1)
    assert not indices[:, schema.block_slice("grade" + VALUES_SUFFIX)].any()


def test_a_release_at_marginal_degree_one_has_no_value_block_and_still_samples():
    frame = pd.DataFrame({"grade": [1, 2, 3, 2] * 50, "score": np.linspace(0, 1, 200),
                          "sex": ["F", "M"] * 100, "job": ["a", "b", "b", "a"] * 50})
    synth = SmoothSynthesizer(epsilon=1.0, seed=4, marginal_degree=1, n_candidates=300).fit(frame, schema=SCHEMA)
    assert synth.release_.schema.value_blocks == ()
    assert list(synth.sample(20).columns) == NAMES


def test_a_value_block_spends_nothing_on_the_other_count_of_binary_columns():
    """A value block has no "other" level (a value is clipped into the bounds): beside binary columns only,
    no budget goes to counting rows with an "other" level."""
    content = {"columns": {"grade": {"type": "integer", "bounds": [1, 3]}, "score": [0, 1],
                           "sex": {"type": "binary", "levels": ["F", "M"]}}}
    frame = pd.DataFrame({"grade": [1, 2, 3, 2] * 50, "score": np.linspace(0, 1, 200), "sex": ["F", "M"] * 100})
    synth = SmoothSynthesizer(epsilon=1.0, seed=4, n_candidates=300).fit(frame, schema=content)
    assert synth.release_.schema.value_blocks != ()
    stages = [stage["stage"] for stage in synth.privacy_report()["privacy"]["stages"]]
    assert "clip_count" in stages and "other_count" not in stages


def test_a_summary_written_before_binned_blocks_still_loads():
    """A summary written before the binned blocks (its release had the value blocks of single values only)
    loads with that schema and answers as before; one written now keeps its binned block."""
    from synthdp.config import SynthConfig
    from synthdp.pipeline.report import marginal_summary
    from synthdp.pipeline.run import StudyOptions, fit

    frame, content = scored_table()
    config = SynthConfig(epsilon=1.0, delta=1e-6, seed=3, n_candidates=400)
    for binned in (False, True):
        model = fit(config, frame, schema=content, study=StudyOptions(binned_blocks=binned))
        summary = marginal_summary(model.release, {})
        loaded = MarginalSummary.from_dict(json.loads(summary.to_json()))
        assert loaded.schema == model.release.schema
        assert [c.binned for c in loaded.schema.value_blocks] == [False, True][: 1 + binned]
        pd.testing.assert_series_equal(loaded.marginal(["sex", "job"]), summary.marginal(["sex", "job"]))


def test_the_lp_leaves_out_the_cells_of_block_tables_that_do_not_stand_out():
    """quiet_block_tables marks the cells of a value block's table with a column it is independent of (u),
    not those of its table with a column that follows it (c), nor any other moment; mixed_design drops
    exactly the marked rows. Seeded release at (1, 1e-10), 20 000 rows: the dependent table stands far
    out (c is a function of a's bins), the independent one at the noise's level."""
    from synthdp.config import SynthConfig
    from synthdp.pipeline.run import PRODUCT, fit, mixed_design
    from synthdp.postprocess.candidates import quiet_block_tables

    frame, content = function_of_bins_table()
    release = fit(SynthConfig(epsilon=1, delta=1e-10, seed=5), frame, schema=content).release
    schema, indices = release.schema, release.basis_indices
    quiet = quiet_block_tables(schema, indices, release.noisy_moments, float(np.max(release.moment_noise_sd)),
                               release.plan.noise)
    block, u, c = (schema.block_slice(name) for name in ("a" + VALUES_SUFFIX, "u", "c"))
    with_u = indices[:, block].any(axis=1) & indices[:, u].any(axis=1)
    with_c = indices[:, block].any(axis=1) & indices[:, c].any(axis=1)
    np.testing.assert_array_equal(quiet, with_u)
    assert with_c.sum() == 15 * 3  # a's 15 bins x (edge, mid, other): kept
    candidates = np.zeros((4, schema.n_coordinates))
    basis = ChebyshevBasis(indices)
    full, _, _, _ = mixed_design(release, basis, candidates)
    left, _, _, _ = mixed_design(release, basis, candidates, quiet)
    assert full.shape[0] - left.shape[0] == with_u.sum() == 15 * 4
    assert PRODUCT.block_gate
