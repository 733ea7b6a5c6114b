"""What a wheel carries and what the messages promise about installing: checked on pyproject.toml,
without building (a build is slow and needs the network for its isolated environment)."""

import fnmatch
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
INSTALL = re.compile(r"""pip\s+install\s+(["']?)synthdp\[([^\]]*)\]""")


def _texts():
    for path in [*sorted((ROOT / "synthdp").rglob("*.py")), ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        yield path.relative_to(ROOT), path.read_text(encoding="utf-8")


def test_every_extra_a_message_or_a_page_names_exists_and_is_quoted_for_any_shell():
    """`pip install synthdp[quality]` is a glob to zsh ("no matches found") and 'synthdp[scale]' a
    literal with its quotes to Windows' cmd: double quotes work in both."""
    extras = set(PYPROJECT["project"]["optional-dependencies"])
    named = [(path, quote, extra) for path, text in _texts() for quote, extra in INSTALL.findall(text)]
    assert {extra for _, _, extra in named} >= {"scale", "quality"}
    for path, quote, extra in named:
        assert all(name in extras for name in extra.split(",")), (path, extra)
        assert quote == '"', (path, extra)


def test_the_wheel_holds_every_file_the_package_reads():
    """Every file in synthdp/ that is not Python (the bundled example and its provenance, the spread
    table, the py.typed marker of PEP 561) is in package-data: setuptools puts only modules in a wheel without it."""
    patterns = PYPROJECT["tool"]["setuptools"]["package-data"]["synthdp"]
    package = ROOT / "synthdp"
    files = [path.relative_to(package).as_posix() for path in package.rglob("*")
             if path.is_file() and path.suffix != ".py" and "__pycache__" not in path.parts]  # bytecode and numba's cache (cache=True): made, not shipped
    assert {"py.typed", "datasets/clinic.csv", "datasets/README.md"} <= set(files)  # the example's provenance too
    for name in files:
        assert any(fnmatch.fnmatch(name, pattern) for pattern in patterns), name


def test_the_license_is_an_spdx_expression():
    """The TOML table form (license = {text = ...}) is deprecated by setuptools, refused from 2027-02-18."""
    assert isinstance(PYPROJECT["project"]["license"], str)
    assert any(requirement.startswith("setuptools>=") and int(requirement.split(">=")[1].split(".")[0]) >= 77
               for requirement in PYPROJECT["build-system"]["requires"])


def test_the_license_file_ships_and_the_sdist_leaves_out_what_it_cannot_run():
    """MIT asks for its notice with every copy: LICENSE is the package's license file. The sdist leaves
    out the tests, experiments and benchmarks, which need the repository's data/, configs/ and golden
    records (shipped alone, they could not pass)."""
    assert "MIT License" in (ROOT / "LICENSE").read_text() and PYPROJECT["project"]["license-files"] == ["LICENSE"]
    pruned = {line.split()[1] for line in (ROOT / "MANIFEST.in").read_text().splitlines() if line.startswith("prune ")}
    assert {"tests", "experiments", "benchmarks"} <= pruned
