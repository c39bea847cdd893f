"""The state one checker run shares between the checks: the dump, the rules it is checked under,
the row prefixes read once, and the findings collected so far (capped per check)."""
from __future__ import annotations

import numpy as np

from kvviz.core.versions import CURRENT, Profile
from kvviz.dumps.arrays import Segments, first_per_row
from kvviz.dumps.catalogue import Finding, Msg
from kvviz.dumps.format import Dump


def clears_vacated_rows(profile: Profile) -> bool:
    """Whether a row vacated by remove_request or condense's move_row is cleared (count 0, prefix
    zeroed) under ``profile``: true for current vLLM, false for the 2025 profiles."""
    return bool(profile.move_row_clears_source and getattr(profile, "remove_clears_row", True))


class CheckRun:
    def __init__(self, d: Dump, limit: int, profile: Profile = CURRENT):
        self.d = d
        self.limit = limit
        self.profile = profile
        self.state = d.is_state_group
        self.out: list[Finding] = []
        self.n = d.num_reqs
        self.W = d.width
        self.bt = d.block_table
        self.cnt = d.num_blocks_per_row[: self.n].astype(np.int64)
        self.bpk = d.blocks_per_kv_block
        self.kbs = d.kbs
        self.span = d.geometry.virtual_block_size       # tokens one block id stands for
        self.kernel_ids = d.num_blocks * self.bpk
        self.seq = None if d.seq_lens is None else d.seq_lens[: self.n].astype(np.int64)
        self.prefix = Segments(self.W, np.zeros(self.n, np.int64), self.cnt)
        self.vals = self.prefix.take(self.bt)

    def add(self, check: str, rows, cols, counts, message) -> None:
        """One finding per row (rows ascending), capped at ``limit`` rows."""
        rows, cols, counts = (np.asarray(x) for x in (rows, cols, counts))
        for r, c, k in zip(rows[: self.limit].tolist(), cols[: self.limit].tolist(),
                           counts[: self.limit].tolist()):
            self.out.append(Finding.of(check, r, c, message(r, c, k)))
        self._truncated(check, rows.size, "rows")

    def _truncated(self, check: str, n: int, what: str) -> None:
        if n > self.limit:
            self.out.append(Finding.of(check, None, None, Msg(f"truncated.{what}",
                                                              {"n": n - self.limit, "limit": self.limit})))

    def add_flat(self, check: str, bad_pos: np.ndarray, message) -> None:
        rows, cols = self.prefix.locate(bad_pos)
        self.add(check, *first_per_row(rows, cols), message)

