"""vLLM: ``block_table[row, j]`` (int32, one row per request, ``j`` = logical block) with
``seq_lens``, ``query_start_loc``, ``positions`` and ``slot_mapping`` (int64, one per new
token). ``slot = block_table[i, pos // B] * B + pos % B``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kvviz.constants import NULL_BLOCK_ID
from kvviz.core.block_table import get_block_table_width
from kvviz.notations.canonical import (
    CanonicalBatch, Mark, canonical_from_block_table, check_index, new_slots_of, query_lens_of,
    run_blocks, seq_lens_of, token_index)


@dataclass
class VllmForm:
    req_ids: list[str]
    block_size: int
    block_table: np.ndarray      # int32 [R, width]
    seq_lens: np.ndarray         # int32 [R]
    query_start_loc: np.ndarray  # int32 [R + 1]
    positions: np.ndarray        # int64 [T]
    slot_mapping: np.ndarray     # int64 [T]
    num_slots: int

    @property
    def query_lens(self):
        return np.diff(self.query_start_loc)

    def address(self, i: int, pos: int) -> int:
        check_index(self, i, pos)
        return int(self.block_table[i, pos // self.block_size]) * self.block_size + pos % self.block_size

    def locate(self, i: int, pos: int) -> list[Mark]:
        check_index(self, i, pos)
        j = pos // self.block_size
        out = [Mark("block_table", (i, j), int(self.block_table[i, j]))]
        t = token_index(self, i, pos)
        if t is not None:
            out += [Mark("positions", (t,), int(self.positions[t])),
                    Mark("slot_mapping", (t,), int(self.slot_mapping[t]))]
        return out

    def coords(self, i: int, pos: int) -> dict:
        return {"block": int(self.block_table[i, pos // self.block_size]),
                "offset": pos % self.block_size, "slot": self.address(i, pos)}


def to_vllm(c: CanonicalBatch, block_size: int = 16) -> VllmForm:
    """The batch as vLLM's block table (``block_size``-token blocks) and step arrays."""
    rows = [run_blocks(c, i, block_size, "vLLM") for i in range(len(c.requests))]
    width = get_block_table_width(max((len(r) for r in rows), default=1) or 1, block_size)
    bt = np.full((len(rows), width), NULL_BLOCK_ID, dtype=np.int32)
    for i, r in enumerate(rows):
        bt[i, : len(r)] = r
    q = query_lens_of(c)
    qsl = np.zeros(len(rows) + 1, dtype=np.int32)
    np.cumsum(q, out=qsl[1:])
    pos = np.array([p for _, p in c.new_tokens()], dtype=np.int64)
    return VllmForm([r.req_id for r in c.requests], block_size, bt, seq_lens_of(c), qsl, pos,
                    new_slots_of(c), c.num_slots)


def from_vllm(f: VllmForm) -> CanonicalBatch:
    """vLLM's arrays back to the canonical batch."""
    return canonical_from_block_table(f.block_table, f.seq_lens, f.query_lens, f.block_size,
                                      req_ids=f.req_ids, num_slots=f.num_slots)
