"""The experiment cache (experiments/harness.py) after the split of synthdp into subpackages.

The key of a cached synthdp run holds a hash of synthdp's code (``harness._source_hash``): it
must see the modules of every subpackage, keep the key across docstring and comment edits
there, and change when a module's code changes or a module moves. The cache folder is local
(git ignores it) and made on demand; a fresh one can be seeded with the peer rows of a
committed table (``harness.import_committed_results``).
"""

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

EXPERIMENTS = Path(__file__).resolve().parents[1] / "experiments"
sys.path.insert(0, str(EXPERIMENTS))

import harness  # noqa: E402
from common import Dataset, query_set  # noqa: E402

from synthdp.evaluation.queries import SIGMAS, answer_queries  # noqa: E402

TOP = '"""The package."""\n\nVERSION = 1\n'
STAGE = '"""A stage."""\n\n\ndef scale(x):\n    """Twice x."""\n    return 2 * x\n'


@pytest.fixture
def package(tmp_path):
    """A package with a top-level module and a module two subpackages down; returns its hash function."""
    root = tmp_path / "pkg"
    (root / "privacy" / "inner").mkdir(parents=True)
    (root / "__init__.py").write_text(TOP)
    (root / "privacy" / "__init__.py").write_text('"""Subpackage."""\n')
    (root / "privacy" / "inner" / "__init__.py").write_text("")
    (root / "privacy" / "inner" / "stage.py").write_text(STAGE)

    def source_hash() -> str:
        harness._source_hash.cache_clear()
        try:
            return harness._source_hash(root)
        finally:
            harness._source_hash.cache_clear()

    source_hash.root = root
    return source_hash


def test_a_code_change_inside_a_subpackage_changes_the_hash(package):
    stage = package.root / "privacy" / "inner" / "stage.py"
    original = package()
    stage.write_text(STAGE.replace("2 * x", "3 * x"))
    assert package() != original
    stage.write_text(STAGE)
    assert package() == original


def test_a_docstring_or_comment_edit_inside_a_subpackage_keeps_the_hash(package):
    stage = package.root / "privacy" / "inner" / "stage.py"
    original = package()
    stage.write_text('"""A stage, reworded\n\nat length."""\n\n\ndef scale(x):  # why\n    """Two x."""\n\n    return 2 * x\n')
    assert package() == original
    (package.root / "privacy" / "__init__.py").write_text('"""Subpackage, reworded."""\n')
    assert package() == original


def test_a_module_added_moved_or_removed_in_a_subpackage_changes_the_hash(package):
    root = package.root
    original = package()
    (root / "privacy" / "inner" / "stage.py").rename(root / "privacy" / "stage.py")  # same code, new address
    moved = package()
    assert moved != original
    (root / "privacy" / "extra.py").write_text("LIMIT = 3\n")
    added = package()
    assert added not in (original, moved)
    (root / "privacy" / "extra.py").unlink()
    assert package() == moved


def test_a_data_file_of_the_package_enters_the_hash(package):
    """synthdp/privacy/spread_table.json sets noise scales: an edit to a data file re-keys the cache, a
    Markdown file (documentation) does not."""
    table = package.root / "privacy" / "spread_table.json"
    table.write_text('{"spread": [1.0, 2.0]}')
    original = package()
    table.write_text('{"spread": [1.0, 4.0]}')
    assert package() != original
    table.write_text('{"spread": [1.0, 2.0]}')
    (package.root / "privacy" / "README.md").write_text("notes")
    assert package() == original


def test_the_key_of_a_synthdp_run_holds_the_versions_of_the_libraries_its_numbers_depend_on():
    from importlib import metadata

    versions = harness._library_versions()
    assert set(versions) == set(harness.KEYED_LIBRARIES)
    assert versions["numpy"] == metadata.version("numpy") and versions["opendp"] == metadata.version("opendp")


def test_the_real_package_hash_sees_synthdp_subpackages():
    import synthdp

    package_dir = Path(synthdp.__file__).parent
    nested = [p for p in package_dir.rglob("*.py") if p.parent != package_dir]
    assert nested, "synthdp has modules in subpackages"
    harness._source_hash.cache_clear()
    try:
        key = harness._source_hash()
        assert key == harness._source_hash(package_dir) and len(key) == 12
    finally:
        harness._source_hash.cache_clear()


def test_the_cache_folder_is_made_on_demand(tmp_path):
    frame = pd.DataFrame(np.random.default_rng(3).uniform(0, 1, size=(40, 3)), columns=["a", "b", "c"])
    dataset = Dataset("toy", frame, frame.min().to_numpy(float), frame.max().to_numpy(float))
    cache_dir = tmp_path / "results" / "cache"  # absent, as in a fresh clone: git ignores it
    options = harness.RunOptions(queries=20, query_seed=1, cache_dir=cache_dir)
    queries = query_set(dataset.name, dataset.d, options.queries, options.query_seed)
    true = answer_queries(dataset.unit(dataset.frame), queries, SIGMAS)
    result = harness.run_rounds("bootstrap", dataset, harness.Setting(1.0, 0.0), 1, options, queries, true)
    assert result["status"] == "ok" and len(result["rounds"]) == 1
    assert [p.parent for p in cache_dir.rglob("*.json")] == [cache_dir / "toy"]


def test_git_ignores_the_per_run_cache_but_not_the_rendered_results():
    import shutil
    import subprocess

    root = EXPERIMENTS.parent
    if shutil.which("git") is None or not (root / ".git").exists():
        pytest.skip("not a git checkout")
    paths = ["experiments/results/cache/pks/bootstrap_0123456789.json", "experiments/results/table3.md"]
    done = subprocess.run(["git", "check-ignore", "--no-index", *paths], cwd=root, capture_output=True, text=True)
    assert done.stdout.split() == paths[:1]


def test_the_committed_peer_rows_seed_the_cache_and_render_as_committed(tmp_path, monkeypatch):
    from report import method_rows

    frame = pd.DataFrame(np.random.default_rng(3).uniform(0, 1, size=(40, 3)), columns=["a", "b", "c"])
    dataset = Dataset("toy", frame, frame.min().to_numpy(float), frame.max().to_numpy(float))

    def run(r: int, utility: bool) -> dict:
        errors = {kind: [0.1 * (r + 1) + s for s in range(len(SIGMAS))] for kind in ("relative", "absolute_scaled", "absolute")}
        return {"seconds": 10.0 + r, "cpu_seconds": 9.0, "info": {"bins": 16, "unit": "add-remove", "fit_seconds": 8.0},
                "errors": errors, "evaluation_seconds": None if r == 0 else 0.5, "rows": None, "date": f"day {r}",
                "utility": {"distinct_rows": 40, "ks_mean": 0.1, "ks_max": 0.2, "correlation_max": 0.3,
                            "correlation_mean": 0.1} if utility else None}

    committed = {
        "settings": {"queries": 20, "query_seed": 1}, "setting": {"epsilon": 1.0, "delta": 1e-6, "candidates": "pca"},
        "results": [{"dataset": "toy", "methods": {
            "synthdp-default": {"status": "ok", "message": "", "rounds": [run(0, True)]},  # re-run, never imported
            "smartnoise-mst": {"status": "skipped", "message": "cached rounds only", "rounds": [run(0, False), run(1, True)]},
            "opendp-aim": {"status": "timeout", "message": "opendp-aim did not finish within 120 s", "rounds": []},
            "smartnoise-aim": {"status": "unavailable", "message": "no venv", "rounds": []},  # the machine's, not the peer's
        }}]}
    path = tmp_path / "table9.json"
    path.write_text(json.dumps(committed))
    options = harness.RunOptions(queries=20, query_seed=1, cache_dir=tmp_path / "cache", new_peer_runs=False)
    assert harness.import_committed_results(options, {"toy": dataset}, path) == 2
    assert harness.import_committed_results(options, {"toy": dataset}, path) == 0  # the cache wins: nothing new
    assert not list((tmp_path / "cache").rglob("synthdp-default*")) and not list((tmp_path / "cache").rglob("smartnoise-aim*"))

    def must_not_run(*args, **kwargs):
        raise AssertionError("an imported peer run was generated again")

    monkeypatch.setattr(harness, "binned_peer", must_not_run)
    queries = query_set(dataset.name, dataset.d, options.queries, options.query_seed)
    true = answer_queries(dataset.unit(dataset.frame), queries, SIGMAS)
    setting = harness.Setting(1.0, 1e-6, "hypercube")  # the peers' key ignores the candidate kind
    for method in ("smartnoise-mst", "opendp-aim"):
        measured = committed["results"][0]["methods"][method]
        again = harness.run_rounds(method, dataset, setting, 20, options, queries, true)
        assert (again["status"], again["message"]) == (measured["status"], measured["message"])
        assert [r["errors"] for r in again["rounds"]] == [r["errors"] for r in measured["rounds"]]
        assert method_rows(method, again) == method_rows(method, measured)
    assert harness.run_rounds("smartnoise-aim", dataset, setting, 1, options, queries, true)["status"] == "skipped"
