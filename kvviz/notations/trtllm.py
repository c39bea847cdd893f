"""TensorRT-LLM: ``kv_cache_block_offsets[pool, i * beam + b, kv, j]`` (int32, ``kv`` 0 = K,
1 = V). An entry is a flat index ``(block * num_layers + layer) * 2 + kv`` into a pool laid out
as ``[blocks, layers, 2, tokens_per_block * ...]``; we show one pool (pool 0), beam width 1 and
layer 0, so with one layer K = ``2 * block`` and V = ``2 * block + 1``.
``slot = (offsets[0, i, 0, pos // T] // (2 * L)) * T + pos % T``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kvviz.core.block_table import cdiv
from kvviz.errors import BadInput
from kvviz.notations.canonical import (
    CanonicalBatch, Mark, canonical_by_address, check_index, query_lens_of, run_blocks, seq_lens_of)

TRT_UNUSED = 0
"""Entries of ``kv_cache_block_offsets`` past a request's last block: TRT-LLM allocates the
tensor with ``torch.empty`` (garbage); we show 0. Kernels never read past ``seq_len``."""


@dataclass
class TrtLlmForm:
    req_ids: list[str]
    tokens_per_block: int
    num_layers: int               # layers sharing the pool; we show layer 0
    kv_cache_block_offsets: np.ndarray  # int32 [pools=1, R * beam, 2, max_blocks_per_seq]
    seq_lens: np.ndarray          # int32 [R] (sequence_length)
    query_lens: np.ndarray        # int32 [R] (tokens computed this step)
    num_slots: int
    layer: int = 0

    def _block(self, i, pos):
        j = pos // self.tokens_per_block
        return j, int(self.kv_cache_block_offsets[0, i, 0, j]) // (2 * self.num_layers)

    def address(self, i: int, pos: int) -> int:
        check_index(self, i, pos)
        _, b = self._block(i, pos)
        return b * self.tokens_per_block + pos % self.tokens_per_block

    def locate(self, i: int, pos: int) -> list[Mark]:
        check_index(self, i, pos)
        j = pos // self.tokens_per_block
        o = self.kv_cache_block_offsets
        return [Mark("kv_cache_block_offsets", (0, i, 0, j), int(o[0, i, 0, j])),
                Mark("kv_cache_block_offsets", (0, i, 1, j), int(o[0, i, 1, j]))]

    def coords(self, i: int, pos: int) -> dict:
        j, b = self._block(i, pos)
        o = self.kv_cache_block_offsets
        return {"k_index": int(o[0, i, 0, j]), "v_index": int(o[0, i, 1, j]), "block": b,
                "offset": pos % self.tokens_per_block, "slot": self.address(i, pos)}


def trt_index(block: int, kv: int, num_layers: int = 1, layer: int = 0) -> int:
    """Flat index of (block, layer, K|V) in a pool laid out as [blocks, layers, 2, ...]."""
    return (block * num_layers + layer) * 2 + kv


def to_trtllm(c: CanonicalBatch, tokens_per_block: int = 16, num_layers: int = 1) -> TrtLlmForm:
    """The batch as TensorRT-LLM's K/V block offsets (pool 0, beam 1, layer 0)."""
    rows = [run_blocks(c, i, tokens_per_block, "TensorRT-LLM") for i in range(len(c.requests))]
    width = max((len(r) for r in rows), default=1) or 1
    off = np.full((1, len(rows), 2, width), TRT_UNUSED, dtype=np.int32)
    for i, r in enumerate(rows):
        for j, b in enumerate(r):
            off[0, i, 0, j] = trt_index(b, 0, num_layers)
            off[0, i, 1, j] = trt_index(b, 1, num_layers)
    return TrtLlmForm([r.req_id for r in c.requests], tokens_per_block, num_layers, off,
                      seq_lens_of(c), query_lens_of(c).astype(np.int32), c.num_slots)


def from_trtllm(f: TrtLlmForm) -> CanonicalBatch:
    """TensorRT-LLM's offsets back to the canonical batch; BadInput on a broken K/V pair."""
    for i, rid in enumerate(f.req_ids):
        for j in range(cdiv(int(f.seq_lens[i]), f.tokens_per_block)):
            k, v = int(f.kv_cache_block_offsets[0, i, 0, j]), int(f.kv_cache_block_offsets[0, i, 1, j])
            if v != k + 1 or k % 2:
                raise BadInput(f"{rid} block {j}: K index {k} and V index {v} are not a K/V pair")
    return canonical_by_address(f)
