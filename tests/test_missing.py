"""Missing values (issue 19): columns declared nullable are synthesized with missing cells.

A nullable numeric column gets an internal binary indicator ("is missing") in the mixed
model, a nullable categorical column a "(missing)" level; their means are released with the
other moments (the grouped sensitivity covers them: one non-zero per block), so the
synthetic table has missing cells at the released rates, jointly with the other columns.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from synthdp import SmoothSynthesizer, SynthDPError
from synthdp.cli import main
from synthdp.domain.schema import Schema
from synthdp.privacy.sensitivity import grouped_means_sensitivity
from synthdp.reader.table import PrivateTable
from synthdp.stats.mixed_basis import basis_indices, groups_count

SCHEMA = {"columns": {"age": {"type": "integer", "bounds": [18, 90]},
                      "income": {"type": "continuous", "bounds": [0, 150000], "nullable": True},
                      "job": {"type": "categorical", "levels": ["a", "b", "c"], "nullable": True}}}


def table(seed: int, n: int = 3000) -> pd.DataFrame:
    """Income missing in 40 % of the rows of job c and 5 % of the others; job missing in 10 %."""
    rng = np.random.default_rng(seed)
    age = rng.integers(20, 80, n).astype(float)
    income = np.round(20000 + 800 * age + rng.normal(0, 5000, n), 0)
    job = rng.choice(["a", "b", "c"], n)
    income[rng.random(n) < np.where(job == "c", 0.4, 0.05)] = np.nan
    jobs = job.astype(object)
    jobs[rng.random(n) < 0.1] = None
    return pd.DataFrame({"age": age, "income": income, "job": jobs})


def fit(frame: pd.DataFrame, seed: int = 3, **options) -> SmoothSynthesizer:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return SmoothSynthesizer(epsilon=2.0, delta=1e-6, seed=seed, **options).fit(frame, schema=SCHEMA)


def test_missing_rates_and_their_dependence_survive():
    """Rates within 0.06 of the real ones, and income missing far more often in job c.

    False-failure rate: over 40 seeds of this table (n = 3000, (2, 1e-6)) the largest deviation
    of a synthetic missing rate from the real one was 0.025 (mean 0.009; the moments' noise sd
    is 0.005), and the gap between job c's and job a's rate never fell below 0.28; a normal fit
    to those deviations puts 0.06 beyond 8 standard deviations (below 1e-9 per run). The seed
    is fixed, so the test is deterministic.
    """
    frame = table(0)
    synth = fit(frame)
    out = synth.sample()
    assert abs(out["income"].isna().mean() - frame["income"].isna().mean()) < 0.06
    assert abs(out["job"].isna().mean() - frame["job"].isna().mean()) < 0.06
    by_job = out.assign(missing=out["income"].isna()).groupby("job")["missing"].mean()
    assert by_job["c"] - by_job["a"] > 0.15
    assert out["age"].notna().all() and set(out["job"].dropna()) <= {"a", "b", "c", "other"}
    report = synth.privacy_report()["schema"]
    assert set(report["missing_rates_noisy"]) == {"income", "job"}
    assert report["columns"]["income"]["nullable"] is True and "nullable" not in report["columns"]["age"]
    assert abs(report["missing_rates_noisy"]["income"] - frame["income"].isna().mean()) < 0.06


def test_undeclared_missing_values_name_the_column_and_the_option():
    frame = table(1, 200)
    schema = json.loads(json.dumps(SCHEMA))
    del schema["columns"]["income"]["nullable"]
    with pytest.raises(SynthDPError, match="column 'income' has missing.*nullable"):
        SmoothSynthesizer(seed=1).fit(frame, schema=schema)


def test_a_bounds_file_may_declare_nullable_numeric_columns(tmp_path):
    frame = table(2, 1500)[["age", "income"]]
    frame.to_csv(tmp_path / "t.csv", index=False)
    (tmp_path / "b.json").write_text(json.dumps({"age": {"bounds": [18, 90], "type": "integer"},
                                                 "income": {"bounds": [0, 150000], "nullable": True}}))
    assert main(["generate", str(tmp_path / "t.csv"), "-o", str(tmp_path / "o.csv"), "--bounds", str(tmp_path / "b.json"),
                 "--epsilon", "2", "--seed", "1", "--quiet", "--report", str(tmp_path / "r.json")]) == 0
    out = pd.read_csv(tmp_path / "o.csv")
    assert list(out.columns) == ["age", "income"] and 0 < out["income"].isna().mean() < 0.5
    assert (tmp_path / "o.csv").read_text().count(",\n") > 0  # a missing income is an empty last cell
    assert "income" in json.loads((tmp_path / "r.json").read_text())["schema"]["missing_rates_noisy"]


@pytest.mark.parametrize("options", [{"candidates": "pca"}, {"mode": "exact"}])
def test_a_nullable_numeric_column_refusing_candidates_or_exact_mode_says_nullable(options):
    frame = table(2, 200)[["age", "income"]]  # numeric columns only: nullable makes the table mixed
    bounds = {"age": {"bounds": [18, 90], "type": "integer"}, "income": {"bounds": [0, 150000], "nullable": True}}
    with pytest.raises(SynthDPError, match="nullable"):
        SmoothSynthesizer(epsilon=1, seed=1, **options).fit(frame, bounds=bounds)


@pytest.mark.parametrize("flag", [1, "true", None])
def test_a_bounds_file_nullable_that_is_not_a_boolean_is_an_error_not_ignored(tmp_path, flag):
    frame = table(2, 200)[["age", "income"]]
    frame.to_csv(tmp_path / "t.csv", index=False)
    (tmp_path / "b.json").write_text(json.dumps({"age": [18, 90], "income": {"bounds": [0, 150000], "nullable": flag}}))
    with pytest.raises(SynthDPError, match="column 'income' has \"nullable\": expected true or false"):
        SmoothSynthesizer(seed=1).fit(frame, bounds=tmp_path / "b.json")
    assert main(["generate", str(tmp_path / "t.csv"), "-o", str(tmp_path / "o.csv"), "--bounds", str(tmp_path / "b.json"),
                 "--quiet"]) == 2 and not (tmp_path / "o.csv").exists()


def test_a_nullable_binary_column_keeps_its_missing_cells():
    """A nullable binary column (10 % missing) refused unless declared nullable; declared, the
    synthetic share of missing cells lies in (0.03, 0.2).

    False-failure rate: over 400 seeds (table and release, (4, 0)) the share had mean 0.100 and
    sd 0.009 (range 0.080-0.123, none outside the interval): 0.03 is 8 sd below the mean and 0.2
    over 11 sd above, so a normal fit puts a false failure below 1e-15 per run. The seeds are
    fixed, so the test is deterministic."""
    rng = np.random.default_rng(5)
    sex = rng.choice(["F", "M"], 1000).astype(object)
    sex[:100] = None
    frame = pd.DataFrame({"x": rng.uniform(0, 1, 1000), "sex": sex})
    schema = {"columns": {"x": {"bounds": [0, 1]}, "sex": {"type": "binary", "levels": ["F", "M"], "nullable": True}}}
    with pytest.raises(SynthDPError, match="nullable"):
        SmoothSynthesizer(seed=1).fit(frame, schema={"columns": {**schema["columns"], "sex": {"type": "binary",
                                                                                              "levels": ["F", "M"]}}})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = SmoothSynthesizer(epsilon=4.0, seed=1).fit(frame, schema=schema).sample()
    assert 0.03 < out["sex"].isna().mean() < 0.2 and set(out["sex"].dropna()) <= {"F", "M", "other"}


def test_the_grouped_sensitivity_holds_with_missingness_indicators_on_extreme_rows():
    """A row with every cell missing against one with none: the grouped moments still move by
    at most 2G/n in l1 (each indicator block has one non-zero entry per row)."""
    frame = table(4, 50)
    schema = Schema.from_dict(SCHEMA, list(frame.columns))
    indices = basis_indices(schema, 2)
    l1, l2 = grouped_means_sensitivity(groups_count(schema, indices), len(frame))
    moments = []
    for row in ((90.0, np.nan, None), (18.0, 150000.0, "c")):
        changed = frame.copy()
        changed.loc[0] = row
        moments.append(PrivateTable(changed, ["job"], ["income"]).encoded_moments(schema, indices)[0])
    difference = moments[0] - moments[1]
    assert np.abs(difference).sum() <= l1 + 1e-12 and np.linalg.norm(difference) <= l2 + 1e-12
    assert np.abs(difference).sum() > 0.3 * l1


def test_a_nullable_date_column_is_written_back_with_empty_cells():
    """A nullable date column (10 % missing): the synthetic share of missing cells lies in
    (0.03, 0.2), the missing cells are NaT and the others whole days within the bounds.

    False-failure rate: over 400 seeds (table and release, (4, 0)) the share had mean 0.100 and
    sd 0.011 (range 0.069-0.143, none outside the interval): 0.03 is 6.2 sd below the mean and
    0.2 8.8 sd above, so a normal fit puts a false failure below 1e-9 per run. The seeds are
    fixed, so the test is deterministic."""
    rng = np.random.default_rng(6)
    days = pd.to_datetime("2020-01-01") + pd.to_timedelta(rng.integers(0, 365, 800), unit="D")
    visit = pd.Series(days.strftime("%Y-%m-%d"), dtype=object)
    visit[:80] = None
    frame = pd.DataFrame({"visit": visit, "x": rng.uniform(0, 1, 800)})
    bounds = {"visit": {"type": "date", "bounds": ["2020-01-01", "2020-12-31"], "nullable": True}, "x": [0, 1]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = SmoothSynthesizer(epsilon=4.0, seed=2).fit(frame, bounds=bounds).sample()
    present = out["visit"].dropna()
    assert 0.03 < out["visit"].isna().mean() < 0.2
    assert out["visit"].dtype == np.dtype("datetime64[us]")  # a DataFrame's date column, missing cells NaT
    assert present.between(pd.Timestamp("2020-01-01"), pd.Timestamp("2020-12-31")).all()
    assert (present.dt.normalize() == present).all()


def test_a_real_table_from_draft_to_release(tmp_path, capsys):
    """Issue 19's workflow: a CSV with missing numeric and categorical cells and a date column,
    a schema drafted by ``synthdp schema``, edited (the draft entry removed), then released.

    Missing rates within 0.06 of the real ones and the synthetic dates inside the draft's
    bounds with a mean within 30 days of the real mean. False-failure rate: with n = 3000 at
    (4, 1e-6) the missing rates' deviations are a few hundredths at most (see
    test_missing_rates_and_their_dependence_survive, at half this epsilon); the dates' mean
    is off by the sampling error of 3000 rows (sd about 2 days for dates spread over a year)
    plus the release's noise; the seed is fixed, so the run is deterministic.
    """
    rng = np.random.default_rng(9)
    n = 3000
    days = pd.to_datetime("2021-01-01") + pd.to_timedelta(rng.integers(0, 700, n), unit="D")
    income = np.round(rng.uniform(10000, 90000, n))
    income[rng.random(n) < 0.2] = np.nan
    job = rng.choice(["clerk", "nurse", "pilot"], n).astype(object)
    job[rng.random(n) < 0.1] = None
    frame = pd.DataFrame({"visit": days.strftime("%Y-%m-%d"), "income": income, "job": job})
    frame.to_csv(tmp_path / "real.csv", index=False)
    assert main(["schema", str(tmp_path / "real.csv"), "-o", str(tmp_path / "schema.json")]) == 0
    draft = json.loads((tmp_path / "schema.json").read_text())
    assert draft["columns"]["visit"]["type"] == "date"
    assert draft["columns"]["income"]["nullable"] is True and draft["columns"]["job"]["nullable"] is True
    del draft["draft"]  # the user's edit: the bounds and levels are declared public knowledge
    (tmp_path / "schema.json").write_text(json.dumps(draft))
    capsys.readouterr()
    assert main(["generate", str(tmp_path / "real.csv"), "-o", str(tmp_path / "synthetic.csv"), "--schema",
                 str(tmp_path / "schema.json"), "--epsilon", "4", "--delta", "1e-6", "--seed", "2", "--quiet",
                 "--report", str(tmp_path / "report.json")]) == 0
    synthetic = pd.read_csv(tmp_path / "synthetic.csv")
    for column in ("income", "job"):
        assert abs(synthetic[column].isna().mean() - frame[column].isna().mean()) < 0.06
    dates = pd.to_datetime(synthetic["visit"], format="%Y-%m-%d")
    low, high = (pd.Timestamp(bound) for bound in draft["columns"]["visit"]["bounds"])
    assert dates.between(low, high).all()
    assert abs((dates.mean() - pd.to_datetime(frame["visit"]).mean()).days) < 30
    report = json.loads((tmp_path / "report.json").read_text())
    assert not any("schema" in caveat for caveat in report["privacy"]["caveats"])  # only the --seed caveat
    moments = next(stage for stage in report["privacy"]["stages"] if stage["stage"] == "moments")
    assert "missing rates of 2 nullable column(s)" in moments["released"]
    assert set(report["schema"]["missing_rates_noisy"]) == {"income", "job"}
    # ... and the data owner evaluates it: missing cells and dates are read as the release reads them
    capsys.readouterr()
    assert main(["evaluate", "--real", str(tmp_path / "real.csv"), "--synth", str(tmp_path / "synthetic.csv"),
                 "--schema", str(tmp_path / "schema.json"), "--queries", "20", "--json", "--no-sdmetrics",
                 "--html", str(tmp_path / "page.html")]) == 0
    evaluation = json.loads(capsys.readouterr().out)
    shares = evaluation["missing_cells"]["share_of_rows"]
    assert set(shares) == {"income", "job"}
    assert shares["income"]["real"] == pytest.approx(frame["income"].isna().mean())
    assert "visit" in evaluation["columns"]["numeric"] and (tmp_path / "page.html").stat().st_size > 10_000
    assert main(["evaluate", "--real", str(tmp_path / "real.csv"), "--synth", str(tmp_path / "synthetic.csv"),
                 "--schema", str(tmp_path / "schema.json"), "--queries", "20", "--no-sdmetrics"]) == 0
    note, *text = capsys.readouterr().out.splitlines()  # first: the scores are the real table's, not private
    assert note.startswith("NOTE: these scores are computed from the real table")
    assert text[0].startswith("missing cells (share of rows): income real ")
    assert text[1] == "(the scores compare the rows whose nullable numeric cells are present)"


def test_a_nullable_columns_pairs_denoised_as_a_matrix_keep_its_missing_cell():
    """120 rows at (1, 1e-10) with a user's pairs share: the pairs' noise is above the limit, so
    the numeric columns are scored in finer cells (ScoreMap.refined keeps each column's missing
    cell last) and shrunk onto ||s||^2 <= d/2 = 1; the release, its report and the rows come out
    (the missing cells scoring 0, as in the default map)."""
    frame = table(1, n=120)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth = SmoothSynthesizer(epsilon=1.0, delta=1e-10, seed=0, correlation_share=0.3).fit(frame, schema=SCHEMA)
    assert synth.release_.plan.pairs_as_matrix
    stage = next(s for s in synth.privacy_report()["privacy"]["stages"] if s["stage"] == "correlation")
    assert stage["released"].endswith("clipped to squared norm 1")
    out = synth.sample(500)
    assert list(out.columns) == list(frame.columns) and len(out) == 500 and out["age"].notna().all()
