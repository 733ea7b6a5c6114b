"""``synthdp evaluate`` for every table: total-variation distances of mixed tables, SDMetrics'
scores when installed, and the self-contained ``--html`` page.

Every check here is deterministic (fixed tables and seeds): none has a false-failure rate.
"""

from __future__ import annotations

import base64
import html
import json
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_evaluate_cli import run

from synthdp.domain.schema import Schema
from synthdp.errors import SynthDPError
from synthdp.evaluation.metrics import format_report, model_accuracy, utility_report
from synthdp.evaluation.mixed import (
    SDMETRICS_MISSING,
    cell_labels,
    column_tv,
    distribution,
    numeric_schema,
    pair_scores,
    sdmetrics_quality,
    sdmetrics_shifted_bins,
    tv_distance,
)

ROOT = Path(__file__).resolve().parents[1]

SCHEMA = {"columns": {
    "age": {"type": "integer", "bounds": [17, 90]},
    "workclass": {"type": "categorical", "levels": ["Private", "State-gov", "Self-emp"]},
    "education-num": {"type": "integer", "bounds": [1, 16]},
    "sex": {"type": "binary", "levels": ["Female", "Male"]},
    "hours-per-week": {"type": "integer", "bounds": [1, 99]},
    "income": {"type": "binary", "levels": ["<=50K", ">50K"]},
}}
COLUMNS = list(SCHEMA["columns"])
NUMERIC = ["age", "education-num", "hours-per-week"]


def adult_like(n: int = 300, seed: int = 3) -> pd.DataFrame:
    """A small table shaped like adult: integer columns, a categorical one with a value outside
    its levels ("Never-worked" is "other"), two binary ones, and dependence between them."""
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 80, n)
    education = np.clip(np.round(6 + 0.08 * (age - 18) + rng.normal(0, 2, n)), 1, 16).astype(int)
    hours = np.clip(np.round(40 + 2 * (education - 9) + rng.normal(0, 8, n)), 1, 99).astype(int)
    return pd.DataFrame({
        "age": age,
        "workclass": rng.choice(["Private", "State-gov", "Self-emp", "Never-worked"], n, p=[0.6, 0.2, 0.15, 0.05]),
        "education-num": education,
        "sex": rng.choice(["Female", "Male"], n),
        "hours-per-week": hours,
        "income": np.where(education + rng.normal(0, 2, n) > 11, ">50K", "<=50K"),
    })


def schema_of(content: dict = SCHEMA) -> Schema:
    return Schema.from_dict(content, list(content["columns"]), "schema")


# ------------------------------------------------------------------ the distances, by hand
SMALL = Schema.from_dict({"columns": {"x": {"type": "continuous", "bounds": [0, 16]},
                                      "c": {"type": "categorical", "levels": ["a", "b"]}}}, ["x", "c"])


def test_identical_tables_are_at_distance_zero():
    real = adult_like()
    shuffled = real.sample(frac=1, random_state=1).reset_index(drop=True)
    tv = column_tv(real, shuffled, schema_of())
    assert set(tv["per_column"]) == set(COLUMNS)
    assert tv["max"] == 0 and tv["mean"] == 0
    pairs = pair_scores(real, shuffled, schema_of())
    assert pairs["tv"]["pairs"] == 15 and pairs["tv"]["worst"] == 0
    assert pairs["contingency"]["pairs"] == 12 and pairs["contingency"]["worst"] == 1
    assert pairs["correlation"]["pairs"] == 3 and pairs["correlation"]["worst"] == pytest.approx(1, abs=1e-12)


def test_disjoint_tables_are_at_distance_one():
    real = pd.DataFrame({"x": [0.1, 0.5, 0.9, 0.2], "c": ["a", "a", "a", "a"]})
    synth = pd.DataFrame({"x": [15.5, 15.9, 20.0, 16.0], "c": ["b", "b", "b", "b"]})  # 20 is clipped into the top bin
    tv = column_tv(real, synth, SMALL)
    assert tv["per_column"] == {"x": 1.0, "c": 1.0}
    pairs = pair_scores(real, synth, SMALL)
    assert pairs["per_pair"] == [{"columns": ["x", "c"], "tv": 1.0, "metric": "contingency", "similarity": 0.0}]


def test_a_small_example_computed_by_hand():
    # 16 bins of [0, 16]: bin k is [k, k + 1). "z" is outside the levels: "other".
    real = pd.DataFrame({"x": [0.5, 1.5, 2.5, 3.5], "c": ["a", "a", "b", "b"]})
    synth = pd.DataFrame({"x": [0.5, 0.6, 2.5, 20.0], "c": ["a", "b", "b", "z"]})
    # x: real 1/4 in bins 0, 1, 2, 3; synthetic 1/2 in bin 0, 1/4 in bin 2, 1/4 in bin 15:
    #    TV = (|1/4 - 1/2| + 1/4 + 0 + 1/4 + 1/4) / 2 = 1/2
    # c: real (a, b, other) = (1/2, 1/2, 0), synthetic (1/4, 1/2, 1/4): TV = (1/4 + 0 + 1/4) / 2 = 1/4
    assert column_tv(real, synth, SMALL)["per_column"] == {"x": 0.5, "c": 0.25}
    # pair: real cells (0,a) (1,a) (2,b) (3,b); synthetic (0,a) (0,b) (2,b) (15,other), 1/4 each:
    #    two cells shared, four cells with 1/4 on one side only: TV = 4/4 / 2 = 1/2
    pair = pair_scores(real, synth, SMALL)["per_pair"][0]
    assert pair["tv"] == 0.5 and pair["similarity"] == 0.5 and pair["metric"] == "contingency"
    np.testing.assert_allclose(distribution(synth, SMALL, "c"), [0.25, 0.5, 0.25])
    assert cell_labels(SMALL, "c") == ["a", "b", "other"]
    assert cell_labels(SMALL, "x")[:2] == ["[0, 1)", "[1, 2)"] and cell_labels(SMALL, "x")[-1] == "[15, 16]"
    assert tv_distance([0.5, 0.5], [0.25, 0.75]) == 0.25


def test_correlation_similarity_by_hand():
    schema = numeric_schema({"u": [0, 4], "v": [0, 4]})
    real = pd.DataFrame({"u": [0.0, 1, 2, 3], "v": [0.0, 1, 2, 3]})  # r = 1
    synth = pd.DataFrame({"u": [0.0, 1, 2, 3], "v": [3.0, 2, 1, 0]})  # r = -1
    pair = pair_scores(real, synth, schema)["per_pair"][0]
    assert pair["metric"] == "correlation" and pair["similarity"] == pytest.approx(0.0)  # 1 - |1 - (-1)| / 2
    # the 2-way TV: real on the diagonal cells (0,0) (4,4) (8,8) (12,12) of 16 x 16 bins, synthetic on
    # the anti-diagonal (0,12) (4,8) (8,4) (12,0): no cell shared
    assert pair["tv"] == 1.0


def test_a_binary_value_outside_its_levels_is_other():
    """As in a categorical column (another tool's table): a cell of its own, not an error."""
    real = adult_like(20)
    synth = real.assign(sex=["Female"] * 19 + ["unknown"])
    female = float((real["sex"] == "Female").mean())
    # (Female, Male, other): real (f, 1 - f, 0), synthetic (19/20, 0, 1/20)
    expected = (abs(female - 0.95) + (1 - female) + 0.05) / 2
    assert column_tv(real, synth, schema_of())["per_column"]["sex"] == pytest.approx(expected)
    assert cell_labels(schema_of(), "sex") == ["Female", "Male", "other"]


# ------------------------------------------------------------------ the report
def test_report_of_a_mixed_table():
    real = adult_like(300, seed=3)
    synth = adult_like(250, seed=4)
    report = utility_report(real, synth, schema=SCHEMA, target="income", n_queries=20, sdmetrics=False)
    assert report["columns"] == {"numeric": NUMERIC, "categorical": ["workclass", "sex", "income"]}
    assert list(report["ks"]["per_column"]) == NUMERIC and report["correlation"]["pairs"] == 3
    assert {c["source"] for c in report["smooth_queries"]["normalisation"].values()} == {"schema bounds"}
    assert report["smooth_queries"]["normalisation"]["age"]["bounds"] == [17.0, 90.0]
    assert list(report["tv"]["per_column"]) == COLUMNS and report["pairs"]["tv"]["pairs"] == 15
    assert report["model"]["task"] == "classification" and report["sdmetrics"] is None
    expected_shapes = np.mean([1 - report["ks"]["per_column"].get(name, value)
                               for name, value in report["tv"]["per_column"].items()])
    assert report["similarity"]["column_shapes"] == pytest.approx(expected_shapes)
    json.dumps(report)
    text = format_report(report)
    assert "total-variation distance per column" in text and "contingency similarity" in text
    for name in COLUMNS:
        assert any(line.split()[:1] == [name] for line in text.splitlines()), name


def test_a_table_without_numeric_columns_has_no_numeric_metrics():
    content = {"columns": {"workclass": SCHEMA["columns"]["workclass"], "sex": SCHEMA["columns"]["sex"]}}
    real = adult_like()[["workclass", "sex"]]
    report = utility_report(real, real.copy(), schema=content, n_queries=5, sdmetrics=False)
    assert report["ks"] is None and report["correlation"] is None and report["smooth_queries"] is None
    assert report["tv"]["max"] == 0 and report["pairs"]["contingency"]["worst"] == 1
    assert "smooth queries" not in format_report(report)


def test_bounds_and_schema_together_are_refused():
    real = adult_like(20)
    with pytest.raises(SynthDPError, match="bounds or a schema"):
        utility_report(real, real, {"age": [0, 100]}, schema=SCHEMA, n_queries=5)


def test_a_categorical_target_is_a_class_label():
    real = adult_like(400)
    real["income"] = np.where(real["workclass"] == "State-gov", ">50K", "<=50K")  # a rule on a categorical feature
    result = model_accuracy(real, real.copy(), "income", schema=SCHEMA, seed=0)
    assert result["task"] == "classification" and result["metric"] == "accuracy"
    assert result["train_synth_test_real"] == 1.0 and result["baseline"] < 0.9
    with pytest.raises(SynthDPError, match="task 'regression' needs a numeric target"):
        model_accuracy(real, real.copy(), "income", schema=SCHEMA, task="regression")
    # and the mirror case: a column of fractional numbers is no class label (one line, not sklearn's traceback)
    real["age"] = real["age"] + 0.5
    with pytest.raises(SynthDPError, match="task 'classification' needs class labels; column 'age' has fractional"):
        model_accuracy(real, real.copy(), "age", schema=SCHEMA, task="classification")


def test_without_sdmetrics_the_report_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "sdmetrics", None)  # import sdmetrics now raises ImportError
    real = adult_like(50)
    assert sdmetrics_quality(real, real, schema_of()) == SDMETRICS_MISSING == 'not installed (pip install "synthdp[quality]")'
    report = utility_report(real, real.copy(), schema=SCHEMA, n_queries=5)
    assert report["sdmetrics"] == SDMETRICS_MISSING and SDMETRICS_MISSING in format_report(report)


def test_sdmetrics_scores_on_a_sample():
    pytest.importorskip("sdmetrics")  # optional: pip install "synthdp[quality]"
    real, synth = adult_like(2100, seed=1), adult_like(300, seed=2)
    scores = sdmetrics_quality(real, synth, schema_of(), seed=0)
    assert isinstance(scores, dict), scores
    assert scores["rows"] == {"real": 2000, "synthetic": 300} and scores["sampled"] is True
    assert 0 <= scores["column_shapes"] <= 1 and 0 <= scores["overall"] <= 1
    same = sdmetrics_quality(synth, synth.copy(), schema_of(), seed=0)  # 300 rows: every row, no sample
    assert same["sampled"] is False and same["column_shapes"] == pytest.approx(1.0)
    assert "SDMetrics QualityReport (sdmetrics" in format_report(
        utility_report(real, synth, schema=SCHEMA, n_queries=5))


# ------------------------------------------------------------------ the command
@pytest.fixture
def mixed_files(tmp_path, capsys):
    """The adult-like table, a release of it by ``synthdp generate`` and its privacy report."""
    real, schema, synth, report = (tmp_path / name for name in ("real.csv", "schema.json", "synth.csv", "report.json"))
    adult_like().to_csv(real, index=False)
    schema.write_text(json.dumps(SCHEMA))
    code, _, err = run(["generate", real, "-o", synth, "--schema", schema, "--epsilon", 1, "--delta", 1e-6,
                        "--seed", 1, "--n-candidates", 200, "--quiet", "--report", report], capsys)
    assert code == 0, err
    return real, synth, schema, report


def test_evaluate_a_mixed_table_with_its_schema(mixed_files, capsys):
    real, synth, schema, _ = mixed_files
    code, out, err = run(["evaluate", "--real", real, "--synth", synth, "--schema", schema, "--target", "income",
                          "--queries", 20, "--json", "--no-sdmetrics"], capsys)
    assert code == 0, err
    report = json.loads(out)
    assert list(report["tv"]["per_column"]) == COLUMNS
    assert all(0 <= value <= 1 for value in report["tv"]["per_column"].values())
    assert report["pairs"]["tv"]["pairs"] == 15 and len(report["pairs"]["per_pair"]) == 15
    assert report["pairs"]["contingency"]["pairs"] == 12 and report["pairs"]["correlation"]["pairs"] == 3
    assert report["model"]["target"] == "income" and report["model"]["task"] == "classification"
    assert report["sdmetrics"] is None
    code, text, err = run(["evaluate", "--real", real, "--synth", synth, "--schema", schema, "--queries", 20], capsys)
    assert code == 0 and err == ""
    assert "total-variation distance per column" in text and "column pairs: 2-way total-variation distance" in text
    assert "SDMetrics QualityReport" in text and "by the schema's bounds" in text


@pytest.mark.parametrize("extra, expected", [
    (["--bounds", "SCHEMA"], "not allowed with argument"),
    (["--privacy-report", "REPORT"], "--privacy-report goes with --html"),
    (["--html", "REAL"], "--html '"),
    (["--html", "SCHEMA"], "is the schema file"),
])
def test_bad_options_are_one_line_errors(mixed_files, tmp_path, capsys, extra, expected):
    real, synth, schema, report = mixed_files
    before = {path: path.read_bytes() for path in (real, synth, schema, report)}
    named = {"SCHEMA": schema, "REPORT": report, "REAL": real}
    code, out, err = run(["evaluate", "--real", real, "--synth", synth, "--schema", schema, "--queries", 5,
                          *[named.get(a, a) for a in extra]], capsys)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and expected in err, err
    assert {path: path.read_bytes() for path in before} == before  # nothing overwritten


def test_a_privacy_report_without_its_section_is_refused(mixed_files, tmp_path, capsys):
    real, synth, schema, _ = mixed_files
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps({"columns": {}}))
    code, _, err = run(["evaluate", "--real", real, "--synth", synth, "--schema", schema, "--queries", 5,
                        "--html", tmp_path / "page.html", "--privacy-report", wrong], capsys)
    assert code == 2 and "has no \"privacy\" section" in err and not (tmp_path / "page.html").exists()


def test_the_privacy_report_of_another_release_is_refused(mixed_files, tmp_path, capsys):
    """A report whose release has other columns than the synthetic table belongs to another release: its
    budget is not this one's, so no page shows it as this release's."""
    real, synth, schema, report = mixed_files
    other = json.loads(report.read_text())
    other["schema"]["columns"]["weight"] = other["schema"]["columns"].pop("hours-per-week")
    other_path = tmp_path / "other.json"
    other_path.write_text(json.dumps(other))
    page = tmp_path / "page.html"
    code, out, err = run(["evaluate", "--real", real, "--synth", synth, "--schema", schema, "--queries", 5,
                          "--no-sdmetrics", "--html", page, "--privacy-report", other_path], capsys)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert (f"privacy report '{other_path}' is of a release of other columns (the synthetic table's hours-per-week "
            "not in its release; its weight not in the synthetic table)") in err
    assert not page.exists()


def test_html_without_matplotlib_is_a_one_line_error(mixed_files, tmp_path, capsys, monkeypatch):
    real, synth, schema, _ = mixed_files
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    code, out, err = run(["evaluate", "--real", real, "--synth", synth, "--schema", schema,
                          "--html", tmp_path / "page.html"], capsys)
    assert code == 2 and out == ""
    assert err.strip() == "synthdp: error: --html needs matplotlib (pip install matplotlib)"
    assert not (tmp_path / "page.html").exists()


# ------------------------------------------------------------------ the page
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class Page(HTMLParser):
    """Parses a page and checks that every element is closed in order."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.images: list[dict] = []
        self.sections: list[str] = []
        self.tags: list[str] = []
        self.text: list[str] = []
        self.doctype = False
        self.feed(text)
        self.close()

    def handle_decl(self, decl: str) -> None:
        self.doctype = decl.lower() == "doctype html"

    def handle_starttag(self, tag: str, attrs) -> None:
        attributes = dict(attrs)
        self.tags.append(tag)
        if tag == "img":
            self.images.append(attributes)
        if tag == "section":
            self.sections.append(attributes.get("id", ""))
        if tag not in VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes <{self.stack[-1] if self.stack else None}>")
        else:
            self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def check_page(path, columns, numeric_columns):
    """The checks every page passes; returns the parsed page."""
    text = path.read_text(encoding="utf-8")
    assert len(text.encode()) < 3_000_000
    page = Page(text)
    assert page.doctype and not page.errors and not page.stack, (page.errors, page.stack)
    assert page.tags[:1] == ["html"] and {"head", "title", "style", "body"} <= set(page.tags)
    assert "script" not in page.tags and "link" not in page.tags and "iframe" not in page.tags
    charted = {}
    for image in page.images:
        assert image["src"].startswith("data:image/png;base64,")
        assert base64.b64decode(image["src"].split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"
        if "data-column" in image:
            charted[image["data-column"]] = image
    assert sorted(charted) == sorted(columns)
    words = " ".join(page.text)
    for name in columns:
        assert name in words
    assert "NOT differentially private" in words
    assert ("correlations" in page.sections) == (len(numeric_columns) >= 2)
    without_images = re.sub(r"data:image/png;base64,[A-Za-z0-9+/=]+", "", text)
    assert not re.search(r"https?:", without_images, re.IGNORECASE)  # no network resource, no link out
    assert "url(" not in without_images and "@import" not in without_images
    return page


def test_html_page_of_a_mixed_table(mixed_files, tmp_path, capsys):
    real, synth, schema, report = mixed_files
    page_path = tmp_path / "report.html"
    code, out, err = run(["evaluate", "--real", real, "--synth", synth, "--schema", schema, "--target", "income",
                          "--queries", 20, "--html", page_path, "--privacy-report", report], capsys)
    assert code == 0, err
    assert "total-variation distance" in out and err.strip() == f"synthdp: wrote the report page to {page_path}"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []  # no temporary file left
    page = check_page(page_path, COLUMNS, NUMERIC)
    assert {"summary", "columns", "pairs", "correlations", "smooth-queries", "model", "privacy"} <= set(page.sections)
    words = " ".join(page.text)
    release = json.loads(report.read_text())["privacy"]
    assert "Privacy report of the release" in words and "Caveats" in words
    for stage in release["stages"]:
        assert stage["stage"] in words and stage["mechanism"] in words
    for caveat in release["caveats"]:
        assert caveat in words
    # categorical charts show the schema's levels and "other" (the test table's "Never-worked")
    assert "workclass" in words and "income" in words


def test_the_page_shows_each_stage_mu_and_the_budget_file_totals(tmp_path, capsys):
    """The privacy section shows what the JSON report holds: each Gaussian stage's mu, which the total composes
    (its epsilon is what it would cost alone, so the stages' epsilons add up to more than the epsilon spent),
    and a budget file's lifetime totals; neither was on the page."""
    real, synth, schema, report = (tmp_path / name for name in ("real.csv", "synth.csv", "schema.json", "r.json"))
    adult_like().to_csv(real, index=False)
    schema.write_text(json.dumps(SCHEMA))
    budget = tmp_path / "table.budget.json"
    code, _, err = run(["generate", real, "-o", synth, "--schema", schema, "--epsilon", 1, "--delta", 1e-6,
                        "--n-candidates", 200, "--quiet", "--report", report, "--budget-file", budget,
                        "--lifetime-epsilon", 3, "--lifetime-delta", 1e-5], capsys)
    assert code == 0, err
    release = json.loads(report.read_text())["privacy"]
    mus = [stage["mu"] for stage in release["stages"] if stage.get("mu") is not None]
    assert mus and sum(stage["epsilon"] for stage in release["stages"]) > release["epsilon_spent"] + 0.1
    page_path = tmp_path / "page.html"
    code, _, err = run(["evaluate", "--real", real, "--synth", synth, "--schema", schema, "--queries", 5,
                        "--no-sdmetrics", "--html", page_path, "--privacy-report", report], capsys)
    assert code == 0, err
    page = page_path.read_text(encoding="utf-8")
    section = page[page.index('<section id="privacy">'):]
    assert "<th>mu</th>" in section and "do not add up to the epsilon spent" in section
    for mu in mus:
        assert f"<td>{mu:.4g}</td>" in section
    totals = release["budget_file"]
    assert totals["lifetime"]["epsilon"] == 3
    assert (f"<th>lifetime epsilon (budget file)</th><td>{totals['spent_after']['epsilon']:.4g} spent of 3 "
            f"({totals['spent_before']['epsilon']:.4g} before this release, "
            f"{totals['this_release']['epsilon']:.4g} by it)</td>") in section
    assert "<th>lifetime delta (budget file)</th><td>1e-06 spent of 1e-05" in section
    assert "table.budget.json" in section


def test_html_page_of_a_numeric_table(tmp_path, capsys):
    rng = np.random.default_rng(0)
    odd = 'b <&> "$x$"'  # a name that HTML must escape and matplotlib must not read as mathtext
    real = pd.DataFrame({"a": rng.normal(0, 1, 150), odd: rng.uniform(0, 5, 150), "c": rng.integers(0, 9, 150)})
    synth = pd.DataFrame({"a": rng.normal(0.2, 1, 120), odd: rng.uniform(0, 5, 120), "c": rng.integers(0, 9, 120)})
    real_path, synth_path, page_path = tmp_path / "real.csv", tmp_path / "synth.csv", tmp_path / "page.html"
    real.to_csv(real_path, index=False)
    synth.to_csv(synth_path, index=False)
    code, _, err = run(["evaluate", "--real", real_path, "--synth", synth_path, "--queries", 10, "--html", page_path],
                       capsys)
    assert code == 0, err
    page = check_page(page_path, ["a", odd, "c"], ["a", odd, "c"])
    assert odd not in page_path.read_text(encoding="utf-8")  # only escaped
    assert "privacy" not in page.sections and "smooth-queries" in page.sections
    assert sum(1 for image in page.images if "data-column" not in image) == 2  # the heatmaps and the sigma chart


def test_html_page_with_one_numeric_column_has_no_heatmap(tmp_path):
    pytest.importorskip("matplotlib")
    from synthdp.evaluation.html import render_html

    content = {"columns": {name: SCHEMA["columns"][name] for name in ("age", "workclass", "sex")}}
    real = adult_like(80)[["age", "workclass", "sex"]]
    report = utility_report(real, real.copy(), schema=content, n_queries=5, sdmetrics=False)
    path = tmp_path / "page.html"
    path.write_text(render_html(report, real, real.copy(), schema=content), encoding="utf-8")
    page = check_page(path, ["age", "workclass", "sex"], ["age"])
    assert "correlations" not in page.sections and "pairs" in page.sections


def test_the_numeric_columns_whose_sample_ranges_differ_are_named_for_sdmetrics_bins():
    """SDMetrics bins each table's numeric columns on its own range: a synthetic sample without the real
    minimum of education-num shifts its bins, and the report says so by name, never by value."""
    real = adult_like(300, seed=3)
    synth = real.copy()
    assert sdmetrics_shifted_bins(real, synth, schema_of()) == []
    synth.loc[synth["education-num"] == real["education-num"].min(), "education-num"] += 1
    assert sdmetrics_shifted_bins(real, synth, schema_of()) == ["education-num"]
    numeric_only = Schema.from_dict({"columns": {name: SCHEMA["columns"][name] for name in NUMERIC}}, NUMERIC)
    assert sdmetrics_shifted_bins(real[NUMERIC], synth[NUMERIC], numeric_only) == []  # pairs by correlation
    report = utility_report(real, synth, schema=SCHEMA, n_queries=5, sdmetrics=False)
    report["sdmetrics"] = {"version": "0", "overall": 0.9, "column_shapes": 0.9, "column_pair_trends": 0.8,
                           "rows": {"real": 300, "synthetic": 300}, "sampled": False, "seed": 0,
                           "shifted_bins": ["education-num"]}
    note = [line for line in format_report(report).splitlines() if "own range" in line]
    assert len(note) == 1 and "education-num" in note[0]
    assert not any(character.isdigit() for character in note[0])  # no value of the real table


def test_the_page_shows_strong_pairs_and_missing_cells_as_the_text_does(tmp_path, capsys):
    """The strong and invented pairs, and each nullable column's missing cells: on the page as in the text."""
    rng = np.random.default_rng(1)
    x = rng.normal(0, 1, 200)
    real = pd.DataFrame({"x": x, "y": x + rng.normal(0, 0.3, 200), "z": rng.normal(0, 1, 200)})
    real.loc[:19, "z"] = np.nan  # a tenth of z missing
    synth = real.sample(frac=1, random_state=2).reset_index(drop=True)
    synth.loc[:, "z"] = synth["z"].fillna(0.0)
    paths = {name: tmp_path / f"{name}.csv" for name in ("real", "synth")}
    real.to_csv(paths["real"], index=False)
    synth.to_csv(paths["synth"], index=False)
    bounds = tmp_path / "b.json"
    bounds.write_text(json.dumps({"x": [-5, 5], "y": [-6, 6], "z": {"bounds": [-5, 5], "nullable": True}}))
    page_path = tmp_path / "page.html"
    code, out, err = run(["evaluate", "--real", paths["real"], "--synth", paths["synth"], "--bounds", bounds,
                          "--queries", 10, "--no-sdmetrics", "--html", page_path], capsys)
    assert code == 0, err
    text = page_path.read_text(encoding="utf-8")
    assert "strong pairs (real |r| &gt; 0.5)" in text and "Missing cells, share of rows" in text
    assert "missing cells (share of rows): z real 0.100 synthetic 0.000" in out


def test_chart_labels_keep_long_names_apart():
    """The --html charts cut long names to fit: in the middle, keeping the start and the end (where
    names of one family differ), and two that still read the same are numbered; they were cut at the
    end, so a correlation matrix's "systolic_blood_pressure_visit_1" and "_2" looked identical."""
    from synthdp.evaluation.html import _short, _shorts

    names = ["systolic_blood_pressure_visit_1", "systolic_blood_pressure_visit_2", "a" * 40, "a" * 41, "bmi"]
    shown = _shorts(names, 16)
    assert len(set(shown)) == len(names) and shown[-1] == "bmi"
    assert all(len(label) == 16 for label in shown[:3]) and shown[0].startswith("systolic") and shown[1].endswith("_2")
    assert _short("cost in $", 24) == r"cost in \$"  # literal, not matplotlib's mathtext


def test_a_chart_legend_stands_beside_its_bars_inside_the_figure():
    """A column chart's legend was placed by matplotlib's "best" inside the axes, where it could cover the
    bars (a level of share 1 left it no free corner): it stands to the right of the axes, within the figure."""
    pytest.importorskip("matplotlib")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from synthdp.evaluation.html import _column_figure

    mpl = (Figure, FigureCanvasAgg)
    full = np.array([1.0, 0.0, 1.0])  # bars the whole width of the axes, at its top and its bottom
    flat = np.full(16, 1 / 16)
    figures = [_column_figure(mpl, ["a", "b", "other"], full, full, False, None, "c: TV 0.000"),
               _column_figure(mpl, [str(k) for k in range(16)], flat, flat, True, (0.0, 16.0), "x: TV 0.000")]
    for figure in figures:
        canvas = FigureCanvasAgg(figure)
        canvas.draw()
        renderer = canvas.get_renderer()
        axes = figure.axes[0]
        box = axes.get_legend().get_window_extent(renderer)
        assert not box.overlaps(axes.get_window_extent(renderer))
        assert figure.bbox.x0 <= box.x0 and box.x1 <= figure.bbox.x1  # not clipped by the figure's edge
        assert figure.bbox.y0 <= box.y0 and box.y1 <= figure.bbox.y1


def test_names_with_bidi_controls_or_right_to_left_letters_cannot_reorder_the_page(tmp_path, capsys):
    """A column name holding a right-to-left override (U+202E), an isolate (U+2066-2069) or a mark (U+200F)
    turned the page's text after it around; the page shows each such character as its escape, and isolates
    every name in <bdi> (right-to-left letters without controls stay as they are), still HTML-escaped."""
    controls = set("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
    rng = np.random.default_rng(0)
    names = {"cost\u202etxt.exe": r"cost\u202etxt.exe",  # each name, and what the page's source holds
             "a\u2066b\u2069c\u2067d\u2068e": r"a\u2066b\u2069c\u2067d\u2068e",
             "\u200f<i>&": r"\u200f&lt;i&gt;&amp;",
             "\u05e9\u05dc\u05d5\u05dd": "\u05e9\u05dc\u05d5\u05dd"}  # Hebrew letters, no control: as they are
    real = pd.DataFrame({name: rng.normal(k, 1, 120) for k, name in enumerate(names)})
    synth = pd.DataFrame({name: rng.normal(k, 1.2, 100) for k, name in enumerate(names)})
    paths = {name: tmp_path / f"{name}.csv" for name in ("real", "synth")}
    real.to_csv(paths["real"], index=False)
    synth.to_csv(paths["synth"], index=False)
    page_path = tmp_path / "page.html"
    code, _, err = run(["evaluate", "--real", paths["real"], "--synth", paths["synth"], "--queries", 5,
                        "--no-sdmetrics", "--html", page_path], capsys)
    assert code == 0, err
    text = page_path.read_text(encoding="utf-8")
    assert not controls & set(text) and "<i>" not in text
    shown = [html.unescape(escaped) for escaped in names.values()]
    check_page(page_path, shown, shown)
    for escaped in names.values():
        assert f"<td><bdi>{escaped}</bdi></td>" in text and f"<figcaption><bdi>{escaped}</bdi></figcaption>" in text


def test_right_to_left_names_in_the_reports_sentences_are_isolated(tmp_path, capsys):
    """A column's name of right-to-left letters in a sentence of the privacy report (the neighbouring tables of a
    privacy unit, a caveat, a stage) was escaped but not isolated: two such names in a list showed in reverse
    order ("b ,a"). Each is now in <bdi> where it stands as a word; a name of left-to-right letters, and a
    right-to-left name inside a longer word, are left as they are; the text stays HTML-escaped."""
    rng = np.random.default_rng(0)
    age, weight = "\u05d2\u05d9\u05dc", "\u05de\u05e9\u05e7\u05dc"  # Hebrew names, no bidi control
    columns = [age, weight, "x"]
    paths = {name: tmp_path / f"{name}.csv" for name in ("real", "synth")}
    for name, rows in (("real", 120), ("synth", 100)):
        pd.DataFrame({column: rng.normal(k, 1, rows) for k, column in enumerate(columns)}).to_csv(paths[name],
                                                                                                   index=False)
    release = tmp_path / "release.json"
    release.write_text(json.dumps({"privacy": {
        "differentially_private": True, "neighbouring": f"add or remove the rows of one unit (column '{age}'), 3 rows",
        "stages": [{"stage": "moments", "mechanism": "Laplace", "released": f"moments of {weight} & x"}],
        "caveats": [f"{age}, {weight}: <read> as x", f"{age}{weight} is one word"]}}, ensure_ascii=False),
        encoding="utf-8")
    page_path = tmp_path / "page.html"
    code, _, err = run(["evaluate", "--real", paths["real"], "--synth", paths["synth"], "--queries", 5,
                        "--no-sdmetrics", "--html", page_path, "--privacy-report", release], capsys)
    assert code == 0, err
    check_page(page_path, columns, columns)
    section = page_path.read_text(encoding="utf-8").split('<section id="privacy">')[1]
    assert f"(column &#x27;<bdi>{age}</bdi>&#x27;), 3 rows</td>" in section
    assert f"<td>moments of <bdi>{weight}</bdi> &amp; x</td>" in section
    assert f"<li><bdi>{age}</bdi>, <bdi>{weight}</bdi>: &lt;read&gt; as x</li>" in section
    assert f"<li>{age}{weight} is one word</li>" in section


def test_an_unwritable_home_leaves_stderr_to_synthdp(tmp_path):
    """With HOME unwritable (here a file, which no user can make a folder in) and MPLCONFIGDIR unset,
    importing matplotlib printed its own warning ("Matplotlib created a temporary cache directory ...");
    synthdp gives it a private temporary folder instead, removed at exit: stderr holds synthdp's line only."""
    pytest.importorskip("matplotlib")
    rng = np.random.default_rng(0)
    for name in ("real", "synth"):
        pd.DataFrame({"x": rng.normal(0, 1, 60), "y": rng.normal(0, 1, 60)}).to_csv(tmp_path / f"{name}.csv",
                                                                                   index=False)
    home, temporary, page_path = tmp_path / "home", tmp_path / "tmp", tmp_path / "page.html"
    home.write_text("")
    temporary.mkdir()
    environment = {key: value for key, value in os.environ.items()
                   if key not in ("MPLCONFIGDIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME")}
    environment.update(HOME=str(home), TMPDIR=str(temporary),
                       PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    result = subprocess.run([sys.executable, "-m", "synthdp.cli", "evaluate", "--real", str(tmp_path / "real.csv"),
                             "--synth", str(tmp_path / "synth.csv"), "--queries", "5", "--no-sdmetrics",
                             "--html", str(page_path)], capture_output=True, text=True, env=environment)
    assert result.returncode == 0 and result.stderr == f"synthdp: wrote the report page to {page_path}\n", result.stderr
    assert page_path.exists() and list(temporary.iterdir()) == []  # the private folder is gone
