"""Decoding: synthetic points of [-1, 1]^d back to the user's columns and units."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from synthdp.domain.box import Domain
from synthdp.domain.dates import format_values


def decode(points: np.ndarray, domain: Domain) -> pd.DataFrame:
    """A DataFrame with the domain's column names, in its order and units.

    Integer columns are rounded and kept inside [ceil(lo), floor(hi)]; their dtype is int64.
    Date and datetime columns are rounded the same way to whole days or seconds and written as
    ISO text ("2021-03-04", "2021-03-04T05:06:07").
    """
    values = domain.from_unit(points)
    columns = {}
    for j, column in enumerate(domain.columns):
        if column.integer or column.temporal:
            rounded = np.clip(np.round(values[:, j]), math.ceil(column.lower), math.floor(column.upper))
            columns[column.name] = (format_values(rounded, column.temporal) if column.temporal
                                    else rounded.astype(np.int64))
        else:
            columns[column.name] = values[:, j]
    return pd.DataFrame(columns, columns=domain.names)
