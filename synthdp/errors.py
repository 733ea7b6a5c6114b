"""Exceptions and warnings shared by every stage.

Messages name columns, parameters and files, never a data value: an error raised while
the private table is in memory must not become a side channel for it.
"""


import difflib
import functools
import os
import sys
import warnings
from collections.abc import Sequence
from types import FrameType

_PACKAGE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "")  # synthdp's folder, with its separator


class SynthDPError(ValueError):
    """Bad input or an impossible configuration; the CLI prints it as a one-line error."""


@functools.cache
def _not_fitted_class() -> type[SynthDPError]:
    """:class:`NotFittedError`, made at its first use: it subclasses scikit-learn's, and ``import
    sklearn.exceptions`` loads all of scikit-learn (about a second), which neither ``import synthdp``
    nor the command line pays for (tests/test_cli.py)."""
    from sklearn.exceptions import NotFittedError as SklearnNotFittedError

    class NotFittedError(SynthDPError, SklearnNotFittedError):
        """A method that needs a fit was called before :meth:`~synthdp.SmoothSynthesizer.fit` (or after a
        fit that failed): a :class:`SynthDPError` and scikit-learn's ``sklearn.exceptions.NotFittedError``
        (so a ``ValueError`` and an ``AttributeError``), as ``check_is_fitted`` raises it.

        The class is made when first asked for (``synthdp.errors.NotFittedError``, or the first such
        error), since it imports scikit-learn."""

    NotFittedError.__module__, NotFittedError.__qualname__ = __name__, "NotFittedError"  # pickled by this name
    return NotFittedError


def not_fitted(method: str) -> SynthDPError:
    """The error for ``method`` (``"sample()"``, ``"support_points_"``) called before a fit: a
    :class:`NotFittedError`, "call fit() before ``method``"."""
    return _not_fitted_class()(f"call fit() before {method}")


def __getattr__(name: str) -> type[SynthDPError]:
    """``NotFittedError``, made at its first use (PEP 562: :func:`_not_fitted_class`)."""
    if name == "NotFittedError":
        return _not_fitted_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def absent_file(label: str, path: str | os.PathLike) -> SynthDPError:
    """The error for an input file that is not a file: "``label`` 'path' is a folder, not a file"
    where it names a folder, "is not a regular file" where it names a pipe or a device (a table is
    read more than once), else "does not exist"."""
    what = ("is a folder, not a file" if os.path.isdir(path) else
            "is not a regular file (a pipe or a device, such as standard input): save the table to a file first"
            if os.path.exists(path) else "does not exist")
    return SynthDPError(f"{label} '{path}' {what}")


def closest_name(name: str, names: Sequence[str], cutoff: float = 0.75) -> str | None:
    """The one of ``names`` spelled most nearly as ``name``, case aside ('Age' for 'age'; difflib's ratio
    at least ``cutoff``); None where none is."""
    folded: dict[str, str] = {}
    for candidate in names:  # by its name in lower case: the first so spelt
        folded.setdefault(str(candidate).casefold(), str(candidate))
    near = difflib.get_close_matches(str(name).casefold(), list(folded), n=1, cutoff=cutoff)
    return folded[near[0]] if near else None


def near_column(name: str, columns: Sequence[str]) -> str:
    """" (the table has 'that')" where one of ``columns`` (a table's header: public, as every
    column name is) is spelled nearly as ``name`` (:func:`closest_name`); else ""."""
    near = closest_name(name, columns)
    return f" (the table has '{near}')" if near is not None else ""


def unknown_column(prefix: str, name: str, columns: Sequence[str]) -> SynthDPError:
    """The error for a column ``name`` that is not among ``columns``: "``prefix`` unknown column
    'name'", with :func:`near_column`'s hint."""
    return SynthDPError(f"{prefix} unknown column '{name}'{near_column(name, columns)}")


def listed(names: Sequence[str], shown: int = 4, more: str = "") -> str:
    """The first ``shown`` of ``names`` joined by commas, and "and N more" (``more``: the word after it,
    "pairs") where there are others: a message names a few of many."""
    rest = len(names) - shown
    return ", ".join(names[:shown]) + (f" and {rest} more{' ' + more if more else ''}" if rest > 0 else "")


def warn_user(message: str, category: type[Warning] = UserWarning) -> None:
    """``warnings.warn(message, category)`` attributed to the first caller outside synthdp: the line of
    the user's code that called the public function (``fit``, ``sample``), however deep in the package
    the warning arises. A fixed ``stacklevel`` names a line of synthdp where a function is reached by
    more than one path (``release_domain`` from the schema's bounds and from a numeric release)."""
    frame: FrameType | None = sys._getframe(1)
    level = 2  # warn_user's caller
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)


class PrivacyLeakWarning(UserWarning):
    """The run will not be differentially private as configured (e.g. bounds read from data)."""


class TestingSeedWarning(UserWarning):
    """A known seed makes every noise draw predictable: for tests and reproducible runs only."""

    __test__ = False  # not a pytest test class despite the name


class ConvergenceWarning(UserWarning):
    """A post-processing solver stopped before its optimum (scikit-learn's name for the same news):
    the output is as private as ever, and a little less accurate than it could be.

    No release raises it since the tilt that stops at its cap is mixed with the l1 optimum, which
    fits every moment within its tolerance (the report's ``lp.status`` says so,
    docs/performance.md); it is kept so that code filtering it keeps working."""


class InferenceWarning(UserWarning):
    """An interval of :func:`synthdp.infer` that cannot mean what it says: the release did not
    measure what the statistic depends on (e.g. no dependence between columns), so its copies
    show no uncertainty about it."""
