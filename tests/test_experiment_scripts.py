"""The experiment scripts still run against the package's API (a smoke run each, tiny settings).

Scripts that are re-rendered rarely drift from the API they call: candidate_kinds.py,
summary_vs_synthetic.py and defaults_vs_table3.py read the report's ``output`` entry, which
is empty unless the report is given the sample, and all three failed on it before this test.
Each runs here on WDBC with one seeded round and a few queries, writing to a temporary
directory, and must write a results file whose table has a row for WDBC.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import pytest

EXPERIMENTS = Path(__file__).resolve().parents[1] / "experiments"
sys.path.insert(0, str(EXPERIMENTS))

import candidate_kinds  # noqa: E402
import defaults_vs_table3  # noqa: E402
import infer_coverage  # noqa: E402
import invented_pairs  # noqa: E402
import laplace_cells  # noqa: E402
import pairs_test_power  # noqa: E402
import quiet_clip  # noqa: E402
import selected_pairs  # noqa: E402
import summary_vs_synthetic  # noqa: E402
from common import DATA_DIR  # noqa: E402

pytestmark = pytest.mark.skipif(not (DATA_DIR / "wdbc.csv").exists(), reason="the benchmark data are not here")


def test_candidate_kinds_runs(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        candidate_kinds.main(["--datasets", "wdbc", "--kinds", "copula", "--rounds", "1", "--queries", "20",
                              "--out-dir", str(tmp_path)])
    text = (tmp_path / "candidate_kinds_eps1_delta1e-10.md").read_text(encoding="utf-8")
    assert "| wdbc | copula | 60 |" in text


def test_summary_vs_synthetic_runs(tmp_path):
    out = tmp_path / "summary.md"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        summary_vs_synthetic.main(["--datasets", "wdbc", "--pks-dims", "--rounds", "1", "--queries", "20",
                                   "--reference-queries", "5", "--timing-queries", "4", "--seed", "0",
                                   "--out", str(out)])
    import json

    assert "### WDBC" in out.read_text(encoding="utf-8")
    result = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))
    assert "distinct_rows" in json.dumps(result)


def test_defaults_vs_table3_runs(tmp_path):
    out = tmp_path / "defaults.md"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        defaults_vs_table3.main(["--datasets", "wdbc", "--rounds", "1", "--queries", "20", "--seed", "0",
                                 "--no-cli", "--n-jobs", "1", "--out", str(out)])
    assert "wdbc" in out.read_text(encoding="utf-8").lower()


def test_pairs_test_power_runs(tmp_path):
    out = tmp_path / "power.md"
    pairs_test_power.main(["--seeds", "1", "--levels", "1,1e-10", "--shapes", "300x10", "--out", str(out)])
    text = out.read_text(encoding="utf-8")
    assert "| 300 × 10 | independent |" in text and "| 300 × 10 | one block |" in text


def test_invented_pairs_runs(tmp_path):
    out = tmp_path / "invented.md"
    invented_pairs.main(["--seeds", "1", "--levels", "1,1e-10", "--shapes", "2000x6", "--out", str(out)])
    text = out.read_text(encoding="utf-8")
    assert "| 2000 × 6 | independent | 1 of 1 |" in text and "default (rate 0.1)" in text


def test_quiet_clip_runs(tmp_path):
    """CTG at (1, 1e-10), where the rule lowers the bound: both variants run, and the table states the two bounds."""
    out = tmp_path / "quiet_clip.md"
    quiet_clip.main(["--rounds", "2", "--tables", "ctg", "--out", str(out)])
    text = out.read_text(encoding="utf-8")
    assert "### ctg at (1, 1e-10): C² 22.21 against 32.65" in text
    strong = next(line for line in text.splitlines() if line.startswith("| strong-pair ratio |"))
    assert "± " in strong and "n/a" not in strong


def test_selected_pairs_runs(tmp_path):
    """iris (numeric columns) at (3.9, 1e-10), inside its band: the product selects pairs, before it none."""
    out = tmp_path / "selected_pairs.md"
    selected_pairs.main(["--rounds", "2", "--tables", "iris", "--out", str(out)])
    text = out.read_text(encoding="utf-8")
    assert "### iris (150 × 4) at (3.9, 1e-10): 4 of 6 pairs selected" in text
    strong = next(line for line in text.splitlines() if line.startswith("| strong-pair ratio |"))
    assert "± " in strong and "n/a" not in strong


def test_coverage_runs(tmp_path):
    """PKS, samples of 500 rows, two releases with two copies each: the table has a row per statistic."""
    out = tmp_path / "coverage.md"
    infer_coverage.main(["--tables", "pks", "--rows", "500", "--releases", "2", "--copies", "2", "--out", str(out),
                         "--cache-dir", str(tmp_path / "cache")])  # not the repository's: each run releases again
    text = out.read_text(encoding="utf-8")
    assert "### pks, samples of 500 rows" in text and "| mean age |" in text and "| ols motor_UPDRS~age |" in text
    assert "| flagged | bias / se | sd / se |" in text
    row = next(line for line in text.splitlines() if line.startswith("| mean age |")).split(" | ")
    assert row[-2].startswith(("+", "-")) and float(row[-1].rstrip(" |")) >= 0  # both ratios rendered


def test_laplace_cells_runs(tmp_path):
    out = tmp_path / "laplace_cells.md"
    laplace_cells.main(["--seeds", "2", "--epsilons", "1", "--tables", "counts", "--out", str(out)])
    text = out.read_text(encoding="utf-8")
    rows = [line for line in text.splitlines() if line.startswith("| counts | 1 |")]
    assert [row.split(" | ")[2] for row in rows] == ["product", "before", "independent"]
    assert "± " in rows[0]  # the paired difference and its standard error
