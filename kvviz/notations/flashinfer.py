"""FlashInfer: CSR. ``kv_indptr`` (prefix sum of pages), ``kv_indices`` (the pages, request
after request), ``kv_last_page_len`` (1..P, 0 for an empty request), plus ``qo_indptr``.
``slot = kv_indices[kv_indptr[i] + pos // P] * P + pos % P``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kvviz.notations.canonical import (
    CanonicalBatch, Mark, canonical_by_address, check_index, query_lens_of, run_blocks, seq_lens_of)


@dataclass
class FlashInferForm:
    req_ids: list[str]
    page_size: int
    kv_indptr: np.ndarray        # int32 [R + 1]
    kv_indices: np.ndarray       # int32 [pages]
    kv_last_page_len: np.ndarray  # int32 [R]
    qo_indptr: np.ndarray        # int32 [R + 1]
    num_slots: int

    @property
    def seq_lens(self):
        npages = np.diff(self.kv_indptr).astype(np.int64)
        return np.where(npages > 0, (npages - 1) * self.page_size + self.kv_last_page_len, 0)

    @property
    def query_lens(self):
        return np.diff(self.qo_indptr)

    def _k(self, i, pos):
        return int(self.kv_indptr[i]) + pos // self.page_size

    def address(self, i: int, pos: int) -> int:
        check_index(self, i, pos)
        return int(self.kv_indices[self._k(i, pos)]) * self.page_size + pos % self.page_size

    def locate(self, i: int, pos: int) -> list[Mark]:
        check_index(self, i, pos)
        k = self._k(i, pos)
        out = [Mark("kv_indptr", (i,), int(self.kv_indptr[i])),
               Mark("kv_indices", (k,), int(self.kv_indices[k]))]
        if pos // self.page_size == int(self.kv_indptr[i + 1]) - int(self.kv_indptr[i]) - 1:
            out.append(Mark("kv_last_page_len", (i,), int(self.kv_last_page_len[i])))
        return out

    def coords(self, i: int, pos: int) -> dict:
        return {"page": int(self.kv_indices[self._k(i, pos)]), "entry": pos % self.page_size,
                "slot": self.address(i, pos)}


def to_flashinfer(c: CanonicalBatch, page_size: int = 16) -> FlashInferForm:
    """The batch as FlashInfer's CSR of ``page_size``-token pages."""
    rows = [run_blocks(c, i, page_size, "FlashInfer") for i in range(len(c.requests))]
    indptr = np.zeros(len(rows) + 1, dtype=np.int32)
    np.cumsum([len(r) for r in rows], out=indptr[1:])
    indices = np.array([b for r in rows for b in r], dtype=np.int32)
    seq = seq_lens_of(c).astype(np.int64)
    rem = seq % page_size
    last = np.where(seq == 0, 0, np.where(rem == 0, page_size, rem)).astype(np.int32)
    qo = np.zeros(len(rows) + 1, dtype=np.int32)
    np.cumsum(query_lens_of(c), out=qo[1:])
    return FlashInferForm([r.req_id for r in c.requests], page_size, indptr, indices, last, qo,
                          c.num_slots)


def from_flashinfer(f: FlashInferForm) -> CanonicalBatch:
    """FlashInfer's CSR back to the canonical batch (asking it each token's slot)."""
    return canonical_by_address(f)
