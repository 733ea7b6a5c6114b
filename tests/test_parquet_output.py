"""Synthetic tables written as Parquet where the output's name ends in .parquet or .pq (as inputs
are read by their suffix): generate (and its copies), sample; the same rows as the CSV of the same
seeded run; refused before any budget is spent where pyarrow, the writer, is missing."""

from __future__ import annotations

import builtins
import json
from pathlib import Path

import pandas as pd
import pytest

from synthdp.cli import main

pq = pytest.importorskip("pyarrow.parquet")

ROOT = Path(__file__).resolve().parents[1]
CLINIC = str(ROOT / "synthdp" / "datasets" / "clinic.csv")
BOUNDS = str(ROOT / "synthdp" / "datasets" / "clinic_bounds.json")
HEART = str(ROOT / "data" / "heart_cleveland.csv")
HEART_SCHEMA = str(ROOT / "configs" / "heart_cleveland_schema.json")


@pytest.mark.parametrize("table, domain", [(CLINIC, ["--bounds", BOUNDS]), (HEART, ["--schema", HEART_SCHEMA])],
                         ids=["numeric", "mixed"])
def test_generate_writes_the_seeded_csvs_rows_as_parquet(tmp_path, table, domain):
    """The same seed, the same rows: the Parquet file read back equals the CSV read back (text levels,
    missing cells and integer columns included), and is a Parquet file, not CSV text."""
    for suffix in ("csv", "parquet"):
        assert main(["generate", table, "-o", str(tmp_path / f"out.{suffix}"), *domain, "--seed", "4",
                     "--quiet"]) == 0
    written = tmp_path / "out.parquet"
    assert written.read_bytes()[:4] == b"PAR1"
    from_parquet, from_csv = pd.read_parquet(written), pd.read_csv(tmp_path / "out.csv")
    assert list(from_parquet.columns) == list(from_csv.columns) and len(from_parquet) == len(from_csv)
    for name in from_csv.columns:
        expected, got = from_csv[name], from_parquet[name]
        if expected.dtype.kind in "if":
            pd.testing.assert_series_equal(got.astype(float), expected.astype(float), rtol=1e-12, check_names=False)
        else:  # text: the CSV reads levels such as "1.0" as text as the Parquet file stores them
            assert got.astype(str).where(got.notna()).tolist() == expected.astype(str).where(expected.notna()).tolist()


def test_copies_as_parquet_are_read_by_infer(tmp_path, capsys):
    out = tmp_path / "out.pq"
    assert main(["generate", CLINIC, "-o", str(out), "--bounds", BOUNDS, "--copies", "3", "--quiet"]) == 0
    files = sorted(path.name for path in tmp_path.iterdir())
    assert files == ["out.1.pq", "out.2.pq", "out.3.pq", "out.copies.json", "out.pq", "out.reference.pq"]
    assert all((tmp_path / name).read_bytes()[:4] == b"PAR1" for name in files if name.endswith(".pq"))
    # the same copies as CSV files (their record, without the Parquet files' digests): the same intervals
    for name in ("1", "2", "3", "reference"):
        pd.read_parquet(tmp_path / f"out.{name}.pq").to_csv(tmp_path / f"csv.{name}.csv", index=False)
    record = json.loads((tmp_path / "out.copies.json").read_text())
    (tmp_path / "csv.copies.json").write_text(json.dumps({key: value for key, value in record.items()
                                                          if key != "sha256"}))
    results = []
    for table in ("out.pq", "csv.csv"):
        assert main(["infer", str(tmp_path / table), "--mean", "age", "bmi", "-o", str(tmp_path / "r.csv"),
                     "--overwrite"]) == 0
        results.append(pd.read_csv(tmp_path / "r.csv", index_col=0))
    pd.testing.assert_frame_equal(results[0], results[1], rtol=1e-12)
    assert (results[0]["lower"] < results[0]["upper"]).all()


def test_sample_streams_chunks_into_one_parquet_file(tmp_path, monkeypatch):
    """Several chunks (row groups), one column type each, the same rows as the CSV of the same seed."""
    from synthdp.pipeline import model as model_file

    model = tmp_path / "m.synthdp"
    assert main(["fit", HEART, "-o", str(model), "--schema", HEART_SCHEMA, "--quiet"]) == 0
    monkeypatch.setattr(model_file.SamplingModel, "chunk_rows", lambda self: 1_000)
    rows = 2_500  # three chunks
    for suffix in ("csv", "parquet"):
        assert main(["sample", str(model), "-n", str(rows), "-o", str(tmp_path / f"s.{suffix}"), "--seed", "2",
                     "--quiet"]) == 0
    parquet = pq.ParquetFile(tmp_path / "s.parquet")
    assert parquet.metadata.num_rows == rows and parquet.metadata.num_row_groups >= 2
    from_parquet, from_csv = pd.read_parquet(tmp_path / "s.parquet"), pd.read_csv(tmp_path / "s.csv")
    numeric = [name for name in from_csv.columns if from_csv[name].dtype.kind in "if"]
    pd.testing.assert_frame_equal(from_parquet[numeric].astype(float), from_csv[numeric].astype(float), rtol=1e-12)


def test_parquet_output_without_pyarrow_is_refused_before_the_budget_is_spent(tmp_path, monkeypatch, capsys):
    real_import = builtins.__import__

    def without_pyarrow(name, *args, **kwargs):
        if name.split(".")[0] == "pyarrow":
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", without_pyarrow)
    budget = tmp_path / "b.json"
    code = main(["generate", CLINIC, "-o", str(tmp_path / "out.parquet"), "--bounds", BOUNDS, "--budget-file",
                 str(budget), "--lifetime-epsilon", "2", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "needs pyarrow" in err
    assert not (tmp_path / "out.parquet").exists()
    assert not budget.exists() or json.loads(budget.read_text())["releases"] == []


def test_sample_parquet_of_numeric_levels_with_other_in_some_chunks(tmp_path, monkeypatch):
    """A categorical column of numeric levels is numbers in a chunk that drew no "other" row and text in
    one that did: every chunk is written in one type (text, as the model's support takes "other"), not a
    crash on the second chunk's type, and the rows are the CSV's of the same seed."""
    import numpy as np

    from synthdp.pipeline import model as model_file

    rng = np.random.default_rng(0)
    code = rng.choice([1, 2, 3, 9], 500, p=[0.3, 0.3, 0.3, 0.1])  # 9 is no level: "other"
    pd.DataFrame({"x": rng.uniform(0, 1, 500).round(2), "code": code}).to_csv(tmp_path / "t.csv", index=False)
    (tmp_path / "s.json").write_text(json.dumps({"columns": {"x": {"type": "continuous", "bounds": [0, 1]},
                                                             "code": {"type": "categorical", "levels": [1, 2, 3]}}}))
    model = tmp_path / "m.synthdp"
    assert main(["fit", str(tmp_path / "t.csv"), "-o", str(model), "--schema", str(tmp_path / "s.json"),
                 "--epsilon", "4", "--seed", "1", "--quiet"]) == 0
    monkeypatch.setattr(model_file.SamplingModel, "chunk_rows", lambda self: 1)  # a chunk per row
    for suffix in ("csv", "parquet"):
        assert main(["sample", str(model), "-n", "60", "-o", str(tmp_path / f"o.{suffix}"), "--seed", "3",
                     "--quiet"]) == 0
    from_csv = pd.read_csv(tmp_path / "o.csv", dtype={"code": str})
    assert (from_csv["code"] == "other").any() and (from_csv["code"] != "other").any()  # both kinds of chunk
    from_parquet = pd.read_parquet(tmp_path / "o.parquet")
    assert pq.ParquetFile(tmp_path / "o.parquet").metadata.num_row_groups == 60
    assert from_parquet["code"].tolist() == from_csv["code"].tolist()


def _dated_table(folder: Path, seed: int, days: int, stamp_days: int, visit_bounds: list, stamp_bounds: list) -> None:
    """t.csv of 400 rows, a date column (visit: days from 2019-07-01, every fifth missing), a datetime column
    (stamp: seconds within stamp_days from 2020-02-01) and a number, and its schema s.json, in ``folder``."""
    import numpy as np

    rng = np.random.default_rng(seed)
    visits = pd.Timestamp("2019-07-01") + pd.to_timedelta(rng.integers(0, days, 400), unit="D")
    seconds = pd.Timestamp("2020-02-01") + pd.to_timedelta(rng.integers(0, stamp_days * 86_400, 400), unit="s")
    frame = pd.DataFrame({"visit": visits.strftime("%Y-%m-%d"), "stamp": seconds.strftime("%Y-%m-%dT%H:%M:%S"),
                          "x": rng.normal(size=400)})
    frame.loc[::5, "visit"] = None
    frame.to_csv(folder / "t.csv", index=False)
    (folder / "s.json").write_text(json.dumps({"columns": {
        "visit": {"type": "date", "bounds": visit_bounds, "nullable": True},
        "stamp": {"type": "datetime", "bounds": stamp_bounds}, "x": {"type": "continuous", "bounds": [-4, 4]}}}))


def test_dates_and_datetimes_are_parquet_timestamps_with_the_csvs_values(tmp_path, monkeypatch):
    """A date or datetime column, ISO text in the CSV, is a Parquet timestamp (read back as
    datetime64[us], as a DataFrame's fit samples it) with the same values, its missing cells NaT;
    chunk by chunk (sample) too."""

    from synthdp.pipeline import model as model_file

    _dated_table(tmp_path, 5, 1461, 275, ["2019-01-01", "2023-12-31"], ["2020-01-01T00:00:00", "2020-12-31T23:59:59"])
    model = tmp_path / "m.synthdp"
    for suffix in ("csv", "parquet"):
        assert main(["generate", str(tmp_path / "t.csv"), "-o", str(tmp_path / f"out.{suffix}"), "--schema",
                     str(tmp_path / "s.json"), "--epsilon", "4", "--seed", "1", "--quiet",
                     *(["--model", str(model)] if suffix == "csv" else [])]) == 0
    monkeypatch.setattr(model_file.SamplingModel, "chunk_rows", lambda self: 100)
    for suffix in ("csv", "parquet"):
        assert main(["sample", str(model), "-n", "350", "-o", str(tmp_path / f"s.{suffix}"), "--seed", "2",
                     "--quiet"]) == 0
    for name in ("out", "s"):
        stored = pq.read_schema(tmp_path / f"{name}.parquet")
        assert {str(stored.field(column).type) for column in ("visit", "stamp")} == {"timestamp[us]"}
        from_parquet, from_csv = pd.read_parquet(tmp_path / f"{name}.parquet"), pd.read_csv(tmp_path / f"{name}.csv")
        assert from_csv["visit"].isna().any() and from_csv["visit"].notna().any()
        for column in ("visit", "stamp"):
            assert str(from_parquet[column].dtype) == "datetime64[us]"
            expected = pd.to_datetime(from_csv[column], format="ISO8601").astype("datetime64[us]")
            pd.testing.assert_series_equal(from_parquet[column], expected)


def test_infer_reads_a_parquet_copys_dates_as_a_csv_copys_text(tmp_path, capsys):
    """Parquet copies store dates as timestamps: --mean of a nullable date column read each missing one as
    -2^63 (a mean of about -9e17, where the CSV copies' text is refused as not numeric), and --share and
    --group-mean compared them as "2023-11-21 22:06:42" and "2019-01-05 00:00:00", not the ISO text the
    CSV copies hold. The same answers from either, the same refusal."""

    _dated_table(tmp_path, 6, 40, 1, ["2019-07-01", "2019-08-09"], ["2020-02-01T00:00:00", "2020-02-01T23:59:59"])
    for suffix in ("csv", "parquet"):
        assert main(["generate", str(tmp_path / "t.csv"), "-o", str(tmp_path / f"{suffix}.{suffix}"), "--schema",
                     str(tmp_path / "s.json"), "--epsilon", "4", "--seed", "1", "--copies", "3", "--quiet"]) == 0
    stamp = pd.read_csv(tmp_path / "csv.reference.csv")["stamp"][0]
    asked = ["--share", "visit=2019-07-10", f"stamp={stamp}", "--group-mean", "x", "visit"]
    results = []
    for suffix in ("csv", "parquet"):
        capsys.readouterr()
        assert main(["infer", str(tmp_path / f"{suffix}.{suffix}"), "--mean", "visit"]) == 2
        assert capsys.readouterr().err.strip() == "synthdp: error: column 'visit' is not numeric"
        assert main(["infer", str(tmp_path / f"{suffix}.{suffix}"), *asked, "-o", str(tmp_path / "r.csv"),
                     "--overwrite"]) == 0
        results.append(pd.read_csv(tmp_path / "r.csv", index_col=0))
    pd.testing.assert_frame_equal(results[1], results[0])
    assert results[0].loc[f"share stamp == {stamp}", "naive"] > 0  # the value is found
    assert "mean x | visit == 2019-07-10" in results[0].index
