"""Seeded releases keep their bytes: the CSV or summary, and the report without its timings.

The checksums in ``tests/golden/checksums.json`` were recorded before the package was split into
subpackages (issue 21) and must hold across any change meant to leave behaviour alone. A change
that is meant to alter a release re-records them on purpose (``python tests/golden/record.py``)
and says so in its commit. Cases whose benchmark table is missing from ``data/`` are skipped, and so
is every case where OpenBLAS cannot run the Haswell kernels the checksums were recorded with
(``tests/golden/cases.py``: the AVX-512 kernels round differently in the last bits): on another
architecture; on x86-64, where the pin can always take, a mismatch fails instead.
"""

from __future__ import annotations

import json
import platform
import sys
import warnings
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "golden"))
from cases import CASES, CHECKSUMS, available, blas_mismatch, run_case  # noqa: E402

STORED = json.loads(CHECKSUMS.read_text())


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_seeded_release_keeps_its_bytes(name, tmp_path):
    if not available(name):
        pytest.skip("benchmark table not found in data/")
    mismatch = blas_mismatch()
    if mismatch and platform.machine().lower() in ("x86_64", "amd64"):  # the pin did not take
        pytest.fail(f"{mismatch}: OPENBLAS_CORETYPE must be Haswell when numpy loads "
                    "(tests/conftest.py sets it unless the environment already does)")
    if mismatch:  # another architecture: its kernels cannot reproduce the checksums
        pytest.skip(mismatch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        digests = run_case(name, tmp_path)
    assert digests == STORED[name]
