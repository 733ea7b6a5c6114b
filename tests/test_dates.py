"""Date and datetime columns: ISO bounds, ISO values read as days or seconds since 1970-01-01,
released like numeric columns, written back as ISO text; errors name the column, never a value."""

import datetime as dt
import json
import re
import warnings
import zipfile

import numpy as np
import pandas as pd
import pytest

from synthdp import Condition, SmoothSynthesizer, SynthDPError
from synthdp.cli import main
from synthdp.domain.box import Domain, parse_bounds
from synthdp.domain.decode import decode
from synthdp.reader.table import PrivateTable
from synthdp.stats.row_sums import SumRequest

N_ROWS = 20_000
EPSILON = 10.0
SEED = 7
BOUNDS = {"visit": {"type": "date", "bounds": ["2019-01-01", "2023-12-31"]},
          "stamp": {"type": "datetime", "bounds": ["2020-01-01T00:00:00", "2020-12-31T23:59:59"]},
          "x": [-6, 6]}
TIMES = {"visit": "date", "stamp": "datetime"}
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$")
DAY = pd.Timedelta(days=1)
SECRET = "2021-07-13T08:09:10"  # a distinctive private value that must never be printed


def dated_frame(n: int, seed: int) -> pd.DataFrame:
    """Dates uniform over 2019-07-01..2023-06-30 (inside the bounds, 1461 days), datetimes uniform
    over 2020-02-01..2020-11-01 (275 days of the year), and a number that depends on the date."""
    rng = np.random.default_rng(seed)
    days = rng.integers(0, 1461, n)
    seconds = rng.integers(0, 275 * 86_400, n)
    return pd.DataFrame({
        "visit": (pd.Timestamp("2019-07-01") + pd.to_timedelta(days, unit="D")).strftime("%Y-%m-%d"),
        "stamp": (pd.Timestamp("2020-02-01") + pd.to_timedelta(seconds, unit="s")).strftime("%Y-%m-%dT%H:%M:%S"),
        "x": rng.normal(size=n) + (days - 730) / 400,
    })


@pytest.fixture(scope="module")
def released():
    frame = dated_frame(N_ROWS, 2024)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the testing-seed warning
        synth = SmoothSynthesizer(epsilon=EPSILON, seed=SEED).fit(frame, bounds=BOUNDS)
    return frame, synth, synth.sample()


def first_line_error(call) -> str:
    with pytest.raises(SynthDPError) as caught:
        call()
    message = str(caught.value)
    assert "\n" not in message
    return message


# ------------------------------------------------------------------------ bounds
def test_iso_bounds_parse_to_days_and_seconds_and_back():
    bounds = {"d": {"type": "date", "bounds": ["1969-12-31", "1970-01-02"]},
              "t": {"type": "datetime", "bounds": ["1970-01-01", "1970-01-02T00:00:01.5"]}}
    columns = parse_bounds(bounds, ["d", "t"])
    assert (columns["d"].lower, columns["d"].upper, columns["d"].integer) == (-1.0, 1.0, True)
    assert (columns["t"].lower, columns["t"].upper, columns["t"].integer) == (0.0, 86_401.5, False)
    domain = Domain.from_bounds(bounds, ["d", "t"])
    shown = domain.to_dict()["columns"]
    assert shown["d"] == {"bounds": ["1969-12-31", "1970-01-02"], "type": "date", "source": "public"}
    assert shown["t"] == {"bounds": ["1970-01-01T00:00:00", "1970-01-02T00:00:01.500000"], "type": "datetime",
                          "source": "public"}
    assert Domain.from_bounds(shown, ["d", "t"]) == domain  # the report's bounds read back as the same domain


def test_decode_writes_whole_days_and_seconds_inside_the_bounds():
    domain = Domain.from_bounds({"d": BOUNDS["visit"], "t": BOUNDS["stamp"]}, ["d", "t"])
    out = decode(np.array([[-1.0, -1.0], [1.0, 1.0], [0.0, 0.0], [-2.0, 2.0]]), domain)
    assert out["d"].tolist() == ["2019-01-01", "2023-12-31", "2021-07-02", "2019-01-01"]
    assert out["t"].tolist() == ["2020-01-01T00:00:00", "2020-12-31T23:59:59", "2020-07-02T00:00:00",
                                 "2020-12-31T23:59:59"]


@pytest.mark.parametrize("bound, message", [
    (["2019-13-01", "2023-12-31"], "bounds for date column 'visit' must be ISO dates"),
    ([17000, 19000], "bounds for date column 'visit' must be ISO dates"),
    (["2019-01-01T06:00:00", "2023-12-31"], "bounds for date column 'visit' must be ISO dates"),
    ([dt.datetime(2019, 1, 1, 6), "2023-12-31"], "bounds for date column 'visit' must be whole days"),
])
def test_a_bad_date_bound_is_a_one_line_error_naming_the_column(bound, message):
    spec = {"visit": {"type": "date", "bounds": bound}}
    error = first_line_error(lambda: parse_bounds(spec, ["visit"]))
    assert error.startswith(message)
    assert "13" not in error and "17000" not in error and "06:00" not in error


@pytest.mark.parametrize("kind", ["date", "datetime"])
def test_a_time_column_without_bounds_is_told_it_needs_public_ones(kind):
    """{"type": "date"} alone (as --bounds-share leaves a numeric column's bounds to be estimated):
    the error says a date or time column needs its public bounds, with an example of their form."""
    error = first_line_error(lambda: parse_bounds({"visit": {"type": kind}}, ["visit"]))
    assert error.startswith(f"{kind} column 'visit' has no \"bounds\"") and "public bounds" in error
    assert "--bounds-share estimates numeric columns only" in error


def test_a_bound_with_a_time_zone_is_refused():
    spec = {"stamp": {"type": "datetime", "bounds": ["2020-01-01T00:00:00+02:00", "2020-12-31T00:00:00"]}}
    error = first_line_error(lambda: parse_bounds(spec, ["stamp"]))
    assert "'stamp'" in error and "time-zone" in error and "+02" not in error


# ------------------------------------------------------------------------ the release
def test_a_table_with_dates_releases_dates_inside_the_bounds(released):
    """A DataFrame's date columns held as ISO text come back as datetime64[us] (as datetime64 ones do:
    which of the two pandas picks, reading a file, is the values'), in whole days and whole seconds."""
    frame, synth, synthetic = released
    assert frame["visit"].map(type).eq(str).all()  # the fit's columns are text
    assert list(synthetic.columns) == ["visit", "stamp", "x"] and len(synthetic) == N_ROWS
    assert synthetic["visit"].dtype == synthetic["stamp"].dtype == np.dtype("datetime64[us]")
    assert (synthetic["visit"].dt.normalize() == synthetic["visit"]).all()  # whole days
    assert (synthetic["stamp"].dt.floor("s") == synthetic["stamp"]).all()  # whole seconds
    visit, stamp = synthetic["visit"], synthetic["stamp"]
    assert visit.min() >= pd.Timestamp("2019-01-01") and visit.max() <= pd.Timestamp("2023-12-31")
    assert stamp.min() >= pd.Timestamp("2020-01-01") and stamp.max() <= pd.Timestamp("2020-12-31T23:59:59")
    assert np.issubdtype(synthetic["x"].dtype, np.floating)
    report = synth.privacy_report(synthetic)
    assert report["bounds"]["columns"]["visit"]["bounds"] == ["2019-01-01", "2023-12-31"]
    assert report["bounds"]["columns"]["stamp"] == {"bounds": ["2020-01-01T00:00:00", "2020-12-31T23:59:59"],
                                                    "type": "datetime", "source": "public"}
    json.dumps(report)


def test_synthetic_dates_have_the_real_mean_and_range(released):
    """The synthetic mean and range of each date column match the real ones.

    False-failure rate. The seed is fixed, so the test is deterministic; over seeds it was run
    1300 times (seeds 0-1299, this configuration: n = 20 000, epsilon = 10, the default
    mechanism). The mean's error is the sampling error of n synthetic rows (sd 3.0 days for
    visit, 0.56 day for stamp, against 3.1 and 0.54 measured) plus the moment noise (sd 0.2
    and 0.04 day): the tolerances, 20 and 4 days, are more than 6 sd, a Gaussian tail below
    1e-9. The range's ends spill past the real ones by about half a histogram bin (bin = the
    bounds' width / 16: 114 and 23 days; measured mean error 60 and 13 days, largest 184 and
    60 days); the tolerance, a quarter of the bounds' width (456 and 91 days), was never
    reached: a false-failure rate below 0.3 % (rule of three at 95 % confidence), and by the
    measured sd (16 and 6 days) far lower.
    """
    frame, _, synthetic = released
    for name, tolerance_days in (("visit", 20), ("stamp", 4)):
        real, synth = pd.to_datetime(frame[name]), pd.to_datetime(synthetic[name])
        lower, upper = (pd.Timestamp(bound) for bound in BOUNDS[name]["bounds"])
        quarter = (upper - lower) / 4
        assert abs(synth.mean() - real.mean()) < tolerance_days * DAY, name
        assert abs(synth.min() - real.min()) < quarter and abs(synth.max() - real.max()) < quarter, name


def test_values_outside_the_bounds_are_clipped_and_counted():
    frame = pd.DataFrame({"visit": ["2018-06-01", "2019-01-01", "2020-01-01", "2024-06-01"],
                          "stamp": ["2020-01-01T00:00:00", "2021-01-01T00:00:05", "2020-05-05T05:05:05",
                                    "2020-02-02T02:02:02"],
                          "x": [0.0, 1.0, 2.0, 3.0]})
    table = PrivateTable(frame, time_columns=TIMES)
    domain = Domain.from_bounds(BOUNDS, list(frame.columns))
    sums = table.row_sums(SumRequest(domain, np.eye(3, dtype=int)))
    assert int(sums["rows_clipped"]) == 3  # rows 0 and 3 (visit), row 1 (stamp)


def test_every_engine_reads_dates_as_the_in_memory_table_does(tmp_path):
    pytest.importorskip("dask.dataframe")
    pytest.importorskip("pyarrow")
    frame = dated_frame(1200, 5)
    csv, parquet = tmp_path / "t.csv", tmp_path / "t.parquet"
    frame.to_csv(csv, index=False)
    frame.assign(visit=pd.to_datetime(frame["visit"]).dt.date, stamp=pd.to_datetime(frame["stamp"])).to_parquet(
        parquet, row_group_size=500)
    request = SumRequest(Domain.from_bounds(BOUNDS, list(frame.columns)), np.array([[1, 0, 0], [0, 1, 0], [1, 1, 1]]))
    expected = PrivateTable(frame, time_columns=TIMES).row_sums(request)["moments"]
    for source, engine, chunk_rows in ((csv, "numpy", 500), (parquet, "numpy", 500), (csv, "dask", 500),
                                       (parquet, "dask", None), (frame, "dask", 500)):
        table = PrivateTable.open(source, engine, chunk_rows, time_columns=TIMES)
        table.row_sums(SumRequest())
        np.testing.assert_allclose(table.row_sums(request)["moments"], expected, rtol=1e-12,
                                   err_msg=f"{engine} {type(source).__name__} {chunk_rows}")


def test_a_parquet_date_column_of_missing_cells_only_reads_as_its_csv_does(tmp_path):
    """pandas stores a column whose every cell is None as Arrow's null type: a nullable date column so
    stored was refused as "neither dates nor ISO text", where its CSV and a numeric column read as missing."""
    pytest.importorskip("pyarrow")
    frame = pd.DataFrame({"visit": pd.Series([None] * 60, dtype=object), "x": np.linspace(-1, 1, 60)})
    csv, parquet = tmp_path / "t.csv", tmp_path / "t.parquet"
    frame.to_csv(csv, index=False)
    frame.to_parquet(parquet)
    bounds = {"visit": {**BOUNDS["visit"], "nullable": True}, "x": [-6, 6]}
    request = SumRequest(Domain.from_bounds(bounds, list(frame.columns)), np.eye(2, dtype=int))
    expected = PrivateTable.open(csv, "numpy", None, nullable=["visit"], time_columns={"visit": "date"}).row_sums(request)
    for chunk_rows in (None, 25):
        table = PrivateTable.open(parquet, "numpy", chunk_rows, nullable=["visit"], time_columns={"visit": "date"})
        table.row_sums(SumRequest())  # the row count, read from the footer, which checks the columns' types
        np.testing.assert_allclose(table.row_sums(request)["moments"], expected["moments"], atol=1e-12)
    plain = SumRequest(Domain.from_bounds({"visit": BOUNDS["visit"], "x": [-6, 6]}, list(frame.columns)),
                       np.eye(2, dtype=int))  # not nullable: missing cells are an error, as in a CSV
    message = first_line_error(lambda: PrivateTable.open(parquet, "numpy", None, time_columns={"visit": "date"})
                               .row_sums(plain))
    assert message.startswith("column 'visit' has missing")


def test_a_given_date_or_time_before_the_year_1000_matches_its_rows():
    """sample_from_conditions wrote a given value with strftime, whose "%Y" drops a year's leading zeros
    ("828-06-08"): no support point matched a date or time before the year 1000."""
    rng = np.random.default_rng(3)
    days = np.datetime64("0500-01-01") + rng.integers(0, 1000 * 365, 400)
    frame = pd.DataFrame({"day": days.astype(str), "stamp": (days.astype("datetime64[s]") + rng.integers(0, 86_400, 400))
                          .astype(str), "x": rng.normal(size=400)})
    bounds = {"day": {"type": "date", "bounds": ["0500-01-01", "1600-12-31"]},
              "stamp": {"type": "datetime", "bounds": ["0500-01-01T00:00:00", "1600-12-31T23:59:59"]}, "x": [-6, 6]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the testing-seed warning
        synth = SmoothSynthesizer(epsilon=EPSILON, seed=SEED).fit(frame, bounds=bounds)
    drawn = synth.sample(200, seed=1)
    early = drawn[drawn["day"] < pd.Timestamp("1000-01-01")].iloc[0]
    for name in ("day", "stamp"):
        for value in (early[name], early[name].isoformat()):
            given = synth.sample_from_conditions([Condition({name: value}, num_rows=3)], seed=2)
            assert (given[name] == early[name]).all(), (name, value)


# ------------------------------------------------------------------------ bad values
@pytest.mark.parametrize("value, message", [
    ("2021-02-30", "column 'stamp' has a value that is not an ISO datetime"),
    ("yesterday", "column 'stamp' has a value that is not an ISO datetime"),
    (SECRET + "+02:00", "column 'stamp' has a value with a time-zone offset"),
    (SECRET + "Z", "column 'stamp' has a value with a time-zone offset"),
    ("SECRETXYZ", "column 'stamp' has a value that is not an ISO datetime"),  # a Z that ends a word is no zone
])
def test_a_bad_value_is_a_one_line_error_naming_the_column_without_the_value_or_row(value, message):
    frame = dated_frame(50, 1)
    frame.loc[17, "stamp"] = value
    error = first_line_error(lambda: SmoothSynthesizer(epsilon=1, seed=0).fit(frame, bounds=BOUNDS))
    assert error.startswith(message)
    assert value not in error and "07-13" not in error and "17" not in error and "row" not in error


def test_datetime64_columns_are_read_and_zoned_ones_refused():
    frame = dated_frame(300, 2)
    typed = frame.assign(visit=pd.to_datetime(frame["visit"]), stamp=pd.to_datetime(frame["stamp"]))
    as_text = PrivateTable(frame, time_columns=TIMES).row_sums(SumRequest(data_range=True))
    as_datetime64 = PrivateTable(typed, time_columns=TIMES).row_sums(SumRequest(data_range=True))
    np.testing.assert_array_equal(as_text["minimum"], as_datetime64["minimum"])
    np.testing.assert_array_equal(as_text["maximum"], as_datetime64["maximum"])
    zoned = typed.assign(stamp=typed["stamp"].dt.tz_localize("UTC"))
    assert "'stamp' has a value with a time-zone offset" in first_line_error(
        lambda: PrivateTable(zoned, time_columns=TIMES))
    numbers = frame.assign(visit=np.arange(300))
    assert "'visit' is a date column but holds numbers" in first_line_error(
        lambda: PrivateTable(numbers, time_columns=TIMES))


# ------------------------------------------------------------------------ CLI and schema
def run(args, capsys):
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_cli_generates_a_table_with_dates_and_refuses_a_bad_value(tmp_path, capsys):
    data, bounds, out = tmp_path / "visits.csv", tmp_path / "b.json", tmp_path / "out.csv"
    frame = dated_frame(400, 3)
    frame.to_csv(data, index=False)
    bounds.write_text(json.dumps(BOUNDS))
    code, printed = run(["generate", data, "-o", out, "--bounds", bounds, "--seed", 1, "--quiet"], capsys)
    assert code == 0, printed
    synthetic = pd.read_csv(out, dtype=str)
    assert synthetic["visit"].str.fullmatch(DATE.pattern[1:-1]).all()
    assert synthetic["stamp"].str.fullmatch(DATETIME.pattern[1:-1]).all()
    frame.loc[9, "visit"] = SECRET[:10] + "x"
    frame.to_csv(data, index=False)
    out.unlink()
    code, printed = run(["generate", data, "-o", out, "--bounds", bounds, "--seed", 1, "--quiet"], capsys)
    errors = [line for line in printed.splitlines() if "error" in line]
    assert code != 0 and not out.exists()
    assert errors == ["synthdp: error: column 'visit' has a value that is not an ISO date like 2021-03-04"]
    assert SECRET[:10] not in printed


def test_a_schema_with_a_date_and_a_categorical_column(tmp_path, capsys):
    rng = np.random.default_rng(4)
    frame = dated_frame(2000, 4).drop(columns="x")
    frame["ward"] = rng.choice(["A", "B", "C", "?"], len(frame))
    schema = {"columns": {"visit": BOUNDS["visit"], "stamp": BOUNDS["stamp"],
                          "ward": {"type": "categorical", "levels": ["A", "B", "C"]}}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth = SmoothSynthesizer(epsilon=4, seed=3).fit(frame, schema=schema)
    synthetic = synth.sample(500)
    assert (synthetic["visit"].dt.normalize() == synthetic["visit"]).all()  # whole days
    assert (synthetic["stamp"].dt.floor("s") == synthetic["stamp"]).all()  # whole seconds
    visit = synthetic["visit"]
    assert visit.min() >= pd.Timestamp("2019-01-01") and visit.max() <= pd.Timestamp("2023-12-31")
    assert set(synthetic["ward"]) <= {"A", "B", "C", "other"}
    report = synth.privacy_report(synthetic)
    assert report["schema"]["columns"]["visit"]["bounds"] == ["2019-01-01", "2023-12-31"]
    # the same through the CLI
    data, schema_file, out = tmp_path / "visits.csv", tmp_path / "schema.json", tmp_path / "out.csv"
    frame.to_csv(data, index=False)
    schema_file.write_text(json.dumps(schema))
    code, printed = run(["generate", data, "-o", out, "--schema", schema_file, "--seed", 1, "--quiet"], capsys)
    assert code == 0, printed
    assert pd.read_csv(out, dtype=str)["visit"].str.fullmatch(DATE.pattern[1:-1]).all()


# ------------------------------------------------------------------------ chunk-independent parsing
def test_nanoseconds_and_years_past_2262_parse_alike_whatever_the_chunk():
    """pandas parses a batch of text at the finest resolution one of its values needs: a value with
    nanoseconds made the batch datetime64[ns], whose range ends in 2262, so a later year beside it
    failed while it parsed in a chunk of its own. The fraction is cut to microseconds (floored, as a
    datetime64[ns] value is): each value gives the same number alone or beside any other."""
    from synthdp.reader.dates import time_values

    values = ["2021-03-04T05:06:07.123456789", "2300-01-01T00:00:00", "1969-12-31T23:59:59.9999999",
              "9999-12-31T23:59:59", "0001-01-01T00:00:00.5", "2262-04-11T23:47:16.854775808"]
    alone = np.array([time_values(pd.Series([value]), "stamp", "datetime")[0] for value in values])
    np.testing.assert_array_equal(time_values(pd.Series(values), "stamp", "datetime"), alone)
    np.testing.assert_array_equal(time_values(pd.Series(values[::-1]), "stamp", "datetime"), alone[::-1])
    assert alone[0] == (dt.datetime(2021, 3, 4, 5, 6, 7, 123456) - dt.datetime(1970, 1, 1)).total_seconds()
    assert alone[2] == -1e-6 and alone[3] == (dt.datetime(9999, 12, 31, 23, 59, 59) - dt.datetime(1970, 1, 1)).total_seconds()
    days = time_values(pd.Series(["2300-01-01", "2021-03-04T00:00:00.000000001"]), "visit", "date")
    np.testing.assert_array_equal(days, [(dt.date(2300, 1, 1) - dt.date(1970, 1, 1)).days, 18690])


def test_years_outside_pandas_2_s_nanosecond_range_read_draft_and_sample(tmp_path, capsys):
    """pyproject admits pandas 2 (the quality extra's SDMetrics needs it), whose text parsing is
    datetime64[ns] (1677-09-21 to 2262-04-11): there a date of 2300 was "not an ISO date", a
    draft schema of such a column crashed and a condition on it was refused. iso_times reads them
    on either pandas; an invalid calendar day stays NaT."""
    from synthdp.domain.dates import iso_times

    parsed = iso_times(pd.Series(["2300-01-01", "1500-06-30T12:00:00", "2021-02-30", "2021-03-04", None]))
    assert parsed.iloc[0] == pd.Timestamp("2300-01-01") and parsed.iloc[1] == pd.Timestamp("1500-06-30T12:00")
    assert parsed.iloc[2:].isna().tolist() == [True, False, True]
    rng = np.random.default_rng(4)
    days = pd.Timestamp("2250-01-01").to_datetime64().astype("datetime64[D]") + rng.integers(0, 30 * 365, 300)
    pd.DataFrame({"when": days.astype(str), "x": rng.random(300).round(3)}).to_csv(tmp_path / "late.csv", index=False)
    assert main(["schema", str(tmp_path / "late.csv"), "-o", str(tmp_path / "schema.json")]) == 0
    draft = json.loads((tmp_path / "schema.json").read_text())
    assert draft["columns"]["when"] == {"type": "date", "bounds": ["2250-01-01", "2279-12-31"]}
    del draft["draft"]
    (tmp_path / "schema.json").write_text(json.dumps(draft))
    assert main(["fit", str(tmp_path / "late.csv"), "-o", str(tmp_path / "m.synthdp"), "--schema",
                 str(tmp_path / "schema.json"), "--seed", "1", "--quiet"]) == 0
    assert main(["sample", str(tmp_path / "m.synthdp"), "-n", "50", "-o", str(tmp_path / "s.csv"), "--where",
                 "when >= '2263-01-01'", "--seed", "2", "--quiet"]) == 0
    sampled = pd.read_csv(tmp_path / "s.csv")["when"]
    assert len(sampled) == 50 and (sampled >= "2263-01-01").all() and (sampled <= "2279-12-31").all()
    frame = pd.DataFrame({"when": days.astype("datetime64[us]"), "x": rng.random(300)})  # fit as datetime64 ...
    SmoothSynthesizer(seed=1).fit(frame, bounds=draft["columns"]).save(tmp_path / "t.synthdp")
    back = SmoothSynthesizer.load(tmp_path / "t.synthdp").sample(20, seed=3)  # ... sampled back as datetime64
    assert pd.api.types.is_datetime64_dtype(back["when"])
    assert back["when"].min() >= pd.Timestamp("2250-01-01") and back["when"].max() <= pd.Timestamp("2279-12-31")


def test_iso_times_reads_what_pandas_2_leaves_nat_and_a_summary_answers_late_years(monkeypatch):
    """The test above passes on pandas 3 without iso_times' second reading (pandas 3 parses 2300 itself):
    here pandas 2's parse is imitated (a time outside 1677-09-22 to 2262-04-11 NaT, the rest
    datetime64[ns]), and numpy's reading gives what pandas 3 does. A summary's query frame holds such
    dates as datetime64 too (pd.to_datetime of numbers with a unit is datetime64[ns] on either pandas)."""
    from synthdp.domain.dates import iso_times

    values = pd.Series(["2300-01-01", "1500-06-30T12:00:00", "2021-02-30", "2021-03-04", None, "2300-01-01 05:06",
                        "9999-12-31T23:59:59.1234567"])
    native = iso_times(values)
    parse = pd.to_datetime

    def pandas_2(text, *args, **kwargs):
        parsed = parse(text, *args, **kwargs)
        if not isinstance(parsed, pd.Series):
            return parsed
        held = (parsed >= pd.Timestamp("1677-09-22")) & (parsed <= pd.Timestamp("2262-04-11"))
        return parsed.where(held).astype("datetime64[ns]")

    monkeypatch.setattr(pd, "to_datetime", pandas_2)
    assert pandas_2(values, format="ISO8601", errors="coerce").notna().sum() == 1  # only 2021-03-04 in range
    imitated = iso_times(values)
    assert str(imitated.dtype) == "datetime64[us]"
    assert imitated.tolist() == native.astype("datetime64[us]").tolist()
    assert imitated.isna().tolist() == [False, False, True, False, True, False, False]
    monkeypatch.undo()
    rng = np.random.default_rng(9)
    frame = pd.DataFrame({"when": (np.datetime64("2250-01-01") + rng.integers(0, 30 * 365, 300)).astype(str),
                          "x": rng.random(300)})
    with pytest.warns(UserWarning):  # the known seed
        summary = SmoothSynthesizer(seed=1).fit(frame, bounds={
            "when": {"type": "date", "bounds": ["2250-01-01", "2279-12-31"]}, "x": [0, 1]}, synthesize=False).summary()
    share = summary.answer(lambda rows: (rows["when"] >= pd.Timestamp("2265-01-01")).astype(float))
    assert 0.3 < share < 0.7


def test_every_engine_and_chunking_reads_nanoseconds_beside_late_years(tmp_path):
    """The file of the test above's values in every engine, in chunks that put them together or apart:
    the same sums (the in-memory table failed, and so did any chunk holding both)."""
    pytest.importorskip("dask.dataframe")
    pytest.importorskip("pyarrow")
    n = 600
    stamps = (pd.Timestamp("2020-02-01") + pd.to_timedelta(np.arange(n) * 3600, unit="s")).strftime(
        "%Y-%m-%dT%H:%M:%S").tolist()
    stamps[5], stamps[7] = "2021-03-04T05:06:07.123456789", "2300-01-01T00:00:00"
    stamps[400], stamps[550] = "1969-12-31T23:59:59.9999999", "9999-12-31T23:59:59"
    frame = pd.DataFrame({"stamp": stamps, "x": np.arange(n) / n})
    csv, parquet = tmp_path / "t.csv", tmp_path / "t.parquet"
    frame.to_csv(csv, index=False)
    frame.to_parquet(parquet, row_group_size=250)
    times = {"stamp": "datetime"}
    request = SumRequest(data_range=True)
    expected = PrivateTable.open(csv, time_columns=times).row_sums(request)
    assert expected["minimum"][0] == -1e-6 and expected["maximum"][0] == 253402300799.0
    for source, engine, chunk_rows in ((csv, "numpy", 3), (csv, "numpy", 6), (csv, "numpy", 300), (parquet, "numpy", 7),
                                       (csv, "dask", 300), (parquet, "dask", None), (frame, "dask", 100)):
        sums = PrivateTable.open(source, engine, chunk_rows, time_columns=times).row_sums(request)
        for name in ("minimum", "maximum", "integer"):
            np.testing.assert_array_equal(sums[name], expected[name], err_msg=f"{engine} {chunk_rows} {name}")


def test_a_date_column_s_type_back_does_not_depend_on_how_pandas_read_its_values(tmp_path):
    """pandas.read_csv(parse_dates=...) reads a column of dates as datetime64, but as text where one
    value of the date column has a time of day (which the column takes, dropping it): two neighbouring
    tables came back as datetime64 and as text, and the model file's dtypes said which. Both now come
    back as datetime64[us], in the sample and in the model file."""
    frame = dated_frame(300, 9)[["visit", "x"]]
    frame.to_csv(tmp_path / "a.csv", index=False)
    frame.loc[7, "visit"] = frame.loc[7, "visit"] + "T05:06:07"  # a neighbouring table
    frame.to_csv(tmp_path / "b.csv", index=False)
    bounds = {"visit": BOUNDS["visit"], "x": BOUNDS["x"]}
    types, stored = [], []
    for name in ("a", "b"):
        read = pd.read_csv(tmp_path / f"{name}.csv", parse_dates=["visit"])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the testing seed's warning
            synth = SmoothSynthesizer(epsilon=1.0, seed=1).fit(read, bounds=bounds)
        types.append((read["visit"].dtype.kind, synth.sample(20, seed=2)["visit"].dtype))
        synth.save(tmp_path / f"{name}.synthdp")
        with zipfile.ZipFile(tmp_path / f"{name}.synthdp") as archive:
            stored.append(json.loads(archive.read("model.json")).get("dtypes"))
    assert types[0][0] == "M" and types[1][0] != "M"  # as pandas reads the two
    assert types[0][1] == types[1][1] == np.dtype("datetime64[us]")
    assert stored[0] == stored[1] == {"visit": "datetime64[us]"}
