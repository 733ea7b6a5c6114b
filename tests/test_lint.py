"""The linters run with the tests, so the README's one test command checks everything CI checks.

ruff (pyflakes, import order, bugbear, pyupgrade; settings in pyproject.toml), mypy on the
package, and the import contracts (tests/test_boundary.py) are part of ``python -m pytest``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_is_clean():
    if shutil.which("ruff") is None:
        pytest.skip("ruff is in the [test] extra")
    result = subprocess.run(["ruff", "check", "--no-cache", "."], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stdout[-4000:]


def test_mypy_is_clean(tmp_path):
    pytest.importorskip("mypy")  # in the [test] extra
    # its cache in the test's folder: mypy writes one even with --no-incremental, and in a read-only checkout
    # .mypy_cache could not be made (an internal error, status 2)
    result = subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", "--cache-dir", str(tmp_path / "mypy")],
                            capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stdout[-4000:]
