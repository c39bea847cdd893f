"""One KV-cache group's captured tables against kvviz's dump of the same step
(``kvviz.dumps.capture.dump_from_step``).

What is compared, in this order (the first difference is reported):
  V1: ``num_reqs_padded``; ``num_blocks_per_row`` (every row either side keeps; a row the capture left
      out counts 0); ``block_table``, the CPU table, inside each row's count (entries past it are stale
      in both and never read); ``block_table_device`` as the kernel read it (live rows inside their
      count, padded rows whole); ``kernel_block_table`` (v0.32.0+) where captured;
  V2: ``idx_mapping``; ``state_num_blocks``; ``state_block_table`` inside each state row's count; the
      gathered ``block_table`` (live rows inside their state row's count, padded rows whole);
  then ``seq_lens``, ``query_start_loc``, ``positions`` (the real tokens: a padded token's position is
      whatever the buffer held), ``slot_mapping`` (padding included), FlashInfer's CSR where captured,
      ``ref_cnt`` and ``free_block_ids`` (the pool after schedule()) where captured.
A table the capture lacks is not compared; one kvviz lacks where the capture has it is a divergence.
"""
from __future__ import annotations

import numpy as np

from kvviz.core.geometry import Geometry
from kvviz.replay.compare import Divergence

PER_TOKEN = ("positions", "slot_mapping")


def _row_of_token(qsl: np.ndarray | None, t: int) -> int | None:
    if qsl is None or qsl.size < 2:
        return None
    return int(np.searchsorted(qsl, t, side="right") - 1)


class GroupComparison:
    """Compares one group; ``req_ids`` names each batch row's request (captured ids)."""

    def __init__(self, step: int, group: int, cap, mine, req_ids: list):
        self.step, self.group, self.cap, self.mine, self.req_ids = step, group, cap, mine, req_ids

    def _div(self, table: str, c, k, *, row=None, index=None, where=None) -> Divergence:
        req = self.req_ids[row] if row is not None and 0 <= row < len(self.req_ids) and table not in (
            "state_num_blocks", "state_block_table") else None
        return Divergence(self.step, table, c, k, group=self.group, row=row, index=index, where=where, req_id=req)

    # --- 1-D arrays -------------------------------------------------------------------------------
    def vector(self, name: str, n: int | None = None, *, where: str = "entry", per_row: bool = False,
               pad_zero: bool = False) -> Divergence | None:
        """``name``'s first ``n`` entries (None: the captured length; ``pad_zero``: kvviz's missing tail
        reads 0, and so does the capture's past its length)."""
        c = getattr(self.cap, name)
        if c is None:
            return None
        k = getattr(self.mine, name)
        if k is None:
            return self._div(name, "captured", "absent")
        c, k = np.asarray(c).ravel(), np.asarray(k).ravel()
        n = c.size if n is None else n
        c, k = (_fit(c, n), _fit(k, n)) if pad_zero else (c[:n], k[:n])
        common = min(c.size, k.size)
        bad = np.flatnonzero(c[:common] != k[:common])
        if bad.size == 0 and c.size == k.size:
            return None
        i = int(bad[0]) if bad.size else common
        cv = int(c[i]) if i < c.size else None
        kv = int(k[i]) if i < k.size else None
        if per_row:
            return self._div(name, cv, kv, row=i)
        if name in PER_TOKEN:
            return self._div(name, cv, kv, row=_row_of_token(self.cap.query_start_loc, i), index=i, where="token")
        return self._div(name, cv, kv, index=i, where="block" if name == "ref_cnt" else where)

    # --- 2-D tables ------------------------------------------------------------------------------
    def table(self, name: str, c: np.ndarray, k: np.ndarray, counts, rows: int, full_from: int) -> Divergence | None:
        """Rows ``[0, rows)``: below ``full_from`` inside ``counts[r]`` entries, from it the whole row."""
        if c.ndim != 2 or k.ndim != 2 or c.shape[1] != k.shape[1]:
            return self._div(name, f"width {c.shape[-1]}", f"width {k.shape[-1]}")
        for r in range(rows):
            n = c.shape[1] if r >= full_from else int(counts[r])
            cr = c[r, :n] if r < c.shape[0] else None
            kr = k[r, :n] if r < k.shape[0] else None
            if cr is None or kr is None:
                if n and (cr is None) != (kr is None):
                    return self._div(name, None if cr is None else cr.tolist(), None if kr is None else kr.tolist(),
                                     row=r)
                continue
            bad = np.flatnonzero(cr != kr)
            if bad.size:
                j = int(bad[0])
                return self._div(name, int(cr[j]), int(kr[j]), row=r, index=j, where="col")
        return None

    def scalar(self, name: str) -> Divergence | None:
        c, k = getattr(self.cap, name), getattr(self.mine, name)
        if c is not None and c != k:
            return self._div(name, c, k)
        return None

    # --- the runners' tables -------------------------------------------------------------------
    def v1_tables(self) -> Divergence | None:
        cap, mine = self.cap, self.mine
        n, n_pad = cap.num_reqs, cap.num_reqs_padded or cap.num_reqs
        rows = max(cap.num_blocks_per_row.size, mine.num_blocks_per_row.size)
        d = self.vector("num_blocks_per_row", rows, per_row=True, pad_zero=True)
        if d is not None:
            return d
        counts = cap.num_blocks_per_row
        d = self.table("block_table", cap.block_table, mine.block_table, counts, cap.block_table.shape[0],
                       full_from=cap.block_table.shape[0])
        if d is None and cap.block_table_device is not None:
            d = self.table("block_table_device", cap.block_table_device, mine.block_table_device, counts,
                           min(n_pad, cap.block_table_device.shape[0]), full_from=n)
        if d is None and cap.kernel_block_table is not None:
            if mine.kernel_block_table is None:
                return self._div("kernel_block_table", "captured", "absent")
            kt = cap.kernel_block_table
            d = self.table("kernel_block_table", kt, mine.kernel_block_table, counts, kt.shape[0], full_from=0)
        return d

    def v2_tables(self) -> Divergence | None:
        cap, mine = self.cap, self.mine
        d = self.vector("idx_mapping", per_row=True) or self.vector("state_num_blocks", pad_zero=True,
                                                                   n=max(_size(cap.state_num_blocks),
                                                                         _size(mine.state_num_blocks)))
        if d is not None:
            return d
        if cap.state_block_table is not None:
            sc = cap.state_num_blocks
            d = self.table("state_block_table", cap.state_block_table, mine.state_block_table, sc,
                           cap.state_block_table.shape[0], full_from=cap.state_block_table.shape[0])
            if d is not None:
                return d
        n = cap.num_reqs
        idx = np.asarray(cap.idx_mapping if cap.idx_mapping is not None else [], dtype=np.int64)
        r = Geometry(cap.block_size, cap.kernel_block_size).blocks_per_kv_block
        state = cap.state_num_blocks if cap.state_num_blocks is not None else np.zeros(0, np.int64)
        counts = [int(state[i]) * r if 0 <= i < state.size else 0 for i in idx[:n]]
        return self.table("block_table", cap.block_table, mine.block_table, counts,
                          cap.num_reqs_padded or n, full_from=n)

    def inputs(self, num_tokens: int) -> Divergence | None:
        checks = (lambda: self.vector("seq_lens", per_row=True), lambda: self.vector("query_start_loc"),
                  lambda: self.vector("positions", num_tokens), lambda: self.vector("slot_mapping"),
                  lambda: self.vector("paged_kv_indptr"), lambda: self.vector("paged_kv_indices"),
                  lambda: self.vector("paged_kv_last_page_len", per_row=True),
                  lambda: self.vector("ref_cnt", where="block"), lambda: self.vector("free_block_ids"))
        for check in checks:
            d = check()
            if d is not None:
                return d
        return None


def _fit(a: np.ndarray, n: int) -> np.ndarray:
    """``a``'s first ``n`` entries, zeros past its end."""
    a = a[:n]
    return np.concatenate([a, np.zeros(n - a.size, a.dtype)]) if a.size < n else a


def _size(a) -> int:
    return 0 if a is None else int(np.asarray(a).size)


def compare_group(step: int, group: int, cap, mine, req_ids: list, num_tokens: int) -> Divergence | None:
    """The first difference between the captured dump ``cap`` and kvviz's ``mine`` of one group."""
    cmp = GroupComparison(step, group, cap, mine, req_ids)
    for name in ("num_reqs", "num_reqs_padded", "block_size", "num_blocks"):
        d = cmp.scalar(name)
        if d is not None:
            return d
    d = cmp.v2_tables() if (cap.runner or "v1") == "v2" else cmp.v1_tables()
    return d or cmp.inputs(num_tokens)
