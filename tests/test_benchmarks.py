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

ROOT = Path(__file__).resolve().parents[1]


def test_one_benchmark_configuration_runs():
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "run.py"), "--one", "1000", "2", "0", "500"],
                            capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    stages = json.loads(result.stdout)
    assert "note" not in stages and stages["n"] == 1000


def test_quick_benchmark_suite_runs_without_a_failed_configuration(tmp_path):
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "run.py"), "--quick", "--out", str(tmp_path)],
                            capture_output=True, text=True, cwd=ROOT, timeout=900)
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["sweeps"] and all(row for row in summary["sweeps"].values())
    assert "note" not in summary["end_to_end"]
    assert (tmp_path / "summary.md").read_text().startswith("# synthdp benchmark summary")
