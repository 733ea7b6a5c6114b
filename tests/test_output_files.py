"""The JSON files the command line writes, as other tools read them.

Every JSON output (the privacy report, the summary, the model file's document, the copies' record,
``budget --json``) is strict JSON (RFC 8259: no NaN or Infinity, which jq and JavaScript refuse), and
every entry of the privacy report the documentation names as "the report's `...`" exists in a real
report.
"""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from synthdp.cli import main

ROOT = Path(__file__).resolve().parents[1]
CLINIC = ROOT / "synthdp" / "datasets" / "clinic.csv"
CLINIC_BOUNDS = ROOT / "synthdp" / "datasets" / "clinic_bounds.json"
# "the report's `lp.rearranged`", "The report's `moments` stage", "the report's `privacy_unit` holds"
NAMED = re.compile(r"[Rr]eport's `([A-Za-z_.]+)`( stage)?")


def strict_json(text: str):
    """``text`` parsed as RFC 8259 JSON, with string keys only: a NaN or an Infinity token raises."""
    def refuse(token):
        raise ValueError(f"not JSON: {token}")
    content = json.loads(text, parse_constant=refuse)

    def keys(value):
        if isinstance(value, dict):
            assert all(isinstance(key, str) for key in value)
            for item in value.values():
                keys(item)
        elif isinstance(value, list):
            for item in value:
                keys(item)
    keys(content)
    return content


def run(args):
    return main([str(arg) for arg in args])


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    """The JSON files of two releases: the bundled table with copies, a summary, a model and a budget
    file; a mixed table with a nullable column by privacy unit."""
    folder = tmp_path_factory.mktemp("outputs")
    budget = folder / "clinic.budget.json"
    assert run(["generate", CLINIC, "-o", folder / "out.csv", "--bounds", CLINIC_BOUNDS, "--copies", 2,
                "--report", folder / "report.json", "--summary-out", folder / "summary.json",
                "--model-out", folder / "model.synthdp", "--budget-file", budget, "--lifetime-epsilon", 5,
                "--seed", 1, "--quiet"]) == 0
    rng = np.random.default_rng(0)
    n = 400
    mixed = pd.DataFrame({"person": np.repeat(np.arange(n // 2), 2), "x": rng.uniform(0, 10, n),
                          "kind": rng.choice(["a", "b"], n), "y": np.where(rng.uniform(size=n) < 0.3, np.nan,
                                                                           rng.uniform(0, 5, n))})
    mixed.to_csv(folder / "mixed.csv", index=False)
    (folder / "schema.json").write_text(json.dumps({"columns": {
        "x": {"type": "continuous", "bounds": [0, 10]}, "kind": {"type": "categorical", "levels": ["a", "b"]},
        "y": {"type": "continuous", "bounds": [0, 5], "nullable": True}}}))
    assert run(["generate", folder / "mixed.csv", "-o", folder / "mixed_out.csv", "--schema", folder / "schema.json",
                "--privacy-unit", "person", "--max-rows-per-unit", 2, "--report", folder / "mixed_report.json",
                "--seed", 1, "--quiet"]) == 0
    return folder


def test_every_json_output_is_strict_json(outputs, capsys):
    capsys.readouterr()
    assert run(["budget", outputs / "clinic.budget.json", "--json"]) == 0
    texts = {"budget --json": capsys.readouterr().out}
    for name in ("report.json", "summary.json", "out.copies.json", "mixed_report.json", "clinic.budget.json"):
        texts[name] = (outputs / name).read_text()
    with zipfile.ZipFile(outputs / "model.synthdp") as archive:
        texts["model.json"] = archive.read("model.json").decode("utf-8")
    for name, text in texts.items():
        assert isinstance(strict_json(text), dict), name


def documented_entries() -> set[tuple[str, bool]]:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    return {(found.group(1), bool(found.group(2))) for page in pages for found in NAMED.finditer(page.read_text())}


def _paths(value, prefix: str = "") -> set[str]:
    found: set[str] = set()
    if isinstance(value, dict):
        for key, item in value.items():
            found |= {prefix + key} | _paths(item, f"{prefix}{key}.")
    return found


def test_every_entry_of_the_report_the_docs_name_exists(outputs):
    """A dotted name is a path from the report's top; a single name, a key at any depth (the docs say
    "the report's `privacy_unit`" of ``privacy.privacy_unit``); "`name` stage" a stage's name."""
    reports = [strict_json((outputs / name).read_text()) for name in ("report.json", "mixed_report.json")]
    paths = set().union(*(_paths(report) for report in reports))
    stages = {stage["stage"] for report in reports for stage in report["privacy"]["stages"]}
    entries = documented_entries()
    assert len(entries) >= 10  # the pattern still finds the docs' names
    missing = [name for name, stage in sorted(entries)
               if not (name in stages if stage else
                       name in paths if "." in name else any(path.split(".")[-1] == name for path in paths))]
    assert not missing, f"the docs name report entries that no report has: {missing}"
