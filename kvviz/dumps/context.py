"""The state one checker run shares between the checks: the dump, the rules it is checked under,
the row prefixes read once, the facts several checks need (computed once, on first use), and the
findings collected so far (capped per check)."""
from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from typing import NamedTuple

import numpy as np

from kvviz.core.versions import CURRENT, Rules
from kvviz.dumps.arrays import Counts, Segments, first_per_row
from kvviz.dumps.catalogue import Finding, Msg
from kvviz.dumps.format import Dump


def clears_vacated_rows(profile: Rules) -> bool:
    """Whether a row vacated by remove_request or condense's move_row is cleared (count 0, prefix
    zeroed) under ``profile``: true for current vLLM, false for the 2025 profiles."""
    return bool(profile.move_row_clears_source and getattr(profile, "remove_clears_row", True))


class Ranges(NamedTuple):
    """The counted entries against the pool's kernel-block ids, from one min/max pass."""
    ids: np.ndarray               # the counted entries as uint32 (a negative id becomes huge)
    lowest: int                   # the smallest of them (blocks_per_kv_block when there are none)
    all_held: bool                # every entry is a real, non-null block of the pool
    in_range: np.ndarray | None   # per entry: inside the pool; None when all are


class Held(NamedTuple):
    """The counted entries that hold a block: in range, not null, not out of a sliding window."""
    ids: np.ndarray               # their kernel block ids
    manager_ids: np.ndarray       # their manager block ids
    pos_of: Callable              # index into ``ids`` -> flat position in the row prefixes
    window_known: bool            # false: a sliding window without seq_lens (freed ids unknown)


class CheckRun:
    """One run of the checker over a dump: what the checks read and where they add findings."""

    def __init__(self, d: Dump, limit: int, profile: Rules = CURRENT):
        self.d = d
        self.limit = limit
        self.profile = profile
        self.geo = d.geometry
        self.state = d.is_state_group
        self.out: list[Finding] = []
        self.n = d.num_reqs
        self.W = d.width
        self.bt = d.block_table
        self.cnt = d.num_blocks_per_row[: self.n].astype(np.int64)
        self.bpk = self.geo.blocks_per_kv_block
        self.kbs = self.geo.kernel_block_size
        self.span = self.geo.virtual_block_size      # tokens one block id stands for
        self.kernel_ids = self.geo.kernel_block_count(d.num_blocks)
        self.seq = None if d.seq_lens is None else d.seq_lens[: self.n].astype(np.int64)
        self.prefix = Segments(self.W, np.zeros(self.n, np.int64), self.cnt)
        self.vals = self.prefix.take(self.bt)

    # --- findings -----------------------------------------------------------------------------
    def add(self, check: str, rows, cols, counts, message) -> None:
        """One finding per row (rows ascending), capped at ``limit`` rows."""
        rows, cols, counts = (np.asarray(x) for x in (rows, cols, counts))
        for r, c, k in zip(rows[: self.limit].tolist(), cols[: self.limit].tolist(),
                           counts[: self.limit].tolist()):
            self.out.append(Finding.of(check, r, c, message(r, c, k)))
        self.truncated(check, rows.size, "rows")

    def add_flat(self, check: str, bad_pos: np.ndarray, message) -> None:
        """Findings for flat positions in the row prefixes: the first per row."""
        rows, cols = self.prefix.locate(bad_pos)
        self.add(check, *first_per_row(rows, cols), message)

    def add_one(self, check: str, index: int | None, msg: Msg) -> None:
        """A finding that belongs to no row (a block, a free-list entry, a token past the batch)."""
        self.out.append(Finding.of(check, None, index, msg))

    def truncated(self, check: str, n: int, what: str) -> None:
        """The "N more ... fail this check" finding, when ``n`` exceeds the limit."""
        if n > self.limit:
            self.add_one(check, None, Msg(f"truncated.{what}", {"n": n - self.limit, "limit": self.limit}))

    # --- facts several checks share ----------------------------------------------------------
    @cached_property
    def ranges(self) -> Ranges:
        limit = min(self.kernel_ids, 1 << 31)
        u = self.vals.view(np.uint32)
        # one min/max pass settles the common all-valid case without per-entry masks
        lo, hi = (int(u.min()), int(u.max())) if u.size else (self.bpk, 0)
        return Ranges(u, lo, hi < limit and lo >= self.bpk, None if hi < limit else u < limit)

    @cached_property
    def skipped(self) -> np.ndarray | None:
        """Per live row, the leading counted entries the scheduler may have freed (and replaced by
        the null block) while the row still lists them: blocks wholly before a sliding window, before
        the current chunk of chunked-local attention (``attention_chunk_size``), or every state block
        but the last in Mamba's align mode. None when nothing may be skipped (or it is unknown)."""
        d = self.d
        if d.is_state_group and d.mamba_cache_mode == "align" and self.profile.mamba_align_mode:
            return np.maximum(self.cnt - 1, 0)
        if self.seq is None:
            return None
        if d.sliding_window is not None:
            gone = self.geo.full_blocks(np.maximum(self.seq - d.sliding_window + 1, 0))
        elif d.attention_chunk_size is not None:
            c = d.attention_chunk_size
            gone = self.geo.full_blocks(np.maximum(self.seq - 1, 0) // c * c)
        else:
            return None
        return self.geo.kernel_block_count(gone)

    def in_skipped(self, pos: np.ndarray) -> np.ndarray:
        """Which flat positions of the row prefixes lie in their row's skipped entries."""
        if self.skipped is None:
            return np.zeros(np.asarray(pos).size, dtype=bool)
        rows, cols = self.prefix.locate(np.asarray(pos))
        return cols < self.skipped[rows]

    @cached_property
    def held(self) -> Held:
        d, r = self.d, self.ranges
        skipping = d.sliding_window is not None or self.skipped is not None
        if r.all_held:
            held = np.ones(self.vals.size, dtype=bool) if skipping else None
        else:
            held = r.ids >= self.bpk
            if r.in_range is not None:
                held &= r.in_range
        window_known = not (d.sliding_window is not None and self.seq is None)
        if self.skipped is not None:
            # the skipped blocks were freed by the scheduler (the row still lists them)
            held &= ~self.in_skipped(np.arange(self.vals.size))
        pos = None if held is None or held.all() else np.flatnonzero(held)
        ids = self.vals if pos is None else self.vals[pos]
        mids = self.geo.manager_block_of(ids) if self.bpk > 1 else ids
        return Held(ids, mids, (lambda p: p) if pos is None else (lambda p: pos[p]), window_known)

    @cached_property
    def kernel_counts(self) -> Counts:
        """How often each kernel block id occurs among the held entries."""
        return Counts(self.held.ids, self.kernel_ids)

    @cached_property
    def holders(self) -> Counts:
        """Distinct live rows holding each manager block."""
        held = self.held
        holders = Counts(held.manager_ids, self.d.num_blocks) if self.bpk > 1 else self.kernel_counts
        if holders.per_entry is not None:   # a block listed several times: count its rows once
            multi = np.flatnonzero(holders.per_entry >= 2)
            rows, _ = self.prefix.locate(held.pos_of(multi))
            m = held.manager_ids[multi]
            order = np.lexsort((rows, m))
            m_s, r_s = m[order], rows[order]
            new = np.concatenate(([True], (m_s[1:] != m_s[:-1]) | (r_s[1:] != r_s[:-1])))
            pm, pc = np.unique(m_s[new], return_counts=True)
            holders.set(pm, pc)
        return holders
