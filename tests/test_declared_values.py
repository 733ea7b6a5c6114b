"""A numeric column's declared values ("values" in bounds and schema files): public metadata that gives
the column one histogram cell per value where the plan affords it, as an integer column's, and
synthetic values that are declared ones."""

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from synthdp import Condition, SmoothSynthesizer, SynthDPError
from synthdp.cli import main
from synthdp.domain.box import Domain, parse_bounds
from synthdp.domain.decode import decode, nearest_values
from synthdp.domain.schema import Schema
from synthdp.stats.histograms import CellLayout

SPEEDS = [0.1, 0.25, 0.3, 0.55]
LOADS = [1.2, 1.5, 2.4, 3.1, 4.0]


def one_line_error(call) -> str:
    with pytest.raises(SynthDPError) as caught:
        call()
    message = str(caught.value)
    assert "\n" not in message
    return message


def grid_table(rows: int = 600, seed: int = 0) -> pd.DataFrame:
    """Two grid columns at uneven settings and a response that depends on them."""
    rng = np.random.default_rng(seed)
    speed, load = rng.choice(SPEEDS, rows), rng.choice(LOADS, rows)
    return pd.DataFrame({"speed": speed, "load": load, "response": 3 * speed + 0.2 * load + rng.normal(0, 0.1, rows)})


GRID_BOUNDS = {"speed": {"values": SPEEDS}, "load": {"bounds": [1, 5], "values": list(reversed(LOADS))},
               "response": [-1, 3]}


def quiet_fit(frame, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the testing-seed warning
        return SmoothSynthesizer(epsilon=options.pop("epsilon", 1.0), seed=options.pop("seed", 3),
                                 **options.pop("config", {})).fit(frame, **options)


# ------------------------------------------------------------------ metadata
def test_values_are_parsed_sorted_kept_in_to_dict_and_read_back():
    domain = Domain.from_bounds(GRID_BOUNDS, ["speed", "load", "response"])
    speed, load, response = domain.columns
    assert speed.values == tuple(SPEEDS) and (speed.lower, speed.upper) == (0.1, 0.55)  # bounds from the values
    assert load.values == tuple(LOADS) and (load.lower, load.upper) == (1.0, 5.0)  # sorted; bounds as given
    assert response.values is None
    shown = domain.to_dict()["columns"]
    assert shown["load"] == {"bounds": [1.0, 5.0], "type": "continuous", "source": "public", "values": LOADS}
    assert "values" not in shown["response"]  # no entry where none was declared: reports are unchanged
    assert Domain.from_bounds(shown, ["speed", "load", "response"]) == domain
    integer = Domain.from_bounds({"n": {"type": "integer", "values": [1, 2, 4, 8]}}, ["n"]).columns[0]
    assert integer.integer and integer.values == (1.0, 2.0, 4.0, 8.0)
    schema = Schema.from_dict({"columns": {"speed": {"type": "continuous", "values": SPEEDS},
                                           "kind": {"type": "binary", "levels": ["a", "b"]}}}, ["speed", "kind"])
    assert schema.numeric.columns[0].values == tuple(SPEEDS)
    assert Schema.from_dict(schema.to_dict(), ["speed", "kind"]) == schema


@pytest.mark.parametrize(("spec", "message"), [
    ({"values": [1]}, "at least two finite numbers"),
    ({"values": 3}, "at least two finite numbers"),
    ({"values": []}, "at least two finite numbers"),
    ({"values": [1, "2"]}, "at least two finite numbers"),
    ({"values": [1, True]}, "at least two finite numbers"),
    ({"bounds": [0, 5], "values": [1, float("nan")]}, "at least two finite numbers"),
    ({"values": [1, 2, 1.0]}, "a number twice"),
    ({"bounds": [0, 5], "values": [1, 6]}, "outside its bounds"),
    ({"bounds": [0, 5], "values": [1, 2], "decimals": 1}, "both \"values\" and \"decimals\""),
    ({"type": "integer", "bounds": [0, 5], "values": [1, 2.5]}, "not whole numbers"),
    ({"type": "date", "bounds": ["2020-01-01", "2020-12-31"], "values": [1, 2]}, "continuous or integer"),
    ({"bounds": [0, 1e6], "values": [1, 1 + 1e-12, 3]}, "too close together"),
])
def test_bad_values_are_a_one_line_error_naming_the_column(spec, message):
    text = one_line_error(lambda: parse_bounds({"col": spec}, ["col"]))
    assert "'col'" in text and message in text, text
    schema = {"columns": {"col": {"type": "continuous", **spec}}}
    text = one_line_error(lambda: Schema.from_dict(schema, ["col"]))
    assert "'col'" in text and message in text, text


def test_a_schema_column_with_values_needs_no_bounds():
    from synthdp.domain.schema import columns_without_bounds

    content = {"columns": {"speed": {"type": "continuous", "values": SPEEDS}, "x": {"type": "continuous"}}}
    assert columns_without_bounds(content, ["speed", "x"]) == ["x"]


def test_values_close_together_keep_a_cell_each_and_decode_to_themselves_or_are_refused():
    """Values 1e-12 apart inside [0, 1] are floats far apart on [-1, 1]: each counts in its own cell and
    comes back as itself. Inside bounds 10^6 wide they were a float apart there: both counted in the
    first one's cell, and the second was never drawn; such a declaration is refused (above)."""
    declared = [0.5, 0.5 + 1e-12, 0.7, 1.0]
    domain = Domain.from_bounds({"a": {"bounds": [0, 1], "values": declared}}, ["a"])
    layout = CellLayout.for_domain(domain, n_bins=4, value_cells=8)
    grid = np.array(declared)[:, None]
    assert layout.cells(domain.to_unit(grid))[:, 0].tolist() == [0, 1, 2, 3]
    assert decode(layout.values[0][:, None], domain)["a"].tolist() == declared
    text = one_line_error(lambda: Domain.from_bounds({"a": {"bounds": [0, 1e6], "values": [1, 1 + 1e-12]}}, ["a"]))
    assert "'a'" in text and "too close together" in text


# ------------------------------------------------------------------ cells and decoding
def test_nearest_values_takes_the_nearest_and_the_lower_at_a_tie():
    declared = (0.1, 0.25, 0.3, 0.55)
    got = nearest_values(np.array([-3.0, 0.1, 0.17, 0.18, 0.2, 0.276, 0.27, 0.43, 0.42, 9.0]), declared)
    assert got.tolist() == [0.1, 0.1, 0.1, 0.25, 0.25, 0.3, 0.25, 0.55, 0.3, 0.55]
    assert nearest_values(np.array([0.5, 1.5, 2.5]), (0.0, 1.0, 2.0, 3.0)).tolist() == [0.0, 1.0, 2.0]  # exact ties


def test_decode_gives_declared_values_only():
    domain = Domain.from_bounds({**GRID_BOUNDS, "n": {"type": "integer", "values": [1, 2, 4, 8]}},
                                ["speed", "load", "response", "n"])
    points = np.random.default_rng(0).uniform(-1.5, 1.5, (3000, 4))
    out = decode(points, domain)
    assert set(out["speed"]) == set(SPEEDS) and set(out["load"]) <= set(LOADS)
    assert out["n"].dtype == np.int64 and set(out["n"]) == {1, 2, 4, 8}
    assert not out["response"].isin(np.round(out["response"], 2)).all()  # undeclared: as drawn


def test_a_declared_column_has_a_cell_per_value_and_each_row_one_cell_on_extreme_rows():
    """The histograms' sensitivity (a row lies in one cell of each column) holds with declared values: rows at
    the bounds, between two values, at a midpoint and (clipped) beyond the bounds each count once per column,
    in the cell of the nearest value."""
    domain = Domain.from_bounds(GRID_BOUNDS, ["speed", "load", "response"])
    layout = CellLayout.for_domain(domain, n_bins=4, value_cells=8)
    assert layout.value_columns == 2 and layout.observed_cells(0) == 4 and layout.observed_cells(1) == 5
    rows = np.array([[0.1, 1.0, -1], [0.55, 5.0, 3], [0.2, 1.3, 0], [0.27, 2.7, 1], [0.26, 4.0, 2], [0.3, 1.5, 0],
                     [-7.0, 60.0, 9e9]])  # the last beyond every bound, clipped as the reader clips it
    counts = layout.counts(domain.to_unit(np.clip(rows, domain.lower, domain.upper)))
    assert (counts.sum(axis=1) == len(rows)).all()
    assert counts[0, :4].tolist() == [2, 3, 1, 1]  # 0.2, 0.27 and 0.26 -> 0.25; -7 -> 0.1 (its bound)
    assert counts[1, :5].tolist() == [2, 1, 1, 0, 3]  # 1.0 and 1.3 -> 1.2, 2.7 -> 2.4, 5.0 and 60 -> 4.0
    few = CellLayout.for_domain(domain, n_bins=4, value_cells=4)  # more values than the plan affords: bins
    assert few.values[1] is None and few.values[0] is not None


# ------------------------------------------------------------------ releases
def test_a_release_samples_declared_values_and_reports_them():
    frame = grid_table()
    synth = quiet_fit(frame, bounds=GRID_BOUNDS)
    rows = synth.sample(2000)
    assert set(rows["speed"]) <= set(SPEEDS) and set(rows["load"]) <= set(LOADS)
    report = synth.privacy_report()
    assert report["bounds"]["columns"]["speed"]["values"] == SPEEDS
    histograms = next(stage for stage in report["privacy"]["stages"] if stage["stage"] == "marginals")
    assert "one cell per value" in histograms["released"]


def test_a_mixed_table_samples_declared_values_and_a_model_file_keeps_them(tmp_path):
    frame = grid_table(800, seed=1)
    frame["kind"] = np.where(frame["speed"] > 0.28, "fast", "slow")
    schema = {"columns": {"speed": {"type": "continuous", "values": SPEEDS}, "load": GRID_BOUNDS["load"],
                          "response": {"type": "continuous", "bounds": [-1, 3]},
                          "kind": {"type": "binary", "levels": ["fast", "slow"]}}}
    synth = quiet_fit(frame, schema=schema)
    rows = synth.sample(1000, seed=2)
    assert set(rows["speed"]) <= set(SPEEDS) and set(rows["load"]) <= set(LOADS)
    path = tmp_path / "model.synthdp"
    synth.save(path)
    loaded = SmoothSynthesizer.load(path)
    assert loaded.sample(1000, seed=2).equals(rows)
    given = loaded.sample_from_conditions(pd.DataFrame({"speed": [0.25, 0.55]}), seed=3)
    assert given["speed"].tolist() == [0.25, 0.55]


def test_the_streamed_release_equals_the_in_memory_one(tmp_path):
    frame = grid_table(1500, seed=2)
    path = tmp_path / "grid.csv"
    frame.to_csv(path, index=False)
    in_memory = quiet_fit(frame, bounds=GRID_BOUNDS, seed=4).sample(500, seed=1)
    streamed = quiet_fit(str(path), bounds=GRID_BOUNDS, seed=4, config={"chunk_rows": 200}).sample(500, seed=1)
    pd.testing.assert_frame_equal(in_memory, streamed)


def test_the_cli_reads_values_from_a_bounds_file_and_refuses_bad_ones_in_one_line(tmp_path, capsys):
    path = tmp_path / "grid.csv"
    grid_table(400).to_csv(path, index=False)
    (tmp_path / "b.json").write_text(json.dumps(GRID_BOUNDS))
    out = tmp_path / "out.csv"
    assert main(["generate", str(path), "-o", str(out), "--bounds", str(tmp_path / "b.json"), "--quiet",
                 "--seed", "1"]) == 0
    written = pd.read_csv(out)
    assert set(written["speed"]) <= set(SPEEDS) and set(written["load"]) <= set(LOADS)
    capsys.readouterr()
    (tmp_path / "bad.json").write_text(json.dumps({**GRID_BOUNDS, "speed": {"values": [0.1, 0.1]}}))
    other = tmp_path / "other.csv"
    code = main(["generate", str(path), "-o", str(other), "--bounds", str(tmp_path / "bad.json"), "--quiet"])
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("synthdp: error:")]
    assert code != 0 and len(errors) == 1 and "'speed'" in errors[0] and "twice" in errors[0]
    assert not other.exists()


def test_sample_from_conditions_takes_a_declared_value_of_many_digits_and_refuses_others():
    """A declared value that no 15 decimals write (1/3) is given as it is declared: it was refused with
    'declares no decimals', though a column with values cannot declare decimals. A value that is not
    declared is a one-line error naming the column."""
    thirds = [0.0, 1 / 3, 2 / 3, 1.0]
    rng = np.random.default_rng(5)
    frame = pd.DataFrame({"t": rng.choice(thirds, 500), "x": rng.normal(size=500)})
    synth = quiet_fit(frame, bounds={"t": {"values": thirds}, "x": [-4, 4]})
    given = synth.sample_from_conditions(pd.DataFrame({"t": [1 / 3, 1.0, None]}), seed=1)
    assert given["t"].tolist()[:2] == [1 / 3, 1.0] and given["t"].iloc[2] in thirds
    for value in (0.5, 0.3333):
        text = one_line_error(lambda value=value: synth.sample_from_conditions(pd.DataFrame({"t": [value]}), seed=1))
        assert "'t'" in text and "not one of its declared values" in text


def test_an_equality_on_a_declared_value_gets_a_summary_interval_that_holds_the_table_s_share():
    """speed == 0.25 is 0 at every quadrature node and check point off the declared values, so its misfit
    showed as 0 and its interval was [0, 0], far from the table's share; the check points moved to the
    nearest declared value, where the rows lie, show the misfit, as for an integer column."""
    frame = grid_table(500, seed=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        summary = SmoothSynthesizer(epsilon=1.0, delta=1e-6, seed=0).fit(frame, GRID_BOUNDS, synthesize=False).summary()
    for name, value in (("speed", 0.25), ("load", 3.1)):
        row = summary.answer_interval(lambda rows, name=name, value=value: (rows[name] == value).astype(float)).iloc[0]
        truth = (frame[name] == value).mean()
        assert row["approximation_error"] > 0.5 and row["lower"] <= truth <= row["upper"]


def test_sample_from_conditions_matches_a_float32_given_value_to_its_declared_value():
    """A partial frame (or a Condition) holding float32 cells, as a Parquet file read with pandas does, gives
    0.1 widened to 0.10000000149011612 row by row, which was refused as not a declared value; it is read in
    its shortest form, as a level is, and comes back as the declared value (every value of the column is one)."""
    speeds32 = np.asarray(SPEEDS, dtype=np.float32)
    synth = quiet_fit(grid_table(), bounds=GRID_BOUNDS)
    given = synth.sample_from_conditions(pd.DataFrame({"speed": speeds32[[1, 3]], "load": [1.2, None]}), seed=1)
    assert given["speed"].tolist() == [SPEEDS[1], SPEEDS[3]] and given["load"].iloc[0] == 1.2
    assert given["load"].iloc[1] in LOADS
    arrow = pd.DataFrame({"speed": pd.array([SPEEDS[2], None], dtype="float32[pyarrow]")})
    assert synth.sample_from_conditions(arrow, seed=1)["speed"].iloc[0] == SPEEDS[2]
    rows = synth.sample_from_conditions([Condition({"speed": np.float32(SPEEDS[1])}, num_rows=3)], seed=1)
    assert (rows["speed"] == SPEEDS[1]).all()
