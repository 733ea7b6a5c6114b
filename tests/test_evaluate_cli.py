"""``synthdp evaluate``: text and JSON reports, and bad inputs ending in a one-line error."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from test_cli import _write
from test_output_files import strict_json

from synthdp.cli import main
from synthdp.evaluation.metrics import utility_report
from synthdp.reader.table import EXACT_FLOATS

PLANTED = 98765.4321  # a distinctive real value that must never be printed in an error


@pytest.fixture
def tables(tmp_path):
    rng = np.random.default_rng(2)
    n = 200
    age = rng.integers(20, 80, n).astype(float)
    income = 1e3 * age + rng.normal(0, 5e3, n)
    score = rng.uniform(0, 1, n)
    real = pd.DataFrame({"age": age, "income": income, "score": score})
    real.loc[3, "income"] = PLANTED
    synth = pd.DataFrame({"score": rng.uniform(0, 1, 150), "age": rng.integers(20, 80, 150).astype(float),
                          "income": rng.uniform(1e4, 9e4, 150)})  # other column order, no age-income relation
    synth.loc[:9] = synth.loc[0].to_numpy()  # ten identical rows
    real_path, synth_path = tmp_path / "real.csv", tmp_path / "synth.csv"
    real.to_csv(real_path, index=False)
    synth.to_csv(synth_path, index=False)
    bounds = tmp_path / "bounds.json"
    bounds.write_text(json.dumps({"age": {"bounds": [18, 90], "type": "integer"}, "income": [0, 1e5], "score": [0, 1]}))
    return real_path, synth_path, bounds


def run(args, capsys):
    try:
        code = main([str(a) for a in args])
    except SystemExit as stop:  # argparse's own errors
        code = stop.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_text_report(tables, capsys):
    real, synth, bounds = tables
    code, out, err = run(["evaluate", "--real", real, "--synth", synth, "--bounds", bounds, "--target", "income",
                          "--queries", 50], capsys)
    assert code == 0, err
    assert err == ""
    note, *lines = out.splitlines()  # first, that the scores are the real table's: not private
    assert note.startswith("NOTE: these scores are computed from the real table and are NOT differentially private")
    assert lines[0].split() == ["real", "synthetic"]
    assert lines[1].split() == ["rows", "200", "150"]
    assert lines[2].split() == ["distinct", "rows", "200", str(150 - 9)]  # ten identical synthetic rows count once
    assert "Kolmogorov-Smirnov" in out and "correlation" in out and "predict income (regression, R^2" in out
    assert "over 50 random sums" in out and "mapped to [-1, 1] by the given bounds)" in out
    sigma_rows = [line.split()[0] for line in lines if line.split()[:1] in (["2"], ["4"], ["6"], ["8"], ["10"])]
    assert sigma_rows == ["2", "4", "6", "8", "10"]


def test_json_report_is_the_python_report(tables, capsys):
    real, synth, bounds = tables
    code, out, err = run(["evaluate", "--real", real, "--synth", synth, "--bounds", bounds, "--target", "income",
                          "--queries", 40, "--seed", 5, "--json"], capsys)
    assert code == 0, err
    printed = json.loads(out)
    expected = utility_report(pd.read_csv(real, **EXACT_FLOATS), pd.read_csv(synth, **EXACT_FLOATS),
                              json.loads(bounds.read_text()), "income",
                              n_queries=40, seed=5)
    assert printed == json.loads(json.dumps(expected))
    assert printed["distinct_rows"] == {"real": 200, "synthetic": 150 - 9}  # ten identical rows count once
    # the synthetic table has no age-income relation: the model trained on it does much worse (the tables
    # and the split are seeded, so this margin is deterministic, not a sampling bound)
    model = printed["model"]
    assert model["train_real_test_real"] > 0.5 > model["train_synth_test_real"]


def test_without_bounds_the_real_min_and_max_normalise_both_tables(tables, capsys):
    real, synth, _ = tables
    code, out, err = run(["evaluate", "--real", real, "--synth", synth, "--queries", 10, "--json"], capsys)
    assert code == 0, err
    normalisation = json.loads(out)["smooth_queries"]["normalisation"]
    frame = pd.read_csv(real)
    assert normalisation["age"] == {"bounds": [frame["age"].min(), frame["age"].max()], "source": "real min/max"}
    assert json.loads(out)["model"] is None


def test_the_same_seed_prints_the_same_report(tables, capsys):
    real, synth, _ = tables
    outputs = [run(["evaluate", "--real", real, "--synth", synth, "--target", "age", "--queries", 20], capsys)[1]
               for _ in range(2)]
    assert outputs[0] == outputs[1] and "predict age" in outputs[0]


def test_a_table_against_itself_scores_perfectly(tables, capsys):
    real, _, _ = tables
    code, out, _ = run(["evaluate", "--real", real, "--synth", real, "--queries", 10, "--json"], capsys)
    report = json.loads(out)
    assert code == 0 and report["ks"]["max"] == 0 and report["correlation"]["max"] == pytest.approx(0, abs=1e-12)
    assert max(report["smooth_queries"]["relative"]) == pytest.approx(0, abs=1e-12)


def test_evaluates_what_generate_wrote(tables, tmp_path, capsys):
    real, _, bounds = tables
    out_csv = tmp_path / "generated.csv"
    code, _, err = run(["generate", real, "-o", out_csv, "--bounds", bounds, "--seed", 1, "--n-candidates", 300,
                        "--quiet"], capsys)
    assert code == 0, err
    code, out, err = run(["evaluate", "--real", real, "--synth", out_csv, "--bounds", bounds, "--queries", 20,
                          "--json"], capsys)
    assert code == 0, err
    report = json.loads(out)
    assert report["rows"] == {"real": 200, "synthetic": 200}
    assert 1 <= report["distinct_rows"]["synthetic"] <= 200
    assert all(0 <= value <= 1 for value in report["ks"]["per_column"].values())


def test_evaluates_what_generate_wrote_from_another_csv_dialect(tmp_path, capsys):
    """generate reads a ';' / ',' / latin-1 file and writes plain CSV; evaluate with the same
    options reads the real table in its dialect and the synthetic one as generate wrote it."""
    rng = np.random.default_rng(4)
    real = pd.DataFrame({"größe": rng.uniform(150, 200, 120).round(1), "gewicht": rng.uniform(50, 100, 120).round(1)})
    real_csv = tmp_path / "real.csv"
    real.to_csv(real_csv, index=False, sep=";", decimal=",", encoding="latin-1")
    bounds = tmp_path / "b.json"
    bounds.write_text('{"größe": [140, 210], "gewicht": [40, 120]}', encoding="utf-8")
    dialect = ["--sep", ";", "--decimal", ",", "--encoding", "latin-1"]
    out_csv = tmp_path / "synthetic.csv"
    code, _, err = run(["generate", real_csv, "-o", out_csv, "--bounds", bounds, "--seed", 1, "--n-candidates", 300,
                        "--quiet", *dialect], capsys)
    assert code == 0, err
    code, out, err = run(["evaluate", "--real", real_csv, "--synth", out_csv, "--bounds", bounds, "--queries", 5,
                          "--json", "--no-sdmetrics", *dialect], capsys)
    assert code == 0, err
    assert set(json.loads(out)["ks"]["per_column"]) == {"größe", "gewicht"}


def test_a_synthetic_table_in_another_dialect_takes_the_synth_options(tables, tmp_path, capsys):
    real, synth, bounds = tables
    semicolons = tmp_path / "semi.csv"
    pd.read_csv(synth).to_csv(semicolons, index=False, sep=";", decimal=",")
    common = ["evaluate", "--real", real, "--synth", semicolons, "--bounds", bounds, "--queries", 5, "--json",
              "--no-sdmetrics"]
    code, out, err = run(common, capsys)
    errors = [line for line in err.splitlines() if line.startswith("synthdp: error:")]
    assert code == 2 and out == "" and len(errors) == 1
    assert errors[0].startswith("synthdp: error: synthetic table") and "pass --synth-sep ';'" in errors[0]
    code, out, err = run([*common, "--synth-sep", ";", "--synth-decimal", ","], capsys)
    assert code == 0, err
    assert json.loads(out)["rows"]["synthetic"] == 150
    code, _, err = run([*common, "--synth-sep", ";;"], capsys)
    assert code == 2 and err.strip().startswith("synthdp: error: synth-sep must be one character")
    code, _, err = run([*common, "--synth-sep", ";", "--synth-decimal", ",", "--synth-thousands", ","], capsys)
    assert code == 2 and err.strip().startswith("synthdp: error: synth-thousands must be one character")


def test_evaluate_reads_thousands_separators_in_either_table(tables, tmp_path, capsys):
    """--thousands for the --real table, --synth-thousands for the --synth one: the report of the
    same tables written plainly."""
    real, synth, bounds = tables

    def rewrite(path, name: str):
        frame = pd.read_csv(path).round(3)
        frame.to_csv(tmp_path / f"plain-{name}", index=False)
        cells = frame.map(lambda value: f"{value:,.3f}".translate(str.maketrans(",.", ".,")))
        cells.to_csv(tmp_path / name, index=False, sep=";")
        assert "." in (tmp_path / name).read_text()  # incomes past a thousand: written "12.345,678"
        return tmp_path / name, tmp_path / f"plain-{name}"

    (real_sep, real_plain), (synth_sep, synth_plain) = rewrite(real, "r.csv"), rewrite(synth, "s.csv")
    options = ["--bounds", bounds, "--queries", 5, "--json", "--no-sdmetrics", "--seed", 1]
    code, expected, err = run(["evaluate", "--real", real_plain, "--synth", synth_plain, *options], capsys)
    assert code == 0, err
    code, out, err = run(["evaluate", "--real", real_sep, "--synth", synth_sep, *options, "--sep", ";", "--decimal",
                          ",", "--thousands", ".", "--synth-sep", ";", "--synth-decimal", ",",
                          "--synth-thousands", "."], capsys)
    assert code == 0, err
    assert json.loads(out) == json.loads(expected)


def _synth(**changes):
    frame = pd.DataFrame({"age": [30.0, 40.0, 50.0], "income": [1e4, 2e4, 3e4], "score": [0.1, 0.2, 0.3]})
    return frame.assign(**changes)


BAD = {
    "synthetic lacks a column": (lambda: _synth().drop(columns="score"), [], "synthetic table has no column 'score'"),
    "synthetic has an extra column": (lambda: _synth(height=1.7), [], "real table has no column 'height'"),
    "text in the synthetic table": (lambda: _synth(score=["a", "b", "c"]), [], "column 'score' is not numeric"),
    "missing value": (lambda: _synth(score=[0.1, np.nan, 0.3]), [], "column 'score' has missing"),
    "one row": (lambda: "age,income,score\n1,2,3\n", [], "at least 2 rows"),
    "empty file": (lambda: "", [], "is empty"),
    "missing synthetic file": (None, [], "synthetic table"),
    "target not a column": (lambda: _synth(), ["--target", "height"], "'height'"),
    "bounds of an unknown column": (lambda: _synth(), ["--bounds", "BOUNDS"], "'height'"),
    "missing bounds file": (lambda: _synth(), ["--bounds", "absent.json"], "does not exist"),
    "no queries": (lambda: _synth(), ["--queries", "0"], "--queries"),
    "negative seed": (lambda: _synth(), ["--seed", "-1"], "--seed"),
    "unknown task": (lambda: _synth(), ["--task", "clustering"], "--task"),
    "queries not a number": (lambda: _synth(), ["--queries", "many"], "--queries"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_input_is_a_one_line_error(case, tables, tmp_path, capsys):
    real, _, _ = tables
    make, extra, expected = BAD[case]
    synth = tmp_path / "absent.csv" if make is None else _write(tmp_path, make(), "bad.csv")
    bounds = tmp_path / "bad_bounds.json"
    bounds.write_text(json.dumps({"height": [0, 3]}))
    extra = [str(bounds) if a == "BOUNDS" else str(tmp_path / a) if a.endswith(".json") else a for a in extra]
    code, out, err = run(["evaluate", "--real", real, "--synth", synth, "--queries", 5, *extra], capsys)
    assert code == 2 and out == ""
    errors = [line for line in err.splitlines() if line.startswith("synthdp: error:")]
    assert len(errors) == 1 and expected in errors[0], err
    assert "Traceback" not in err and "98765" not in err


def test_a_bad_real_table_is_named_and_its_values_are_not_printed(tmp_path, capsys):
    real = _write(tmp_path, pd.DataFrame({"age": [30.0, 40.0], "income": ["98765.4321", "high"]}), "real.csv")
    synth = _write(tmp_path, _synth().drop(columns="score"), "synth.csv")  # the same columns
    bounds = tmp_path / "bounds.json"  # declared numeric: a text value is an error (without types, inferred)
    bounds.write_text(json.dumps({"age": [0, 100], "income": [0, 1e6]}))
    code, out, err = run(["evaluate", "--real", real, "--synth", synth, "--bounds", bounds], capsys)
    assert code == 2 and out == ""
    assert err.strip().startswith(f"synthdp: error: real table '{real}': column 'income' is not numeric (")
    assert "column needs a schema" in err and len(err.strip().splitlines()) == 1


def test_too_few_rows_with_every_nullable_cell_names_the_table_and_the_columns(tables, tmp_path, capsys):
    real, _, _ = tables
    synth = _write(tmp_path, _synth(score=[0.1, np.nan, np.nan]), "synth.csv")
    bounds = tmp_path / "nullable.json"
    bounds.write_text(json.dumps({"score": {"bounds": [0, 1], "nullable": True}}))
    code, out, err = run(["evaluate", "--real", real, "--synth", synth, "--bounds", bounds, "--queries", 5], capsys)
    assert code == 2 and out == ""
    assert err.strip() == ("synthdp: error: fewer than 2 rows of the synthetic table without missing cells in the "
                           "nullable columns (score): nothing to compare")


def test_a_nullable_column_missing_in_every_synthetic_row_is_left_out_and_the_rest_scored(tables, tmp_path, capsys):
    """A nullable column the synthetic table never fills left no row to compare, and the whole report was
    refused; its shares of missing cells say what happened, and the other columns are scored without it
    (the same scores as a report of the tables without that column)."""
    real, _, _ = tables
    synth = _write(tmp_path, _synth(score=[np.nan] * 3), "synth.csv")
    bounds = tmp_path / "nullable.json"
    bounds.write_text(json.dumps({"age": [18, 90], "income": [0, 1e5], "score": {"bounds": [0, 1], "nullable": True}}))
    code, out, err = run(["evaluate", "--real", real, "--synth", synth, "--bounds", bounds, "--queries", 5, "--json",
                          "--no-sdmetrics"], capsys)
    assert code == 0, err
    report = json.loads(out)
    assert report["missing_cells"]["share_of_rows"]["score"] == {"real": 0.0, "synthetic": 1.0}
    assert "score: missing in every row of one table, so left out" in report["missing_cells"]["note"]
    without = {"age": [18, 90], "income": [0, 1e5]}
    expected = utility_report(pd.read_csv(real).drop(columns="score"), _synth().drop(columns="score"), without,
                              n_queries=5, seed=0, sdmetrics=False)
    assert report["tv"] == expected["tv"] and "score" not in report["tv"]["per_column"]
    code, out, err = run(["evaluate", "--real", real, "--synth", synth, "--bounds", bounds, "--queries", 5,
                          "--target", "score"], capsys)
    assert code == 2 and err.strip() == ("synthdp: error: target column 'score' (--target) is missing in every row "
                                         "of the synthetic table: no model can learn it")


def test_the_copies_are_read_with_the_nullable_column_left_out_of_the_scores(tables, tmp_path, capsys):
    """--copies beside a nullable column missing in every synthetic row: the copies were read as if the
    column left out were not nullable, and the report was refused ("column 'score' has missing or infinite
    values ... declare the column nullable", which it was). The copies' intervals are of the other columns."""
    real, _, _ = tables
    synth = _write(tmp_path, _synth(score=[np.nan] * 3), "synth.csv")
    for name in ("synth.1.csv", "synth.2.csv", "synth.reference.csv"):
        _write(tmp_path, _synth(score=[np.nan] * 3, age=[31.0, 42.0, 53.0]), name)
    bounds = tmp_path / "nullable.json"
    bounds.write_text(json.dumps({"age": [18, 90], "income": [0, 1e5], "score": {"bounds": [0, 1], "nullable": True}}))
    code, out, err = run(["evaluate", "--real", real, "--synth", synth, "--bounds", bounds, "--queries", 5, "--json",
                          "--no-sdmetrics", "--copies"], capsys)
    assert code == 0, err
    statistics = [row["statistic"] for row in json.loads(out)["intervals"]["statistics"]]
    assert statistics and not any("score" in statistic for statistic in statistics)


def test_a_table_whose_only_column_is_missing_in_every_synthetic_row_is_refused_as_that(tmp_path, capsys):
    """The only column left out: the refusal said "the real table has no columns", which it has."""
    real = _write(tmp_path, pd.DataFrame({"score": np.linspace(0, 1, 20)}), "real.csv")
    synth = _write(tmp_path, pd.DataFrame({"score": [np.nan] * 20}), "synth.csv")
    bounds = tmp_path / "nullable.json"
    bounds.write_text(json.dumps({"score": {"bounds": [0, 1], "nullable": True}}))
    code, _, err = run(["evaluate", "--real", real, "--synth", synth, "--bounds", bounds, "--queries", 5,
                        "--no-sdmetrics"], capsys)
    assert code == 2 and err.strip() == ("synthdp: error: score: missing in every row of one table, and no other "
                                         "column to compare")


def test_missing_real_file(tmp_path, capsys):
    code, _, err = run(["evaluate", "--real", tmp_path / "no.csv", "--synth", _write(tmp_path, _synth(), "s.csv")], capsys)
    assert code == 2 and err.strip() == f"synthdp: error: real table '{tmp_path / 'no.csv'}' does not exist"


def test_help_says_the_real_table_is_read_and_the_output_is_not_private():
    result = subprocess.run([sys.executable, "-m", "synthdp.cli", "evaluate", "--help"],
                            capture_output=True, text=True, check=True)
    text = " ".join(result.stdout.split())
    assert "--real" in text and "--synth" in text and "--json" in text
    assert "NOT differentially private" in text and "real table's min and max" in text


def test_the_real_table_may_be_a_parquet_file(tmp_path, capsys):
    """generate reads Parquet, so evaluate compares it too: the same report as from its CSV."""
    pytest.importorskip("pyarrow")
    from synthdp.cli import main

    rng = np.random.default_rng(4)
    real = pd.DataFrame({"a": rng.uniform(0, 1, 200), "b": rng.normal(0, 1, 200)})
    real.to_csv(tmp_path / "real.csv", index=False)
    real.to_parquet(tmp_path / "real.parquet")
    real.sample(frac=1, random_state=1).to_csv(tmp_path / "synth.csv", index=False)
    printed = []
    for name in ("real.csv", "real.parquet"):
        assert main(["evaluate", "--real", str(tmp_path / name), "--synth", str(tmp_path / "synth.csv"),
                     "--json", "--no-sdmetrics"]) == 0
        printed.append(json.loads(capsys.readouterr().out))
    assert printed[0] == printed[1]


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_a_synthetic_table_of_other_columns_is_named_as_such_before_its_cells_are_read(tables, tmp_path, capsys,
                                                                                        suffix):
    """Another table given as --synth (another release's output): the error says the columns differ,
    and how many, not that one of its columns has missing cells or text (which reading the cells
    first would say), whatever the file's format."""
    if suffix == ".parquet":
        pytest.importorskip("pyarrow")
    real, _, bounds = tables
    other = pd.DataFrame({"score": [0.5, 0.6, None], "height": ["a", "b", "c"], "weight": [1.0, 2.0, 3.0]})
    path = tmp_path / f"other{suffix}"
    other.to_csv(path, index=False) if suffix == ".csv" else other.to_parquet(path)
    code, out, err = run(["evaluate", "--real", real, "--synth", path, "--bounds", bounds], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert ("the synthetic table has no column 'age' (2 of the real table's columns are not in the synthetic one, "
            "2 of the synthetic table's not in the real one" in err)


def test_a_parquet_real_table_by_privacy_unit(tmp_path, capsys):
    """The unit column is looked up in a Parquet table's footer (it was read as a CSV header, and the
    command refused the file as text that is not utf-8)."""
    pytest.importorskip("pyarrow")
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"pid": rng.integers(0, 100, 400), "x": rng.normal(size=400), "y": rng.normal(size=400)})
    real, synth = tmp_path / "real.parquet", tmp_path / "synth.csv"
    frame.to_parquet(real)
    frame.to_csv(synth, index=False)
    bounds = tmp_path / "b.json"
    bounds.write_text(json.dumps({"x": [-4, 4], "y": [-4, 4]}))
    code, out, err = run(["evaluate", "--real", real, "--synth", synth, "--bounds", bounds, "--privacy-unit", "pid",
                          "--no-sdmetrics"], capsys)
    assert code == 0, err
    units = frame["pid"].nunique()
    assert f"privacy unit 'pid': real {units} units" in out and f"synthetic {units} units" in out


def test_the_unit_column_neither_types_the_table_nor_may_miss_a_cell(tmp_path, capsys):
    """Without types, the unit column (left out of the scores) is left out of the inference: the rest,
    numbers only, is compared as a numeric table, with no note; a unit cell missing in either table
    is one line, as generate says it (an empty unit column was a traceback, a missing cell a row
    left out of the counts)."""
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"pid": [f"P{i // 3}" for i in range(300)], "x": rng.normal(size=300),
                          "y": rng.normal(size=300)})
    real, synth = tmp_path / "real.csv", tmp_path / "synth.csv"
    frame.to_csv(real, index=False)
    frame.to_csv(synth, index=False)
    code, out, err = run(["evaluate", "--real", real, "--synth", synth, "--privacy-unit", "pid", "--queries", 5,
                          "--no-sdmetrics"], capsys)
    assert code == 0 and "inferred" not in err, err
    assert "privacy unit 'pid': real 100 units" in out
    for table, pid in ((real, None), (synth, [None] * 299 + ["P1"])):
        frame.assign(pid=pid).to_csv(table, index=False)
        code, out, err = run(["evaluate", "--real", real, "--synth", synth, "--privacy-unit", "pid", "--queries", 5,
                              "--no-sdmetrics", "--bounds", _write(tmp_path, '{"x": [-5, 5], "y": [-5, 5]}', "b.json")],
                             capsys)
        side = "real" if table == real else "synthetic"
        assert code == 2 and out == "" and err.strip() == (
            f"synthdp: error: the {side} table's privacy unit column 'pid' has missing values: every row needs "
            "its unit (--privacy-unit)"), err
        frame.to_csv(table, index=False)


def test_an_undefined_statistic_of_the_copies_is_null_in_the_json(tables, tmp_path, capsys):
    """A real column that is constant has no correlation: its interval's numbers were written as the
    strings "nan" (a number a reader cannot compare), where every other undefined number of the report is
    null. They are null, and the file is strict JSON."""
    real = _write(tmp_path, pd.DataFrame({"age": np.linspace(20, 80, 40), "income": np.linspace(1e4, 9e4, 40),
                                          "score": np.full(40, 0.5)}), "constant.csv")
    synth = _write(tmp_path, _synth(), "synth.csv")
    for name in ("synth.1.csv", "synth.2.csv", "synth.reference.csv"):
        _write(tmp_path, _synth(score=[0.5] * 3), name)
    _, _, bounds = tables
    code, out, err = run(["evaluate", "--real", real, "--synth", synth, "--bounds", bounds, "--queries", 5, "--json",
                          "--no-sdmetrics", "--copies"], capsys)
    assert code == 0, err
    rows = {row["statistic"]: row for row in strict_json(out)["intervals"]["statistics"]}
    undefined = rows["corr age ~ score"]
    assert [undefined[key] for key in ("real", "estimate", "lower", "upper")] == [None] * 4
    assert "nan" not in out
    # nor is it a miss: an interval can neither hold nor miss a value that is not defined
    intervals = strict_json(out)["intervals"]
    assert undefined["holds"] is None and intervals["checked"] == len(rows) - sum(
        row["real"] is None for row in rows.values())
    code, out, err = run(["evaluate", "--real", real, "--synth", synth, "--bounds", bounds, "--queries", 5,
                          "--no-sdmetrics", "--copies"], capsys)
    assert code == 0 and [line for line in out.splitlines() if "corr age ~ score" in line][0].split()[-2] == "n/a"


def test_a_real_column_too_wide_to_normalise_is_named_not_a_points_error(tmp_path, capsys):
    """Without bounds the real min and max normalise a column; values near +-1.8e308 leave a width that
    overflows: the error names the column (it was "points must be finite", naming nothing) and no value."""
    real = _write(tmp_path, pd.DataFrame({"age": [30.0, 40.0, 50.0], "income": [1.7e308, 2e4, -1.7e308]}),
                  "real.csv")
    synth = _write(tmp_path, pd.DataFrame({"age": [31.0, 41.0, 51.0], "income": [1e4, 2e4, 3e4]}), "synth.csv")
    code, out, err = run(["evaluate", "--real", real, "--synth", synth, "--queries", 5, "--no-sdmetrics"], capsys)
    assert code == 2 and out == ""
    assert err.startswith("synthdp: error: column 'income' of the real table has a range too wide") and \
        len(err.strip().splitlines()) == 1, err
    assert "1.7e" not in err and "308" not in err
