"""The benchmark suite runs against the current API (its timings live in benchmarks/, not here).

One small configuration of ``benchmarks/run.py`` (a second), and the whole ``--quick`` suite (under
a minute) into a temporary folder: a renamed or re-signed pipeline function, or any configuration
or task that fails, breaks these tests instead of the next benchmark run. No timing is asserted.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_one_benchmark_configuration_runs():
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "run.py"), "--one", "1000", "2", "0", "500"],
                            capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    stages = json.loads(result.stdout)
    assert "note" not in stages and stages["n"] == 1000


def test_quick_benchmark_suite_runs_without_a_failed_configuration(tmp_path):
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "run.py"), "--quick", "--out", str(tmp_path)],
                            capture_output=True, encoding="utf-8", cwd=ROOT, timeout=900)
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    summary = json.loads((tmp_path / "summary.json").read_text(encoding="utf-8"))
    assert summary["sweeps"] and all(row for row in summary["sweeps"].values())
    assert "note" not in summary["end_to_end"]
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert summary.startswith("# synthdp benchmark summary") and ", ended 20" in summary and ", commit " in summary


def test_the_big_files_benchmark_takes_the_cost_per_row_from_two_sizes(tmp_path):
    """benchmarks/big_files.py's cost per row: the slopes of the wall time and of the data pass
    (the report's stages that read the rows) between the smallest and largest row counts, per
    10^8 rows, over the floor's; a format measured at one size has none."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import big_files
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    report = tmp_path / "r.json"
    report.write_text(json.dumps({"timings_seconds": {"first pass": 1.0, "moments": 4.0, "correlation": 2.0,
                                                      "LP fit": 9.0}}), encoding="utf-8")
    assert big_files.data_pass_seconds(report) == 7.0
    assert big_files.data_pass_seconds(tmp_path / "missing.json") is None
    seconds = {("csv", "floor"): {10**7: 5.0, 10**8: 50.0}, ("csv", "synthdp"): {10**7: 20.0, 10**8: 110.0},
               ("parquet", "floor"): {10**7: 1.0}, ("parquet", "synthdp"): {10**7: 9.0}}
    lines = big_files.slope_lines(seconds, {("csv", "synthdp"): {10**7: 8.0, 10**8: 98.0}})
    rows = [line for line in lines if line.startswith("| csv")]
    assert rows == ["| csv | synthdp | 10,000,000 → 100,000,000 | 50.0 | 100.0 | 2.0 | 100.0 | 2.0 |"]
    assert not any(line.startswith("| parquet") for line in lines)
    assert big_files.slope_lines({("csv", "floor"): {10**7: 5.0}}) == []


def test_the_lp_benchmark_writes_to_its_out_dir(tmp_path):
    """One small size of benchmarks/bench_lp.py, written to --out-dir (not the committed results)."""
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_lp.py"), "--C", "1000", "--R", "20",
                             "--methods", "highspy-direct", "--skip-eqform", "--out-dir", str(tmp_path)],
                            capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    assert "| 1e3 | 20 | highspy-direct |" in (tmp_path / "bench_lp.md").read_text()
    assert json.loads((tmp_path / "bench_lp.json").read_text())["rows"]


@pytest.mark.skipif(not Path("/usr/bin/time").exists(), reason="benchmarks/many_levels.py measures under /usr/bin/time")
def test_the_many_levels_benchmark_runs(tmp_path):
    out = tmp_path / "many_levels.md"
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "many_levels.py"), "--cases", "1000:200",
                             "--out", str(out)], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    assert "| 1000 | 200 | 10000 |" in out.read_text()
