"""``synthdp evaluate`` without a schema: the column types inferred from the real table
(synthdp.evaluation.column_types), and date columns drawn with ISO dates in the HTML page."""

import json
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from synthdp import SmoothSynthesizer
from synthdp.cli import main
from synthdp.domain.schema import Schema
from synthdp.errors import SynthDPError
from synthdp.evaluation.column_types import (
    MAX_INFERRED_LEVELS,
    infer_schema,
    inference_note,
    needs_schema,
)
from synthdp.evaluation.metrics import utility_report
from synthdp.reader.draft import draft_schema
from synthdp.reader.table import read_csv_frame

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"
ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def run(args, capsys):
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def types(content: dict) -> dict[str, str]:
    return {name: spec["type"] for name, spec in content["columns"].items()}


# ------------------------------------------------------------------ the benchmark tables
def test_iris_has_four_continuous_columns_and_a_categorical_species():
    content = infer_schema(read_csv_frame(DATA / "iris.csv"))
    assert types(content) == {"sepal_length": "continuous", "sepal_width": "continuous",
                              "petal_length": "continuous", "petal_width": "continuous", "species": "categorical"}
    assert content["columns"]["species"]["levels"] == ["Iris-setosa", "Iris-versicolor", "Iris-virginica"]
    assert content["columns"]["sepal_length"]["bounds"] == [4.3, 7.9]  # the real min and max
    assert needs_schema(content)


def test_heart_has_binary_codes_few_level_codes_and_measurements():
    real = read_csv_frame(DATA / "heart_cleveland.csv")
    content = infer_schema(real)
    assert types(content) == {
        "age": "integer", "sex": "binary", "cp": "categorical", "trestbps": "integer", "chol": "integer",
        "fbs": "binary", "restecg": "categorical", "thalach": "integer", "exang": "binary", "oldpeak": "continuous",
        "slope": "categorical", "ca": "categorical", "thal": "categorical", "num": "categorical"}
    columns = content["columns"]
    assert columns["sex"]["levels"] == [0, 1] and columns["cp"]["levels"] == [1, 2, 3, 4]
    assert columns["ca"].get("nullable") is True and columns["thal"].get("nullable") is True
    assert "nullable" not in columns["age"]
    schema = Schema.from_dict(content, list(real.columns))
    # the heart file writes its codes "1.0": they are the levels 1 of the inferred schema
    as_text = read_csv_frame(DATA / "heart_cleveland.csv", as_text=["sex", "cp"])
    assert (schema.column("sex").level_codes(as_text["sex"]) < 2).all()
    assert (schema.column("cp").level_codes(as_text["cp"]) < 4).all()


def test_adult_has_integer_columns_and_text_levels():
    content = infer_schema(read_csv_frame(DATA / "adult.csv"))
    found = types(content)
    assert {name for name, kind in found.items() if kind == "integer"} == {
        "age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week"}
    assert found["sex"] == "binary" and found["income"] == "binary"
    assert found["native-country"] == "categorical" and found["education"] == "categorical"
    configured = json.loads((ROOT / "configs" / "adult_schema.json").read_text())["columns"]
    for name, kind in found.items():  # the published schema's types, but for codes it bounds as integers
        assert kind == configured[name]["type"], name
    assert "other_label" not in content


# ------------------------------------------------------------------ the rules
def test_rules_on_a_small_table():
    rng = np.random.default_rng(0)
    n = 200
    frame = pd.DataFrame({
        "flag": rng.choice([True, False], n),
        "code": rng.integers(0, 4, n),                 # 4 whole non-negative values: a code
        "signed": rng.integers(-2, 2, n),              # negative: a number (SDV's rule)
        "count": rng.integers(0, 40, n),               # 40 values: a number
        "level": rng.choice([0.5, 1.5, 2.5], n),       # not whole: a number
        "pair": rng.choice([2.5, 7.5], n),             # two values: binary, its numbers the levels
        "text": rng.choice(["x", "y", "z", "other"], n),
        "ident": [f"id-{k}" for k in range(n)],        # an identifier: the most frequent 50 levels
        "const": np.full(n, 3.5),
    })
    frame.loc[5, "count"] = np.nan
    content = infer_schema(frame)
    assert types(content) == {"flag": "binary", "code": "categorical", "signed": "integer", "count": "integer",
                              "level": "continuous", "pair": "binary", "text": "categorical",
                              "ident": "categorical", "const": "continuous"}
    columns = content["columns"]
    assert columns["code"]["levels"] == [0, 1, 2, 3] and columns["pair"]["levels"] == [2.5, 7.5]
    assert columns["count"]["nullable"] is True and columns["count"]["bounds"][0] >= 0
    assert len(columns["ident"]["levels"]) == MAX_INFERRED_LEVELS
    assert columns["const"]["bounds"] == [2.5, 4.5]
    assert content["other_label"] == "(other)"  # a level called "other"
    Schema.from_dict(content, list(frame.columns))
    report = utility_report(frame.dropna(), frame.dropna(), schema=content, n_queries=5, sdmetrics=False)
    assert report["tv"]["max"] == 0


def test_a_few_rows_have_no_codes_and_an_empty_column_is_refused():
    assert types(infer_schema(pd.DataFrame({"a": [0, 1, 2, 0, 1], "b": [1.0, 2.0, 3.5, 4.0, 5.0]}))) == {
        "a": "integer", "b": "continuous"}
    with pytest.raises(SynthDPError, match="column 'b' of the real table has no values"):
        infer_schema(pd.DataFrame({"a": [1, 2, 3], "b": [np.nan] * 3}))


def test_dates_are_inferred_from_iso_text_and_datetime64():
    frame = pd.DataFrame({"visit": ["2021-03-04", "2021-05-01", "2022-01-31"],
                          "stamp": ["2020-01-01T05:06:07", "2020-02-01 00:00", "2020-03-01T12:00:00"],
                          "when": pd.to_datetime(["2020-01-01", "2020-06-01", "2020-07-01"]),
                          "bad": ["2021-02-30", "2021-03-01", "2021-03-02"]})
    content = infer_schema(frame)
    assert types(content) == {"visit": "date", "stamp": "datetime", "when": "date", "bad": "categorical"}
    assert content["columns"]["visit"]["bounds"] == ["2021-03-04", "2022-01-31"]
    assert content["columns"]["stamp"]["bounds"] == ["2020-01-01T05:06:07", "2020-03-01T12:00:00"]
    Schema.from_dict(content, list(frame.columns))


def test_iso_dates_beside_date_times_are_a_datetime_column_not_levels():
    """A writer that leaves out a midnight's time (2020-01-05 beside 2020-01-05T10:00) wrote a datetime
    column: inferred as categorical, each time was a level of its own."""
    frame = pd.DataFrame({"when": ["2020-01-05", "2020-01-05T10:11:12", "2020-03-01 06:30", "2020-02-29"]})
    content = infer_schema(frame)
    assert content["columns"]["when"] == {"type": "datetime", "bounds": ["2020-01-05T00:00:00", "2020-03-01T06:30:00"]}
    assert types(infer_schema(pd.DataFrame({"when": ["2020-01-05", "2020-01-05T10:11:12", "soon"]}))) == {
        "when": "categorical"}


def test_a_numeric_table_does_not_need_a_schema_and_the_note_counts_the_types():
    numeric = infer_schema(pd.DataFrame({"a": np.arange(50) / 7, "b": np.arange(50)}))
    assert not needs_schema(numeric)
    content = infer_schema(read_csv_frame(DATA / "heart_cleveland.csv"))
    note = inference_note(content)
    assert "inferred from the real table" in note and "5 numeric, 3 binary, 6 categorical" in note
    assert "\n" not in note


def test_evaluate_without_a_schema_infers_the_types_and_says_so(tmp_path, capsys):
    """evaluate with neither --bounds nor --schema infers the types from the real table, notes it on
    stderr, and compares as with that schema given as --schema."""
    real_path = DATA / "heart_cleveland.csv"
    content, _ = draft_schema(read_csv_frame(real_path))
    del content["draft"]
    release_schema, synthetic = tmp_path / "release.json", tmp_path / "synthetic.csv"
    release_schema.write_text(json.dumps(content))
    code, _, err = run(["generate", real_path, "-o", synthetic, "--schema", release_schema, "--seed", 1, "--quiet"],
                       capsys)
    assert code == 0, err
    code, out, err = run(["evaluate", "--real", real_path, "--synth", synthetic, "--queries", 10, "--json",
                          "--no-sdmetrics"], capsys)
    assert code == 0, err
    assert err.startswith("synthdp: note: no --bounds or --schema: the column types were inferred from the real table")
    report = json.loads(out)
    assert report["columns"]["categorical"] == ["sex", "cp", "fbs", "restecg", "exang", "slope", "ca", "thal", "num"]
    # the synthetic table's binary codes (written 0.0/1.0 as the input) are the real table's levels, not "other"
    assert report["tv"]["per_column"]["sex"] < 0.5 and report["tv"]["per_column"]["exang"] < 0.5
    inferred = tmp_path / "inferred.json"
    inferred.write_text(json.dumps(infer_schema(read_csv_frame(real_path))))
    code, given, _ = run(["evaluate", "--real", real_path, "--synth", synthetic, "--schema", inferred,
                          "--queries", 10, "--json", "--no-sdmetrics"], capsys)
    assert code == 0 and json.loads(given)["tv"] == report["tv"]
    code, quiet, err = run(["evaluate", "--real", real_path, "--synth", synthetic, "--queries", 10, "--json",
                            "--no-sdmetrics", "--quiet"], capsys)  # --quiet: the same report, no note
    assert code == 0 and err == "" and json.loads(quiet)["tv"] == report["tv"]


def test_a_third_value_in_a_column_the_real_table_types_binary_is_other(tmp_path, capsys):
    """Without a schema, a column of two real values is binary; the synthetic table's third value
    (another tool's) is its "other" cell, as in a categorical column, not an error that asks to
    declare a schema the user did not give."""
    rng = np.random.default_rng(3)
    real = pd.DataFrame({"x": rng.normal(size=100), "smoker": rng.choice(["no", "yes"], 100)})
    synth = real.assign(smoker=["maybe"] * 10 + list(real["smoker"][10:]))
    real_path, synth_path = tmp_path / "real.csv", tmp_path / "synth.csv"
    real.to_csv(real_path, index=False)
    synth.to_csv(synth_path, index=False)
    code, out, err = run(["evaluate", "--real", real_path, "--synth", synth_path, "--queries", 10, "--json",
                          "--no-sdmetrics", "--target", "smoker"], capsys)
    assert code == 0, err
    assert "1 binary" in err
    report = json.loads(out)
    assert report["tv"]["per_column"]["smoker"] == pytest.approx(0.1)  # the 10 rows moved to "other"
    assert report["model"]["task"] == "classification"


# ------------------------------------------------------------------ dates in the HTML page
@pytest.fixture
def dated(tmp_path):
    rng = np.random.default_rng(5)
    n = 400
    days = rng.integers(0, 1400, n)
    frame = pd.DataFrame({
        "visit": (pd.Timestamp("2019-07-01") + pd.to_timedelta(days, unit="D")).strftime("%Y-%m-%d"),
        "stamp": (pd.Timestamp("2020-02-01") + pd.to_timedelta(rng.integers(0, 200 * 86_400, n), unit="s"))
        .strftime("%Y-%m-%dT%H:%M:%S"),
        "x": rng.normal(size=n) + days / 500,
    })
    bounds = {"visit": {"type": "date", "bounds": ["2019-01-01", "2023-12-31"]},
              "stamp": {"type": "datetime", "bounds": ["2020-01-01T00:00:00", "2020-12-31T23:59:59"]}, "x": [-6, 6]}
    real, bounds_path, synth = tmp_path / "real.csv", tmp_path / "bounds.json", tmp_path / "synth.csv"
    frame.to_csv(real, index=False)
    bounds_path.write_text(json.dumps(bounds))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        SmoothSynthesizer(epsilon=4, seed=2).fit(frame, bounds=bounds).sample().to_csv(synth, index=False)
    return real, synth, bounds_path


def _alt_texts(page: str) -> dict[str, str]:
    """Each column chart's alt text, by column."""
    return {column: alt for alt, column in re.findall(r'alt="([^"]*)" data-column="([^"]*)"', page)}


def test_the_html_page_draws_date_columns_with_iso_dates(dated, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    real, synth, bounds = dated
    page_path = tmp_path / "page.html"
    code, out, err = run(["evaluate", "--real", real, "--synth", synth, "--bounds", bounds, "--queries", 10,
                          "--json", "--html", page_path], capsys)
    assert code == 0, err
    normalisation = json.loads(out)["smooth_queries"]["normalisation"]
    assert normalisation["visit"]["type"] == "date" and normalisation["stamp"]["type"] == "datetime"
    assert "type" not in normalisation["x"]
    alts = _alt_texts(page_path.read_text(encoding="utf-8"))
    visit_ticks = alts["visit"].split("axis ticks ")[1].rstrip(")").split(", ")
    assert visit_ticks == ["2019-01-01", "2020-01-01", "2021-01-01", "2022-01-01", "2023-01-01"]
    stamp_ticks = alts["stamp"].split("axis ticks ")[1].rstrip(")").split(", ")
    assert 2 <= len(stamp_ticks) <= 5 and all(ISO_DATE.match(tick) for tick in stamp_ticks)
    assert "axis ticks" not in alts["x"]


def test_the_date_chart_has_iso_tick_labels_not_day_numbers():
    pytest.importorskip("matplotlib")
    from synthdp.evaluation.html import _column_figure, _matplotlib

    p = np.full(16, 1 / 16)
    figure = _column_figure(_matplotlib(), [], p, p, True, (17897.0, 19722.0), "visit", "date")
    labels = [label.get_text() for label in figure.axes[0].get_xticklabels()]
    assert labels == ["2019-01-01", "2020-01-01", "2021-01-01", "2022-01-01", "2023-01-01"]
    plain = _column_figure(_matplotlib(), [], p, p, True, (17897.0, 19722.0), "days", None)
    positions = plain.axes[0].get_xticks()
    assert all(17000 < tick < 21000 for tick in positions)  # a numeric column keeps its numbers


@pytest.mark.parametrize(("kind", "bounds", "expected"), [
    ("date", ("2021-03-01", "2021-05-20"), ["2021-03-01", "2021-04-01", "2021-05-01"]),
    ("date", ("1900-01-01", "2100-01-01"), ["1900-01-01", "1950-01-01", "2000-01-01", "2050-01-01", "2100-01-01"]),
    ("datetime", ("2020-01-01T03:00:00", "2020-01-01T17:00:00"),
     ["2020-01-01T03:00", "2020-01-01T06:00", "2020-01-01T09:00", "2020-01-01T12:00", "2020-01-01T15:00"]),
    ("datetime", ("2020-01-01T00:00:00", "2020-12-31T23:59:59"),
     ["2020-01-01", "2020-04-01", "2020-07-01", "2020-10-01"]),
    # bounds outside pandas' nanosecond range (1677 to 2262), where the HTML report used to stop with a traceback
    ("date", ("1850-01-01", "2400-12-31"), ["1850-01-01", "2050-01-01", "2250-01-01"]),
    ("datetime", ("0001-01-01T00:00:00", "9999-12-31T23:59:59"),
     ["0001-01-01", "2001-01-01", "4001-01-01", "6001-01-01", "8001-01-01"]),
    ("date", ("0005-01-01", "0007-06-01"), ["0005-01-01", "0005-07-01", "0006-01-01", "0006-07-01", "0007-01-01"]),
    ("datetime", ("2300-01-01T00:00:00", "2300-01-01T00:00:10"), ["2300-01-01T00:00:00", "2300-01-01T00:00:10"]),
])
def test_time_ticks(kind, bounds, expected):
    from synthdp.domain.dates import parse_bound
    from synthdp.evaluation.html import time_ticks

    lower, upper = (parse_bound("t", kind, value) for value in bounds)
    positions, labels = time_ticks(lower, upper, kind)
    assert labels == expected
    assert all(lower <= position <= upper for position in positions)


def test_a_schema_date_column_is_drawn_with_dates_too(dated, tmp_path):
    pytest.importorskip("matplotlib")
    from synthdp.evaluation.html import render_html
    from synthdp.reader.dates import with_time_values

    real_path, synth_path, bounds_path = dated
    bounds = json.loads(bounds_path.read_text())
    content = {"columns": {"visit": bounds["visit"], "stamp": bounds["stamp"],
                           "x": {"type": "continuous", "bounds": [-6, 6]}}}
    times = {"visit": "date", "stamp": "datetime"}
    real, synth = (with_time_values(pd.read_csv(path), ["visit", "stamp", "x"], times) for path in (real_path, synth_path))
    report = utility_report(real, synth, schema=content, n_queries=5, sdmetrics=False)
    alts = _alt_texts(render_html(report, real, synth, schema=content))
    assert "axis ticks 2019-01-01, 2020-01-01" in alts["visit"]


def test_evaluate_names_a_real_table_without_rows_when_it_would_infer_its_types(tmp_path, capsys):
    """Without --bounds or --schema, a real table with a header only is refused naming the file (the
    error said only "the real table"), before any score; nothing is written."""
    real, synthetic = tmp_path / "real.csv", tmp_path / "synthetic.csv"
    real.write_text("a,b\n")
    synthetic.write_text("a,b\n1,2\n")
    code, out, err = run(["evaluate", "--real", real, "--synth", synthetic], capsys)
    assert code != 0 and out == ""
    assert err == f"synthdp: error: real table '{real}' has no rows or no columns: nothing to compare\n"
