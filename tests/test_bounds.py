"""Private bounds: a noisy histogram over fixed bins, its budget and its warnings."""

import numpy as np
import pandas as pd
import pytest

from synthdp import SmoothSynthesizer, SynthDPError
from synthdp.privacy.dp_bounds import detection_threshold, estimate_bounds, laplace_count_scale
from synthdp.privacy.noise import OpenDPNoise, SeededNoise
from synthdp.stats.histograms import EDGES, N_BINS, histogram_counts

HALF_OCTAVE = 2**0.5


class ZeroNoise(SeededNoise):
    """No noise: the histogram as it is, to check the post-processing exactly."""

    def __init__(self):
        super().__init__(np.random.default_rng(0))

    def laplace(self, values, scale):
        return np.asarray(values, dtype=float)


def test_edges_are_sorted_symmetric_and_span_every_scale():
    assert np.all(np.diff(EDGES) > 0) and N_BINS == len(EDGES) + 1
    np.testing.assert_array_equal(EDGES, -EDGES[::-1])
    assert EDGES[EDGES > 0].min() < 1e-9 and EDGES.max() > 1e19


def test_the_range_is_the_edges_of_the_outermost_occupied_bins():
    values = np.concatenate([np.full(500, 3.0), np.full(500, 100.0)])
    lower, upper = estimate_bounds(histogram_counts(values), 1.0, ZeroNoise())
    assert lower <= 3.0 < lower * HALF_OCTAVE and upper / HALF_OCTAVE <= 100.0 < upper


def test_a_few_extreme_rows_do_not_stretch_the_range():
    values = np.random.default_rng(3).uniform(1, 2, 20_000)
    values[:20], values[20:40] = 1e300, -1e300  # 0.1% each, beyond every edge
    lower, upper = estimate_bounds(histogram_counts(values), 1.0, ZeroNoise())
    assert lower == 1.0 and upper == 2.0


def test_huge_values_land_in_the_outer_bins_without_error():
    values = np.concatenate([np.full(100, 1e300), np.full(100, -1e300)])
    lower, upper = estimate_bounds(histogram_counts(values), 1.0, ZeroNoise())
    assert lower == EDGES[0] and upper == EDGES[-1]


def test_replacing_one_row_moves_the_histogram_by_l1_two():
    """The sensitivity the Laplace scale is calibrated to, checked on extreme replacements."""
    base = np.random.default_rng(4).normal(0, 100, 50)
    counts = []
    for replacement in (-1e300, -1e-12, 0.0, 7.5, 1e300):
        table = base.copy()
        table[0] = replacement
        counts.append(histogram_counts(table))
    for first in counts:
        for second in counts:
            assert np.abs(first - second).sum() <= 2


def test_noisy_estimates_are_close_when_the_budget_is_ample():
    """epsilon = 20: Laplace scale 0.1 and threshold 0.9 rows, far below the 0.5% trim
    (100 rows), so the noise never changes which bins count (false failure < 1e-100)."""
    values = np.random.default_rng(1).normal(50, 10, 20_000)
    lower, upper = estimate_bounds(histogram_counts(values), 20.0, SeededNoise(np.random.default_rng(2)))
    assert lower == estimate_bounds(histogram_counts(values), 20.0, ZeroNoise())[0]
    assert upper == estimate_bounds(histogram_counts(values), 20.0, ZeroNoise())[1]
    assert lower < np.quantile(values, 0.01) and upper > np.quantile(values, 0.99)


def test_opendp_is_the_private_path():
    """OpenDP's noise cannot be seeded, so this test is random. Values in [10, 20) fill the half-octave
    bins [2^3, 2^3.5), [2^3.5, 2^4) and [2^4, 2^4.5) (709, 2378 and 1913 rows at this seed), every other
    bin is empty, and a bin counts above max(tau, 0.5 % of n) = 25 rows. At epsilon = 50 the Laplace
    scale is 0.04, so the range is [2^3, 2^4.5] unless a count moves by more than 25 rows: an empty
    bin rising above 25 or the 709 falling below it, each with probability below exp(-25 / 0.04) / 2,
    so a false failure has probability below 388 exp(-625) / 2, about 1e-269."""
    values = np.random.default_rng(5).uniform(10, 20, 5000)
    lower, upper = estimate_bounds(histogram_counts(values), 50.0, OpenDPNoise())
    assert lower == 2.0**3 and upper == 2.0**4.5


def test_threshold_grows_like_one_over_epsilon():
    assert laplace_count_scale(0.5) == 4.0
    assert detection_threshold(0.5) == pytest.approx(2 * detection_threshold(1.0))


def test_a_column_without_bounds_is_estimated_and_paid_for(clinic_like):
    """weight's private range covers its 1 %-99 % quantiles (41.7, 83.3). False-failure rate:
    weight fills the bins [32, 45.3), [45.3, 64) and [64, 90.5) with 600, 9350 and 10 050 rows,
    a bin counts above max(tau, 0.5 % of n) = 100 rows, and Laplace scale 2 / 1.6 = 1.25; the
    range can only miss a quantile if the 600 falls by 500, probability exp(-400) / 2, about
    1e-174 (an empty bin that counts only widens the range). The seed is fixed: deterministic."""
    frame, bounds = clinic_like
    frame = pd.concat([frame] * 50, ignore_index=True)  # n = 20 000
    partial = {name: spec for name, spec in bounds.items() if name != "weight"}
    synth = SmoothSynthesizer(epsilon=4.0, bounds_share=0.4, seed=0).fit(frame, bounds=partial)
    report = synth.privacy_report()
    (event,) = [e for e in report["privacy"]["stages"] if e["stage"] == "bounds"]
    assert event["epsilon"] == pytest.approx(1.6) and event["sensitivity"] == 2.0
    assert report["privacy"]["epsilon_spent"] == pytest.approx(4.0)
    columns = report["bounds"]["columns"]
    assert columns["weight"]["source"] == "DP estimate" and columns["age"]["source"] == "public"
    lower, upper = columns["weight"]["bounds"]
    assert lower < frame["weight"].quantile(0.01) and upper > frame["weight"].quantile(0.99)


def test_missing_bounds_without_a_share_is_an_error_naming_the_column(clinic_like):
    frame, bounds = clinic_like
    with pytest.raises(SynthDPError, match="'weight'.*--bounds-share"):
        SmoothSynthesizer(seed=0).fit(frame, bounds={k: v for k, v in bounds.items() if k != "weight"})


def test_an_unreliable_bounds_budget_is_announced_from_public_quantities(clinic_like):
    frame, _ = clinic_like  # n = 400, 3 columns, epsilon 0.1 for bounds: hopeless
    with pytest.warns(UserWarning, match="unreliable"):
        SmoothSynthesizer(epsilon=1.0, bounds_share=0.1, seed=0).fit(frame)


def test_a_missing_cell_is_in_no_bin_so_one_row_still_moves_at_most_two_counts():
    """A nullable column's histogram: a missing cell counts nowhere. Replacing one row turns a
    missing cell into an extreme value (one count up: L1 1) or one value into another (L1 2):
    the declared sensitivity 2 holds on the extreme rows."""
    base = np.random.default_rng(0).uniform(1, 2, 1000)
    rows = {"missing": np.nan, "inside": 1.5, "huge": 1e300, "tiny": -1e300}
    histograms = {}
    for name, value in rows.items():
        column = base.copy()
        column[0] = value
        histograms[name] = histogram_counts(column)
    assert histograms["missing"].sum() == 999 and histograms["huge"].sum() == 1000
    assert max(np.abs(a - b).sum() for a in histograms.values() for b in histograms.values()) == 2


def _mixed_without_bounds(n):
    rng = np.random.default_rng(11)
    age = rng.integers(20, 80, n).astype(float)
    age[:n // 10] = np.nan  # a nullable integer column
    frame = pd.DataFrame({"age": age, "income": rng.gamma(2, 20_000, n), "kind": rng.choice(["a", "b"], n)})
    schema = {"columns": {"age": {"type": "integer", "nullable": True}, "income": {"type": "continuous"},
                          "kind": {"type": "binary", "levels": ["a", "b"]}}}
    return frame, schema


def test_a_schema_s_numeric_columns_without_bounds_are_estimated_and_paid_for():
    """age's and income's private ranges hold their values (age 20-79) and their 1 %-99 %
    quantiles, and are paid for. False-failure rate: each column gets epsilon 0.3 (Laplace scale
    6.7) and a bin counts above max(tau, 0.5 % of n) = 100 rows. age's lowest bin [16, 22.6) holds
    873 rows and its highest [64, 90.5) 4 830; income's bin [2 896, 4 096) holds 195 rows and
    [92 682, 131 072) 860. The checks fail only if one of the 110 empty bins above 1 000 counts
    (age_upper < 1000: 110 exp(-15) / 2 = 1.7e-5), if income's 195 falls by 95 (exp(-14.25) / 2 =
    3.2e-7) or a larger count by 700 or more (below 1e-45): a false failure below 2e-5 per run.
    The seed is fixed, so the test is deterministic."""
    frame, schema = _mixed_without_bounds(20_000)
    synth = SmoothSynthesizer(epsilon=2.0, delta=1e-10, bounds_share=0.3, seed=0).fit(frame, schema=schema)
    report = synth.privacy_report()
    (event,) = [e for e in report["privacy"]["stages"] if e["stage"] == "bounds"]
    assert event["epsilon"] == pytest.approx(0.6) and event["sensitivity"] == 2.0
    assert report["privacy"]["epsilon_spent"] == pytest.approx(2.0)
    assert report["parameters"]["budget"]["bounds_epsilon"] == pytest.approx(0.6)
    columns = report["bounds"]["columns"]
    assert {columns[name]["source"] for name in ("age", "income")} == {"DP estimate"}
    age_lower, age_upper = columns["age"]["bounds"]
    assert age_lower == int(age_lower) and age_upper == int(age_upper)  # whole numbers, widened outward
    assert age_lower <= 20 and age_upper >= 79
    assert age_upper < 1000  # the missing cells (NaN) are in no bin: they would have filled the top one
    lower, upper = columns["income"]["bounds"]
    assert lower <= frame["income"].quantile(0.01) and upper >= frame["income"].quantile(0.99)
    out = synth.sample(2000, seed=1)
    assert out["age"].isna().any() and out["age"].dropna().between(age_lower, age_upper).all()


def test_a_schema_without_bounds_and_no_share_is_an_error_naming_the_column():
    frame, schema = _mixed_without_bounds(500)
    with pytest.raises(SynthDPError, match="no bounds for column 'age'.*--bounds-share"):
        SmoothSynthesizer(seed=0).fit(frame, schema=schema)


def test_a_nullable_bounds_mapping_that_leaves_a_column_out_estimates_it_or_names_it():
    rng = np.random.default_rng(12)
    frame = pd.DataFrame({"x": rng.uniform(0, 1, 5000), "y": rng.normal(50, 10, 5000)})
    frame.loc[:100, "x"] = np.nan
    partial = {"x": {"bounds": [0, 1], "nullable": True}}
    synth = SmoothSynthesizer(epsilon=1.0, bounds_share=0.2, seed=1).fit(frame, partial)
    columns = synth.privacy_report()["bounds"]["columns"]
    assert columns["y"]["source"] == "DP estimate" and columns["x"]["source"] == "public"
    assert list(synth.sample(10, seed=1).columns) == ["x", "y"]
    with pytest.raises(SynthDPError, match="no bounds for column 'y'"):
        SmoothSynthesizer(epsilon=1.0, seed=1).fit(frame, partial)


def test_a_schema_without_numeric_bounds_serves_marginals_and_evaluate_names_what_it_lacks(tmp_path, capsys):
    """The schema a --bounds-share release took (a numeric column without bounds): marginal --table
    uses only its levels; evaluate needs the numeric bins' bounds and says where to find them."""
    import json

    from synthdp.cli import main

    rng = np.random.default_rng(13)
    frame = pd.DataFrame({"x": rng.uniform(0, 1, 400), "c": rng.choice(["a", "b"], 400)})
    frame.to_csv(tmp_path / "t.csv", index=False)
    (tmp_path / "s.json").write_text(json.dumps({"columns": {"x": {"type": "continuous"},
                                                             "c": {"type": "categorical", "levels": ["a", "b"]}}}))
    assert main(["marginal", "--table", str(tmp_path / "t.csv"), "--schema", str(tmp_path / "s.json"),
                 "--columns", "c"]) == 0
    assert "a," in capsys.readouterr().out
    assert main(["evaluate", "--real", str(tmp_path / "t.csv"), "--synth", str(tmp_path / "t.csv"), "--schema",
                 str(tmp_path / "s.json"), "--no-sdmetrics"]) == 2
    assert "gives no bounds for column 'x'" in capsys.readouterr().err
