"""Decoding: synthetic points of [-1, 1]^d back to the user's columns and units."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from synthdp.domain.box import ColumnDomain, Domain, decimal_grid
from synthdp.domain.dates import format_values

#: Key of ``DataFrame.attrs`` under which :func:`decode` leaves ``{column: decimals}`` for the
#: continuous columns that declare 1 or more decimals: a CSV writer writes them with exactly that
#: many (``43.0``, not ``43``); a frame that has lost its attrs is written as before, still exact.
DECIMALS = "synthdp.decimals"

#: Key of ``DataFrame.attrs`` under which :func:`decode` leaves ``{column: "date" | "datetime"}`` for
#: the date and datetime columns (ISO text in the frame): a Parquet writer stores them as Parquet
#: dates and timestamps; a CSV writer writes the text as it is.
TEMPORAL = "synthdp.temporal"


def decode(points: np.ndarray, domain: Domain) -> pd.DataFrame:
    """A DataFrame with the domain's column names, in its order and units.

    Integer columns are rounded and kept inside [ceil(lo), floor(hi)]; their dtype is int64.
    Date and datetime columns are rounded the same way to whole days or seconds and written as
    ISO text ("2021-03-04", "2021-03-04T05:06:07"). A continuous column that declares
    ``"decimals": k`` is rounded to k decimals (:func:`round_to_decimals`; with k = 0 it is
    written as whole numbers, dtype int64, like an integer column); the others are floats as
    the release drew them. A column that declares its ``"values"`` takes the declared value
    nearest to each (:func:`nearest_values`; an integer column's stay int64).
    """
    values = domain.from_unit(points)
    columns = {}
    for j, column in enumerate(domain.columns):
        if column.values is not None:
            nearest = nearest_values(values[:, j], column.values)
            columns[column.name] = nearest.astype(np.int64) if column.integer else nearest
        elif column.integer or column.temporal or column.decimals == 0:
            rounded = np.clip(np.round(values[:, j]), math.ceil(column.lower), math.floor(column.upper))
            columns[column.name] = (format_values(rounded, column.temporal) if column.temporal
                                    else rounded.astype(np.int64))
        elif column.decimals is not None:
            columns[column.name] = round_to_decimals(values[:, j], column)
        else:
            columns[column.name] = values[:, j]
    frame = pd.DataFrame(columns, columns=domain.names)
    declared = {column.name: int(column.decimals) for column in domain.columns
                if column.decimals and not column.integer and not column.temporal}
    if declared:
        frame.attrs[DECIMALS] = declared
    temporal = {column.name: column.temporal for column in domain.columns if column.temporal}
    if temporal:
        frame.attrs[TEMPORAL] = temporal
    return frame


def nearest_values(values: np.ndarray, declared: tuple[float, ...]) -> np.ndarray:
    """Each of ``values`` moved to the nearest of ``declared`` (ascending), the lower of two at the
    same distance: a column's declared values are the only ones it takes (post-processing)."""
    grid = np.asarray(declared, dtype=float)
    upper = np.clip(np.searchsorted(grid, values), 1, len(grid) - 1)
    lower = upper - 1
    take_upper = np.abs(grid[upper] - values) < np.abs(values - grid[lower])
    return np.where(take_upper, grid[upper], grid[lower])


def round_to_decimals(values: np.ndarray, column: ColumnDomain) -> np.ndarray:
    """``values`` of a continuous column rounded to its ``decimals`` k, inside its bounds.

    Rounding is half to even, as numpy's (and as integer columns are rounded): on the grid of
    multiples of 10^-k, a value halfway between two of them goes to the one whose last digit is
    even. A value that rounding would put outside the bounds (bounds that are not themselves
    multiples of 10^-k) is clipped to the nearest multiple inside them. Each result is the
    float closest to its k-decimal number, so it prints with at most k decimals.
    """
    decimals = int(column.decimals or 0)
    scale = 10.0**decimals
    first, last = decimal_grid(column.lower, column.upper, decimals)
    steps = np.clip(np.round(np.asarray(values, dtype=float) * scale), first, last)
    return steps / scale
