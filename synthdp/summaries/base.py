"""One save/load API for both kinds of summary (smooth-query and marginal).

A summary is a JSON document with a ``"format"`` key naming its kind. Each kind provides
``to_dict`` and ``from_dict``; this base gives them the same ``to_json``, ``save`` and ``load``,
and :func:`load_summary` reads either kind from a file.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from synthdp.domain.box import read_json_file
from synthdp.errors import SynthDPError
from synthdp.files import write_in_place

S = TypeVar("S", bound="SummaryFile")


class SummaryFile:
    """The file API shared by :class:`synthdp.Summary` and :class:`synthdp.MarginalSummary`."""

    FORMAT: ClassVar[str]

    def to_dict(self) -> dict:
        raise NotImplementedError

    @classmethod
    def from_dict(cls: type[S], content: Mapping, origin: str = "summary", **options: Any) -> S:
        raise NotImplementedError

    def to_json(self) -> str:
        """The JSON text of :meth:`to_dict` (floats round-trip exactly), each list of numbers on one line:
        a basis's multi-indices one to a line (2 000 columns: 8 million numbers, which took 10 s and
        1.5 GB of Python's indenting encoder at one number a line; its compact one, 1.4 s).

        Returns
        -------
        str
            The text :meth:`save` writes, ending in a newline.
        """
        marker = f"flat-{secrets.token_hex(8)}-"  # no text of the summary holds it
        flat: list[str] = []

        def marked(value: Any) -> Any:
            if isinstance(value, dict):
                return {key: marked(item) for key, item in value.items()}
            if isinstance(value, list):
                if value and set(map(type, value)) <= {int, float}:
                    flat.append(json.dumps(value))
                    return f"{marker}{len(flat) - 1}"
                return [marked(item) for item in value]
            return value

        text = json.dumps(marked(self.to_dict()), indent=1)
        return re.sub(f'"{marker}(\\d+)"', lambda found: flat[int(found.group(1))], text) + "\n"

    def save(self, path: str | Path, *, overwrite: bool = False) -> None:
        """Write the summary as JSON to ``path``, atomically (a temporary file beside it, then put in
        place). A path that exists is refused, and nothing written, unless ``overwrite``: a user's
        file is never replaced unasked (as the command line's ``--overwrite``).

        Parameters
        ----------
        path : str or Path
            The JSON file to write.
        overwrite : bool, default False
            Replace a file that exists at ``path``.
        """
        text = self.to_json()
        write_in_place(Path(path), lambda temporary: temporary.write_text(text), overwrite, "summary file")

    @classmethod
    def load(cls: type[S], path: str | Path, **options: Any) -> S:
        """Read a summary of this kind written by :meth:`save` or ``synthdp summarize``.

        Parameters
        ----------
        path : str or Path
            The summary file.
        **options
            Evaluation options of a :class:`synthdp.Summary` (``damping``, ``n_nodes``, ``seed``);
            a :class:`synthdp.MarginalSummary` takes none.

        Returns
        -------
        Summary or MarginalSummary
            A summary of this class; a file of the other kind is refused.
        """
        content = read_json_file(path, "summary file")
        return cls.from_dict(content, f"summary file '{path}'", **options)  # type: ignore[arg-type]


def column_order(order: object, columns: Mapping, origin: str | None = None) -> list[str]:
    """The columns in the order of the release's coordinates, from a summary file.

    ``order`` is the file's ``"column_order"``, which must list each key of ``columns`` (its bounds' or
    schema's ``"columns"``) once. A file written before it was added gives None: then the order of those
    keys, which a tool that rewrites JSON sorting its keys (``jq -S``, ``json.dumps(sort_keys=True)``, a
    database's JSON type) changes, and every moment would be read as another column's. ``origin``, if
    given, names the file in the error.
    """
    if order is None:
        return list(columns)
    if not (isinstance(order, list) and all(isinstance(name, str) for name in order)
            and len(set(order)) == len(order) and set(order) == set(columns)):
        problem = "column_order must list each column of the summary once"
        raise SynthDPError(problem if origin is None else f"{origin} is malformed ({problem})")
    return list(order)


def load_summary(path: str | Path, **options: Any) -> SummaryFile:
    """Read a summary file of either kind (by its ``"format"``).

    Parameters
    ----------
    path : str or Path
        A file written by :meth:`synthdp.Summary.save`, :meth:`synthdp.MarginalSummary.save` or
        ``synthdp summarize``.
    **options
        Evaluation options of a :class:`synthdp.Summary` (``damping``, ``n_nodes``, ``seed``);
        ignored for a marginal summary.

    Returns
    -------
    Summary or MarginalSummary
        As the file's ``"format"`` says.
    """
    from synthdp.summaries.marginal import MarginalSummary
    from synthdp.summaries.smooth import Summary

    content = read_json_file(path, "summary file")
    kinds: dict[str, type[SummaryFile]] = {Summary.FORMAT: Summary, MarginalSummary.FORMAT: MarginalSummary}
    kind = kinds.get(str(content.get("format"))) if isinstance(content, Mapping) else None
    if kind is None:
        raise SynthDPError(f"summary file '{path}' is not a synthdp summary (format one of {sorted(kinds)})")
    return kind.from_dict(content, f"summary file '{path}'", **(options if kind is Summary else {}))  # type: ignore[arg-type]
