"""Seeded releases whose bytes must not change when code moves without changing behaviour.

Each case is a ``synthdp`` command line run in process with ``--seed``; its outputs (the CSV
or summary, and the privacy report without its timings) are hashed. ``record.py`` writes the
hashes to ``checksums.json``; ``tests/test_golden.py`` compares a fresh run with them. A case
whose input table is not found (no ``data/`` in the checkout) is skipped.

Re-record only on purpose, when a change is meant to change a release, and say so in its
commit: ``python tests/golden/record.py``.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from pathlib import Path

# The checksums were recorded with OpenBLAS's Haswell kernels: its AVX-512 ones (chosen by default
# on such a CPU) round differently in the last bits, which the LP and the tilt carry into other
# rows. Set before numpy is loaded (record.py imports this module first; pytest: tests/conftest.py).
BLAS_CORE = "Haswell"
os.environ.setdefault("OPENBLAS_CORETYPE", BLAS_CORE)

import pandas as pd  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "data"
CHECKSUMS = Path(__file__).with_name("checksums.json")

SEED = ["--seed", "11", "--quiet"]
EPS_DELTA = ["--epsilon", "1", "--delta", "1e-10"]

# name -> (table, extra arguments, command, how the input is given)
CASES: dict[str, tuple[str, list[str], str, str]] = {
    "crm_default": ("crm", EPS_DELTA, "generate", "csv"),
    "ctg_default": ("ctg", EPS_DELTA, "generate", "csv"),
    "pks_default": ("pks", EPS_DELTA, "generate", "csv"),
    "wdbc_default": ("wdbc", EPS_DELTA, "generate", "csv"),
    "ctg_pure": ("ctg", ["--epsilon", "1"], "generate", "csv"),
    "pks_pure": ("pks", ["--epsilon", "1"], "generate", "csv"),
    "pks_pca": ("pks", EPS_DELTA + ["--candidates", "pca"], "generate", "csv"),
    "ctg_hypercube": ("ctg", ["--epsilon", "1", "--candidates", "hypercube"], "generate", "csv"),
    "wdbc_moments": ("wdbc", EPS_DELTA + ["--candidates", "moments"], "generate", "csv"),
    "ctg_spread": ("ctg", EPS_DELTA + ["--spread", "0.5"], "generate", "csv"),
    "ctg_laplace": ("ctg", EPS_DELTA + ["--noise", "laplace"], "generate", "csv"),
    "pks_summary": ("pks", EPS_DELTA, "summarize", "csv"),
    "pks_summary_out": ("pks", EPS_DELTA + ["--rows", "500"], "generate+summary", "csv"),
    "ctg_chunks": ("ctg", EPS_DELTA + ["--chunk-rows", "500"], "generate", "csv"),
    "ctg_parquet": ("ctg", EPS_DELTA, "generate", "parquet"),
    "ctg_dask": ("ctg", EPS_DELTA + ["--engine", "dask", "--chunk-rows", "700"], "generate", "csv"),
    "wdbc_from_data": ("wdbc", EPS_DELTA, "generate", "from-data"),
    "ctg_bounds_share": ("ctg", EPS_DELTA + ["--bounds-share", "0.1"], "generate", "half-bounds"),
    "clinic_exact": ("clinic", ["--epsilon", "2", "--mode", "exact", "--smoothness", "2"], "generate", "csv"),
    "adult_default": ("adult", EPS_DELTA, "generate", "schema"),
    "adult_pure": ("adult", ["--epsilon", "1"], "generate", "schema"),
    "adult_summary": ("adult", EPS_DELTA, "summarize", "schema"),
    "adult_discover": ("adult", EPS_DELTA + ["--levels-share", "0.1"], "generate", "schema-discover"),
    # by person: the bounds file also names the unit column, which is dropped (not synthesized)
    "pks_subjects_unit": ("pks_subjects", ["--epsilon", "4", "--delta", "1e-10", "--privacy-unit", "subject#",
                                           "--max-rows-per-unit", "20"], "generate", "csv"),
    "pks_subjects_unit_chunks": ("pks_subjects", ["--epsilon", "4", "--delta", "1e-10", "--privacy-unit", "subject#",
                                                  "--max-rows-per-unit", "20", "--chunk-rows", "700"],
                                 "generate", "csv"),
}


def blas_mismatch() -> str | None:
    """Why this process cannot reproduce the checksums' BLAS arithmetic, or None when it can."""
    from threadpoolctl import threadpool_info

    cores = {info.get("architecture") for info in threadpool_info() if info.get("internal_api") == "openblas"}
    if cores and cores != {BLAS_CORE}:
        return f"OpenBLAS runs its {', '.join(sorted(map(str, cores)))} kernels, the checksums need {BLAS_CORE}"
    return None


def table_path(table: str) -> Path:
    if table == "clinic":
        return REPO / "synthdp" / "datasets" / "clinic.csv"
    return DATA / f"{table}.csv"


def _bounds(frame: pd.DataFrame) -> dict:
    return {str(c): [float(frame[c].min()), float(frame[c].max())] for c in frame.columns}


def _strip_timings(value):
    """``value`` without any ``timings_seconds`` entry (at any depth): the clock is not the release."""
    if isinstance(value, dict):
        return {key: _strip_timings(item) for key, item in value.items() if key != "timings_seconds"}
    if isinstance(value, list):
        return [_strip_timings(item) for item in value]
    return value


REPORT_DIGITS = 10  # significant digits of the report's numbers in its digest (_rounded)


def _rounded(value):
    """``value`` with every float at REPORT_DIGITS significant digits: the LP's objective, summed by
    the solver and BLAS, differs in its last bits from one machine or library build to another
    (pks_pure's by 53 ulps, 5e-15 relative, with the synthetic table identical), and the report
    states it; the release itself is the CSV's or summary's exact bytes."""
    if isinstance(value, dict):
        return {key: _rounded(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_rounded(item) for item in value]
    if isinstance(value, float) and math.isfinite(value):
        return float(f"{value:.{REPORT_DIGITS}g}")
    return value


def _digest(path: Path) -> str:
    """sha256 of a CSV's bytes, of a summary without its timings, or of a report without its
    timings and with its numbers at REPORT_DIGITS significant digits."""
    if path.suffix == ".json":
        document = _strip_timings(json.loads(path.read_text()))
        if path.name == "report.json":
            document = _rounded(document)
        content = json.dumps(document, sort_keys=False).encode()
    else:
        content = path.read_bytes()
    return hashlib.sha256(content).hexdigest()


def run_case(name: str, workdir: Path) -> dict[str, str]:
    """Run one case in ``workdir``; return {output name: sha256 of its bytes}."""
    from synthdp.cli import main

    table, extra, command, given = CASES[name]
    source = table_path(table)
    workdir.mkdir(parents=True, exist_ok=True)
    args: list[str] = []
    inp = str(source)
    if table == "clinic":
        args += ["--bounds", str(REPO / "synthdp" / "datasets" / "clinic_bounds.json")]
    elif given in ("csv", "parquet", "half-bounds"):
        frame = pd.read_csv(source)
        bounds = _bounds(frame)
        if given == "half-bounds":
            bounds = {key: value for i, (key, value) in enumerate(bounds.items()) if i % 2 == 0}
        (workdir / "bounds.json").write_text(json.dumps(bounds))
        args += ["--bounds", str(workdir / "bounds.json")]
        if given == "parquet":
            inp = str(workdir / "table.parquet")
            frame.to_parquet(inp, index=False)
    elif given == "from-data":
        args += ["--bounds-from-data"]
    elif given.startswith("schema"):
        schema = json.loads((REPO / "configs" / "adult_schema.json").read_text())
        if given == "schema-discover":
            schema["columns"]["native-country"]["levels"] = "discover"
        (workdir / "schema.json").write_text(json.dumps(schema))
        args += ["--schema", str(workdir / "schema.json")]
    out = workdir / ("summary.json" if command == "summarize" else "synthetic.csv")
    argv = [command.split("+")[0], inp, "-o", str(out), "--report", str(workdir / "report.json")] + args + extra + SEED
    if command == "generate+summary":
        argv += ["--summary-out", str(workdir / "summary.json")]
    code = main(argv)
    if code != 0:
        raise RuntimeError(f"case {name} exited {code}")
    names = [out.name, "report.json"] + (["summary.json"] if command == "generate+summary" else [])
    return {file: _digest(workdir / file) for file in names}


def available(name: str) -> bool:
    return table_path(CASES[name][0]).exists()
