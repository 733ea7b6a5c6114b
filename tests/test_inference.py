"""Copies of a release and synthdp.infer: the combining rules, that copies read nothing but the
release, and a small coverage check (the full coverage study is an experiment)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from synthdp import SmoothSynthesizer, infer
from synthdp.errors import InferenceWarning, SynthDPError
from synthdp.evaluation.inference import REFERENCE_FACTOR, Copies


def _copies(reference_value: float, copy_values: list[float]) -> Copies:
    table = lambda value: pd.DataFrame({"x": [value, value]})  # a table whose mean is ``value``
    return Copies([table(v) for v in copy_values], table(reference_value), 0.0)


def test_the_combining_rules_on_known_values():
    """estimate = 2 theta_0 - mean(theta_i); se = sd(theta_i) sqrt(1 + 1/m); interval estimate +- t_{m-1} se."""
    values = [1.0, 2.0, 4.0, 5.0]
    result = infer(_copies(3.5, values), lambda frame: frame["x"].mean(), level=0.9)
    row = result.iloc[0]
    se = np.std(values, ddof=1) * np.sqrt(1 + 1 / 4)
    assert row["estimate"] == pytest.approx(2 * 3.5 - 3.0) and row["std_error"] == pytest.approx(se)
    z = stats.t.ppf(0.95, df=3)
    assert row["lower"] == pytest.approx(4.0 - z * se) and row["upper"] == pytest.approx(4.0 + z * se)
    assert row["naive"] == pytest.approx(3.5)


def test_theta_0_is_the_mean_over_the_reference_s_blocks_of_a_copy_s_rows():
    """A statistic that grows with the rows (a sum, a count) is compared like with like: theta_0 is
    its mean over the reference cut into blocks of a copy's rows, not its value on the whole
    reference (20 times as large); a mean is the same either way."""
    reference = pd.DataFrame({"x": np.arange(40.0)})  # 4 blocks of 10 rows
    tables = [pd.DataFrame({"x": np.full(10, value)}) for value in (19.0, 20.0, 21.0)]
    copies = Copies(tables, reference, 0.0)
    total = infer(copies, lambda frame: frame["x"].sum()).iloc[0]
    assert total["naive"] == pytest.approx(reference["x"].sum() / 4) and total["estimate"] == pytest.approx(2 * 195 - 200)
    assert infer(copies, len).iloc[0]["estimate"] == pytest.approx(10)
    mean = infer(copies, lambda frame: frame["x"].mean()).iloc[0]
    assert mean["naive"] == pytest.approx(19.5)
    short = Copies(tables, reference.iloc[:5], 0.0)  # less than one block: the whole reference
    assert infer(short, lambda frame: frame["x"].mean()).iloc[0]["naive"] == pytest.approx(2.0)


def test_a_group_only_the_copies_have_gets_a_row_and_a_warning():
    """A group mean whose group 3 shows in the copies but in no block of the reference sample (too rare
    in the fitted distribution): it was dropped without a word; now it has a row, NaN, after the
    reference's groups, and the warning names it. The other groups' values do not change."""
    reference = pd.DataFrame({"g": np.tile([1, 2], 20), "x": np.arange(40.0)})
    tables = [pd.DataFrame({"g": [1, 2, 3, 1], "x": [value, 2.0, 5.0, value]}) for value in (1.0, 2.0, 3.0)]
    mean = lambda frame: frame.groupby("g")["x"].mean()
    with pytest.warns(InferenceWarning, match=r"no finite value of '3' \(a group too rare to show in it"):
        result = infer(Copies(tables, reference, 0.0), mean)
    assert list(result.index) == [1, 2, 3] and result.loc[3, ["estimate", "lower", "upper"]].isna().all()
    without = [table.replace({"g": {3: 2}, "x": {5.0: 2.0}}) for table in tables]  # the same rows per copy (blocks)
    first = infer(Copies(without, reference, 0.0), mean)
    pd.testing.assert_frame_equal(result.loc[[1, 2]], first)


def test_an_element_the_reference_sample_has_no_value_of_says_why_it_has_no_estimate():
    """A nullable column all missing in the fitted distribution's reference sample, some of whose copies
    have cells: its mean had a NaN estimate beside a finite standard error, and the only warning was
    that some copies lacked it."""
    reference = pd.DataFrame({"x": np.full(40, np.nan), "y": np.tile(np.arange(10.0), 4)})
    tables = [pd.DataFrame({"x": [np.nan] * 9 + [value], "y": np.arange(10.0)}) for value in (1.0, 2.0, 3.0)]
    with pytest.warns(InferenceWarning, match=r"reference sample \(the fitted distribution\) has no finite value of "
                      r"'x'"):
        result = infer(Copies(tables, reference, 0.0), lambda frame: frame[["x", "y"]].mean())
    assert np.isnan(result.loc["x", "estimate"]) and result.loc["y", "estimate"] == pytest.approx(4.5)


def test_a_group_only_a_later_block_of_the_reference_has_stays_with_its_statistic():
    """A group absent from the reference's first block (visits 17 on the bundled example) was listed
    after every other statistic, below an OLS model's coefficients, not beside its own group mean."""
    reference = pd.DataFrame({"g": [1, 2] * 5 + [1, 2, 3] * 3 + [1], "x": np.arange(20.0)})  # 3 in block 2 only
    tables = [reference.iloc[10:].reset_index(drop=True)] * 2

    def statistic(frame):
        return pd.concat([frame.groupby("g")["x"].mean().rename(lambda g: f"g{g}"), pd.Series({"last": 1.0})])

    assert list(infer(Copies(tables, reference, 0.0), statistic).index) == ["g1", "g2", "g3", "last"]
    # a group seen in a block without its neighbours goes where every block's order puts it (11 after 9, which
    # the first block has and the second lacks; the third has both), not right after its predecessor there
    groups = {0: [1, 2, 9, 12], 1: [1, 11, 12], 2: [9, 11]}
    reference = pd.DataFrame({"block": np.repeat([0, 1, 2], 4)})
    by_block = lambda frame: pd.Series(1.0, index=groups[int(frame["block"].iloc[0])])  # noqa: E731
    with pytest.warns(InferenceWarning, match="only some copies have a value of '11'"):  # the copies lack it
        found = infer(Copies([reference.iloc[:4]] * 2, reference, 0.0), by_block)
    assert list(found.index) == [1, 2, 9, 11, 12]



def test_a_missing_group_of_a_numeric_key_keeps_its_place_in_the_order():
    """A group mean by a nullable numeric column (groupby(dropna=False)) has a NaN group in a float
    index: the blocks' order was found with a dict, where each NaN read from the index is another
    object, and infer raised KeyError: nan."""
    reference = pd.DataFrame({"g": [1.0, np.nan, 2.0, 1.0] * 2 + [np.nan, 2.0, 3.0, 1.0], "x": np.arange(12.0)})
    tables = [reference.iloc[:4].reset_index(drop=True)] * 3
    statistic = lambda frame: frame.groupby("g", dropna=False)["x"].mean()  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InferenceWarning)  # the copies lack the group 3
        found = infer(Copies(tables, reference, 0.0), statistic)
    assert found.index[:3].tolist() == [1.0, 2.0, 3.0] and np.isnan(found.index[3]) and len(found) == 4
    assert found["naive"].iloc[0] == pytest.approx((1.5 + 5.5 + 11) / 3)  # group 1 over the three blocks

def test_limits_keep_the_estimate_and_interval_among_the_values_the_statistic_takes():
    """A bias correction past a statistic's range (a copy attenuates a strong correlation) is put back into it."""
    copies = _copies(0.95, [0.80, 0.84, 0.86, 0.90])  # 2 * 0.95 - 0.85 = 1.05
    mean = lambda frame: frame["x"].mean()  # noqa: E731
    free = infer(copies, mean).iloc[0]
    assert free["estimate"] == pytest.approx(1.05) and free["upper"] > 1
    bounded = infer(copies, mean, limits=(-1.0, 1.0)).iloc[0]
    assert bounded["estimate"] == 1.0 and bounded["upper"] == 1.0 and bounded["lower"] == pytest.approx(free["lower"])
    assert infer(copies, mean, limits={"other": (0.0, 0.5)}).iloc[0]["estimate"] == pytest.approx(1.05)
    with pytest.raises(SynthDPError, match="limits must have low <= high"):
        infer(copies, mean, limits=(1.0, 0.0))
    with pytest.raises(SynthDPError, match="limits must be a"):
        infer(copies, mean, limits=("a", "b", "c"))


def test_the_common_statistics_carry_the_limits_of_shares_and_correlations():
    from synthdp.evaluation.inference import common_statistics

    statistic = common_statistics(means=["x"], proportions=[("x", "1")], correlations=[("x", "y")])
    assert statistic.limits == {"share x == 1": (0.0, 1.0), "corr x ~ y": (-1.0, 1.0)}
    table = lambda shift: pd.DataFrame({"x": [0.0, 1.0, 1.0, 2.0 + shift], "y": [0.0, 1.1, 0.9, 2.0]})  # noqa: E731
    copies = Copies([table(3.0), table(2.5)], table(0.0), 0.0)  # the copies' correlation below the reference's
    result = infer(copies, statistic)
    assert result.loc["corr x ~ y", "estimate"] <= 1.0 and result.loc["corr x ~ y", "upper"] <= 1.0
    assert result.loc["share x == 1", "lower"] >= 0.0


def test_a_statistic_may_be_a_series_or_a_frame():
    frames = [pd.DataFrame({"g": ["a", "a", "b"], "y": [1.0, 3.0, 5.0 + k], "z": [0.0, 1.0, 2.0 * k]})
              for k in range(4)]
    copies = Copies(frames[1:], frames[0], 0.0)
    by_group = infer(copies, lambda frame: frame.groupby("g")["y"].mean())
    assert list(by_group.index) == ["a", "b"] and by_group.loc["a", "std_error"] == pytest.approx(0.0)
    matrix = infer(copies, lambda frame: frame[["y", "z"]].corr())
    assert len(matrix) == 4 and {"estimate", "std_error", "lower", "upper"} <= set(matrix.columns)


def test_bad_arguments_are_one_line():
    with pytest.raises(SynthDPError, match="level"):
        infer(_copies(1.0, [1.0, 2.0]), lambda frame: frame["x"].mean(), level=1.5)
    with pytest.raises(SynthDPError, match="at least two copies"):
        infer(_copies(1.0, [1.0]), lambda frame: frame["x"].mean())
    with pytest.raises(SynthDPError, match="sample_copies"):
        infer([pd.DataFrame({"x": [1.0]})] * 3, lambda frame: frame["x"].mean())


def _population(rows: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    a = rng.normal(size=rows)
    return pd.DataFrame({"a": 5 + 2 * a, "b": 10 + 0.6 * a + 0.8 * rng.normal(size=rows), "c": rng.uniform(0, 1, rows)})


BOUNDS = {"a": [-5.0, 15.0], "b": [4.0, 16.0], "c": [0.0, 1.0]}


def test_copies_read_nothing_but_the_release(tmp_path):
    """Fitted from a CSV file that is then deleted, the release still makes copies (their input is a
    sample of the fitted distribution), spends nothing more, and the copies and reference have the
    release's columns and sizes."""
    path = tmp_path / "table.csv"
    _population(1500, 1).to_csv(path, index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth = SmoothSynthesizer(epsilon=1.0, delta=1e-10, seed=2).fit(str(path), bounds=BOUNDS)
        before = synth.privacy_report()["privacy"]
        path.unlink()
        copies = synth.sample_copies(3, 400, seed=4)
    assert len(copies) == 3 and all(list(table.columns) == ["a", "b", "c"] and len(table) == 400 for table in copies)
    assert len(copies.reference) == REFERENCE_FACTOR * 1500 and copies.seconds_per_copy > 0
    assert synth.privacy_report()["privacy"] == before
    with pytest.raises(SynthDPError, match="at least two"):
        synth.sample_copies(1)


def test_copies_show_one_bar_counting_them_and_not_each_refit_s(monkeypatch, capsys):
    """With progress, the copies show one bar on stderr that counts them ("synthdp copies", M of them;
    its delay of a second set to 0 here), and no refit shows its own stages' bar; without, nothing."""
    import synthdp.pipeline.copies as copies_module

    shown = copies_module.tqdm
    monkeypatch.setattr(copies_module, "tqdm", lambda *args, **options: shown(*args, **{**options, "delay": 0}))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth = SmoothSynthesizer(epsilon=1.0, delta=1e-10, seed=2).fit(_population(600, 1), bounds=BOUNDS)
        capsys.readouterr()
        synth.sample_copies(3, 50, seed=4, progress=True)
        bar = capsys.readouterr().err
        synth.sample_copies(3, 50, seed=4)
    assert "synthdp copies" in bar and "/3 " in bar and "stages" not in bar
    assert capsys.readouterr().err == ""


def test_intervals_cover_where_the_usual_ones_do_not():
    """A generated population (3 columns), 20 samples of 2 000 rows, each released at (1, 1e-10) with
    6 copies: the intervals of the two column means cover the population's in at least 70 % of the
    40 cases, and the usual interval on the synthetic table in fewer. Seeded: deterministic. Were
    the true coverage 0.9, 40 cases below 70 % (27 or fewer) would happen with probability 9e-5
    (binomial, the cases taken as independent). When this was written: 35 of 40, the usual interval 18."""
    population = _population(200_000, 0)
    truth = population[["a", "b"]].mean()
    rng = np.random.default_rng(7)
    ours = usual = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(20):
            sample = population.sample(2000, random_state=int(rng.integers(2**31)))
            synth = SmoothSynthesizer(epsilon=1.0, delta=1e-10, seed=int(rng.integers(2**31))).fit(sample, bounds=BOUNDS)
            table = synth.sample()
            result = infer(synth.sample_copies(6, seed=int(rng.integers(2**31))), lambda frame: frame[["a", "b"]].mean())
            ours += int(((result["lower"] <= truth) & (truth <= result["upper"])).sum())
            usual += int((abs(table[["a", "b"]].mean() - truth) <= 1.96 * table[["a", "b"]].std() / np.sqrt(2000)).sum())
    assert ours >= 28 and usual < ours


def test_generate_writes_the_copies_and_the_report_says_how(tmp_path):
    from pathlib import Path

    from synthdp.cli import main
    from synthdp.evaluation.inference import load_copies

    root = Path(__file__).resolve().parents[1] / "synthdp" / "datasets"
    out, report = tmp_path / "out.csv", tmp_path / "report.json"
    assert main(["generate", str(root / "clinic.csv"), "-o", str(out), "--epsilon", "1", "--delta", "1e-10",
                 "--bounds", str(root / "clinic_bounds.json"), "--copies", "3", "--report", str(report), "--seed", "2",
                 "--quiet"]) == 0
    copies = load_copies(out)
    assert len(copies) == 3 and len(copies.reference) == REFERENCE_FACTOR * 600
    entry = __import__("json").loads(report.read_text())["copies"]
    assert entry["count"] == 3 and "no data read" in entry["budget"] and entry["seconds_per_copy"] > 0
    # OUTPUT.copies.json holds the report's entry, which load_copies reads back, and each file's digest
    from synthdp.evaluation.inference import file_sha256

    written = __import__("json").loads((tmp_path / "out.copies.json").read_text())
    digests = written.pop("sha256")
    assert written == entry and digests == {name: file_sha256(tmp_path / name) for name in
                                            ["out.1.csv", "out.2.csv", "out.3.csv", "out.reference.csv"]}
    assert copies.seconds_per_copy == entry["seconds_per_copy"] and copies.dependence == entry["measures_dependence"]
    result = infer(copies, lambda frame: frame["age"].mean())
    assert result.iloc[0]["lower"] < result.iloc[0]["upper"]
    assert main(["generate", str(root / "clinic.csv"), "-o", str(tmp_path / "x.csv"), "--bounds",
                 str(root / "clinic_bounds.json"), "--copies", "1", "--quiet"]) == 2
    with pytest.raises(SynthDPError, match="no copies"):
        load_copies(tmp_path / "x.csv")
    # written again with fewer copies (--overwrite): the earlier run's out.3.csv stays, and is not read
    assert main(["generate", str(root / "clinic.csv"), "-o", str(out), "--epsilon", "1", "--delta", "1e-10",
                 "--bounds", str(root / "clinic_bounds.json"), "--copies", "2", "--seed", "3", "--quiet",
                 "--overwrite"]) == 0
    assert (tmp_path / "out.3.csv").exists() and len(load_copies(out)) == 2
    (tmp_path / "out.2.csv").unlink()
    with pytest.raises(SynthDPError, match="says 2 copies, and some are missing"):
        load_copies(out)


def test_copies_cut_short_or_under_a_name_with_glob_characters(tmp_path):
    """A copy cut to its header (or to a few rows) is refused, not read as one (its intervals were
    NaN or wild, exit 0); a missing reference is named; an output name with [ ] * ? finds its copies."""
    from pathlib import Path

    from synthdp.cli import main
    from synthdp.evaluation.inference import load_copies

    root = Path(__file__).resolve().parents[1] / "synthdp" / "datasets"
    out = tmp_path / "g[x]*.csv"
    assert main(["generate", str(root / "clinic.csv"), "-o", str(out), "--bounds", str(root / "clinic_bounds.json"),
                 "--copies", "2", "--rows", "300", "--quiet"]) == 0
    copies = load_copies(out)
    assert len(copies) == 2 and len(copies.tables[0]) == 300 and len(copies.reference) == REFERENCE_FACTOR * 600
    first = tmp_path / "g[x]*.1.csv"
    whole = first.read_text()
    for kept in (1, 3):  # the header alone, then the header and two rows
        first.write_text("".join(whole.splitlines(keepends=True)[:kept]))
        with pytest.raises(SynthDPError, match="is not what this release's generate --copies wrote"):
            load_copies(out)  # its digest differs from OUTPUT.copies.json's record
    info = tmp_path / "g[x]*.copies.json"
    recorded = json.loads(info.read_text())
    info.write_text(json.dumps({key: value for key, value in recorded.items() if key != "sha256"}))
    with pytest.raises(SynthDPError, match=r"has \d+ rows, not what was written"):  # without digests: the rows
        load_copies(out)
    info.write_text(json.dumps(recorded))
    first.write_text(whole)
    (tmp_path / "g[x]*.reference.csv").unlink()
    with pytest.raises(SynthDPError, match="reference sample .* is missing"):
        load_copies(out)


def test_the_common_statistics_on_a_known_table():
    frame = pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0], "y": [1.0, 3.0, 5.0, 7.0], "g": [2, 10, 2, 10],
                          "s": ["a", "b", "b", "b"]})
    statistic = synthdp_common(means=["x"], proportions=[("s", "b"), ("g", "10")], group_means=[("x", "g")],
                               correlations=[("x", "y")], ols=[("y", "x")])
    values = statistic(frame)
    assert values["mean x"] == 2.5 and values["share s == b"] == 0.75 and values["share g == 10"] == 0.5
    assert list(values.filter(like="|").index) == ["mean x | g == 2", "mean x | g == 10"]  # by value, not text
    assert values["mean x | g == 10"] == 3.0 and values["corr x ~ y"] == pytest.approx(1.0)
    assert values["ols y ~ x"] == pytest.approx(2.0) and values["ols y ~ (intercept)"] == pytest.approx(-1.0)
    with pytest.raises(SynthDPError, match="column 'nope' is not in the table"):
        synthdp_common(means=["nope"])(frame)
    with pytest.raises(SynthDPError, match="column 's' is not numeric"):
        synthdp_common(means=["s"])(frame)
    with pytest.raises(SynthDPError, match="no statistic"):
        synthdp_common()
    with pytest.raises(SynthDPError, match="at least one predictor"):
        synthdp_common(ols=[("y",)])


def test_ols_coefficients_that_a_table_does_not_determine_are_nan_not_zero():
    """A predictor with no present cell (a nullable column all missing in the reference sample) left
    no rows to fit: lstsq's minimum-norm answer, 0 for every coefficient, was given as the naive value
    and the estimate 2 * 0 - mean(copies) as if it were one; a constant or repeated predictor split
    its coefficient arbitrarily."""
    frame = pd.DataFrame({"x": [np.nan] * 4, "c": [1.0] * 4, "z": [1.0, 2.0, 3.0, 5.0], "y": [1.0, 3.0, 5.0, 6.0]})
    for ols in (("y", "x"), ("y", "c"), ("y", "z", "z")):
        values = synthdp_common(ols=[ols])(frame)
        assert values.isna().all(), (ols, values)
    assert synthdp_common(ols=[("y", "z")])(frame).notna().all()


def synthdp_common(**kwargs):
    from synthdp.evaluation.inference import common_statistics

    return common_statistics(**kwargs)


def test_the_infer_command_matches_the_python_api(tmp_path, capsys):
    from synthdp.cli import main
    from synthdp.evaluation.inference import load_copies

    rng = np.random.default_rng(0)
    out = tmp_path / "out.csv"
    for name in ["out.1.csv", "out.2.csv", "out.3.csv", "out.reference.csv"]:
        x = rng.normal(size=50)
        pd.DataFrame({"x": x, "y": 2 * x + rng.normal(size=50), "g": rng.integers(0, 2, 50)}).to_csv(
            tmp_path / name, index=False)
    assert main(["infer", str(out), "--mean", "x", "y", "--share", "g=1", "--corr", "x", "y", "--ols", "y", "x",
                 "--group-mean", "y", "g", "--level", "0.9", "-o", str(tmp_path / "result.csv")]) == 0
    written = pd.read_csv(tmp_path / "result.csv", index_col="statistic")
    with pytest.warns(InferenceWarning, match="out.copies.json, the record of the copies of 'out.csv', is missing"):
        loaded = load_copies(out)  # copies made by hand: no record
    expected = infer(loaded, synthdp_common(means=["x", "y"], proportions=[("g", "1")], correlations=[("x", "y")],
                                            ols=[("y", "x")], group_means=[("y", "g")]), level=0.9)
    assert list(written.index) == list(expected.index)
    np.testing.assert_allclose(written.drop(columns="measured").to_numpy(),
                               expected.drop(columns="measured").to_numpy(), rtol=1e-12)
    assert written["measured"].tolist() == expected["measured"].tolist() == [True] * len(expected)
    assert main(["infer", str(out), "--corr", "x", "y"]) == 0
    assert "corr x ~ y" in capsys.readouterr().out
    assert main(["infer", str(out), "--share", "g=1", "g=0"]) == 0  # several shares at once, as --mean takes
    shares = capsys.readouterr().out
    assert "share g == 1" in shares and "share g == 0" in shares
    # one line naming the problem, and the result file is never written over an input
    assert main(["infer", str(out), "--group-mean", "x", "y"]) == 2  # by a continuous column: refused, one line
    assert capsys.readouterr().err.strip().startswith("synthdp: error: --group-mean x y: 'y' is continuous in the copies")
    assert main(["infer", str(out), "--share", "g"]) == 2
    assert main(["infer", str(out), "--mean", "zz"]) == 2
    assert main(["infer", str(out), "--mean", "x", "-o", str(tmp_path / "out.1.csv")]) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert error[0].startswith("synthdp: error: --share takes COL=VALUE") and "column 'zz'" in error[1]
    assert len(error) == 3 and pd.read_csv(tmp_path / "out.1.csv").shape == (50, 3)
    out.write_text("x\n1\n")  # the release's own table is not overwritten either
    assert main(["infer", str(out), "--mean", "x", "-o", str(out)]) == 2
    assert "is the synthetic table" in capsys.readouterr().err and out.read_text() == "x\n1\n"
    (tmp_path / "out.2.csv").write_text("")  # a damaged copy: one line, not a traceback
    assert main(["infer", str(out), "--mean", "x"]) == 2
    assert capsys.readouterr().err.strip() == (f"synthdp: error: copy '{tmp_path / 'out.2.csv'}' is not a CSV table "
                                               "with a header row: write the copies again (synthdp generate --copies)")


def test_evaluate_checks_the_copies_intervals_against_the_real_table(tmp_path, capsys):
    import json
    from pathlib import Path

    from synthdp.cli import main

    root = Path(__file__).resolve().parents[1] / "synthdp" / "datasets"
    real, bounds, out = root / "clinic.csv", root / "clinic_bounds.json", tmp_path / "out.csv"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["generate", str(real), "-o", str(out), "--bounds", str(bounds), "--copies", "4", "--seed", "3",
                     "--quiet"]) == 0
    capsys.readouterr()
    assert main(["evaluate", "--real", str(real), "--synth", str(out), "--bounds", str(bounds), "--copies", "--json",
                 "--no-sdmetrics", "--queries", "50"]) == 0
    intervals = json.loads(capsys.readouterr().out)["intervals"]
    # five means; the ten correlations read pairs this release (no pair measured at this n) ties by nothing: no interval
    assert intervals["copies"] == 4 and intervals["checked"] == 5 and len(intervals["statistics"]) == 5 + 10
    frame = pd.read_csv(real)
    means = {row["statistic"]: row for row in intervals["statistics"] if row["statistic"].startswith("mean ")}
    assert means["mean bmi"]["real"] == pytest.approx(frame["bmi"].mean())
    for row in intervals["statistics"]:
        if row["statistic"].startswith("corr "):
            assert row["lower"] is None and row["upper"] is None and row["holds"] is None and not row["measured"]
        else:
            assert row["holds"] == (row["lower"] <= row["real"] <= row["upper"])
    assert intervals["held"] == sum(bool(row["holds"]) for row in intervals["statistics"])
    page = tmp_path / "page.html"
    assert main(["evaluate", "--real", str(real), "--synth", str(out), "--bounds", str(bounds), "--copies", "--html",
                 str(page), "--no-sdmetrics", "--queries", "50"]) == 0
    text = capsys.readouterr().out
    assert "intervals from 4 copies" in text
    assert '<section id="intervals">' in page.read_text(encoding="utf-8")
    # the text report says, as the page does, which statistic reads a pair the release did not measure
    header = next(line for line in text.splitlines() if "holds" in line and "statistic" in line)
    assert header.rstrip().endswith("pair measured")
    lines = [line.strip() for line in text.splitlines()]
    for row in intervals["statistics"]:
        line = next(line for line in lines if line.startswith(row["statistic"] + " "))
        assert line.split()[-1] == ("yes" if row["measured"] else "no"), row["statistic"]
    # no copies beside the table: one line, nothing written; the page never overwrites a copy
    assert main(["evaluate", "--real", str(real), "--synth", str(real), "--bounds", str(bounds), "--copies"]) == 2
    assert main(["evaluate", "--real", str(real), "--synth", str(out), "--bounds", str(bounds), "--copies", "--html",
                 str(tmp_path / "out.2.csv")]) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert "no copies of" in error[0] and "the copy 'out.2.csv'" in error[1] and len(error) == 2


def test_infer_warns_where_the_release_measured_no_dependence():
    """A release that measured no dependence between columns (pure epsilon on a few hundred rows:
    no pairs release, moments of one column each) has copies whose columns are independent too:
    infer says so (InferenceWarning) rather than hand out intervals of a correlation centred on 0;
    a release that measured its pairs does not warn."""
    from synthdp import InferenceWarning
    from synthdp.pipeline.copies import measures_dependence

    rng = np.random.default_rng(3)
    x = rng.normal(size=400)
    frame = pd.DataFrame({"a": x, "b": x + 0.3 * rng.normal(size=400), "c": rng.normal(size=400)})
    bounds = {"a": [-4, 4], "b": [-5, 5], "c": [-4, 4]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pure = SmoothSynthesizer(epsilon=1.0, delta=0.0, seed=1).fit(frame, bounds=bounds)
        kept = pure.sample_copies(2, 50, seed=2)
    assert not measures_dependence(pure.release_) and not kept.dependence
    with pytest.warns(InferenceWarning, match="no dependence between columns"):
        infer(kept, lambda table: table["a"].corr(table["b"]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rich = SmoothSynthesizer(epsilon=8.0, delta=1e-6, seed=1).fit(frame, bounds=bounds)
        kept = rich.sample_copies(2, 50, seed=2)
    assert kept.dependence
    with warnings.catch_warnings():
        warnings.simplefilter("error", InferenceWarning)
        infer(kept, lambda table: table["a"].mean())


def test_the_infer_command_warns_where_the_release_measured_no_dependence(tmp_path, capsys):
    """``synthdp infer`` reads whether the release measured any dependence from OUTPUT.copies.json
    (generate --copies writes it): at pure epsilon on a few hundred rows it warns, as synthdp.infer
    does, once, in synthdp's one-line form; without the file (copies written before it existed) it
    takes them as measuring dependence; a damaged file is a one-line error naming it."""
    import json

    from synthdp.cli import main

    rng = np.random.default_rng(3)
    x = rng.normal(size=400)
    pd.DataFrame({"a": x, "b": x + 0.3 * rng.normal(size=400), "c": rng.normal(size=400)}).to_csv(
        tmp_path / "data.csv", index=False)
    (tmp_path / "bounds.json").write_text(json.dumps({"a": [-4, 4], "b": [-5, 5], "c": [-4, 4]}))
    out, info = tmp_path / "out.csv", tmp_path / "out.copies.json"
    assert main(["generate", str(tmp_path / "data.csv"), "-o", str(out), "--epsilon", "1", "--delta", "0",
                 "--bounds", str(tmp_path / "bounds.json"), "--copies", "2", "--rows", "50", "--seed", "1",
                 "--quiet"]) == 0
    assert json.loads(info.read_text())["measures_dependence"] is False
    assert json.loads(info.read_text())["measured_pairs"] == []
    capsys.readouterr()
    assert main(["infer", str(out), "--corr", "a", "b"]) == 0
    warned = [line for line in capsys.readouterr().err.splitlines() if "no dependence between columns" in line]
    assert len(warned) == 1 and warned[0].startswith("synthdp: warning: the release measured no dependence")
    # means and shares are one column's statistics, valid without dependence: no warning for them;
    # a share of a value no row takes says so
    assert main(["infer", str(out), "--mean", "a", "--share", "c=oops"]) == 0
    err = capsys.readouterr().err
    assert "no dependence" not in err and "--share c=oops: no row of the copies' reference sample" in err
    info.unlink()
    assert main(["infer", str(out), "--corr", "a", "b"]) == 0
    err = capsys.readouterr().err
    assert "no dependence" not in err
    # but it says the record is missing, whose absence marks every statistic measured (a user who lost it saw
    # 'measured True' for a correlation the release never measured, and no warning)
    assert "synthdp: warning: out.copies.json, the record of the copies of 'out.csv', is missing" in err
    info.write_text("{not json")
    assert main(["infer", str(out), "--corr", "a", "b"]) == 2
    assert capsys.readouterr().err.strip() == (f"synthdp: error: '{info}' is not what synthdp generate --copies "
                                               "writes: write the copies again")


def test_the_copies_keep_every_measured_pair_at_its_noisy_reading():
    """A pair the release's threshold sets to independence (here a and c, generated independent, and
    the weak pair a ~ b) enters the copies' fitted distribution at its noisy reading (INFERENCE: no
    threshold, no false-discovery control), so its noise is in the copies; the strong pair is the
    same either way up to the completion. The synthetic table's own model is the product's."""
    from synthdp.pipeline.copies import INFERENCE, inference_fit
    from synthdp.pipeline.run import PRODUCT
    from synthdp.study import copula_marginals, pair_correlation

    rng = np.random.default_rng(5)
    x = rng.normal(size=3000)
    frame = pd.DataFrame({"a": x, "b": 0.05 * x + rng.normal(size=3000), "c": rng.normal(size=3000),
                          "d": x + 0.3 * rng.normal(size=3000)})
    bounds = {"a": [-4, 4], "b": [-5, 5], "c": [-4, 4], "d": [-5, 5]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth = SmoothSynthesizer(epsilon=1.0, delta=1e-10, seed=1).fit(frame, bounds=bounds)
    release = synth.release_
    assert release.noisy_scores is not None  # the pairs are released, one by one
    marginals = copula_marginals(release)
    product = pair_correlation(release, marginals, np.random.default_rng(0), PRODUCT.candidate_options())
    inference = pair_correlation(release, marginals, np.random.default_rng(0), INFERENCE.candidate_options())
    dropped = np.abs(product[np.triu_indices(4, 1)]) < 1e-9
    assert dropped.sum() >= 2  # the threshold dropped the independent pairs
    assert np.all(np.abs(inference[np.triu_indices(4, 1)][dropped]) > 1e-6)  # kept at their noisy reading
    assert abs(product[0, 3]) > 0.8 and abs(inference[0, 3] - product[0, 3]) < 0.05
    refit = inference_fit(synth._model(), np.random.default_rng(1))
    assert refit.release is release and refit.support_points is not synth._model().support_points


def test_the_copies_fit_a_mixed_table_without_its_thresholds():
    """Iris at (1, 1e-10): the release's tilt holds its noisy moments within the noise box (the
    LP's status says so), which keeps a fit near its candidates' independence; the copies' fitted
    distribution is post-processed again without it and without the trees' edge threshold
    (INFERENCE), as each copy's refit is."""
    from synthdp.pipeline.copies import INFERENCE, inference_fit
    from synthdp.pipeline.run import fit

    root = Path(__file__).resolve().parents[1]
    frame = pd.read_csv(root / "data" / "iris.csv")
    schema = json.loads((root / "configs" / "iris_schema.json").read_text())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = fit(SmoothSynthesizer(epsilon=1.0, delta=1e-10, seed=4).config, frame, schema=schema)
    assert INFERENCE.noise_box is False and INFERENCE.tree_edges is False
    assert "held within sqrt(2 ln" in model.lp.status
    refit = inference_fit(model, np.random.default_rng(1))
    assert refit.release is model.release and "held within" not in refit.lp.status


def test_the_reference_holds_twenty_blocks_of_a_copy_s_rows_whatever_their_number():
    rng = np.random.default_rng(5)
    frame = pd.DataFrame({"x": rng.uniform(0, 1, 200), "y": rng.uniform(0, 1, 200)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth = SmoothSynthesizer(epsilon=1.0, seed=1).fit(frame, bounds={"x": [0, 1], "y": [0, 1]})
        copies = synth.sample_copies(2, n_rows=5000, seed=2)
        total = infer(copies, lambda table: table["x"].sum()).iloc[0]  # (no dependence measured: it warns)
    assert len(copies.reference) == REFERENCE_FACTOR * 5000
    # a sum over a copy's 5 000 rows, not over 4 000: the mean of the reference's 20 blocks' sums, exactly
    assert total["naive"] == pytest.approx(copies.reference["x"].sum() / REFERENCE_FACTOR, rel=1e-12)


def _copies_evaluated(tmp_path, capsys, real: str, copies: int, seed: int, queries: int) -> dict:
    """``generate --copies`` of tmp_path/real with the bounds tmp_path/b.json, then ``evaluate --copies
    --json`` of them against it: the report."""
    from synthdp.cli import main

    out = tmp_path / "out.csv"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["generate", str(tmp_path / real), "-o", str(out), "--bounds", str(tmp_path / "b.json"),
                     "--copies", str(copies), "--seed", str(seed), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["evaluate", "--real", str(tmp_path / real), "--synth", str(out), "--bounds", str(tmp_path / "b.json"),
                 "--copies", "--json", "--no-sdmetrics", "--queries", str(queries)]) == 0
    return json.loads(capsys.readouterr().out)


def test_evaluate_reads_the_copies_as_it_reads_the_synthetic_table(tmp_path, capsys):
    """A date column: the copies' ISO dates are read as days, as the synthetic table's are (they
    were read as text, and every interval check stopped at 'not numeric')."""
    rng = np.random.default_rng(11)
    frame = pd.DataFrame({"x": rng.uniform(0, 1, 600), "visit": (pd.Timestamp("2020-01-01") + pd.to_timedelta(
        rng.integers(0, 300, 600), unit="D")).strftime("%Y-%m-%d")})
    frame.to_csv(tmp_path / "t.csv", index=False)
    (tmp_path / "b.json").write_text(json.dumps({"x": [0, 1], "visit": {"type": "date",
                                                                        "bounds": ["2020-01-01", "2020-12-31"]}}))
    report = _copies_evaluated(tmp_path, capsys, "t.csv", copies=3, seed=3, queries=20)
    statistics = {row["statistic"] for row in report["intervals"]["statistics"]}
    assert "mean visit" in statistics


def test_read_pairs_finds_the_columns_each_element_reads_together():
    """Shuffling one column keeps a statistic of that column alone (mean, share, quantile) and moves
    any that pairs its rows with another's (correlation, group mean, regression coefficient); a
    statistic with its own randomness reads every column tried."""
    from synthdp.evaluation.inference import read_pairs

    rng = np.random.default_rng(5)
    a = rng.normal(size=200)
    table = pd.DataFrame({"a": a, "b": a + rng.normal(size=200), "y": rng.normal(size=200),
                          "g": rng.integers(0, 2, 200)})

    def statistic(frame: pd.DataFrame) -> pd.Series:
        coefficients = np.linalg.lstsq(np.column_stack([frame["a"], frame["b"], np.ones(len(frame))]),
                                       frame["y"].to_numpy(), rcond=None)[0]
        return pd.Series({"mean a": frame["a"].mean(), "share g": (frame["g"] == 1).mean(),
                          "median b": frame["b"].median(), "corr a b": frame["a"].corr(frame["b"]),
                          "y | g=1": frame.loc[frame["g"] == 1, "y"].mean(), "ols y~a": coefficients[0]})

    index = statistic(table).index
    pair = lambda x, y: frozenset((x, y))  # noqa: E731
    found = dict(zip(index, read_pairs(statistic, table, index, ["a", "b", "y", "g"])))
    assert found["mean a"] == found["share g"] == found["median b"] == set()
    assert found["corr a b"] == {pair("a", "b")} and found["y | g=1"] == {pair("y", "g")}
    assert found["ols y~a"] == {pair("a", "b"), pair("a", "y"), pair("b", "y")}
    assert read_pairs(statistic, table, index, ["a", "y"])[5] == {pair("a", "y")}  # only the columns tried
    everything = {pair("a", "b"), pair("a", "y"), pair("b", "y")}
    # the statistic's own noise, seeded so that the outcome is fixed (it was unseeded: a column is missed
    # only where every evaluation lands within 1e-9 of the first, about 1e-9 per evaluation)
    draws = np.random.default_rng(6)
    noisy = read_pairs(lambda frame: frame["a"].mean() + draws.normal(), table, pd.Index(["value"]), ["a", "b", "y"])
    assert noisy == [everything]
    # a median of whole numbers per group, which one permutation can leave as it was; a group the table
    # lacks (no value: unknown, so every column); two elements of one label, told apart by position
    counts = table.assign(v=np.arange(200) % 5)
    medians = lambda frame: frame.groupby("g")["v"].median().reindex([0, 1, 2])  # noqa: E731
    assert read_pairs(medians, counts, pd.Index([0, 1, 2]), ["g", "v"]) == [{pair("g", "v")}] * 3
    twice = lambda frame: pd.Series([frame["a"].mean(), frame["a"].corr(frame["b"])], index=["s", "s"])  # noqa: E731
    assert read_pairs(twice, table, pd.Index(["s", "s"]), ["a", "b"]) == [set(), {pair("a", "b")}]


def test_infer_marks_the_statistics_that_read_a_pair_the_release_did_not_measure():
    """``measured`` is False, and infer warns once naming the element and the pair, exactly where an
    element reads two columns whose dependence the release did not measure; copies that do not
    record their pairs are taken to measure every pair, or none where they measured no dependence."""
    from synthdp import InferenceWarning

    rng = np.random.default_rng(6)
    tables = [pd.DataFrame(rng.normal(size=(60, 3)), columns=["a", "b", "c"]) for _ in range(4)]
    reference = pd.DataFrame(rng.normal(size=(1200, 3)), columns=["a", "b", "c"])
    statistic = lambda frame: pd.Series({"mean a": frame["a"].mean(), "corr a b": frame["a"].corr(frame["b"]),  # noqa: E731
                                         "corr a c": frame["a"].corr(frame["c"])})
    measured = frozenset({frozenset(("a", "b"))})
    with pytest.warns(InferenceWarning) as caught:
        result = infer(Copies(tables, reference, 0.0, True, measured), statistic)
    assert result["measured"].tolist() == [True, True, False] and len(caught) == 1
    message = str(caught[0].message)
    assert "between a and c above its noise" in message and "'corr a c'" in message and "'corr a b'" not in message
    everything = frozenset(frozenset(pair) for pair in [("a", "b"), ("a", "c"), ("b", "c")])
    for copies in (Copies(tables, reference, 0.0, True, everything), Copies(tables, reference, 0.0, True)):
        with warnings.catch_warnings():
            warnings.simplefilter("error", InferenceWarning)
            assert infer(copies, statistic)["measured"].all()
    with pytest.warns(InferenceWarning, match="no dependence between columns"):
        none = infer(Copies(tables, reference, 0.0, False), statistic)
    assert none["measured"].tolist() == [True, False, False]
    with warnings.catch_warnings():  # one column's statistics read no pair: no warning
        warnings.simplefilter("error", InferenceWarning)
        assert infer(Copies(tables, reference, 0.0, False), lambda frame: frame.mean())["measured"].all()


def test_an_element_that_reads_an_unmeasured_pair_has_no_interval():
    """The release measured a with b and b with c, nothing of d: an element of a and c (unmeasured, though
    a chain of measured pairs joins them) or of a and d, or a regression that reads d, has no standard
    error or interval (NaN) and measured False, its estimate still given (the model's value), and one
    warning names them; one column's mean keeps its interval. Where the release measured no dependence
    at all, every statistic of two columns has none."""
    rng = np.random.default_rng(7)
    columns = ["a", "b", "c", "d"]
    tables = [pd.DataFrame(rng.normal(size=(60, 4)), columns=columns) for _ in range(4)]
    reference = pd.DataFrame(rng.normal(size=(1200, 4)), columns=columns)

    def statistic(frame):
        slope = np.polyfit(frame["d"], frame["a"], 1)[0]
        return pd.Series({"mean a": frame["a"].mean(), "corr a b": frame["a"].corr(frame["b"]),
                          "corr a c": frame["a"].corr(frame["c"]), "corr a d": frame["a"].corr(frame["d"]),
                          "slope a on d": slope})

    measured = frozenset({frozenset(("a", "b")), frozenset(("b", "c"))})
    with pytest.warns(InferenceWarning) as caught:
        result = infer(Copies(tables, reference, 0.0, True, measured), statistic)
    assert result["measured"].tolist() == [True, True, False, False, False] and len(caught) == 1
    with_interval = result["std_error"].notna() & result["lower"].notna() & result["upper"].notna()
    assert with_interval.tolist() == [True, True, False, False, False]
    assert result["estimate"].notna().all()  # the model's value is still given
    message = str(caught[0].message)
    assert "'corr a c', 'corr a d', 'slope a on d' read such a pair and have no interval (NaN" in message
    assert "a and c, a and d" in message
    with pytest.warns(InferenceWarning, match="no dependence between columns"):
        none = infer(Copies(tables, reference, 0.0, False), statistic)
    assert none["std_error"].notna().tolist() == [True, False, False, False, False]


def test_two_column_moments_drowned_in_noise_measure_no_dependence():
    """A small mixed table whose moments keep a tenth of the budget (noise sd far above
    MOMENT_NOISE_LIMIT on every product): its two-column moments relate columns by noise alone,
    so the release counts as measuring no dependence (infer warns); a large one does not."""
    from synthdp.pipeline.copies import measured_pairs, measures_dependence
    from synthdp.pipeline.plan import MOMENT_NOISE_LIMIT

    rng = np.random.default_rng(4)
    n = 300
    x = rng.normal(0, 1, n)
    schema = {"columns": {"x": {"bounds": [-4, 4]}, "y": {"bounds": [-6, 6]},
                          **{f"c{k}": {"type": "categorical", "levels": ["a", "b", "c", "d"]} for k in range(6)}}}
    frame = pd.DataFrame({"x": x, "y": x + rng.normal(0, 0.5, n),
                          **{f"c{k}": rng.choice(["a", "b", "c", "d"], n) for k in range(6)}})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        small = SmoothSynthesizer(epsilon=1.0, delta=1e-10, seed=1).fit(frame, schema=schema)
        large = SmoothSynthesizer(epsilon=1.0, delta=1e-10, seed=1).fit(
            pd.concat([frame] * 100, ignore_index=True), schema=schema)
    assert np.max(small.release_.moment_noise_sd) > MOMENT_NOISE_LIMIT and not measures_dependence(small.release_)
    assert measures_dependence(large.release_) and not measured_pairs(small.release_)
    # the large release's pairs are named by the table's columns, the numeric and the categorical alike
    pairs = measured_pairs(large.release_)
    assert frozenset(("x", "y")) in pairs and frozenset(("x", "c0")) in pairs and frozenset(("c0", "c5")) in pairs
    assert all(len(pair) == 2 and pair <= set(frame.columns) for pair in pairs)


def test_copies_of_one_nullable_column_and_of_too_few_rows(tmp_path):
    """A one-column table writes a row whose only cell is missing as a blank line: the copies are read
    with those rows (pandas would skip them, and the count check refused the copies); copies of fewer
    than two rows are refused before the fit."""
    from synthdp.cli import main
    from synthdp.evaluation.inference import load_copies

    rng = np.random.default_rng(8)
    values = rng.uniform(0, 1, 400)
    values[rng.random(400) < 0.3] = np.nan
    pd.DataFrame({"v": values}).to_csv(tmp_path / "one.csv", index=False)
    (tmp_path / "b.json").write_text('{"v": {"bounds": [0, 1], "nullable": true}}')
    out = tmp_path / "o.csv"
    assert main(["generate", str(tmp_path / "one.csv"), "-o", str(out), "--bounds", str(tmp_path / "b.json"),
                 "--copies", "2", "--seed", "4", "--quiet"]) == 0  # seeded: whether a copy has a missing cell is fixed
    copies = load_copies(out)
    assert all(len(table) == 400 for table in copies.tables) and copies.tables[0]["v"].isna().any()
    assert len(pd.read_csv(out)) == 400  # the synthetic table too: its missing cells written "", not blank lines
    assert main(["evaluate", "--real", str(tmp_path / "one.csv"), "--synth", str(out), "--copies", "--json",
                 "--bounds", str(tmp_path / "b.json")]) == 0  # evaluate reads the copies as it reads the table
    assert main(["generate", str(tmp_path / "one.csv"), "-o", str(tmp_path / "p.csv"), "--bounds",
                 str(tmp_path / "b.json"), "--copies", "2", "--rows", "1", "--quiet"]) == 2
    assert not (tmp_path / "p.csv").exists()


def test_evaluate_checks_the_copies_against_every_present_cell_of_the_real_table(tmp_path, capsys):
    """The copies' intervals estimate each column's statistic over its present cells; evaluate's other
    metrics compare the rows whose nullable cells are all present, but the real value an interval is
    checked against is the whole table's (a mean of a column read on the rows where another is present
    was a value the intervals did not estimate)."""

    frame = _population(400, 6)
    frame.loc[frame["a"] > 6, "b"] = np.nan  # b missing where a is large: a's mean over the rows with b is lower
    frame.to_csv(tmp_path / "real.csv", index=False)
    (tmp_path / "b.json").write_text(json.dumps({**BOUNDS, "b": {"bounds": BOUNDS["b"], "nullable": True}}))
    report = _copies_evaluated(tmp_path, capsys, "real.csv", copies=2, seed=4, queries=10)
    rows = {row["statistic"]: row for row in report["intervals"]["statistics"]}
    assert rows["mean a"]["real"] == pytest.approx(frame["a"].mean())
    assert rows["mean b"]["real"] == pytest.approx(frame["b"].mean())
    assert rows["corr a ~ c"]["real"] == pytest.approx(frame["a"].corr(frame["c"]))


def test_a_release_that_selects_its_pairs_measures_the_selected_ones_only():
    """A release that chooses the pairs worth measuring (Plan.selects_pairs: pima at (1, 1e-10)) measured
    the chosen pairs and the pairs of its two-column moments, not every pair: the others take the
    max-entropy completion of the chosen ones in the fitted distribution and in every copy, and infer
    marks a statistic that reads one."""
    from pathlib import Path

    from synthdp.pipeline.copies import measured_pairs
    from synthdp.pipeline.plan import MOMENT_NOISE_LIMIT

    pima = pd.read_csv(Path(__file__).resolve().parent.parent / "data" / "pima.csv")
    bounds = {column: [float(pima[column].min()), float(pima[column].max())] for column in pima}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        release = SmoothSynthesizer(epsilon=1.0, delta=1e-10, seed=2).fit(pima, bounds=bounds).release_
    assert release.plan.selects_pairs
    names = list(pima.columns)
    chosen = {frozenset((names[i], names[j])) for i, j in release.selected_pairs.pairs}
    indices, noise = release.basis_indices, np.broadcast_to(release.moment_noise_sd, (len(release.basis_indices),))
    moments = {frozenset(names[j] for j in np.flatnonzero(row)) for row, sd in zip(indices, noise)
               if np.count_nonzero(row) == 2 and sd <= MOMENT_NOISE_LIMIT}
    assert measured_pairs(release) == chosen | moments
    assert len(chosen | moments) < len(names) * (len(names) - 1) // 2  # not every pair


def test_the_copies_of_a_release_that_selects_its_pairs_measure_the_pairs_it_chose(monkeypatch):
    """Each copy measures the pairs the release chose (public once released: StudyOptions.chosen_pairs),
    with fresh noise, rather than choosing again from its population: the spread of a measured pair's
    statistic over the copies is then its measurement's, not that of a choice that mostly leaves it out
    (pima at (1, 1e-10), 30 releases on its own values, 2026-12-02: the correlations of measured pairs
    covered .72 with the choice redrawn, .86 with it kept; docs/inference-coverage.md). A fit given
    chosen pairs spends nothing on a choice."""
    from pathlib import Path

    from synthdp.pipeline import copies as copies_module
    from synthdp.pipeline import run
    from synthdp.pipeline.plan import SELECTION

    pima = pd.read_csv(Path(__file__).resolve().parent.parent / "data" / "pima.csv")
    bounds = {column: [float(pima[column].min()), float(pima[column].max())] for column in pima}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth = SmoothSynthesizer(epsilon=1.0, delta=1e-10, seed=2).fit(pima, bounds=bounds)
    chosen = np.asarray(synth.release_.selected_pairs.pairs)
    refits = []
    fit = run.fit

    def recording_fit(*args, **kwargs):
        refit = fit(*args, **kwargs)
        refits.append(refit)
        return refit

    monkeypatch.setattr(copies_module.run, "fit", recording_fit)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth.sample_copies(3, seed=4)
    assert len(refits) == 3
    for refit in refits:
        assert np.array_equal(refit.release.selected_pairs.pairs, chosen)
        assert not np.allclose(refit.release.selected_pairs.noisy_means, synth.release_.selected_pairs.noisy_means)
        stages = {event.stage for event in refit.ledger.events}  # fresh noise above, and no choice spent on
        assert SELECTION not in stages and "correlation" in stages
    with pytest.raises(SynthDPError, match="chosen_pairs must be"):
        run.StudyOptions(chosen_pairs=((0, 0),))
    with pytest.raises(SynthDPError, match="chosen_pairs must be"):
        run.StudyOptions(chosen_pairs=((0, 1, 2),))


def test_copies_of_a_release_by_unit_rerun_it_by_unit_on_synthetic_units(tmp_path, monkeypatch, capsys):
    """By privacy unit, each copy's population carries synthetic units (identifiers drawn with the
    released numbers of units per contribution size, none over the bound), and its refit bounds and
    noises by unit as the release did: a units stage in every copy's ledger, the same bound. The
    command line writes them too."""
    from synthdp.cli import main
    from synthdp.pipeline import copies as copies_module
    from synthdp.pipeline import run

    rng = np.random.default_rng(3)
    people = np.repeat(np.arange(400), rng.integers(1, 4, 400))
    x = rng.normal(size=len(people))
    frame = pd.DataFrame({"person": people, "x": x, "y": 0.6 * x + rng.normal(size=len(people))})
    bounds = {"x": [-4, 4], "y": [-5, 5]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth = SmoothSynthesizer(epsilon=2.0, delta=1e-8, seed=1, privacy_unit="person",
                                  max_rows_per_unit=3).fit(frame, bounds=bounds)
    refits = []
    fit = run.fit

    def recording_fit(config, population, *args, **kwargs):
        refits.append((population, fit(config, population, *args, **kwargs)))
        return refits[-1][1]

    monkeypatch.setattr(copies_module.run, "fit", recording_fit)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        made = synth.sample_copies(2, seed=4)
    for population, refit in refits:
        sizes = population["person"].value_counts()
        assert sizes.max() <= 3 and (sizes > 1).any() and len(population) == synth.release_.plan.n
        assert refit.release.units is not None and refit.release.units.max_rows == 3
        assert "units" in {event.stage for event in refit.ledger.events}
    for table in made.tables:
        assert list(table.columns) == ["person", "x", "y"] and table["person"].nunique() < len(table)
    result = infer(made, lambda table: table[["x", "y"]].mean())
    assert result["std_error"].gt(0).all() and result["lower"].lt(result["upper"]).all()
    frame.to_csv(tmp_path / "people.csv", index=False)
    (tmp_path / "b.json").write_text(json.dumps(bounds))
    assert main(["generate", str(tmp_path / "people.csv"), "-o", str(tmp_path / "out.csv"), "--bounds",
                 str(tmp_path / "b.json"), "--epsilon", "2", "--delta", "1e-8", "--privacy-unit", "person",
                 "--max-rows-per-unit", "3", "--copies", "2", "--quiet"]) == 0
    assert pd.read_csv(tmp_path / "out.2.csv").columns.tolist() == ["person", "x", "y"]


def test_an_element_some_copies_lack_counts_only_the_copies_that_have_it():
    """A group absent from some copies: its standard error and Student's t count the copies that have
    it, not all m (two of five copies gave t on 4 degrees of freedom, an interval 4.5 times too
    narrow); with fewer than two it has none, and a warning names it rather than a silent NaN."""
    frame = lambda groups, shift: pd.DataFrame({"g": groups, "y": np.arange(4.0) + shift})  # noqa: E731
    both, only_a = ["a", "a", "b", "b"], ["a", "a", "a", "a"]
    reference = pd.concat([frame(both, 0.0)] * 20, ignore_index=True)
    tables = [frame(both, 1.0), frame(both, 3.0), frame(only_a, 0.0), frame(only_a, 2.0), frame(only_a, 4.0)]
    statistic = lambda df: df.groupby("g")["y"].mean()  # noqa: E731
    with pytest.warns(InferenceWarning, match=r"'b' \(2 of the 5 copies\)"):
        result = infer(Copies(tables, reference, 0.0), statistic)
    b = [3.5, 5.5]  # group b's mean in the two copies that have it
    se = np.std(b, ddof=1) * np.sqrt(1 + 1 / 2)
    assert result.loc["b", "std_error"] == pytest.approx(se)
    assert result.loc["b", "upper"] - result.loc["b", "estimate"] == pytest.approx(stats.t.ppf(0.975, df=1) * se)
    assert result.loc["a", "upper"] - result.loc["a", "estimate"] == pytest.approx(
        stats.t.ppf(0.975, df=4) * result.loc["a", "std_error"])
    with pytest.warns(InferenceWarning, match=r"'b' \(1 of the 3 copies\).*none \(NaN\)"):
        result = infer(Copies(tables[1:4], reference, 0.0), statistic)
    assert np.isnan(result.loc["b", "std_error"]) and np.isnan(result.loc["b", "lower"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every copy has every element: no warning
        infer(Copies(tables[:2], reference, 0.0), statistic)


def test_elements_of_one_name_line_up_by_place_or_are_refused():
    """Two elements of one name (pd.concat of two group means) were a pandas traceback where the groups
    differ between tables; where every table has the same names in the same order, they are told
    apart by place, as before."""
    frame = lambda groups: pd.DataFrame({"g": groups, "y": np.arange(4.0), "z": np.arange(4.0) ** 2})  # noqa: E731
    reference = pd.concat([frame(["a", "a", "b", "b"]), frame(["a", "a", "a", "c"])] * 10, ignore_index=True)
    copies = Copies([frame(["a", "a", "b", "b"]), frame(["a", "b", "b", "c"])], reference, 0.0)
    twice = lambda df: pd.concat([df.groupby("g")["y"].mean(), df.groupby("g")["z"].mean()])  # noqa: E731
    with pytest.raises(SynthDPError, match="two or more elements named 'a'.*keys="):
        infer(copies, twice)
    same = Copies([frame(["a", "a", "b", "b"])] * 2, pd.concat([frame(["a", "a", "b", "b"])] * 20), 0.0)
    result = infer(same, twice)
    assert list(result.index) == ["a", "b", "a", "b"] and result["naive"].tolist() == [0.5, 2.5, 0.5, 6.5]
    named = lambda df: pd.concat([df.groupby("g")["y"].mean(), df.groupby("g")["z"].mean()], keys=["y", "z"])  # noqa: E731
    with pytest.warns(InferenceWarning, match="only some copies"):  # group c is in one copy
        assert ("z", "a") in infer(copies, named).index


def test_a_bad_level_or_a_statistic_that_fails_on_a_copy_says_so():
    copies = _copies(1.0, [1.0, 2.0, 3.0])
    with pytest.raises(SynthDPError, match="level must be a number"):
        infer(copies, lambda frame: frame["x"].mean(), level="0.9")

    def fails_on_the_third(frame):
        if frame["x"].iloc[0] == 3.0:
            raise KeyError("b")
        return frame["x"].mean()

    with pytest.raises(KeyError) as raised:
        infer(copies, fails_on_the_third)
    assert any("copy 3 of 3" in note for note in getattr(raised.value, "__notes__", []))


def test_an_element_the_first_block_lacks_is_tried_on_a_block_that_has_it():
    """The share of a rare level of one column, absent from the reference's first block of a copy's
    rows, was marked as reading every pair (measured False, with a warning); the reordering is now
    tried on a block where every element has a value."""
    rng = np.random.default_rng(0)

    def table(rare: bool) -> pd.DataFrame:
        c = rng.choice(["x", "y"], 100)
        if rare:
            c[rng.integers(100)] = "z"
        return pd.DataFrame({"a": rng.normal(size=100), "b": rng.normal(size=100), "c": c})

    reference = pd.concat([table(False)] + [table(True) for _ in range(19)], ignore_index=True)
    copies = Copies([table(True) for _ in range(3)], reference, 0.0, True, frozenset({frozenset({"a", "b"})}))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = infer(copies, lambda frame: frame["c"].value_counts(normalize=True))
    assert result["measured"].all()
    with pytest.warns(InferenceWarning, match="a and c"):
        pair = infer(copies, lambda frame: frame.groupby("c")["a"].mean())
    assert not pair["measured"].any()


def test_an_infinite_value_on_a_copy_counts_as_missing_with_a_warning():
    """A statistic infinite on one copy (a ratio over a zero) made the estimate infinite or NaN without
    a word; it now counts as no value of that copy: the others' known combination, and a warning."""
    copies = _copies(3.5, [1.0, 2.0, 4.0, 5.0, 0.0])
    with pytest.warns(InferenceWarning, match="'value' .4 of the 5 copies.*infinite"):
        row = infer(copies, lambda frame: 1.0 / frame["x"].mean() if frame["x"].mean() else np.inf).iloc[0]
    values = 1.0 / np.array([1.0, 2.0, 4.0, 5.0])
    assert row["estimate"] == pytest.approx(2 / 3.5 - values.mean())
    assert row["std_error"] == pytest.approx(np.std(values, ddof=1) * np.sqrt(1 + 1 / 4))


def test_copies_of_a_single_column_release_do_not_warn_of_pairs_it_cannot_have(tmp_path, capsys):
    """One column has no pair to measure: generate --copies does not warn that the copies' columns are
    independent (nor note it in the report), as generate's own note leaves out a single column."""
    from synthdp.cli import main

    data = tmp_path / "one.csv"
    pd.DataFrame({"x": np.random.default_rng(0).uniform(0, 10, 300)}).to_csv(data, index=False)
    bounds = tmp_path / "bounds.json"
    bounds.write_text(json.dumps({"x": [0, 10]}))
    out = tmp_path / "out.csv"
    assert main(["generate", str(data), "-o", str(out), "--bounds", str(bounds), "--copies", "2", "--quiet"]) == 0
    assert "dependence" not in capsys.readouterr().err
    assert "note" not in json.loads((tmp_path / "out.copies.json").read_text())


def test_an_undefined_interval_or_real_value_neither_holds_nor_misses():
    """check_against_real: a correlation with a column constant in every copy has no interval, and one
    with a column constant in the real table no value; neither counts as held or missed ("n/a"), while
    the defined statistics are checked as before."""
    from synthdp.evaluation.inference import Copies, check_against_real
    from synthdp.evaluation.metrics import interval_row

    rng = np.random.default_rng(0)

    def table(constant_b: bool, rows: int = 200) -> pd.DataFrame:
        a = rng.normal(0, 1, rows)
        return pd.DataFrame({"a": a, "b": np.full(rows, 2.0) if constant_b else a + rng.normal(0, 1, rows),
                             "c": rng.normal(0, 1, rows)})

    copies = Copies([table(True) for _ in range(5)], table(True, 4000), 0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        checked = check_against_real(table(False), copies, ["a", "b", "c"])
    rows = {row["statistic"]: row for row in checked["statistics"]}
    undefined = [name for name, row in rows.items() if "b" in name.split() and "corr" in name]
    assert undefined and all(rows[name]["holds"] is None for name in undefined)
    assert all(interval_row(rows[name])[5] == "n/a" for name in undefined)
    assert checked["checked"] == len(rows) - len(undefined)
    assert all(isinstance(row["holds"], bool) for name, row in rows.items() if name not in undefined)


def test_a_missing_result_of_a_nullable_column_counts_as_missing():
    """A sample's nullable integer column is Int64, whose mean over no cell is pandas' NA, not NaN: such a
    result in one copy was a TypeError from numpy; it is a missing result, as a float column's NaN, taken
    from the copies that have a value (with the warning that names it)."""
    table = lambda values: pd.DataFrame({"k": pd.array(values, dtype="Int64")})  # noqa: E731
    copies = Copies([table([1, 3]), table([None, None]), table([2, 4]), table([3, 5])], table([2, 4] * 40), 0.0)
    with pytest.warns(InferenceWarning, match=r"'value' \(3 of the 4 copies\)"):
        row = infer(copies, lambda frame: frame["k"].mean()).iloc[0]
    se = np.std([2.0, 3.0, 4.0], ddof=1) * np.sqrt(1 + 1 / 3)
    assert row["estimate"] == pytest.approx(2 * 3.0 - 3.0) and row["std_error"] == pytest.approx(se)


@pytest.mark.parametrize("statistic", [lambda frame: frame["day"].mean(),
                                       lambda frame: frame["day"].max() - frame["day"].min(),
                                       lambda frame: frame["day"], lambda frame: frame["kind"].mode().iloc[0]],
                         ids=["timestamp", "timedelta", "dates", "text"])
def test_a_statistic_that_is_no_number_is_a_one_line_error(statistic):
    """A date, a duration or text (a sample's date column is datetime64) was a numpy TypeError or ValueError;
    it is a one-line error naming the result's type and where, never its value."""
    table = pd.DataFrame({"day": pd.to_datetime(["2020-01-01", "2021-06-30"]), "kind": ["secret-level", "b"]})
    with pytest.raises(SynthDPError, match=r"^the statistic returned \S+ on .*, not numbers") as error:
        infer(Copies([table, table], pd.concat([table] * 20, ignore_index=True), 0.0), statistic)
    assert "secret-level" not in str(error.value) and "2020" not in str(error.value) and "\n" not in str(error.value)
