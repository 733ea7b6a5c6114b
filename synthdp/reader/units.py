"""Contribution bounding: at most K rows of each privacy unit (a person) reach any statistic.

With ``--privacy-unit COLUMN --max-rows-per-unit K`` the neighbouring tables differ by all the
rows of one unit (:class:`synthdp.privacy.sensitivity.Neighbours`). Every sensitivity by unit
needs each unit to have at most K rows, so the reader keeps, of a unit with m > K rows, a
uniformly random K of them, chosen without looking at their values:

* a first pass counts each unit's rows, and checks every row before any release
  (:func:`synthdp.reader.table._checked_units`): every numeric and date cell, and every cell of
  a column whose levels are all its values (binary, or ``"other": false``;
  :attr:`UnitBound.levels`), those of rows the bound leaves out too, so that a bad file fails
  before the units' count is spent, as it would without a unit;
* the random choice is fixed by a public key (from the run's Generator): each of a unit's m
  positions (its 1st, 2nd, ... row in the order the table is read) gets a pseudo-random key
  from the run's key, the unit's identifier and the position alone, and the K positions with
  the smallest keys are kept (:meth:`Contributions.keep`); so another unit's rows never change
  which rows of a unit are kept;
* every pass then keeps a row when its position within its unit is kept: a chunked stream keeps
  a running count per unit, a Dask partition starts from the counts of the partitions before it.

So every engine keeps the same rows, and the bounded table of two neighbouring inputs differs by
one unit's at most K rows: add or remove one unit, then bound, is the relation the releases are
private for. Everything here is private: the counts only leave through the noisy release of
:func:`synthdp.privacy.release.release_units`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from synthdp.domain.schema import CategoricalColumn
from synthdp.domain.units import contribution_bins
from synthdp.errors import SynthDPError


@dataclass(frozen=True)
class UnitBound:
    """Which column identifies the privacy unit, the most rows K a unit keeps, the public key of
    the random choice of those rows, and the columns whose levels the counting pass checks
    (:func:`synthdp.domain.schema.closed_level_columns`: public, from the schema)."""

    column: str
    max_rows: int
    key: int
    levels: tuple[CategoricalColumn, ...] = ()


def unit_values(column: pd.Series, name: str) -> pd.Series:
    """The unit identifiers as text (the same in every engine: 7 and "7" are one unit); a
    missing identifier is an error that names the column, not the value."""
    if column.isna().any():
        raise SynthDPError(f"privacy unit column '{name}' has missing values: every row needs its unit")
    return column.astype(str)


def count_units(values: Iterable[pd.Series]) -> dict[str, int]:
    """Rows per unit over the chunks of the unit column (text identifiers)."""
    total: dict[str, int] = {}
    for chunk in values:
        for unit, count in chunk.value_counts(sort=False).items():
            total[str(unit)] = total.get(str(unit), 0) + int(count)
    return total


class Contributions:
    """The private rows per unit, and which of each unit's positions are kept.

    Parameters
    ----------
    bound : UnitBound
    counts : mapping of str to int
        Rows per unit in the whole input (private).
    position : int
        Where the unit column is in the input's header (public).
    """

    def __init__(self, bound: UnitBound, counts: Mapping[str, int], position: int) -> None:
        self.bound, self.position = bound, position
        self.units = sorted(counts)
        # the units' positions, looked up by one hash table built once (a Categorical per chunk
        # rebuilt it from every unit: with many units and small chunks, most of a pass's time)
        self._index = pd.Index(self.units, dtype=object)
        self.rows = np.array([counts[unit] for unit in self.units], dtype=np.int64)
        self.offsets = np.concatenate([[0], np.cumsum(self.rows)[:-1]]).astype(np.int64)
        self._keep: np.ndarray | None = None

    @property
    def kept_rows(self) -> np.ndarray:
        """Rows each unit keeps: min(m, K)."""
        return np.minimum(self.rows, self.bound.max_rows)

    @property
    def n_rows(self) -> int:
        """Rows after bounding (private)."""
        return int(self.kept_rows.sum())

    def histogram(self) -> np.ndarray:
        """Units per bin of :func:`contribution_bins` (private)."""
        kept = self.kept_rows
        return np.array([np.count_nonzero((kept >= low) & (kept <= high))
                         for low, high in contribution_bins(self.bound.max_rows)], dtype=float)

    def keep(self) -> np.ndarray:
        """Whether each position is kept, flat over the units (unit u's m_u positions start at
        ``offsets[u]``): the K of each unit's positions with the smallest random keys.

        A position's key depends on the run's key, its unit's identifier and its place j in the
        unit alone (:func:`position_keys`), never on the other units: adding or removing a unit
        leaves every other unit's kept rows as they were, which the sensitivities by unit need.
        """
        if self._keep is None:
            keep = np.ones(int(self.rows.sum()), dtype=bool)
            large = np.flatnonzero(self.rows > self.bound.max_rows)  # the others keep every row
            if len(large):
                sizes = self.rows[large]
                owner = np.repeat(np.arange(len(large)), sizes)
                within = np.arange(int(sizes.sum())) - np.repeat(np.cumsum(sizes) - sizes, sizes)
                keys = position_keys(unit_hashes([self.units[u] for u in large], self.bound.key)[owner], within)
                order = np.lexsort((keys, owner))  # by unit, then by key
                rank = np.empty(len(order), dtype=np.int64)
                rank[order] = within  # within is 0, 1, ... per unit in that order too
                keep[np.repeat(self.offsets[large], sizes) + within] = rank < self.bound.max_rows
            self._keep = keep
        return self._keep

    def select(self, units: pd.Series, seen: np.ndarray) -> np.ndarray:
        """The rows of one chunk to keep, given ``seen``, each unit's rows in the chunks before
        it (updated in place). ``units``: the chunk's identifiers as text."""
        codes = self._index.get_indexer(pd.Index(units, dtype=object)).astype(np.int64)
        if len(codes) and codes.min() < 0:
            raise SynthDPError("the input changed between two passes over it")
        within = pd.Series(codes).groupby(codes).cumcount().to_numpy()
        positions = self.offsets[codes] + seen[codes] + within
        seen += np.bincount(codes, minlength=len(seen))
        if positions.max(initial=-1) >= len(self.keep()):  # no rows (a header-only file): no position to check
            raise SynthDPError("the input changed between two passes over it")
        return self.keep()[positions]

    def start_counts(self, chunk_counts: list[dict[str, int]]) -> list[np.ndarray]:
        """For chunks read in parallel (Dask partitions): each chunk's ``seen`` at its start,
        from every chunk's rows per unit, in order."""
        starts, seen = [], np.zeros(len(self.units), dtype=np.int64)
        for counts in chunk_counts:
            starts.append(seen.copy())
            if counts:  # each unit's position by the one index (its identifiers are distinct keys)
                positions = self._index.get_indexer(list(counts))
                if positions.min() < 0:  # a unit the counting pass did not see
                    raise SynthDPError("the input changed between two passes over it")
                seen[positions] += np.fromiter(counts.values(), dtype=np.int64, count=len(counts))
        return starts


def unit_hashes(units: list[str], key: int) -> np.ndarray:
    """A keyed 64-bit hash of each unit identifier (BLAKE2b with the run's key), uint64."""
    secret = int(key).to_bytes(8, "little")
    return np.array([int.from_bytes(hashlib.blake2b(unit.encode(), key=secret, digest_size=8).digest(), "little")
                     for unit in units], dtype=np.uint64)


def position_keys(unit_hash: np.ndarray, within: np.ndarray) -> np.ndarray:
    """The random key of the j-th row of a unit: SplitMix64 of the unit's hash plus j (uint64)."""
    with np.errstate(over="ignore"):
        z = unit_hash + within.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def bounded_frame(frame: pd.DataFrame, column: str, contributions: Contributions,
                  seen: np.ndarray) -> pd.DataFrame:
    """One chunk's kept rows, without the unit column."""
    keep = contributions.select(unit_values(frame[column], column), seen)
    return frame.loc[keep].drop(columns=[column]).reset_index(drop=True)
