"""class_column: the numeric columns' histograms released by level of a class column
(synthdp.postprocess.class_histograms), its sensitivity on extreme rows, the release and what the
synthetic table keeps of it, its errors, and the engines' counts."""

import itertools
import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from synthdp import SmoothSynthesizer
from synthdp.config import IdleOptionWarning
from synthdp.domain.schema import Schema
from synthdp.errors import SynthDPError
from synthdp.pipeline.copies import measured_pairs
from synthdp.privacy.sensitivity import histogram_sensitivity
from synthdp.reader.table import PrivateTable
from synthdp.stats.histograms import CellLayout

SCHEMA = {"columns": {"x": {"type": "continuous", "bounds": [-1, 1]},
                      "k": {"type": "integer", "bounds": [0, 100]},
                      "c": {"type": "categorical", "levels": ["a", "b", "c"], "other": False}}}


def separated(n: int = 600, seed: int = 0) -> pd.DataFrame:
    """x shifts with the class c (-0.6, 0, +0.6, sd 0.15); k is independent of it."""
    rng = np.random.default_rng(seed)
    c = rng.choice(["a", "b", "c"], n)
    x = np.clip(pd.Series(c).map({"a": -0.6, "b": 0.0, "c": 0.6}).to_numpy() + rng.normal(0, 0.15, n), -1, 1)
    return pd.DataFrame({"x": x, "k": rng.integers(0, 101, n), "c": c})


def class_counts(frame: pd.DataFrame, schema: Schema, layout: CellLayout) -> np.ndarray:
    return PrivateTable(frame, ["c"]).encoded_class_counts(schema, layout, 0)


def test_a_class_table_moves_as_one_way_histograms_on_extreme_rows():
    """Replacing one row, at the bounds, outside them or anywhere between, with the same or another level,
    moves each column's (level, cell) counts by at most two: L1 2d and L2 sqrt(2d), the one-way histograms'
    sensitivity, attained where the level and every column's cell change."""
    schema = Schema.from_dict(SCHEMA, ["x", "k", "c"])
    layout = CellLayout.for_domain(schema.numeric, 6, 0)
    base = separated(40, seed=3)
    extremes = [(-1.0, 0, "a"), (1.0, 100, "c"), (-5.0, -7, "b"), (9.0, 999, "a"), (0.0, 50, "b")]
    l1, l2 = histogram_sensitivity(schema.d_numeric)
    reached = False
    for first, second in itertools.permutations(extremes, 2):
        tables = []
        for row in (first, second):
            frame = base.copy()
            frame.iloc[0] = row
            tables.append(class_counts(frame, schema, layout))
        change = (tables[0] - tables[1]).reshape(-1)
        assert np.abs(change).sum() <= l1 and np.linalg.norm(change) <= l2 + 1e-12
        reached |= bool(np.abs(change).sum() == l1)
    assert reached


def test_the_streamed_table_counts_the_same_class_cells(tmp_path):
    """One pass in chunks (a streamed CSV) gives the in-memory table's counts, to the row."""
    schema = Schema.from_dict(SCHEMA, ["x", "k", "c"])
    layout = CellLayout.for_domain(schema.numeric, 6, 0)
    frame = separated(500, seed=1)
    path = tmp_path / "t.csv"
    frame.to_csv(path, index=False)
    streamed = PrivateTable.open(path, chunk_rows=77, text_columns=["c"])
    assert np.array_equal(streamed.encoded_class_counts(schema, layout, 0), class_counts(frame, schema, layout))


def test_the_dask_engine_releases_the_same_class_histograms(tmp_path):
    """The same seeded release through the Dask engine's partitions as in memory (counts are exact sums)."""
    pytest.importorskip("dask.dataframe")
    frame = separated(400, seed=4)
    path = tmp_path / "t.csv"
    frame.to_csv(path, index=False)
    releases = []
    for engine in ("numpy", "dask"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = SmoothSynthesizer(epsilon=1.0, delta=1e-10, seed=3, class_column="c", engine=engine,
                                      chunk_rows=90).fit(path, schema=SCHEMA)
        releases.append(model.release_.class_histograms)
    assert releases[0] is not None and np.array_equal(releases[0].columns, releases[1].columns)
    np.testing.assert_allclose(releases[1].noisy_counts, releases[0].noisy_counts, rtol=0, atol=1e-9)


def test_class_column_makes_a_numeric_column_follow_the_class():
    """x's mean per class in the synthetic table spreads as in the real one (real: c - a = 1.2). Over 60 seeds
    (of the data and the release) its spread c - a came out 1.05 on average (sd 0.25, smallest 0.43), so
    below 0.25 a correct release fails about once in 1 000 seeds (3.1 sd). The release holds x's table by
    level (k has a binned value block: left one-way) and counts the pair (c, x) as measured."""
    frame = separated()
    model = SmoothSynthesizer(epsilon=1.0, delta=1e-10, seed=5, class_column="c").fit(frame, schema=SCHEMA)
    out = model.sample(600, seed=5)
    means = out.groupby("c")["x"].mean()
    assert means["c"] - means["a"] > 0.25
    release = model.model_.release
    classes = release.class_histograms
    assert classes.column == "c" and list(classes.columns) == [0]  # x only: k has a value block
    assert classes.noisy_counts.shape[:2] == (1, 3)
    assert frozenset(("c", "x")) in measured_pairs(release)
    event = next(event for event in model.model_.ledger.events if event.stage == "marginals")
    assert "by level of 'c'" in event.released
    assert event.sensitivity == pytest.approx(histogram_sensitivity(2)[1])  # the one-way histograms'


def test_the_report_names_the_class(tmp_path):
    frame = separated(300)
    data, out, report = tmp_path / "t.csv", tmp_path / "o.csv", tmp_path / "r.json"
    frame.to_csv(data, index=False)
    (tmp_path / "s.json").write_text(json.dumps(SCHEMA))
    from synthdp.cli import main
    assert main(["generate", str(data), "-o", str(out), "--schema", str(tmp_path / "s.json"), "--delta", "1e-10",
                 "--class-column", "c", "--report", str(report), "--seed", "1"]) == 0
    stages = {stage["stage"]: stage for stage in json.loads(report.read_text())["privacy"]["stages"]}
    assert "by level of 'c'" in stages["marginals"]["released"]
    assert "2 numeric columns, 1 of them (x) by level of 'c' (3 levels" in stages["marginals"]["released"]  # k: a value block
    assert "the others one-way" in stages["marginals"]["released"]


def test_the_report_says_all_where_every_numeric_column_is_by_level():
    """Where no numeric column has a value block, the stage says all of them are by level, and no others."""
    frame = separated(300)
    frame["y"] = -frame["x"]
    schema = {"columns": {"x": SCHEMA["columns"]["x"], "y": SCHEMA["columns"]["x"], "c": SCHEMA["columns"]["c"]}}
    model = SmoothSynthesizer(epsilon=1.0, delta=1e-10, class_column="c", seed=1).fit(frame[["x", "y", "c"]],
                                                                                      schema=schema)
    event = next(event for event in model.model_.ledger.events if event.stage == "marginals")
    assert "2 numeric columns, all of them by level of 'c'" in event.released
    assert "others" not in event.released


@pytest.mark.parametrize(("name", "says"), [("x", "is a numeric column"), ("zz", "is not a column of the table")])
def test_class_column_must_be_a_categorical_column(tmp_path, capsys, name, says):
    """One line naming the option, before any pass over the rows, and no output file."""
    frame = separated(100)
    with pytest.raises(SynthDPError, match=f"class_column .*'{name}' {says}"):
        SmoothSynthesizer(epsilon=1.0, delta=1e-10, class_column=name).fit(frame, schema=SCHEMA)
    data, out = tmp_path / "t.csv", tmp_path / "o.csv"
    frame.to_csv(data, index=False)
    (tmp_path / "s.json").write_text(json.dumps(SCHEMA))
    from synthdp.cli import main
    assert main(["generate", str(data), "-o", str(out), "--schema", str(tmp_path / "s.json"), "--class-column", name]) != 0
    printed = capsys.readouterr().err.strip().splitlines()
    assert len([line for line in printed if "error" in line]) == 1 and "class" in printed[-1]
    assert not out.exists()


def test_class_column_on_a_numeric_table_is_idle():
    frame = separated(200)[["x", "k"]]
    with pytest.warns(IdleOptionWarning, match="class_column"):
        SmoothSynthesizer(epsilon=1.0, class_column="c").fit(frame, bounds={"x": [-1, 1], "k": [0, 100]})


def test_a_level_too_rare_for_its_noise_warns():
    """A level of 3 rows in 150 cannot pay for the noise its histogram rows add: a warning naming the option."""
    frame = separated(150, seed=2)
    frame.loc[frame.index[:3], "c"] = "a"
    frame.loc[frame.index[3:], "c"] = np.where(np.arange(147) % 2, "b", "c")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        SmoothSynthesizer(epsilon=1.0, delta=1e-10, seed=0, class_column="c").fit(frame, schema=SCHEMA)
    assert any("class_column 'c'" in str(warning.message) for warning in caught)


@pytest.mark.parametrize(("name", "says"), [("x", "is a numeric column"), ("zz", "is not a column of the table")])
def test_class_column_on_a_schema_without_categorical_columns_is_an_error(tmp_path, capsys, name, says):
    """A schema of numeric columns only has no column a class can be (the table is released as a numeric
    one): one line naming the option and the column, as on a mixed table, not a class silently dropped."""
    frame = separated(100)[["x", "k"]]
    schema = {"columns": {name: SCHEMA["columns"][name] for name in ("x", "k")}}
    with pytest.raises(SynthDPError, match=f"class_column .*'{name}' {says}"):
        SmoothSynthesizer(epsilon=1.0, delta=1e-10, class_column=name).fit(frame, schema=schema)
    data, out = tmp_path / "t.csv", tmp_path / "o.csv"
    frame.to_csv(data, index=False)
    (tmp_path / "s.json").write_text(json.dumps(schema))
    from synthdp.cli import main
    assert main(["generate", str(data), "-o", str(out), "--schema", str(tmp_path / "s.json"), "--delta", "1e-10",
                 "--class-column", name]) != 0
    printed = [line for line in capsys.readouterr().err.strip().splitlines() if "error" in line]
    assert len(printed) == 1 and "class_column (--class-column)" in printed[0]
    assert not out.exists()


def test_the_privacy_unit_cannot_be_the_class():
    """The unit column is not synthesized: naming it as the class is refused as such, not as a column the
    table lacks."""
    frame = separated(120)
    frame["person"] = np.arange(len(frame)) // 2
    with pytest.raises(SynthDPError, match="class_column .*'person' is the privacy unit column"):
        SmoothSynthesizer(epsilon=1.0, delta=1e-10, class_column="person", privacy_unit="person",
                          max_rows_per_unit=2).fit(frame, schema=SCHEMA)


def test_a_summary_leaves_the_class_column_alone():
    """A summary releases moments only (no histograms, so no class): a class_column (a --config file shared
    with generate) is not checked there, nor used."""
    model = SmoothSynthesizer(epsilon=1.0, delta=1e-10, seed=0, class_column="zz").fit(separated(200), schema=SCHEMA,
                                                                                        synthesize=False)
    assert not any(event.stage == "marginals" for event in model.model_.ledger.events)


def test_short_levels_names_the_levels_beyond_their_counts_noise():
    """A level is short where its released count is below the line (half the expected noise of its histogram
    row, noise_l1 x cells / 2 = 48 rows here) by more than twice that count's noise sd: iris's levels of
    50 rows with noise sd 20 are not, unless a count falls below 8; empty levels with counts of sd 5 are."""
    from synthdp.postprocess.class_histograms import short_levels
    layout = CellLayout.for_domain(Schema.from_dict(SCHEMA, ["x", "k", "c"]).numeric, 4, 0)
    columns = np.array([0])
    cells = layout.column_cells(0)
    noise_l1 = 96.0 / cells
    assert list(short_levels(layout, columns, np.array([43.2, 62.9, 43.9]), noise_l1, 20.0)) == []
    assert list(short_levels(layout, columns, np.array([43.2, 10.0, 43.9]), noise_l1, 20.0)) == []  # 50 > 48
    assert list(short_levels(layout, columns, np.array([43.2, 0.0, 43.9]), noise_l1, 20.0)) == [1]  # 40 < 48
    assert list(short_levels(layout, columns, np.array([43.2, 0.0, 60.0, 2.0]), noise_l1, 5.0)) == [1, 3]
    assert list(short_levels(layout, np.zeros(0, dtype=np.int64), np.array([0.0]), noise_l1, 0.0)) == []


def test_iris_is_not_warned_off_its_class():
    """iris at (1, 1e-10), the documented case where the class pays most (docs/mixed-tables.md#class-column):
    levels of 50 rows whose released counts have noise sd 20 (the line: 48 rows). The noisy minimum of
    the three counts came out below 48 in 20 of 20 seeds, so a warning from it always fired; with the
    count's noise allowed for (a level short only 2 sd below the line, under 8 rows) it fired in 3 of 200
    seeds, so a correct release warns at about 1.5 % of seeds (this one, fixed, does not)."""
    root = Path(__file__).resolve().parents[1]
    frame = pd.read_csv(root / "data" / "iris.csv")
    schema = json.loads((root / "configs" / "iris_schema.json").read_text())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        SmoothSynthesizer(epsilon=1.0, delta=1e-10, seed=0, class_column="species").fit(frame, schema=schema)
    assert not [warning for warning in caught if "class_column" in str(warning.message)]


def test_the_warning_names_the_empty_level():
    """The schema's "other" level, empty in the data, is the level too rare: the warning names it (public:
    the schema's levels), so that the user can declare "other": false. At 1 500 rows (levels of some 500,
    far above the line of 16 bins' noise, about 130 rows; counts of sd 18) it named 'other' in 199 of 200
    seeds and a level of the data in none: a correct release fails at about 0.5 % of seeds (this one,
    fixed, does not)."""
    schema = {"columns": {**SCHEMA["columns"], "c": {"type": "categorical", "levels": ["a", "b", "c"]}}}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        SmoothSynthesizer(epsilon=1.0, delta=1e-10, seed=0, class_column="c", marginal_bins=16).fit(
            separated(1500, seed=2), schema=schema)
    said = [str(warning.message) for warning in caught if "class_column 'c'" in str(warning.message)]
    assert len(said) == 1 and "level(s) 'other' hold" in said[0]


@pytest.mark.parametrize("setup", ["unit", "discover", "bounds"])
def test_a_bad_class_column_spends_nothing_before_its_error(tmp_path, capsys, setup):
    """Where a release comes before the plan (the units' count by unit, level discovery, a schema's bounds
    estimated), a class_column the schema refuses is refused before it: nothing is charged to a budget file
    (it was charged the whole epsilon for a misspelt class)."""
    frame = separated(200)
    schema = json.loads(json.dumps(SCHEMA))
    options = []
    if setup == "unit":
        frame["person"] = np.arange(len(frame)) // 2
        options = ["--privacy-unit", "person", "--max-rows-per-unit", "2"]
    elif setup == "discover":
        schema["columns"]["c"] = {"type": "categorical", "levels": "discover"}
        options = ["--levels-share", "0.1"]
    else:
        schema["columns"]["x"] = {"type": "continuous"}
        options = ["--bounds-share", "0.1"]
    data, out, budget = tmp_path / "t.csv", tmp_path / "o.csv", tmp_path / "b.json"
    frame.to_csv(data, index=False)
    (tmp_path / "s.json").write_text(json.dumps(schema))
    from synthdp.cli import main
    assert main(["generate", str(data), "-o", str(out), "--schema", str(tmp_path / "s.json"), "--delta", "1e-10",
                 "--class-column", "cc", "--budget-file", str(budget), "--lifetime-epsilon", "5",
                 "--lifetime-delta", "1e-8", *options]) != 0
    printed = [line for line in capsys.readouterr().err.strip().splitlines() if "error" in line]
    assert len(printed) == 1 and "class_column (--class-column) 'cc'" in printed[0] and "charged" not in printed[0]
    assert not out.exists()
    assert not budget.exists() or not json.loads(budget.read_text())["releases"]


@pytest.mark.parametrize("columns", [["k", "c"], ["c"]])
def test_a_class_with_no_numeric_column_to_condition_warns(columns):
    """Where no numeric column can be released by level (each has a value block, or the table has none),
    class_column does nothing: a warning naming it says so, and the release holds no class."""
    schema = {"columns": {name: {**SCHEMA["columns"][name], **({"bounds": [0, 5]} if name == "k" else {})}
                          for name in columns}}
    frame = separated(300)[columns].assign(**({"k": np.arange(300) % 6} if "k" in columns else {}))
    with pytest.warns(UserWarning, match="class_column 'c'.*ignored in this run"):
        model = SmoothSynthesizer(epsilon=1.0, delta=1e-10, seed=0, class_column="c").fit(frame, schema=schema)
    assert model.release_.class_histograms is None
