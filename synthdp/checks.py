"""Checks of a value's type, shared by the modules that validate options, arguments and files.

A boolean is not a number here, although Python counts ``True`` as 1: ``rows=True`` or a JSON
``true`` where a count belongs is an error, not one row.
"""

from __future__ import annotations

import math
from typing import TypeGuard

import numpy as np


def is_int(value: object) -> TypeGuard[int]:
    """An integer, Python's or numpy's, not a boolean."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def is_finite_number(value: object) -> TypeGuard[float]:
    """A finite real number, Python's or numpy's, not a boolean; an integer too large for a float (a JSON
    file may hold one of 400 digits, which ``math.isfinite`` cannot convert) is not one."""
    if not isinstance(value, (int, float, np.integer, np.floating)) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def delta_text(value: float) -> str:
    """A delta as a line prints it, to 3 significant digits, but never "1" for a delta below 1 (a
    delta of 1 promises nothing; --delta 0.9999 does promise something): there, the digits that tell
    it from 1.

    Parameters
    ----------
    value : float
        A delta, in [0, 1].

    Returns
    -------
    str
        Its text.
    """
    text = f"{value:.3g}"
    return repr(float(value)) if text == "1" and value < 1 else text
