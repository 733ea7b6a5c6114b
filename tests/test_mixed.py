"""Mixed tables: schema, encoding, grouped sensitivity, candidates, decoding, marginals, CLI."""

import datetime as dt
import itertools
import json
import math
from pathlib import Path
from statistics import NormalDist

import numpy as np
import pandas as pd
import pytest

import synthdp.postprocess.candidates as candidates_module
from synthdp import SmoothSynthesizer, SynthDPError
from synthdp.cli import main
from synthdp.domain.encoded import EncodedPoints
from synthdp.domain.schema import Schema
from synthdp.pipeline import run
from synthdp.postprocess.candidates import mixed_candidates, moment_gaussian
from synthdp.reader.table import PrivateTable, encode_levels, encode_rows
from synthdp.stats.chebyshev import ChebyshevBasis
from synthdp.stats.mixed_basis import basis_indices, groups_count, nonzero_counts
from synthdp.summaries.marginal import MarginalSummary, column_sets, marginal, marginal_errors

SCHEMA = {"columns": {
    "age": {"type": "integer", "bounds": [18, 90]},
    "sex": {"type": "binary", "levels": ["F", "M"]},
    "job": {"type": "categorical", "levels": ["a", "b", "c"]},
    "score": [0, 1],
    "city": {"type": "categorical", "levels": ["x", "y"]},
}}
NAMES = ["age", "sex", "job", "score", "city"]


def mixed_frame(n: int, seed: int) -> pd.DataFrame:
    """Dependent columns: job depends on sex, city on job; some 'job' values outside the levels."""
    rng = np.random.default_rng(seed)
    sex = rng.choice(["F", "M"], n)
    job = np.where(sex == "F", rng.choice(["a", "b", "zz"], n, p=[0.6, 0.3, 0.1]), rng.choice(["b", "c"], n))
    city = np.where(job == "c", "x", rng.choice(["x", "y"], n))
    return pd.DataFrame({"age": rng.integers(20, 80, n), "sex": sex, "job": job,
                         "score": rng.beta(2, 5, n), "city": city})


@pytest.fixture
def schema():
    return Schema.from_dict(SCHEMA, NAMES)


def encoded(frame: pd.DataFrame, schema: Schema):
    return PrivateTable(frame, [c.name for c in schema.categorical]).encoded_points(schema)


# ------------------------------------------------------------------ schema and encoding
def test_schema_layout(schema):
    assert schema.numeric.names == ["age", "score"]
    assert [c.name for c in schema.categorical] == ["sex", "job", "city", "age (values)"]
    # binary: 1; categorical: levels + other; age's 73 values in a binned block of 15 bins, last
    assert schema.n_coordinates == 2 + 1 + 4 + 3 + 15
    assert [c.name for c in schema.declared] == ["sex", "job", "city"]
    assert schema.column("job").all_levels == ("a", "b", "c", "other")


@pytest.mark.parametrize("change, message", [
    ({"sex": {"type": "binary", "levels": ["F", "M", "X"]}}, "exactly 2 levels"),
    ({"job": {"type": "categorical", "levels": ["a", "a"]}}, "twice"),
    ({"job": {"type": "categorical", "levels": ["a", "other"]}}, "twice"),
    ({"job": {"type": "categorical", "levels": "abc"}}, "list"),
    ({"job": {"type": "ordinal", "levels": ["a"]}}, "type"),
    ({"nope": [0, 1]}, "unknown column 'nope'"),
    ({"job": {"type": "categorical", "levels": ["a", ""]}}, "empty level"),
])
def test_bad_schemas_are_refused(change, message):
    content = {"columns": {**SCHEMA["columns"], **change}}
    with pytest.raises(SynthDPError, match=message):
        Schema.from_dict(content, NAMES)


def test_an_empty_other_label_is_refused():
    """A CSV writes it as an empty cell, which reads back as a missing value: "other" rows would
    turn into missing cells, silently."""
    with pytest.raises(SynthDPError, match="empty other_label"):
        Schema.from_dict({**SCHEMA, "other_label": ""}, NAMES)


def test_a_missing_column_is_refused():
    content = {"columns": {k: v for k, v in SCHEMA["columns"].items() if k != "city"}}
    with pytest.raises(SynthDPError, match="no entry for column 'city'"):
        Schema.from_dict(content, NAMES)


def test_encoding_is_one_hot_and_counts_other(schema):
    frame = mixed_frame(200, 1)
    points, rows_clipped, rows_other = encoded(frame, schema)
    assert points.shape == (200, schema.n_coordinates)
    for column in schema.categorical:
        block = points[:, schema.block_slice(column.name)]
        assert set(np.unique(block)) <= {0.0, 1.0}
        if not column.binary:
            assert (block.sum(axis=1) == 1).all()
    assert rows_other == (~frame.job.isin(["a", "b", "c"])).sum() > 0
    assert rows_clipped == 0
    decoded = schema.decode(points)
    expected = frame.job.where(frame.job.isin(["a", "b", "c"]), "other")
    assert (decoded.job == expected).all() and (decoded.sex == frame.sex).all() and (decoded.city == frame.city).all()


def test_binary_value_outside_its_levels_is_an_error_without_the_value(schema):
    frame = mixed_frame(50, 2)
    frame.loc[3, "sex"] = "SECRET-VALUE"
    with pytest.raises(SynthDPError, match="binary column 'sex'") as error:
        encoded(frame, schema)
    assert "SECRET" not in str(error.value)


def closed_schema(nullable: bool = False) -> dict:
    """SCHEMA with job and city declared without an "other" level (their levels are every value)."""
    return {"columns": {**SCHEMA["columns"],
                        "job": {"type": "categorical", "levels": ["a", "b", "c"], "other": False,
                                **({"nullable": True} if nullable else {})},
                        "city": {"type": "categorical", "levels": ["x", "y"], "other": False}}}


def closed_frame(n: int, seed: int) -> pd.DataFrame:
    """mixed_frame with every job inside its levels."""
    frame = mixed_frame(n, seed)
    frame["job"] = frame.job.where(frame.job != "zz", "a")
    return frame


def test_a_column_without_other_level_has_no_such_cell_or_count_and_never_writes_one():
    schema = Schema.from_dict(closed_schema(), NAMES)
    assert schema.column("job").all_levels == ("a", "b", "c") and schema.column("job").width == 3
    assert Schema.from_dict(schema.to_dict(), NAMES) == schema  # the report's schema says it too
    assert schema.to_dict()["columns"]["job"]["other"] is False and "other" not in schema.to_dict()["columns"]["sex"]
    frame = closed_frame(400, 6)
    points, _, rows_other = encoded(frame, schema)
    assert rows_other == 0 and (points[:, schema.block_slice("job")].sum(axis=1) == 1).all()
    synth = SmoothSynthesizer(epsilon=1.0, delta=1e-6, seed=7, n_candidates=1000).fit(frame, schema=closed_schema())
    stages = [event["stage"] for event in synth.privacy_report()["privacy"]["stages"]]
    assert "other_count" not in stages and "clip_count" in stages  # no budget on a count that is always 0
    synthetic = synth.sample(2000)
    assert set(synthetic.job) <= {"a", "b", "c"} and set(synthetic.city) <= {"x", "y"}
    # the open schema, same data and seed: the "other" level is a cell of its own, and noise gives it rows
    opened = SmoothSynthesizer(epsilon=1.0, delta=1e-6, seed=7, n_candidates=1000).fit(frame, schema=SCHEMA)
    assert "other_count" in [event["stage"] for event in opened.privacy_report()["privacy"]["stages"]]


@pytest.mark.parametrize("value", ["SECRET-VALUE", None])
def test_a_value_outside_the_levels_of_a_column_without_other_is_an_error_without_the_value(value):
    frame = closed_frame(50, 2).astype({"job": object})
    frame.loc[3, "job"] = value
    schema = Schema.from_dict(closed_schema(), NAMES)
    with pytest.raises(SynthDPError, match="column 'job' has a value outside its levels") as error:
        encoded(frame, schema)
    assert "SECRET" not in str(error.value) and "other" in str(error.value)
    if value is None:  # a nullable column without "other" takes its missing cells
        nullable = Schema.from_dict(closed_schema(nullable=True), NAMES)
        assert nullable.column("job").all_levels[-1] != "other" and len(nullable.column("job").all_levels) == 4
        points, _, rows_other = encoded(frame, nullable)
        assert rows_other == 0 and points[3, nullable.block_slice("job")][-1] == 1.0
        assert pd.isna(nullable.decode(points).job[3])


@pytest.mark.parametrize("spec, message", [
    ({"type": "categorical", "levels": ["a", "b", "c"], "other": "no"}, "\"other\": expected true or false"),
    ({"type": "categorical", "levels": ["a", "b", "c"], "other": 0}, "\"other\": expected true or false"),
    ({"type": "categorical", "levels": ["a", "b", "c"], "nullable": 1}, "\"nullable\": expected true or false"),
    ({"type": "binary", "levels": ["a", "b"], "other": False}, "binary column 'job' has \"other\""),
    ({"type": "categorical", "levels": "discover", "other": False}, "levels to discover"),
    ({"type": "integer", "bounds": [0, 3], "other": False}, "integer column 'job' has \"other\""),
])
def test_bad_other_marks_are_refused_before_the_table_is_read(spec, message):
    from synthdp.domain.schema import check_schema_columns

    content = {"columns": {**SCHEMA["columns"], "job": spec}}
    with pytest.raises(SynthDPError, match=message):
        check_schema_columns(content, given=True)  # what load_schema_file runs, before any data


def test_a_level_named_like_other_label_is_scored_beside_the_other_cell():
    """Without an "other" level a level may be called "other"; the evaluation's own "other" cell then takes
    another name."""
    from synthdp.evaluation.mixed import cell_labels, column_tv

    content = closed_schema()
    content["columns"]["job"]["levels"] = ["a", "b", "other"]
    schema = Schema.from_dict(content, NAMES)
    assert schema.column("job").all_levels == ("a", "b", "other")
    assert cell_labels(schema, "job") == ["a", "b", "other", "(other)"]
    real = closed_frame(200, 3).replace({"job": {"c": "other"}})
    synthetic = real.copy()
    synthetic.loc[:19, "job"] = "zz"
    assert column_tv(real, synthetic, schema)["per_column"]["job"] == pytest.approx(0.1)


def test_a_table_of_coded_columns_without_other_spends_the_whole_budget():
    """Nothing to count (no numeric column, no "other" level): no clip-count share left unspent."""
    content = {"columns": {"sex": {"type": "binary", "levels": ["F", "M"]},
                           "job": {"type": "categorical", "levels": ["a", "b", "c"], "other": False}}}
    frame = closed_frame(300, 5)[["sex", "job"]]
    synth = SmoothSynthesizer(epsilon=1.0, delta=1e-6, seed=2).fit(frame, schema=content)
    report = synth.privacy_report()
    stages = {event["stage"]: event for event in report["privacy"]["stages"]}
    assert "clip_count" not in stages and "other_count" not in stages
    assert sum(event["epsilon"] for event in stages.values()) == pytest.approx(1.0)
    assert "no categorical column with an 'other' level" in report["schema"]["rows_other_note"]


def test_a_nullable_binary_column_has_no_other_level_either():
    """Declared binary, a value outside its two levels is an error, nullable or not (its missing cells get a cell)."""
    content = {"columns": {**SCHEMA["columns"], "sex": {"type": "binary", "levels": ["F", "M"], "nullable": True}}}
    schema = Schema.from_dict(content, NAMES)
    assert schema.column("sex").all_levels[:2] == ("F", "M") and "other" not in schema.column("sex").all_levels
    frame = mixed_frame(50, 2).astype({"sex": object})
    frame.loc[4, "sex"] = None
    encoded(frame, schema)  # a missing cell is fine
    frame.loc[3, "sex"] = "SECRET-VALUE"
    with pytest.raises(SynthDPError, match="column 'sex' has a value outside its levels") as error:
        encoded(frame, schema)
    assert "SECRET" not in str(error.value)


def test_the_evaluation_scores_a_value_outside_the_levels_as_other_where_the_release_has_none():
    """Another tool's synthetic table may hold a level the schema's column lacks: scored as a cell of its own."""
    from synthdp.evaluation.mixed import cell_labels, column_tv

    schema = Schema.from_dict(closed_schema(), NAMES)
    real = closed_frame(200, 3)
    synthetic = real.copy()
    synthetic.loc[:49, "job"] = "zz"  # a quarter of the rows outside the levels
    assert cell_labels(schema, "job") == ["a", "b", "c", "other"]
    assert column_tv(real, synthetic, schema)["per_column"]["job"] == pytest.approx(0.25)
    assert column_tv(real, synthetic, closed_schema())["per_column"]["job"] == pytest.approx(0.25)  # a file's content


def test_the_evaluation_scores_a_nullable_column_s_missing_cells_apart_from_other():
    """docs/evaluating.md: a missing cell is "other", but a nullable column's has a cell of its own, so a
    synthetic value outside the levels where the real cell is missing is not a match."""
    from synthdp.evaluation.mixed import column_tv

    def tv(real, synthetic, nullable):
        content = {"columns": {"job": {"type": "categorical", "levels": ["a", "b"], "nullable": nullable}}}
        return column_tv(pd.DataFrame({"job": real}), pd.DataFrame({"job": synthetic}), content)["per_column"]["job"]

    real, synthetic = ["a", None, "b", "b"], ["a", "zz", "b", "b"]
    # by hand, cells (a, b, other, missing): real (1, 2, 0, 1) / 4 against (1, 2, 1, 0) / 4 -> TV 1/4 ...
    assert tv(real, synthetic, True) == pytest.approx(0.5 * (0 + 0 + 0.25 + 0.25))
    # ... and without "nullable" the missing cell is "other": (1, 2, 1) / 4 on both sides -> TV 0
    assert tv(real, synthetic, False) == pytest.approx(0.0)


def test_numeric_columns_still_refuse_text(schema):
    frame = mixed_frame(50, 3)
    frame["score"] = "text"
    with pytest.raises(SynthDPError, match="column 'score' is not numeric"):
        SmoothSynthesizer(seed=0).fit(frame, schema=SCHEMA)


# --------------------------------------------------------------------------- basis
def test_basis_has_degree_at_most_one_per_indicator_and_one_coordinate_per_column(schema):
    schema = schema.without_value_blocks()  # the value blocks' basis: tests/test_value_blocks.py
    indices = basis_indices(schema, 3)
    d = schema.d_numeric
    assert indices[:, d:].max() == 1
    blocks = schema.block_of_coordinate
    for index in indices:
        touched = blocks[np.flatnonzero(index[d:]) + d]
        assert len(touched) == len(set(touched))
    assert len(np.unique(indices, axis=0)) == len(indices)
    widths = [c.width for c in schema.categorical]
    cells = sum(math.prod(ws) for k in (1, 2, 3) for ws in itertools.combinations(widths, k))
    assert len(indices) == d * (d + 3) // 2 + cells + d * sum(widths)


@pytest.mark.parametrize("closed", [False, True])  # True: job and city without an "other" level
@pytest.mark.parametrize("held", [True, False])  # False: the cells only, as under Laplace noise
def test_grouped_sensitivity_bound_holds_on_every_pair_of_extreme_rows(schema, held, closed):
    """Replacing one row moves the moment vector by <= 2G/n (l1) and 2 sqrt(G)/n (l2): checked exhaustively."""
    if closed:
        schema = Schema.from_dict(closed_schema(), NAMES)
        assert schema.column("job").width == 3 and schema.column("city").width == 2
    indices = basis_indices(schema, 2, numeric_moments=held)
    groups = groups_count(schema, indices)
    basis = ChebyshevBasis(indices)
    rows = []  # every corner of the numeric box with every level combination
    for age, score in itertools.product((-1.0, 1.0), repeat=2):
        for levels in itertools.product(*(range(c.width + c.binary) for c in schema.categorical)):
            row = np.zeros(schema.n_coordinates)
            row[:2] = age, score
            for column, level in zip(schema.categorical, levels):
                coordinate = level - column.binary
                if coordinate >= 0:
                    row[schema.block_slice(column.name).start + coordinate] = 1.0
            rows.append(row)
    values = basis.evaluate(np.array(rows))
    l1 = l2 = 0.0
    for start in range(0, len(values), 64):  # every pair of rows, 64 first rows at a time (bounded memory)
        differences = values[start:start + 64, None, :] - values[None, :, :]
        l1 = max(l1, float(np.abs(differences).sum(axis=2).max()))
        l2 = max(l2, float(np.sqrt((differences ** 2).sum(axis=2)).max()))
    assert l1 <= 2 * groups + 1e-9
    assert l2 <= 2 * math.sqrt(groups) + 1e-9
    assert l1 > groups  # the grouping is what keeps it this low
    assert groups < len(indices) / 2


def test_the_release_is_calibrated_to_the_groups_and_spends_the_budget(schema):
    synth = SmoothSynthesizer(epsilon=2.0, seed=3).fit(mixed_frame(400, 4), schema=SCHEMA, synthesize=False)
    stages = {event["stage"]: event for event in synth.privacy_report()["privacy"]["stages"]}
    assert set(stages) == {"clip_count", "other_count", "moments"}
    summary_schema = schema.without_value_blocks()  # a summary only has none
    assert synth.release_.schema == summary_schema
    groups = groups_count(summary_schema, basis_indices(summary_schema, 2))
    assert stages["moments"]["sensitivity"] == pytest.approx(2 * groups / 400)
    assert sum(event["epsilon"] for event in stages.values()) == pytest.approx(2.0)


# ---------------------------------------------------------------------- candidates
def test_mixed_candidates_are_valid_one_hot_vectors(schema):
    indices = basis_indices(schema, 2)
    points, _, _ = encoded(mixed_frame(300, 5), schema)
    moments = ChebyshevBasis(indices).moments(points) + np.random.default_rng(0).normal(0, 0.05, len(indices))
    candidates = mixed_candidates(schema, indices, moments, 500, np.random.default_rng(1))
    assert candidates.shape == (500, schema.n_coordinates)
    assert (np.abs(candidates[:, :2]) <= 1).all()
    for column in schema.categorical:
        block = candidates[:, schema.block_slice(column.name)]
        assert set(np.unique(block)) <= {0.0, 1.0}
        assert (block.sum(axis=1) == 1).all() if not column.binary else (block.sum(axis=1) <= 1).all()


# ------------------------------------------------------------------------ end to end
def test_fit_and_sample_return_declared_levels_and_bounded_numbers():
    frame = mixed_frame(400, 6)
    # delta > 0: under Laplace noise the release leaves the numeric moments that summary() reads to
    # the histograms (test_a_pure_epsilon_mixed_release_holds_its_cells_and_says_what_it_left_out)
    synth = SmoothSynthesizer(epsilon=4.0, delta=1e-6, seed=7, n_candidates=2000).fit(frame, schema=SCHEMA)
    synthetic = synth.sample(300)
    assert list(synthetic.columns) == NAMES
    assert set(synthetic.sex) <= {"F", "M"} and set(synthetic.job) <= {"a", "b", "c", "other"}
    assert synthetic.age.between(18, 90).all() and synthetic.score.between(0, 1).all()
    report = synth.privacy_report()
    assert report["schema"]["columns"]["job"]["levels"] == ["a", "b", "c"]
    assert isinstance(report["schema"]["rows_other_noisy"], float)
    summary = synth.summary()  # smooth queries on the numeric columns
    assert summary.domain.names == ["age", "score"]
    assert 18 <= summary.answer(lambda rows: rows["age"]) <= 90


def test_a_schema_without_levels_is_a_bounds_file(clinic_like):
    frame, bounds = clinic_like
    content = {"columns": {name: spec if isinstance(spec, dict) else {"type": "continuous", "bounds": spec}
                           for name, spec in bounds.items()}}
    by_schema = SmoothSynthesizer(seed=2).fit(frame, schema=content).sample()
    by_bounds = SmoothSynthesizer(seed=2).fit(frame, bounds=bounds).sample()
    pd.testing.assert_frame_equal(by_schema, by_bounds)


def test_a_schema_or_bounds_file_path_is_read_as_its_content(tmp_path):
    """fit takes the path of a schema or bounds file, as the command line does: the same release
    (seeded) as its content; a missing file is a one-line error naming it."""
    import json

    frame = mixed_frame(300, 3)
    (tmp_path / "schema.json").write_text(json.dumps(SCHEMA))
    by_path = SmoothSynthesizer(seed=4, n_candidates=1000).fit(frame, schema=tmp_path / "schema.json").sample()
    by_content = SmoothSynthesizer(seed=4, n_candidates=1000).fit(frame, schema=SCHEMA).sample()
    pd.testing.assert_frame_equal(by_path, by_content)
    numeric = frame[["age", "score"]]
    bounds = {"age": [18, 90], "score": [0, 1]}
    (tmp_path / "bounds.json").write_text(json.dumps(bounds))
    by_path = SmoothSynthesizer(seed=4).fit(numeric, bounds=str(tmp_path / "bounds.json")).sample()
    pd.testing.assert_frame_equal(by_path, SmoothSynthesizer(seed=4).fit(numeric, bounds=bounds).sample())
    with pytest.raises(SynthDPError, match="schema file '.*nowhere.json' does not exist"):
        SmoothSynthesizer(seed=4).fit(frame, schema=tmp_path / "nowhere.json")


def test_schema_and_bounds_together_are_refused():
    with pytest.raises(SynthDPError, match="either a schema or bounds"):
        SmoothSynthesizer(seed=0).fit(mixed_frame(50, 8), bounds={"age": [0, 1]}, schema=SCHEMA)


# ------------------------------------------------------------------------- marginals
def test_table_marginal_matches_pandas_counts(schema):
    frame = mixed_frame(300, 9)
    table = marginal(frame, ["sex", "job"], schema)
    assert len(table) == 2 * 4 and table.sum() == pytest.approx(1.0)
    job = frame.job.where(frame.job.isin(["a", "b", "c"]), "other")
    counts = pd.crosstab(frame.sex, job).stack() / len(frame)
    for (sex, level), value in counts.items():
        assert table[(sex, level)] == pytest.approx(value)


def test_summary_answers_released_marginals_exactly_without_noise(schema):
    frame = mixed_frame(500, 10)
    indices = basis_indices(schema, 2)
    points, _, _ = encoded(frame, schema)
    summary = MarginalSummary(schema, indices, ChebyshevBasis(indices).moments(points))
    for k in (1, 2):
        errors = marginal_errors(lambda c: marginal(frame, c, schema), summary.marginal, column_sets(schema, k))
        assert errors["worst"] < 1e-12


def test_summary_cells_are_the_marginal_values_in_its_order(schema):
    """cells() is marginal()'s values without the index (the candidates read them so), clipped or raw;
    the noise (epsilon 0.5 on 300 rows) leaves some raw cells negative, so the clip is checked too."""
    frame = mixed_frame(300, 12)
    summary = SmoothSynthesizer(epsilon=0.5, seed=13).fit(frame, schema=SCHEMA, synthesize=False).marginal_summary()
    negative = False
    for columns in [*column_sets(schema, 1), *column_sets(schema, 2), *column_sets(schema, 3)]:
        for clip in (True, False):
            cells = summary.cells(columns, clip=clip)
            assert isinstance(cells, np.ndarray)
            np.testing.assert_array_equal(cells, summary.marginal(columns, clip=clip).to_numpy())
        raw = summary.cells(columns, clip=False)
        negative |= bool((raw < 0).any())
        np.testing.assert_array_equal(summary.cells(columns), np.clip(raw, 0.0, None))
    assert negative


def test_unreleased_cells_are_exact_for_independent_columns_and_within_frechet_bounds(schema):
    """A full product table: 3-way cells are products of the released 1- and 2-way ones."""
    levels = [("F", "M"), ("a", "b", "c", "zz"), ("x", "y")]
    repeats = [(1, 3), (1, 2, 3, 4), (2, 1)]
    rows = [(s, j, c) for (s, rs), (j, rj), (c, rc) in itertools.product(*(zip(lv, rp) for lv, rp in zip(levels, repeats)))
            for _ in range(rs * rj * rc)]
    frame = pd.DataFrame(rows, columns=["sex", "job", "city"]).assign(age=30, score=0.5)[NAMES]
    indices = basis_indices(schema, 2)
    points, _, _ = encoded(frame, schema)
    summary = MarginalSummary(schema, indices, ChebyshevBasis(indices).moments(points))
    assert summary.released_degree == 2
    errors = marginal_errors(lambda c: marginal(frame, c, schema), summary.marginal, [("sex", "job", "city")])
    assert errors["worst"] < 1e-12


def test_noisy_summary_marginals_are_within_the_noise_bound(schema):
    """False-failure rate <= 1e-6: every released cell's Laplace noise is below b ln(R / 1e-6).

    A binary column's first level is a difference of two noisy cells, so the bound doubles;
    clipping negative answers to 0 only moves them towards the truth.
    """
    frame = mixed_frame(2000, 11)
    synth = SmoothSynthesizer(epsilon=8.0, seed=12).fit(frame, schema=SCHEMA, synthesize=False)
    scale = next(e for e in synth.privacy_report()["privacy"]["stages"] if e["stage"] == "moments")["noise_scale"]
    bound = 2 * scale * math.log(synth.release_.plan.n_basis / 1e-6)
    summary = synth.marginal_summary()
    errors = marginal_errors(lambda c: marginal(frame, c, schema), summary.marginal, column_sets(schema, 2))
    assert 0 < errors["worst"] <= bound


def test_clipped_summary_cells_are_shares_however_large_the_noise():
    """Clipped, every cell lies in [0, 1] (a noisy 2-way cell of a tiny table can pass 1); unclipped, the raw answers."""
    summary = SmoothSynthesizer(epsilon=0.05, delta=1e-6, seed=0).fit(
        mixed_frame(60, 1), schema=SCHEMA, synthesize=False).marginal_summary()
    raw, clipped = summary.marginal(["sex", "job"], clip=False), summary.marginal(["sex", "job"])
    assert raw.max() > 1 and raw.min() < 0  # this seed's noise: the clip has work to do
    assert clipped.between(0, 1).all()
    np.testing.assert_allclose(clipped, raw.clip(0, 1))


def test_marginal_summary_round_trips_through_json(tmp_path, schema):
    synth = SmoothSynthesizer(seed=13).fit(mixed_frame(300, 14), schema=SCHEMA, synthesize=False)
    path = tmp_path / "summary.json"
    path.write_text(synth.marginal_summary().to_json())
    loaded = MarginalSummary.load(path)
    pd.testing.assert_series_equal(loaded.marginal(["job", "city"]), synth.marginal_summary().marginal(["job", "city"]))


# ------------------------------------------------------------------------------ CLI
def run_cli(capsys, *args):
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def write_inputs(directory: Path, frame: pd.DataFrame) -> None:
    """The command line's inputs: ``in.csv`` holding ``frame`` and ``schema.json`` holding SCHEMA."""
    frame.to_csv(directory / "in.csv", index=False)
    (directory / "schema.json").write_text(json.dumps(SCHEMA))


def test_cli_generate_summarize_and_marginal(tmp_path, capsys):
    write_inputs(tmp_path, mixed_frame(300, 15))
    code, _, err = run_cli(capsys, "generate", tmp_path / "in.csv", "-o", tmp_path / "out.csv", "--schema",
                           tmp_path / "schema.json", "--seed", 1, "--n-candidates", 1000,
                           "--summary-out", tmp_path / "summary.json", "--quiet")
    assert code == 0, err
    synthetic = pd.read_csv(tmp_path / "out.csv")
    assert list(synthetic.columns) == NAMES and set(synthetic.job) <= {"a", "b", "c", "other"}
    code, out, err = run_cli(capsys, "summarize", tmp_path / "in.csv", "-o", tmp_path / "alone.json", "--schema",
                             tmp_path / "schema.json", "--seed", 1, "--marginal-degree", 3, "--quiet")
    assert code == 0, err
    assert MarginalSummary.load(tmp_path / "alone.json").released_degree == 3
    for source in (["--summary", tmp_path / "summary.json"], ["--table", tmp_path / "out.csv", "--schema",
                                                              tmp_path / "schema.json"]):
        code, out, err = run_cli(capsys, "marginal", *source, "--columns", "sex,city")
        assert code == 0, err
        assert out.splitlines()[0] == "sex,city,fraction" and len(out.splitlines()) == 1 + 2 * 3  # city: x, y, other


def test_cli_refuses_bad_input_in_one_line_without_output(tmp_path, capsys):
    frame = mixed_frame(100, 16)
    frame.loc[0, "sex"] = "PLANTED-LEVEL"
    write_inputs(tmp_path, frame)
    code, out, err = run_cli(capsys, "generate", tmp_path / "in.csv", "-o", tmp_path / "out.csv", "--schema",
                             tmp_path / "schema.json", "--seed", 1)
    assert code == 2
    errors = [line for line in err.splitlines() if "error" in line]
    assert errors == [errors[0]] and errors[0].startswith("synthdp: error: binary column 'sex'")
    assert "PLANTED" not in out + err and not (tmp_path / "out.csv").exists()


def test_a_basis_larger_than_the_candidates_is_refused_for_synthesis_but_not_for_a_summary():
    frame = mixed_frame(100, 17)
    with pytest.raises(SynthDPError, match="lower marginal_degree"):
        SmoothSynthesizer(seed=0, n_candidates=20, marginal_degree=3).fit(frame, schema=SCHEMA)
    synth = SmoothSynthesizer(seed=0, n_candidates=20, marginal_degree=3).fit(frame, schema=SCHEMA, synthesize=False)
    assert synth.marginal_summary().released_degree == 3


# -------------------------------------------------------------------- level discovery
def discovery_schema():
    return {"columns": {**SCHEMA["columns"], "job": {"type": "categorical", "levels": "discover"}}}


def test_level_discovery_keeps_frequent_values_and_spends_its_share():
    frame = mixed_frame(1000, 18)
    synth = SmoothSynthesizer(epsilon=20.0, delta=1e-6, levels_share=0.2, seed=19).fit(
        frame, schema=discovery_schema(), synthesize=False)
    # Laplace(0.5) noise, threshold 1 + 0.5 ln(5e6) = 8.7; the rarest level, zz, has about 50 rows
    assert synth.release_.schema.column("job").levels == ("a", "b", "c", "zz")
    stages = {event["stage"]: event for event in synth.privacy_report()["privacy"]["stages"]}
    assert stages["levels"]["epsilon"] == pytest.approx(4.0) and stages["levels"]["delta"] == pytest.approx(2e-7)
    assert sum(event["epsilon"] for event in stages.values()) == pytest.approx(20.0)


def test_a_value_seen_once_is_kept_with_probability_at_most_delta_over_two():
    """Over 200 seeds none of 5 unique values passes: each does with probability <= delta/2 = 5e-7,
    so this test fails falsely with probability <= 200 * 5 * 5e-7 = 5e-4."""
    frame = mixed_frame(300, 20)
    frame.loc[:4, "job"] = [f"unique-{i}" for i in range(5)]
    table = PrivateTable(frame, ["sex", "job", "city"])
    from synthdp.privacy.ledger import PrivacyLedger
    from synthdp.privacy.noise import SeededNoise
    from synthdp.privacy.release import release_levels

    for seed in range(200):
        kept = release_levels({"job": table.level_counts("job")}, 1.0, 1e-6, PrivacyLedger(1.0, 1e-6),
                              SeededNoise(np.random.default_rng(seed)))["job"]
        assert not any(level.startswith("unique") for level in kept)


def test_seeded_level_discovery_does_not_depend_on_the_rows_order():
    """The same rows in another order (other values first) discover the same levels under one
    seed: each value meets the same noise draw. Seeded and exact (integer counts): it never fails falsely."""
    frame = mixed_frame(400, 24)
    frame["job"] = [f"v{i % 40:02d}" for i in range(len(frame))]  # 40 values of 10 rows: near the threshold
    kept = [SmoothSynthesizer(epsilon=20.0, delta=1e-6, levels_share=0.2, seed=seed).fit(
        rows, schema=discovery_schema(), synthesize=False).release_.schema.column("job").levels
        for seed in (0, 1) for rows in (frame, frame.iloc[::-1])]
    assert kept[0] == kept[1] and kept[2] == kept[3]
    assert 0 < len(kept[0]) < 40  # some values kept and some not: the order had something to change


def test_seeded_level_discovery_does_not_depend_on_the_schema_files_column_order():
    """Two columns to discover, the schema's keys in either order: the same levels under one seed
    (the columns meet the noise in the table's order, as everywhere else in a release). Seeded: no false failures."""
    frame = mixed_frame(400, 25)
    frame["job"] = [f"v{i % 23:02d}" for i in range(len(frame))]  # 17 or 18 rows each: near the threshold (17.1)
    schema = discovery_schema()
    schema["columns"]["city"] = {"type": "categorical", "levels": "discover"}
    backwards = {"columns": dict(reversed(list(schema["columns"].items())))}
    for seed in (0, 1):
        kept = [SmoothSynthesizer(epsilon=20.0, delta=1e-6, levels_share=0.2, seed=seed).fit(
            frame, schema=given, synthesize=False).release_.schema for given in (schema, backwards)]
        assert [s.column("job").levels for s in kept] == [kept[0].column("job").levels] * 2
        assert 0 < len(kept[0].column("job").levels) < 23


def test_level_discovery_needs_a_share_and_delta():
    with pytest.raises(SynthDPError, match="levels_share"):
        SmoothSynthesizer(seed=0).fit(mixed_frame(50, 21), schema=discovery_schema())
    with pytest.raises(SynthDPError, match="delta > 0"):
        SmoothSynthesizer(seed=0, levels_share=0.1).fit(mixed_frame(50, 21), schema=discovery_schema())


def test_interior_point_and_default_solver_reach_the_same_l1_optimum():
    from synthdp.postprocess.lp import solve_l1_fit

    rng = np.random.default_rng(22)
    design, target = rng.uniform(-1, 1, (30, 200)), rng.uniform(-0.5, 0.5, 30)
    default, ipm = solve_l1_fit(design, target), solve_l1_fit(design, target, method="ipm")
    assert ipm.objective == pytest.approx(default.objective, rel=1e-6, abs=1e-9)


def test_values_outside_the_levels_never_reach_an_output(tmp_path, capsys):
    frame = mixed_frame(200, 23)
    frame.loc[5, "job"] = "PLANTED-JOB"
    write_inputs(tmp_path, frame)
    code, out, err = run_cli(capsys, "generate", tmp_path / "in.csv", "-o", tmp_path / "out.csv", "--schema",
                             tmp_path / "schema.json", "--seed", 1, "--n-candidates", 500, "--report",
                             tmp_path / "report.json", "--summary-out", tmp_path / "summary.json")
    assert code == 0, err
    written = "".join((tmp_path / name).read_text() for name in ("out.csv", "report.json", "summary.json"))
    assert "PLANTED" not in written + out + err


def test_released_degree_does_not_change_when_unreleased_cells_are_estimated(schema):
    synth = SmoothSynthesizer(seed=24).fit(mixed_frame(300, 25), schema=SCHEMA, synthesize=False)
    summary = synth.marginal_summary()
    summary.marginal(["sex", "job", "city"])
    assert summary.released_degree == 2


def test_tree_candidates_keep_a_deterministic_pair_of_levels(schema):
    """In mixed_frame every row with job c has city x: exact moments give no candidate (c, y)."""
    indices = basis_indices(schema, 2)
    points, _, _ = encoded(mixed_frame(500, 26), schema)
    candidates = mixed_candidates(schema, indices, ChebyshevBasis(indices).moments(points), 2000,
                                  np.random.default_rng(2))
    decoded = schema.decode(candidates)
    assert (decoded.job == "c").sum() > 100
    assert not ((decoded.job == "c") & (decoded.city == "y")).any()


def pair_and_noise_table(seed: int, noise_sd: float):
    """A 3-level pair (b = a in 90 % of 5 000 rows) beside an independent 40-level column c: its schema,
    its released cells (exact moments plus Gaussian noise of ``noise_sd``) and their summary."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 3, 5000)
    b = np.where(rng.random(5000) < 0.9, a, rng.integers(0, 3, 5000))
    frame = pd.DataFrame({"a": a.astype(str), "b": b.astype(str), "c": rng.integers(0, 40, 5000).astype(str)})
    spec = {"columns": {name: {"type": "categorical", "levels": [str(v) for v in range(k)]}
                        for name, k in (("a", 3), ("b", 3), ("c", 40))}}
    schema = Schema.from_dict(spec, list(frame.columns))
    indices = basis_indices(schema, 2)
    points, _, _ = encoded(frame, schema)
    moments = ChebyshevBasis(indices).moments(points) + rng.normal(0.0, noise_sd, len(indices))
    return schema, indices, moments, MarginalSummary(schema, indices, moments)


@pytest.mark.parametrize("seed", range(5))
def test_a_noise_only_table_is_no_tree_edge_and_a_strong_pair_is(seed):
    """A 40-level column independent of a 3-level pair: with noise of sd 0.004 per cell the clipped
    tables of c hold spurious mutual information (what made adult's native-country a parent), but
    their dependence does not stand out of the noise, so c gets no parent and is drawn from its one-way
    table, while the pair keeps its edge. Deterministic (seeded); the noise-only z-scores are about
    standard normal, so a fresh draw would put c under a parent with probability about 2 x 0.15 %."""
    schema, indices, moments, summary = pair_and_noise_table(seed, 0.004)
    rows = len(schema.column("a").all_levels)  # its levels and "other"
    assert candidates_module._mutual_information(summary.marginal(["a", "c"]).to_numpy().reshape(rows, -1)) > 0.01
    parents = candidates_module.tree_parents(schema, summary, ["a"], 0.004, "gaussian")
    assert parents == {"b": "a", "c": None}
    for names in (["a", "c"], ["b", "c"]):
        raw = summary.marginal(names, clip=False).to_numpy().reshape(rows, -1)
        assert candidates_module.table_dependence(raw, 0.004) < candidates_module.EDGE_Z
    raw = summary.marginal(["a", "b"], clip=False).to_numpy().reshape(rows, -1)
    assert candidates_module.table_dependence(raw, 0.004) > 10 * candidates_module.EDGE_Z
    drawn = candidates_module.tree_levels(schema, indices, moments, 20_000, np.random.default_rng(seed), None, 0.004)
    assert np.mean(drawn["a"] == drawn["b"]) > 0.85  # the pair: 0.93 of the rows agree
    released = np.clip(summary.marginal(["c"]).to_numpy(), 0, None)
    frequencies = np.bincount(drawn["c"], minlength=len(released)) / 20_000
    # c from its one-way table: each level within 5 binomial sd (20 000 draws) of the table's frequency
    expected = released / released.sum()
    assert np.all(np.abs(frequencies - expected) <= 5 * np.sqrt(expected * (1 - expected) / 20_000) + 1e-12)


def test_a_design_study_can_take_every_table_as_an_edge():
    """StudyOptions(tree_edges=False), the rule before: the noise-only column gets a parent again."""
    assert run.StudyOptions().candidate_options().edge_z == candidates_module.EDGE_Z
    edge_z = run.StudyOptions(tree_edges=False).candidate_options().edge_z
    schema, _, _, summary = pair_and_noise_table(0, 0.004)
    parents = candidates_module.tree_parents(schema, summary, ["a"], 0.004, "gaussian", edge_z)
    assert parents["b"] == "a" and parents["c"] in ("a", "b")


def test_raking_gives_a_tree_table_its_columns_one_way_tables():
    noisy = np.array([[0.30, 0.02, -0.01], [0.01, 0.25, 0.04], [0.03, -0.02, 0.20]])
    rows, columns = np.array([0.3, 0.3, 0.4]), np.array([0.35, 0.25, 0.4])
    raked = candidates_module._raked(noisy, rows, columns)
    np.testing.assert_allclose(raked.sum(axis=1), rows, atol=1e-6)
    np.testing.assert_allclose(raked.sum(axis=0), columns, atol=1e-6)
    assert raked.min() >= 0 and raked[0, 2] < 1e-6  # a clipped cell stays (nearly) empty


def test_signal_share_is_one_without_noise_and_small_for_noise_alone():
    dependent = np.array([[0.2, 0.0], [0.0, 0.3], [0.4, 0.1]])
    assert candidates_module.signal_share(dependent, 0.0) == 1.0
    assert candidates_module.signal_share(dependent, 0.002) > 0.99
    schema, _, _, summary = pair_and_noise_table(0, 0.004)
    rows = len(schema.column("a").all_levels)
    noise_only = summary.marginal(["a", "c"], clip=False).to_numpy().reshape(rows, -1)
    assert candidates_module.signal_share(noise_only, 0.004) < 0.2


def test_a_joined_column_follows_its_parents_table_and_keeps_its_numeric_tie(monkeypatch):
    """relationship x sex on adult, in small: r (4 levels) orders a numeric x (means 0, 1, 2, 3), so it
    joins the copula in that order; a binary s is 1 on r = a and c, 0 on b and d (97 % of the rows),
    tied to x too, so it joins as well. One latent correlation cannot hold that alternating map: drawn
    from its latent alone s agrees with r in about 0.6 of the candidates. Drawn from its table with r,
    its latent uniform as the random number, it agrees in over 0.95, and x still orders r. Seeded
    (seed 5, 20 000 rows at (4, 1e-10)); the candidates before the LP."""
    rng = np.random.default_rng(5)
    n = 20_000
    codes = rng.integers(0, 4, n)
    s = np.where(rng.random(n) < 0.97, codes % 2 == 0, codes % 2 == 1).astype(int)
    frame = pd.DataFrame({"x": np.clip(rng.normal(codes.astype(float), 0.7), -3, 6).round(3),
                          "r": np.array(["a", "b", "c", "d"])[codes], "s": np.array(["F", "M"])[s]})
    spec = {"columns": {"x": [-3, 6], "r": {"type": "categorical", "levels": ["a", "b", "c", "d"]},
                        "s": {"type": "binary", "levels": ["F", "M"]}}}
    config = run.SynthConfig(epsilon=4.0, delta=1e-10, seed=5)
    with pytest.warns(Warning):
        release = run.fit(config, frame, schema=spec).release

    def agreement() -> tuple[float, pd.Series]:
        candidates = candidates_module.make_candidates("mixed", release, np.random.default_rng(0), config, None)
        decoded = release.schema.decode(candidates)
        return float((decoded.r.isin(["a", "c"]) == (decoded.s == "M")).mean()), decoded.groupby("r").x.mean()

    coupled, means = agreement()
    assert coupled > 0.95 and means["a"] < means["b"] < means["c"] < means["d"]
    monkeypatch.setattr(candidates_module, "COUPLE_SHARE", 2.0)  # never: the latent draw alone
    latent_only, _ = agreement()
    assert latent_only < 0.8


def test_table_dependence_follows_the_noise_kind_and_is_infinite_without_noise():
    independent = np.outer([0.2, 0.3, 0.5], [0.6, 0.4])
    dependent = np.array([[0.2, 0.0], [0.0, 0.3], [0.4, 0.1]])
    assert candidates_module.table_dependence(independent, 0.0) == 0.0
    assert candidates_module.table_dependence(dependent, 0.0) == math.inf
    for kind in ("gaussian", "laplace"):
        assert candidates_module.table_dependence(dependent, 0.01, kind) > 10 * candidates_module.EDGE_Z
        assert abs(candidates_module.table_dependence(independent, 0.01, kind)) < candidates_module.EDGE_Z


@pytest.mark.parametrize("options, data", [({"engine": "dask"}, "frame"), ({"chunk_rows": 10}, "frame"),
                                           ({}, "parquet")])
def test_mixed_tables_run_through_every_engine(options, data, tmp_path):
    """Formerly refused: a mixed table is read by the Dask engine, in chunks, or from Parquet
    (the releases agree with the in-memory one: tests/test_engines.py)."""
    frame = mixed_frame(60, 4)
    source = frame
    if data == "parquet":
        source = tmp_path / "t.parquet"
        frame.to_parquet(source)
    synth = SmoothSynthesizer(seed=1, n_candidates=200, **options).fit(source, schema=SCHEMA)
    expected = "dask" if options.get("engine") == "dask" else "numpy"
    assert synth.engine_["engine"] == expected and set(synth.sample(50).columns) == set(NAMES)


def test_a_mixed_table_from_a_csv_path(tmp_path):
    path = tmp_path / "t.csv"
    mixed_frame(80, 5).to_csv(path, index=False)
    synthetic = SmoothSynthesizer(delta=1e-6, seed=2).fit(str(path), schema=SCHEMA).sample(50)
    assert list(synthetic.columns) == NAMES and set(synthetic["sex"]) <= {"F", "M"}


def test_mixed_tables_tilt_the_lp_optimum_instead_of_blending():
    synth = SmoothSynthesizer(delta=1e-6, seed=3).fit(mixed_frame(300, 6), schema=SCHEMA)
    lp = synth.privacy_report()["lp"]
    assert lp["blend"] > 0 and lp["uniform_share"] == 0.0 and "blend" not in lp["solver"]
    assert lp["reweighting"] == "tilt" and lp["solver"].endswith("+ tilt")
    assert np.count_nonzero(synth.lp_.weights) == synth.config.n_candidates  # a tilt keeps every candidate


def test_spread_on_a_mixed_table_keeps_the_fit_within_its_tolerance_and_valid_levels():
    frame = mixed_frame(400, 1)
    fits = {spread: SmoothSynthesizer(epsilon=1.0, seed=0, spread=spread, tilt=0, n_candidates=1000).fit(
        frame, schema=SCHEMA) for spread in (0.0, 0.1)}
    optimum, spread = fits[0.0], fits[0.1]
    release = spread.release_  # the same seed: the same release and optimum
    # the expected l1 norm of the noise of the LP's rows (moments and histogram cells, precision-weighted)
    noise_l1 = run.mixed_design(release, ChebyshevBasis(release.basis_indices), spread.support_points_)[2]
    tolerance = 0.1 * noise_l1
    assert optimum.lp_.objective <= spread.lp_.objective <= optimum.lp_.objective + tolerance + 1e-7
    assert np.count_nonzero(spread.lp_.weights) > np.count_nonzero(optimum.lp_.weights)
    synthetic = spread.sample()
    assert set(synthetic.sex) <= {"F", "M"} and set(synthetic.job) <= {"a", "b", "c", "other"}


# ------------------------------------------------------------------ numeric columns of mixed tables
def test_an_integer_spike_keeps_its_value_and_the_numeric_stages_are_in_the_report():
    """hours = 40 on 45 % of the rows (the rest uniform on 1..99): the integer column is counted
    value by value, so the synthetic share at exactly 40 stays near .45 (equal-width bins would
    spread it over the 6 values of its bin: about .08). The share's sampling sd is .009 at
    3000 rows and its noise sd about .002 (a count's noise of ~7 over 3000 rows), so a
    tolerance of .06 is over 6 sd: a false failure has probability below 1e-8 for the release
    (the tilt keeps each cell within one noise sd of its release)."""
    rng = np.random.default_rng(5)
    n = 3000
    hours = np.where(rng.random(n) < 0.45, 40, rng.integers(1, 100, n))
    frame = pd.DataFrame({"hours": hours, "group": rng.choice(["u", "v", "w"], n)})
    schema = {"columns": {"hours": {"type": "integer", "bounds": [1, 99]},
                          "group": {"type": "categorical", "levels": ["u", "v", "w"]}}}
    synth = SmoothSynthesizer(epsilon=1.0, delta=1e-6, seed=7).fit(frame, schema=schema)
    synthetic = synth.sample()
    assert abs((synthetic.hours == 40).mean() - (hours == 40).mean()) < 0.06
    stages = {event["stage"]: event for event in synth.privacy_report()["privacy"]["stages"]}
    assert "one cell per value" in stages["marginals"]["released"]
    assert stages["marginals"]["sensitivity"] == pytest.approx(math.sqrt(2))  # L2 sqrt(2d), d = 1 numeric column


def test_a_strong_numeric_pair_of_a_mixed_table_is_released_and_kept():
    """Two numeric columns with correlation .9 beside a categorical one: the plan releases their
    pairs (stage "correlation", sensitivity of d = 2 numeric columns) and the synthetic table keeps
    at least .6 of the correlation (the pair's released correlation has noise sd ~.01 at 4000 rows,
    and the copula plus tilt measured .85-.95 of such pairs: a false failure would need an error
    of 30 sd)."""
    from synthdp.privacy.sensitivity import score_products_sensitivity
    from synthdp.stats.scores import default_clip_norm_sq

    rng = np.random.default_rng(6)
    n = 4000
    x = rng.normal(size=n)
    y = 0.9 * x + np.sqrt(1 - 0.81) * rng.normal(size=n)
    frame = pd.DataFrame({"x": x, "y": np.exp(y / 2), "g": rng.choice(["a", "b"], n)})  # y skewed
    schema = {"columns": {"x": [-5, 5], "y": [0, 15], "g": {"type": "binary", "levels": ["a", "b"]}}}
    synth = SmoothSynthesizer(epsilon=1.0, delta=1e-6, seed=8).fit(frame, schema=schema)
    stages = {event["stage"]: event for event in synth.privacy_report()["privacy"]["stages"]}
    assert stages["correlation"]["sensitivity"] == pytest.approx(score_products_sensitivity(n, 2, default_clip_norm_sq(2))[1])
    synthetic = synth.sample()
    real_r, synth_r = frame.x.corr(frame.y), synthetic.x.corr(synthetic.y)
    assert synth_r > 0.6 * real_r


def test_a_mostly_numeric_mixed_table_solves_its_lp_with_dense_columns():
    """Where the numeric moments make W mostly non-zero (six numeric columns, one binary), the LP
    runs by column generation on dense columns (3x faster than the sparse interior point on PKS
    with its sex column, measured); a table of mostly categorical cells keeps the sparse LP."""
    rng = np.random.default_rng(9)
    n = 800
    frame = pd.DataFrame({f"x{j}": rng.normal(size=n) for j in range(6)})
    frame["g"] = rng.choice(["a", "b"], n)
    schema = {"columns": {**{f"x{j}": [-4, 4] for j in range(6)}, "g": {"type": "binary", "levels": ["a", "b"]}}}
    # delta > 0: under Laplace noise the numeric moments are left to the histograms (mixed_numeric_moments)
    dense = SmoothSynthesizer(delta=1e-6, seed=2, n_candidates=500).fit(frame, schema=schema)
    levels = [f"l{k}" for k in range(12)]
    wide = pd.DataFrame({name: rng.choice(levels, n) for name in ("p", "q", "r")})
    wide["x"] = rng.normal(size=n)
    wide_schema = {"columns": {**{name: {"type": "categorical", "levels": levels} for name in ("p", "q", "r")},
                               "x": [-4, 4]}}
    sparse = SmoothSynthesizer(seed=2, n_candidates=1000).fit(wide, schema=wide_schema)
    assert "column generation" in dense.lp_.solver and dense.lp_.solver.endswith("+ tilt")
    assert "column generation" not in sparse.lp_.solver
    assert set(dense.sample(100)["g"]) <= {"a", "b"}


def exact_binary_latent(frame: pd.DataFrame, content: dict, noise_sd: float):
    """binary_latent on the exact moments of ``frame`` (one numeric column first, then binary ones)."""
    from synthdp.postprocess.candidates import binary_latent

    schema = Schema.from_dict(content, list(frame.columns))
    indices = basis_indices(schema, 2)
    points, _, _ = encoded(frame, schema)
    moments = ChebyshevBasis(indices).moments(points)
    numeric = ~indices[:, 1:].any(axis=1)
    center, covariance = moment_gaussian(indices[numeric, :1], moments[numeric])
    return binary_latent(schema, indices, moments, center, covariance, np.eye(1), noise_sd)


def test_binary_latent_recovers_the_latent_correlation_of_a_threshold_model():
    """x ~ N(0, 1) and a binary column b = 1[z > t] with corr(x, z) = .7 and P(b = 1) = .3, from
    exact moments of 200 000 rows: binary_latent's biserial correlation recovers .7 (the formula
    is exact for a normal x; x's bounds clip 0.006 % of the rows, and the sampling error of the
    moments is ~.003), and a binary column independent of x gets 0 (below two noise sd).

    The threshold is checked exactly: Phi^-1(1 - p) of the table's own share p. False-failure
    rate (the seed is fixed, so the test is deterministic): over 300 seeds the recovered
    correlation had sd .002 (mean .700), so 0.02 is 10 sd; the independent column's covariances
    with x and b have sampling sd .0003 and .0005 against the line of two noise sd (.004), over 8
    sd: a normal approximation puts each false failure below 1e-15 (none in the 300 seeds)."""
    rng = np.random.default_rng(22)
    n = 200_000
    x = rng.normal(size=n)
    z = 0.7 * x + np.sqrt(1 - 0.49) * rng.normal(size=n)
    cut = NormalDist().inv_cdf(0.7)  # P(b = 1) = P(z > cut) = .3
    frame = pd.DataFrame({"x": x, "b": np.where(z > cut, "yes", "no"), "u": rng.choice(["no", "yes"], n)})
    content = {"columns": {"x": [-4, 4], "b": {"type": "binary", "levels": ["no", "yes"]},
                           "u": {"type": "binary", "levels": ["no", "yes"]}}}
    binaries = exact_binary_latent(frame, content, 0.002)
    names, joint, thresholds = binaries.names, binaries.correlation, binaries.thresholds
    share = (frame["b"] == "yes").mean()
    assert names == ["b", "u"] and thresholds[0] == pytest.approx(NormalDist().inv_cdf(1 - share), abs=1e-9)
    assert binaries.frequencies[0] == pytest.approx(share, abs=1e-9)
    assert joint[0, 1] == pytest.approx(0.7, abs=0.02)
    assert joint[0, 2] == 0.0 and joint[1, 2] == 0.0


def test_the_tetrachoric_correlation_inverts_the_orthant_probability():
    from scipy import stats

    from synthdp.postprocess.candidates import _tetrachoric

    for r in (-0.6, 0.0, 0.45, 0.9):
        first, second = 0.3, -0.5
        both = stats.multivariate_normal(mean=[0, 0], cov=[[1, r], [r, 1]]).cdf([-first, -second])
        assert _tetrachoric(float(both), first, second) == pytest.approx(r, abs=2e-3)


def test_at_most_max_joined_binaries_are_joined_to_the_copula():
    """Twenty binary columns: the MAX_JOINED_BINARIES most correlated with the numeric column are
    joined (the one that follows x among them), the others stay with the tree."""
    from synthdp.postprocess.candidates import MAX_JOINED_BINARIES

    rng = np.random.default_rng(23)
    n = 4000
    x = rng.normal(size=n)
    frame = pd.DataFrame({"x": x, **{f"b{k}": rng.choice(["no", "yes"], n) for k in range(19)},
                          "t": np.where(x > 0, "yes", "no")})
    content = {"columns": {"x": [-4, 4], **{name: {"type": "binary", "levels": ["no", "yes"]}
                                             for name in frame.columns if name != "x"}}}
    binaries = exact_binary_latent(frame, content, 0.005)
    names, joint, thresholds = binaries.names, binaries.correlation, binaries.thresholds
    assert len(names) == MAX_JOINED_BINARIES == len(thresholds) == len(binaries.coordinates) == len(binaries.frequencies)
    assert joint.shape == (17, 17) and "t" in names
    assert joint[0, 1 + names.index("t")] > 0.9


def spy_on_ordinal_latent(monkeypatch) -> dict:
    """A dict whose "result" is the last (ordinals, correlation) that ordinal_latent returned."""
    from synthdp.postprocess import candidates

    captured: dict = {}
    original = candidates.ordinal_latent

    def spy(*args, **kwargs):
        captured["result"] = original(*args, **kwargs)
        return captured["result"]

    monkeypatch.setattr(candidates, "ordinal_latent", spy)
    return captured


def test_a_categorical_function_of_a_numeric_column_follows_it_level_for_level(monkeypatch):
    """c is x's decile (its levels listed out of order), u is independent of x: ordinal_latent joins c
    to the copula in x's order with a latent correlation near 1 and leaves u to the tree, so more
    synthetic rows keep c = decile of x. Seeded runs at (1, 10^-10), 20 000 rows: .42-.47 of them
    at seeds 5-7, against .30-.36 before the join (c drawn along the tree, tied to x only by the
    tilt's means per level); the bound .40 lies between."""
    captured = spy_on_ordinal_latent(monkeypatch)
    rng = np.random.default_rng(31)
    n = 20_000
    x = rng.normal(size=n)
    cuts = np.quantile(x, np.arange(1, 10) / 10)
    names = np.array([f"d{k}" for k in range(10)])
    listed = [str(name) for name in rng.permutation(names)]
    frame = pd.DataFrame({"x": x, "y": rng.normal(size=n), "c": names[np.searchsorted(cuts, x)],
                          "u": rng.choice(["a", "b", "c", "d"], n)})
    schema = {"columns": {"x": [-4, 4], "y": [-4, 4], "c": {"type": "categorical", "levels": listed},
                          "u": {"type": "categorical", "levels": ["a", "b", "c", "d"]}}}
    synth = SmoothSynthesizer(epsilon=1, delta=1e-10, seed=5).fit(frame, schema=schema)
    ordinals, joint = captured["result"]
    assert [ordinal.name for ordinal in ordinals] == ["c"]
    order = [listed[code] for code in ordinals[0].order if code < 10]  # "other" (code 10, empty) goes anywhere
    deciles = [int(name[1:]) for name in order]  # x's order, but for the middle deciles, whose means lie
    assert np.corrcoef(deciles, np.arange(10))[0, 1] > 0.95  # within the noise of x's overall mean
    assert joint[0, 2] > 0.9 and abs(joint[1, 2]) < 0.1
    sample = synth.sample(20_000)
    kept = (sample["c"].to_numpy() == names[np.searchsorted(cuts, sample["x"].to_numpy())]).mean()
    assert kept > 0.4


def test_the_join_ratio_of_a_design_study_reaches_ordinal_latent(monkeypatch):
    """StudyOptions(join_ratio=r) is the rule's threshold: c, x's quartile, joins the copula at the
    default and at r = 0, and no column joins at r = 1.01 (a correlation ratio is at most 1)."""
    from synthdp.config import SynthConfig
    from synthdp.pipeline.run import StudyOptions, fit

    captured = spy_on_ordinal_latent(monkeypatch)
    rng = np.random.default_rng(32)
    x = rng.normal(size=5000)
    names = np.array(["q0", "q1", "q2", "q3"])
    frame = pd.DataFrame({"x": x, "y": rng.normal(size=5000),
                          "c": names[np.searchsorted(np.quantile(x, [0.25, 0.5, 0.75]), x)]})
    schema = {"columns": {"x": [-4, 4], "y": [-4, 4], "c": {"type": "categorical", "levels": list(names)}}}
    joined = {}
    for ratio in (None, 0.0, 1.01):
        study = None if ratio is None else StudyOptions(join_ratio=ratio)
        fit(SynthConfig(epsilon=1, delta=1e-10, seed=3), frame, schema=schema, study=study)
        joined[ratio] = [ordinal.name for ordinal in captured["result"][0]]
    assert joined == {None: ["c"], 0.0: ["c"], 1.01: []}


def test_a_spiky_column_and_rare_levels_make_no_link_out_of_noise(monkeypatch):
    """g is 0 in 92 % of the rows (capital-gain's shape) and w, independent of it, has rare levels:
    at epsilon = 1 their noisy means per level must not join w to the copula (rare levels' means and
    the spike's tiny latent covariance are noise; adult's race and native-country did before the
    correlation-ratio cap). Seeded; the column joins in none of seeds 0-2 (checked), so a spurious
    join fails here."""
    captured = spy_on_ordinal_latent(monkeypatch)
    rng = np.random.default_rng(41)
    n = 30_000
    gain = np.where(rng.random(n) < 0.92, 0.0, rng.exponential(20.0, n))
    levels = ["w1", "w2", "w3", "w4", "w5", "w6"]
    frame = pd.DataFrame({"g": np.minimum(gain, 100.0), "h": rng.normal(40, 10, n),
                          "w": rng.choice(levels, n, p=[0.85, 0.09, 0.03, 0.015, 0.01, 0.005])})
    schema = {"columns": {"g": [0, 100], "h": [0, 100], "w": {"type": "categorical", "levels": levels}}}
    for seed in range(3):
        SmoothSynthesizer(epsilon=1, delta=1e-10, seed=seed).fit(frame, schema=schema)
        assert captured["result"][0] == []



def test_posterior_means_keep_clear_levels_and_pull_noisy_ones_toward_the_mean():
    """Empirical Bayes means of the levels (synthdp.postprocess.candidates._posterior_means):
    without noise each level keeps its offset; a level of frequency 0 sits at the mean; with
    noise every offset shrinks, the rare levels (noise / p_l large) the most, none changes sign."""
    from synthdp.postprocess.candidates import _posterior_means

    p = np.array([0.5, 0.3, 0.15, 0.05, 0.0])
    offsets = np.array([-0.2, 0.1, 0.3, 0.4, 0.0])
    deviation = p * offsets
    np.testing.assert_allclose(_posterior_means(deviation, 1e-12, p), offsets, atol=1e-9)
    shrunk = _posterior_means(deviation, 0.01, p)
    assert shrunk[4] == 0.0
    factors = shrunk[:4] / offsets[:4]
    assert np.all((factors > 0) & (factors < 1))
    assert np.all(np.diff(factors) < 0)  # rarer level, more shrinkage (p decreasing here)


def test_ranking_levels_by_posterior_means_beats_putting_unclear_levels_at_the_mean():
    """adult's education: 16 levels of frequencies 0.2-32 %, their means spread over the unit
    range, each level's E[x 1{l}] released with noise sd 0.005 (the size of adult's at
    (1, 10^-10)). Over 200 seeded draws, the Kendall tau between the true order and the order
    of the posterior means is .55 on average, against .26 for the thresholded rule (unclear
    levels at the mean, tied); per draw the difference has sd about .08, so its mean over 200
    has standard error .006 and the bound .15 lies over 20 of them below the measured .29:
    a false failure has probability below 1e-20."""
    from scipy import stats

    from synthdp.postprocess.candidates import _posterior_means

    p = np.array([2, 5, 10, 20, 16, 29, 36, 13, 323, 224, 42, 33, 164, 53, 18, 13], float)
    p /= p.sum()
    truth = np.linspace(-0.9, 0.9, 16)
    sd = np.sqrt(p @ (truth - p @ truth) ** 2)
    noise = 0.005
    rng = np.random.default_rng(12)
    gains = []
    for _ in range(200):
        deviation = p * (truth - p @ truth) + rng.normal(0.0, noise, 16)
        unclear = (np.abs(deviation) < 2 * noise) | (noise > 0.5 * sd * p)  # the thresholded rule
        thresholded = np.where(unclear, 0.0, deviation) / p
        gains.append(stats.kendalltau(truth, _posterior_means(deviation, noise, p)).statistic
                     - stats.kendalltau(truth, thresholded).statistic)
    assert np.mean(gains) > 0.15


def test_the_tilt_of_a_mixed_table_weighs_three_candidates_per_moment_and_the_l1_fit_its_c():
    """Plan.tilt_candidates = max(C, 3R) where a mixed table is tilted (none with a spread); the l1
    fit takes the first C of the drawn candidates, the tilt all of them."""
    from synthdp.config import SynthConfig
    from synthdp.pipeline.plan import TILT_CANDIDATES_PER_MOMENT, make_plan

    config = SynthConfig(epsilon=1.0, n_candidates=1000)
    plan = make_plan(config, 500, 12, True, mixed_basis=(700, 40), numeric_columns=2)
    assert plan.tilt_candidates == TILT_CANDIDATES_PER_MOMENT * 700 == plan.tilted_candidates
    assert plan.to_dict()["tilt_candidates"] == 2100 and plan.to_dict()["C"] == 1000
    spread = make_plan(SynthConfig(epsilon=1.0, n_candidates=1000, spread=0.1), 500, 12, True,
                       mixed_basis=(700, 40), numeric_columns=2)
    assert spread.tilted_candidates == 1000 and "tilt_candidates" not in spread.to_dict()
    few = make_plan(config, 500, 12, True, mixed_basis=(200, 40), numeric_columns=2)
    assert few.tilted_candidates == 1000 and "tilt_candidates" not in few.to_dict()  # 3R below C

    synth = SmoothSynthesizer(epsilon=2.0, delta=1e-6, seed=6, n_candidates=100).fit(mixed_frame(400, 7),
                                                                                    schema=SCHEMA)
    plan = synth.release_.plan
    assert plan.tilted_candidates == 3 * plan.n_basis > plan.n_candidates == 100
    assert synth.model_.support_points.shape[0] <= plan.tilted_candidates
    assert set(synth.sample(100)["job"]) <= {"a", "b", "c", "other"}


def test_the_candidates_are_drawn_on_one_blas_thread_whatever_the_ambient_limit(monkeypatch):
    """A seeded release's candidates must not depend on how many BLAS threads the process has (the
    machine's cores, or a limit another step left in place): adult's seeded candidates differed
    between one thread and two (a golden case that changed now and then). The candidate stage runs
    on one BLAS thread, under any ambient limit, and gives the same draws."""
    from threadpoolctl import threadpool_info, threadpool_limits

    from synthdp.config import SynthConfig
    from synthdp.pipeline.run import fit

    seen, drawn = [], []
    make = run.make_candidates

    def spy(*args, **kwargs):
        seen.append({info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas"})
        drawn.append(make(*args, **kwargs))
        return drawn[-1]

    monkeypatch.setattr(run, "make_candidates", spy)
    frame = mixed_frame(2000, 4)
    for ambient in (1, 2):
        with threadpool_limits(ambient, user_api="blas"):
            fit(SynthConfig(epsilon=1, delta=1e-10, seed=5), frame, schema=SCHEMA)
    assert seen == [{1}, {1}] or not threadpool_info()  # no BLAS found: nothing to limit
    assert np.array_equal(drawn[0], drawn[1])


# ------------------------------------------------------------- Laplace noise: the cells only
def test_the_basis_leaves_out_the_numeric_moments_and_means_per_level_on_request(schema):
    full = basis_indices(schema, 2)
    d = schema.d_numeric
    numeric_part, indicator_part = full[:, :d].any(axis=1), full[:, d:].any(axis=1)
    assert (numeric_part & ~indicator_part).any() and (numeric_part & indicator_part).any()  # both kinds held
    cells = basis_indices(schema, 2, numeric_moments=False)
    assert not cells[:, :d].any()
    assert np.array_equal(cells, full[~numeric_part])  # the cells themselves unchanged, in order
    assert groups_count(schema, cells) < groups_count(schema, full)


def test_only_laplace_noise_leaves_numeric_moments_to_the_histograms_and_pairs():
    """Under Gaussian noise, or for a summary, the basis keeps everything; under Laplace noise the
    means per level go, and the own moments too wherever the histograms hold the numeric columns."""
    from synthdp.config import SynthConfig
    from synthdp.pipeline.plan import mixed_numeric_moments

    gaussian, laplace = SynthConfig(epsilon=1.0, delta=1e-10), SynthConfig(epsilon=1.0)
    assert mixed_numeric_moments(gaussian, 6) is True
    assert mixed_numeric_moments(laplace, 6, synthesize=False) is True
    assert mixed_numeric_moments(laplace, 0) is True
    assert mixed_numeric_moments(laplace, 6) is False
    assert mixed_numeric_moments(SynthConfig(epsilon=1.0, delta=1e-10, noise="laplace"), 6) is False


def test_histograms_get_a_groups_noise_where_the_moments_hold_only_cells():
    """Where the moments hold only the cells (G groups), each of the d histograms gets at least the
    noise of one group: a share of at least (1 - correlation) d / (d + G); never below the default,
    never where the user sets the share or the moments hold the numeric columns too."""
    from synthdp.config import SynthConfig
    from synthdp.pipeline.plan import MIXED_MARGINALS_SHARE, make_plan, mixed_shares

    config = SynthConfig(epsilon=1.0)
    few_cells = mixed_shares(config, 5000, 22, 1.0, cell_groups=1)
    assert few_cells["marginals"] == pytest.approx((1 - few_cells["correlation"]) * 22 / 23)
    assert mixed_shares(config, 5000, 6, 1.0, cell_groups=75)["marginals"] == MIXED_MARGINALS_SHARE
    assert mixed_shares(config, 5000, 22, 1.0)["marginals"] == MIXED_MARGINALS_SHARE
    assert mixed_shares(SynthConfig(epsilon=1.0, marginals_share=0.3), 5000, 22, 1.0, cell_groups=1)["marginals"] == 0.3
    plan = make_plan(config, 5000, 30, bounds_are_public=True, mixed_basis=(3, 1), numeric_columns=22,
                     numeric_moments=False)
    assert plan.budget.share("marginals") == pytest.approx(few_cells["marginals"])
    held = make_plan(config, 5000, 30, bounds_are_public=True, mixed_basis=(300, 250), numeric_columns=22)
    assert held.budget.share("marginals") == MIXED_MARGINALS_SHARE


def test_a_pure_epsilon_mixed_release_holds_its_cells_and_says_what_it_left_out():
    """At pure epsilon a mixed table whose numeric pairs are released keeps only the cells in its
    moments (G = the categorical tables), states it in the report, and still samples every column:
    a strong numeric pair (r = .9, 20 000 rows; its released correlation has noise sd ~.03 at
    epsilon = 1) keeps at least half its strength (a false failure needs an error of over 10 sd)."""
    rng = np.random.default_rng(12)
    n = 20_000
    x = rng.normal(size=n)
    y = 0.9 * x + np.sqrt(1 - 0.81) * rng.normal(size=n)
    frame = pd.DataFrame({"x": x, "y": y, "g": np.where(x + rng.normal(size=n) > 0, "b", "a"),
                          "h": rng.choice(["u", "v", "w"], n)})
    spec = {"columns": {"x": [-5, 5], "y": [-5, 5], "g": {"type": "binary", "levels": ["a", "b"]},
                        "h": {"type": "categorical", "levels": ["u", "v", "w"]}}}
    synth = SmoothSynthesizer(epsilon=1.0, seed=4).fit(frame, schema=spec)
    release = synth.release_
    assert not release.basis_indices[:, :2].any()
    assert groups_count(release.schema, release.basis_indices) == 3  # g, h and g x h
    stages = {event["stage"]: event for event in synth.privacy_report()["privacy"]["stages"]}
    assert stages["moments"]["sensitivity"] == pytest.approx(2 * 3 / n)
    assert "own moments and means per level left out" in stages["moments"]["released"]
    assert {"marginals", "correlation"} <= set(stages)
    assert not release.plan.lp_fits_pairs  # the copula carries the pairs, as for a numeric table
    synthetic = synth.sample()
    assert set(synthetic.h) <= {"u", "v", "w", "other"} and synthetic.x.between(-5, 5).all()
    assert synthetic.x.corr(synthetic.y) > 0.45
    with pytest.raises(SynthDPError, match="holds no moments of the numeric columns"):
        synth.summary()
    assert synth.marginal_summary().marginal(["g", "h"]).shape[0] > 0  # the cells are there


def test_level_cells_apart_where_the_moments_are_noise():
    """Where a mixed table's moments are noise at the share left to them (G groups' noise sd
    above MOMENT_NOISE_LIMIT), the moments keep NOISY_MOMENTS_SHARE and the one-way tables of
    every column take the rest but the pairs', in proportion to their columns; not on a large
    table, not where the moments are the one-way cells alone (G = k), not with a marginals_share."""
    from synthdp.config import SynthConfig
    from synthdp.pipeline.plan import (
        LEVEL_CELLS,
        MIXED_MARGINALS_SHARE,
        MOMENT_NOISE_LIMIT,
        NOISY_MOMENTS_SHARE,
        mixed_shares,
        mixed_split,
    )
    from synthdp.privacy.budget import Budget

    config = SynthConfig(epsilon=1.0, delta=1e-10)
    small = mixed_shares(config, 303, 5, 1.0, groups=112, level_columns=11)  # heart_cleveland's shape
    one_way = 1 - NOISY_MOMENTS_SHARE - small["correlation"]
    assert math.isclose(small["marginals"], one_way * 5 / 16) and math.isclose(small[LEVEL_CELLS], one_way * 11 / 16)
    moments = Budget(0.0, 0.0, 1.0, 1e-10, "gdp", (("moments", 0.8),)).stage("moments")
    assert moments.means_noise_sd(112, 303) > MOMENT_NOISE_LIMIT  # why: the cells would be noise
    large = mixed_shares(config, 32561, 6, 1.0, groups=126, level_columns=9)  # adult's shape
    assert LEVEL_CELLS not in large and large["marginals"] == MIXED_MARGINALS_SHARE
    assert LEVEL_CELLS not in mixed_shares(config, 303, 5, 1.0, groups=11, level_columns=11)  # G = k
    assert LEVEL_CELLS not in mixed_shares(SynthConfig(epsilon=1.0, delta=1e-10, marginals_share=0.3), 303, 5, 1.0,
                                           groups=112, level_columns=11)
    only_levels = mixed_shares(SynthConfig(epsilon=1.0, delta=0.0), 300, 0, 1.0, groups=40, level_columns=8)
    assert set(only_levels) == {"marginals", LEVEL_CELLS, "correlation"} and only_levels["marginals"] == 0.0
    # G = 112 above the limit: every column's cells apart, whatever the levels (mixed_split's 1)
    assert mixed_split(config, 303, 5, 1.0, groups=112, level_columns=11, levels=(2, 3, 5))[1] == 1


def test_level_cells_apart_of_a_column_of_many_levels():
    """Below MOMENT_NOISE_LIMIT, only the columns whose cells hold on average less than twice the
    moments' noise sd (1/L < 2 sd) go apart, each with the share it would get were every column's
    apart (the same noise), the moments keeping the rest; where that would leave the moments noise,
    every column's go apart; adult's 42 countries at (1, 1e-10) stay in the moments."""
    from synthdp.config import SynthConfig
    from synthdp.pipeline.plan import LEVEL_CELLS, MOMENT_NOISE_LIMIT, NOISY_MOMENTS_SHARE, mixed_split
    from synthdp.privacy.budget import Budget

    config = SynthConfig(epsilon=1.0, delta=1e-10)
    # a class of 10 levels (digits' shape: n = 1 797, 10 integer columns, G = 86): the moments' noise (sd near
    # 0.09, under the limit) is more than half of a cell's mean share, 1/10; the same noise on a binary column's is not
    moments = Budget(0.0, 0.0, 1.0, 1e-10, "gdp", (("moments", 0.8),)).stage("moments")
    noise = moments.means_noise_sd(86, 1797)
    assert noise < MOMENT_NOISE_LIMIT and 2 * noise * 10 > 1 and 2 * noise * 3 < 1
    shape = {"groups": 86, "level_columns": 11}
    shares, fewest = mixed_split(config, 1797, 10, 1.0, **shape, levels=(10, 3, 2))
    every, _ = mixed_split(config, 1797, 10, 1.0, **shape, levels=(10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10))
    assert fewest == 10 and math.isclose(shares[LEVEL_CELLS], (1 - NOISY_MOMENTS_SHARE - shares["correlation"]) / 21)
    assert shares["marginals"] == 0.2 and 1 - sum(shares.values()) > 0.4  # the moments keep the rest (0.47)
    # eleven such columns would take 11/21 of the budget and leave the moments' noise above the limit: all apart
    assert math.isclose(every["marginals"], (1 - NOISY_MOMENTS_SHARE - every["correlation"]) * 10 / 21)
    assert mixed_split(config, 1797, 10, 1.0, **shape, levels=(3, 2))[1] == 0
    assert mixed_split(config, 32561, 6, 1.0, groups=129, level_columns=12, levels=(42, 16, 7))[1] == 0
    # adult at pure epsilon 0.5: the countries alone
    assert mixed_split(SynthConfig(epsilon=0.5, delta=0.0), 30162, 6, 0.45, cell_groups=75, groups=75,
                       level_columns=12, levels=(9, 16, 7, 15, 6, 5, 2, 42, 2))[1] == 42


def test_the_candidates_read_the_noise_of_the_moments_not_of_the_cells_apart():
    """moments_noise_sd, the noise the candidates' tests and the value blocks' gate read: the largest
    sd of the rows held in the moments, not of a column's one-way cells released apart (whose sd can
    be the larger); with nothing apart, the largest of all."""
    from dataclasses import replace

    from synthdp.postprocess.candidates import moments_noise_sd
    from synthdp.stats.mixed_basis import apart_cells

    rng = np.random.default_rng(0)
    levels = [f"l{i}" for i in range(10)]
    frame = pd.DataFrame({"x": rng.uniform(-1, 1, 200), "y": rng.uniform(-1, 1, 200), "g": rng.choice(levels, 200)})
    schema = {"columns": {"x": {"type": "continuous", "bounds": [-1, 1]}, "y": {"type": "continuous", "bounds": [-1, 1]},
                          "g": {"type": "categorical", "levels": levels}}}
    with pytest.warns(Warning):
        release = SmoothSynthesizer(epsilon=2.0, delta=1e-3, seed=1).fit(frame, schema=schema).release_
    apart = apart_cells(release.schema, release.basis_indices, release.plan.apart_levels)
    assert release.plan.apart_levels == 11 and apart.sum() == 11
    louder = release.moment_noise_sd.copy()
    louder[apart] = 10 * louder.max()
    assert moments_noise_sd(replace(release, moment_noise_sd=louder)) == release.moment_noise_sd[~apart].max()
    none_apart = replace(release, moment_noise_sd=louder, plan=replace(release.plan, apart_levels=0))
    assert moments_noise_sd(none_apart) == louder.max()


def test_a_column_of_many_levels_released_apart_end_to_end():
    """A table of digits' shape at (1, 1e-10): only the class's one-way cells released apart
    (sensitivity of one column, sqrt(2)/n), the moments' description names it, and the class's
    released cells are a distribution; the ledger spends no more than the budget."""
    rng = np.random.default_rng(4)
    n = 1797
    frame = pd.DataFrame({f"p{j}": rng.integers(0, 17, n) for j in range(10)})
    frame["digit"] = rng.integers(0, 10, n)
    schema = {"columns": {**{f"p{j}": {"type": "integer", "bounds": [0, 16]} for j in range(10)},
                          "digit": {"type": "categorical", "levels": list(range(10)), "other": False}}}
    with pytest.warns(Warning):
        synth = SmoothSynthesizer(epsilon=1.0, delta=1e-10, seed=2).fit(frame, schema=schema)
    plan = synth.release_.plan
    assert plan.apart_levels == 10 and synth.privacy_report()["parameters"]["apart_levels"] == 10
    stages = {stage["stage"]: stage for stage in synth.ledger_.to_dict()["stages"]}
    assert math.isclose(stages["level cells"]["sensitivity"], math.sqrt(2) / n)
    assert "the one-way cells of digit released apart" in stages["moments"]["released"]
    assert synth.ledger_.to_dict()["epsilon_spent"] <= 1.0 + 1e-9
    from synthdp.stats.mixed_basis import apart_cells
    release = synth.release_
    rows = apart_cells(release.schema, release.basis_indices, plan.apart_levels)
    assert rows.sum() == 10  # the class's ten cells, no pixel's value block
    assert np.isclose(synth.sample(500, seed=1)["digit"].value_counts(normalize=True).sum(), 1.0)


def test_level_cell_estimates_are_distributions():
    """The one-way cells released apart are made each column's distribution: a categorical
    column's cells projected onto the simplex (an "other" lifted by noise goes back to 0), a
    binary column's indicator clipped into [0, 1]; the other moments unchanged."""
    from synthdp.postprocess.copula import level_cell_estimates, simplex_projection
    from synthdp.stats.mixed_basis import one_way_cells

    schema = Schema.from_dict({"columns": {"x": {"type": "continuous", "bounds": [0, 1]},
                                           "c": {"type": "categorical", "levels": ["p", "q", "r"]},
                                           "s": {"type": "binary", "levels": ["no", "yes"]}}}, ["x", "c", "s"])
    indices = basis_indices(schema, 2)
    rows = one_way_cells(schema, indices)
    rng = np.random.default_rng(7)
    noisy = rng.normal(0.3, 0.4, len(indices))
    out = level_cell_estimates(schema, indices, noisy, rows)
    cells = np.flatnonzero(rows & indices[:, schema.block_slice("c")].any(axis=1))
    binary = np.flatnonzero(rows & indices[:, schema.block_slice("s")].any(axis=1))
    assert len(cells) == 4 and len(binary) == 1  # p, q, r and "other"; one indicator
    assert np.isclose(out[cells].sum(), 1.0) and (out[cells] >= 0).all()
    assert np.allclose(out[cells], simplex_projection(noisy[cells]))
    assert 0.0 <= out[binary[0]] <= 1.0
    assert np.array_equal(out[~rows], noisy[~rows])
    assert np.allclose(simplex_projection(np.array([0.5, 0.3, 0.2])), [0.5, 0.3, 0.2])  # already one: unchanged
    assert np.allclose(simplex_projection(np.array([0.9, 0.4, -0.1])), [0.75, 0.25, 0.0])


def test_a_small_mixed_table_releases_its_level_cells_apart():
    """End to end on heart_cleveland (303 rows, 9 coded columns, 2 nullable) at (1, 1e-10): the
    report names the stage with its mechanism, sensitivity and budget; the stages spend the
    budget."""
    data = Path(__file__).resolve().parents[1] / "data"
    frame = pd.read_csv(data / "heart_cleveland.csv")
    content = json.loads((Path(__file__).resolve().parents[1] / "configs" / "heart_cleveland_schema.json").read_text())
    with pytest.warns(Warning):
        synth = SmoothSynthesizer(epsilon=1.0, delta=1e-10, seed=3).fit(frame, schema=content)
    stages = {stage["stage"]: stage for stage in synth.ledger_.to_dict()["stages"]}
    cells = stages["level cells"]
    k = len(synth.release_.schema.categorical)  # the coded columns and the schema's own blocks
    assert k >= 9 and cells["mechanism"] == "Gaussian" and cells["sensitivity_norm"] == "l2"
    assert math.isclose(cells["sensitivity"], math.sqrt(2 * k) / 303)
    assert "released apart" in stages["moments"]["released"]
    total = synth.release_.plan.budget
    assert math.isclose(total.share("moments"), 0.1) and total.share("level cells") > total.share("marginals")
    assert synth.ledger_.to_dict()["epsilon_spent"] <= 1.0 + 1e-9


def _coded_neighbours(tmp_path):
    """A table with a categorical column of whole numbers and its neighbour with one cell emptied
    (which makes the column a float column wherever a reader types it by the whole column)."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x": rng.uniform(0, 1, 300), "grp": rng.integers(1, 4, 300)})
    neighbour = frame.copy()
    neighbour["grp"] = neighbour["grp"].astype(float)
    neighbour.loc[5, "grp"] = np.nan
    frame.to_csv(tmp_path / "a.csv", index=False)
    lines = (tmp_path / "a.csv").read_text().split("\n")
    cells = lines[6].split(",")
    lines[6] = ",".join([cells[0], ""])  # row 5's grp, emptied in the file's own text
    (tmp_path / "b.csv").write_text("\n".join(lines))
    frame.to_parquet(tmp_path / "a.parquet")
    neighbour.to_parquet(tmp_path / "b.parquet")
    return frame, neighbour


@pytest.mark.parametrize("levels", [["1", "2", "3"], ["1.0", "2.0", "3.0"]])
def test_one_row_never_changes_another_row_s_level(tmp_path, levels):
    """A row's level is read from that row alone, on every reading path: one missing cell (which
    types a column of whole numbers as floats) changes one row's code and no other. Deterministic."""
    frame, neighbour = _coded_neighbours(tmp_path)
    schema = Schema.from_dict({"columns": {"x": {"bounds": [0, 1]},
                                           "grp": {"type": "categorical", "levels": levels}}}, ["x", "grp"])
    column = schema.column("grp")
    expected = column.level_codes(frame["grp"])
    assert set(expected) == {0, 1, 2}
    typed = [neighbour["grp"], neighbour["grp"].astype(object), pd.read_csv(tmp_path / "b.csv")["grp"],
             pd.read_parquet(tmp_path / "b.parquet")["grp"]]  # numbers: matched as numbers, to "1" or "1.0"
    text = [pd.read_csv(tmp_path / "b.csv", dtype=str)["grp"]] if levels[0] == "1" else []  # text: as written
    for values in typed + text:
        codes = column.level_codes(values)
        assert (codes != expected).sum() == 1 and codes[5] == 3  # row 5 alone: "other"
    if levels[0] != "1":
        return  # the files' text "1" is not the level "1.0": every row "other", in both tables alike
    counts = {}
    for name in ("a.csv", "b.csv", "a.parquet", "b.parquet"):
        for chunk_rows in (None, 100):
            table = PrivateTable.open(tmp_path / name, chunk_rows=chunk_rows, text_columns=["grp"])
            first = np.zeros((1, schema.n_coordinates), dtype=np.int64)
            first[0, 0] = 1  # one basis function: the counts come with any
            _, _, _, rows_other = table.encoded_moments(schema, first)
            counts[name, chunk_rows] = rows_other
    assert {key: count for key, count in counts.items() if key[0].startswith("a")} == {
        ("a.csv", None): 0, ("a.csv", 100): 0, ("a.parquet", None): 0, ("a.parquet", 100): 0}
    assert all(count == 1 for key, count in counts.items() if key[0].startswith("b"))


def test_a_truth_value_is_a_coded_column_s_number_beside_a_missing_cell_or_not(tmp_path):
    """pandas holds True and False as bool, but as object beside a missing cell (pandas.read_csv, a
    Parquet file's bool column with a null): in a column of levels [0, 1] each True was the level 1
    in the first and the text 'True', so 'other', in the second. One missing cell moved every row to
    'other' (the noisy count of such rows, of sensitivity 1, moved by n), and a streamed file's
    chunks with and without a null disagreed. Deterministic."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x": rng.uniform(0, 1, 300), "b": rng.random(300) < 0.5})
    neighbour = frame.astype({"b": object})
    neighbour.loc[5, "b"] = None
    frame.to_parquet(tmp_path / "a.parquet")
    neighbour.to_parquet(tmp_path / "b.parquet")
    schema = Schema.from_dict({"columns": {"x": {"bounds": [0, 1]},
                                           "b": {"type": "categorical", "levels": [0, 1], "nullable": True}}},
                              ["x", "b"])
    column = schema.column("b")
    expected = column.level_codes(frame["b"])
    assert set(expected) == {0, 1}
    for values in (neighbour["b"], pd.read_parquet(tmp_path / "b.parquet")["b"]):
        codes = column.level_codes(values)
        assert (codes != expected).sum() == 1 and codes[5] == len(column.all_levels) - 1  # row 5 alone: missing
    counts = {}
    for name in ("a.parquet", "b.parquet"):
        for chunk_rows in (None, 100):
            table = PrivateTable.open(tmp_path / name, chunk_rows=chunk_rows, text_columns=["b"])
            first = np.zeros((1, schema.n_coordinates), dtype=np.int64)
            first[0, 0] = 1
            counts[name, chunk_rows] = table.encoded_moments(schema, first)[3]
    assert set(counts.values()) == {0}


def test_discovered_levels_of_a_coded_column_do_not_depend_on_one_missing_cell(tmp_path):
    frame, neighbour = _coded_neighbours(tmp_path)
    for data in (frame, neighbour):
        table = PrivateTable(data, text_columns=["grp"])
        assert set(table.level_counts("grp")) == {"1", "2", "3"}
    for name in ("a.csv", "b.csv"):
        table = PrivateTable.read_csv(tmp_path / name, text_columns=["grp"])
        assert set(table.level_counts("grp")) == {"1", "2", "3"}


def test_levels_are_matched_value_by_value_whatever_the_column_s_type():
    """A pandas category with a missing cell, float32 numbers (0.1 is the level "0.1"), dates against
    date-text levels, booleans against "True"/"False": each value by itself, as the text it reads."""
    nullable = Schema.from_dict({"columns": {"c": {"type": "categorical", "levels": ["a", "b"], "nullable": True}}},
                                ["c"]).column("c")
    assert list(nullable.level_codes(pd.Series(pd.Categorical(["a", "b", None])))) == [0, 1, 3]
    tenths = Schema.from_dict({"columns": {"f": {"type": "categorical", "levels": ["0.1", "0.2"]}}}, ["f"]).column("f")
    assert list(tenths.level_codes(pd.Series(np.float32([0.1, 0.2, 0.3])))) == [0, 1, 2]
    days = Schema.from_dict({"columns": {"d": {"type": "categorical", "levels": ["2020-01-01", "2020-01-02"]}}},
                            ["d"]).column("d")
    assert list(days.level_codes(pd.Series(pd.to_datetime(["2020-01-01", "2020-01-02", "2020-01-03"])))) == [0, 1, 2]
    # a date before the year 1000 is its ISO text, as the level is written (strftime's "%Y" gave "828-06-08")
    early = Schema.from_dict({"columns": {"d": {"type": "categorical", "levels": ["0828-06-08", "1999-01-01"]}}},
                             ["d"]).column("d")
    assert list(early.level_codes(pd.Series([dt.date(828, 6, 8), dt.date(1999, 1, 1)]))) == [0, 1]
    assert list(early.level_codes(pd.Series(np.array(["0828-06-08"], dtype="datetime64[us]")))) == [0]
    flags = Schema.from_dict({"columns": {"b": {"type": "binary", "levels": ["False", "True"]}}}, ["b"]).column("b")
    assert list(flags.level_codes(pd.Series([True, False]))) == [1, 0]
    from synthdp.domain.schema import level_text

    assert list(level_text(pd.Series(np.float32([0.1, 2.0, np.nan])))) == ["0.1", "2"]
    # numbers of every float type narrower than 64 bits, against text and against number levels: 0.1 is the
    # level 0.1 (float32's 0.1 was read as 0.10000000149011612 against number levels, and by Arrow's float
    # against text levels too: every cell was other, or a value outside levels with "other": false)
    numbered = Schema.from_dict({"columns": {"f": {"type": "categorical", "levels": [0.1, 0.2], "other": False,
                                                   "nullable": True}}}, ["f"]).column("f")
    for dtype in ("float32", "Float32", "float[pyarrow]", "halffloat[pyarrow]", "float16"):
        cells = pd.Series([0.1, 0.2, None, 0.1]).astype(dtype)
        assert list(numbered.level_codes(cells)) == [0, 1, 2, 0], dtype
        assert list(tenths.level_codes(cells)) == [0, 1, 2, 0], dtype  # missing: other
        assert list(level_text(cells)) == ["0.1", "0.2", "0.1"], dtype
    # a large whole number writes alike from an int64 column and from the float64 one a missing cell makes
    # of it (it wrote "1152921504606846976.0" there: the level's text told whether a cell was missing)
    big = 2**60
    assert list(level_text(pd.Series([big, big + 2**10]))) == list(level_text(pd.Series([big, big + 2**10, None],
                                                                                        dtype=float)))


def test_an_integer_column_s_value_block_does_not_count_as_a_many_level_column():
    """The rule's L is over the declared binary and categorical columns: an integer column of 31
    values (its internal value block) beside one binary column leaves the cells in the moments."""
    from synthdp.config import SynthConfig
    from synthdp.pipeline.plan import LEVEL_CELLS, make_mixed_plan

    schema = Schema.from_dict({"columns": {"k": {"type": "integer", "bounds": [0, 30]},
                                           "g": {"type": "binary", "levels": ["a", "b"]},
                                           "x": {"bounds": [0, 1]}}}, ["k", "g", "x"])
    assert max(len(column.all_levels) for column in schema.categorical) == 31  # the value block
    plan, _, _ = make_mixed_plan(SynthConfig(epsilon=1.0, delta=1e-6), schema, 1000)
    assert plan.budget.share(LEVEL_CELLS) == 0


# ------------------------------------------------------------------ the tilt's box where the moments are noise
def test_the_tilt_box_widens_the_noisy_moments_to_the_universal_threshold():
    """Moment rows of noise sd above MOMENT_NOISE_LIMIT get the universal threshold of m of them x the
    box (m from 2): sqrt(2 ln m) under Gaussian noise, ln(m) / sqrt(2) under Laplace noise, at least
    1; the rows after the moments (the histograms' cells), the rows given sd 0 (the one-way cells
    released apart) and quieter moments keep it; the study's noise_box=False is the rule before."""
    limit = run.MOMENT_NOISE_LIMIT
    sd = np.array([limit / 2, 3 * limit, 2 * limit, limit, 5 * limit, 0.0])  # three above the limit
    box, note = run.tilt_box(0.2, 8, sd)
    assert box.shape == (8,) and note.startswith("3 moments of noise sd above 0.1 held within sqrt(2 ln 3)")
    np.testing.assert_allclose(box[[1, 2, 4]], 0.2 * math.sqrt(2 * math.log(3)))
    np.testing.assert_array_equal(box[[0, 3, 5, 6, 7]], 0.2)
    many = np.full(200, 2 * limit)
    np.testing.assert_allclose(run.tilt_box(0.2, 200, many, "laplace")[0], 0.2 * math.log(200) / math.sqrt(2))
    np.testing.assert_allclose(run.tilt_box(0.2, 8, sd, "laplace")[0][[1, 2, 4]], 0.2)  # ln(3) / sqrt(2) < 1
    for kept in (run.tilt_box(0.2, 8, sd, study=run.StudyOptions(noise_box=False)),
                 run.tilt_box(0.2, 8, np.array([limit, 2 * limit])),  # one: no threshold (sqrt(2 ln 1) = 0)
                 run.tilt_box(0.2, 8, None)):  # numeric tables
        np.testing.assert_array_equal(kept[0], 0.2)
        assert kept[1] == ""


def test_the_widened_rows_are_the_noisy_moments_of_the_lp_and_not_the_candidates_cells(monkeypatch):
    """On iris at (1, 1e-10) (the one-way cells released apart): the rows tilt_box may widen are the
    LP's first rows, one per released moment with its noise sd, the one-way cells released apart given
    sd 0 (they keep their box) and no histogram cell among them."""
    root = Path(__file__).resolve().parents[1]
    frame = pd.read_csv(root / "data" / "iris.csv")
    schema = json.loads((root / "configs" / "iris_schema.json").read_text())
    seen = {}
    original = run.tilt_box

    def spy(box, rows, moment_sd=None, noise="gaussian", study=None):
        seen["rows"], seen["sd"] = rows, moment_sd
        return original(box, rows, moment_sd, noise, study)

    monkeypatch.setattr(run, "tilt_box", spy)
    model = run.fit(SmoothSynthesizer(epsilon=1.0, delta=1e-10, seed=4).config, frame, schema=schema)
    release = model.release
    from synthdp.stats.mixed_basis import one_way_cells
    apart = one_way_cells(release.schema, release.basis_indices)  # every column's (iris: the moments are noise)
    assert release.plan.apart_levels == 1
    assert apart.any() and len(seen["sd"]) == len(release.moment_noise_sd) < seen["rows"]  # cells after
    np.testing.assert_array_equal(seen["sd"][apart], 0.0)
    np.testing.assert_array_equal(seen["sd"][~apart], release.moment_noise_sd[~apart])
    assert (release.moment_noise_sd[~apart] > run.MOMENT_NOISE_LIMIT).sum() >= 2


def test_where_the_moments_are_noise_the_tilt_stays_nearer_the_candidates():
    """iris (150 rows) at (1, 1e-10), whose moments' noise is above the limit: with the widened box the
    tilt's optimum is nearer uniform over the same candidates (the same seed draws them) than with
    one sd, where the box binds and the tilt fits the moments' noise; the LP's status names the
    widened rows."""
    root = Path(__file__).resolve().parents[1]
    frame = pd.read_csv(root / "data" / "iris.csv")
    schema = json.loads((root / "configs" / "iris_schema.json").read_text())
    config = SmoothSynthesizer(epsilon=1.0, delta=1e-10, seed=4).config
    fits = {box: run.fit(config, frame, schema=schema, study=run.StudyOptions(noise_box=box)) for box in (True, False)}

    def divergence(model):  # KL(u || uniform) over the candidates, from the support's weights
        weights = model.support_weights / model.support_weights.sum()
        return float(np.sum(weights * np.log(weights * model.release.plan.tilted_candidates)))

    assert "held within sqrt(2 ln" in fits[True].lp.status and "held within" not in fits[False].lp.status
    assert divergence(fits[True]) < divergence(fits[False])


def test_a_level_a_csv_reader_takes_for_missing_is_named(tmp_path):
    """A level such as "NA" (North America) reads from a CSV file as a missing value (pandas' default
    marks): the fit warns from the schema alone, and where that makes a value fall outside the levels
    the error says why, naming the level (public), never a value."""
    rng = np.random.default_rng(2)
    frame = pd.DataFrame({"x": rng.uniform(0, 1, 200), "region": rng.choice(["EU", "NA"], 200)})
    schema = {"columns": {"x": {"type": "continuous", "bounds": [0, 1]},
                          "region": {"type": "categorical", "levels": ["EU", "NA"], "other": False}}}
    with pytest.warns(UserWarning, match="level 'NA', which a CSV file's reader"):
        SmoothSynthesizer(epsilon=1.0, delta=1e-6).fit(frame, schema=schema)  # a DataFrame keeps "NA": it fits
    frame.to_csv(tmp_path / "t.csv", index=False)
    with pytest.warns(UserWarning), pytest.raises(SynthDPError, match="its level 'NA' is read from a CSV file as a "
                                                                       "missing value"):
        SmoothSynthesizer(epsilon=1.0, delta=1e-6).fit(tmp_path / "t.csv", schema=schema)


# ------------------------------------------------------- points held per column (many levels)
def _compact_and_dense(schema):
    indices = basis_indices(schema, 2)
    points, _, _ = encoded(mixed_frame(300, 5), schema)
    compact = mixed_candidates(schema, indices, ChebyshevBasis(indices).moments(points), 400,
                               np.random.default_rng(1))
    return indices, compact, np.asarray(compact)


def test_encoded_points_read_as_their_dense_array(schema):
    """Candidates hold each column's level (EncodedPoints), not its one-hot block; every way the
    pipeline reads them gives the dense array's values."""
    _, compact, dense = _compact_and_dense(schema)
    assert isinstance(compact, EncodedPoints) and compact.shape == dense.shape == (400, schema.n_coordinates)
    assert compact.levels.shape == (400, len(schema.categorical))
    rows = np.random.default_rng(2).integers(0, 400, 50)
    for selection in (rows, dense[:, 0] > 0, slice(10, 30)):
        np.testing.assert_array_equal(np.asarray(compact[selection]), dense[selection])
    for key in (5, -1, (slice(None), 3), (slice(None), -2), (slice(None), slice(2, 9)),
                (slice(None), slice(None, None, 3)), (slice(None), np.array([0, 7, 3, 20])), (rows, slice(2, 9)),
                (rows[:4], np.array([0, 7, 3, 20])), (7, slice(1, 6))):
        np.testing.assert_array_equal(compact[key], dense[key])
    pd.testing.assert_frame_equal(schema.decode(compact), schema.decode(dense))


def test_the_design_matrix_and_moments_of_encoded_points_are_the_dense_ones_to_the_bit(schema):
    indices, compact, dense = _compact_and_dense(schema)
    basis = ChebyshevBasis(indices)
    by_levels, by_array = basis.sparse_design_matrix(compact), basis.sparse_design_matrix(dense)
    assert by_levels.shape == by_array.shape
    for part in ("indptr", "indices", "data"):
        assert np.array_equal(getattr(by_levels, part), getattr(by_array, part))
    assert np.array_equal(basis.moments(compact), basis.moments(dense))


def test_rows_encoded_per_column_are_the_one_hot_rows(schema):
    table = PrivateTable(mixed_frame(500, 3), [c.name for c in schema.categorical])
    dense, clipped, other, missing = encode_rows(table._values, table._text, table.column_names, schema)
    compact, clipped_too, other_too, missing_too = encode_levels(table._values, table._text, table.column_names,
                                                                 schema)
    np.testing.assert_array_equal(np.asarray(compact), dense)
    assert (clipped, other) == (clipped_too, other_too) and np.array_equal(missing, missing_too)


def test_a_tree_draw_counts_the_levels_below_as_the_dense_comparison():
    """tree_levels' draw by a binary search in each parent level's row: the count of the dense
    (candidates, levels) comparison, ties and zero cells included."""
    rng = np.random.default_rng(0)
    conditional = rng.random((4, 30))
    conditional[:, ::3] = 0.0  # flat steps in the cumulative rows
    conditional /= conditional.sum(axis=1, keepdims=True)
    given, uniform = rng.integers(0, 4, 2000), rng.random(2000)
    uniform[:20] = conditional.cumsum(axis=1)[given[:20], 5]  # exactly on a cumulative value
    expected = (uniform[:, None] > conditional[given].cumsum(axis=1)).sum(axis=1)
    assert np.array_equal(candidates_module._levels_below(conditional.cumsum(axis=1), given, uniform), expected)


def test_the_basis_is_int8_and_counted_without_a_dense_copy(schema):
    indices = basis_indices(schema, 2)
    assert indices.dtype == np.int8
    assert np.array_equal(nonzero_counts(indices), np.count_nonzero(indices, axis=1))
    rest = np.random.default_rng(0).random(len(indices)) < 0.5
    assert groups_count(schema, indices, rest) == groups_count(schema, indices[rest])


def test_the_support_points_attribute_is_an_array_on_a_mixed_table():
    """support_points_ stays what scikit-learn users expect, an array (S, D) with its methods, though the
    fit holds a mixed table's support one level per column; its rows' one-hot blocks each sum to 1."""
    root = Path(__file__).resolve().parents[1]
    frame = pd.read_csv(root / "data" / "heart_cleveland.csv")
    content = json.loads((root / "configs" / "heart_cleveland_schema.json").read_text())
    synth = SmoothSynthesizer(epsilon=1.0, delta=1e-10, seed=3).fit(frame, schema=content)
    points = synth.support_points_
    assert isinstance(points, np.ndarray) and points.shape == (len(synth.support_weights_), points.T.shape[0])
    schema = synth.release_.schema
    for column in schema.categorical:
        block = points[:, schema.block_slice(column.name)]
        assert set(np.unique(block)) <= {0.0, 1.0} and block.sum(axis=1).max() <= 1.0


@pytest.mark.parametrize("marginal_degree", [1, 2, 3])
@pytest.mark.parametrize("block_means", [False, True])
@pytest.mark.parametrize("numeric_moments", [False, True])
def test_the_basis_count_is_the_number_of_indices_the_basis_holds(marginal_degree, block_means, numeric_moments):
    from synthdp.stats.mixed_basis import basis_count

    columns = {**SCHEMA["columns"], "grade": {"type": "integer", "bounds": [1, 3]},
               "town": {"type": "categorical", "levels": ["p", "q"], "other": False},
               "income": {"type": "continuous", "bounds": [0, 5], "nullable": True}}
    for size in (1, 2, 4, len(columns)):
        for chosen in itertools.combinations(columns, size):
            built = Schema.from_dict({"columns": {name: columns[name] for name in chosen}}, list(chosen))
            assert basis_count(built, marginal_degree, block_means, numeric_moments) == len(
                basis_indices(built, marginal_degree, block_means, numeric_moments)), chosen


@pytest.mark.parametrize("synthesize, columns", [(True, 200), (False, 1500)])
def test_a_wide_mixed_table_is_refused_before_its_basis_is_built(monkeypatch, synthesize, columns):
    """200 binary columns hold 20 100 cells of degree <= 2, more than the 10 000 candidates; 1 500 hold
    1 125 750, more than any release's moments: each refused from the count, without the (R, D) indices
    (2 000 columns: 4 GB, and out of memory)."""
    from synthdp.pipeline import plan

    def unbuilt(*args, **kwargs):
        raise AssertionError("the basis was built")

    monkeypatch.setattr(plan, "basis_indices", unbuilt)
    names = [f"b{i}" for i in range(columns)]
    frame = pd.DataFrame(np.arange(3 * columns).reshape(3, columns) % 2, columns=names)
    wide = {"columns": {name: {"type": "binary", "levels": [0, 1]} for name in names}}
    with pytest.raises(SynthDPError, match="moments"):
        SmoothSynthesizer(epsilon=1.0, delta=1e-10).fit(frame, schema=wide, synthesize=synthesize)


@pytest.mark.parametrize("options, advice, followed", [
    ({"max_lp_entries": 2_000}, "lower --marginal-degree, or release fewer columns", {"marginal_degree": 1}),
    ({"max_lp_entries": 6_000}, "lower --marginal-degree, or set --tilt 0", {"tilt": 0.0}),
    ({"max_lp_entries": 5_000, "tilt": 0.0}, "lower --n-candidates or --marginal-degree", {"n_candidates": 90}),
])
def test_an_lp_over_the_memory_bound_advises_what_would_bring_it_within(options, advice, followed):
    """10 binary columns: R = 55 moments in 55 groups, the tilt's 165 candidates above --n-candidates 100.
    Where even R candidates would not fit, or the tilt's candidates are over the bound whatever
    --n-candidates, lowering it cannot help; the advice names what does, and following it is accepted."""
    names = [f"b{i}" for i in range(10)]
    frame = pd.DataFrame(np.random.default_rng(0).integers(0, 2, (300, 10)), columns=names)
    wide = {"columns": {name: {"type": "binary", "levels": [0, 1]} for name in names}}
    options = {"epsilon": 1.0, "delta": 1e-10, "n_candidates": 100, "seed": 0, **options}
    with pytest.raises(SynthDPError, match="over the memory bound") as refused:
        SmoothSynthesizer(**options).fit(frame, schema=wide)
    assert str(refused.value).endswith(advice)
    SmoothSynthesizer(**{**options, **followed}).fit(frame, schema=wide)


def test_the_numeric_columns_histogram_cells_count_in_the_mixed_lp_memory_bound(tmp_path, capsys):
    """Each candidate of a mixed table's LP has a cell in every numeric column's histogram beside its
    G moments (run.mixed_design): 2 000 numeric columns and one binary made an LP of 2e7 non-zeros
    that the plan counted as 1e4 (G = 1) and HiGHS ran out of memory after the budget was charged.
    Here 20 numeric columns and one binary, 100 candidates: 2 000 entries and more over a bound of 1 000 are
    refused before anything is released (the budget file's first use leaves no file), and 40
    candidates (about 800 entries) are accepted."""
    rng = np.random.default_rng(0)
    names = [f"x{i}" for i in range(20)]
    frame = pd.DataFrame(rng.uniform(0, 1, (300, 20)), columns=names).assign(b=rng.integers(0, 2, 300))
    table, schema, budget = tmp_path / "t.csv", tmp_path / "s.json", tmp_path / "b.json"
    frame.to_csv(table, index=False)
    schema.write_text(json.dumps({"columns": {**{name: {"type": "continuous", "bounds": [0, 1]} for name in names},
                                              "b": {"type": "binary", "levels": [0, 1]}}}))
    options = ["--epsilon", "1", "--schema", str(schema), "--n-candidates", "100", "--max-lp-entries", "1000",
               "--budget-file", str(budget), "--lifetime-epsilon", "2", "--seed", "0", "--quiet"]
    assert main(["generate", str(table), "-o", str(tmp_path / "o.csv"), *options]) == 2
    err = capsys.readouterr().err
    assert "x 100 = 2" in err and "matrix entries, over the memory bound" in err  # 20 cells (and G) per candidate
    assert not budget.exists() and not (tmp_path / "o.csv").exists()
    options[options.index("100")] = "40"
    assert main(["generate", str(table), "-o", str(tmp_path / "o.csv"), *options]) == 0


def test_where_even_the_fewest_candidates_are_over_the_bound_the_advice_is_not_fewer_candidates():
    """20 numeric columns and one binary at delta > 0: R = G = 251 moments, and each candidate also has a
    cell in every numeric column's histogram, 271 entries. At a bound of 65 000, 300 candidates are
    refused; so are 251, the fewest the LP takes (fewer are refused as fewer candidates than moments):
    the advice was "lower --n-candidates", which cannot bring it within. It names fewer columns, and
    15 numeric columns are accepted."""
    rng = np.random.default_rng(0)
    names = [f"x{i}" for i in range(20)]
    frame = pd.DataFrame(rng.uniform(0, 1, (300, 20)), columns=names).assign(b=rng.integers(0, 2, 300))
    columns = {**{name: {"type": "continuous", "bounds": [0, 1]} for name in names},
               "b": {"type": "binary", "levels": [0, 1]}}
    options = {"epsilon": 1.0, "delta": 1e-6, "tilt": 0.0, "max_lp_entries": 65_000, "seed": 0}
    for candidates in (300, 251):
        with pytest.raises(SynthDPError, match="over the memory bound") as refused:
            SmoothSynthesizer(n_candidates=candidates, **options).fit(frame, schema={"columns": columns})
        assert str(refused.value).endswith("release fewer columns"), str(refused.value)
    kept = {name: spec for name, spec in columns.items() if name not in names[15:]}
    SmoothSynthesizer(n_candidates=300, **options).fit(frame[list(kept)], schema={"columns": kept})


def test_a_summary_of_more_moments_than_the_memory_bound_says_so():
    """A summary draws no candidates: the moments alone are over the bound, and the error says that
    (not an LP of 0 matrix entries), with advice that brings them within it."""
    names = [f"b{i}" for i in range(10)]
    frame = pd.DataFrame(np.random.default_rng(0).integers(0, 2, (300, 10)), columns=names)
    wide = {"columns": {name: {"type": "binary", "levels": [0, 1]} for name in names}}
    with pytest.raises(SynthDPError) as refused:
        SmoothSynthesizer(epsilon=1.0, delta=1e-10, max_lp_entries=50).fit(frame, schema=wide, synthesize=False)
    assert str(refused.value) == ("the release would hold 55 moments, over the memory bound max_lp_entries = 50 "
                                  "(8 bytes each); lower --marginal-degree, or release fewer columns")


def test_histograms_of_a_thousand_numeric_columns_leave_the_cells_a_share():
    """A thousand numeric columns beside one binary column at pure epsilon: the equal-noise share of
    the histograms, 1000 / 1001, left the cells less than a stage may have, and the release failed
    naming marginals_share and correlation_share, which the user never set; the cells keep
    MIN_CELLS_SHARE, and the table is released. Below that, the rule is unchanged."""
    from synthdp.config import SynthConfig
    from synthdp.pipeline.plan import MIN_CELLS_SHARE, mixed_shares

    config = SynthConfig(epsilon=1.0)
    assert mixed_shares(config, 300, 22, 1.0, cell_groups=1)["marginals"] == pytest.approx(22 / 23)
    wide = mixed_shares(config, 300, 1000, 1.0, cell_groups=1)
    assert wide["correlation"] == 0 and wide["marginals"] == pytest.approx(1 - MIN_CELLS_SHARE)


@pytest.mark.parametrize("max_rows", [None, 3])
def test_level_discovery_threshold_is_finite_at_a_delta_whose_inverse_overflows(max_rows):
    """A column's delta below 5.6e-309 (delta 1e-306 at levels_share 0.001) made 1 / delta inf and the
    threshold inf: every level was dropped, however common. The threshold keeps a value seen in one
    table only with probability delta_c / 2: tau = 1 + Laplace(b).isf(delta_c / 2) (by unit,
    K + Laplace(b).isf(delta_c / (2 K))), from scipy; a level with 10^6 rows is kept."""
    from scipy import stats

    from synthdp.privacy.ledger import PrivacyLedger
    from synthdp.privacy.noise import SeededNoise
    from synthdp.privacy.release import release_levels
    from synthdp.privacy.sensitivity import ROWS, Neighbours

    epsilon, delta = 1.0, 1e-309
    neighbours = ROWS if max_rows is None else Neighbours(max_rows, "person")
    ledger = PrivacyLedger(epsilon, delta)
    kept = release_levels({"job": {"common": 10**6, "rare": 1}}, epsilon, delta, ledger,
                          SeededNoise(np.random.default_rng(3)), neighbours)
    assert kept == {"job": ("common",)}
    scale = ledger.event("levels").noise_scale
    k = neighbours.k
    tau = (k + stats.laplace(scale=scale).isf(delta / (2 * k)) if max_rows else
           1 + stats.laplace(scale=scale).isf(delta / 2))
    assert math.isfinite(tau) and f"counts above {tau:.3g}" in ledger.event("levels").released


def test_level_discovery_at_a_delta_whose_share_underflows_is_refused_before_any_release():
    """delta = 5e-324 (accepted: in [0, 1)) times levels_share 0.001 is 0 in floating point: the
    threshold's log raised ValueError (math domain error) after the table was read. Refused first."""
    frame = pd.DataFrame({"x": np.linspace(0, 1, 50), "g": ["u", "v"] * 25})
    schema = {"columns": {"x": {"type": "continuous", "bounds": [0, 1]}, "g": {"type": "categorical", "levels": "discover"}}}
    assert 5e-324 * 0.001 == 0
    with pytest.raises(SynthDPError, match=r"delta \(--delta\) 4.94e-324 times --levels-share .* raise --delta") as error:
        SmoothSynthesizer(epsilon=1.0, delta=5e-324, levels_share=0.001, seed=1).fit(frame, schema=schema)
    assert "\n" not in str(error.value)


def test_a_column_that_keeps_no_level_in_discovery_is_warned_of():
    """300 rows of three levels at levels_share 0.1 of epsilon 2 (delta 1e-6): the threshold is 162 rows
    and each level has about 100, so the column comes back all "other"; the fit said nothing. It warns,
    naming the column (seeded, so the outcome is fixed); where they are kept (levels_share 0.4: 38 rows) it does not."""
    import warnings

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"c": rng.choice(["a", "b", "c"], 300), "x": rng.uniform(0, 1, 300)})
    schema = {"columns": {"c": {"type": "categorical", "levels": "discover"},
                          "x": {"type": "continuous", "bounds": [0, 1]}}}
    with pytest.warns(UserWarning, match=r"1 column\(s\) kept no level in DP level discovery \('c'\): .* threshold "
                                         r"of 162 rows"):
        synth = SmoothSynthesizer(epsilon=2.0, delta=1e-6, levels_share=0.1, seed=0).fit(frame, schema=schema)
    assert set(synth.sample(50)["c"]) == {"other"}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        synth = SmoothSynthesizer(epsilon=2.0, delta=1e-6, levels_share=0.4, seed=0).fit(frame, schema=schema)
    assert not [w for w in caught if "kept no level" in str(w.message)]
    assert synth.release_.schema.column("c").levels == ("a", "b", "c")
