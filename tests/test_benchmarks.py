"""The benchmark suite runs against the current API (its timings live in benchmarks/, not here).

One small configuration of ``benchmarks/run.py`` (a second): a renamed or re-signed pipeline
function breaks this test instead of the next benchmark run. ``--one`` exits 1 when the
configuration failed.
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
