"""Sphinx configuration of synthdp's API reference: autodoc and numpydoc, nothing fetched from the network.

Build it from the repository's root with ``sphinx-build -b html docs/api docs/api/_build``
(``tests/test_api_docs.py`` builds it with warnings as errors). The command-line page is made
here from :func:`synthdp.cli.build_parser` by the ``synthdp-cli`` directive below.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator
from contextlib import contextmanager

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import nested_parse_with_titles

import synthdp

project = "synthdp"
author = "synthdp's authors"
release = version = synthdp.__version__
copyright = "synthdp's authors"

extensions = ["sphinx.ext.autodoc", "numpydoc"]  # no intersphinx: CI has no network
exclude_patterns = ["_build"]
html_theme = "alabaster"
html_static_path: list[str] = []
html_show_sourcelink = False

autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_default_options = {"members": True}

# methods are listed by autodoc's :members:, not by numpydoc's autosummary tables
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_attributes_as_param_list = True
# the checks of what a docstring's sections say (not which sections it has): no unknown section,
# sections in order, no parameter documented that the signature lacks, parameters in order
numpydoc_validation_checks = {"GL06", "GL07", "PR02", "PR03", "PR10", "YD01"}

# ------------------------------------------------------------------ the command-line page
HELP_COLUMNS = 100  # argparse wraps help to the terminal's width: a fixed one for the page


@contextmanager
def _columns(width: int) -> Iterator[None]:
    saved = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(width)
    try:
        yield
    finally:
        if saved is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = saved


def _literal(text: str) -> list[str]:
    """``text`` as a literal block, shown as it is (no highlighting)."""
    body = ["    " + line if line.strip() else "" for line in text.rstrip().splitlines()]
    return [".. code-block:: text", ""] + body + [""]


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")


def cli_lines() -> list[str]:
    """reStructuredText of every command: its one-line help, then its ``--help`` as a literal block."""
    from synthdp.cli import build_parser

    parser = build_parser()
    (commands,) = [action for action in parser._actions if isinstance(action, argparse._SubParsersAction)]
    summaries = {action.dest: action.help or "" for action in commands._choices_actions}
    with _columns(HELP_COLUMNS):
        lines = ["``synthdp``", "-" * 11, "", "The entry point; every command takes ``--help``.", ""]
        lines += _literal(parser.format_help())
        for name, command in commands.choices.items():
            title = f"``synthdp {name}``"
            lines += [title, "-" * len(title), "", _sentence(summaries.get(name, "")), ""]
            lines += _literal(command.format_help())
    return lines


class CliDirective(SphinxDirective):
    """``.. synthdp-cli::``: a section per command of :func:`synthdp.cli.build_parser`."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        node = nodes.section()
        node.document = self.state.document
        nested_parse_with_titles(self.state, StringList(cli_lines(), source="synthdp.cli.build_parser"), node)
        return node.children


def setup(app: Sphinx) -> dict:
    app.add_directive("synthdp-cli", CliDirective)
    return {"parallel_read_safe": True}
