"""Vectorised helpers the checks share: segments of table rows, ranges, first entry per row and
occurrence counts over block ids."""
from __future__ import annotations

import numpy as np


class Segments:
    """Row segments [start_r, start_r + len_r) of a [R, W] table, flattened: ``take`` gathers
    them, ``locate`` maps a flat position back to (row, column)."""

    def __init__(self, width: int, start: np.ndarray, length: np.ndarray):
        self.n = len(length)
        self.width = width
        self.start = start.astype(np.int64)
        self.len = np.maximum(length.astype(np.int64), 0)
        self.off = np.zeros(self.n + 1, dtype=np.int64)
        np.cumsum(self.len, out=self.off[1:])
        self.total = int(self.off[-1])
        self.dense = self.n > 0 and bool((self.start == 0).all()) and bool((self.len == width).all())
        self._idx = None

    def index(self, base: np.ndarray | None = None) -> np.ndarray:
        """Flat positions ``base[r] + k`` for k < len_r (base defaults to r * W + start_r)."""
        if base is None:
            if self._idx is None:
                self._idx = flat_ranges(np.arange(self.n, dtype=np.int64) * self.width + self.start,
                                        self.len, self.total)
            return self._idx
        return flat_ranges(base.astype(np.int64), self.len, self.total)

    def take(self, table: np.ndarray) -> np.ndarray:
        """The segments' entries of ``table``, row after row, as one flat array."""
        if self.dense:
            return np.ascontiguousarray(table[: self.n]).reshape(-1)
        return np.ascontiguousarray(table).reshape(-1)[self.index()]

    def locate(self, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Flat positions in ``take``'s array -> (row, column in the table)."""
        rows = np.searchsorted(self.off, pos, side="right") - 1
        return rows, self.start[rows] + (pos - self.off[rows])


def flat_ranges(base: np.ndarray, length: np.ndarray, total: int) -> np.ndarray:
    """Concatenation of arange(base[r], base[r] + length[r]) without np.repeat."""
    out = np.ones(total, dtype=np.int64)
    nz = np.flatnonzero(length > 0)
    if total == 0 or nz.size == 0:
        return out[:0]
    begin = np.zeros(len(length) + 1, dtype=np.int64)
    np.cumsum(length, out=begin[1:])
    b = base[nz]
    last_prev = b[:-1] + length[nz[:-1]] - 1
    out[begin[nz[0]]] = b[0]
    out[begin[nz[1:]]] = b[1:] - last_prev
    return np.cumsum(out, out=out)


def first_per_row(rows: np.ndarray, cols: np.ndarray):
    """rows sorted ascending; returns (row, first col, count) for each distinct row."""
    if rows.size == 0:
        return rows, cols, rows
    starts = np.flatnonzero(np.concatenate(([True], rows[1:] != rows[:-1])))
    counts = np.diff(np.append(starts, rows.size))
    return rows[starts], cols[starts], counts


class Counts:
    """How often each id occurs: a dense id-indexed array when the universe is small enough
    (bool when every id is distinct), else sorted distinct ids with their counts."""

    def __init__(self, ids: np.ndarray, universe: int):
        self.universe = universe
        self.dense = None
        self.per_entry = None          # occurrence count of each entry; None when all distinct
        if universe <= 8 * ids.size + (1 << 22):
            seen = np.zeros(universe, dtype=bool)
            seen[ids] = True
            if np.count_nonzero(seen) == ids.size:   # all distinct: no counting needed
                self.dense = seen
                return
            self.dense = np.bincount(ids, minlength=universe)
            self.per_entry = self.dense[ids]
        else:
            self.uniq, inv, self.counts = np.unique(ids, return_inverse=True, return_counts=True)
            if self.uniq.size != ids.size:
                self.per_entry = self.counts[inv]

    def at(self, ids: np.ndarray) -> np.ndarray:
        """The count of each id in ``ids`` (0 for an id that never occurs)."""
        if self.dense is not None:
            return self.dense[ids].astype(np.int64)
        if self.uniq.size == 0:
            return np.zeros(len(ids), dtype=np.int64)
        i = np.minimum(np.searchsorted(self.uniq, ids), self.uniq.size - 1)
        return np.where(self.uniq[i] == ids, self.counts[i], 0)

    def set(self, ids: np.ndarray, counts: np.ndarray) -> None:
        """Overwrite the counts of ``ids`` (which occur)."""
        if self.dense is not None:
            self.dense[ids] = counts
        else:
            self.counts = self.counts.copy()
            self.counts[np.searchsorted(self.uniq, ids)] = counts


def isin_ids(values: np.ndarray, members: np.ndarray, universe: int) -> np.ndarray:
    """``np.isin`` for ids below ``universe``: one boolean mark array when that is small enough."""
    if values.size == 0 or members.size == 0:
        return np.zeros(values.shape, dtype=bool)
    if universe <= 8 * (values.size + members.size) + (1 << 22):
        mark = np.zeros(universe, dtype=bool)
        mark[members] = True
        return mark[values]
    return np.isin(values, members)


