"""The experiment scripts still run against the package's API (a smoke run each, tiny settings).

Scripts that are re-rendered rarely drift from the API they call: candidate_kinds.py,
summary_vs_synthetic.py and defaults_vs_table3.py read the report's ``output`` entry, which
is empty unless the report is given the sample, and all three failed on it before this test.
Each runs here at its smallest setting (one or two seeded rounds, a few queries, WDBC or a small
table), writing to a temporary directory (the run cache of eps_sweep.py and paper_tables.py too),
and must write a results file whose table has the rows of that setting.
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
import eps_sweep  # noqa: E402
import harness  # noqa: E402
import infer_coverage  # noqa: E402
import infer_own_values  # noqa: E402
import infer_units  # noqa: E402
import invented_pairs  # noqa: E402
import laplace_cells  # noqa: E402
import large_n_basis  # noqa: E402
import level_cells_adult  # noqa: E402
import level_cells_classes  # noqa: E402
import pairs_test_power  # noqa: E402
import paper_tables  # noqa: E402
import peers_smoke  # noqa: E402
import quiet_clip  # noqa: E402
import region_state  # noqa: E402
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
    assert "| flagged | no interval | bias / se | sd / se |" in text
    row = next(line for line in text.splitlines() if line.startswith("| mean age |")).split(" | ")
    assert row[-2].startswith(("+", "-")) and float(row[-1].rstrip(" |")) >= 0  # both ratios rendered


def test_infer_own_values_runs(tmp_path):
    """pima, two releases with two copies each: a coverage row for correlations of measured pairs and of the others."""
    out = tmp_path / "own.md"
    infer_own_values.main(["--tables", "pima", "--releases", "2", "--copies", "2", "--out", str(out)])
    text = out.read_text(encoding="utf-8")
    assert "## pima" in text and "| correlation | yes |" in text and "| correlation | no |" in text
    unmeasured = next(line for line in text.splitlines() if line.startswith("| correlation | no |")).split(" | ")
    assert unmeasured[3] == "0.00" and unmeasured[4] == "n/a"  # no interval where the pair was not measured


def test_infer_units_runs(tmp_path):
    """Two releases by unit with two copies each: a row per statistic with its coverage and ratios."""
    out = tmp_path / "units.md"
    infer_units.main(["--releases", "2", "--units", "300", "--copies", "2", "--out", str(out)])
    text = out.read_text(encoding="utf-8")
    assert "| mean x |" in text and "| corr x ~ y |" in text and "| ols y ~ x |" in text


def test_laplace_cells_runs(tmp_path):
    out = tmp_path / "laplace_cells.md"
    laplace_cells.main(["--seeds", "2", "--epsilons", "1", "--tables", "counts", "--out", str(out)])
    text = out.read_text(encoding="utf-8")
    rows = [line for line in text.splitlines() if line.startswith("| counts | 1 |")]
    assert [row.split(" | ")[2] for row in rows] == ["product", "before", "independent"]
    assert "± " in rows[0]  # the paired difference and its standard error


def test_region_state_runs(tmp_path):
    out = tmp_path / "region_state.md"
    region_state.main(["--seeds", "1", "--out", str(out)])
    text = out.read_text()
    assert "| (1, 1e-10) | default (JOIN_RATIO = 0.3) |" in text and "| (1, 1e-10) | JOIN_RATIO = 0 |" in text


def test_level_cells_adult_runs(tmp_path):
    """adult's first 8 000 rows at epsilon 1 (the second clause alone applies: noise sd about 0.045, under
    the limit of 0.1, and 1/42 < 2 sd), 2 seeded releases of each rule: the plan's some columns apart,
    the rule of 2026-11-29 every column's, MOMENT_NOISE_LIMIT alone none."""
    out = tmp_path / "level_cells_adult.md"
    level_cells_adult.main(["--epsilons", "1", "--rounds", "2", "--rows", "8000", "--out", str(out)])
    rows = [line for line in out.read_text().splitlines() if line.startswith("| 1 |")]
    assert len(rows) == 3 and all("nan" not in row for row in rows)
    assert "| columns of " in rows[0] and "| all |" in rows[1] and "| none |" in rows[2]


def test_level_cells_classes_runs(tmp_path):
    pytest.importorskip("sklearn")
    out = tmp_path / "level_cells.md"
    level_cells_classes.main(["--rounds", "2", "--out", str(out)])
    text = out.read_text()
    rows = [line for line in text.splitlines() if line.startswith(("| the plan", "| every column", "| MOMENT_NOISE"))]
    assert len(rows) == 3 and all("± " in row and "nan" not in row for row in rows)
    assert "| columns of 10+ levels |" in rows[0] and "| all |" in rows[1] and "| none |" in rows[2]


def test_large_n_basis_runs(tmp_path):
    """A small generated table, written to --out (not the committed large_n_basis.md)."""
    out = tmp_path / "large_n_basis.md"
    large_n_basis.main(["--rounds", "1", "--queries", "20", "--tables", "generated:2000", "--out", str(out)])
    text = out.read_text()
    assert "## generated (2000 x 10), (ε, δ) = (1, 1e-10)" in text
    assert "| default (R at most" in text and "| paper's R (before the cap) |" in text
    assert out.with_suffix(".json").exists()


def _cache_in(tmp_path):
    """RunOptions with the run cache in a temporary folder, not experiments/results/cache."""
    return lambda **options: harness.RunOptions(**options, cache_dir=tmp_path / "cache")


def test_eps_sweep_runs(tmp_path, monkeypatch):
    monkeypatch.setattr(eps_sweep, "RunOptions", _cache_in(tmp_path))
    assert eps_sweep.main(["--datasets", "wdbc", "--eps", "1", "--delta", "0", "--methods", "synthdp-default",
                           "--rounds", "1", "--queries", "20", "--seed", "0", "--out-dir", str(tmp_path)]) == 0
    text = (tmp_path / "eps_sweep.md").read_text()
    assert "## WDBC (n = 569, d = 30)" in text and "| synthdp default | 2 |" in text


def test_paper_tables_runs(tmp_path, monkeypatch):
    monkeypatch.setattr(paper_tables, "RunOptions", _cache_in(tmp_path))
    assert paper_tables.main(["--table", "3", "--datasets", "wdbc", "--methods", "synthdp-default", "bootstrap",
                              "--rounds", "1", "--queries", "20", "--seed", "0", "--out-dir", str(tmp_path)]) == 0
    text = (tmp_path / "table3.md").read_text()
    assert "## WDBC (n = 569, d = 30)" in text and "| synthdp default | 1 | **rel** |" in text


def test_peers_smoke_runs_its_baselines(tmp_path):
    """The baselines only (no peer): both rows rendered."""
    out = tmp_path / "peers_smoke.md"
    assert peers_smoke.main(["--datasets", "wdbc", "--methods", "bootstrap", "dp-gaussian", "--rounds", "1",
                             "--queries", "20", "--out", str(out)]) == 0
    text = out.read_text()
    assert "## WDBC (n = 569, d = 30)" in text
    assert "| bootstrap" in text and "| DP Gaussian" in text


def test_streaming_memory_runs(tmp_path):
    """Two paths on 20 000 rows, the table under a folder that does not exist yet, nothing saved."""
    import subprocess

    result = subprocess.run([sys.executable, str(EXPERIMENTS / "streaming_memory.py"), "--rows", "20000",
                             "--modes", "memory", "stream", "--no-save", "--folder", str(tmp_path / "tables")],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    assert "| memory | engine numpy" in result.stdout and "| stream | engine numpy" in result.stdout
