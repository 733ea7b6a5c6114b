"""The privacy boundary is visible in the imports: only the release reads raw rows."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "synthdp"
RAW = {"private_table", "release", "row_sums"}
READERS = {"pandas", "pyarrow", "dask", "distributed"}  # libraries that can read a table's rows
POST_RELEASE = ["candidates", "copula", "lp", "sampling", "decode", "grid", "basis", "domain", "evaluation", "summary",
                "metrics", "schema", "marginals"]


def imported_modules(name: str) -> set[str]:
    tree = ast.parse((PACKAGE / f"{name}.py").read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level >= 1:
            found.add((node.module or "").split(".")[0])
            found.update(alias.name for alias in node.names if node.module is None)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("synthdp"):
            found.add(node.module.split(".")[1] if "." in node.module else "")
    return found


@pytest.mark.parametrize("name", [n for n in POST_RELEASE if (PACKAGE / f"{n}.py").exists()])
def test_post_release_stages_never_import_the_raw_data_modules(name):
    assert not imported_modules(name) & RAW


@pytest.mark.parametrize("name", sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem != "cli"))
def test_no_stage_imports_the_cli(name):
    assert "cli" not in imported_modules(name)


def test_only_the_release_uses_the_private_table():
    users = {p.stem for p in PACKAGE.glob("*.py") if "private_table" in imported_modules(p.stem)}
    assert users <= {"release", "synthesizer", "cli"}


def test_only_the_private_table_and_the_release_compute_row_sums():
    users = {p.stem for p in PACKAGE.glob("*.py") if "row_sums" in imported_modules(p.stem)}
    assert users <= {"private_table", "release", "synthesizer"}


def test_the_row_sums_and_the_release_read_no_files():
    """They get validated chunks from private_table, the only module that reads raw rows."""
    for name in ("row_sums", "release", "bounds", "pca"):
        tree = ast.parse((PACKAGE / f"{name}.py").read_text())
        libraries = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                     for alias in node.names}
        libraries |= {(node.module or "").split(".")[0] for node in ast.walk(tree)
                      if isinstance(node, ast.ImportFrom) and node.level == 0}
        assert not libraries & READERS, name
