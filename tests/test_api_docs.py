"""The API reference (docs/api) builds from the docstrings with warnings as errors, and covers the public names.

One Sphinx build (autodoc and numpydoc, no network) in a child process, shared by the tests
below; it takes a few seconds. A docstring whose reStructuredText or numpydoc sections are
malformed fails the first test with Sphinx's message, naming the file and the docstring.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import synthdp

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "docs" / "api"

# the names the guides in docs/ tell users to import, beside synthdp.__all__
MODULE_NAMES = {
    "synthdp.evaluation.metrics": ["utility_report", "format_report", "distinct_rows", "ks_distances",
                                   "correlation_error", "strong_pairs", "invented_pairs", "model_accuracy"],
    "synthdp.evaluation.mixed": ["column_tv", "pair_scores", "sdmetrics_quality"],
    "synthdp.evaluation.inference": ["Copies", "load_copies", "copy_files", "common_statistics",
                                     "check_against_real"],
    "synthdp.summaries.marginal": ["marginal"],
    "synthdp.domain.schema": ["Schema", "load_schema_file"],
    "synthdp.config": ["CsvFormat"],
}


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[subprocess.CompletedProcess, Path]:
    pytest.importorskip("sphinx")  # sphinx and numpydoc are in the [test] extra
    pytest.importorskip("numpydoc")
    out = tmp_path_factory.mktemp("api")
    result = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
                             str(SOURCE), str(out)], capture_output=True, text=True, cwd=ROOT)
    return result, out


def _pages(out: Path) -> str:
    return "\n".join(path.read_text(encoding="utf-8") for path in sorted(out.glob("*.html")))


def _anchors(out: Path) -> set[str]:
    return set(re.findall(r'\bid="([^"]+)"', _pages(out)))


def test_the_reference_builds_with_warnings_as_errors(built):
    result, out = built
    assert result.returncode == 0, (result.stderr or result.stdout)[-6000:]
    assert (out / "index.html").is_file()


def test_the_index_lists_the_main_methods(built):
    result, out = built
    assert result.returncode == 0, result.stderr[-2000:]
    index = (out / "genindex.html").read_text(encoding="utf-8")
    for name in ("synthdp.SmoothSynthesizer.fit", "synthdp.SmoothSynthesizer.sample", "synthdp.Summary.answer",
                 "synthdp.Summary.answer_interval", "synthdp.MarginalSummary.marginal"):
        assert f"#{name}" in index, name


def test_every_public_name_is_documented(built):
    result, out = built
    assert result.returncode == 0, result.stderr[-2000:]
    anchors = _anchors(out)
    wanted = [f"synthdp.{name}" for name in synthdp.__all__]
    wanted += [f"{module}.{name}" for module, names in MODULE_NAMES.items() for name in names]
    missing = [name for name in wanted if name not in anchors]
    assert not missing, f"not documented in docs/api: {missing}"


def test_the_command_line_page_has_every_command(built):
    from synthdp.cli import build_parser

    result, out = built
    assert result.returncode == 0, result.stderr[-2000:]
    page = (out / "cli.html").read_text(encoding="utf-8")
    parser = build_parser()
    (commands,) = [action for action in parser._actions if action.choices and action.dest == "command"]
    assert len(commands.choices) >= 8
    for name, command in commands.choices.items():
        assert f"usage: synthdp {name} " in page, name
        for action in command._actions:  # every option of every command, as --help shows it
            for flag in action.option_strings:
                assert flag in page, f"synthdp {name} {flag}"


# ------------------------------------------------ what each docstring says of its signature
# numpydoc's checks of the public callables' sections: every parameter documented (PR01) and none
# that the signature lacks (PR02), a Returns section where something is returned (RT01), a
# docstring at all (GL08). The Sphinx build above checks PR02 but not the others.
SIGNATURE_CHECKS = {"PR01", "PR02", "RT01", "GL08"}
# SmoothSynthesizer's keyword parameters are SynthConfig's, documented (and checked) there
DOCUMENTED_ELSEWHERE = {("synthdp.SmoothSynthesizer", "PR01")}


def _public_callables() -> list[str]:
    import importlib
    import inspect

    names = [f"synthdp.{name}" for name in synthdp.__all__ if name != "__version__"]
    names += [f"{module}.{name}" for module, members in MODULE_NAMES.items() for name in members]
    found = []
    for name in names:
        module, _, attribute = name.rpartition(".")
        obj = getattr(importlib.import_module(module), attribute)
        found.append(name)
        if inspect.isclass(obj) and not issubclass(obj, BaseException):
            for member in dir(obj):
                if member.startswith("_"):
                    continue
                value = inspect.getattr_static(obj, member)
                function = getattr(value, "fget", getattr(value, "__func__", value))
                if callable(function) and getattr(function, "__module__", "").startswith("synthdp"):
                    found.append(f"{name}.{member}")
    return found


def test_every_public_docstring_documents_its_parameters_and_returns():
    validate = pytest.importorskip("numpydoc.validate").validate
    names = _public_callables()
    assert "synthdp.SmoothSynthesizer.fit" in names and "synthdp.Summary.save" in names
    problems = [f"{name}: {code} {message}" for name in names for code, message in validate(name)["errors"]
                if code in SIGNATURE_CHECKS and (name, code) not in DOCUMENTED_ELSEWHERE]
    assert not problems, "\n".join(problems)
