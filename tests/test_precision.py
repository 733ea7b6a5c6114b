"""A column's precision as public metadata ("decimals" in bounds and schema files), applied when
synthetic values are decoded; ``synthdp schema`` drafting it, and binary columns of 0/1 codes
drafted as binary and written back as the input had them."""

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from synthdp import SmoothSynthesizer, SynthDPError
from synthdp.cli import main
from synthdp.domain.box import Domain, parse_bounds
from synthdp.domain.decode import decode, round_to_decimals
from synthdp.domain.schema import Schema
from synthdp.reader.draft import MAX_DRAFT_DECIMALS, draft_schema, used_decimals
from synthdp.reader.table import EXACT_FLOATS, read_csv_frame

ROOT = Path(__file__).resolve().parents[1]
CLINIC = ROOT / "synthdp" / "datasets" / "clinic.csv"
CLINIC_BOUNDS = ROOT / "synthdp" / "datasets" / "clinic_bounds.json"
HEART = ROOT / "data" / "heart_cleveland.csv"


def decimals_used(text: str) -> int:
    """Decimals written in one CSV cell ("30.7" -> 1, "43" -> 0)."""
    return len(text.split(".")[1]) if "." in text else 0


def run(args, capsys):
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def one_line_error(call) -> str:
    with pytest.raises(SynthDPError) as caught:
        call()
    message = str(caught.value)
    assert "\n" not in message
    return message


def quiet_fit(frame, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the testing-seed warning, the draft warning
        return SmoothSynthesizer(epsilon=options.pop("epsilon", 2.0), seed=options.pop("seed", 3),
                                 **options.pop("config", {})).fit(frame, **options)


# ------------------------------------------------------------------ metadata
def test_decimals_are_parsed_kept_in_to_dict_and_read_back():
    bounds = {"bmi": {"bounds": [15, 50], "decimals": 1}, "age": {"bounds": [0, 120], "type": "integer",
                                                                   "decimals": 0}, "x": [0, 1]}
    domain = Domain.from_bounds(bounds, ["bmi", "age", "x"])
    assert [column.decimals for column in domain.columns] == [1, 0, None]
    shown = domain.to_dict()["columns"]
    assert shown["bmi"] == {"bounds": [15.0, 50.0], "type": "continuous", "source": "public", "decimals": 1}
    assert "decimals" not in shown["x"]  # no entry where none was declared: reports are unchanged
    assert Domain.from_bounds(shown, ["bmi", "age", "x"]) == domain
    schema = Schema.from_dict({"columns": {"bmi": {"type": "continuous", "bounds": [15, 50], "decimals": 2},
                                           "sex": {"type": "binary", "levels": ["F", "M"]}}}, ["bmi", "sex"])
    assert schema.numeric.columns[0].decimals == 2
    assert schema.to_dict()["columns"]["bmi"]["decimals"] == 2
    assert Schema.from_dict(schema.to_dict(), ["bmi", "sex"]) == schema


@pytest.mark.parametrize(("spec", "message"), [
    ({"bounds": [0, 10], "decimals": -1}, "an integer from 0 to 15"),
    ({"bounds": [0, 10], "decimals": 1.5}, "an integer from 0 to 15"),
    ({"bounds": [0, 10], "decimals": 1.0}, "an integer from 0 to 15"),
    ({"bounds": [0, 10], "decimals": "1"}, "an integer from 0 to 15"),
    ({"bounds": [0, 10], "decimals": True}, "an integer from 0 to 15"),
    ({"bounds": [0, 10], "decimals": None}, "an integer from 0 to 15"),
    ({"bounds": [0, 10], "decimals": 16}, "an integer from 0 to 15"),
    ({"bounds": [0, 10], "type": "integer", "decimals": 1}, "an integer column has 0 decimals"),
    ({"bounds": ["2020-01-01", "2020-12-31"], "type": "date", "decimals": 1}, "whole days"),
    ({"bounds": [0.01, 0.04], "decimals": 1}, "no value with 1 decimals inside its bounds"),
    ({"bounds": [0, 1e12], "decimals": 6}, "too many for its bounds"),
])
def test_a_bad_decimals_is_a_one_line_error_naming_the_column(spec, message):
    text = one_line_error(lambda: parse_bounds({"col": spec}, ["col"]))
    assert "'col'" in text and message in text, text
    schema = {"columns": {"col": {"type": "continuous", **spec}}}
    text = one_line_error(lambda: Schema.from_dict(schema, ["col"]))
    assert "'col'" in text and message in text, text


@pytest.mark.parametrize("kind", ["binary", "categorical"])
def test_decimals_on_a_level_column_is_an_error_naming_it(kind):
    levels = ["a", "b"] if kind == "binary" else ["a", "b", "c"]
    schema = {"columns": {"x": {"type": "continuous", "bounds": [0, 1]},
                          "col": {"type": kind, "levels": levels, "decimals": 1}}}
    text = one_line_error(lambda: Schema.from_dict(schema, ["x", "col"]))
    assert "'col'" in text and "decimals" in text and kind in text


def test_a_bounds_file_with_a_bad_decimals_fails_the_cli_in_one_line(tmp_path, capsys):
    bounds = json.loads(CLINIC_BOUNDS.read_text())
    bounds["bmi"]["decimals"] = -2
    path = tmp_path / "bounds.json"
    path.write_text(json.dumps(bounds))
    out = tmp_path / "out.csv"
    code, printed = run(["generate", CLINIC, "-o", out, "--bounds", path, "--quiet"], capsys)
    errors = [line for line in printed.splitlines() if line.startswith("synthdp: error:")]
    assert code != 0 and len(errors) == 1 and "'bmi'" in errors[0] and "decimals" in errors[0]
    assert not out.exists()


# ------------------------------------------------------------------ decoding
def test_decode_rounds_to_the_declared_decimals_inside_the_bounds():
    domain = Domain.from_bounds({"a": {"bounds": [0, 1], "decimals": 1}, "b": {"bounds": [0.03, 0.981], "decimals": 2},
                                 "c": {"bounds": [-5, 5], "decimals": 0}, "d": [0, 1]}, ["a", "b", "c", "d"])
    points = np.random.default_rng(0).uniform(-1.3, 1.3, (2000, 4))
    points[:2] = [[-2, -2, -2, -2], [2, 2, 2, 2]]  # beyond the cube: clipped to the bounds
    out = decode(points, domain)
    assert all(decimals_used(repr(value)) <= 1 for value in out["a"])
    assert all(decimals_used(repr(value)) <= 2 for value in out["b"])
    assert out["a"].between(0, 1).all() and out["b"].between(0.03, 0.98).all()
    # bounds off the grid: rounding would give 0.98 -> 0.98 and 0.03 -> 0.03, never 0.99 or 0.02
    assert out["b"].iloc[1] == 0.98 and out["b"].iloc[0] == 0.03
    assert out["c"].dtype == np.int64 and out["c"].between(-5, 5).all()  # 0 decimals: whole numbers
    assert out["d"].dtype == float and not np.allclose(out["d"], out["d"].round(6))  # undeclared: not rounded


def test_rounding_is_half_to_even():
    column = Domain.from_bounds({"a": {"bounds": [0, 1], "decimals": 1}}, ["a"]).columns[0]
    assert list(round_to_decimals(np.array([0.25, 0.75, 0.5, 0.26]), column)) == [0.2, 0.8, 0.5, 0.3]
    off_grid = Domain.from_bounds({"a": {"bounds": [0.04, 0.96], "decimals": 1}}, ["a"]).columns[0]
    assert list(round_to_decimals(np.array([0.04, 0.96, 0.5]), off_grid)) == [0.1, 0.9, 0.5]


def test_the_synthesizer_samples_at_the_declared_decimals(clinic_like):
    frame, bounds = clinic_like
    bounds = {**bounds, "weight": {"bounds": [30, 150], "decimals": 1}, "score": {"bounds": [0, 1], "decimals": 3}}
    synth = quiet_fit(frame, bounds=bounds)
    for rows in (synth.sample(), synth.sample(5000)):
        assert all(decimals_used(repr(value)) <= 1 for value in rows["weight"])
        assert all(decimals_used(repr(value)) <= 3 for value in rows["score"])
        assert rows["weight"].between(30, 150).all() and rows["score"].between(0, 1).all()
    assert synth.privacy_report()["bounds"]["columns"]["weight"]["decimals"] == 1


def test_a_mixed_table_with_a_nullable_column_samples_at_the_declared_decimals():
    rng = np.random.default_rng(1)
    n = 1500
    frame = pd.DataFrame({"bmi": np.round(rng.uniform(18, 40, n), 1), "kind": rng.choice(["a", "b"], n)})
    frame.loc[rng.choice(n, 100, replace=False), "bmi"] = np.nan
    schema = {"columns": {"bmi": {"type": "continuous", "bounds": [15, 50], "decimals": 1, "nullable": True},
                          "kind": {"type": "binary", "levels": ["a", "b"]}}}
    rows = quiet_fit(frame, schema=schema).sample()
    present = rows["bmi"].dropna()
    assert rows["bmi"].isna().any() and len(present) > 0
    assert all(decimals_used(repr(value)) <= 1 for value in present)


def test_the_bundled_example_declares_the_decimals_its_data_use():
    bounds = json.loads(CLINIC_BOUNDS.read_text())
    text = pd.read_csv(CLINIC, dtype=str)
    for name in text.columns:
        used = max(decimals_used(value) for value in text[name])
        spec = bounds[name]
        declared = 0 if isinstance(spec, dict) and spec.get("type") == "integer" else spec.get("decimals")
        assert declared == used, name


@pytest.mark.parametrize("writer", ["pyarrow", "pandas"])
def test_generate_on_the_bundled_example_writes_its_decimals(tmp_path, capsys, monkeypatch, writer):
    """Every cell of a 1-decimal column is written with exactly one decimal ("28.0", not "28"),
    by either CSV writer, by generate and by sampling a model file."""
    if writer == "pandas":
        monkeypatch.setitem(__import__("sys").modules, "pyarrow", None)  # as where pyarrow is not installed
    out, report, model, sampled = (tmp_path / name for name in ("synthetic.csv", "report.json", "m.zip", "s.csv"))
    code, printed = run(["generate", CLINIC, "-o", out, "--epsilon", 1, "--bounds", CLINIC_BOUNDS, "--report", report,
                         "--model-out", model, "--seed", 5, "--quiet"], capsys)
    assert code == 0, printed
    code, printed = run(["sample", model, "-n", 500, "-o", sampled, "--seed", 6, "--quiet"], capsys)
    assert code == 0, printed
    for path in (out, sampled):
        written = pd.read_csv(path, dtype=str)
        for name in ("bmi", "systolic_bp", "cholesterol"):
            assert {decimals_used(value) for value in written[name]} == {1}, name
        for name in ("age", "visits_per_year"):
            assert {decimals_used(value) for value in written[name]} == {0}, name
        assert not written.map(lambda value: value.startswith('"')).any().any()
    shown = json.loads(report.read_text())["bounds"]["columns"]
    assert shown["bmi"]["decimals"] == 1 and "decimals" not in shown["age"]


# ------------------------------------------------------------------ drafting decimals
def test_used_decimals():
    assert used_decimals(np.array([1.5, 2.25, 3.0])) == 2
    assert used_decimals(np.array([30.7, 127.0, 0.1])) == 1
    assert used_decimals(np.array([0.123456])) == 6
    assert used_decimals(np.array([0.1234567])) is None  # over the cap
    assert used_decimals(np.random.default_rng(0).uniform(0, 1, 50)) is None  # unrounded floats
    assert MAX_DRAFT_DECIMALS == 6


def test_schema_drafts_the_decimals_of_continuous_columns(tmp_path, capsys):
    rng = np.random.default_rng(2)
    n = 300
    frame = pd.DataFrame({"bmi": np.round(rng.uniform(15, 45, n), 1), "ratio": np.round(rng.uniform(0, 2, n), 3),
                          "raw": rng.normal(size=n), "count": rng.integers(0, 50, n)})
    data, draft = tmp_path / "data.csv", tmp_path / "schema.json"
    frame.to_csv(data, index=False)
    code, printed = run(["schema", data, "-o", draft], capsys)
    assert code == 0, printed
    content = json.loads(draft.read_text())
    columns = content["columns"]
    assert columns["bmi"]["decimals"] == 1 and columns["ratio"]["decimals"] == 3
    assert "decimals" not in columns["raw"] and "decimals" not in columns["count"]
    assert content["draft"]["from_data"] is True  # still marked as read from the data
    # the draft read back: the release comes back with the input's decimals
    del content["draft"]
    draft.write_text(json.dumps(content))
    out = tmp_path / "out.csv"
    code, printed = run(["generate", data, "-o", out, "--schema", draft, "--seed", 1, "--quiet"], capsys)
    assert code == 0, printed
    written = pd.read_csv(out, dtype=str)
    assert max(decimals_used(value) for value in written["bmi"]) <= 1
    assert max(decimals_used(value) for value in written["ratio"]) <= 3


# ------------------------------------------------------------------ binary codes
def test_schema_drafts_two_valued_numeric_columns_as_binary():
    frame = pd.DataFrame({"sex": [0, 1, 1, 0, 1, 0], "flag": [0.0, 1.0, 1.0, 1.0, 0.0, 0.0],
                          "dose": [1.5, 2.5, 1.5, 2.5, 2.5, 1.5], "code": [0, 1, np.nan, 1, 0, 1],
                          "x": [0.5, 1.25, 3.0, 4.5, 2.0, 1.0]})
    content, notes = draft_schema(frame)
    columns = content["columns"]
    assert columns["sex"] == {"type": "binary", "levels": [0, 1]}
    assert columns["flag"] == {"type": "binary", "levels": [0.0, 1.0]}
    assert all(isinstance(level, float) for level in columns["flag"]["levels"])
    assert columns["dose"] == {"type": "binary", "levels": [1.5, 2.5]}
    assert columns["code"] == {"type": "binary", "levels": [0, 1], "nullable": True}
    assert columns["x"]["type"] == "continuous"
    Schema.from_dict(content, list(frame.columns))  # a valid schema


def test_heart_draft_has_its_clinical_binary_columns():
    content, _ = draft_schema(read_csv_frame(HEART))
    columns = content["columns"]
    for name in ("sex", "fbs", "exang"):
        assert columns[name]["type"] == "binary" and columns[name]["levels"] == [0.0, 1.0], name
    assert columns["oldpeak"]["decimals"] == 1
    assert columns["age"]["type"] == "integer"


@pytest.mark.parametrize(("values", "written"), [([0, 1], {"0", "1"}), ([0.0, 1.0], {"0.0", "1.0"})])
def test_binary_codes_round_trip_through_generate(tmp_path, capsys, values, written):
    rng = np.random.default_rng(3)
    n = 400
    frame = pd.DataFrame({"sex": rng.choice(values, n), "age": rng.integers(20, 80, n),
                          "bmi": np.round(rng.uniform(18, 40, n), 1)})
    data, draft, out = tmp_path / "data.csv", tmp_path / "schema.json", tmp_path / "out.csv"
    frame.to_csv(data, index=False)
    assert set(pd.read_csv(data, dtype=str)["sex"]) == written  # the input writes them so
    assert run(["schema", data, "-o", draft], capsys)[0] == 0
    assert json.loads(draft.read_text())["columns"]["sex"] == {"type": "binary", "levels": values}
    code, printed = run(["generate", data, "-o", out, "--schema", draft, "--seed", 2, "--quiet"], capsys)
    assert code == 0, printed
    assert set(pd.read_csv(out, dtype=str)["sex"]) == written
    back = pd.read_csv(out, **EXACT_FLOATS)
    assert back["sex"].dtype == frame["sex"].dtype


def test_numeric_levels_match_values_as_numbers_and_decode_to_numbers():
    schema = Schema.from_dict({"columns": {"sex": {"type": "binary", "levels": [0, 1]},
                                           "cp": {"type": "categorical", "levels": [1, 2, 3]}}}, ["sex", "cp"])
    sex, cp = schema.column("sex"), schema.column("cp")
    assert list(sex.level_codes(pd.Series(["0", "1.0", " 1", "0.0"]))) == [0, 1, 1, 0]
    assert list(sex.level_codes(pd.Series([0.0, 1.0, 1, 0]))) == [0, 1, 1, 0]
    assert list(sex.level_codes(pd.Series(["1,0", "0"]))) == [1, 0]  # a file with a decimal comma
    assert list(cp.level_codes(pd.Series(["1", "3.0", "7", "x", None]))) == [0, 2, 3, 3, 3]  # 3: "other"
    assert "'sex'" in one_line_error(lambda: sex.level_codes(pd.Series(["0", "2"])))
    points = np.array([[0.9, 1, 0, 0, 0], [0.1, 0, 0, 1, 0]])
    out = schema.decode(points)
    assert out["sex"].dtype == np.int64 and list(out["sex"]) == [1, 0]
    assert out["cp"].dtype == np.int64 and list(out["cp"]) == [1, 3]
    other = schema.decode(np.array([[0.9, 0, 0, 0, 1]]))  # the "other" level is text: the column is text
    assert list(other["cp"]) == ["other"]
    assert schema.to_dict()["columns"]["sex"]["levels"] == [0, 1]
    assert Schema.from_dict(schema.to_dict(), ["sex", "cp"]) == schema
    assert "twice" in one_line_error(lambda: Schema.from_dict(
        {"columns": {"c": {"type": "categorical", "levels": [1, 1.0, 2]}}}, ["c"]))


def test_a_nullable_binary_code_column_decodes_to_nullable_integers():
    rng = np.random.default_rng(4)
    n = 1500
    frame = pd.DataFrame({"flag": rng.choice([0, 1], n).astype(float), "x": rng.uniform(0, 1, n)})
    frame.loc[rng.choice(n, 200, replace=False), "flag"] = np.nan
    schema = {"columns": {"flag": {"type": "binary", "levels": [0, 1], "nullable": True},
                          "x": {"type": "continuous", "bounds": [0, 1], "decimals": 2}}}
    rows = quiet_fit(frame, schema=schema).sample()
    assert str(rows["flag"].dtype) == "Int64" and rows["flag"].isna().any()
    assert set(rows["flag"].dropna()) <= {0, 1}


def test_the_draft_of_the_bundled_example_declares_its_decimals():
    content, _ = draft_schema(read_csv_frame(CLINIC))
    assert {name: spec.get("decimals") for name, spec in content["columns"].items()} == {
        "age": None, "bmi": 1, "systolic_bp": 1, "cholesterol": 1, "visits_per_year": None}


DEVELOPMENT_TABLES = ("iris", "glass", "yacht", "energy", "pima", "heart_cleveland")


@pytest.mark.parametrize("name", DEVELOPMENT_TABLES)
def test_the_development_tables_come_back_with_their_inputs_decimals(name, tmp_path, capsys):
    """With the schema synthdp schema drafts (its draft marking removed, as a user would after
    reviewing it), generate writes every column with the decimals its input uses: as many as the
    input's most, and exactly that many in every cell of a continuous column, or, where the draft lists a
    column's few values (yacht's and energy's grids), only those. (A column of whole numbers written
    "63.0", as heart_cleveland's, is drafted integer and written "63".)"""
    source = ROOT / "data" / f"{name}.csv"
    if not source.exists():
        pytest.skip("the development tables are not here")
    schema, out = tmp_path / "schema.json", tmp_path / "synthetic.csv"
    code, printed = run(["schema", source, "-o", schema], capsys)
    assert code == 0, printed
    content = json.loads(schema.read_text())
    content.pop("draft")
    schema.write_text(json.dumps(content))
    code, printed = run(["generate", source, "-o", out, "--schema", schema, "--seed", 7, "--quiet"], capsys)
    assert code == 0, printed
    real, written = pd.read_csv(source, dtype=str), pd.read_csv(out, dtype=str)
    for column, spec in content["columns"].items():
        if spec["type"] == "categorical":
            continue
        used = {decimals_used(value) for value in written[column].dropna()}
        significant = [decimals_used(value.rstrip("0").rstrip(".") if "." in value else value)
                       for value in real[column].dropna()]  # heart writes whole ages "63.0": as 0 decimals
        raw = max(decimals_used(value) for value in real[column].dropna())  # binary 0.0/1.0 come back so
        assert max(used) in {raw, max(significant)}, column
        if "values" in spec:  # a grid drafted as its values (yacht's, energy's): every cell one of them
            assert set(written[column].dropna().astype(float)) <= set(map(float, spec["values"])), column
        elif spec["type"] == "continuous":
            assert used == {spec["decimals"]}, column
