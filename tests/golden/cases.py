"""Seeded releases whose results must not change when code moves without changing behaviour.

Each case is a ``synthdp`` command line run in process with ``--seed``. What it records and how a
fresh run is compared with the record is in ``compare.py`` (four tiers: the release's numbers,
the report, the synthetic table's statistics, and the files' bytes where the environment is the
recorded one); why, in ``README.md``. ``record.py`` writes ``records.json``;
``tests/test_golden.py`` runs the cases in a process with ``PINNED_ENV`` and compares. A case whose
input table is not found (no ``data/`` in the checkout) is skipped.

Re-record only on purpose, when a change is meant to change a release, and say so in its
commit: ``python tests/golden/record.py``.
"""

from __future__ import annotations

import hashlib
import json
import platform
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

import pandas as pd

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "data"
RECORDS = Path(__file__).with_name("records.json")

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


# ---------------------------------------------------------------------- the environment
# The byte tier needs the arithmetic of the recording: the library versions tests/constraints.txt
# pins, and these kernels, set before numpy loads in the process that runs the cases
# (record.py's ``--run``): OpenBLAS's Haswell kernels, numpy's dispatch capped at X86_V3 (AVX2 + FMA,
# Haswell's level) so that an AVX-512 machine computes what an AVX2 one does, and one BLAS thread
# so that the core count does not reorder a reduction.
BLAS_CORE = "Haswell"
LIBRARIES = ("numpy", "scipy", "pandas", "highspy", "opendp", "scikit-learn", "pyarrow", "dask", "distributed",
             "cvxpy", "threadpoolctl")


def pinned_env() -> dict[str, str]:
    """Environment variables for the process that runs the cases (computed where numpy is loaded:
    the names of numpy's dispatch targets above X86_V3 depend on its version)."""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return {"OPENBLAS_NUM_THREADS": "1"}  # other kernels than the recording's: the byte tier cannot apply
    try:
        from numpy._core._multiarray_umath import __cpu_dispatch__
    except ImportError:  # numpy 1.x
        from numpy.core._multiarray_umath import __cpu_dispatch__
    above = [f for f in __cpu_dispatch__ if f == "X86_V4" or f.startswith(("AVX512", "AVX10"))]
    return {"OPENBLAS_CORETYPE": BLAS_CORE, "NPY_DISABLE_CPU_FEATURES": " ".join(above), "OPENBLAS_NUM_THREADS": "1"}


def environment() -> dict[str, Any]:
    """What this process computes with: the byte tier applies where it equals the recording's."""
    from threadpoolctl import threadpool_info

    try:
        from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
    except ImportError:  # numpy 1.x
        from numpy.core._multiarray_umath import __cpu_dispatch__, __cpu_features__

    versions = {}
    for library in LIBRARIES:
        try:
            versions[library] = metadata.version(library)
        except metadata.PackageNotFoundError:
            versions[library] = None
    blas = sorted({f"{info.get('internal_api')} {info.get('version')} {info.get('architecture')} "
                   f"threads={info.get('num_threads')}" for info in threadpool_info()
                   if info.get("user_api") == "blas"})
    return {"python": f"{sys.version_info.major}.{sys.version_info.minor}", "machine": platform.machine().lower(),
            "numpy_simd": [f for f in __cpu_dispatch__ if __cpu_features__[f]], "blas": blas,
            "libraries": versions}



def table_path(table: str) -> Path:
    if table == "clinic":
        return REPO / "synthdp" / "datasets" / "clinic.csv"
    return DATA / f"{table}.csv"


def _bounds(frame: pd.DataFrame) -> dict:
    return {str(c): [float(frame[c].min()), float(frame[c].max())] for c in frame.columns}


def strip_timings(value: Any) -> Any:
    """``value`` without any ``timings_seconds`` entry (at any depth): the clock is not the release."""
    if isinstance(value, dict):
        return {key: strip_timings(item) for key, item in value.items() if key != "timings_seconds"}
    if isinstance(value, list):
        return [strip_timings(item) for item in value]
    return value


def _digest(path: Path) -> str:
    """sha256 of a CSV's bytes, or of a report or summary without its timings."""
    if path.suffix == ".json":
        content = json.dumps(strip_timings(json.loads(path.read_text())), sort_keys=False).encode()
    else:
        content = path.read_bytes()
    return hashlib.sha256(content).hexdigest()


def run_case(name: str, workdir: Path) -> dict[str, Any]:
    """Run one case in ``workdir``; return its record (compare.py's four tiers)."""
    from compare import document_view, fingerprint, table_statistics

    from synthdp.cli import main
    from synthdp.pipeline import run
    from synthdp.reader.table import EXACT_FLOATS

    table, extra, command, given = CASES[name]
    source = table_path(table)
    workdir.mkdir(parents=True, exist_ok=True)
    args: list[str] = []
    inp = str(source)
    if table == "clinic":
        args += ["--bounds", str(REPO / "synthdp" / "datasets" / "clinic_bounds.json")]
    elif given in ("csv", "parquet", "half-bounds"):
        frame = pd.read_csv(source, **EXACT_FLOATS)  # the nearest floats, with any pandas
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
    fitted: list[Any] = []
    fit = run.fit

    def recording_fit(*fit_args: Any, **fit_kwargs: Any) -> Any:  # the release, as post-processing receives it
        fitted.append(fit(*fit_args, **fit_kwargs))
        return fitted[-1]

    run.fit = recording_fit
    try:
        code = main(argv)
    finally:
        run.fit = fit
    if code != 0 or len(fitted) != 1:
        raise RuntimeError(f"case {name} exited {code} after {len(fitted)} fits")
    files = [out.name, "report.json"] + (["summary.json"] if command == "generate+summary" else [])
    documents = {file: document_view(strip_timings(json.loads((workdir / file).read_text())))
                 for file in files if file.endswith(".json")}
    tables = {}
    if out.suffix == ".csv":
        tables[out.name] = table_statistics(pd.read_csv(out, keep_default_na=False, na_values=[""]))
    return {"release": fingerprint(fitted[0].release), "documents": documents, "tables": tables,
            "bytes": {file: _digest(workdir / file) for file in files}}


def available(name: str) -> bool:
    return table_path(CASES[name][0]).exists()
