"""synthdp schema: a draft schema read from the data (types, round bounds, levels, nullable),
marked as a draft, and a release that uses the draft unchanged reported as NOT private."""

import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest

from synthdp import SmoothSynthesizer
from synthdp import cli as cli_module
from synthdp.cli import main
from synthdp.domain.schema import Schema
from synthdp.errors import PrivacyLeakWarning
from synthdp.pipeline.run import DRAFT_SCHEMA
from synthdp.reader.draft import DEFAULT_MAX_LEVELS, DRAFT_ENTRY, draft_schema, round_bounds, round_step

PLANTED = 12345.6789  # a distinctive private value that must never be printed
SECRET_LEVEL = "zz-secret-level"  # a distinctive private level: in the draft file, never printed


def adult_like(n: int = 240, seed: int = 0) -> pd.DataFrame:
    """Integer, continuous, binary, categorical, a high-cardinality text column, and missing cells."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "age": rng.integers(17, 91, n),
        "income": rng.uniform(2e4, 8e4, n),
        "sex": rng.choice(["Female", "Male"], n),
        "workclass": rng.choice(["Private", "State-gov", "Self-emp", SECRET_LEVEL], n, p=[0.6, 0.2, 0.15, 0.05]),
        "id": [f"person-{i % 80}" for i in range(n)],  # 80 distinct values: more than the default 50
        "hours": rng.integers(1, 100, n).astype(float),
    })
    frame.loc[3, "income"] = PLANTED
    frame.loc[[2, 11, 40], "hours"] = np.nan  # missing cells: "nullable"
    return frame


def run(args, capsys):
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def is_round(lower: float, upper: float, data_width: float) -> bool:
    """Both bounds are multiples of one step 1, 2 or 5 x 10^k between 1/100 and 1/20 of the data's width."""
    for power in range(-12, 13):
        for mantissa in (1, 2, 5):
            step = mantissa * 10.0**power
            if data_width / 100 <= step <= data_width / 20 and all(
                    abs(value / step - round(value / step)) < 1e-9 for value in (lower, upper)):
                return True
    return False


# ------------------------------------------------------------------ rounding
@pytest.mark.parametrize(("lower", "upper", "integer", "expected"), [
    (17, 90, True, (16, 90)),                 # step 2
    (1, 99, True, (0, 100)),
    (0.0123, 0.987, False, (0, 1)),           # step 0.02
    (20312.5, 79980.25, False, (20000, 80000)),  # step 2000
    (-3.7, 12.2, False, (-4, 12.5)),          # step 0.5
    (5, 5, True, (4, 6)),                     # a constant: widened, integers stay integers
    (5, 5, False, (4.5, 5.5)),
    (0, 0, False, (-0.1, 0.1)),
    (0.2, 0.2, False, (0.1, 0.3)),
    (3, 4, True, (3, 4)),                     # an integer column's step is at least 1
])
def test_round_bounds_examples(lower, upper, integer, expected):
    assert round_bounds(lower, upper, integer) == pytest.approx(expected, abs=1e-12)


def test_round_bounds_contain_the_range_and_are_round():
    rng = np.random.default_rng(3)
    for _ in range(2000):
        scale = 10.0 ** rng.uniform(-6, 9)
        lower, upper = np.sort(rng.normal(rng.normal() * scale * 5, scale, 2))
        integer = bool(rng.random() < 0.3)
        if integer:
            lower, upper = math.floor(lower), math.ceil(upper)
        low, high = round_bounds(float(lower), float(upper), integer)
        assert low <= lower and high >= upper and low < high
        step = max(round_step(upper - lower), 1.0 if integer else 0.0) if upper > lower else None
        if step is not None:
            # within one step of the data on each side, on multiples of the step
            assert lower - low <= step * (1 + 1e-9) and high - upper <= step * (1 + 1e-9)
            assert is_round(low, high, upper - lower) or (integer and step == 1.0)
        if integer:
            assert low == int(low) and high == int(high)


def test_round_step_is_a_round_number_between_a_fiftieth_and_a_twentieth():
    for width in [1e-9, 0.3, 1, 7.3, 19.99, 20, 73, 1e5, 2.5e12]:
        step = round_step(width)
        assert width / 50 <= step * (1 + 1e-12) and step <= width / 20 * (1 + 1e-12)
        mantissa = step / 10.0 ** math.floor(math.log10(step) + 1e-12)
        assert min(abs(mantissa - m) for m in (1, 2, 5)) < 1e-9


def test_round_bounds_refuse_non_finite_ranges():
    from synthdp import SynthDPError

    for lower, upper in [(0, math.inf), (math.nan, 1), (2, 1), (-1e308, 1e308)]:
        with pytest.raises(SynthDPError):
            round_bounds(lower, upper)


# ------------------------------------------------------------------ the draft
def test_draft_of_a_mixed_table(tmp_path, capsys):
    frame = adult_like()
    data, draft = tmp_path / "adult.csv", tmp_path / "schema.json"
    frame.to_csv(data, index=False)
    code, printed = run(["schema", data, "-o", draft], capsys)
    assert code == 0, printed
    content = json.loads(draft.read_text())
    assert content["draft"] == DRAFT_ENTRY and list(content)[0] == "draft"
    assert content["draft"]["from_data"] is True and "NOT protected" in content["draft"]["note"]
    columns = content["columns"]
    assert list(columns) == list(frame.columns)
    assert {name: spec["type"] for name, spec in columns.items()} == {
        "age": "integer", "income": "continuous", "sex": "binary", "workclass": "categorical",
        "id": "categorical", "hours": "integer"}
    assert columns["sex"]["levels"] == ["Female", "Male"]
    assert columns["workclass"]["levels"] == sorted(["Private", "State-gov", "Self-emp", SECRET_LEVEL])
    assert columns["id"]["levels"] == "discover"
    # every value seen is listed: no "other" level (binary columns and discovered levels have no such mark)
    assert [name for name, spec in columns.items() if "other" in spec] == ["workclass"]
    assert columns["workclass"]["other"] is False
    assert [name for name, spec in columns.items() if spec.get("nullable")] == ["hours"]
    for name in ("age", "income", "hours"):
        lower, upper = columns[name]["bounds"]
        values = frame[name].dropna()
        assert lower <= values.min() and upper >= values.max(), name
        assert is_round(lower, upper, values.max() - values.min()), name
    for name in ("age", "hours"):
        assert all(isinstance(bound, int) for bound in columns[name]["bounds"])
    # the notes name the columns (one line each), never a value
    notes = [line for line in printed.splitlines() if line.startswith("synthdp: note:")]
    assert len(notes) == 3 and "'id'" in notes[0] and "'hours'" in notes[1] and "missing" in notes[1]
    assert "'workclass'" in notes[2] and "\"other\": false" in notes[2]
    assert "NOT private" in printed
    assert str(PLANTED) not in printed and SECRET_LEVEL not in printed and "person-" not in printed


def test_max_levels_lists_the_levels_of_a_column_below_it(tmp_path, capsys):
    data, draft = tmp_path / "adult.csv", tmp_path / "schema.json"
    adult_like().to_csv(data, index=False)
    code, printed = run(["schema", data, "-o", draft, "--max-levels", 80], capsys)
    assert code == 0, printed
    assert json.loads(draft.read_text())["columns"]["id"]["levels"] == sorted(f"person-{i}" for i in range(80))
    assert cli_module.DEFAULT_MAX_LEVELS == DEFAULT_MAX_LEVELS  # the CLI's copy (no pandas at --help)


def test_draft_reads_other_csv_dialects_and_avoids_a_level_named_other(tmp_path, capsys):
    frame = pd.DataFrame({"x": [1.5, 2.25, 3.0, 4.75], "kind": ["other", "a", "b", "a"]})
    data, draft = tmp_path / "semi.csv", tmp_path / "schema.json"
    frame.to_csv(data, index=False, sep=";", decimal=",")
    code, printed = run(["schema", data, "-o", draft, "--sep", ";", "--decimal", ","], capsys)
    assert code == 0, printed
    content = json.loads(draft.read_text())
    assert content["columns"]["x"]["type"] == "continuous"
    assert content["other_label"] not in content["columns"]["kind"]["levels"]
    Schema.from_dict(content, ["x", "kind"])  # a valid schema: the draft entry is ignored


def test_draft_reads_numbers_with_thousands_separators(tmp_path, capsys):
    """--thousands: "1.234,5" is the number 1234.5 (without it, the column would be text)."""
    data, draft = tmp_path / "semi.csv", tmp_path / "schema.json"
    data.write_text("x;n\n1.234,5;1.000.000\n-2.000,25;12\n17,75;3.456\n")
    code, printed = run(["schema", data, "-o", draft, "--sep", ";", "--decimal", ",", "--thousands", "."], capsys)
    assert code == 0, printed
    columns = json.loads(draft.read_text())["columns"]
    assert columns["x"]["type"] == "continuous" and columns["x"]["decimals"] == 2
    assert columns["x"]["bounds"][0] <= -2000.25 and columns["x"]["bounds"][1] >= 1234.5
    assert columns["n"]["type"] == "integer" and columns["n"]["bounds"][1] >= 1_000_000


# ------------------------------------------------------------------ releases with the draft
def test_a_release_with_the_draft_is_not_private_until_the_entry_is_deleted(tmp_path, capsys):
    frame = adult_like()
    data, draft = tmp_path / "adult.csv", tmp_path / "draft.json"
    frame.to_csv(data, index=False)
    assert run(["schema", data, "-o", draft], capsys)[0] == 0
    # drop the nullable column from the draft and the data (this test is about the draft marker)
    content = json.loads(draft.read_text())
    del content["columns"]["hours"]
    draft.write_text(json.dumps(content))
    clean = tmp_path / "clean.csv"
    frame.drop(columns="hours").to_csv(clean, index=False)
    levels = ["--delta", 1e-6, "--levels-share", 0.1]  # the drafted "discover" column
    report = tmp_path / "report.json"
    code, printed = run(["generate", clean, "-o", tmp_path / "synthetic.csv", "--schema", draft, "--report", report,
                         "--seed", 1, "--quiet", *levels], capsys)
    assert code == 0, printed
    privacy = json.loads(report.read_text())["privacy"]
    assert privacy["differentially_private"] is False and DRAFT_SCHEMA in privacy["caveats"]
    assert f"synthdp: warning: {DRAFT_SCHEMA}" in printed
    # the same schema, edited: without the draft entry the release is DP again (no seed)
    del content["draft"]
    edited = tmp_path / "schema.json"
    edited.write_text(json.dumps(content))
    code, printed = run(["generate", clean, "-o", tmp_path / "synthetic.csv", "--schema", edited, "--report", report,
                         "--quiet", "--overwrite", *levels], capsys)
    assert code == 0, printed
    privacy = json.loads(report.read_text())["privacy"]
    assert privacy["differentially_private"] is True and privacy["caveats"] == []
    # the one warning left: the drafted "discover" id column, every value unique, keeps no level
    assert [line for line in printed.splitlines() if "warning" in line] == [
        line for line in printed.splitlines() if "kept no level in DP level discovery ('id')" in line]
    assert str(PLANTED) not in printed


def test_the_python_api_warns_about_a_draft_schema():
    frame = adult_like(120).drop(columns=["hours", "id"])
    content, _ = draft_schema(frame)
    with pytest.warns(PrivacyLeakWarning, match="draft"):
        synth = SmoothSynthesizer(seed=0, n_candidates=300).fit(frame, schema=content, synthesize=False)
    assert DRAFT_SCHEMA in synth.privacy_report()["privacy"]["caveats"]
    del content["draft"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        synth = SmoothSynthesizer(seed=0, n_candidates=300).fit(frame, schema=content, synthesize=False)
    assert DRAFT_SCHEMA not in synth.privacy_report()["privacy"]["caveats"]


# ------------------------------------------------------------------ bad input
def test_output_equal_to_the_input_is_refused(tmp_path, capsys, monkeypatch):
    data = tmp_path / "adult.csv"
    adult_like().to_csv(data, index=False)
    before = data.read_bytes()
    monkeypatch.chdir(tmp_path)
    for output in (data, "adult.csv", "./adult.csv"):
        code, printed = run(["schema", data, "-o", output], capsys)
        assert code == 2 and printed.count("\n") == 1 and printed.startswith("synthdp: error: --output")
        assert "is the input" in printed
    assert data.read_bytes() == before
    assert sorted(path.name for path in tmp_path.iterdir()) == ["adult.csv"]  # no temporary left behind


@pytest.mark.parametrize(("args", "message"), [
    (["missing.csv", "-o", "schema.json"], "input file 'missing.csv' does not exist"),
    (["data.csv", "-o", "schema.json", "--max-levels", 1], "--max-levels must be an integer >= 2"),
    (["data.csv", "-o", "no-such-folder/schema.json"], "output folder 'no-such-folder' does not exist"),
])
def test_bad_input_gives_one_line_and_writes_nothing(tmp_path, capsys, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    adult_like(60).to_csv("data.csv", index=False)
    code, printed = run(["schema", *args], capsys)
    assert code == 2 and printed == f"synthdp: error: {message}\n"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["data.csv"]


def test_an_empty_numeric_column_is_named_without_values(tmp_path, capsys):
    data = tmp_path / "data.csv"
    pd.DataFrame({"a": [PLANTED, 2.0, 3.0], "b": [np.nan] * 3}).to_csv(data, index=False)
    code, printed = run(["schema", data, "-o", tmp_path / "s.json"], capsys)
    assert code == 2 and printed.count("\n") == 1 and "column 'b'" in printed and str(PLANTED) not in printed


def test_a_parquet_file_drafts_the_schema_its_csv_would(tmp_path, capsys):
    """synthdp schema reads a Parquet file (by its suffix) as generate does: the same draft as the
    same table written as CSV; a file that is not Parquet under that name is one line naming it."""
    pytest.importorskip("pyarrow")
    frame = adult_like()
    frame.to_csv(tmp_path / "t.csv", index=False)
    frame.to_parquet(tmp_path / "t.parquet", index=False)
    assert run(["schema", tmp_path / "t.csv", "-o", tmp_path / "from_csv.json"], capsys)[0] == 0
    assert run(["schema", tmp_path / "t.parquet", "-o", tmp_path / "from_parquet.json"], capsys)[0] == 0
    assert json.loads((tmp_path / "from_parquet.json").read_text()) == json.loads((tmp_path / "from_csv.json").read_text())
    (tmp_path / "fake.parquet").write_text("a,b\n1,2\n")
    code, printed = run(["schema", tmp_path / "fake.parquet", "-o", tmp_path / "s.json"], capsys)
    assert code == 2 and printed.strip() == f"synthdp: error: input file '{tmp_path / 'fake.parquet'}' is not a well-formed Parquet file"


def test_a_parquet_file_s_empty_text_is_drafted_as_a_schema_its_release_accepts(tmp_path, capsys):
    """A Parquet file (or a DataFrame) may hold empty text, which a CSV reads as a missing cell and no
    schema accepts as a level: the draft listed "" as a level (binary ["", "k"]) and the release with it
    failed ("has an empty level"). It lists the other values, in a categorical column whose "other"
    level takes the empty text, and a note names the column, never a value."""
    pytest.importorskip("pyarrow")
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"x": rng.uniform(0, 1, 300), "tag": rng.choice(["", SECRET_LEVEL], 300),
                          "kind": rng.choice(["", "a", "b", "c"], 300)})
    frame.to_parquet(tmp_path / "t.parquet", index=False)
    code, printed = run(["schema", tmp_path / "t.parquet", "-o", tmp_path / "s.json"], capsys)
    assert code == 0 and "'tag', 'kind' hold empty text" in printed and SECRET_LEVEL not in printed
    columns = json.loads((tmp_path / "s.json").read_text())["columns"]
    assert columns["tag"] == {"type": "categorical", "levels": [SECRET_LEVEL]}
    assert columns["kind"] == {"type": "categorical", "levels": ["a", "b", "c"]}
    code, printed = run(["fit", tmp_path / "t.parquet", "-o", tmp_path / "m.synthdp", "--schema", tmp_path / "s.json",
                         "--epsilon", "4", "--quiet"], capsys)
    assert code == 0, printed
    code, printed = run(["sample", tmp_path / "m.synthdp", "-n", "200", "-o", tmp_path / "r.csv", "--quiet"], capsys)
    assert code == 0 and set(pd.read_csv(tmp_path / "r.csv")["tag"]) <= {SECRET_LEVEL, "other"}


def test_a_few_whole_values_are_drafted_as_codes_and_a_note_says_so():
    """As evaluate types columns (SDV's rule): a column of 4 sparse whole values (a diagnosis code)
    and one of 0, 1, 2 are categorical codes with numeric levels, every value listed; a count with
    many values stays integer. A release from the draft then writes only those codes."""
    import warnings

    from synthdp import SmoothSynthesizer
    from synthdp.reader.draft import draft_schema

    rng = np.random.default_rng(4)
    frame = pd.DataFrame({"icd": rng.choice([250, 272, 278, 401], 400), "grade": rng.integers(0, 3, 400),
                          "visits": rng.integers(0, 40, 400), "x": rng.uniform(0, 1, 400)})
    content, notes = draft_schema(frame)
    assert content["columns"]["icd"] == {"type": "categorical", "levels": [250, 272, 278, 401], "other": False}
    assert content["columns"]["grade"]["levels"] == [0, 1, 2] and content["columns"]["visits"]["type"] == "integer"
    assert any("'icd', 'grade'" in note and "categorical codes" in note for note in notes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the draft's not-private warning
        out = SmoothSynthesizer(epsilon=1.0, seed=1).fit(frame, schema=content).sample(500, seed=1)
    assert set(out["icd"]) <= {250, 272, 278, 401}


def test_iso_dates_beside_date_times_draft_as_a_datetime_column():
    """A column of ISO dates and date-times (a writer that leaves out a midnight's time) was drafted as
    categorical, each time a level (or left to discovery); it is a datetime column, as a release reads it."""
    days = np.datetime64("2020-01-01") + np.arange(300)
    text = [f"{day}T{k % 24:02d}:30:00" if k % 3 else str(day) for k, day in enumerate(days)]
    content, _ = draft_schema(pd.DataFrame({"when": text}))
    assert content["columns"]["when"] == {"type": "datetime", "bounds": ["2020-01-01T00:00:00", "2020-10-31T23:59:59"]}


def test_codes_keep_the_input_s_number_type_and_infinite_values_are_not_codes():
    from synthdp.reader.draft import draft_schema

    frame = pd.DataFrame({"grade": np.tile([1.0, 2.0, 5.0], 100), "flag": np.tile([0.0, 1.0, 2.0, np.inf], 75)})
    content, _ = draft_schema(frame)
    assert content["columns"]["grade"]["levels"] == [1.0, 2.0, 5.0]  # floats read as floats, written back so
    assert content["columns"]["flag"]["type"] != "categorical"


def test_a_parquet_decimal_column_is_drafted_as_a_number(tmp_path):
    """A DECIMAL column (money, as databases export it) is numeric to a release, so the draft types it
    as one, with the decimals its values use, not as a column of text levels."""
    import decimal

    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    rng = np.random.default_rng(0)
    prices = [decimal.Decimal(f"{value:.2f}") for value in rng.uniform(10, 500, 300)]
    path = tmp_path / "prices.parquet"
    pq.write_table(pa.table({"price": pa.array(prices, type=pa.decimal128(10, 2)), "units": rng.normal(size=300)}),
                   path)
    assert main(["schema", str(path), "-o", str(tmp_path / "s.json")]) == 0
    spec = json.loads((tmp_path / "s.json").read_text())["columns"]["price"]
    assert spec["type"] == "continuous" and spec["decimals"] == 2
    assert spec["bounds"][0] <= float(min(prices)) and float(max(prices)) <= spec["bounds"][1]


def test_a_pandas_category_is_drafted_with_its_declared_levels_in_their_order(tmp_path, capsys):
    """A pandas category (a DataFrame's, or a Parquet file's) declares its levels and their order: the draft
    listed the values seen, sorted (["high", "low", "mid"] for a scale declared low < mid < high), so the
    release's categories lost the declared order. It lists the declared categories, in their order, an unused
    one included (public metadata, not values read from the rows), numbers as numbers (codes)."""
    rng = np.random.default_rng(5)
    scale = pd.Categorical(rng.choice(["low", "mid", "high"], 300), categories=["low", "mid", "high", "unused"],
                           ordered=True)
    frame = pd.DataFrame({"x": rng.uniform(0, 1, 300), "scale": scale,
                          "code": pd.Categorical(rng.choice([3, 1, 2], 300), categories=[3, 1, 2])})
    content, _ = draft_schema(frame)
    assert content["columns"]["scale"] == {"type": "categorical", "levels": ["low", "mid", "high", "unused"],
                                           "other": False}
    assert content["columns"]["code"] == {"type": "categorical", "levels": [3, 1, 2], "other": False}
    pytest.importorskip("pyarrow")
    frame.to_parquet(tmp_path / "t.parquet", index=False)
    assert run(["schema", tmp_path / "t.parquet", "-o", tmp_path / "s.json"], capsys)[0] == 0
    drafted = json.loads((tmp_path / "s.json").read_text())["columns"]["scale"]
    assert drafted["levels"] == ["low", "mid", "high", "unused"]


def test_a_continuous_column_of_few_values_is_drafted_with_them_and_a_release_keeps_to_them():
    """A design's settings (a continuous column of 5 values over 300 rows) are drafted as "values" (not
    "decimals"), and a note names the column; a release from the draft writes only those values. Not
    drafted with values: an integer column with gaps (a count), a continuous column of more than one value
    per 10 rows on average, and one whose values are too close for its bounds to keep a cell each (a
    schema with them would be refused)."""
    rng = np.random.default_rng(5)
    grid = [0.125, 0.15, 0.2, 0.325, 0.45]
    frame = pd.DataFrame({"speed": rng.choice(grid, 300), "visits": rng.choice([0, 1, 2, 3, 5, 8, 13, 21, 34, 40, 55, 60], 300),
                          "sparse": np.repeat(np.linspace(0.05, 0.95, 40), 8)[:300],
                          "close": np.tile([0.0, 1.0, 1.0 + 2.0**-52, 1e6], 75), "y": rng.normal(size=300)})
    content, notes = draft_schema(frame)
    columns = content["columns"]
    assert columns["speed"] == {"type": "continuous", "bounds": columns["speed"]["bounds"], "values": grid}
    assert columns["speed"]["bounds"][0] <= grid[0] and grid[-1] <= columns["speed"]["bounds"][1]
    assert columns["visits"]["type"] == "integer" and "values" not in columns["visits"]
    assert "values" not in columns["sparse"] and "values" not in columns["close"] and "values" not in columns["y"]
    assert [note for note in notes if "few distinct values" in note] == [
        next(note for note in notes if "'speed' take few distinct values" in note)]
    Schema.from_dict(content, list(frame.columns))  # a schema a release accepts
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)  # the draft's not-private warning
        out = SmoothSynthesizer(epsilon=1.0, delta=1e-10, seed=2).fit(frame, schema=content).sample(400, seed=2)
    assert set(out["speed"]) <= set(grid)


def test_a_float32_column_is_drafted_in_its_shortest_form_and_the_unedited_draft_releases(tmp_path, capsys):
    """A Parquet float32 column holds 0.1 as 0.10000000149011612 once widened. Its draft levels and values
    are the shortest form (0.1), as a release matches them: a binary column of 0.1/0.2 was drafted with the
    widened levels, which no value matched, so the unedited draft's release failed ("a value outside its 2
    levels"); a column of few values listed the widened numbers, which the synthetic table wrote back. The
    bounds hold the values both as written and as read; decimals are read from the shortest form too."""
    rng = np.random.default_rng(7)
    grid = [0.1, 0.3, 0.35, 0.7]
    frame = pd.DataFrame({"setting": rng.choice(grid, 300).astype(np.float32),
                          "flag": rng.choice([0.1, 0.2], 300).astype(np.float32),
                          "bmi": rng.uniform(18, 40, 300).round(1).astype(np.float32),
                          "y": rng.normal(size=300)})
    frame.to_parquet(tmp_path / "t.parquet")
    assert run(["schema", tmp_path / "t.parquet", "-o", tmp_path / "s.json"], capsys)[0] == 0
    content = json.loads((tmp_path / "s.json").read_text())
    columns = content["columns"]
    assert columns["setting"]["values"] == grid and columns["flag"] == {"type": "binary", "levels": [0.1, 0.2]}
    assert columns["bmi"]["decimals"] == 1
    lower, upper = columns["setting"]["bounds"]
    widened = frame["setting"].to_numpy(dtype=float)
    assert lower <= min(min(grid), widened.min()) and max(max(grid), widened.max()) <= upper
    code, text = run(["generate", tmp_path / "t.parquet", "-o", tmp_path / "out.csv", "--schema", tmp_path / "s.json",
                      "--delta", "1e-10", "--seed", "1", "--quiet"], capsys)
    assert code == 0, text
    assert DRAFT_SCHEMA in text and "values" in DRAFT_SCHEMA  # the unedited draft runs, reported not private
    out = pd.read_csv(tmp_path / "out.csv")
    assert set(out["setting"]) <= set(grid) and set(out["flag"]) <= {0.1, 0.2}


@pytest.mark.parametrize("truth", [("true", "false"), ("TRUE", "FALSE"), ("True", "False")])
def test_a_csv_true_false_column_is_drafted_as_written_and_the_unedited_draft_releases(tmp_path, capsys, truth):
    """pandas reads a CSV's true/false as truth values: the draft wrote the levels "False" and "True", and a
    release of the file with that draft refused the column ("a value outside its 2 levels"). The levels are
    the text as written, which the release reads."""
    yes, no = truth
    data = tmp_path / "flags.csv"
    flags = [yes, no, yes, yes, no, yes] * 5
    data.write_text("x,flag,maybe\n" + "".join(f"{i},{flag},{flag if i % 4 else ''}\n"
                                               for i, flag in enumerate(flags)))
    schema = tmp_path / "schema.json"
    code, _ = run(["schema", data, "-o", schema], capsys)
    assert code == 0
    columns = json.loads(schema.read_text())["columns"]
    assert columns["flag"] == {"type": "binary", "levels": sorted([no, yes])}
    assert columns["maybe"] == {"type": "binary", "levels": sorted([no, yes]), "nullable": True}
    out = tmp_path / "out.csv"
    code, printed = run(["generate", data, "-o", out, "--schema", schema, "--seed", 1, "--quiet"], capsys)
    assert code == 0, printed
    assert set(pd.read_csv(out, dtype=str)["flag"]) <= {yes, no}
