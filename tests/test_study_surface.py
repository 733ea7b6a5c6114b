"""The experiments' surface: synthdp.study exports what it lists, and the scripts use only it and the top level.

The scripts in experiments/ (and experiments/peers/) import synthdp's names from
:mod:`synthdp.study` or from synthdp's top level, never from an internal module, so that the
package can move its internals with one place to follow. The few exceptions are listed in
``EXCEPTIONS`` with their reason. Parsing only (``ast``): no script is run or imported.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import synthdp
import synthdp.study as study
from synthdp.config import SynthConfig

ROOT = Path(__file__).resolve().parents[1]
EXPERIMENTS = ROOT / "experiments"
SCRIPTS = sorted([*EXPERIMENTS.glob("*.py"), *EXPERIMENTS.glob("peers/*.py")])

TOP_LEVEL = set(synthdp.__all__)
TOP_LEVEL_DUNDERS = {"__version__", "__file__"}  # the results' header; harness's source hash
SURFACE = {"synthdp", "synthdp.study"}

# script -> why it may import synthdp's internal modules
EXCEPTIONS = {
    "e2e_audit.py": "runs the command line itself (synthdp.cli.main), which no surface re-exports",
}
# (script, module reference, private attribute) -> why the script reaches a private name of a patch point
PRIVATE_PATCHES = {
    ("e2e_audit.py", "plan_module", "_budget"):
        "the broken variant uncharged-clip-count replaces the plan's budget so that one stage is not charged; "
        "a patch must target the module that calls it",
    ("strong_pairs_trace.py", "candidates_module", "_pair_correlation"):
        "replaced at run time (with copula_candidates) to record the fitted latent correlation; a patch "
        "must target the module that calls it",
}


def _internal_uses(path: Path) -> list[str]:
    """Every use of synthdp in ``path`` that goes past synthdp.study and the top level."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found, package_names = [], set()
    for node in ast.walk(tree):
        where = f"{path.name}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "synthdp" or alias.name.startswith("synthdp."):
                    if alias.name == "synthdp":
                        package_names.add(alias.asname or "synthdp")
                    elif alias.name != "synthdp.study":
                        found.append(f"{where}: import {alias.name}")
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "synthdp":
            allowed = TOP_LEVEL if node.module == "synthdp" else set(study.__all__)
            if node.module not in SURFACE:
                found.append(f"{where}: from {node.module} import ...")
                continue
            found += [f"{where}: from {node.module} import {alias.name} (not in its __all__)"
                      for alias in node.names if alias.name not in allowed]
    for node in ast.walk(tree):  # synthdp.<submodule>... reached through ``import synthdp``
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in package_names:
            if node.attr not in TOP_LEVEL | TOP_LEVEL_DUNDERS:
                found.append(f"{path.name}:{node.lineno}: synthdp.{node.attr}")
    return found


def _private_patch_uses(path: Path) -> set[tuple[str, str, str]]:
    """(script, module reference, attribute) for every private attribute of a study patch point."""
    modules = {name for name in study.__all__ if name.endswith("_module")}
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return {(path.name, node.value.id, node.attr) for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules
            and node.attr.startswith("_")}


def test_every_name_in_all_exists_once():
    assert len(study.__all__) == len(set(study.__all__))
    missing = [name for name in study.__all__ if not hasattr(study, name)]
    assert not missing, missing
    stray = {name for name in vars(study) if not name.startswith("_")} - set(study.__all__)
    assert stray == {"TYPE_CHECKING", "annotations", "np"}, f"public names outside __all__: {stray}"


def test_the_module_docstring_lists_every_name():
    doc = study.__doc__ or ""
    assert "may change between versions" in doc and "not for users" in doc
    unlisted = [name for name in study.__all__ if f"``{name}``" not in doc]
    assert not unlisted, f"add to synthdp.study's docstring, in its group: {unlisted}"


def test_the_names_are_the_packages_own_objects():
    """Re-exports, not copies: a study runs exactly what the product runs."""
    assert study.run_module is importlib.import_module("synthdp.pipeline.run")
    assert study.plan_module is importlib.import_module("synthdp.pipeline.plan")
    assert study.candidates_module is importlib.import_module("synthdp.postprocess.candidates")
    assert study.fit is study.run_module.fit and study.StudyOptions is study.run_module.StudyOptions
    assert study.SIGMAS is importlib.import_module("synthdp.evaluation.queries").SIGMAS


def test_the_public_names_of_private_helpers_call_them(monkeypatch):
    plan = study.plan_module
    for delta in (1e-6, 0.0):  # Gaussian noise, then Laplace
        config = SynthConfig(epsilon=1.0, delta=delta)
        assert study.composition(config) == plan._composition(config)
        shares = {"pairs": 0.2}
        assert study.plan_budget(config, 0.1, 0.05, shares) == plan._budget(config, 0.1, 0.05, shares)
    sentinel = object()
    monkeypatch.setattr(study.candidates_module, "_pair_correlation", lambda *args: (sentinel, args))
    assert study.pair_correlation(1, 2, 3, 4) == (sentinel, (1, 2, 3, 4))


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda path: path.relative_to(EXPERIMENTS).as_posix())
def test_scripts_use_only_the_study_surface_and_the_top_level(path):
    uses = _internal_uses(path)
    if path.name in EXCEPTIONS:
        assert uses, f"{path.name} no longer reaches internal modules: remove it from EXCEPTIONS"
        return
    assert not uses, ("import these from synthdp.study (add them there if missing) or from synthdp:\n"
                      + "\n".join(uses))


def test_private_names_of_patch_points_are_the_listed_ones():
    found = set().union(*(_private_patch_uses(path) for path in SCRIPTS))
    assert found == set(PRIVATE_PATCHES), (found ^ set(PRIVATE_PATCHES))


def test_the_api_reference_has_a_page_for_it():
    index = (ROOT / "docs" / "api" / "index.rst").read_text(encoding="utf-8")
    assert "\n   study\n" in index
    assert ".. automodule:: synthdp.study" in (ROOT / "docs" / "api" / "study.rst").read_text(encoding="utf-8")
