"""The privacy boundary is visible in the imports, and a machine checks it.

The contracts live in pyproject.toml (``[tool.importlinter]``): layers from the face down,
post-processing never reaching the raw-row reader (directly or through other modules), nothing
importing the CLI, the release mechanisms using no table-reading library. ``.ci/run`` runs
``lint-imports``; this test runs the same contracts so that ``pytest`` alone catches a break, and
checks at run time that importing a post-processing module loads neither the reader nor the
pipeline.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "synthdp"
PRIVATE = ("synthdp.reader", "synthdp.pipeline", "synthdp.synthesizer", "synthdp.cli")
POST_PROCESSING_ROOMS = ("postprocess", "summaries", "evaluation", "stats", "domain", "privacy")


def modules_in(room: str) -> list[str]:
    return sorted(f"synthdp.{room}.{path.stem}" for path in (PACKAGE / room).glob("*.py") if path.stem != "__init__")


def test_the_import_contracts_are_kept():
    pytest.importorskip("importlinter")  # in the [test] extra
    command = [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())",
               "--no-cache"]  # no .import_linter_cache in the checkout: a read-only one could not hold it
    result = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stdout[-3000:]
    assert "0 broken" in result.stdout


@pytest.mark.parametrize("module", [m for room in POST_PROCESSING_ROOMS for m in modules_in(room)] + ["synthdp.released"])
def test_importing_a_post_processing_module_loads_no_reader_and_no_pipeline(module):
    code = (f"import sys, {module}\n"
            f"loaded = [m for m in sys.modules if m.startswith({PRIVATE!r})]\n"
            "assert not loaded, loaded")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr


def test_the_package_face_is_lazy():
    code = ("import sys, synthdp\n"
            "assert 'synthdp.synthesizer' not in sys.modules and 'synthdp.reader.table' not in sys.modules\n"
            "assert synthdp.SmoothSynthesizer.__name__ == 'SmoothSynthesizer'\n"
            "assert 'synthdp.synthesizer' in sys.modules\n"
            "assert synthdp.__version__")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr


def test_the_release_functions_take_sums_not_tables():
    """privacy.release gets exact sums and per-stage budgets; it never sees a table, a plan or a config."""
    import inspect

    from synthdp.privacy import release

    for name, function in inspect.getmembers(release, inspect.isfunction):
        if function.__module__ != release.__name__:
            continue
        annotations = " ".join(str(p.annotation) for p in inspect.signature(function).parameters.values())
        for forbidden in ("PrivateTable", "Plan", "SynthConfig"):
            assert forbidden not in annotations, f"{name} takes a {forbidden}"
