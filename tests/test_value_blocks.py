"""Value blocks: the 2-way tables of an integer column of few values against the categorical columns.

An integer column of at most MAX_VALUE_BLOCK values in a table with binary or categorical
columns gets an internal categorical column of its values (``synthdp.domain.schema``), whose
one-way cells and 2-way tables with each binary or categorical column the moments release holds
(``synthdp.stats.mixed_basis``), and the candidates draw a categorical column tied to it from
that table (``synthdp.postprocess.candidates``).
"""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pandas as pd
import pytest

from synthdp import SmoothSynthesizer, SynthDPError
from synthdp.domain.schema import MAX_VALUE_BLOCK, VALUES_SUFFIX, Schema, schema_text_columns
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
    {"grade": {"type": "integer", "bounds": [1, MAX_VALUE_BLOCK + 1]}},  # too many values
    {"grade": [1, 3]},  # not declared integer
    {"grade": {"type": "integer", "bounds": [1, 3], "nullable": True}},
    {"grade": {"type": "date", "bounds": ["2020-01-01", "2020-01-03"]}},
])
def test_no_value_block_for_many_values_continuous_nullable_or_date_columns(change):
    schema = Schema.from_dict({"columns": {**SCHEMA["columns"], **change}}, NAMES)
    assert schema.value_blocks == ()


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
    touched = [tuple(sorted({int(b) for b in schema.block_of_coordinate[np.flatnonzero(index)]})) for index in with_block]
    blocks = {name: k for k, name in enumerate(["grade", "score", "sex", "job", "grade" + VALUES_SUFFIX])}
    value = blocks["grade" + VALUES_SUFFIX]
    assert sorted(set(touched)) == [(blocks["sex"], value), (blocks["job"], value), (value,)]  # no 3-way cells
    assert len(with_block) == 3 + 3 * 1 + 3 * 3  # one-way, x sex (one coordinate), x job (a, b, other)
    groups = basis_groups(schema, indices)
    assert len(set(groups[indices[:, block].any(axis=1)])) == 3  # one group per table


def test_grouped_sensitivity_holds_on_every_pair_of_extreme_rows_with_a_value_block(schema):
    """Replacing one row moves the moments by <= 2G/n (l1) and 2 sqrt(G)/n (l2), value blocks included:
    checked exhaustively over the numeric corners and every level of every block (consistent with the
    integer value or not: a superset of the rows the reader can encode)."""
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
    Seeded runs at (1, 10^-10), 20 000 rows: .88-.97 of them at seeds 5-7 with the block, .25-.29
    with bounds [1, 40] (40 values: no block, c tied to k by a latent order); the bounds below
    lie between (seeded: the test is deterministic)."""
    rng = np.random.default_rng(3)
    n = 20_000
    k = rng.choice(np.arange(1, 9), n, p=np.array([1, 2, 4, 8, 8, 4, 2, 1]) / 30)
    names = np.array([f"l{i}" for i in range(9)])
    listed = [str(name) for name in rng.permutation(names[1:])]
    frame = pd.DataFrame({"k": k, "x": rng.normal(size=n) + 0.3 * k, "c": names[k],
                          "u": rng.choice(["a", "b", "c"], n)})
    kept = {}
    for upper in (8, 40):
        schema = {"columns": {"k": {"type": "integer", "bounds": [1, upper]}, "x": [-5, 8],
                              "c": {"type": "categorical", "levels": listed},
                              "u": {"type": "categorical", "levels": ["a", "b", "c"]}}}
        sample = SmoothSynthesizer(epsilon=1, delta=1e-10, seed=5).fit(frame, schema=schema).sample(n)
        assert list(sample.columns) == ["k", "x", "c", "u"]
        kept[upper] = (sample["c"].to_numpy() == names[np.clip(sample["k"].to_numpy(), 0, 8)]).mean()
    assert kept[8] > 0.8 and kept[40] < 0.5


def test_a_summary_written_before_value_blocks_still_loads(schema):
    frame = pd.DataFrame({"grade": [1, 2, 3, 2] * 50, "score": np.linspace(0, 1, 200),
                          "sex": ["F", "M"] * 100, "job": ["a", "b", "b", "a"] * 50})
    summary = SmoothSynthesizer(seed=2, n_candidates=300).fit(frame, schema=SCHEMA).marginal_summary()
    content = json.loads(summary.to_json())
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
    config = SynthConfig(epsilon=1.0, seed=3, n_candidates=300)
    with_blocks = fit(config, frame, schema=SCHEMA).release
    without = fit(config, frame, schema=SCHEMA, study=StudyOptions(value_blocks=False)).release
    summary_only = fit(config, frame, schema=SCHEMA, synthesize=False).release  # its marginals: the table's columns
    assert summary_only.schema.value_blocks == ()
    assert without.schema.value_blocks == () and with_blocks.schema.value_blocks != ()
    assert len(without.basis_indices) == len(with_blocks.basis_indices) - (3 + 3 + 9)


def test_a_schema_object_keeps_its_value_blocks_only_where_they_serve(schema):
    """A Schema built by the caller (with value blocks) and passed to fit loses its blocks for a summary
    only or at marginal degree 1, as a schema given as a mapping is built without them."""
    from synthdp.config import SynthConfig
    from synthdp.pipeline.run import fit

    frame = pd.DataFrame({"grade": [1, 2, 3, 2] * 50, "score": np.linspace(0, 1, 200),
                          "sex": ["F", "M"] * 100, "job": ["a", "b", "b", "a"] * 50})
    config = SynthConfig(epsilon=1.0, seed=3, n_candidates=300)
    assert schema.value_blocks != ()
    assert fit(config, frame, schema=schema).release.schema == schema
    degree_one = SynthConfig(epsilon=1.0, seed=3, n_candidates=300, marginal_degree=1)
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
